"""Products with few outputs and a long k: o = x1 @ x2 of an N x K x1 and a K x M x2, N * M <= ``MOST_OUT``,
K >= ``MIN_K`` (k-means' centres ``onehot.T @ X``: 16 x 200k times 200k x 32).

gemm's tiled kernel pads such a product to one 64 x 64 tile (an eighth of its multiply-adds useful for
16 x 32) split over k into 256 parts: 113 µs with the parts' sum on an H200 for k-means' 200k x 16 x 32
float32, 66 here (the pass 56, then the same with 2 to 32 tiles per workgroup and 16 to 64 values per tile). Each
workgroup takes a contiguous range of k in tiles of T values: the tile's T x N values of x1 and T x M of
x2 are loaded (coalesced where an operand is contiguous along the tile's rows or along k) into workgroup
memory, the next tile's loads issued into registers before this one is used, and each invocation adds
into the (at most four) outputs it owns, output q = li + 256 j of the N x M flattened, its products in
increasing k (``fma``). Workgroup memory holds a tile as rows along k (one per row of x1, one per column of
x2) of 16-byte vectors, so an output's four products take one load of each operand, not four (k-means on an
H200: 44.8 -> 38.6 µs, the same bits). Each workgroup's sums are a partial product; a reduction over the
first axis sums the workgroups' in a fixed order, so the bits depend only on the data and the shapes.
Measured and not kept (k-means' product on an H200, in one process against this kernel's 38.7-39.5 µs): As'
rows padded (its stores along n hit one bank 16 times over) with a column's vector of Bs loaded once for an
invocation's two outputs, the same bits in 38.5; no workgroup memory (the output's wider side across the
lanes, a row of k per 32 lanes, its other side's values loaded by every lane): 61-64.

Accumulation is in o's compute type, with fused multiply-adds, as gemm's.

Where x1 is float32 and holds only zeros and ones in a workgroup's part (k-means' one-hot mask), a product's
zero terms leave its sum as it is and its ones add x2's values: each output adds x2's rows at its row's ones,
the same ``fma(1, x, acc)`` in the same order, and the tiles recompute the part only where that could differ
(``_ones_text``: another value in x1, a value of x2 that is not finite, a sum of -0). The same bits (a test
compares every case with the tiles alone). The chunk's ones are listed first, row after row (prefix sums of
the mask words' counts), so that each output's fold reads its k from a list, eight loads of x2 a turn. On an
H200 (k-means' 16 x 200k x 32 in its graph, GPU timestamps) 36.7 -> 24.6 µs, k-means' replay 671 -> 621 µs;
each output walking its row's mask words instead of a list: 31.4 µs (four or sixteen ones a turn: 33.0, 55.6).
An output's fold is its centre's rows in the part one after the other: the largest cluster bounds the
workgroup. A float32 x1 of other values pays for the masks' loads before the tiles (the listing and the
folds skipped since, not measured on the H200; on lavapipe 16 x 50k x 32 took 71-78 ms against 64-68 with
the tiles alone, and with a one-hot x1 38-41 against 66).
"""

from __future__ import annotations

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._shader import Layout, MAX_GROUPS, bindings, pack_words
from ._types import WgslType, lit, wt
from ._views import bind_whole, whole_words
from .k_reduce import _i32, _temp

