"""Reductions (sum, prod, max, min, mean, var, std, all, any, argmax, argmin), cumulative sums and
products, and diff.

One template for every reduction: the kept dimensions index the outputs, the reduced dimensions are
walked by either one invocation per output (short reductions, in order, four elements loaded before they
are combined) or one workgroup per output (a strided loop then a tree in workgroup memory), or, where each
output's elements are a row apart and neighbouring outputs side by side (a sum over the leading axis of a
C-contiguous matrix), one workgroup per 8, 16 or 32 outputs, their lanes reading a row's elements together
("columns": a column sum of a 20000 x 1000 float32 matrix 147 -> 55 µs on an H200, a std over 1M x 8
97 -> 68). A long reduction with few outputs is split into P parts per output whose partial results are
reduced again, so that the whole device works on it. An input larger than one storage binding is split
into pieces along its outer dimension, reduced piece by piece, and the pieces' results reduced again.
mean, var and std are sums followed by element-wise finishing. A complex product reduced by a tree has each
result that is not finite computed again by one invocation in NumPy's order ("refold": with an infinity,
the order decides where the NaNs are).

argmax and argmin are the same template over (value, index) pairs: the index is the element's row-major
position over the reduced axes (the flattened position when they are all the axes), and two pairs
combine to the one further in the order (NaN beyond every number, complex numbers lexicographically, as
NumPy), equal values to the lower index, so that the first occurrence wins whatever the order of the
tree. Partial results (parts, pieces) are pairs too: their values and their indices in two tensors.
Indices are 32-bit inside the kernels (a reduction covers fewer than 2**32 elements).

Cumulative sums and products are a reduce-then-scan over blocks of each line: the totals of a line's
blocks are computed with the reduction above and scanned (recursively, the same way), then one
workgroup per block scans it in workgroup memory starting from the combined totals of the blocks
before it. Integer results are exact (wrapping as NumPy's); float sums and products are associated
blockwise, not strictly left to right as NumPy's, and so may differ from NumPy's in the last bits.
Lines of up to 8 elements are walked by one invocation each, in NumPy's order, and so, again, are the lines
of complex running products whose last value the blockwise scan left infinite or NaN.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ._wgsl_helpers import BOOL, WgslHelpers
from ._copy_fill import copy
from ._map_template import _unalias, run_map
from ._shader import Layout, MAX_GROUPS, bindings, pack_words
from ._types import COMPUTE, F32, WgslType, WGSL_TYPES, cast, lit, wt
from ._views import bind_whole, collapse, whole_words, window as _window

if TYPE_CHECKING:
    from ._client import WebGPUClient

_M32 = 0xFFFFFFFF
WG = 256
#: workgroups of a reduction's first pass over all its outputs: enough loads in flight to fill an H100's
#: memory system (8192 measured 2646 GB/s on a 1 GiB sum, 4096 2534, 1056 1712)
PARTS_TOTAL = 8192
#: iterations of four loads the group and columns variants issue together before folding them in (in the
#: order one at a time would): a lane of k-means' sums over its 200k rows or over a product's 391 partial sums
#: otherwise waits on memory once for every four
WALK_AHEAD = 4
U32 = WGSL_TYPES[dt.uint32]
ARG = ("argmax", "argmin")


class ArgIO(NamedTuple):
    """What an argmax/argmin reduction reads and writes besides x and the index output o."""
    index: Tensor | None = None  # uint32, laid out like x: each element's index (else its position)
    value: Tensor | None = None  # laid out like o (the acc dtype): where the extremum itself is written
    base: int = 0                # added to every index written


def _acc_wt(kind: str, x: dt.DType, o: dt.DType) -> WgslType:
    if kind in ("any", "all"):
        return BOOL
    if kind in ("max", "min", "dev", "sqdev") + ARG:
        return COMPUTE[wt(x)]
    return COMPUTE[wt(o)]


def _identity(kind: str, a: WgslType, lib: WgslHelpers) -> str:
    if kind in ("sum", "dev", "sqdev", "count_nonzero"):
        # -0.0, not +0.0, for floats: -0.0 + x is x for every x, so a sum of -0.0 stays -0.0 (as NumPy's)
        return lit(a, {"f": -0.0, "c": complex(-0.0, -0.0)}.get(a.family, 0))
    if kind == "prod":
        return lit(a, 1)
    if kind == "any":
        return "false"
    if kind == "all":
        return "true"
    if kind in ARG:
        return f"AP({_identity(kind[3:], a, lib)}, 0xffffffffu)"
    lowest = kind == "max"
    if a.family == "b":
        return "false" if lowest else "true"
    if a.family == "c":
        r = _identity(kind, a.real, lib)
        return f"{a.ct}({r}, {r})"
    if a.family == "f":
        return f"{'-' if lowest else ''}{lib.fn('inf', a)}()"
    bits = int(a.ct[1:])
    if a.family == "u":
        return lit(a, 0 if lowest else (1 << bits) - 1)
    return lit(a, -(1 << (bits - 1)) if lowest else (1 << (bits - 1)) - 1)


def _combine(kind: str, a: WgslType, lib: WgslHelpers, x: str, y: str) -> str:
    if kind in ("sum", "dev", "sqdev", "count_nonzero"):
        return f"({x} + {y})"
    if kind == "prod":
        return f"{lib.fn('cmul', a)}({x}, {y})" if a.family == "c" else f"({x} * {y})"
    if kind == "any":
        return f"({x} || {y})"
    if kind == "all":
        return f"({x} && {y})"
    if kind in ARG:
        return f"comb_ap({x}, {y})"
    if a.family == "f":
        return f"{lib.fn('fmax' if kind == 'max' else 'fmin', a)}({x}, {y})"
    return f"{kind}({x}, {y})"


def _arg_source(kind: str, a: WgslType, lib: WgslHelpers) -> str:
    """The (value, index) pair of argmax/argmin and its combination: the pair further in the order wins
    (NaN beyond every number, the first NaN winning), equal values the lower index."""
    op = ">" if kind == "argmax" else "<"
    if a.family == "b":
        past = "b && !a" if kind == "argmax" else "!b && a"
    elif a.family == "c":  # NaN in either part counts as NaN
        isnan = lib.fn("isnan", a.real)
        nan = lambda v: f"({isnan}({v}.x) || {isnan}({v}.y))"
        past = f"!{nan('a')} && ({nan('b')} || b.x {op} a.x || (b.x == a.x && b.y {op} a.y))"
    elif a.family == "f":
        isnan = lib.fn("isnan", a)
        past = f"!{isnan}(a) && ({isnan}(b) || b {op} a)"
    else:
        past = f"b {op} a"
    return (f"struct AP {{ v: {a.ct}, i: u32 }}\n"
            f"fn past(b: {a.ct}, a: {a.ct}) -> bool {{ return {past}; }}\n"
            "fn comb_ap(a: AP, b: AP) -> AP {\n"
            "  if (past(b.v, a.v) || (!past(a.v, b.v) && b.i < a.i)) { return b; }\n  return a;\n}\n")


def _temp(client: WebGPUClient, shape: tuple[int, ...], dtype: dt.DType) -> Tensor:
    n = math.prod(shape)
    return Tensor(client.alloc(max(n, 1) * dtype.itemsize), dtype, shape, contiguous_strides(shape), 0, client.device)


def reduce(client: WebGPUClient, kind: str, x: Tensor, axes: tuple[int, ...], o: Tensor, mean: Tensor | None = None,
           acc_dtype: dt.DType | None = None, arg: ArgIO | None = None, refold: bool = True) -> None:
    """o (shaped like x's kept dimensions, length-1 ones allowed) = the ``kind`` reduction of x over ``axes``.
    ``mean`` (dev and sqdev only): per-output values subtracted from x (before squaring, for sqdev), shaped
    like o. ``arg`` (argmax and argmin only): where indices come from and where the extremum's value goes
    besides its index in o. A complex product reduced by a tree has its results that are not finite folded
    again in NumPy's order (the "refold" variant; ``refold`` False: not, for the tree's own second level)."""
    key = None
    refold = refold and kind == "prod" and o._dtype.kind == "c"
    if mean is None and arg is None and client._steps is None and not refold:
        # a signature seen before, outside a capture: its one dispatch from the plan the general path below
        # kept (everything its uniform words and windows depend on is in the key; the client's alignment
        # and binding limit are fixed)
        key = (kind, x._dtype, x._shape, x._strides, x._offset, axes, o._dtype, o._shape, o._strides, o._offset,
               acc_dtype)
        plan = client.reduce_plans.get(key)
        if plan is not None:
            pipe, uniform, ob, os_, xb, xs, grid = plan
            client.dispatch(pipe, uniform, (o._buf.handle, ob, os_, x._buf.handle, xb, xs), grid)
            return
    kept = [d for d in range(len(x._shape)) if d not in axes]
    oshape = [x._shape[d] for d in kept]
    ostr = _kept_strides(o, kept)
    mstr = _kept_strides(mean, kept) if mean is not None else None
    K = math.prod(x._shape[d] for d in axes)
    M = math.prod(oshape)
    if M == 0:
        return
    if K == 0:
        value = {"sum": 0, "count_nonzero": 0, "prod": 1, "any": False, "all": True}[kind]
        run_map(client, "fill", None, [o], (), lambda g: g.store(0, g.param(0)),
                params=[(wt(o._dtype), o._dtype.np.type(value))])
        return
    acc = wt(acc_dtype) if acc_dtype is not None else _acc_wt(kind, x._dtype, o._dtype)
    if kind in ARG and arg is None:
        arg = ArgIO()
    limit = client.max_binding
    if _window(client, x)[1] > limit:
        _reduce_split(client, kind, x, axes, kept, o, mean, acc, arg)
        return
    kshape, (kx, ko, km) = collapse(oshape, [[x._strides[d] for d in kept], ostr, mstr or [0] * len(kept)])
    rshape, (rx,) = collapse([x._shape[d] for d in axes], [[x._strides[d] for d in axes]])
    C = columns(kshape, kx, rshape, rx) if 32 < K and M < 16384 else 0
    lanes = WG // C if C else WG  # along the reduced dimension
    groups = -(-M // C) if C else M  # per part
    walking = "group" if not C else f"columns{C}"  # the variant whose workgroups walk the reduced dimension
    parts = 1 if K <= 32 or (M >= 512 and not C) else max(1, min(-(-K // (lanes * 64)), PARTS_TOTAL // groups,
                                                                   MAX_GROUPS // groups))
    if parts == 1:
        variant = "thread" if K <= 32 or M >= 16384 else walking
        plan = _launch(client, kind, variant, x, o, mean, acc, kshape, kx, ko, km, rshape, rx, M, K, 1, 0, arg)
        if refold and variant != "thread":
            _launch(client, kind, "refold", x, o, None, acc, kshape, kx, ko, km, rshape, rx, M, K, 1, 0, None)
        if key is not None:
            plans = client.reduce_plans
            if len(plans) >= 4096:
                plans.clear()
            plans[key] = plan
        return
    # partial results per (output, part), contiguous as (M, parts), then reduced over the parts
    pk = contiguous_strides(tuple(kshape))
    pshape, pstrides = tuple(kshape) + (parts,), tuple(parts * s for s in pk) + (1,)
    view = lambda t: Tensor(t._buf, t._dtype, pshape, pstrides, 0, client.device)
    partial = _temp(client, (M, parts), acc.dtype)
    ov = Tensor(o._buf, o._dtype, tuple(kshape), tuple(ko), o._offset, o._dev)
    if kind in ARG:  # the partial indices are the first launch's output, the partial values its arg.value
        pidx = _temp(client, (M, parts), dt.uint32)
        _launch(client, kind, walking, x, pidx, mean, acc, kshape, kx, [parts * s for s in pk], km, rshape, rx,
                M, K, parts, 1, ArgIO(arg.index, partial, arg.base))
        v = arg.value
        vv = None if v is None else Tensor(v._buf, v._dtype, tuple(kshape), tuple(ko), v._offset, v._dev)
        reduce(client, kind, view(partial), (len(kshape),), ov, acc_dtype=acc.dtype, arg=ArgIO(view(pidx), vv))
        return
    _launch(client, kind, walking, x, partial, mean, acc, kshape, kx, [parts * s for s in pk], km, rshape, rx,
            M, K, parts, 1, None)
    second = "sum" if kind in ("dev", "sqdev", "count_nonzero") else kind
    reduce(client, second, view(partial), (len(kshape),), ov, acc_dtype=acc.dtype, refold=False)
    if refold:
        _launch(client, kind, "refold", x, o, None, acc, kshape, kx, ko, km, rshape, rx, M, K, 1, 0, None)


def columns(kshape: tuple, kx: tuple, rshape: tuple, rx: tuple) -> int:
    """The outputs a workgroup of the columns variant takes (8, 16 or 32: the last kept dimension's length
    rounded up to a power of two, at most 32), where x is contiguous along the last kept dimension and not
    along the one reduced dimension (a sum over the leading axis of a C-contiguous matrix); else 0 (a
    workgroup per output reads along the reduced dimension)."""
    if len(rshape) != 1 or not kshape or kx[-1] != 1 or abs(rx[0]) == 1:
        return 0
    return min(32, max(8, 1 << (kshape[-1] - 1).bit_length()))


def _columns_of(variant: str) -> int:
    """Outputs per workgroup of a launch's variant: C of columns{C}, 1 of group."""
    return int(variant[7:]) if variant.startswith("columns") else 1


