"""Indexing kernels: gather and scatter (integer-array and boolean-mask indexing), mask_assign,
mask_count, index_range, nonzero, take_along_axis, repeat and roll.

All are map kernels over the result (or, for scatter, over the indexed shape) with the indexed array
bound whole: index arrays are made views aligned to the iteration space (zero strides on the other
axes), so each invocation loads its indices, wraps negative ones, clips them into the axis (a replay on
new index data never touches memory outside the array) and computes the address. A boolean mask stands
for the row-major positions of its true elements, which a three-step compaction computes on the device:
counts per block of 1024 elements, their exclusive prefix sum, and a workgroup scan that writes each true
element's position.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ...errors import check_host_read
from ._copy_fill import copy, fill
from ._map import Gen, run_map
from ._shader import Layout, MAX_GROUPS, bindings, pack_words
from ._types import WTS, cast, widen, wt
from ._views import window
from .k_reduce import _narrow, _temp, reduce

I32 = WTS[dt.int32]
BLOCK = 1024  # mask elements per workgroup of the compaction


def _clip_index(v: str, w, n: str) -> str:
    """Index value ``v`` (of WT ``w``) into an axis of size ``n`` (an i32 expression): negative wraps,
    the rest clips into [0, n)."""
    if w.family == "u":
        return f"i32(min({v}, {w.ct}({n} - 1)))"
    if w.ct == "i64":
        n64 = widen(n, "i32", "i64")
        return f"i32(clamp(select({v}, {v} + {n64}, {v} < 0li), 0li, {n64} - 1li))"
    return f"clamp(select({v}, {v} + {n}, {v} < 0), 0, {n} - 1)"


def _aligned(t: Tensor, shape: tuple[int, ...], axes: list[int]) -> Tensor:
    """``t`` (broadcastable to the joint index shape) as a view of ``shape`` whose axes ``axes`` are the
    joint ones (zero strides elsewhere)."""
    strides = [0] * len(shape)
    lead = len(axes) - len(t._shape)
    for k, a in enumerate(axes):
        j = k - lead
        if j >= 0 and t._shape[j] != 1:
            strides[a] = t._strides[j]
    return Tensor(t._buf, t._dtype, shape, tuple(strides), t._offset, t._dev)


def _plan(client, x: Tensor, arrays: list[Tensor], p: dict, shape: tuple[int, ...]):
    """Per dimension of x, how its index is found for an element of the indexed ``shape``, and the index
    tensors aligned to ``shape``. Sources: ("slice", result axis, start, step), ("int", value),
    ("array", input number) or ("mask", input number, component, the mask's shape)."""
    key = list(p["key"])
    where = dict(p["arrays"])
    arr_of = dict(zip(sorted(where), arrays))
    advanced = [i for i, e in enumerate(key) if i in where or type(e) is int]
    basic = [i for i, e in enumerate(key) if i not in where and type(e) is not int]
    jn = len(shape) - len(basic)  # the joint (broadcast) shape of the advanced entries has jn axes
    adjacent = advanced == list(range(advanced[0], advanced[0] + len(advanced)))
    j0 = sum(1 for i in basic if i < advanced[0]) if adjacent else 0
    joint = list(range(j0, j0 + jn))
    axis_of = {}
    r = 0
    for i in basic:
        if r == j0:
            r += jn
        axis_of[i] = r
        r += 1
    sources = []
    index_ins: list[Tensor] = []
    for i, e in enumerate(key):
        if i in where:
            a = arr_of[i]
            if where[i] is None:  # a mask: the positions of its true elements, unravelled per dimension
                index_ins.append(_aligned(_mask_positions(client, a), shape, joint))
                sources += [("mask", len(index_ins) - 1, c, a._shape) for c in range(a.ndim)]
            else:
                index_ins.append(_aligned(a, shape, joint))
                sources.append(("array", len(index_ins) - 1))
        elif type(e) is int:
            sources.append(("int", e))
        elif isinstance(e, slice):
            start, _, step = e.indices(x._shape[len(sources)])
            sources.append(("slice", axis_of[i], start, step))
    return sources, index_ins


def _address(g: Gen, j: int, sources, nin_offset: int) -> str:
    """The element offset in raw tensor ``j`` (the indexed x) of this invocation's element."""
    terms = [g.raw_offset(j)]
    pk = 0
    for d, s in enumerate(sources):
        if s[0] == "slice":
            idx = f"({g.param(pk)} + i32({g.coord(s[1])}) * {g.param(pk + 1)})"
            pk += 2
        elif s[0] == "int":
            idx = g.param(pk)
            pk += 1
        elif s[0] == "array":
            k = s[1] + nin_offset
            idx = _clip_index(g.val(k), g.wt_in(k), g.raw_size(j, d))
        else:  # a mask component: the flat position divided by the size of the mask's later axes
            idx = f"((i32({g.val(s[1] + nin_offset)}) / {g.param(pk)}) % {g.param(pk + 1)})"
            pk += 2
        terms.append(f"{idx} * {g.raw_stride(j, d)}")
    return " + ".join(terms)


def _params(sources) -> list:
    vals = []
    for s in sources:
        if s[0] == "slice":
            vals += [(I32, s[2]), (I32, s[3])]
        elif s[0] == "int":
            vals.append((I32, s[1]))
        elif s[0] == "mask":
            vals += [(I32, math.prod(s[3][s[2] + 1:])), (I32, s[3][s[2]])]
    return vals


def _structure(sources) -> tuple:
    """What of the sources shapes the shader (values go in the uniform)."""
    return tuple(s[:2] if s[0] != "int" else s[:1] for s in sources)


def _gather(client, ins, outs, p):
    x, arrays = ins[0], list(ins[1:])
    o = outs[0]
    sources, index_ins = _plan(client, x, arrays, p, o._shape)
    run_map(client, "gather", _structure(sources), [o], index_ins,
            lambda g: g.store(0, g.raw_load(0, _address(g, 0, sources, 0))),
            params=_params(sources), coords=True, raw=[(x, False)])


def _scatter(client, ins, outs, p):
    value, arrays = ins[0], list(ins[1:])
    x = outs[0]
    shape = p["shape"]  # the shape of x[key], which value (a tensor) is broadcast to
    if type(value) is Tensor and value._buf is x._buf:  # reading what the scatter overwrites: copy first
        c = _temp(client, value._shape, value._dtype)
        copy(client, (value,), (c,), {})
        value = c
    sources, index_ins = _plan(client, x, arrays, p, shape)
    xw = wt(x._dtype)

    def body(g: Gen) -> str:
        return g.raw_store(0, _address(g, 0, sources, 1), cast(g.val(0), g.wt_in(0), xw))

    run_map(client, "scatter", _structure(sources), [], [value] + index_ins, body, params=_params(sources),
            coords=True, raw=[(x, True)], shape=shape)


def _mask_assign(client, ins, outs, p):
    ow = wt(outs[0]._dtype)

    def body(g: Gen) -> str:
        return f"  if ({g.val(0)}) {{\n  {g.store(0, cast(g.val(1), g.wt_in(1), ow))}  }}\n"

    run_map(client, "mask_assign", None, outs, ins, body, fusable=False)


def _mask_count_kernel(client, ins, outs, p):
    reduce(client, "count_nonzero", ins[0], tuple(range(len(ins[0]._shape))), outs[0])


def _index_range(client, ins, outs, p):
    a, o = ins[0], outs[0]
    axes = tuple(range(len(a._shape)))
    for k, kind in enumerate(("min", "max")):
        reduce(client, kind, a, axes, Tensor(o._buf, o._dtype, (), (), o._offset + k * o._strides[0], o._dev))


def _count_nonzero(client, ins, outs, p):
    reduce(client, "count_nonzero", ins[0], tuple(p["axis"]), outs[0])


# --- compaction: the row-major positions of the true elements of a mask ------------------------------

def _mask_positions(client, mask: Tensor) -> Tensor:
    """A new int32 tensor (count,) of the flat row-major positions of mask's true (non-zero) elements."""
    n = math.prod(mask._shape)
    nb = -(-n // BLOCK)
    flags = _temp(client, (nb * BLOCK,), dt.bool_)
    from .k_reduce import _cumulative
    if nb * BLOCK > n:
        fill(client, (), (_narrow(flags, 0, n, nb * BLOCK - n),), {"value": np.bool_(False)})
    copy(client, (mask,), (Tensor(flags._buf, dt.bool_, mask._shape, contiguous_strides(mask._shape), 0,
                                    client.device),), {})
    counts = _temp(client, (nb,), dt.int32)
    reduce(client, "count_nonzero", Tensor(flags._buf, dt.bool_, (nb, BLOCK), (BLOCK, 1), 0, client.device),
           (1,), counts, acc_dtype=dt.int32)
    ends = _temp(client, (nb,), dt.int32)  # inclusive prefix sums: a block's positions start at end - count
    _cumulative("cumulative_sum")(client, (counts,), (ends,), {"axis": 0})
    pos = _temp(client, (_host_count(client, ends, nb),), dt.int32)
    if pos._shape[0]:
        _compact(client, flags, counts, ends, pos, nb)
    return pos


def _host_count(client, offsets: Tensor, nb: int) -> int:
    check_host_read(client.device, "boolean-mask indexing")
    host = np.empty((1,), np.int32)
    client.copy_from_device(offsets._buf, (nb - 1) * 4, host)
    return int(host[0])


def _compact(client, flags: Tensor, counts: Tensor, offsets: Tensor, pos: Tensor, nb: int) -> None:
    key = ("compact",)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        lay = Layout()
        W = Layout.word
        src = (lay.block() + bindings([(I32, True, False), (WTS[dt.bool_], False, False), (I32, False, False),
                                       (I32, False, False)])
               + "var<workgroup> sc: array<u32, 256>;\n"
               "@compute @workgroup_size(256)\n"
               "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
               f"  let b = wid.y * {W(1)} + wid.x;\n  if (b >= {W(0)}) {{ return; }}\n"
               "  let base = b * 1024u + li * 4u;\n  var f: array<u32, 4>;\n  var c = 0u;\n"
               "  for (var k = 0u; k < 4u; k++) { f[k] = select(0u, 1u, ld2(base + k)); c += f[k]; }\n"
               "  sc[li] = c;\n  workgroupBarrier();\n"
               "  for (var s = 1u; s < 256u; s = s << 1u) {\n"
               "    var t = 0u;\n    if (li >= s) { t = sc[li - s]; }\n    workgroupBarrier();\n"
               "    sc[li] = sc[li] + t;\n    workgroupBarrier();\n  }\n"
               "  var at = u32(ld4(b) - ld3(b)) + sc[li] - c;\n"
               "  for (var k = 0u; k < 4u; k++) { if (f[k] != 0u) { st1(at, i32(base + k)); at += 1u; } }\n"
               "}\n")
        pipe = client.pipeline(key, lambda: src, 4, lay.nbytes)
    binds = ()
    for t in (pos, flags, counts, offsets):
        b0, size, _ = window(client, t)
        binds += (t._buf.handle, b0, size)
    gx = min(nb, MAX_GROUPS)
    client.dispatch(pipe, pack_words([nb, gx, 0, 0]), binds, (gx, -(-nb // gx), 1))


def _nonzero(client, ins, outs, p):
    x = ins[0]
    pos = _mask_positions(client, x)
    for c, o in enumerate(outs):
        ow = wt(o._dtype)
        run_map(client, "nonzero", None, [o], [pos],
                lambda g: g.store(0, cast(f"((u32({g.val(0)}) / {g.param(0)}) % {g.param(1)})", WTS[dt.uint32], ow)),
                params=[(WTS[dt.uint32], math.prod(x._shape[c + 1:])), (WTS[dt.uint32], x._shape[c])])


# --- take_along_axis, repeat, roll -----------------------------------------------------------------

def _take_along_axis(client, ins, outs, p):
    x, idx = ins
    o = outs[0]
    axis = p["axis"]

    def body(g: Gen) -> str:
        terms = [g.raw_offset(0)]
        for d in range(len(o._shape)):
            c = _clip_index(g.val(0), g.wt_in(0), g.raw_size(0, d)) if d == axis else f"i32({g.coord(d)})"
            terms.append(f"{c} * {g.raw_stride(0, d)}")
        return g.store(0, g.raw_load(0, " + ".join(terms)))

    run_map(client, "take_along_axis", axis, [o], [idx], body, coords=True, raw=[(x, False)])


def _repeat(client, ins, outs, p):
    x, o = ins[0], outs[0]
    axis = p["axis"]
    table = np.repeat(np.arange(len(p["repeats"]), dtype=np.int32), p["repeats"])
    t = _temp(client, table.shape, dt.int32)
    client.copy_to_device(table, t._buf, 0)
    tv = Tensor(t._buf, dt.int32, o._shape, tuple(1 if d == axis else 0 for d in range(len(o._shape))), 0,
                client.device)

    def body(g: Gen) -> str:
        terms = [g.raw_offset(0)] + [f"{g.val(0) if d == axis else f'i32({g.coord(d)})'} * {g.raw_stride(0, d)}"
                                     for d in range(len(o._shape))]
        return g.store(0, g.raw_load(0, " + ".join(terms)))

    run_map(client, "repeat", axis, [o], [tv], body, coords=True, raw=[(x, False)])


def _roll(client, ins, outs, p):
    x, o = ins[0], outs[0]
    shape = x._shape
    nd = len(shape)
    U32 = WTS[dt.uint32]
    if p["axis"] is None:  # the flattened array rolled: its source flat index, unravelled over the shape
        total = math.prod(shape)
        cs = contiguous_strides(shape)
        params = [(U32, total - p["shift"]), (U32, total)] + [(U32, s) for s in cs]

        def body(g: Gen) -> str:
            flat = " + ".join(f"{g.coord(d)} * {g.param(2 + d)}" for d in range(nd))
            terms = [g.raw_offset(0)] + [f"i32((src / {g.param(2 + d)}) % u32({g.raw_size(0, d)})) * "
                                         f"{g.raw_stride(0, d)}" for d in range(nd)]
            return (f"  let src = ({flat} + {g.param(0)}) % {g.param(1)};\n"
                    + g.store(0, g.raw_load(0, " + ".join(terms))))

        key = "flat"
    else:
        shifts = dict(zip(p["axis"], p["shift"]))
        params = [(U32, shape[d] - shifts.get(d, 0)) for d in range(nd)]

        def body(g: Gen) -> str:
            terms = [g.raw_offset(0)] + [f"i32(({g.coord(d)} + {g.param(d)}) % u32({g.raw_size(0, d)})) * "
                                         f"{g.raw_stride(0, d)}" for d in range(nd)]
            return g.store(0, g.raw_load(0, " + ".join(terms)))

        key = "axes"
    run_map(client, "roll", key, [o], [], body, params=params, coords=True, raw=[(x, False)])


def kernels() -> dict:
    return {"gather": _gather, "scatter": _scatter, "mask_assign": _mask_assign, "mask_count": _mask_count_kernel,
            "index_range": _index_range, "count_nonzero": _count_nonzero, "nonzero": _nonzero,
            "take_along_axis": _take_along_axis, "repeat": _repeat, "roll": _roll}