#: outputs of a thin product at most: four per invocation of a workgroup
MOST_OUT = 1024
#: the shortest k taken (shorter products stay gemm's)
MIN_K = 4096
#: values of x1 and x2 a tile holds at most (32-bit words of workgroup memory)
TILE_WORDS = 2048
#: workgroup memory every adapter offers (WebGPU's default maxComputeWorkgroupStorageSize)
SHARED_BYTES = 16384
#: tiles a workgroup takes, about: enough partial products to fill a GPU, few enough for their sum to be
#: short. k-means' 16 x 200k x 32 float32 on an H200 (GPU timestamps): with 8, 38.2 µs and 782 parts summed
#: in two dispatches (9.6 + 5.8); with 16, 39.1 and 391 parts in one (9.4); 32, 64: 56, 69 µs
TILES_PER_GROUP = 16
#: the most values of k per tile where the outputs are at least ``WIDE_OUT`` (a workgroup's share of k is still
#: TILES_PER_GROUP tiles of ``tile``'s, so the bits are the same): on an H200 (GPU timestamps) k-means' 16 x 200k
#: x 32 float32 took 35.7 µs with 16 against 38.4 with 32, 32 x 200k x 32 65.9 against 78.6; 64 x 100k x 16
#: (16 already) 159 against 222 with twice the k per workgroup; 8 x 1M x 8, 3 x 1M x 7 slower with 16 than 64
WIDE_TILE = 16
WIDE_OUT = 512
#: values of k whose ones of x1 a float32 pass notes at a time (``_ones_text``: a mask word per 32), and the
#: most rows of x1 it takes (its masks in workgroup memory, a word per row and 32 values of k)
ONES_CHUNK = 512
_WORDS = ONES_CHUNK // 32  # (mask words a row of x1 takes per chunk)
ONES_ROWS = 32
#: the most ones of x1 a chunk lists (more: the tiles)
ONES_LIST = 1024
#: whether float32 passes add x2's rows at x1's ones only where x1 is all zeros and ones (``_ones_text``),
#: and how many of an output's ones they take a turn (their loads issued together); 0: never
ONES = 8
_M32 = 0xFFFFFFFF


def takes(batch: list, n: tuple, m: tuple, k: tuple, dtypes: tuple) -> bool:
    """Whether gemm's product (its batch, n, m, k as gemm takes them) is a thin one: no batch, float32 or
    float64 throughout, 2 <= N, M and N * M <= MOST_OUT, K >= MIN_K."""
    N, M, K = n[0], m[0], k[0]
    return (not batch and len(set(dtypes)) == 1 and dtypes[0] in (dt.float32, dt.float64)
            and N >= 2 and M >= 2 and N * M <= MOST_OUT and K >= MIN_K)


def tile(N: int, M: int) -> int:
    """Values of k per tile: a power of two, at most 64, whose T x (N + M) values fit TILE_WORDS."""
    t = 64
    while t > 1 and t * (N + M) > TILE_WORDS:
        t //= 2
    return t


def ones(ow: WgslType, N: int) -> bool:
    """Whether a pass whose outputs are ``ow`` and whose x1 has N rows takes x1's ones first (``_ones_text``)."""
    return ONES > 0 and ow.dtype == dt.float32 and N <= ONES_ROWS


def _ones_text(N: int, M: int, Q: int) -> str:
    """Statements computing the workgroup's partial products where x1 holds only zeros and ones: output (i, j)
    is then the sum of x2[k, j] over the k of x1's ones in row i, in increasing k, each added by the same
    ``fma(1, x2[k, j], acc)`` as the tiles', and a zero of x1 adds 0 * x2[k, j], which leaves acc as it is
    where x2[k, j] is finite and acc is not -0 (acc starts at +0; IEEE sums give -0 only from -0 + -0, and an
    adapter that flushes subnormals may give it for a negative subnormal sum). So the same bits as the tiles,
    unless x1 holds another value, a value of x2 in the part is not finite, or an acc is -0 after a step:
    then ``dense_`` is true and the tiles recompute the part, as they do where a chunk has more than ONES_LIST
    ones. ONES_CHUNK values of k at a time: x1's ones as mask words (``_masks``; where x1 holds another value,
    the chunks stop there), listed row after row (``_listing``), each output's row's list folded
    (``_folds``), the rows of x2 no output read checked (``_unread``)."""
    return ("  if (li == 0u) { atomicStore(&fl_, 0u); }\n  workgroupBarrier();\n  var bad_ = false;\n  var c0 = kb;\n"
            f"  loop {{\n    if (c0 >= ke) {{ break; }}\n    let cn = min(c0 + {ONES_CHUNK}u, ke);\n"
            + _masks(N) + _listing(N) + _folds(M, Q, N * M) + _unread(N, M)
            + "    workgroupBarrier();\n    c0 = cn;\n  }\n" + _vote("  ") + "  let dense_ = workgroupUniformLoad(&flp_) != 0u;\n")


