"""Reductions (sum, prod, max, min, mean, var, std, all, any), cumulative sums and products, and diff.

One template for every reduction: the kept dimensions index the outputs, the reduced dimensions are
walked by either one invocation per output (short reductions) or one workgroup per output (a strided
loop then a tree in workgroup memory). A long reduction with few outputs is split into P parts per
output whose partial results are reduced again, so that the whole device works on it. An input larger
than one storage binding is split into pieces along its outer dimension, reduced piece by piece, and
the pieces' results reduced again. mean, var and std are sums followed by element-wise finishing.
"""

from __future__ import annotations

import math


from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ._client import WebGPUClient, pack_words
from ._lib import BOOL, Lib
from ._map import Gen, run_map, window as _window
from ._shader import Layout, MAX_GROUPS, bindings
from ._types import COMPUTE, WT, cast, lit, wt

_M32 = 0xFFFFFFFF
WG = 256


def _acc_wt(kind: str, x: dt.DType, o: dt.DType) -> WT:
    if kind in ("any", "all"):
        return BOOL
    if kind in ("max", "min", "sqdev"):
        return COMPUTE[wt(x)]
    return COMPUTE[wt(o)]


def _identity(kind: str, a: WT, lib: Lib) -> str:
    if kind in ("sum", "sqdev", "count_nonzero"):
        return lit(a, 0)
    if kind == "prod":
        return lit(a, 1)
    if kind == "any":
        return "false"
    if kind == "all":
        return "true"
    lowest = kind == "max"
    if a.family == "f":
        return f"{'-' if lowest else ''}{lib.fn('inf', a)}()"
    bits = int(a.ct[1:])
    if a.family == "u":
        return lit(a, 0 if lowest else (1 << bits) - 1)
    return lit(a, -(1 << (bits - 1)) if lowest else (1 << (bits - 1)) - 1)


def _combine(kind: str, a: WT, lib: Lib, x: str, y: str) -> str:
    if kind in ("sum", "sqdev", "count_nonzero"):
        return f"({x} + {y})"
    if kind == "prod":
        return f"{lib.fn('cmul', a)}({x}, {y})" if a.family == "c" else f"({x} * {y})"
    if kind == "any":
        return f"({x} || {y})"
    if kind == "all":
        return f"({x} && {y})"
    if a.family == "f":
        return f"{lib.fn('fmax' if kind == 'max' else 'fmin', a)}({x}, {y})"
    return f"{kind}({x}, {y})"


