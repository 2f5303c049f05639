"""One kernel per row of the element-wise table (numr_array._elementwise.OPS)."""

from __future__ import annotations

# table name -> the array module's ufunc of the same meaning
UFUNCS = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
    "atan": "arctan", "atanh": "arctanh", "cos": "cos", "cosh": "cosh", "exp": "exp", "expm1": "expm1",
    "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "tan": "tan", "tanh": "tanh", "bitwise_invert": "invert", "conj": "conjugate",
    "isfinite": "isfinite", "isinf": "isinf", "isnan": "isnan", "logical_not": "logical_not",
    "negative": "negative", "positive": "positive", "reciprocal": "reciprocal", "sign": "sign",
    "signbit": "signbit", "square": "square",
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "true_divide", "pow": "power",
    "floor_divide": "floor_divide", "remainder": "remainder", "maximum": "maximum", "minimum": "minimum",
    "atan2": "arctan2", "copysign": "copysign", "hypot": "hypot", "logaddexp": "logaddexp",
    "nextafter": "nextafter", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "equal": "equal", "not_equal": "not_equal", "greater": "greater", "greater_equal": "greater_equal",
    "less": "less", "less_equal": "less_equal",
}


def kernels(m) -> dict:
    k = {}
    for name, ufunc_name in UFUNCS.items():
        k[name] = _ufunc(getattr(m, ufunc_name))
    for name in ("ceil", "floor", "trunc", "round"):
        k[name] = _rounding(m, getattr(m, {"round": "rint"}.get(name, name)))

    def real(ins, outs, p):
        m.copyto(outs[0], m.real(ins[0]))

    def imag(ins, outs, p):
        m.copyto(outs[0], m.imag(ins[0]))

    def clip(ins, outs, p):
        x, lo, hi = ins
        o = outs[0]
        if lo is None and hi is None:
            m.copyto(o, x)
        elif hi is None:
            m.maximum(x, lo, out=o, casting="unsafe")
        elif lo is None:
            m.minimum(x, hi, out=o, casting="unsafe")
        else:
            m.minimum(m.maximum(x, lo), hi, out=o, casting="unsafe")

    k.update(real=real, imag=imag, clip=clip)
    return k


def _ufunc(f):
    def kernel(ins, outs, p):
        f(*ins, out=outs[0])
    return kernel


def _rounding(m, f):
    """ceil/floor/trunc/round: integers and bools are their own result; complex rounds each part."""
    def kernel(ins, outs, p):
        x = ins[0]
        if x.dtype.kind in "biu":
            m.copyto(outs[0], x)
        else:
            f(x, out=outs[0])
    return kernel