def _vote(ind: str) -> str:
    """Statements leaving in ``flp_`` whether any invocation's ``bad_`` is true (``fl_`` zeroed before), for
    every invocation to read by workgroupUniformLoad (a value the workgroup's barriers may depend on)."""
    return (f"{ind}if (bad_) {{ atomicOr(&fl_, 1u); }}\n{ind}workgroupBarrier();\n"
            f"{ind}if (li == 0u) {{ flp_ = atomicLoad(&fl_); }}\n")


def _finite(v: str) -> str:
    return f"(bitcast<u32>({v}) & 0x7fffffffu) < 0x7f800000u"


def _masks(N: int) -> str:
    """The chunk's ones of x1 as mask words (``mk``, row j's word w: k = c0 + 32 w + bit), 32 values of k per
    invocation and word; where a value is neither 0 nor 1 the workgroup leaves the chunks (the tiles run)."""
    W = _WORDS
    t = [f"    for (var s = li; s < {N * W}u; s = s + 256u) {{\n      let j = s % {N}u;\n      let w = s / {N}u;\n"
         "      var word = 0u;\n"]
    for b in range(32):  # (every load issued: past cn, the chunk's last row, unused)
        t.append(f"      {{ let k = c0 + w * 32u + {b}u;"
                 f" let v = select(0.0, ld2(u32(e1 + i32(j) * sn1 + i32(min(k, cn - 1u)) * sk1)), k < cn);"
                 f" word = word | select(0u, {1 << b}u, v == 1.0); bad_ = bad_ || !(v == 0.0 || v == 1.0); }}\n")
    t.append(f"      mk[j * {W}u + w] = word;\n    }}\n" + _vote("    ")
             + "    if (workgroupUniformLoad(&flp_) != 0u) { break; }\n")
    return "".join(t)


