"""Squared distances between rows, fused: ``sum((A[:, None, :] - B[None, :, :]) ** 2, axis=-1)`` in float32.

_fuse_reduce fuses that reduction with the difference and the square into one dispatch, but its template
computes each difference's address and tests each square for the range where ``x * x`` is not fsquare's
value (``_FAST_SQUARE``): about 14 integer operations an element, which bound k-means' distances (200k x 16
x 32 float32) to 71 µs on an H200. Here, where the run is exactly a subtraction of two operands and the
square of its result, summed in float32 along a contiguous last axis in the thread variant's order, an
invocation computes PER distances of one row of A: the row's values read as vectors of four and kept in
registers, B's rows (all of them, staged in workgroup memory by the workgroup) read as vectors of four:
41.4 µs on the H200 (GPU timestamps; hand-written forms of it took 41.7 at 8 distances an invocation, 49.5 at
16, 66.9 at 4). With the argmin after them (an invocation per row) 33.0 µs, the distances never stored and
the argmin's own dispatch (12.9) gone; with k-means' one-hot map too 38.8, against 10.1 for its dispatch.
Measured and not kept (k-means, the H200): 2 or 4 rows an invocation, each of B's vectors read once for them
(34.3, 49.9 against 33.2); two or four of B's rows interleaved (32.5, 33.4 against 32.9); workgroups of 128
or 64 (34.3, 35.4); two invocations a row, their argmin states combined in workgroup memory (39.1 against
38.8); the one-hot map stored by each invocation for its row (54.4). Neither the exact path's code (39.1
without it) nor the loads of A (38.7 with every row read from 8 cached ones) is what bounds it.

Where the map run after the argmin stores a float32 cast of a bool (k-means' one-hot mask) and the next
reduction is its sum over the rows (k-means' counts per centre, a columns pass and the sum of its partial
sums: 10.0 + 6.8 µs an iteration on the H200), each workgroup counts its rows' ones as it stores them
(``Counts``) into a partial count per centre, and one workgroup sums those (``counts_step``, a phase
_fuse_small may join to the small program after it). The sums are of integers below 2^24 in float32, exact
in any order, so they are eager's values.

The same bits as eager. The test is made on the inputs, not on each difference: where every element of
A's row and of B is 0 or has a magnitude in [2^-40, 2^62), a difference is 0 or at least 2^-63 (the
difference of two such floats is a multiple of the smaller one's last place) and below 2^63, so its square
is a normal float and no sum of them is subnormal or NaN: the hardware's subtraction, multiplication and
addition then give eager's values (no subnormal to flush, no NaN payload). An invocation
whose row or B fails that sums its outputs with the run's own bodies (fsquare), as _fuse_reduce does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ... import _dtypes as dt
from . import _matvec
from ._fuse_reduce import evaluate, salts
from ._fused_bodies import _opaque, bodies, run_views
from ._shader import Layout, baked, bindings, groups, pack_words
from ._types import F32, cast, wt
from ._views import view_words
from ._wgsl_helpers import WgslHelpers
from .k_reduce import U32, ArgRecord, ReduceRecord, _arg_source, _identity

if TYPE_CHECKING:
    from ._client import WebGPUClient
    from ._fuse_reduce import Plan

#: distances an invocation computes (the most that divides B's rows)
PER = 8
#: magnitudes whose differences square exactly on the hardware: [2^-40, 2^62) (bits), and 0
_LOW, _SPAN = 0x2B800000, 0x5E800000 - 0x2B800000
#: the fast path's square of a vector of four differences ``d`` (tests put an adapter's flushing in its place)
_SQUARE = "d * d"


def _beyond(a: str, t: str) -> str:
    """Of the magnitudes' bits ``a`` (WGSL type ``t``, u32 or a vector of them): how far past the start of the
    range each is, _SPAN or more where out of it (0 for a zero)."""
    return f"select({a} - {t}({_LOW}u), {t}(0u), {a} == {t}(0u))"


class Distances(NamedTuple):
    """A fused reduction (_fuse_reduce.Plan) that is squared distances between the rows of leaf ``a`` and
    those of the staged leaf ``b``."""
    p: "Plan"
    a: int       # A's leaf index
    b: int       # B's leaf index (staged)
    per: int


def plan(p: "Plan") -> Distances | None:
    """``p`` as squared distances, or None where it is not exactly that (see the module's docstring) or its
    operands do not read as vectors of four (A's row start and stride, B's row stride and the row length
    multiples of four)."""
    red = p.red
    if (red.kind != "sum" or red.variant != "thread" or red.odtype != dt.float32 or red.acc.ct != "f32"
            or red.x[3] != dt.float32 or len(p.run) != 2 or p.out != (1, 0) or len(p.leaves) != 2
            or len(p.kshape) != 2 or len(p.rshape) != 1):
        return None
    sub, sq = p.run
    if not (sub.key[0] == "subtract" and sub.key[1] == dt.float32 and sub.nout == 1 and len(sub.views) == 3
            and all(x is not None and x[0] == "t" for x in sub.desc)):
        return None
    if not (sq.key[:2] == ("pow", (dt.float32, "square")) and sq.nout == 1 and len(sq.views) == 2
            and sq.views[1] == sub.views[0]):
        return None
    d = p.rshape[0]
    if d % 4 or any(rs != (1,) for rs in p.rstrides):
        return None
    ka, kb = p.kstrides[0], p.kstrides[1]
    if ka[1] == 0 and kb[0] == 0:
        a, b = 0, 1
    elif kb[1] == 0 and ka[0] == 0:
        a, b = 1, 0
    else:
        return None
    if b not in p.staged or p.kstrides[b][1] % 4 or p.kstrides[a][0] % 4 or p.leaves[a][2] % 4 \
            or (p.leaves[b][2] - p.staged[b][0]) % 4:
        return None
    k = p.kshape[1]
    per = next(q for q in (PER, 4, 2, 1) if k % q == 0)
    return Distances(p, a, b, per)


def fused_step(client: WebGPUClient, dp: Distances, arg: ArgRecord | None = None, epi: list | None = None,
               gone: frozenset = frozenset(), count: Counts | None = None, parts: tuple | None = None) -> tuple:
    """The graph step computing the distances (the run and the reduction leave the graph); with ``arg``, the
    argmin or argmax along B's rows that reads them (_fuse.fuse found them read by nothing else), which it
    then stores instead: an invocation per row, the pairs (distance, centre) combined as that pass combines
    them (whose result does not depend on the order). ``epi``: a map run over (rows, B's rows) after that
    (``epilogue``), evaluated by the workgroup for its rows, the indices from workgroup memory; ``gone``: the
    run's stores nothing reads. ``count``: a sum over the rows of what the run stores, each workgroup's part
    of it stored into ``parts`` (a bind triple: Counts.parts rows of B's rows float32 values, from its start)."""
    p = dp.p
    red = p.red
    (n, k), (d,) = p.kshape, p.rshape
    Q = d // 4
    lay = Layout()
    W = Layout.word
    lib = WgslHelpers(client.has_f64)
    ow = F32 if arg is None else wt(arg.odtype)
    # bindings: o, then the leaves in _fuse_reduce's order (2 + leaf index); A as vectors of four
    tensors = [(ow, True, False)] + [(F32, False, False, 4) if i == dp.a else (F32, False, False) for i in range(2)]
    ba, bb = 2 + dp.a, 2 + dp.b
    ea, sa = p.leaves[dp.a][2], p.kstrides[dp.a][0]
    eb, sb = p.leaves[dp.b][2], p.kstrides[dp.b][1]
    lo, span = p.staged[dp.b]
    nv = -(-span // 4)
    # the exact path: the run's bodies (fsquare), reading A's row and B's staged rows
    binding = {u: 2 + i for i, (u, _, _) in enumerate(p.leaves)}
    text, tail = evaluate(p, lay, lib, binding)
    exact = (f"fn lx{ba}(e: u32) -> f32 {{ return b{ba}[e >> 2u][e & 3u]; }}\n"
             f"fn lx{bb}(e: u32) -> f32 {{ let q = e - {lo}u; return sc[q >> 2u][q & 3u]; }}\n"
             f"fn elem(e{ba}: u32, e{bb}: u32) -> f32 {{\n" + text + "}\n")
    # the fast path: a difference (A - B or B - A: the same square), its square opaque (no contraction into
    # an FMA: eager stores it), summed
    square = _opaque("vec4<f32>", _SQUARE, salts(p.run) + 1)
    x = [f"x{q}" for q in range(Q)]
    fast = [f"      let cb = u32({eb - lo} + i32(j) * {sb}) >> 2u;\n      var acc = f32(-0.0);\n"]
    for q in range(Q):
        fast.append(f"      {{ let d = {x[q]} - sc[cb + {q}u]; let s = {square};"
                    " acc = acc + s.x; acc = acc + s.y; acc = acc + s.z; acc = acc + s.w; }\n")
    checks = "".join(f"  {{ let a = bitcast<vec4<u32>>({x[q]}) & vec4<u32>(0x7fffffffu);"
                     f" xm = max(xm, {_beyond('a', 'vec4<u32>')}); }}\n" for q in range(Q))
    if arg is None:
        per, oe, ko0 = dp.per, red.head[6], p.ko[0]
        fold = lambda v: f"      st1(u32(ob + i32(j) * {p.ko[1]}), {v});\n"  # noqa: E731
        last, helpers = "", ""
    else:
        per, oe, ko0 = k, arg.oe, arg.ko[0]
        fold = lambda v: f"      st = comb_ap(st, AP({v}, j));\n"  # noqa: E731
        last = f"  st1(u32(ob), {cast(f'st.i + {arg.base}u', U32, ow)});\n"
        helpers = _arg_source(arg.kind, F32, lib)
    groups_per_row = k // per
    after = ""
    fixed = 256 % k == 0  # (with counts: an invocation's elements of the run all of centre li % k, its own count)
    if epi:
        # the run's operands and stores at bindings 4.., its reads of the index from the register ix
        views = [row for row in run_views(epi, gone) if row[0] != _index_view(arg)]
        binding = {row[0]: 4 + i for i, row in enumerate(views)}
        tensors += [(w, stored, stored) for _, w, stored, *_ in views]
        etext, eregs, etail = bodies(epi, gone, lay, lib, binding, regs={_index_view(arg): "ix"})
        if count is not None:  # each one the run stores into the counted view, counted as it is stored
            add = "own_ = own_ + 1u;" if fixed else "atomicAdd(&cnt_[j], 1u);"
            etext = list(etext) + [f"    if ({eregs[count.view]} != 0.0) {{ {add} }}\n"]
        tail += etail
        # after the workgroup's rows' indices are in workgroup memory, its elements of the run in their order
        # (stores side by side: each invocation storing its row's k elements took 54 µs against 33 + 10 for
        # k-means on an H200)
        last += "  ixs[li] = st.i;\n"
        after = (f"  workgroupBarrier();\n  for (var m = li; m < {256 * k}u; m = m + 256u) {{\n"
                 f"    let rl = m / {k}u;\n    let j = m % {k}u;\n    let row = r0 + rl;\n"
                 f"    if (row >= {n}u) {{ break; }}\n"
                 f"    let ix = {cast(f'ixs[rl] + {arg.base}u', U32, ow)};\n"
                 + "".join(f"    let e{b} = u32({eoff} + i32(row) * {st[0]} + i32(j) * {st[1]});\n"
                           for (_, _, _, _, eoff, st), b in zip(views, binding.values()))
                 + "".join(etext) + "  }\n")
    if count is not None:
        # the workgroup's counts, then its row of partial counts
        bp = len(tensors) + 1
        tensors.append((F32, True, False))
        after = after.replace("  for (var m = li;", "  var own_ = 0u;\n  for (var m = li;", 1)
        after += ((f"  atomicAdd(&cnt_[li % {k}u], own_);\n" if fixed else "") + "  workgroupBarrier();\n"
                  f"  if (li < {k}u && r0 < {n}u) {{ st{bp}((r0 / 256u) * {k}u + li, f32(atomicLoad(&cnt_[li]))); }}\n")
    main = (
        f"var<workgroup> sc: array<vec4<f32>, {nv}>;\n"
        "var<workgroup> bad_: atomic<u32>;\n" + ("var<workgroup> ixs: array<u32, 256>;\n" if epi else "")
        + (f"var<workgroup> cnt_: array<atomic<u32>, {k}>;\n" if count else "")
        + "@compute @workgroup_size(256)\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
        # (workgroup memory is not zeroed for us)
        "  if (li == 0u) { atomicStore(&bad_, 0u); }\n"
        + (f"  if (li < {k}u) {{ atomicStore(&cnt_[li], 0u); }}\n" if count else "") + "  workgroupBarrier();\n"
        f"  for (var t = li; t < {span}u; t = t + 256u) {{\n"
        f"    let v = ld{bb}({lo}u + t); sc[t >> 2u][t & 3u] = v;\n"
        "    let a = bitcast<u32>(v) & 0x7fffffffu;\n"
        f"    if ({_beyond('a', 'u32')} >= {_SPAN}u) {{ atomicOr(&bad_, 1u); }}\n  }}\n"
        "  workgroupBarrier();\n  let bad = atomicLoad(&bad_);\n"
        f"  let r0 = (wid.y * {W(1)} + wid.x) * 256u;\n  let inv = r0 + li;\n"
        # (with an argmin, the invocations past the end wait at the barriers)
        + (f"  var st = {_identity(arg.kind, F32, lib)};\n  if (inv < {W(0)}) {{\n" if arg
           else f"  if (inv >= {W(0)}) {{ return; }}\n")
        + f"  let row = inv / {groups_per_row}u;\n  let j0 = (inv % {groups_per_row}u) * {per}u;\n"
        f"  let ea = u32({ea} + i32(row) * {sa});\n  let ob = {oe} + i32(row) * {ko0};\n"
        + "".join(f"  let {x[q]} = b{ba}[(ea >> 2u) + {q}u];\n" for q in range(Q))
        + "  var xm = vec4<u32>(0u);\n" + checks
        + f"  if (bad != 0u || max(max(xm.x, xm.y), max(xm.z, xm.w)) >= {_SPAN}u) {{\n"
        # (the state as its bits, as the reduction template's: an f32 carried from one element to the next lost
        # subnormals on an H200)
        f"    for (var j = j0; j < j0 + {per}u; j = j + 1u) {{\n      var acc = bitcast<u32>(f32(-0.0));\n"
        f"      for (var r = 0u; r < {d}u; r = r + 1u) {{\n"
        f"        acc = bitcast<u32>(bitcast<f32>(acc) + elem(ea + r, u32({eb} + i32(j) * {sb}) + r));\n      }}\n"
        + fold("bitcast<f32>(acc)") + "    }\n  } else {\n"
        f"    for (var j = j0; j < j0 + {per}u; j = j + 1u) {{\n" + "".join(fast) + fold("acc") + "    }\n  }\n"
        + last + ("  }\n" if arg else "") + after + "}\n")
    ninv = n * groups_per_row
    grid = groups(ninv)
    # the frame's words, then the bodies' scalars (kept as uniforms: their values would fold)
    assert lay.n == 4 + len(tail)
    words = [ninv, grid[0], 0, 0] + tail
    src = lay.block() + bindings(tensors) + lib.source() + helpers + exact + main
    src = baked(src, words, range(4, len(words)))
    pipe = client.pipeline(("fused-distances", src), lambda: src, len(tensors), lay.nbytes, captured=True)
    o_binds = red.o_binds if arg is None else arg.o_binds
    binds = tuple(o_binds) + tuple(x for _, triple, _ in p.leaves for x in triple)
    if epi:
        binds += tuple(x for row in views for x in row[3])
    if count is not None:
        binds += parts
    return client.encode_recorded(pipe, pack_words(words), binds, grid)


def counts_step(client: WebGPUClient, count: Counts, k: int, parts: tuple) -> tuple:
    """(its PartsRecord, the graph step): one workgroup summing the partial counts in ``parts`` into the sum's
    window, in float32 (the integers are exact in any order)."""
    return _matvec.parts_step(client, parts, count.parts, k, count.out, count.oe, count.so)


def takes(dp: Distances, arg: ArgRecord) -> bool:
    """Whether ``arg`` is an argmin or argmax along B's rows of exactly the distances ``dp`` stores."""
    red = dp.p.red
    buf, off, _ = red.o_binds
    n, k = dp.p.kshape
    return (arg.x[0] == buf.serial and arg.x[1] == off // 4 + red.head[6] and arg.x[3] == dt.float32
            and arg.kshape == (n,) and arg.rshape == (k,) and arg.x[2] == tuple(dp.p.ko))


class Counts(NamedTuple):
    """The sum over the rows of a float32 view the epilogue stores as a cast of a bool (each value 0 or 1),
    computed by the distances' workgroups (``counts``): the view, and where the sum goes."""
    view: tuple     # the stored view over (rows, B's rows): (memory serial, element offset, strides, dtype)
    out: tuple      # (WBuf, byte offset, byte size) of the sum's window
    oe: int         # its element offset in the window
    so: int         # its stride
    parts: int      # the partial counts: one row of B's rows per workgroup of the distances


def counts(dp: Distances, run: list, gone: frozenset, first: ReduceRecord, second: ReduceRecord | None,
           limit: int) -> Counts | None:
    """The reduction ``first`` (and ``second``, the sum of its partial sums, where it has them) as a Counts of
    the map ``run`` after the distances' argmin, or None: it must be a float32 sum over the rows of a view the
    run stores (``gone``: the stores it leaves out) whose last store in the run is a cast of a bool to
    float32, every row's count below 2^24 (exact in float32), at most 256 of B's rows (a workgroup's counts),
    the kernel's bindings with the partial counts' at most ``limit``."""
    n, k = dp.p.kshape
    if 4 + len({v for rec in run for v in rec.views}) > limit:
        return None
    if n >= 1 << 24 or k > 256 or first.kind != "sum" or not first.variant.startswith("columns") \
            or first.odtype != dt.float32 or first.acc.ct != "f32" or first.x[3] != dt.float32 \
            or first.kshape != (k,) or first.rshape != (n,):
        return None
    serial, off, (sk, sr), xdtype = first.x
    view = (serial, off, (sr, sk), xdtype)
    writer = None
    for ri, rec in enumerate(run):
        for j in range(rec.nout):
            if rec.views[j] == view:
                writer = (ri, j, rec)
    if writer is None or (writer[0], writer[1]) in gone:
        return None
    rec = writer[2]
    if rec.key[0] != "copy" or rec.nout != 1 or list(rec.desc) != [("t", dt.bool_)]:
        return None
    last = first if first.head[4] == 1 else second
    if last is None or last is not first and not (
            second.kind == "sum" and second.odtype == dt.float32 and second.kshape == (k,)
            and second.x[0] == first.o_binds[0].serial and second.rshape == (first.head[4],)
            and second.x[1] == first.o_binds[1] // 4 + first.head[6] and second.x[2] == (first.head[4], 1)):
        return None
    return Counts(view, last.o_binds, last.head[6], last.ko[0], -(-n // 256))


def _index_view(arg: ArgRecord) -> tuple:
    """The argmin's output as a map launch's view of it over (rows, B's rows): each row's index for all."""
    buf, off, _ = arg.o_binds
    return (buf.serial, off // arg.odtype.itemsize + arg.oe, (arg.ko[0], 0), arg.odtype)


def epilogue(dp: Distances, arg: ArgRecord, run: list, limit: int) -> bool:
    """Whether the map ``run`` (over rows x B's rows) can be evaluated by the invocations of the distances and
    their argmin: it reads the index only as each row's for all of B's rows, and what it stores is nothing
    the kernel reads (A, B, the index) nor more than ``limit`` bindings in all."""
    n, k = dp.p.kshape
    iv = _index_view(arg)
    if any(rec.dims != (n, k) or rec.bcast for rec in run):
        return False
    reads = {v for rec in run for v in rec.views[rec.nout:]}
    if any(v[0] == iv[0] and v != iv for v in reads):
        return False
    ours = [(iv[0], view_words(iv, (n, k)))] + [(b[0].serial, (b[1] >> 2, (b[1] + b[2] + 3) >> 2))
                                            for _, b, _ in dp.p.leaves]
    for rec in run:
        for v in rec.views[:rec.nout]:
            lo, hi = view_words(v, (n, k))
            if any(v[0] == s and lo < b and a < hi for s, (a, b) in ours):
                return False
    return 3 + len({v for rec in run for v in rec.views}) <= limit
