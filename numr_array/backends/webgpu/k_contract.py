"""Contractions (matmul, tensordot, vecdot) and cross products.

A contraction is a sum over a contracted index set of x1[...] * x2[...]: each result axis has a stride in
x1 and one in x2 (zero where it is not that operand's: a free axis of the other operand, or a broadcast
batch axis), and each contracted axis has a stride in both.

matmul, and tensordot where its contracted axes merge into one, are batched matrix products
o[b, i, j] = sum_k x1[b, i, k] * x2[b, k, j] over any strides (transposed operands are read through their
strides, never copied).

Products with more than one row and column use a tiled kernel: a workgroup of 16 x 16 invocations computes
a (16 R) x (16 R) tile of o, each invocation an R x R block (R = 8 for large products of 32-bit types,
else 4) in registers. The operands' tiles pass through workgroup memory, BK values of k at a time; the
next tiles are read from memory while the current ones are multiplied. float32 operands contiguous along k
(x1) and along j (x2), at offsets and strides that are multiples of 4, are read as vec4 loads. Where the
tiles are too few to occupy the device and k is long (thin products such as X.T @ Y of tall X, Y), k is
split into parts: each part's tiles write a partial product and a reduction sums the parts. Products of
at most 1024 outputs with k of 4096 or more (k-means' ``onehot.T @ X``) are ``_thin_gemm``'s, without
the tiles' padding.

A matrix times a vector (either side, and vecdot) is ``rowdot``: o[b, i] = sum_k a[b, i, k] * v[b, i, k],
with 256 invocations per workgroup laid out along k where the operands are contiguous along k (X @ w)
and along the rows where they are contiguous along the rows (X.T @ v); few rows and a long k are split
into parts summed by a second launch, as above. A tall, thin C-contiguous matrix (or its transpose) times a
dense vector is ``_matvec``'s pass over its rows instead.

Every dtype uses these kernels: integers accumulate in their compute type and wrap as NumPy's, bool as
counts (any product true), complex through the complex product; floats accumulate with fused
multiply-adds (as BLAS does), so sums may differ from NumPy's in the last bits. tensordots whose
contracted axes do not merge use the generic kernel: one invocation per result element walking the
contraction. Operands are bound whole: MemoryError where one exceeds the adapter's largest storage
binding.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ._wgsl_helpers import WgslHelpers
from ._map_template import MapCodegen, run_map
from ._shader import Layout, MAX_GROUPS, bindings, butterfly, pack_words
from ._types import COMPUTE, F32, F64, WgslType, WGSL_TYPES, cast, lit, load_fn, storage_decl, store_fn, wt
from ._views import bind_whole, collapse, overlap
from .k_reduce import _i32, _temp, reduce
from . import _matvec, _thin_gemm

I32 = WGSL_TYPES[dt.int32]
U32 = WGSL_TYPES[dt.uint32]
_M32 = 0xFFFFFFFF
PAD = 4  # extra elements per k-row of x1's tile in workgroup memory: its transposed stores avoid bank conflicts


CHUNK = 32768  # terms per invocation: lavapipe silently ends an invocation's loops after 65535 iterations
#: whether a product of too few 128 x 128 tiles takes 8 x 8 blocks with k split into parts (else 4 x 4
#: blocks, more tiles); benchmarks/webgpu_programs.py times the MLP's X.T @ dH both ways on the device
SPLIT_LARGE_BLOCKS = True


def contract(client, x1: Tensor, x2: Tensor, o: Tensor, out_strides: list[tuple[int, int]],
             red: list[tuple[int, int, int]], conj: bool = False) -> None:
    """o[c] = sum over r of x1[..] * x2[..]: ``out_strides`` (stride in x1, stride in x2) per axis of o,
    ``red`` (size, stride in x1, stride in x2) per contracted axis. More than CHUNK terms are summed in
    chunks of CHUNK, one launch each into a temporary in the compute dtype, then reduced into o."""
    c = COMPUTE[wt(o._dtype)]
    total = math.prod(r[0] for r in red)
    if total <= CHUNK:
        _contract_range(client, x1, x2, o, out_strides, red, conj, 0, total)
        return
    n = -(-total // CHUNK)
    part = _temp(client, (n,) + o._shape, c.dtype)
    for i in range(n):
        view = Tensor(part._buf, c.dtype, o._shape, part._strides[1:], i * part._strides[0], o._dev)
        _contract_range(client, x1, x2, view, out_strides, red, conj, i * CHUNK, min(total, (i + 1) * CHUNK))
    reduce(client, "any" if c.family == "b" else "sum", part, (0,), o, acc_dtype=c.dtype)


def _contract_range(client, x1: Tensor, x2: Tensor, o: Tensor, out_strides: list[tuple[int, int]],
                    red: list[tuple[int, int, int]], conj: bool, start: int, stop: int) -> None:
    """o[c] = the sum of the terms ``start`` to ``stop`` (row-major over ``red``) of ``contract``."""
    c = COMPUTE[wt(o._dtype)]
    w1, w2, ow = wt(x1._dtype), wt(x2._dtype), wt(o._dtype)
    nd, nr = len(o._shape), len(red)
    params = [(I32, s) for pair in out_strides for s in pair]
    params += [(I32, v) for r in red for v in r]
    params += [(I32, start), (I32, stop)]

    def body(g: MapCodegen) -> str:
        lib = g.lib
        b1 = " + ".join([g.raw_offset(0)] + [f"i32({g.coord(d)}) * {g.param(2 * d)}" for d in range(nd)])
        b2 = " + ".join([g.raw_offset(1)] + [f"i32({g.coord(d)}) * {g.param(2 * d + 1)}" for d in range(nd)])
        k0 = 2 * nd
        lines = [f"  let b1 = {b1};\n  let b2 = {b2};\n  var acc = {lit(c, 0)};\n",
                 f"  for (var r = {g.param(k0 + 3 * nr)}; r < {g.param(k0 + 3 * nr + 1)}; r = r + 1) {{\n",
                 "    var q = r;\n    var o1 = b1;\n    var o2 = b2;\n"]
        for j in range(nr - 1, -1, -1):
            size, s1, s2 = (g.param(k0 + 3 * j + t) for t in range(3))
            lines.append(f"    {{ let i = q % {size}; q = q / {size}; o1 = o1 + i * {s1}; o2 = o2 + i * {s2}; }}\n")
        a = cast(g.raw_load(0, "o1"), w1, c)
        b = cast(g.raw_load(1, "o2"), w2, c)
        if c.family == "c":
            if conj:
                a = f"{c.ct}(({a}).x, -({a}).y)"
            lines.append(f"    acc = acc + {lib.fn('cmul', c)}({a}, {b});\n")
        elif c.family == "b":
            lines.append(f"    acc = acc || ({a} && {b});\n")
        else:
            lines.append(f"    acc = acc + {a} * {b};\n")
        lines.append("  }\n")
        return "".join(lines) + g.store(0, cast("acc", c, ow))

    run_map(client, "contract", (nd, nr, conj), [o], [], body, params=params, coords=True,
            raw=[(x1, False), (x2, False)])


def gemm(client, x1: Tensor, x2: Tensor, o: Tensor, batch: list[tuple[int, int, int, int]],
         n: tuple[int, int, int], m: tuple[int, int, int], k: tuple[int, int, int]) -> None:
    """o[b, i, j] = sum over r of x1[b, i, r] * x2[b, r, j], all in elements from each tensor's offset:
    ``batch`` (size, stride in x1, in x2, in o) per batch axis, ``n`` (rows, stride in x1, in o), ``m``
    (columns, stride in x2, in o), ``k`` (length, stride in x1, in x2)."""
    N, M, K = n[0], m[0], k[0]
    if M == 1:  # a matrix (or vector) times a vector: rows of x1 dotted with x2's column
        rowdot(client, x1, x2, o, batch, (N, n[1], 0, n[2]), (K, k[1], k[2]))
        return
    if N == 1:  # a row times a matrix: x2's columns dotted with x1's row
        rowdot(client, x2, x1, o, [(b[0], b[2], b[1], b[3]) for b in batch], (M, m[1], 0, m[2]), (K, k[2], k[1]))
        return
    if _thin_gemm.takes(batch, n, m, k, (x1._dtype, x2._dtype, o._dtype)):  # few outputs, a long k
        parts = _thin_gemm.partial_products(client, x1, x2, n, m, k)
        _sum_parts(client, parts, o, (N, M), [], (n[2], m[2]), [], _compute_wt(o._dtype))
        return
    cpu_adapter = _cpu_adapter(client)
    if cpu_adapter and (N < 16 or M < 16):
        # a software adapter computes every padded row and column of a tile: a thin product there is
        # cheaper one invocation per result (chunked over k)
        out_strides = [(b[1], b[2]) for b in batch] + [(n[1], 0), (0, m[1])]
        tmp = Tensor(o._buf, o._dtype, tuple(b[0] for b in batch) + (N, M), tuple(b[3] for b in batch) + (n[2], m[2]),
                     o._offset, o._dev)
        contract(client, x1, x2, tmp, out_strides, [k] if K else [(0, 0, 0)])
        return
    c = _compute_wt(o._dtype)
    nbatch = math.prod(b[0] for b in batch)
    # 8 x 8 blocks where there are enough 128 x 128 tiles, or tiles times parts of a k long enough to split
    # into parts of 1024 or more (below), to fill a GPU: twice the multiply-adds per value loaded of 4 x 4
    # blocks (the MLP's X.T @ dH, 1024 x 8192 x 1024, is 64 tiles in 4 parts). A CPU adapter has few cores
    # and gains most from them.
    tiles8 = nbatch * -(-N // 128) * -(-M // 128)
    parts8 = max(1, min(-(-_split_groups(cpu_adapter) // tiles8), K // 1024)) if SPLIT_LARGE_BLOCKS else 1
    R = 8 if c.ct in ("f32", "i32", "u32") and N >= 128 and M >= 128 and \
        (cpu_adapter or tiles8 * parts8 >= 128) else 4
    BM = 16 * R
    BK = 1024 // BM
    limit = int(client.wdevice.limits["max-compute-workgroup-storage-size"])
    while BK > 4 and BK * (2 * BM + PAD) * c.dtype.itemsize > limit:
        BK //= 2
    TI, TJ = -(-N // BM), -(-M // BM)
    tiles = nbatch * TI * TJ
    # few tiles and a long k (a thin product: X.T @ Y of tall X and Y): k is split into P parts, each
    # summed by its own tiles into a partial product, and the parts summed by a reduction; a software
    # adapter also needs parts short enough for an invocation's loop limit
    P = max(1, min(-(-_split_groups(cpu_adapter) // tiles), K // 256))
    if cpu_adapter:
        P = max(P, -(-K // CHUNK))
    KP = -(-K // P)
    KP = -(-KP // BK) * BK  # parts start at multiples of BK: vec4 loads stay aligned
    P = max(1, -(-K // KP)) if K else 1
    dest = o
    bshape, (bs1, bs2, bso) = collapse([b[0] for b in batch], [[b[1] for b in batch], [b[2] for b in batch],
                                                                 [b[3] for b in batch]])
    no, mo, po = n[2], m[2], 0
    if P > 1:  # partial products, contiguous as (P, batch..., N, M) in the compute dtype
        dest = _temp(client, (P,) + tuple(bshape) + (N, M), c.dtype)
        no, mo, po = M, 1, nbatch * N * M
        bso = tuple(s * N * M for s in contiguous_strides(tuple(bshape)))
    (b1, e1), (b2, e2), (bo, eo) = (bind_whole(client, t) for t in (x1, x2, dest))
    # vec4 loads: float32 contiguous along the loaded direction, every vec4 in or out of range as a whole
    fours = lambda *vs: all(v % 4 == 0 for v in vs)
    vec1 = (x1._dtype == o._dtype == dt.float32 and k[1] == 1 and fours(K, e1, n[1] if N > 1 else 0, *bs1))
    vec2 = (x2._dtype == o._dtype == dt.float32 and m[1] == 1 and fours(M, e2, k[2] if K > 1 else 0, *bs2))
    # scalar loads run along the operand's contiguous direction where it has one
    m_major1 = not vec1 and n[1] == 1 and k[1] != 1
    k_major2 = not vec2 and k[2] == 1 and m[1] != 1
    key = ("gemm", x1._dtype, x2._dtype, dest._dtype, R, BK, len(bshape), vec1, vec2, m_major1, k_major2)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = _build_gemm(client, key, wt(x1._dtype), wt(x2._dtype), wt(dest._dtype), c, R, BK, len(bshape),
                           vec1, vec2, m_major1, k_major2)
    total = tiles * P
    gx = min(total, MAX_GROUPS)
    words = [total, gx, 0, 0, N, M, K, TJ, TI, e1, e2, eo] + [s & _M32 for s in (n[1], k[1], k[2], m[1], no, mo)]
    words += [P, KP, po]
    words += bshape
    for st in (bs1, bs2, bso):
        words += [s & _M32 for s in st]
    client.dispatch(pipe, pack_words(words), bo + b1 + b2, (gx, -(-total // gx), 1))
    if P > 1:
        _sum_parts(client, dest, o, tuple(bshape) + (N, M), [b[3] for b in batch], (n[2], m[2]),
                   [b[0] for b in batch], c)


def _sum_parts(client, partial: Tensor, o: Tensor, pshape: tuple, ostr_batch: list, ostr_tail: tuple,
               batch_sizes: list, c: WgslType) -> None:
    """o = the sum over axis 0 of ``partial`` (P, *pshape), contiguous; pshape is o's collapsed batch
    then its own trailing axes, so o is viewed through its uncollapsed batch axes."""
    P = partial._shape[0]
    tail = pshape[len(pshape) - len(ostr_tail):]
    shape = tuple(batch_sizes) + tail
    view = Tensor(partial._buf, partial._dtype, (P,) + shape, contiguous_strides((P,) + shape), 0, partial._dev)
    ov = Tensor(o._buf, o._dtype, shape, tuple(ostr_batch) + tuple(ostr_tail), o._offset, o._dev)
    reduce(client, "sum", view, (0,), ov, acc_dtype=c.dtype)


def _cpu_adapter(client) -> bool:
    return client.adapter.info.get("adapter_type") == "CPU"


#: values of k a lane sums before the lanes of a row are summed in workgroup memory (X @ w of a 200k x 64
#: float32 X on an H200: 57 µs with 4, 42 with 8, 35 with 16, 48 with 32)
K_PER_LANE = 16
#: a matrix-vector product's workgroups, split over k, beyond ``_split_groups``: a GPU's SMs each take about
#: eight of 256 invocations (X.T @ v of a 200k x 64 float32 X: 256 parts left an H200 at a quarter of its
#: occupancy)
_ROWDOT_SPLIT = 4


def _split_groups(cpu: bool) -> int:
    """Workgroups a thin product or a matrix-vector product is split into (over k) when its outputs give
    fewer: enough to occupy every multiprocessor of a large GPU several times over, or the few cores of a
    software adapter."""
    return 32 if cpu else 256


def rowdot(client, a: Tensor, v: Tensor, o: Tensor, batch: list[tuple[int, int, int, int]],
           rows: tuple[int, int, int, int], k: tuple[int, int, int], conj: bool = False) -> None:
    """o[b, i] = sum over r of a[b, i, r] * v[b, i, r] (a conjugated where ``conj``), in elements from each
    tensor's offset: ``batch`` (size, stride in a, in v, in o) per batch axis, ``rows`` (count, stride in
    a, in v, in o), ``k`` (length, stride in a, in v). A matrix-vector product is v with row stride 0.

    A workgroup of 256 invocations covers TI rows and TK lanes along k (TI * TK = 256), laid out so that
    neighbouring invocations read neighbouring elements: along k where the operands are contiguous along
    k (X @ w), else along the rows (X.T @ v). Each lane sums its strided share of k, and the lanes of a row
    are summed in workgroup memory. Where the rows give few workgroups, k is split into P parts that
    write partial sums, summed by a second launch (a reduction)."""
    thin = None if conj else _matvec.form(client, a, v, o, batch, rows, k)
    if thin is not None:  # a tall, thin X times a vector: one pass over its rows
        _matvec.run(client, *thin, a, v, o, rows[3], _cpu_adapter(client))
        return
    N, sai, svi, soi = rows
    K, sak, svk = k
    c = _compute_wt(o._dtype)
    # float32 on an adapter that flushes float32 subnormals (NVIDIA's): products and sums in float64 from
    # the operands' bits, the result narrowed to float32 bits, so that dot products of tiny vectors (a
    # converged solver's residual, about 1e-39) stay subnormal as NumPy's instead of becoming 0
    wide = a._dtype == v._dtype == o._dtype and _matvec.compute_type(client, o._dtype)[1]
    if wide:
        c = F64
    nbatch = math.prod(b[0] for b in batch)
    cpu = _cpu_adapter(client)
    # which direction the invocations of a workgroup run along: each operand that changes along the
    # rows votes for the direction it is contiguous in
    votes = [abs(sk) <= abs(si) for si, sk in ((sai, sak), (svi, svk)) if si and N > 1]
    kfast = not votes or any(votes)
    if kfast:
        # about K_PER_LANE values of k per lane; on a software adapter one lane per row where rows are many,
        # since each workgroup barrier of the lanes' sum costs it a pass over all 256 invocations
        TK = 1 if cpu and N >= 1024 else min(256, 1 << max(0, (-(-K // K_PER_LANE) - 1).bit_length()))
        if not cpu:
            # no more rows per workgroup than there are rows: a dot product of two vectors takes all 256
            # lanes (cg on n = 2048 under the jit on an H200: 1.67 against 1.91 ms with half of them)
            TK = max(TK, 256 >> (max(N, 1) - 1).bit_length())
        TI = 256 // TK
    else:
        TI = min(256, 1 << max(0, (N - 1).bit_length()))
        TK = 256 // TI
    NI = -(-N // TI)
    groups = nbatch * NI
    iters = -(-K // TK)
    P = max(1, min(-(-_split_groups(cpu) * (1 if cpu else _ROWDOT_SPLIT) // groups), iters // 64))
    if cpu:
        P = max(P, -(-iters // CHUNK))
    KP = -(-K // P) if K else 0
    P = -(-K // KP) if K else 1
    bshape, (ba, bv, bo_) = collapse([b[0] for b in batch], [[b[1] for b in batch], [b[2] for b in batch],
                                                              [b[3] for b in batch]])
    dest, so, sop = o, soi, 0
    if P > 1:  # partial sums, contiguous as (P, batch..., N) in the compute dtype
        dest = _temp(client, (P,) + tuple(bshape) + (N,), c.dtype)
        so, sop = 1, nbatch * N
        bo_ = tuple(s * N for s in contiguous_strides(tuple(bshape)))
    (b1, e1), (b2, e2), (b3, e3) = (bind_whole(client, t) for t in (dest, a, v))
    sg = client.subgroup_rows
    key = ("rowdot", a._dtype, v._dtype, dest._dtype, c.dtype, conj, kfast, TK, len(bshape), wide, sg)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = _build_rowdot(client, key, wt(a._dtype), wt(v._dtype), wt(dest._dtype), c, conj, kfast, TK,
                             len(bshape), wide, sg)
    total = groups * P
    gx = min(total, MAX_GROUPS)
    words = [total, gx, 0, 0, N, K, KP, P, NI, e1, e2, e3]
    words += [s & _M32 for s in (so, sop, sai, sak, svi, svk)]
    words += bshape
    for st in (ba, bv, bo_):
        words += [s & _M32 for s in st]
    record = None
    if total == 1 and P == 1 and client.capturing:  # a phase _fuse_small may run with its neighbours
        record = RowdotRecord((wt(a._dtype), wt(v._dtype), wt(dest._dtype), c, conj, kfast, TK, len(bshape), wide,
                               sg),
                              words, b1 + b2 + b3, (wt(dest._dtype), wt(a._dtype), wt(v._dtype)))
    client.dispatch(pipe, pack_words(words), b1 + b2 + b3, (gx, -(-total // gx), 1), record)
    if P > 1:  # (wide: the parts summed in float64, the reduction narrowing the sum to float32 bits)
        _sum_parts(client, dest, o, tuple(bshape) + (N,), [b[3] for b in batch], (soi,), [b[0] for b in batch], c)


class RowdotRecord(NamedTuple):
    """A captured one-workgroup, one-part rowdot (a dot product of short vectors), as the fusion pass
    (_fuse_small) reads it to run it as a phase of a one-workgroup program. Holds no tensor."""
    args: tuple     # rowdot_text's arguments after the layout and helpers: the kernel's variant
    words: list     # the dispatch's uniform words, frame words first
    binds: tuple    # (WBuf, byte offset, byte size) of o, a and v
    bound: tuple    # their WgslTypes

    @property
    def ct(self) -> str:
        """The compute type of the phase's workgroup array."""
        return self.args[3].ct

    def text(self, lay: Layout, lib: WgslHelpers, slots: list[int], sh: str) -> str:
        """The phase's statements, o, a and v at bindings ``slots``."""
        return rowdot_text(lay, lib, *self.args, b=tuple(slots), sh=sh, one=True)