def _kept_strides(t: Tensor, kept: list[int]) -> list[int]:
    """Strides of ``t`` over x's kept dimensions ``kept``: ``t`` is shaped like them, or like x with
    length-1 reduced dimensions (keepdims)."""
    if len(t._shape) == len(kept):
        return list(t._strides)
    return [t._strides[d] for d in kept]


def _reduce_split(client, kind, x, axes, kept, o, mean, acc, arg) -> None:
    """A reduction whose input exceeds one storage binding: split along x's outer kept dimension (outputs
    independent) or else its outer reduced dimension (pieces reduced, then their results)."""
    okept = [d for d in range(len(o._shape))] if len(o._shape) == len(kept) else None
    narrow = lambda t, d, start, length: None if t is None else _narrow(t, d, start, length)
    for d in kept:
        if x._shape[d] > 1:
            h = x._shape[d] // 2
            od = kept.index(d) if okept is not None else d
            for start, length in ((0, h), (h, x._shape[d] - h)):
                sub = None if arg is None else ArgIO(narrow(arg.index, d, start, length),
                                                     narrow(arg.value, od, start, length), arg.base)
                reduce(client, kind, _narrow(x, d, start, length), axes, _narrow(o, od, start, length),
                       narrow(mean, od, start, length), acc.dtype, sub)
            return
    d = next(a for a in axes if x._shape[a] > 1)
    h = x._shape[d] // 2
    pieces = _temp(client, (2,) + o._shape, acc.dtype)
    row = lambda t, k: Tensor(t._buf, t._dtype, o._shape, t._strides[1:], k * t._strides[0], o._dev)
    if arg is not None:
        pidx = _temp(client, (2,) + o._shape, dt.uint32)
        # d is the outermost reduced axis longer than 1: a position in the second piece is h rows further
        inner = math.prod(x._shape[a] for a in axes if a > d)
    for k, (start, length) in enumerate(((0, h), (h, x._shape[d] - h))):
        if arg is None:
            reduce(client, kind, _narrow(x, d, start, length), axes, row(pieces, k), mean, acc.dtype)
        else:
            base = arg.base + (0 if arg.index is not None else start * inner)
            reduce(client, kind, _narrow(x, d, start, length), axes, row(pidx, k), None, acc.dtype,
                   ArgIO(narrow(arg.index, d, start, length), row(pieces, k), base))
    second = "sum" if kind in ("dev", "sqdev", "count_nonzero") else kind
    reduce(client, second, pieces, (0,), o, acc_dtype=acc.dtype,
           arg=None if arg is None else ArgIO(pidx, arg.value))


