"""Map kernels: every element-wise function, copy (casts), fill, where, clip, and the creation kernels
arange, linspace, eye, tril and triu. Each is a body for the one template of ``_map_template``."""

from __future__ import annotations

import numpy as np

from ... import _dtypes as dt
from ...kernels import OPS
from . import _elementwise_exprs
from ._copy_fill import copy as _copy, fill as _fill
from ._map_template import MapCodegen, run_map
from ._types import COMPUTE, F32, F64, WGSL_TYPES, cast, wt


# float64 functions computed by numr's WGSL libm (polynomials and their reductions): a capture does not merge
# their launches with others, since a driver's compiler may schedule (and contract) a routine's arithmetic
# otherwise inside a larger shader; the H200's replay of a fused float64 hypot-then-sin was an ulp off eager
_F64_LIBM = frozenset({"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
                       "log1p", "log2", "log10", "sin", "sinh", "tan", "tanh", "atan2", "hypot", "logaddexp",
                       "pow"})


def _elementwise(name: str):
    libm = name in _F64_LIBM

    def kernel(client, ins, outs, p):
        cdt = p["dtype"]  # the operands' promoted dtype, passed by the launch
        c = COMPUTE[wt(cdt)]
        ow = wt(outs[0]._dtype)
        nin = len(ins)  # (not ins itself: a captured body must not keep tensors, and so their memory, alive)
        # x ** 2: the float64 routine's own branch for an exponent of 2, x * x (exact for float32 operands,
        # then narrowed), without the rest of the routine; its results bit for bit (k-means' distances)
        square = (name == "pow" and c.family == "f" and client.has_f64 and isinstance(ins[1], np.generic)
                  and ins[1] == 2)

        def body(g: MapCodegen) -> str:
            args = [cast(g.val(k), g.wt_in(k), c) for k in range(nin)]
            if square:
                if c.ct == "f32":
                    return g.store(0, cast(f"{g.lib.fn('fsquare', c)}({args[0]})", c, ow))
                return g.store(0, cast(f"({args[0]} * {args[0]})", c, ow))
            e, rw = _elementwise_exprs.expr(name, c, args, g.lib)
            return g.store(0, cast(e, rw, ow))

        run_map(client, name, (cdt, "square") if square else cdt, outs, ins, body,
                fusable=not (libm and c.ct == "f64"))
    return kernel


def _where(client, ins, outs, p):
    ow = wt(outs[0]._dtype)

    def body(g: MapCodegen) -> str:
        a = cast(g.val(1), g.wt_in(1), ow)
        b = cast(g.val(2), g.wt_in(2), ow)
        if ow.ct == "f32":  # the bits, not a float move (NVIDIA's driver flushed subnormals through one)
            return g.store(0, f"bitcast<f32>(select(bitcast<u32>({b}), bitcast<u32>({a}), {g.val(0)}))")
        return g.store(0, f"select({b}, {a}, {g.val(0)})")

    run_map(client, "where", None, outs, ins, body)


def _clip(client, ins, outs, p):
    # ins: x, then min and max as tensors (broadcast), NumPy scalars of x's dtype, or None
    cdt = p["dtype"]
    c = COMPUTE[wt(cdt)]
    ow = wt(outs[0]._dtype)
    fmax, fmin = ("fmax", "fmin") if c.family == "f" else (None, None)

    def body(g: MapCodegen) -> str:
        r = cast(g.val(0), g.wt_in(0), c)
        for k, f, builtin in ((1, fmax, "max"), (2, fmin, "min")):
            if g.wt_in(k) is not None:
                v = cast(g.val(k), g.wt_in(k), c)
                r = f"{g.lib.fn(f, c) if f else builtin}({r}, {v})"
        return g.store(0, cast(r, c, ow))

    run_map(client, "clip", cdt, outs, ins, body)


# --- creation ---------------------------------------------------------------------------------------

def _arith_wt(client, out_dtype: dt.DType, exact_int: bool):
    """The WgslType arange/linspace compute in: the output's own integer type (wrapping arithmetic gives the
    exact values the namespace checked fit), else float64 where available (as NumPy computes)."""
    w = COMPUTE[wt(out_dtype)]
    if exact_int and w.family in "iu":
        return w
    return F64 if client.has_f64 else F32