def rowdot_text(lay: Layout, lib: WgslHelpers, aw: WgslType, vw: WgslType, ow: WgslType, c: WgslType, conj: bool,
                kfast: bool, TK: int, nbd: int, wide: bool, sg: int = 0, b: tuple[int, int, int] = (1, 2, 3),
                sh: str = "sh", one: bool = False) -> str:
    """The statements of rowdot's entry point (its uniform words allocated in ``lay``, in the order of the
    dispatch's words after the frame's): ``b`` the bindings of o, a and v, ``sh`` the name of the
    workgroup array of 256 compute values, ``one``: run as the only workgroup of a one-part launch (a phase
    of _fuse_small's programs, where the frame's words are not the rowdot's). A row's lanes are summed by a
    fixed tree (lane tk adds lane tk + s, s = TK/2, ..., 1): its levels from ``sg`` lanes down (the client's
    ``subgroup_rows``, where a row's lanes are consecutive invocations) by subgroup shuffles, the others in
    workgroup memory, so the bits do not depend on sg."""
    W = Layout.word
    (N_k, K_k, KP_k, P_k, NI_k, eo_k, ea_k, ev_k, so_k, sop_k, sai_k, sak_k, svi_k, svk_k) = \
        (lay.alloc(1) for _ in range(14))
    bs, bas, bvs, bos = (lay.alloc(nbd) for _ in range(4))
    bo, ba, bv = b
    TI = 256 // TK
    zero = lit(c, 0)
    if wide:  # float32 operands from their bits (exact, subnormals kept)
        widen = lib.fn("widen", F32)
        a, v = f"{widen}(ld{ba}(u32(pa)))", f"{widen}(ld{bv}(u32(pv)))"
    else:
        a, v = cast(f"ld{ba}(u32(pa))", aw, c), cast(f"ld{bv}(u32(pv))", vw, c)
    if conj and c.family == "c":
        a = f"{c.ct}(({a}).x, -({a}).y)"
    if c.family == "c":
        term = f"{lib.fn('cmul', c)}({a}, {v})"
    elif c.family == "f":
        term = None  # fma below
    else:
        term = f"{a} * {v}"
    add = (lambda acc: f"{acc} = fma({a}, {v}, {acc});") if term is None else (lambda acc: f"{acc} = {acc} + {term};")
    lane = ("  let tk = li % {TK}u;\n  let ti = li / {TK}u;\n" if kfast else
            "  let ti = li % {TI}u;\n  let tk = li / {TI}u;\n").format(TK=TK, TI=TI)
    step = 1 if kfast else TI  # distance in workgroup memory between lanes tk and tk + 1 of a row
    result = f"{lib.fn('narrow', F32)}(t)" if wide and ow.ct == "f32" else cast("t", c, ow)
    # every invocation reaches the barriers; the ones past the end do no work
    body = ["  let g = 0u;\n  let alive = true;\n" if one else
            f"  let g = wid.y * {W(1)} + wid.x;\n  let alive = g < {W(0)};\n",
            f"  let gi = g % {W(NI_k)};\n  let rest = g / {W(NI_k)};\n  let part = rest % {W(P_k)};\n"
            f"  var q = rest / {W(P_k)};\n" + lane +
            f"  let i = gi * {TI}u + ti;\n"
            f"  var pa0 = {_i32(ea_k)};\n  var pv0 = {_i32(ev_k)};\n  var po = {_i32(eo_k)};\n"]
    for d in range(nbd - 1, -1, -1):
        body.append(f"  {{ let c = i32(q % {W(bs + d)}); q = q / {W(bs + d)}; pa0 = pa0 + c * {_i32(bas + d)};"
                    f" pv0 = pv0 + c * {_i32(bvs + d)}; po = po + c * {_i32(bos + d)}; }}\n")
    body.append(f"  let kb = part * {W(KP_k)};\n  let ke = min(kb + {W(KP_k)}, {W(K_k)});\n"
                f"  let sak = {_i32(sak_k)};\n  let svk = {_i32(svk_k)};\n"
                f"  var acc = {zero};\n  var acc2 = {zero};\n"
                f"  if (alive && i < {W(N_k)}) {{\n"
                f"    let ra = pa0 + i32(i) * {_i32(sai_k)};\n    let rv = pv0 + i32(i) * {_i32(svi_k)};\n"
                f"    var r = kb + tk;\n"
                # two independent sums, two loads of each operand in flight per iteration
                f"    loop {{\n      if (r + {TK}u >= ke) {{ break; }}\n"
                f"      {{ let pa = ra + i32(r) * sak; let pv = rv + i32(r) * svk; {add('acc')} }}\n"
                f"      {{ let pa = ra + i32(r + {TK}u) * sak; let pv = rv + i32(r + {TK}u) * svk; {add('acc2')} }}\n"
                f"      r = r + {2 * TK}u;\n    }}\n"
                f"    if (r < ke) {{ let pa = ra + i32(r) * sak; let pv = rv + i32(r) * svk; {add('acc')} }}\n"
                "    acc = acc + acc2;\n  }\n")
    low = min(sg, TK) if kfast and sg > 1 else 1  # the tree's levels below this by shuffles
    if TK > low:
        body.append(f"  {sh}[li] = acc;\n  workgroupBarrier();\n"
                    f"  for (var s = {TK // 2}u; s >= {low}u; s = s >> 1u) {{\n"
                    f"    if (tk < s) {{ {sh}[li] = {sh}[li] + {sh}[li + s * {step}u]; }}\n"
                    "    workgroupBarrier();\n  }\n"
                    f"  var t = {sh}[li];\n")
    else:
        body.append("  var t = acc;\n")
    body.append(butterfly("t", low, "  "))  # (every lane is here: lane 0 ends with the tree's sum)
    body.append(f"  if (alive && tk == 0u && i < {W(N_k)}) {{\n"
                f"    st{bo}(u32(po + i32(i) * {_i32(so_k)} + i32(part) * {_i32(sop_k)}), {result});\n"
                "  }\n")
    return "".join(body)