def _listing(N: int) -> str:
    """The chunk's ones listed row after row, each row's in increasing k (``ol_``: k - c0; ``rs_``: each row's
    first, and the count): each invocation lists its E consecutive mask words' ones from the prefix sum of the
    words' counts (``sc_``, an inclusive scan); past ONES_LIST ones, the tiles run."""
    W = _WORDS
    E = -(-N * W // 256)
    t = ["    var cnt_ = 0u;\n"]
    t += [f"    {{ let s = li * {E}u + {e}u; if (s < {N * W}u) {{ cnt_ = cnt_ + countOneBits(mk[s]); }} }}\n"
          for e in range(E)]
    t.append("    sc_[li] = cnt_;\n    workgroupBarrier();\n")
    d = 1
    while d < 256:
        t.append(f"    {{ var a_ = sc_[li]; if (li >= {d}u) {{ a_ = a_ + sc_[li - {d}u]; }}"
                 " workgroupBarrier(); sc_[li] = a_; workgroupBarrier(); }\n")
        d *= 2
    t.append("    var pos_ = sc_[li] - cnt_;\n")
    t += [f"    {{ let s = li * {E}u + {e}u;\n      if (s < {N * W}u) {{\n"
          f"        if (s % {W}u == 0u) {{ rs_[s / {W}u] = pos_; }}\n"
          f"        var m = mk[s];\n        let kw = (s % {W}u) * 32u;\n"
          f"        loop {{ if (m == 0u) {{ break; }} if (pos_ < {ONES_LIST}u) {{ ol_[pos_] = kw + firstTrailingBit(m); }}"
          " pos_ = pos_ + 1u; m = m & (m - 1u); }\n      }\n    }\n" for e in range(E)]
    t.append(f"    if (li == 0u) {{ rs_[{N}u] = sc_[255u]; }}\n    bad_ = bad_ || sc_[255u] > {ONES_LIST}u;\n"
             "    workgroupBarrier();\n")
    return "".join(t)


def _folds(M: int, Q: int, NM: int) -> str:
    """Each of the invocation's Q outputs (li + 256 q: row oi of x1, column of x2) adds x2's values at its row's
    listed ones, ONES a turn side by side (their loads issued together, then the multiply-adds in order); a
    value of x2 that is not finite, or a sum of -0, sends the part to the tiles."""
    t = [f"    let o{q} = min(li + {256 * q}u, {NM - 1}u);\n    let on{q} = li + {256 * q}u < {NM}u;\n"
         f"    let oi{q} = o{q} / {M}u;\n    let oj{q} = i32(o{q} % {M}u) * sm2;\n"
         f"    var t{q} = select(0u, rs_[oi{q}], on{q});\n"
         f"    let te{q} = select(0u, min(rs_[oi{q} + 1u], {ONES_LIST}u), on{q});\n" for q in range(Q)]
    t.append("    loop {\n      if (" + " && ".join(f"t{q} >= te{q}" for q in range(Q)) + ") { break; }\n")
    for q in range(Q):
        for u in range(ONES):
            t.append(f"      let v{q}_{u} = t{q} + {u}u < te{q};\n"
                     f"      let k{q}_{u} = c0 + select(0u, ol_[min(t{q} + {u}u, {ONES_LIST - 1}u)], v{q}_{u});\n")
    for q in range(Q):
        for u in range(ONES):
            t.append(f"      let y{q}_{u} = ld3(u32(e2 + i32(k{q}_{u}) * sk2 + oj{q}));\n")
    for q in range(Q):
        for u in range(ONES):
            t.append(f"      if (v{q}_{u}) {{ acc{q} = fma(1.0, y{q}_{u}, acc{q});"
                     f" bad_ = bad_ || !({_finite(f'y{q}_{u}')}) || bitcast<u32>(acc{q}) == 0x80000000u; }}\n")
    t.append("".join(f"      t{q} = t{q} + {ONES}u;\n" for q in range(Q)) + "    }\n")
    return "".join(t)


def _unread(N: int, M: int) -> str:
    """The rows of x2 in the chunk where x1 has no one (no fold read them): a value that is not finite there
    sends the part to the tiles (0 * it is NaN)."""
    W = _WORDS
    return (f"    if (li < {W}u) {{\n      var cov = 0u;\n"
            f"      for (var j = 0u; j < {N}u; j = j + 1u) {{ cov = cov | mk[j * {W}u + li]; }}\n"
            "      let k0 = c0 + li * 32u;\n      var unc = ~cov;\n"
            "      if (k0 >= cn) { unc = 0u; } else if (cn - k0 < 32u) { unc = unc & ((1u << (cn - k0)) - 1u); }\n"
            "      loop {\n        if (unc == 0u) { break; }\n        let k = k0 + firstTrailingBit(unc);\n"
            "        unc = unc & (unc - 1u);\n"
            f"        for (var c = 0u; c < {M}u; c = c + 1u) {{\n"
            f"          let y = ld3(u32(e2 + i32(k) * sk2 + i32(c) * sm2));\n          bad_ = bad_ || !({_finite('y')});\n"
            "        }\n      }\n    }\n")


def _build(client, key, ow: WgslType, N: int, M: int, T: int, k_major1: bool, k_major2: bool):
    """The pass's pipeline: uniform words (after the frame) K, KP (k per workgroup), x1's offset and strides
    (n, k), x2's (k, m), the parts' offset. ``k_major1``: x1's tile loaded along k (x1 contiguous along k),
    else along n; ``k_major2`` likewise for x2 (else along m). Where ``ones``, x1's ones first
    (``_ones_text``), the tiles only where that does not give their bits."""
    lay = Layout()
    W = Layout.word
    K_k, KP_k, e1_k, sn1_k, sk1_k, e2_k, sk2_k, sm2_k, ep_k = (lay.alloc(1) for _ in range(9))
    LA, LB = -(-T * N // 256), -(-T * M // 256)  # loads per invocation per tile
    Q = -(-N * M // 256)  # outputs per invocation
    zero = lit(ow, 0)
    # the tiles in workgroup memory as rows of k, one per row of x1 (As) and column of x2 (Bs), of vectors of
    # V values (a product's four multiply-adds from one load of each operand); Bs' rows padded by a vector
    # where that fits, so that the lanes reading consecutive columns hit different banks
    V = min(16 // ow.dtype.itemsize, T)
    R = T // V
    sparse = ones(ow, N)
    mask_bytes = N * ONES_CHUNK // 8 + 4 * (ONES_LIST + 256 + N + 3) if sparse else 0
    RB = R + 1 if ((N + M) * T + M * V) * ow.dtype.itemsize + mask_bytes <= SHARED_BYTES else R
    vt = f"vec{V}<{ow.ct}>" if V > 1 else ow.ct
    src = [lay.block(), bindings([(ow, True, False), (ow, False, False), (ow, False, False)]),
           f"var<workgroup> As: array<{vt}, {N * R}>;\nvar<workgroup> Bs: array<{vt}, {M * RB}>;\n"
           + (f"var<workgroup> mk: array<u32, {N * _WORDS}>;\nvar<workgroup> fl_: atomic<u32>;\n"
              f"var<workgroup> flp_: u32;\nvar<workgroup> ol_: array<u32, {ONES_LIST}>;\n"
              f"var<workgroup> sc_: array<u32, 256>;\nvar<workgroup> rs_: array<u32, {N + 1}>;\n" if sparse else "")
           + "@compute @workgroup_size(256)\n"
           "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
           f"  let g = wid.y * {W(1)} + wid.x;\n  if (g >= {W(0)}) {{ return; }}\n"
           f"  let kb = g * {W(KP_k)};\n  let ke = min(kb + {W(KP_k)}, {W(K_k)});\n"
           f"  let e1 = {_i32(e1_k)};\n  let sn1 = {_i32(sn1_k)};\n  let sk1 = {_i32(sk1_k)};\n"
           f"  let e2 = {_i32(e2_k)};\n  let sk2 = {_i32(sk2_k)};\n  let sm2 = {_i32(sm2_k)};\n"]
    # the element of each operand's tile an invocation loads, load j: (row t of the tile, index along n or m)
    # (tile slot s = t * N + i of As, t * M + j of Bs)

    def slots(L: int, count: int, width: int, k_major: bool) -> list[tuple[str, str, str]]:
        out = []
        for j in range(L):
            s = f"(li + {256 * j}u)"
            if k_major:  # consecutive invocations along k
                t, i = f"({s} % {T}u)", f"({s} / {T}u)"
            else:
                t, i = f"({s} / {width}u)", f"({s} % {width}u)"
            out.append((f"{s} < {count}u", t, i))
        return out

    sa, sb = slots(LA, T * N, N, k_major1), slots(LB, T * M, M, k_major2)
    src += [f"  var ra{j} = {zero};\n" for j in range(LA)] + [f"  var rb{j} = {zero};\n" for j in range(LB)]
    src += [f"  var acc{q} = {zero};\n" for q in range(Q)]
    if sparse:  # (the tiles below run only where x1's ones do not give their bits)
        src.append(_ones_text(N, M, Q) + "  if (dense_) {\n" + "".join(f"  acc{q} = {zero};\n" for q in range(Q)))

    def fetch(r0: str) -> str:  # the tile from k = r0 into the registers (zero past ke)
        t = []
        for j, (ok, tt, i) in enumerate(sa):
            t.append(f"    {{ let r = {r0} + {tt}; ra{j} = {zero};"
                     f" if ({ok} && r < ke) {{ ra{j} = ld2(u32(e1 + i32({i}) * sn1 + i32(r) * sk1)); }} }}\n")
        for j, (ok, tt, i) in enumerate(sb):
            t.append(f"    {{ let r = {r0} + {tt}; rb{j} = {zero};"
                     f" if ({ok} && r < ke) {{ rb{j} = ld3(u32(e2 + i32(r) * sk2 + i32({i}) * sm2)); }} }}\n")
        return "".join(t)

    src.append("  var r0 = kb;\n  if (r0 < ke) {\n" + fetch("r0") + "  }\n")
    src.append("  loop {\n    if (r0 >= ke) { break; }\n")

    def at(tile: str, row: str, pitch: int, t: str) -> str:  # value t of a tile's row, as a reference
        if V == 1:
            return f"{tile}[{row} * {pitch}u + {t}]"
        return f"{tile}[{row} * {pitch}u + ({t}) / {V}u][({t}) % {V}u]"

    src += [f"    if ({ok}) {{ {at('As', i, R, tt)} = ra{j}; }}\n" for j, (ok, tt, i) in enumerate(sa)]
    src += [f"    if ({ok}) {{ {at('Bs', i, RB, tt)} = rb{j}; }}\n" for j, (ok, tt, i) in enumerate(sb)]
    src.append("    workgroupBarrier();\n"
               f"    let nt = min({T}u, ke - r0);\n    r0 = r0 + {T}u;\n"
               "    if (r0 < ke) {\n" + fetch("r0") + "    }\n")
    lanes = [f".{c}" for c in "xyzw"[:V]] if V > 1 else [""]  # (a vector's values in increasing k)
    for q in range(Q):  # output li + 256 q: row oi, column oj; a whole tile unrolled (its loads issued
        # together: a loop's dependent load and multiply-add per step left the kernel at 95 µs for k-means),
        # its products in increasing k
        o = f"(li + {256 * q}u)"
        full = "".join(f"        let a{r} = As[oi * {R}u + {r}u];\n        let b{r} = Bs[oj * {RB}u + {r}u];\n"
                       + "".join(f"        acc{q} = fma(a{r}{c}, b{r}{c}, acc{q});\n" for c in lanes)
                       for r in range(R))
        src.append(f"    if ({o} < {N * M}u) {{\n      let oi = {o} / {M}u;\n      let oj = {o} % {M}u;\n"
                   f"      if (nt == {T}u) {{\n" + full
                   + f"      }} else {{\n        for (var t = 0u; t < nt; t = t + 1u) {{"
                   f" acc{q} = fma({at('As', 'oi', R, 't')}, {at('Bs', 'oj', RB, 't')}, acc{q});"
                   " }\n      }\n    }\n")
    src.append("    workgroupBarrier();\n  }\n" + ("  }\n" if sparse else ""))
    src += [f"  if (li + {256 * q}u < {N * M}u) {{ st1({W(ep_k)} + g * {N * M}u + li + {256 * q}u, acc{q}); }}\n"
            for q in range(Q)]
    src.append("}\n")
    text = "".join(src)
    return client.pipeline(key, lambda: text, 3, lay.nbytes)


def partial_products(client, x1: Tensor, x2: Tensor, n: tuple, m: tuple, k: tuple) -> Tensor:
    """x1 @ x2 (``takes``) as partial products, one per workgroup (G x N x M, the operands' dtype), for the
    caller to sum over the first axis."""
    N, M, K = n[0], m[0], k[0]
    span = tile(N, M)  # a workgroup takes about TILES_PER_GROUP of these
    T = min(span, WIDE_TILE) if N * M >= WIDE_OUT else span
    tiles = -(-K // span)
    G = max(1, min(-(-tiles // TILES_PER_GROUP), MAX_GROUPS))
    KP = -(-tiles // G) * span
    G = -(-K // KP)
    parts = _temp(client, (G, N, M), x1._dtype)
    (b1, e1), (b2, e2), (bp, ep) = (bind_whole(client, t) for t in (x1, x2, parts))
    k_major1 = k[1] == 1 and n[1] != 1
    k_major2 = k[2] == 1 and m[1] != 1
    key = ("thin-gemm", x1._dtype, N, M, T, k_major1, k_major2, ONES if ones(wt(x1._dtype), N) else 0)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = _build(client, key, wt(x1._dtype), N, M, T, k_major1, k_major2)
    words = [G, G, 0, 0, K, KP, e1, n[1] & _M32, k[1] & _M32, e2, k[2] & _M32, m[1] & _M32, ep]
    client.dispatch(pipe, pack_words(words), bp + b1 + b2, (G, 1, 1), whole=whole_words(parts))  # (every one)
    return parts
