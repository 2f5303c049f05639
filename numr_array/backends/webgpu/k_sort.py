"""Sorting, searching and set kernels: sort, argsort, searchsorted, unique_sort, unique_gather and isin.

Every one of them is built on one sort of order keys. A map launch turns each element into its key: one
to five 32-bit words, most significant first, whose unsigned lexicographic order is the element order
(integers with the sign bit flipped; floats with their bits flipped by sign, -0.0 as +0.0 and every NaN
as all ones, above +inf; complex as (NaN class, real, imaginary), NumPy's order; all words complemented
for a descending sort, which with ascending indices breaking ties is the CPU's
``flip(sort(flip(x)))``). The (key, original index) pairs of each line are then sorted by a bitonic
network in which every comparison puts the smaller pair first (the first stage of each merge compares
mirrored positions, the later ones are half-cleaners): the index breaks ties, which makes it stable, and
a line of any length n is sorted as if padded with +inf to the next power of two P without storing the
padding, because no comparison ever moves a padding element (pairs reaching past n are skipped).

Launches, for a line of P elements and workgroup tiles of E elements (E a power of two, at most 4096,
as large as the adapter's workgroup memory holds: 4096 float32 keys with their indices in 32 KiB):

- one local launch sorts every tile of E consecutive (virtual) elements in workgroup memory (all merges
  of sizes 2..E), setting the indices; lines shorter than E share a tile, and all lines are one dispatch;
- then for each merge size B = 2E..P: the stages whose stride is E or more go through global memory,
  up to four stages per launch (three for keys of more than two words: each invocation loads the 16
  elements its four stages combine into registers, so a stage costs a quarter of a pass over the
  data), and one local launch finishes the
  stages below E in workgroup memory.

For 1e8 float32 (P = 2^27) with E = 4096 that would be 1 + 15 local and 36 global launches, each reading
and writing 8 bytes per element. So one line of ``RADIX_MIN`` elements or more is radix-sorted instead
(``_radix``): least significant digit first, 4 bits per pass, 8 passes per key word; each pass counts
the digits of every tile of ``RADIX_TILE`` elements, scans the counts digit-major, and scatters each tile
stably (an invocation ranks its consecutive elements after a workgroup scan of the per-invocation counts).
Measured against CuPy's radix sort in docs/benchmarks.md.

The rest is searches over sorted keys: searchsorted is a binary search per element of x2 in x1 (through
``sorter``), comparing keys of the promoted dtype; isin sorts the keys of x2 and binary-searches each
element of x1 among them; unique_sort sorts the flattened x and marks where runs of unequal keys start
(NaNs each start one); unique_gather finds the run starts by a stable sort of the flags (true first),
then gathers values, indices and counts per run and scatters inverse indices, whose run numbers are
binary searches among the run starts. Nothing is read back to the host.

Limits: the keys of the sorted array (4 bytes per word per element) and the searched arrays are bound
whole; beyond the adapter's largest storage binding these kernels raise MemoryError.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ._client import WebGPUClient
from ._copy_fill import copy as _copy, fill as _fill
from ._map import Gen, run_map
from ._shader import Layout, groups, main_header, pack_words
from ._types import COMPUTE, WT, WTS, cast, wt
from ._views import window
from .k_index import _clip_index, _take_along_axis
from .k_reduce import _temp, reduce, scan

U32 = WTS[dt.uint32]
WG = 256
#: one line of at least this many elements is radix-sorted; shorter lines and batches go to the bitonic
#: network (fewer launches when the data is small, and every line in one dispatch)
RADIX_MIN = 1 << 16
RADIX_TILE = 2048  # elements per workgroup in a radix pass
#: invocations per workgroup in a radix pass, each ranking RADIX_TILE // RADIX_GROUP elements (an argsort of
#: 1e8 float32 on an H100 took 85.9 ms with 256, 117 ms with 128, 175 ms with 64)
RADIX_GROUP = 256
ONES = "0xffffffffu"


# --- order keys -------------------------------------------------------------------------------------

def key_words(w: WT) -> int:
    """How many 32-bit words the order key of a ``w`` value has."""
    return 1 + 2 * w.real.nwords if w.family == "c" else w.nwords


def _float_key(w: WT, v: str, p: str) -> tuple[str, list[str]]:
    u, sign, mag, inf = (("u32", "0x80000000u", "0x7fffffffu", "0x7f800000u") if w.ct == "f32" else
                         ("u64", "0x8000000000000000lu", "0x7ffffffffffffffflu", "0x7ff0000000000000lu"))
    # negatives reversed, positives above them; -0 as +0; every NaN all ones (above +inf, all equal);
    # tested on the bits: compilers may assume that floats are never NaN
    lines = (f"  let {p}b = bitcast<{u}>({v});\n  let {p}a = {p}b & {mag};\n"
             f"  let {p}k = select(select(select({p}b | {sign}, ~{p}b, {p}b >= {sign}), {sign}, {p}a == {u}(0)),"
             f" ~{u}(0), {p}a > {inf});\n")
    if u == "u32":
        return lines, [f"{p}k"]
    return lines, [f"u32({p}k >> 32u)", f"u32({p}k & 0xfffffffflu)"]


def key(w: WT, v: str, p: str, descending: bool = False) -> tuple[str, list[str]]:
    """WGSL lines (their names prefixed ``p``) computing the order key of ``v`` (a value of w's compute
    type), and the names of its words, most significant first."""
    f, ct = w.family, w.ct
    lines = ""
    if f == "b":
        words = [f"select(0u, 1u, {v})"]
    elif f == "f":
        lines, words = _float_key(w, v, p)
    elif f == "c":
        # NumPy's complex order: no NaN part < NaN imaginary < NaN real < both NaN, then by the parts
        lr, re = _float_key(w.real, f"({v}).x", p + "r")
        li, im = _float_key(w.real, f"({v}).y", p + "i")
        lines = lr + li
        words = [f"(select(0u, 2u, {re[0]} == {ONES}) | select(0u, 1u, {im[0]} == {ONES}))"] + re + im
    elif ct == "u32":
        words = [v]
    elif ct == "i32":
        words = [f"(bitcast<u32>({v}) ^ 0x80000000u)"]
    else:
        flip = " ^ 0x8000000000000000lu" if ct == "i64" else ""
        lines = f"  let {p}b = bitcast<u64>({v}){flip};\n"
        words = [f"u32({p}b >> 32u)", f"u32({p}b & 0xfffffffflu)"]
    names = [f"{p}w{k}" for k in range(len(words))]
    lines += "".join(f"  let {n} = {'~' if descending else ''}{e};\n" for n, e in zip(names, words))
    return lines, names


def nan_key(w: WT, first_word: str) -> str:
    """WGSL: whether the key whose first word is ``first_word`` is a value unequal to itself (NaN)."""
    if w.family == "f":
        return f"({first_word} == {ONES})"
    if w.family == "c":
        return f"({first_word} != 0u)"
    return "false"


def less(a: list[str], b: list[str]) -> str:
    """WGSL: words ``a`` come before words ``b`` in lexicographic order."""
    e = f"({a[-1]} < {b[-1]})"
    for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
        e = f"({x} < {y} || ({x} == {y} && {e}))"
    return e


def lower_bound(n: str, load_key: str, target: list[str], left: bool) -> str:
    """WGSL declaring ``lo``: the first position in [0, n) whose key (words ``sk0``.. declared by the lines
    ``load_key`` from position ``mid``) is not below ``target`` (``left``, as NumPy's side="left") or is
    above it (else)."""
    sk = [f"sk{k}" for k in range(len(target))]
    go = less(sk, target) if left else f"!{less(target, sk)}"
    return (f"  var lo = 0u;\n  var hi = {n};\n  loop {{\n    if (lo >= hi) {{ break; }}\n"
            f"    let mid = (lo + hi) >> 1u;\n{load_key}"
            f"    if ({go}) {{ lo = mid + 1u; }} else {{ hi = mid; }}\n  }}\n")


# --- the sort of keys -----------------------------------------------------------------------------

def sorted_keys(client: WebGPUClient, x: Tensor, n: int, cw: WT | None = None,
                descending: bool = False) -> tuple[Tensor, Tensor]:
    """The keys (uint32, words of each element together) and original positions (uint32) of the elements
    of ``x`` in row-major order, cut into lines of ``n``, each line sorted (stably). ``cw``: the WT the
    values are cast to before their keys are taken (x's own by default)."""
    xw = wt(x._dtype)
    cw = COMPUTE[cw or xw]
    kw = key_words(cw)
    total = math.prod(x._shape)
    lines = total // n
    if total * kw * 4 > client.max_binding:
        raise MemoryError(f"{client.device}: the sort keys of {total} elements ({total * kw * 4} bytes) exceed "
                          f"the adapter's largest storage binding ({client.max_binding} bytes)")
    keys = _temp(client, (total * kw,), dt.uint32)
    idx = _temp(client, (total,), dt.uint32)
    cs = contiguous_strides(x._shape)
    for k in range(kw):
        def body(g: Gen, k=k) -> str:
            lines_, words = key(cw, cast(g.val(0), g.wt_in(0), cw), "kq", descending)
            return lines_ + g.store(0, words[k])
        view = Tensor(keys._buf, dt.uint32, x._shape, tuple(s * kw for s in cs), k, client.device)
        run_map(client, "sort_key", (k, descending, cw.dtype), [view], [x], body)
    if lines == 1 and n >= RADIX_MIN:
        _radix(client, keys, idx, n, kw)
    else:
        _bitonic(client, keys, idx, lines, n, kw)
    return keys, idx


def _radix(client: WebGPUClient, keys: Tensor, idx: Tensor, n: int, kw: int) -> None:
    """Sort one line of n (key, index) pairs in place, setting the indices: a least-significant-digit radix
    sort, 4 bits per pass (8 passes per key word), each pass stable, so that equal keys keep their order
    of position. A pass counts the digits of every tile, scans the counts (digit-major, so that a tile's
    digit d lands after all smaller digits and after earlier tiles' d), and scatters each tile."""
    nb = -(-n // RADIX_TILE)
    hist = _temp(client, (16 * nb,), dt.uint32)
    cum = _temp(client, (16 * nb,), dt.uint32)
    bufs = [(keys, idx), (_temp(client, (n * kw,), dt.uint32), _temp(client, (n,), dt.uint32))]
    passes = 8 * kw  # even: the result ends in keys and idx
    for p in range(passes):
        (k_in, i_in), (k_out, i_out) = bufs[p % 2], bufs[1 - p % 2]
        word, shift = kw - 1 - p // 8, 4 * (p % 8)
        common = [n, nb, word, shift, int(p == 0)]
        _radix_launch(client, "count", kw, common, (k_in, hist), nb)
        scan(client, "sum", hist, cum, 0)
        _radix_launch(client, "scatter", kw, common, (k_in, i_in, k_out, i_out, hist, cum), nb)


def _radix_launch(client, stage: str, kw: int, common: list[int], tensors: tuple, nb: int) -> None:
    lay = Layout()
    W = Layout.word
    n_k, nb_k, word_k, shift_k, init_k = (lay.alloc(1) for _ in range(5))
    G = RADIX_GROUP
    T, PER = RADIX_TILE, RADIX_TILE // G

    def source() -> str:
        names = ["k_in", "hist"] if stage == "count" else ["k_in", "i_in", "k_out", "i_out", "hist", "cum"]
        decl = "".join(f"@group(0) @binding({b}) var<storage, read_write> {name}: array<u32>;\n"
                       for b, name in enumerate(names, start=1))
        head = (f"@compute @workgroup_size({G})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                f"  let t = wid.y * {W(1)} + wid.x;\n  if (t >= {W(0)}) {{ return; }}\n"
                f"  let n = {W(n_k)};\n  let nb = {W(nb_k)};\n  let base = t * {T}u;\n")
        dig = f"((k_in[e * {kw}u + {W(word_k)}] >> {W(shift_k)}) & 15u)"
        if stage == "count":
            body = ("  if (li < 16u) { atomicStore(&h[li], 0u); }\n  workgroupBarrier();\n"
                    f"  for (var j = 0u; j < {PER}u; j = j + 1u) {{\n    let e = base + j * {G}u + li;\n"
                    f"    if (e < n) {{ atomicAdd(&h[{dig}], 1u); }}\n  }}\n  workgroupBarrier();\n"
                    "  if (li < 16u) { hist[li * nb + t] = atomicLoad(&h[li]); }\n}\n")
            return lay.block() + decl + "var<workgroup> h: array<atomic<u32>, 16>;\n" + head + body
        move = "".join(
            f"  workgroupBarrier();\n  for (var j = 0u; j < {PER}u; j = j + 1u) {{\n    let q = j * {G}u + li;\n"
            f"    if (base + q < n) {{ cnt[rk(q)] = {src}; }}\n  }}\n  workgroupBarrier();\n"
            f"  for (var j = 0u; j < {PER}u; j = j + 1u) {{\n    let q = j * {G}u + li;\n"
            f"    if (q < m) {{ let d = dg[q]; {dst}[(goff[d] + q - loff[d]){stride}] = cnt[q]; }}\n  }}\n"
            for src, dst, stride in [(f"k_in[(base + q) * {kw}u + {k}u]", "k_out", f" * {kw}u + {k}u")
                                     for k in range(kw)]
            + [(f"select(i_in[base + q], base + q, {W(init_k)} != 0u)", "i_out", "")])
        # every loop over the 16 digits and the PER elements of an invocation is unrolled here, so that
        # per-invocation values stay in registers (dynamically indexed private arrays were 3x slower on
        # NVIDIA); each invocation's per-digit values live in its own column li of cnt (no bank conflicts)
        slot = lambda d: f"cnt[{d * G}u + li]"
        body = [
            # the digit of each element of the tile (16: past the end)
            f"  for (var j = 0u; j < {PER}u; j = j + 1u) {{\n    let q = j * {G}u + li;\n    let e = base + q;\n"
            f"    dg[q] = select(16u, {dig}, e < n);\n  }}\n",
            "".join(f"  {slot(d)} = 0u;\n" for d in range(16)) + "  workgroupBarrier();\n",
            # each invocation takes PER consecutive elements (so that ranks follow positions): its digits, and
            # its count of each digit
            "".join(f"  let d{j} = dg[li * {PER}u + {j}u];\n"
                    f"  if (d{j} < 16u) {{ cnt[d{j} * {G}u + li] = cnt[d{j} * {G}u + li] + 1u; }}\n"
                    for j in range(PER)),
            "  workgroupBarrier();\n",
            # inclusive scan of each digit's row across the invocations
            f"  for (var off = 1u; off < {G}u; off = off << 1u) {{\n"
            + "".join(f"    var v{d} = {slot(d)};\n    if (li >= off) {{ v{d} = v{d} + cnt[{d * G}u + li - off]; }}\n"
                      for d in range(16))
            + "    workgroupBarrier();\n" + "".join(f"    {slot(d)} = v{d};\n" for d in range(16))
            + "    workgroupBarrier();\n  }\n",
            # where each digit starts in the tile sorted by digit (loff) and in the line (goff), and where this
            # invocation's first element of each digit goes in the sorted tile
            "  var at = 0u;\n"
            + "".join(f"  let b{d} = at + select(0u, cnt[{d * G}u + max(li, 1u) - 1u], li > 0u);\n"
                      f"  if (li == 0u) {{ loff[{d}] = at; goff[{d}] = cum[{d}u * nb + t] - hist[{d}u * nb + t]; }}\n"
                      f"  at = at + cnt[{d * G + G - 1}u];\n" for d in range(16))
            + "  let m = at;\n  workgroupBarrier();\n"
            + "".join(f"  {slot(d)} = b{d};\n" for d in range(16)),
            # each element's rank in the sorted tile (each invocation bumps its own column only)
            "".join(f"  var r{j} = 0u;\n  if (d{j} < 16u) {{ r{j} = cnt[d{j} * {G}u + li]; "
                    f"cnt[d{j} * {G}u + li] = r{j} + 1u; }}\n" for j in range(PER))
            + "  workgroupBarrier();\n",
            # ranks by position (cnt[T..2T)) and the digit at each sorted position (dg)
            "".join(f"  if (d{j} < 16u) {{ cnt[{T}u + li * {PER}u + {j}u] = r{j}; dg[r{j}] = d{j}; }}\n"
                    for j in range(PER)),
            # each word of the keys, then the indices: read in order, placed sorted in workgroup memory
            # (cnt[0..T)), written out in sorted order, so that consecutive invocations write consecutive places
            move, "}\n",
        ]
        return (lay.block() + decl + f"var<workgroup> dg: array<u32, {T}>;\n"
                f"var<workgroup> cnt: array<u32, {max(16 * G, 2 * T)}>;\n"
                "var<workgroup> loff: array<u32, 16>;\nvar<workgroup> goff: array<u32, 16>;\n"
                f"fn rk(q: u32) -> u32 {{ return cnt[{T}u + q]; }}\n"
                + head + "".join(body))

    pipe = client.pipeline(("sort_radix", stage, kw, T, G), source, len(tensors), lay.nbytes)
    grid = groups(nb * G, G)
    client.dispatch(pipe, pack_words([nb, grid[0], 0, 0] + common), _binds(client, *tensors), grid)


def _tile(client: WebGPUClient, kw: int) -> int:
    """Elements per workgroup tile: a power of two whose keys and indices fit the workgroup memory."""
    mem = int(client.wdevice.limits["max-compute-workgroup-storage-size"])
    return min(4096, 1 << ((mem // (4 * (kw + 1))).bit_length() - 1))


def _bitonic(client: WebGPUClient, keys: Tensor, idx: Tensor, lines: int, n: int, kw: int) -> None:
    """Sort each line of n (key, index) pairs in place, setting the indices (the module docstring's plan)."""
    lg = (n - 1).bit_length()  # lines are sorted as if P = 2^lg long
    E = _tile(client, kw)
    lge = E.bit_length() - 1
    per = 4 if kw <= 2 else 3  # global stages per launch (2^per elements in registers per invocation)
    _local(client, keys, idx, lines, n, lg, kw, E, 2, min(E, 1 << lg), True)
    for lgb in range(lge + 1, lg + 1):
        B = 1 << lgb
        stages = [(B - 1, lgb - 1)] + [(1 << t, t) for t in range(lgb - 2, lge - 1, -1)]
        count = -(-len(stages) // per)
        size = -(-len(stages) // count)
        for c in range(0, len(stages), size):
            _global(client, keys, idx, lines, n, lg, kw, stages[c:c + size], c == 0)
        _local(client, keys, idx, lines, n, lg, kw, E, B, B, False)


def _binds(client: WebGPUClient, *tensors: Tensor) -> tuple:
    binds: tuple = ()
    for t in tensors:
        b0, size, _ = window(client, t)
        binds += (t._buf.handle, b0, size)
    return binds


_DECL = ("@group(0) @binding(1) var<storage, read_write> keys: array<u32>;\n"
         "@group(0) @binding(2) var<storage, read_write> idx: array<u32>;\n")


def _local(client, keys, idx, lines, n, lg, kw, E, b0, b1, init) -> None:
    """Merges of sizes b0..b1 (powers of two) of each tile of E elements in workgroup memory: all their
    stages when the merge fits in a tile, else the stages below E. ``init``: the indices are set."""
    lay = Layout()
    W = Layout.word
    n_k, lg_k, lines_k, b0_k, b1_k, init_k = (lay.alloc(1) for _ in range(6))

    def source() -> str:
        a = [f"sk[a * {kw}u + {k}u]" for k in range(kw)] + ["si[a]"]
        b = [f"sk[b * {kw}u + {k}u]" for k in range(kw)] + ["si[b]"]
        swap = "".join(f"    let t{k} = {x}; {x} = {y}; {y} = t{k};\n" for k, (x, y) in enumerate(zip(a, b)))
        move = lambda dst, src: "".join(f"      {dst(k)} = {src(k)};\n" for k in range(kw))
        pairs = lambda lo, partner: (f"      for (var q = li; q < {E // 2}u; q = q + {WG}u) {{\n"
                                     f"        let a = ((q & ~({lo} - 1u)) << 1u) | (q & ({lo} - 1u));\n"
                                     f"        cx(a, {partner});\n      }}\n      workgroupBarrier();\n")
        loop = lambda body: (f"  for (var e = li; e < {E}u; e = e + {WG}u) {{\n    let g = t * {E}u + e;\n"
                             f"    let line = g >> {W(lg_k)};\n    let pos = g & ((1u << {W(lg_k)}) - 1u);\n"
                             f"    let s = line * {W(n_k)} + pos;\n"
                             f"    let valid = line < {W(lines_k)} && pos < {W(n_k)};\n{body}  }}\n")
        return (lay.block() + _DECL
                + f"var<workgroup> sk: array<u32, {E * kw}>;\nvar<workgroup> si: array<u32, {E}>;\n"
                # the pair at b goes first when it orders before the pair at a (index breaks ties)
                + f"fn cx(a: u32, b: u32) {{\n  if ({less(b, a)}) {{\n{swap}  }}\n}}\n"
                + f"@compute @workgroup_size({WG})\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                f"  let t = wid.y * {W(1)} + wid.x;\n  if (t >= {W(0)}) {{ return; }}\n"
                + loop("    if (valid) {\n"
                       + move(lambda k: f"sk[e * {kw}u + {k}u]", lambda k: f"keys[s * {kw}u + {k}u]")
                       + f"      si[e] = select(idx[s], pos, {W(init_k)} != 0u);\n    }} else {{\n"
                       # padding: above every element, so no comparison moves it
                       + move(lambda k: f"sk[e * {kw}u + {k}u]", lambda k: ONES)
                       + f"      si[e] = {ONES};\n    }}\n")
                + "  workgroupBarrier();\n"
                f"  for (var B = {W(b0_k)}; B <= {W(b1_k)}; B = B << 1u) {{\n"
                f"    if (B <= {E}u) {{\n" + pairs("(B >> 1u)", "a ^ (B - 1u)") + "    }\n"
                f"    for (var j = min(B >> 2u, {E // 2}u); j > 0u; j = j >> 1u) {{\n" + pairs("j", "a | j") + "    }\n"
                "  }\n"
                + loop("    if (valid) {\n"
                       + move(lambda k: f"keys[s * {kw}u + {k}u]", lambda k: f"sk[e * {kw}u + {k}u]")
                       + "      idx[s] = si[e];\n    }\n")
                + "}\n")

    pipe = client.pipeline(("sort_local", kw, E), source, 2, lay.nbytes)
    tiles = -(-(lines << lg) // E)
    grid = groups(tiles * WG, WG)
    words = [tiles, grid[0], 0, 0, n, lg, lines, b0, b1, int(init)]
    client.dispatch(pipe, pack_words(words), _binds(client, keys, idx), grid)


def _global(client, keys, idx, lines, n, lg, kw, stages, flip) -> None:
    """Consecutive stages (XOR mask, its top bit) of a merge through global memory, each invocation
    doing all of them on the 2^r elements they combine; ``flip``: the first is a merge's mirrored stage."""
    r = len(stages)
    lay = Layout()
    W = Layout.word
    n_k, lg_k, m_k, t_k = lay.alloc(1), lay.alloc(1), lay.alloc(r), lay.alloc(r)

    def source() -> str:
        src = [lay.block(), _DECL, main_header(WG), "  var base = i;\n"]
        for s in reversed(range(r)):  # a zero bit at each stage's top bit, the lowest first
            t = W(t_k + s)
            src.append(f"  base = ((base >> {t}) << ({t} + 1u)) | (base & ((1u << {t}) - 1u));\n")
        src.append(f"  let lb = (base >> {W(lg_k)}) * {W(n_k)};\n  let p0 = base & ((1u << {W(lg_k)}) - 1u);\n")
        m = 1 << r
        for S in range(1, m):
            low = (S & -S).bit_length() - 1
            src.append(f"  let p{S} = p{S & (S - 1)} ^ {W(m_k + low)};\n")
        for S in range(m):
            src.append(f"  var x{S} = {ONES};\n" + "".join(f"  var k{S}_{k} = {ONES};\n" for k in range(kw))
                       + f"  if (p{S} < {W(n_k)}) {{\n    x{S} = idx[lb + p{S}];\n"
                       + "".join(f"    k{S}_{k} = keys[(lb + p{S}) * {kw}u + {k}u];\n" for k in range(kw))
                       + "  }\n")
        vals = lambda S: [f"k{S}_{k}" for k in range(kw)] + [f"x{S}"]
        for s in range(r):
            for S in range(m):
                if S & (1 << s):
                    continue
                T = S | (1 << s)
                # after a mirrored first stage, the later stages' lower position is the one without it
                lo, hi = (T, S) if flip and s and S & 1 else (S, T)
                src.append(f"  if ({less(vals(hi), vals(lo))}) {{\n"
                           + "".join(f"    let t{k} = {a}; {a} = {b}; {b} = t{k};\n"
                                     for k, (a, b) in enumerate(zip(vals(lo), vals(hi))))
                           + "  }\n")
        for S in range(m):
            src.append(f"  if (p{S} < {W(n_k)}) {{\n    idx[lb + p{S}] = x{S};\n"
                       + "".join(f"    keys[(lb + p{S}) * {kw}u + {k}u] = k{S}_{k};\n" for k in range(kw))
                       + "  }\n")
        src.append("}\n")
        return "".join(src)

    pipe = client.pipeline(("sort_global", kw, r, flip), source, 2, lay.nbytes)
    count = (lines << lg) >> r
    grid = groups(count, WG)
    words = [count, grid[0], 0, 0, n, lg] + [mk for mk, _ in stages] + [t for _, t in stages]
    client.dispatch(pipe, pack_words(words), _binds(client, keys, idx), grid)


# --- sort and argsort -----------------------------------------------------------------------------

def _moved(t: Tensor, axis: int) -> Tensor:
    """A view of ``t`` with ``axis`` last."""
    order = [d for d in range(len(t._shape)) if d != axis] + [axis]
    return Tensor(t._buf, t._dtype, tuple(t._shape[d] for d in order), tuple(t._strides[d] for d in order),
                  t._offset, t._dev)


def _order_view(idx: Tensor, shape: tuple[int, ...], axis: int) -> Tensor:
    """The positions of the sorted lines (laid out with ``axis`` last) as a view shaped like the array."""
    cs = iter(contiguous_strides(tuple(s for d, s in enumerate(shape) if d != axis)))
    strides = tuple(1 if d == axis else next(cs) * shape[axis] for d in range(len(shape)))
    return Tensor(idx._buf, idx._dtype, shape, strides, 0, idx._dev)


def _sort_order(client, x: Tensor, p: dict) -> Tensor:
    axis = p["axis"]
    _, idx = sorted_keys(client, _moved(x, axis), x._shape[axis], descending=p["descending"])
    return _order_view(idx, x._shape, axis)


def _sort(client, ins, outs, p):
    x, o = ins[0], outs[0]
    order = _sort_order(client, x, p)
    if x._buf is o._buf:  # the gather reads x while writing o
        c = _temp(client, x._shape, x._dtype)
        _copy(client, (x,), (c,), {})
        x = c
    _take_along_axis(client, (x, order), (o,), {"axis": p["axis"]})


def _argsort(client, ins, outs, p):
    _copy(client, (_sort_order(client, ins[0], p),), outs, {})


# --- searchsorted and isin ------------------------------------------------------------------------

def _searchsorted(client, ins, outs, p):
    x1, x2, sorter = ins
    o = outs[0]
    cw = COMPUTE[wt(dt._PROMOTION[x1._dtype, x2._dtype])]
    w1 = wt(x1._dtype)
    raw = [(x1, False)] + ([(sorter, False)] if sorter is not None else [])

    def body(g: Gen) -> str:
        lines, target = key(cw, cast(g.val(0), g.wt_in(0), cw), "kv")
        n = g.raw_size(0, 0)
        at = "i32(mid)"
        if sorter is not None:
            sw = wt(sorter._dtype)
            at = _clip_index(g.raw_load(1, f"{g.raw_offset(1)} + i32(mid) * {g.raw_stride(1, 0)}"), sw, n)
        y = cast(g.raw_load(0, f"{g.raw_offset(0)} + {at} * {g.raw_stride(0, 0)}"), w1, cw)
        kl, kn = key(cw, y, "ky")
        load = kl + "".join(f"    let sk{k} = {w};\n" for k, w in enumerate(kn))
        return (lines + lower_bound(f"u32({n})", load, target, p["side"] == "left")
                + g.store(0, cast("lo", U32, wt(o._dtype))))

    run_map(client, "searchsorted", (p["side"], sorter is not None, cw.dtype), [o], [x2], body,
            coords=True, raw=raw)


def _isin(client, ins, outs, p):
    x1, x2 = ins
    o = outs[0]
    m = math.prod(x2._shape)
    if m == 0:
        _fill(client, (), (o,), {"value": np.bool_(p["invert"])})
        return
    cw = COMPUTE[wt(dt._PROMOTION[x1._dtype, x2._dtype])]
    kw = key_words(cw)
    keys, _ = sorted_keys(client, x2, m, cw)

    def body(g: Gen) -> str:
        lines, target = key(cw, cast(g.val(0), g.wt_in(0), cw), "kv")
        load = "".join(f"    let sk{k} = {g.raw_load(0, f'mid * {kw}u + {k}u')};\n" for k in range(kw))
        found = " && ".join(f"{g.raw_load(0, f'lo * {kw}u + {k}u')} == {t}" for k, t in enumerate(target))
        return (lines + lower_bound(g.param(0), load, target, True)
                + f"  var found = false;\n  if (lo < {g.param(0)}) {{ found = {found}; }}\n"
                + g.store(0, f"found != {'true' if p['invert'] else 'false'}"))

    run_map(client, "isin", (p["invert"], cw.dtype), [o], [x1], body, params=[(U32, m)], coords=True,
            raw=[(keys, False)])


# --- unique ---------------------------------------------------------------------------------------

def _unique_sort(client, ins, outs, p):
    x = ins[0]
    perm, starts, count = outs
    n = math.prod(x._shape)
    w = COMPUTE[wt(x._dtype)]
    kw = key_words(w)
    keys, idx = sorted_keys(client, x, n)

    def body(g: Gen) -> str:
        i = g.coord(0)
        at = lambda e, k: g.raw_load(0, f"{e} * {kw}u + {k}u")
        differs = " || ".join(f"{at(i, k)} != {at('pr', k)}" for k in range(kw))
        # each NaN starts a run of its own: NaN != NaN
        return (f"  let pr = max({i}, 1u) - 1u;\n"
                + g.store(0, cast(g.raw_load(1, i), U32, wt(perm._dtype)))
                + g.store(1, f"{i} == 0u || {differs} || {nan_key(w, at(i, 0))}"))

    run_map(client, "unique_starts", (w.dtype,), [perm, starts], [], body, coords=True,
            raw=[(keys, False), (idx, False)])
    reduce(client, "count_nonzero", starts, (0,), count)


def _unique_gather(client, ins, outs, p):
    x, perm, starts = ins
    values, *extras = outs
    extra = dict(zip(p["want"], extras))
    k = values._shape[0]
    n = starts._shape[0]
    # the positions of the run starts, ascending: the first k of a stable sort with true first
    _, firsts = sorted_keys(client, starts, n, descending=True)
    pw = wt(perm._dtype)
    nd = len(x._shape)
    gathered = [values] + [extra[name] for name in ("indices", "counts") if name in extra]

    def body(g: Gen) -> str:
        r = g.coord(0)
        f = cast(g.raw_load(1, g.raw_load(2, r)), pw, U32)
        src = [f"  let f = {f};\n  var fq = f;\n  var at = {g.raw_offset(0)};\n"]
        for d in range(nd - 1, -1, -1):  # x's element at flat position f
            src.append(f"  at = at + i32(fq % u32({g.raw_size(0, d)})) * {g.raw_stride(0, d)};\n"
                       f"  fq = fq / u32({g.raw_size(0, d)});\n")
        src.append(g.store(0, g.raw_load(0, "at")))
        j = 1
        if "indices" in extra:
            src.append(g.store(j, cast("f", U32, wt(extra["indices"]._dtype))))
            j += 1
        if "counts" in extra:
            end = f"select({g.param(0)}, {g.raw_load(2, f'{r} + 1u')}, {r} + 1u < {g.param(1)})"
            src.append(g.store(j, cast(f"{end} - {g.raw_load(2, r)}", U32, wt(extra["counts"]._dtype))))
        return "".join(src)

    run_map(client, "unique_gather", (nd, tuple(extra)), gathered, [], body, params=[(U32, n), (U32, k)],
            coords=True, raw=[(x, False), (perm, False), (firsts, False)])
    if "inverse_indices" in extra:
        inv = extra["inverse_indices"]
        flat = Tensor(inv._buf, inv._dtype, (n,), (1,), inv._offset, inv._dev)

        def scatter(g: Gen) -> str:
            # the run of sorted position i: the last run start at or before it
            load = f"    let sk0 = {g.raw_load(1, 'mid')};\n"
            return (lower_bound(g.param(0), load, [g.coord(0)], False)
                    + g.raw_store(0, cast(g.val(0), pw, U32), cast("lo - 1u", U32, wt(inv._dtype))))

        run_map(client, "unique_inverse", None, [], [perm], scatter, params=[(U32, k)], coords=True,
                raw=[(flat, True), (firsts, False)], shape=(n,))


def kernels() -> dict:
    return {"sort": _sort, "argsort": _argsort, "searchsorted": _searchsorted, "isin": _isin,
            "unique_sort": _unique_sort, "unique_gather": _unique_gather}