def _narrow(t: Tensor, d: int, start: int, length: int) -> Tensor:
    shape = t._shape[:d] + (length,) + t._shape[d + 1:]
    return Tensor(t._buf, t._dtype, shape, t._strides, t._offset + start * t._strides[d], t._dev)


class ReduceRecord(NamedTuple):
    """A captured reduction pass (no mean, no index or value tensors), as the fusion pass (_fuse_reduce) reads
    it to evaluate, in place of x's loads, the element-wise launches that wrote x. Holds no tensor."""
    kind: str
    variant: str
    x: tuple            # x's view over kshape + rshape: (memory serial, element offset, strides, dtype)
    odtype: dt.DType
    acc: WgslType
    kshape: tuple
    ko: tuple           # o's strides over kshape
    rshape: tuple
    unroll: bool        # the template's loop over one reduced dimension (its summation order)
    o_binds: tuple      # (WBuf, byte offset, byte size) of o's window
    head: list          # the uniform words before kshape: n, groups along x, 0, 0, parts, K, o's offset, opart
    grid: tuple


class ArgRecord(NamedTuple):
    """A captured argmax/argmin pass with neither index nor value tensors (positions counted from ``base``), as
    the fusion pass reads it to compute it where its x is computed (_fuse_distances). Holds no tensor."""
    kind: str
    x: tuple            # x's view over kshape + rshape: (memory serial, element offset, strides, dtype)
    odtype: dt.DType
    kshape: tuple
    ko: tuple           # o's strides over kshape
    rshape: tuple
    o_binds: tuple      # (WBuf, byte offset, byte size) of o's window
    oe: int             # o's element offset in its window
    base: int