def _build_rowdot(client, key, aw: WgslType, vw: WgslType, ow: WgslType, c: WgslType, conj: bool, kfast: bool,
                  TK: int, nbd: int, wide: bool, sg: int):
    lay = Layout()
    lib = WgslHelpers(client.has_f64)
    body = rowdot_text(lay, lib, aw, vw, ow, c, conj, kfast, TK, nbd, wide, sg)

    def source() -> str:
        return (lay.block() + bindings([(ow, True, False), (aw, False, False), (vw, False, False)]) + lib.source()
                + f"var<workgroup> sh: array<{c.ct}, 256>;\n@compute @workgroup_size(256)\n"
                "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                + body + "}\n")

    return client.pipeline(key, source, 3, lay.nbytes)


def _apart(client, ins, o: Tensor) -> list[Tensor]:
    """The operands, each copied first where it shares memory with o (an ``out=`` over an input): every
    result element reads whole rows and columns, which other invocations may already have written."""
    res = []
    for t in ins:
        if t._buf is o._buf and overlap(t, o):
            c = _temp(client, t._shape, t._dtype)
            client.launch("copy", (t,), (c,), {})
            t = c
        res.append(t)
    return res


def _compute_wt(o: dt.DType) -> WgslType:
    """What a product accumulates in: o's compute type, bool as a count of true products."""
    return U32 if o == dt.bool_ else COMPUTE[wt(o)]