def _collapse(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merge dimensions contiguous in every stride list, dropping length-1 ones (at least one dim kept)."""
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in strides]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        if dims and all(o[-1] == s[d] * n for o, s in zip(out, strides)):
            dims[-1] *= n
            for o, s in zip(out, strides):
                o[-1] = s[d]
            continue
        dims.append(n)
        for o, s in zip(out, strides):
            o.append(s[d])
    if not dims:
        return [1], [[0] for _ in strides]
    return dims, out


def _temp(client: WebGPUClient, shape: tuple[int, ...], dtype: dt.DType) -> Tensor:
    n = math.prod(shape)
    return Tensor(client.alloc(max(n, 1) * dtype.itemsize), dtype, shape, contiguous_strides(shape), 0, client.device)


def reduce(client: WebGPUClient, kind: str, x: Tensor, axes: tuple[int, ...], o: Tensor, mean: Tensor | None = None,
           acc_dtype: dt.DType | None = None) -> None:
    """o (shaped like x's kept dimensions, length-1 ones allowed) = the ``kind`` reduction of x over ``axes``.
    ``mean`` (sqdev only): per-output values subtracted before squaring, shaped like o."""
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
    limit = client.max_binding
    if _window(client, x)[1] > limit:
        _reduce_split(client, kind, x, axes, kept, o, mean, acc)
        return
    kshape, (kx, ko, km) = _collapse(oshape, [[x._strides[d] for d in kept], ostr, mstr or [0] * len(kept)])
    rshape, (rx,) = _collapse([x._shape[d] for d in axes], [[x._strides[d] for d in axes]])
    if K <= 32 or M >= 16384:
        _launch(client, kind, "thread", x, o, mean, acc, kshape, kx, ko, km, rshape, rx, M, K, 1, 0)
        return
    parts = 1 if M >= 512 else max(1, min(-(-K // (WG * 64)), 4096 // M, MAX_GROUPS))
    if parts == 1:
        _launch(client, kind, "group", x, o, mean, acc, kshape, kx, ko, km, rshape, rx, M, K, 1, 0)
        return
    # partial results per (output, part), contiguous as (M, parts), then reduced over the parts
    partial = _temp(client, (M, parts), acc.dtype)
    pk = contiguous_strides(tuple(kshape))
    _launch(client, kind, "group", x, partial, mean, acc, kshape, kx, [parts * s for s in pk], km, rshape, rx,
            M, K, parts, 1)
    second = "sum" if kind in ("sqdev", "count_nonzero") else kind
    pv = Tensor(partial._buf, acc.dtype, tuple(kshape) + (parts,), tuple(parts * s for s in pk) + (1,), 0,
                client.device)
    ov = Tensor(o._buf, o._dtype, tuple(kshape), tuple(ko), o._offset, o._dev)
    reduce(client, second, pv, (len(kshape),), ov, acc_dtype=acc.dtype)


def _kept_strides(t: Tensor, kept: list[int]) -> list[int]:
    """Strides of ``t`` over x's kept dimensions ``kept``: ``t`` is shaped like them, or like x with
    length-1 reduced dimensions (keepdims)."""
    if len(t._shape) == len(kept):
        return list(t._strides)
    return [t._strides[d] for d in kept]


def _reduce_split(client, kind, x, axes, kept, o, mean, acc) -> None:
    """A reduction whose input exceeds one storage binding: split along x's outer kept dimension (outputs
    independent) or else its outer reduced dimension (pieces reduced, then their results)."""
    okept = [d for d in range(len(o._shape))] if len(o._shape) == len(kept) else None
    for d in kept:
        if x._shape[d] > 1:
            h = x._shape[d] // 2
            od = kept.index(d) if okept is not None else d
            for start, length in ((0, h), (h, x._shape[d] - h)):
                reduce(client, kind, _narrow(x, d, start, length), axes, _narrow(o, od, start, length),
                       None if mean is None else _narrow(mean, od, start, length), acc.dtype)
            return
    d = next(a for a in axes if x._shape[a] > 1)
    h = x._shape[d] // 2
    pieces = _temp(client, (2,) + o._shape, acc.dtype)
    for k, (start, length) in enumerate(((0, h), (h, x._shape[d] - h))):
        row = Tensor(pieces._buf, acc.dtype, o._shape, pieces._strides[1:], k * pieces._strides[0], o._dev)
        reduce(client, kind, _narrow(x, d, start, length), axes, row, mean, acc.dtype)
    reduce(client, "sum" if kind in ("sqdev", "count_nonzero") else kind, pieces, (0,), o, acc_dtype=acc.dtype)


def _narrow(t: Tensor, d: int, start: int, length: int) -> Tensor:
    shape = t._shape[:d] + (length,) + t._shape[d + 1:]
    return Tensor(t._buf, t._dtype, shape, t._strides, t._offset + start * t._strides[d], t._dev)


def _launch(client, kind, variant, x, o, mean, acc, kshape, kx, ko, km, rshape, rx, M, K, parts, opart) -> None:
    nk, nr = len(kshape), len(rshape)
    has_mean = mean is not None
    key = ("reduce", kind, variant, x._dtype, o._dtype, acc.dtype, nk, nr, has_mean)
    pipe = client._pipelines.get(key)
    if pipe is None:
        pipe = _build(client, key, kind, variant, wt(x._dtype), wt(o._dtype), acc, nk, nr, has_mean)
    xb, xs, xe = _window(client, x)
    ob, os_, oe = _window(client, o)
    binds = (o._buf.handle, ob, os_, x._buf.handle, xb, xs)
    n = M if variant == "thread" else M * parts
    g = -(-n // WG) if variant == "thread" else n
    gx = min(g, MAX_GROUPS)
    gy = -(-g // gx)
    words = [n, gx, 0, 0, parts, K, oe, xe, opart]
    words += kshape
    words += [s & _M32 for s in kx]
    words += [s & _M32 for s in ko]
    words += rshape
    words += [s & _M32 for s in rx]
    if has_mean:
        mb, ms, me = _window(client, mean)
        binds += (mean._buf.handle, mb, ms)
        words.append(me)
        words += [s & _M32 for s in km]
    client.dispatch(pipe, pack_words(words), binds, (gx, gy, 1))


def _build(client, key, kind, variant, xw: WT, ow: WT, acc: WT, nk: int, nr: int, has_mean: bool):
    lay = Layout()
    W = Layout.word
    parts_k, k_k, oe_k, xe_k, opart_k = (lay.alloc(1) for _ in range(5))
    ks = lay.alloc(nk)
    kxs = lay.alloc(nk)
    kos = lay.alloc(nk)
    rs = lay.alloc(nr)
    rxs = lay.alloc(nr)
    if has_mean:
        me_k = lay.alloc(1)
        kms = lay.alloc(nk)
    lib = Lib(client.has_f64)
    comb = lambda a, b: _combine(kind, acc, lib, a, b)
    ident = _identity(kind, acc, lib)
    tensors = [(ow, True, False), (xw, False, False)] + ([(acc, False, False)] if has_mean else [])
    i32 = lambda k: f"bitcast<i32>({W(k)})"
    # value of one element
    if kind in ("any", "all"):
        val = lambda v: cast(v, xw, BOOL)
    elif kind == "count_nonzero":
        val = lambda v: cast(cast(v, xw, BOOL), BOOL, acc)
    elif kind == "sqdev":
        val = lambda v: f"sq({cast(v, xw, acc)} - m)"
    else:
        val = lambda v: cast(v, xw, acc)
    src = [lay.block(), bindings(tensors)]
    if kind == "sqdev":
        src.append(f"fn sq(d: {acc.ct}) -> {acc.ct} {{ return d * d; }}\n")
    body = []
    # the kept coordinates of output oi give the bases of x, o (and the mean)
    body.append("  var q = oi;\n  var xb = " + i32(xe_k) + ";\n  var ob = " + i32(oe_k) + ";\n")
    if has_mean:
        body.append("  var mb = " + i32(me_k) + ";\n")
    for d in range(nk - 1, -1, -1):
        body.append(f"  {{ let c = i32(q % {W(ks + d)}); q = q / {W(ks + d)};\n"
                    f"    xb = xb + c * {i32(kxs + d)}; ob = ob + c * {i32(kos + d)};"
                    + (f" mb = mb + c * {i32(kms + d)};" if has_mean else "") + " }\n")
    if has_mean:
        body.append("  let m = ld3(u32(mb));\n")
    if nr == 1:  # one reduced dimension (the common case after merging): no division per element
        walk = [f"    let xo = xb + i32(r) * {i32(rxs)};\n"]
    else:
        walk = ["    var rq = r;\n    var xo = xb;\n"]
        for d in range(nr - 1, -1, -1):
            walk.append(f"    {{ let c = i32(rq % {W(rs + d)}); rq = rq / {W(rs + d)};"
                        f" xo = xo + c * {i32(rxs + d)}; }}\n")
    walk.append(f"    acc = {comb('acc', val('ld2(u32(xo))'))};\n")
    store = f"st1(u32(ob), {cast('ACC', acc, ow)});"
    if variant == "thread":
        src.append("@compute @workgroup_size(256)\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                   f"  let oi = (wid.y * {W(1)} + wid.x) * 256u + li;\n  if (oi >= {W(0)}) {{ return; }}\n")
        src += body
        src.append(f"  var acc = {ident};\n  for (var r = 0u; r < {W(k_k)}; r = r + 1u) {{\n")
        src += walk
        src.append("  }\n  " + store.replace("ACC", "acc") + "\n}\n")
    else:
        src.append(f"var<workgroup> sh: array<{acc.ct}, 256>;\n"
                   "@compute @workgroup_size(256)\n"
                   "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
                   f"  let g = wid.y * {W(1)} + wid.x;\n  if (g >= {W(0)}) {{ return; }}\n"
                   f"  let oi = g / {W(parts_k)};\n  let part = g % {W(parts_k)};\n")
        src += body
        src.append(f"  ob = ob + i32(part) * {i32(opart_k)};\n")
        src.append(f"  var acc = {ident};\n  let step = {W(parts_k)} * 256u;\n  var r = part * 256u + li;\n")
        if nr == 1:  # four independent loads in flight per iteration: memory-level parallelism
            v = [val(f"ld2(u32(xb + i32(r + {k}u * step) * {i32(rxs)}))") for k in range(4)]
            src.append(f"  loop {{\n    if (r + 3u * step >= {W(k_k)}) {{ break; }}\n"
                       f"    acc = {comb('acc', comb(comb(v[0], v[1]), comb(v[2], v[3])))};\n"
                       "    r = r + 4u * step;\n  }\n")
        src.append(f"  for (; r < {W(k_k)}; r = r + step) {{\n")
        src += walk
        src.append("  }\n  sh[li] = acc;\n  workgroupBarrier();\n"
                   "  for (var s = 128u; s > 0u; s = s >> 1u) {\n"
                   f"    if (li < s) {{ sh[li] = {comb('sh[li]', 'sh[li + s]')}; }}\n    workgroupBarrier();\n  }}\n"
                   "  if (li == 0u) { " + store.replace("ACC", "sh[0]") + " }\n}\n")

    def source() -> str:
        return src[0] + src[1] + lib.source() + "".join(src[2:])

    return client.pipeline(key, source, len(tensors), lay.nbytes)


# --- the kernels of the reductions family --------------------------------------------------------------

def _reduction(kind: str):
    def kernel(client, ins, outs, p):
        reduce(client, kind, ins[0], tuple(p["axis"]), outs[0])
    return kernel


def _mean(client, ins, outs, p):
    x, o = ins[0], outs[0]
    axes = tuple(p["axis"])
    reduce(client, "sum", x, axes, o)
    K = math.prod(x._shape[a] for a in axes)
    _scale(client, o, "divide", K)


def _scale(client, o: Tensor, op: str, value) -> None:
    """o = op(o, value) in place (value a Python number, as o's dtype)."""
    from .k_elementwise import _elementwise
    _elementwise(op)(client, (o, o._dtype.np.type(value)), (o,), {})


def _moment(std: bool):
    def kernel(client, ins, outs, p):
        x, o = ins[0], outs[0]
        axes = tuple(p["axis"])
        K = math.prod(x._shape[a] for a in axes)
        m = _temp(client, o._shape, o._dtype)
        reduce(client, "sum", x, axes, m)
        _scale(client, m, "divide", K)
        reduce(client, "sqdev", x, axes, o, mean=m)
        _scale(client, o, "divide", max(K - p["correction"], 0))
        if std:
            from .k_elementwise import _elementwise
            _elementwise("sqrt")(client, (o,), (o,), {})
    return kernel


def _cumulative(kind: str):
    def kernel(client, ins, outs, p):
        x, o = ins[0], outs[0]
        axis = p["axis"]
        acc = COMPUTE[wt(o._dtype)]
        others = [d for d in range(len(x._shape)) if d != axis]
        xw, ow = wt(x._dtype), wt(o._dtype)
        op = "sum" if kind == "cumulative_sum" else "prod"

        def body(g: Gen) -> str:
            # one invocation per line along the axis; x and o bound whole and walked by hand
            base = [" + ".join([g.raw_offset(j)] + [f"i32({g.coord(c)}) * {g.raw_stride(j, d)}"
                                                    for c, d in enumerate(others)]) for j in (0, 1)]
            # the first element is copied, not combined with the identity (as NumPy's accumulate): 1 * (inf+0j)
            # is inf+nanj, and 0 + -0.0 is +0.0
            elem = cast(g.raw_load(0, 'xo'), xw, acc)  # the element at xo
            store = g.raw_store(1, 'oo', cast('acc', acc, ow))
            return (f"  var xo = {base[0]};\n  var oo = {base[1]};\n  var acc = {elem};\n{store}"
                    f"  for (var r = 1; r < {g.raw_size(0, axis)}; r = r + 1) {{\n"
                    f"    xo = xo + {g.raw_stride(0, axis)};\n    oo = oo + {g.raw_stride(1, axis)};\n"
                    f"    acc = {_combine(op, acc, g.lib, 'acc', elem)};\n  {store}  }}\n")

        run_map(client, kind, (axis, len(x._shape)), [], (), body, coords=True, raw=[(x, False), (o, True)],
                shape=tuple(x._shape[d] for d in others) or (1,))
    return kernel


def _diff(client, ins, outs, p):
    x, before, after = ins
    o = outs[0]
    axis, n = p["axis"], p["n"]
    parts = [t for t in (before, x, after) if t is not None]
    from .k_elementwise import _copy, _elementwise
    if len(parts) > 1 or n == 0:
        length = sum(t._shape[axis] for t in parts)
        cur = _temp(client, x._shape[:axis] + (length,) + x._shape[axis + 1:], o._dtype) if n else o
        start = 0
        for t in parts:
            _copy(client, (t,), (_narrow(cur, axis, start, t._shape[axis]),), {})
            start += t._shape[axis]
    else:
        cur = x
    sub = _elementwise("subtract")
    for i in range(n):
        length = cur._shape[axis] - 1
        dst = o if i == n - 1 else _temp(client, cur._shape[:axis] + (length,) + cur._shape[axis + 1:], o._dtype)
        sub(client, (_narrow(cur, axis, 1, length), _narrow(cur, axis, 0, length)), (dst,), {})
        cur = dst


def kernels() -> dict:
    k = {kind: _reduction(kind) for kind in ("sum", "prod", "max", "min", "any", "all")}
    k.update(mean=_mean, var=_moment(False), std=_moment(True), cumulative_sum=_cumulative("cumulative_sum"),
             cumulative_prod=_cumulative("cumulative_prod"), diff=_diff)
    return k