def _launch(client, kind, variant, x, o, mean, acc, kshape, kx, ko, km, rshape, rx, M, K, parts, opart,
            arg) -> tuple:
    """Dispatch one pass; (pipeline, uniform bytes, o's and x's window offsets and sizes, grid): the plan of a
    reduction that is this one pass (without mean or arg, whose windows it leaves out)."""
    nk, nr = len(kshape), len(rshape)
    has_mean = mean is not None
    pair = (arg.index is not None, arg.value is not None) if arg is not None else None
    key = ("reduce", kind, variant, x._dtype, o._dtype, acc.dtype, nk, nr, has_mean, pair,
           client.flushes_f32_subnormals, WALK_AHEAD)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = _build(client, key, kind, variant, wt(o._dtype), acc, nr == 1, has_mean, pair,
                      _Loaded(wt(x._dtype), nk, nr))
    xb, xs, xe = _window(client, x)
    ob, os_, oe = _window(client, o)
    binds = (o._buf.handle, ob, os_, x._buf.handle, xb, xs)
    if variant in ("thread", "refold"):
        n = M
        g = -(-n // WG)
    else:
        n = g = -(-M // _columns_of(variant)) * parts
    gx = min(g, MAX_GROUPS)
    gy = -(-g // gx)
    head = [n, gx, 0, M, parts, K, oe, opart]
    words = head + list(kshape)
    words += [s & _M32 for s in ko]
    words.append(xe)
    words += [s & _M32 for s in kx]
    words += rshape
    words += [s & _M32 for s in rx]
    if has_mean:
        mb, ms, me = _window(client, mean)
        binds += (mean._buf.handle, mb, ms)
        words.append(me)
        words += [s & _M32 for s in km]
    if arg is not None:
        words.append(arg.base)
        for t in (arg.index, arg.value):  # each its element offset in its window (0 where absent)
            tb, ts, te = _window(client, t) if t is not None else (0, 0, 0)
            if t is not None:
                binds += (t._buf.handle, tb, ts)
            words.append(te)
    uniform = pack_words(words)
    record = None
    # (refold reads o as well as writing it: no record for _fuse_reduce, no whole words)
    capturing = client.capturing and variant != "refold"
    if capturing and not has_mean and arg is None:  # what _fuse_reduce needs
        record = ReduceRecord(kind, variant, (x._buf.handle.serial, x._offset, tuple(kx) + tuple(rx), x._dtype),
                              o._dtype, acc, tuple(kshape), tuple(ko), tuple(rshape), nr == 1, (o._buf.handle, ob, os_),
                              head, (gx, gy, 1))
    elif capturing and not has_mean and arg.index is None and arg.value is None and parts == 1:
        record = ArgRecord(kind, (x._buf.handle.serial, x._offset, tuple(kx) + tuple(rx), x._dtype),
                           o._dtype, tuple(kshape), tuple(ko), tuple(rshape), (o._buf.handle, ob, os_), oe, arg.base)
    # (o's elements each written once, none read: where they are all of a C-contiguous o, its words whole)
    whole = whole_words(o) if o._strides == contiguous_strides(o._shape) and math.prod(o._shape) == M * parts \
        and variant != "refold" else None
    client.dispatch(pipe, uniform, binds, (gx, gy, 1), record, whole)
    return pipe, uniform, ob, os_, xb, xs, (gx, gy, 1)


class _Loaded:
    """x as the reduction template reads it eagerly: binding 2, addressed by its element offset and strides over
    the kept and the reduced dimensions (uniform words after the template's own). _fuse_reduce has another
    source of x's elements with the same methods: the element-wise launches that wrote x, evaluated in place."""

    def __init__(self, xw: WgslType, nk: int, nr: int):
        self.xw, self.nk, self.nr = xw, nk, nr
        #: whether ``at`` gives the element of every reduced position (one reduced dimension)
        self.positional = nr == 1
        #: outputs per invocation of the thread variant
        self.per = 1
        #: whether the thread variant runs a fast pass first and its outputs again exactly where the fast
        #: pass says it was not exact (``inexact``, a WGSL condition: _fuse_reduce's squares), and which pass
        #: ``load`` is writing
        self.deferred = False
        self.fast = False
        self.inexact = ""

    def alloc(self, lay: Layout, lib: WgslHelpers) -> None:
        self.xe_k = lay.alloc(1)
        self.kxs = lay.alloc(self.nk)
        self.rs = lay.alloc(self.nr)
        self.rxs = lay.alloc(self.nr)

    def tensors(self) -> list:
        return [(self.xw, False, False)]

    def helpers(self) -> str:
        return ""

    def prologue(self) -> str:
        """Statements every invocation runs first (the one-invocation-per-output variant's), barriers allowed."""
        return ""

    def init(self) -> str:
        """Declarations before the walk over the kept dimensions: x's base element."""
        return f"  var xb = {_i32(self.xe_k)};\n"

    def step(self, d: int) -> str:
        """Adds kept coordinate ``c`` of dimension d to the bases."""
        return f" xb = xb + c * {_i32(self.kxs + d)};"

    def walk(self) -> tuple[list[str], str]:
        """The lines giving reduced position r's element (inside the loop over r) and its expression."""
        W = Layout.word
        if self.nr == 1:  # one reduced dimension (the common case after merging): no division per element
            return [f"    let xo = xb + i32(r) * {_i32(self.rxs)};\n"], "xo"
        walk = ["    var rq = r;\n    var xo = xb;\n"]
        for d in range(self.nr - 1, -1, -1):
            walk.append(f"    {{ let c = i32(rq % {W(self.rs + d)}); rq = rq / {W(self.rs + d)};"
                        f" xo = xo + c * {_i32(self.rxs + d)}; }}\n")
        return walk, "xo"

    def at(self, r: str) -> str:
        """The element at reduced position ``r`` of the template's unrolled loop (one reduced dimension)."""
        return f"xb + i32({r}) * {_i32(self.rxs)}"

    def load(self, e: str, r: str, o: int = 0) -> str:
        """x's value (its compute type) at element ``e`` (reduced position ``r``; of the invocation's output
        ``o``, always 0 here)."""
        return f"ld2(u32({e}))"


def _i32(k: int) -> str:
    return f"bitcast<i32>({Layout.word(k)})"


def _build(client, key, kind, variant, ow: WgslType, acc: WgslType, unroll: bool, has_mean: bool, pair, xs):
    """The reduction template. ``unroll``: the group variant's loop takes four elements per step (where x has
    one reduced dimension; it sets the summation order); ``xs``: where x's elements come from (_Loaded, or
    _fuse_reduce's element-wise launches); ``key`` None: the pipeline is keyed by its source."""
    lay = Layout()
    W = Layout.word
    xw = xs.xw
    parts_k, k_k, oe_k, opart_k = (lay.alloc(1) for _ in range(4))
    nk = xs.nk
    ks = lay.alloc(nk)
    kos = lay.alloc(nk)
    lib = WgslHelpers(client.has_f64)
    xs.alloc(lay, lib)
    tensors = [(ow, True, variant == "refold")] + xs.tensors()
    if has_mean:
        me_k = lay.alloc(1)
        kms = lay.alloc(nk)
        tensors.append((acc, False, False))
        mn = len(tensors)
    comb = lambda a, b: _combine(kind, acc, lib, a, b)
    ident = _identity(kind, acc, lib)
    i32 = _i32
    st = acc.ct  # the type of the running state
    if kind in ARG:
        base_k, ie_k, ve_k = (lay.alloc(1) for _ in range(3))
        st = "AP"
        has_index, has_value = pair
        if has_index:
            tensors.append((U32, False, False))
            ib = len(tensors)
        if has_value:
            tensors.append((acc, True, False))
            vb = len(tensors)
    ld = xs.load
    # the state of one element, at x element e (an i32 expression) and reduced position r (u32) of the
    # invocation's output o (a fused reduction's invocation may compute several: xs.per)
    if kind in ("any", "all"):
        val = lambda e, r, o=0: cast(ld(e, r, o), xw, BOOL)
    elif kind == "count_nonzero":
        val = lambda e, r, o=0: cast(cast(ld(e, r, o), xw, BOOL), BOOL, acc)
    elif kind == "sqdev":
        val = lambda e, r, o=0: f"sq({cast(ld(e, r, o), xw, acc)} - m)"
    elif kind == "dev":
        val = lambda e, r, o=0: f"({cast(ld(e, r, o), xw, acc)} - m)"
    elif kind in ARG:
        index = (lambda e, r: f"ld{ib}(u32({e} - {i32(xs.xe_k)} + {i32(ie_k)}))") if has_index else (lambda e, r: r)
        val = lambda e, r, o=0: f"AP({cast(ld(e, r, o), xw, acc)}, {index(e, r)})"
    else:
        val = lambda e, r, o=0: cast(ld(e, r, o), xw, acc)
    src = [lay.block(), bindings(tensors), xs.helpers()]
    if kind == "sqdev":
        src.append(f"fn sq(d: {acc.ct}) -> {acc.ct} {{ return d * d; }}\n")
    if kind in ARG:
        src.append(_arg_source(kind, acc, lib))
    body = []
    # the kept coordinates of output oi give the bases of x, o (and the mean)
    body.append("  var q = oi;\n" + xs.init() + "  var ob = " + i32(oe_k) + ";\n")
    if has_mean:
        body.append("  var mb = " + i32(me_k) + ";\n")
    for d in range(nk - 1, -1, -1):
        body.append(f"  {{ let c = i32(q % {W(ks + d)}); q = q / {W(ks + d)};\n   "
                    + xs.step(d) + f" ob = ob + c * {i32(kos + d)};"
                    + (f" mb = mb + c * {i32(kms + d)};" if has_mean else "") + " }\n")
    if has_mean:
        body.append(f"  let m = ld{mn}(u32(mb));\n")
    if kind in ARG:
        store = f"st1(u32(ob), {cast(f'ACC.i + {W(base_k)}', U32, ow)});"
        if has_value:
            store += f" st{vb}(u32(ob - {i32(oe_k)} + {i32(ve_k)}), ACC.v);"
    elif acc.ct == "f64" and ow.ct == "f32" and client.flushes_f32_subnormals:
        # a float64 state into float32 on an adapter that flushes float32 subnormals: narrowed to the bits
        # (f32() of a value below float32's normals would be 0)
        store = f"st1(u32(ob), {lib.fn('narrow', F32)}(ACC));"
    else:
        store = f"st1(u32(ob), {cast('ACC', acc, ow)});"
    # float32 states are held as their bits (the running state, and the group variant's tree): on an H200
    # (Vulkan) a fused reduction's max of float32 subnormals (squares computed in the shader) came out 0,
    # through the tree's array<f32> and, in the thread variant, through an f32 state carried from one
    # element to the next; the eager reduction, reading them from memory, kept them
    bits = {"f32": "u32", "vec2<f32>": "vec2<u32>"}.get(st, st)
    put, get = ((lambda v: f"bitcast<{bits}>({v})"), (lambda v: f"bitcast<{st}>({v})")) if bits != st else \
        ((lambda v: v), (lambda v: v))
    fold = lambda a, v: f"{a} = {put(comb(get(a), v))};"  # noqa: E731  (one more element into state a)
    walk, e = xs.walk()
    walk.append(f"    {fold('acc', val(e, 'r'))}\n")
    if variant in ("thread", "refold"):
        # R consecutive outputs per invocation along the last kept dimension (a fused reduction's xs.per):
        # the run's operands the same for all of them are loaded once; each output combines its values in
        # the same order as alone. Output o's state is acc (o = 0) or acc{o}.
        R = xs.per
        acc_ = lambda o: "acc" if o == 0 else f"acc{o}"  # noqa: E731
        v_ = lambda k, o: f"v{k}" if o == 0 else f"v{k}_{o}"  # noqa: E731
        src.append("@compute @workgroup_size(256)\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                   + xs.prologue()
                   + f"  let oi = (wid.y * {W(1)} + wid.x) * 256u + li;\n  if (oi >= {W(0)}) {{ return; }}\n")
        src += [body[0].replace("var q = oi;", f"var q = oi * {R}u;")] + body[1:] if R > 1 else body
        if variant == "refold":  # (a complex product: the tree's result stands where it is finite)
            fin = lib.fn("isfinite", ow.real)
            src.append(f"  let z_ = ld1(u32(ob));\n  if ({fin}(z_.x) && {fin}(z_.y)) {{ return; }}\n")
        if R > 1:
            src.append(xs.bases(R))

        def elements(fresh: bool) -> str:
            # every element of the invocation's outputs into their states, from r, in the order of eager's bits:
            # four elements' loads in flight where x is positional, then one at a time (8 or 16 at a time give the
            # same bits and were no faster on an H200: k-means' replay 826 and 832 against 826 µs). ``fresh``:
            # every fold written now, for the pass xs.fast names (walk's was written before a fast pass began)
            t = ""
            if xs.positional:
                t += (f"  loop {{\n    if (r + 3u >= {W(k_k)}) {{ break; }}\n"
                      + "".join(f"    let {v_(k, o)} = {val(xs.at(f'r + {k}u'), f'(r + {k}u)', o)};\n"
                                for k in range(4) for o in range(R))
                      + "".join(f"    {fold(acc_(o), v_(k, o))}\n" for k in range(4) for o in range(R))
                      + "    r = r + 4u;\n  }\n")
            t += f"  for (; r < {W(k_k)}; r = r + 1u) {{\n"
            t += "".join([] if fresh else walk)
            t += "".join(f"    {fold(acc_(o), val('', 'r', o))}\n" for o in range(0 if fresh else 1, R))
            return t + "  }\n"

        xs.fast = xs.deferred
        src.append("".join(f"  var {acc_(o)} = {put(ident)};\n" for o in range(R)) + "  var r = 0u;\n"
                   + elements(xs.deferred))
        if xs.deferred:  # the fast pass was not exact for some element: the invocation's outputs again, exactly
            xs.fast = False
            src.append(f"  if ({xs.inexact}) {{\n" + "".join(f"  {acc_(o)} = {put(ident)};\n" for o in range(R))
                       + "  r = 0u;\n" + elements(True) + "  }\n")
        last = i32(kos + nk - 1)
        src.append("".join("  " + store.replace("ACC", get(acc_(o))).replace("u32(ob)", f"u32(ob + {o} * {last})")
                                      + "\n" for o in range(1, R)))
        src.append("  " + store.replace("ACC", get("acc")) + "\n}\n")
    else:
        # group: a workgroup per (output, part), its 256 lanes along the reduced dimension; columns{C}: a
        # workgroup per (C consecutive outputs, part), lane li taking output C og + li % C and every
        # (256 / C)-th element from row lane li / C, so that a warp reads C outputs' elements side by side
        # (a sum over the leading axis of a C-contiguous matrix: each output's elements are a row apart).
        # group is columns1 (word 3: the outputs).
        C = _columns_of(variant)
        RL = 256 // C
        if st == "bool":
            # bools go through workgroup memory as u32: NVIDIA's Vulkan driver lost values of a workgroup
            # array<bool> (all() of 36+ true elements came out false)
            tree, tput, tget = "u32", (lambda v: f"select(0u, 1u, {v})"), (lambda v: f"({v} != 0u)")
        else:
            tree, tput, tget = bits, put, get
        src.append(f"var<workgroup> sh: array<{tree}, 256>;\n"
                   "@compute @workgroup_size(256)\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                   f"  let g = wid.y * {W(1)} + wid.x;\n  if (g >= {W(0)}) {{ return; }}\n"
                   f"  let rl = li / {C}u;\n  let oi = g / {W(parts_k)} * {C}u + li % {C}u;\n"
                   f"  let live = oi < {W(3)};\n  let part = g % {W(parts_k)};\n")
        src += body
        src.append(f"  ob = ob + i32(part) * {i32(opart_k)};\n")
        src.append(f"  var acc = {put(ident)};\n  let step = {W(parts_k)} * {RL}u;\n  var r = part * {RL}u + rl;\n"
                   f"  if (!live) {{ r = {W(k_k)}; }}\n")
        if unroll:  # four independent loads in flight per iteration: memory-level parallelism
            # (first WALK_AHEAD such iterations at a time, their loads issued together, each four folded in
            # as one iteration folds them: the same order)
            for A in sorted({4 * WALK_AHEAD, 4}, reverse=True):
                w = [f"w{k}" for k in range(A)]
                src.append(f"  loop {{\n    if (r + {A - 1}u * step >= {W(k_k)}) {{ break; }}\n"
                           + "".join(f"    let w{k} = {val(xs.at(f'r + {k}u * step'), f'(r + {k}u * step)')};\n"
                                     for k in range(A))
                           + "".join(f"    {fold('acc', comb(comb(w[k], w[k + 1]), comb(w[k + 2], w[k + 3])))}\n"
                                     for k in range(0, A, 4))
                           + f"    r = r + {A}u * step;\n  }}\n")
        src.append(f"  for (; r < {W(k_k)}; r = r + step) {{\n")
        src += walk
        src.append(f"  }}\n  sh[li] = {'acc' if tree == bits else tput('acc')};\n  workgroupBarrier();\n"
                   f"  for (var s = {RL // 2}u; s > 0u; s = s >> 1u) {{\n"
                   f"    if (rl < s) {{ sh[li] = {tput(comb(tget('sh[li]'), tget(f'sh[li + s * {C}u]')))}; }}\n"
                   "    workgroupBarrier();\n  }\n"
                   "  if (rl == 0u && live) { " + store.replace("ACC", tget("sh[li]")) + " }\n}\n")

    def source() -> str:
        return src[0] + src[1] + lib.source() + "".join(src[2:])

    if key is None:  # (a fused reduction: keyed by its source)
        text = source()
        return client.pipeline(("fused-reduce", text), lambda: text, len(tensors), lay.nbytes, captured=True)
    return client.pipeline(key, source, len(tensors), lay.nbytes)


# --- the kernels of the reductions family --------------------------------------------------------------

def _reduction(kind: str):
    def kernel(client, ins, outs, p):
        reduce(client, kind, ins[0], tuple(p["axis"]), outs[0])
    return kernel


def _prod(client, ins, outs, p):
    o = outs[0]
    reduce(client, "prod", ins[0], tuple(p["axis"]), o, acc_dtype=None if p["acc"] == o._dtype else p["acc"])


def _mean(client, ins, outs, p):
    x, o = ins[0], outs[0]
    axes = tuple(p["axis"])
    reduce(client, "sum", x, axes, o)
    K = math.prod(x._shape[a] for a in axes)
    _scale(client, o, "divide", K)


def _scale(client, o: Tensor, op: str, value) -> None:
    """o = op(o, value) in place (value a Python number, as o's dtype)."""
    from .k_elementwise import _elementwise
    _elementwise(op)(client, (o, o._dtype.np.type(value)), (o,), {"dtype": o._dtype})


def _moment(std: bool):
    def kernel(client, ins, outs, p):
        x, o = ins[0], outs[0]
        axes = tuple(p["axis"])
        K = math.prod(x._shape[a] for a in axes)
        # the mean as c + mean(x - c), c the first element of each reduction: shifted data, so that the
        # mean of equal values is exact (their variance 0) and nearly equal ones lose no digits to the sum
        kept = [d for d in range(len(x._shape)) if d not in axes]
        cstrides = x._strides if len(o._shape) == len(x._shape) else tuple(x._strides[d] for d in kept)
        c = Tensor(x._buf, x._dtype, o._shape, cstrides, x._offset, x._dev)
        m = _temp(client, o._shape, o._dtype)
        reduce(client, "dev", x, axes, m, mean=c)
        _scale(client, m, "divide", K)
        from .k_elementwise import _elementwise
        _elementwise("add")(client, (m, c), (m,), {"dtype": o._dtype})
        reduce(client, "sqdev", x, axes, o, mean=m)
        _scale(client, o, "divide", max(K - p["correction"], 0))
        if std:
            from .k_elementwise import _elementwise
            _elementwise("sqrt")(client, (o,), (o,), {"dtype": o._dtype})
    return kernel


def _cumulative(kind: str):
    op = "sum" if kind == "cumulative_sum" else "prod"

    def kernel(client, ins, outs, p):
        scan(client, op, ins[0], outs[0], p["axis"])
    return kernel


def scan(client: WebGPUClient, op: str, x: Tensor, o: Tensor, axis: int, refold: bool = True) -> None:
    """o = the running ``op`` ("sum" or "prod") of x along ``axis``, in o's dtype (see the module's doc).
    x and o are bound whole: MemoryError where one exceeds the adapter's largest storage binding. Running
    complex products scanned blockwise have each line whose last product is not finite walked again in NumPy's
    order (with an infinity the order decides where the NaNs are; ``refold`` False: not, for the totals)."""
    if not math.prod(x._shape):
        return
    x = _unalias(client, [o], [x])[0]
    L = x._shape[axis]
    T, C = _scan_shape(L)
    nb = -(-L // (T * C))
    prefix = None
    if nb > 1:
        # the totals of the full blocks 0..nb-2 (the last block's is never needed), scanned: block b starts
        # from prefix[b - 1]
        others = [d for d in range(len(x._shape)) if d != axis]
        lead = tuple(x._shape[d] for d in others)
        sa = x._strides[axis]
        blocks = Tensor(x._buf, x._dtype, lead + (nb - 1, T * C),
                        tuple(x._strides[d] for d in others) + (T * C * sa, sa), x._offset, x._dev)
        totals = _temp(client, lead + (nb - 1,), o._dtype)
        reduce(client, op, blocks, (len(lead) + 1,), totals)
        prefix = _temp(client, lead + (nb - 1,), o._dtype)
        scan(client, op, totals, prefix, len(lead), refold=False)
    _scan_blocks(client, op, x, o, axis, T, C, nb, prefix)
    if refold and op == "prod" and o._dtype.kind == "c" and T > 1:  # (T 1: walked in order already)
        _scan_blocks(client, op, x, o, axis, 1, L, 1, None, refold=True)


def _scan_shape(L: int) -> tuple[int, int]:
    """(invocations per line in a block, elements per invocation) for lines of L elements: a power of two
    of invocations walking about 8 elements each, up to 256 x 16 elements per block."""
    T = 1
    while T < 256 and T * 8 < L:
        T *= 2
    return T, min(-(-L // T), 16)


def _scan_blocks(client, op: str, x: Tensor, o: Tensor, axis: int, T: int, C: int, nb: int,
                 prefix: Tensor | None, refold: bool = False) -> None:
    """Each workgroup scans one block of T*C elements of 256 // T lines: each invocation walks its C
    elements, the invocations' totals are scanned in workgroup memory, and each invocation walks its
    elements again from everything before them (prefix[b - 1] for block b > 0, and the earlier
    invocations' totals). ``refold`` (T 1, one block): only lines whose last complex value in o is not
    finite."""
    others = [d for d in range(len(x._shape)) if d != axis]
    lead = [x._shape[d] for d in others]
    M = math.prod(lead)
    pstr = list(contiguous_strides(tuple(lead) + (max(nb - 1, 1),))[:-1])
    kshape, (kx, ko, kp) = collapse(lead, [[x._strides[d] for d in others], [o._strides[d] for d in others], pstr])
    nk = len(kshape)
    key = ("scan", op, x._dtype, o._dtype, nk, prefix is not None, refold)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = _build_scan(client, key, op, wt(x._dtype), wt(o._dtype), nk, prefix is not None, refold)
    binds, offsets = (), []
    for t in (o, x) + ((prefix,) if prefix is not None else ()):
        b, e = bind_whole(client, t)
        binds += b
        offsets.append(e)
    G = 256 // T
    n = -(-M // G) * nb
    gx = min(n, MAX_GROUPS)
    words = [n, gx, 0, 0, M, x._shape[axis], T, C, nb, G, x._strides[axis] & _M32, o._strides[axis] & _M32]
    words += offsets
    words += kshape
    for st in (kx, ko, kp):
        words += [s & _M32 for s in st]
    client.dispatch(pipe, pack_words(words), binds, (gx, -(-n // gx), 1))


def _build_scan(client, key, op: str, xw: WgslType, ow: WgslType, nk: int, has_prefix: bool, refold: bool = False):
    lay = Layout()
    W = Layout.word
    M_k, L_k, T_k, C_k, nb_k, G_k, xa_k, oa_k, oe_k, xe_k = (lay.alloc(1) for _ in range(10))
    pe_k = lay.alloc(1) if has_prefix else None
    ks, kxs, kos, kps = (lay.alloc(nk) for _ in range(4))
    lib = WgslHelpers(client.has_f64)
    acc = COMPUTE[ow]
    comb = lambda a, b: _combine(op, acc, lib, a, b)
    i32 = lambda k: f"bitcast<i32>({W(k)})"
    tensors = [(ow, True, refold), (xw, False, False)] + ([(ow, False, False)] if has_prefix else [])
    ld = lambda r: cast(f"ld2(u32(xb + i32({r}) * {i32(xa_k)}))", xw, acc)
    st = lambda r, v: f"st1(u32(ob + i32({r}) * {i32(oa_k)}), {cast(v, acc, ow)});"
    body = [f"var<workgroup> sh: array<{acc.ct}, 256>;\n"
            "@compute @workgroup_size(256)\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
            # every invocation reaches the barriers; one past the end of the data does nothing else
            f"  let g = wid.y * {W(1)} + wid.x;\n  let b = g % {W(nb_k)};\n"
            f"  let line = (g / {W(nb_k)}) * {W(G_k)} + li / {W(T_k)};\n  let lane = li % {W(T_k)};\n"
            f"  let start = (b * {W(T_k)} + lane) * {W(C_k)};\n"
            f"  let end = min(start + {W(C_k)}, {W(L_k)});\n"
            f"  var live = g < {W(0)} && line < {W(M_k)} && start < end;\n"
            f"  var q = line;\n  var xb = {i32(xe_k)};\n  var ob = {i32(oe_k)};\n"
            + (f"  var pb = {i32(pe_k)};\n" if has_prefix else "")]
    for d in range(nk - 1, -1, -1):
        body.append(f"  {{ let c = i32(q % {W(ks + d)}); q = q / {W(ks + d)};"
                    f" xb = xb + c * {i32(kxs + d)}; ob = ob + c * {i32(kos + d)};"
                    + (f" pb = pb + c * {i32(kps + d)};" if has_prefix else "") + " }\n")
    if refold:  # (live stays uniform where it matters: the barriers below are reached by every invocation)
        fin = lib.fn("isfinite", ow.real)
        body.append(f"  if (live) {{\n    let z_ = ld1(u32(ob + i32({W(L_k)} - 1u) * {i32(oa_k)}));\n"
                    f"    live = !({fin}(z_.x) && {fin}(z_.y));\n  }}\n")
    # the first element is taken as it is, not combined with an identity (as NumPy's accumulate):
    # 1 * (inf+0j) is inf+nanj, and 0 + -0.0 is +0.0
    body.append(f"  var tot: {acc.ct};\n"
                f"  if (live) {{\n    tot = {ld('start')};\n"
                f"    for (var r = start + 1u; r < end; r = r + 1u) {{ tot = {comb('tot', ld('r'))}; }}\n  }}\n"
                "  sh[li] = tot;\n  workgroupBarrier();\n"
                # inclusive scan of the totals of each line's invocations (Hillis-Steele)
                f"  for (var s = 1u; s < {W(T_k)}; s = s << 1u) {{\n"
                f"    var t = sh[li];\n    if (lane >= s) {{ t = {comb('sh[li - s]', 't')}; }}\n"
                "    workgroupBarrier();\n    sh[li] = t;\n    workgroupBarrier();\n  }\n"
                f"  if (!live) {{ return; }}\n  var acc = {ld('start')};\n")
    carry = "sh[li - 1u]"
    if has_prefix:
        body.append(f"  if (b > 0u) {{\n    var c = {cast('ld3(u32(pb + i32(b - 1u)))', ow, acc)};\n"
                    f"    if (lane > 0u) {{ c = {comb('c', carry)}; }}\n    acc = {comb('c', 'acc')};\n"
                    f"  }} else if (lane > 0u) {{ acc = {comb(carry, 'acc')}; }}\n")
    else:
        body.append(f"  if (lane > 0u) {{ acc = {comb(carry, 'acc')}; }}\n")
    body.append(f"  {st('start', 'acc')}\n"
                f"  for (var r = start + 1u; r < end; r = r + 1u) {{\n    acc = {comb('acc', ld('r'))};\n"
                f"    {st('r', 'acc')}\n  }}\n}}\n")

    def source() -> str:
        return lay.block() + bindings(tensors) + lib.source() + "".join(body)

    return client.pipeline(key, source, len(tensors), lay.nbytes)


def _diff(client, ins, outs, p):
    x, before, after = ins
    o = outs[0]
    axis, n = p["axis"], p["n"]
    parts = [t for t in (before, x, after) if t is not None]
    from .k_elementwise import _elementwise
    if len(parts) > 1 or n == 0:
        length = sum(t._shape[axis] for t in parts)
        cur = _temp(client, x._shape[:axis] + (length,) + x._shape[axis + 1:], o._dtype) if n else o
        start = 0
        for t in parts:
            copy(client, (t,), (_narrow(cur, axis, start, t._shape[axis]),), {})
            start += t._shape[axis]
    else:
        cur = x
    sub = _elementwise("subtract")
    for i in range(n):
        length = cur._shape[axis] - 1
        dst = o if i == n - 1 else _temp(client, cur._shape[:axis] + (length,) + cur._shape[axis + 1:], o._dtype)
        sub(client, (_narrow(cur, axis, 1, length), _narrow(cur, axis, 0, length)), (dst,), {"dtype": cur._dtype})
        cur = dst


def kernels() -> dict:
    k = {kind: _reduction(kind) for kind in ("sum", "max", "min", "any", "all") + ARG}
    k.update(prod=_prod, mean=_mean, var=_moment(False), std=_moment(True),
             cumulative_sum=_cumulative("cumulative_sum"), cumulative_prod=_cumulative("cumulative_prod"), diff=_diff)
    return k