def _build_gemm(client, key, w1: WgslType, w2: WgslType, ow: WgslType, c: WgslType, R: int, BK: int, nbd: int,
                vec1: bool, vec2: bool, m_major1: bool, k_major2: bool):
    lay = Layout()
    W = Layout.word
    N_k, M_k, K_k, TJ_k, TI_k, e1_k, e2_k, eo_k, sn1_k, sk1_k, sk2_k, sm2_k, sno_k, smo_k = \
        (lay.alloc(1) for _ in range(14))
    P_k, KP_k, po_k = (lay.alloc(1) for _ in range(3))
    bs, b1s, b2s, bos = (lay.alloc(nbd) for _ in range(4))
    lib = WgslHelpers(client.has_f64)
    BM = 16 * R
    AW = BM + PAD  # a k-row of x1's tile in workgroup memory
    E = BM * BK // 256  # elements of each operand's tile that each invocation loads
    ct = c.ct
    real = c.family != "c"  # real types sit in workgroup memory as vec4s, read four at a time
    zero = lit(c, 0)
    src = [lay.block(), storage_decl(ow, "b1", 1, True), store_fn(ow, "st1", "b1")]
    for j, (w, vec) in enumerate(((w1, vec1), (w2, vec2)), start=2):
        if vec:
            src.append(f"@group(0) @binding({j}) var<storage, read_write> b{j}: array<vec4<f32>>;\n"
                       f"fn ld{j}(e: u32) -> vec4<f32> {{ return b{j}[e >> 2u]; }}\n")
        else:
            src += [storage_decl(w, f"b{j}", j, False), load_fn(w, f"ld{j}", f"b{j}")]
    if real:
        src.append(f"var<workgroup> As: array<vec4<{ct}>, {BK * AW // 4}>;\n"
                   f"var<workgroup> Bs: array<vec4<{ct}>, {BK * BM // 4}>;\n")
        put = lambda arr, idx, v: f"{arr}[({idx}) >> 2u][({idx}) & 3u] = {v};"
    else:
        src.append(f"var<workgroup> As: array<{ct}, {BK * AW}>;\nvar<workgroup> Bs: array<{ct}, {BK * BM}>;\n")
        put = lambda arr, idx, v: f"{arr}[{idx}] = {v};"
    body = ["@compute @workgroup_size(256)\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
            f"  let g = wid.y * {W(1)} + wid.x;\n  if (g >= {W(0)}) {{ return; }}\n"
            f"  let N = {W(N_k)};\n  let M = {W(M_k)};\n"
            f"  let tj = g % {W(TJ_k)};\n  let rest = g / {W(TJ_k)};\n  let ti = rest % {W(TI_k)};\n"
            f"  let rest2 = rest / {W(TI_k)};\n  let part = rest2 % {W(P_k)};\n  var q = rest2 / {W(P_k)};\n"
            # this workgroup's part of k: [kb, kb + K)
            f"  let kb = part * {W(KP_k)};\n  let K = min({W(KP_k)}, {W(K_k)} - kb);\n"
            f"  let sk1 = {_i32(sk1_k)};\n  let sk2 = {_i32(sk2_k)};\n"
            f"  var a0 = {_i32(e1_k)} + i32(kb) * sk1;\n  var b0 = {_i32(e2_k)} + i32(kb) * sk2;\n"
            f"  var c0 = {_i32(eo_k)} + i32(part) * {_i32(po_k)};\n"]
    for d in range(nbd - 1, -1, -1):
        body.append(f"  {{ let c = i32(q % {W(bs + d)}); q = q / {W(bs + d)}; a0 = a0 + c * {_i32(b1s + d)};"
                    f" b0 = b0 + c * {_i32(b2s + d)}; c0 = c0 + c * {_i32(bos + d)}; }}\n")
    body.append(f"  let row0 = ti * {BM}u;\n  let col0 = tj * {BM}u;\n  let tx = li % 16u;\n  let ty = li / 16u;\n")
    # which element of each operand's tile each invocation loads: (row or column, k) and its address at k = 0
    loads, stores = [], []
    n1 = E // 4 if vec1 else E
    for e in range(n1):
        idx = f"(li + {256 * e}u)"
        if vec1:
            i, kk = f"({idx} / {BK // 4}u)", f"(({idx} % {BK // 4}u) * 4u)"
        elif m_major1:
            i, kk = f"({idx} % {BM}u)", f"({idx} / {BM}u)"
        else:
            i, kk = f"({idx} / {BK}u)", f"({idx} % {BK}u)"
        body.append(f"  let ai{e} = {i};\n  let ak{e} = {kk};\n  let ar{e} = row0 + ai{e} < N;\n"
                    f"  let ap{e} = a0 + i32(row0 + ai{e}) * {_i32(sn1_k)} + i32(ak{e}) * sk1;\n"
                    f"  var ra{e} = {'vec4<f32>()' if vec1 else zero};\n")
        value = f"ld2(u32(ap{e} + i32(k0) * sk1))"
        loads.append(f"    if (ar{e} && k0 + ak{e} < K) {{ ra{e} = {value if vec1 else cast(value, w1, c)}; }}"
                     f" else {{ ra{e} = {'vec4<f32>()' if vec1 else zero}; }}\n")
        if vec1:  # four values of k: one element of four k-rows of the transposed tile
            stores += [f"    {put('As', f'(ak{e} + {t}u) * {AW}u + ai{e}', f'ra{e}[{t}]')}\n" for t in range(4)]
        else:
            stores.append(f"    {put('As', f'ak{e} * {AW}u + ai{e}', f'ra{e}')}\n")
    n2 = E // 4 if vec2 else E
    for e in range(n2):
        idx = f"(li + {256 * e}u)"
        if vec2:
            j, kk = f"(({idx} % {BM // 4}u) * 4u)", f"({idx} / {BM // 4}u)"
        elif k_major2:
            j, kk = f"({idx} / {BK}u)", f"({idx} % {BK}u)"
        else:
            j, kk = f"({idx} % {BM}u)", f"({idx} / {BM}u)"
        body.append(f"  let bj{e} = {j};\n  let bk{e} = {kk};\n  let bc{e} = col0 + bj{e} < M;\n"
                    f"  let bp{e} = b0 + i32(col0 + bj{e}) * {_i32(sm2_k)} + i32(bk{e}) * sk2;\n"
                    f"  var rb{e} = {'vec4<f32>()' if vec2 else zero};\n")
        value = f"ld3(u32(bp{e} + i32(k0) * sk2))"
        loads.append(f"    if (bc{e} && k0 + bk{e} < K) {{ rb{e} = {value if vec2 else cast(value, w2, c)}; }}"
                     f" else {{ rb{e} = {'vec4<f32>()' if vec2 else zero}; }}\n")
        if vec2:
            stores.append(f"    Bs[(bk{e} * {BM}u + bj{e}) >> 2u] = rb{e};\n")
        else:
            stores.append(f"    {put('Bs', f'bk{e} * {BM}u + bj{e}', f'rb{e}')}\n")
    # the accumulators: per row i of the block, R // 4 vec4s (real) or R values (complex); column j of
    # the block is 64 (j // 4) + 4 tx + j % 4, so that each quarter-warp reads 128 contiguous bytes of Bs
    if real:
        body += [f"  var c{i}_{h} = vec4<{ct}>();\n" for i in range(R) for h in range(R // 4)]
    else:
        body += [f"  var c{i}_{j} = {zero};\n" for i in range(R) for j in range(R)]
    body.append("  let nt = (K + " + f"{BK - 1}u) / {BK}u;\n  var k0 = 0u;\n  {{\n")
    body += loads
    body += stores
    body.append("  }\n  workgroupBarrier();\n  for (var t = 0u; t < nt; t = t + 1u) {\n"
                f"    k0 = k0 + {BK}u;\n    let more = t + 1u < nt;\n    if (more) {{\n")
    body += ["  " + s for s in loads]
    body.append(f"    }}\n    for (var kk = 0u; kk < {BK}u; kk = kk + 1u) {{\n")
    if real:
        body += [f"      let av{h} = As[kk * {AW // 4}u + ty * {R // 4}u + {h}u];\n" for h in range(R // 4)]
        body += [f"      let bv{h} = Bs[kk * {BM // 4}u + {16 * h}u + tx];\n" for h in range(R // 4)]
        for i in range(R):
            a = f"vec4<{ct}>(av{i // 4}[{i % 4}])"
            for h in range(R // 4):
                v = f"c{i}_{h}"
                body.append(f"      {v} = {f'fma({a}, bv{h}, {v})' if c.family == 'f' else f'{v} + {a} * bv{h}'};\n")
    else:
        cmul = lib.fn("cmul", c)
        body += [f"      let av{i} = As[kk * {AW}u + ty * {R}u + {i}u];\n" for i in range(R)]
        body += [f"      let bv{j} = Bs[kk * {BM}u + {64 * (j // 4)}u + tx * 4u + {j % 4}u];\n" for j in range(R)]
        body += [f"      c{i}_{j} = c{i}_{j} + {cmul}(av{i}, bv{j});\n" for i in range(R) for j in range(R)]
    body.append("    }\n    workgroupBarrier();\n    if (more) {\n")
    body += stores
    body.append("    }\n    workgroupBarrier();\n  }\n")
    for i in range(R):
        body.append(f"  let r{i} = row0 + ty * {R}u + {i}u;\n")
    for j in range(R):
        body.append(f"  let s{j} = col0 + {64 * (j // 4)}u + tx * 4u + {j % 4}u;\n")
    for i in range(R):
        for j in range(R):
            v = f"c{i}_{j // 4}[{j % 4}]" if real else f"c{i}_{j}"
            body.append(f"  if (r{i} < N && s{j} < M) {{ st1(u32(c0 + i32(r{i}) * {_i32(sno_k)} + i32(s{j}) * "
                        f"{_i32(smo_k)}), {cast(v, c, ow)}); }}\n")
    body.append("}\n")

    def source() -> str:
        return "".join(src) + lib.source() + "".join(body)

    return client.pipeline(key, source, 3, lay.nbytes)


def _matmul(client, ins, outs, p):
    o = outs[0]
    x1, x2 = _apart(client, ins, o)
    if not math.prod(o._shape):
        return
    s1, s2 = x1._shape, x2._shape
    # x1 as (..., n, k) and x2 as (..., k, m); a 1-D operand has no n (or m) axis in the result
    v1 = len(s1) == 1
    v2 = len(s2) == 1
    K = s1[-1]
    b1 = list(zip(s1[:-2], x1._strides[:-2])) if not v1 else []
    b2 = list(zip(s2[:-2], x2._strides[:-2])) if not v2 else []
    nb = len(o._shape) - (0 if v1 else 1) - (0 if v2 else 1)
    batch = []
    for d in range(nb):  # batch axes, right-aligned against each operand's batch axes (size 1: broadcast)
        e1 = d - (nb - len(b1))
        e2 = d - (nb - len(b2))
        st1 = b1[e1][1] if e1 >= 0 and b1[e1][0] != 1 else 0
        st2 = b2[e2][1] if e2 >= 0 and b2[e2][0] != 1 else 0
        batch.append((o._shape[d], st1, st2, o._strides[d]))
    n = (1, 0, 0) if v1 else (s1[-2], x1._strides[-2], o._strides[nb])
    m = (1, 0, 0) if v2 else (s2[-1], x2._strides[-1], o._strides[-1])
    k = (K, x1._strides[-1], x2._strides[0] if v2 else x2._strides[-2])
    gemm(client, x1, x2, o, batch, n, m, k)


def _tensordot(client, ins, outs, p):
    o = outs[0]
    x1, x2 = _apart(client, ins, o)
    if not math.prod(o._shape):
        return
    a1, a2 = p["axes1"], p["axes2"]
    free1 = [d for d in range(len(x1._shape)) if d not in a1]
    free2 = [d for d in range(len(x2._shape)) if d not in a2]
    ks, (k1, k2) = collapse([x1._shape[i] for i in a1], [[x1._strides[i] for i in a1], [x2._strides[j] for j in a2]])
    if len(ks) == 1:
        # o's axes are x1's free axes then x2's: the last of each is the rows (columns), the others batch axes
        os_ = o._strides
        f1 = [(x1._shape[d], x1._strides[d], 0, os_[i]) for i, d in enumerate(free1)] or [(1, 0, 0, 0)]
        f2 = [(x2._shape[d], 0, x2._strides[d], os_[len(free1) + i]) for i, d in enumerate(free2)] or [(1, 0, 0, 0)]
        gemm(client, x1, x2, o, f1[:-1] + f2[:-1], (f1[-1][0], f1[-1][1], f1[-1][3]),
             (f2[-1][0], f2[-1][2], f2[-1][3]), (ks[0], k1[0], k2[0]))
        return
    strides = [(x1._strides[d], 0) for d in free1] + [(0, x2._strides[d]) for d in free2]
    red = [(x1._shape[i], x1._strides[i], x2._strides[j]) for i, j in zip(a1, a2)]
    contract(client, x1, x2, o, strides, red)


def _vecdot(client, ins, outs, p):
    o = outs[0]
    x1, x2 = _apart(client, ins, o)
    if not math.prod(o._shape):
        return
    k = (x1._shape[-1], x1._strides[-1], x2._strides[-1])
    if not o._shape:  # one dot product
        rowdot(client, x1, x2, o, [], (1, 0, 0, 0), k, conj=True)
        return
    s1, s2, so = x1._strides[:-1], x2._strides[:-1], o._strides
    batch = [(o._shape[d], s1[d], s2[d], so[d]) for d in range(len(o._shape) - 1)]
    rowdot(client, x1, x2, o, batch, (o._shape[-1], s1[-1], s2[-1], so[-1]), k, conj=True)


def _cross(client, ins, outs, p):
    """One map launch per component c of the result: o_c = a_i b_j - a_j b_i, (i, j) = (c + 1, c + 2) mod 3,
    each product rounded on its own as NumPy's."""
    x1, x2 = ins
    o = outs[0]
    ow = wt(o._dtype)
    c = COMPUTE[ow]
    axis = p["axis"] % len(o._shape)

    def part(t: Tensor, i: int) -> Tensor:
        return Tensor(t._buf, t._dtype, t._shape[:axis] + t._shape[axis + 1:], t._strides[:axis] + t._strides[axis + 1:],
                      t._offset + i * t._strides[axis], t._dev)

    def body(g: MapCodegen) -> str:
        a_i, b_j, a_j, b_i = (cast(g.val(k), g.wt_in(k), c) for k in range(4))
        if c.family == "c":
            mul = g.lib.fn("cmul", c)
            return g.store(0, cast(f"{mul}({a_i}, {b_j}) - {mul}({a_j}, {b_i})", c, ow))
        if c.family == "f":  # opq keeps the compiler from fusing a product into the subtraction
            opq = g.lib.fn("opq", c)
            return g.store(0, cast(f"{opq}({a_i} * {b_j}) - {opq}({a_j} * {b_i})", c, ow))
        return g.store(0, cast(f"{a_i} * {b_j} - {a_j} * {b_i}", c, ow))

    for comp in range(3):
        i, j = (comp + 1) % 3, (comp + 2) % 3
        run_map(client, "cross", None, [part(o, comp)], [part(x1, i), part(x2, j), part(x1, j), part(x2, i)], body)


def kernels() -> dict:
    return {"matmul": _matmul, "tensordot": _tensordot, "vecdot": _vecdot, "cross": _cross}
