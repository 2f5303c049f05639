"""The WGSL expression of every element-wise function (numr_array.kernels.OPS) per compute type.

``expr(name, c, args, lib)`` returns the expression of op ``name`` on the values ``args`` (already in
compute type ``c``, the inputs' promoted dtype) and the WgslType of its result; the kernel casts that to the
output's dtype. Float NaN, infinity and sign tests go through the bit-level helpers of ``_wgsl_helpers``.
"""

from __future__ import annotations

from ._wgsl_helpers import BOOL, WgslHelpers
from ._types import WgslType

# ops whose float form is a helper of the same name (transcendentals come from _libm)
_FLOAT_FN = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p",
             "log2", "log10", "sin", "sinh", "tan", "tanh", "round", "sign", "isfinite", "isinf", "isnan",
             "signbit", "atan2", "copysign", "hypot", "logaddexp", "nextafter", "sqrt"}
_BINARY_FLOAT_FN = {"pow": "pow", "floor_divide": "ffloordiv", "remainder": "fremainder",
                    "maximum": "fmax", "minimum": "fmin"}
_INT_FN = {"floor_divide": "floordiv", "remainder": "remainder", "pow": "ipow",
           "bitwise_left_shift": "shl", "bitwise_right_shift": "shr", "sign": "isign", "abs": "iabs"}
_INFIX = {"add": "+", "subtract": "-", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
          "logical_and": "&&", "logical_or": "||", "logical_xor": "!="}
_CMP = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<="}
_IDENTITY_ON_REAL = {"ceil", "floor", "trunc", "round", "conj", "real", "positive"}


def expr(name: str, c: WgslType, args: list[str], lib: WgslHelpers) -> tuple[str, WgslType]:
    fam = c.family
    a = args[0]
    b = args[1] if len(args) > 1 else None
    T = c.ct

    if name in _CMP:
        return f"({a} {_CMP[name]} {b})", BOOL
    if name in ("equal", "not_equal"):
        if fam == "f":
            e = f"{lib.fn('feq', c)}({a}, {b})"
        elif fam == "c":
            feq = lib.fn("feq", c.real)
            e = f"({feq}(({a}).x, ({b}).x) && {feq}(({a}).y, ({b}).y))"
        else:
            e = f"({a} == {b})"
        return (e if name == "equal" else f"!{e}"), BOOL
    if name in _INFIX and not (fam == "c" and name not in ("add", "subtract")):
        op = "!=" if (fam == "b" and name == "bitwise_xor") else _INFIX[name]
        return f"({a} {op} {b})", c
    if name == "logical_not":
        return f"!{a}", c
    if name == "bitwise_invert":
        return (f"!{a}" if fam == "b" else f"~{a}"), c

    if fam == "c":
        from ._complex import expr as complex_expr
        return complex_expr(name, c, args, lib)

    if fam in "iu":
        if name in _IDENTITY_ON_REAL:
            return a, c
        if name in _INT_FN:
            return f"{lib.fn(_INT_FN[name], c)}({', '.join(args)})", c
        if name == "abs":  # unsigned
            return a, c
        if name in ("isfinite", "isinf", "isnan"):
            return ("true" if name == "isfinite" else "false"), BOOL
        simple = {"negative": f"({T}(0) - {a})", "square": f"({a} * {a})", "multiply": f"({a} * {b})",
                  "maximum": f"max({a}, {b})", "minimum": f"min({a}, {b})"}
        return simple[name], c

    # real floating point
    if name in ("isfinite", "isinf", "isnan", "signbit"):
        return f"{lib.fn(name, c)}({a})", BOOL
    if name in _FLOAT_FN:
        return f"{lib.fn(name, c)}({', '.join(args)})", c
    if name in _BINARY_FLOAT_FN:
        return f"{lib.fn(_BINARY_FLOAT_FN[name], c)}({a}, {b})", c
    if name in ("divide", "reciprocal"):  # correctly rounded (float32 through float64 where there is one)
        num, den = (a, b) if name == "divide" else (f"{T}(1)", a)
        return f"{lib.fn('fdiv', c)}({num}, {den})", c
    simple = {
        "abs": f"{lib.fn('fabs', c)}({a})", "negative": f"{lib.fn('fneg', c)}({a})", "positive": a,
        "ceil": f"{lib.fn('ceil', c)}({a})", "floor": f"{lib.fn('floor', c)}({a})",
        "trunc": f"{lib.fn('trunc', c)}({a})", "conj": a, "real": a,
        "square": f"({a} * {a})", "multiply": f"({a} * {b})",
    }
    return simple[name], c