def _arange(client, ins, outs, p):
    o = outs[0]
    start, step = p["start"], p["step"]
    exact = all(isinstance(v, (int, np.integer)) for v in (start, step))
    a = _arith_wt(client, o._dtype, exact)
    if a.family in "iu":
        mod = 1 << int(a.ct[1:])
        start, step = int(start) % mod, int(step) % mod
        pw = WGSL_TYPES[dt.uint32] if a.ct[1:] == "32" else WGSL_TYPES[dt.uint64]
        vals = [(pw, start), (pw, step)]  # as unsigned bits: the arithmetic wraps modulo 2^bits
        idx = lambda g: f"(bitcast<{a.ct}>({g.param(0)}) + {a.ct}({g.coord(0)}) * bitcast<{a.ct}>({g.param(1)}))"
    else:
        vals = [(a, float(start)), (a, float(step))]
        idx = lambda g: f"({g.param(0)} + {a.ct}({g.coord(0)}) * {g.param(1)})"
    ow = wt(o._dtype)
    run_map(client, "arange", a.ct, outs, (), lambda g: g.store(0, cast(idx(g), a, ow)), params=vals, coords=True)


def _linspace(client, ins, outs, p):
    o = outs[0]
    num = o._shape[0]
    ow = wt(o._dtype)
    a = F64 if client.has_f64 else F32
    start, stop = complex(p["start"]), complex(p["stop"])
    endpoint = p["endpoint"]
    div = num - 1 if endpoint else num
    delta = stop - start
    parts = (0, 1) if ow.family == "c" else (0,)
    # NumPy: y = i * step + start, or (i / div) * delta + start where a step is 0; the last is stop
    vals = []
    for part in parts:
        s0, d, e = (start.real, delta.real, stop.real) if part == 0 else (start.imag, delta.imag, stop.imag)
        vals += [(a, s0), (a, d / div if div > 0 else float("nan")), (a, d), (a, e)]
    vals += [(a, float(div)), (WGSL_TYPES[dt.uint32], num - 1)]
    mode = "step" if div > 0 and all(v[1] != 0 for v in vals[1:-2:4]) else "scaled" if div > 0 else "delta"
    last = endpoint and num > 1

    def body(g: MapCodegen) -> str:
        i = f"{a.ct}({g.coord(0)})"
        comps = []
        for k in range(len(parts)):
            s0, step, d, e = (g.param(4 * k + j) for j in range(4))
            y = {"step": f"({i} * {step} + {s0})", "scaled": f"(({i} / {g.param(4 * len(parts))}) * {d} + {s0})",
                 "delta": f"({i} * {d} + {s0})"}[mode]
            if last:
                y = f"select({y}, {e}, {g.coord(0)} == {g.param(4 * len(parts) + 1)})"
            comps.append(y)
        if ow.family == "c":
            src = WGSL_TYPES[dt.complex128] if a is F64 else WGSL_TYPES[dt.complex64]
            return g.store(0, cast(f"{src.ct}({comps[0]}, {comps[1]})", src, ow))
        return g.store(0, cast(comps[0], a, ow))

    run_map(client, "linspace", (a.ct, mode, last), outs, (), body, params=vals, coords=True)


def _eye(client, ins, outs, p):
    ow = wt(outs[0]._dtype)
    one, zero = _one_zero(ow)
    k = max(min(int(p["k"]), 2 ** 31 - 1), -2 ** 31)
    run_map(client, "eye", None, outs, (), lambda g: g.store(
        0, f"select({zero}, {one}, i32({g.coord(1)}) - i32({g.coord(0)}) == {g.param(0)})"),
        params=[(WGSL_TYPES[dt.int32], k)], coords=True)


def _one_zero(w) -> tuple[str, str]:
    return cast("true", WGSL_TYPES[dt.bool_], w), cast("false", WGSL_TYPES[dt.bool_], w)


def _tri(lower: bool):
    def kernel(client, ins, outs, p):
        x = ins[0]
        ow = wt(outs[0]._dtype)
        nd = len(x._shape)
        op = "<=" if lower else ">="
        zero = _one_zero(ow)[1]
        k = int(p["k"])
        k = max(min(k, 2 ** 31 - 1), -2 ** 31)

        def body(g: MapCodegen) -> str:
            keep = f"i32({g.coord(nd - 1)}) - i32({g.coord(nd - 2)}) {op} {g.param(0)}"
            return g.store(0, f"select({zero}, {cast(g.val(0), g.wt_in(0), ow)}, {keep})")

        run_map(client, "tril" if lower else "triu", None, outs, ins, body,
                params=[(WGSL_TYPES[dt.int32], k)], coords=True)
    return kernel


def kernels() -> dict:
    k = {op.name: _elementwise(op.name) for op in OPS if op.name != "clip"}
    k.update(copy=_copy, fill=_fill, where=_where, clip=_clip, arange=_arange, linspace=_linspace, eye=_eye,
             tril=_tri(True), triu=_tri(False))
    return k
