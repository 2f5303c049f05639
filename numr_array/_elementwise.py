"""Element-wise functions, all from one table: ``kernels.OPS``.

A row says: the function's name, its arity, the dtype kinds it accepts, and how its result dtype follows
from the (promoted) input dtype. The namespace functions below are made from the rows; each backend
supplies one kernel per row, under the row's name, and gets the compute dtype (the operands' promoted
dtype) as ``params["dtype"]``. Adding an element-wise function is one row in numr_array/kernels.py and
one kernel per backend.

Five rows' functions are written out below instead, each the standard's function with NumPy's habits on
inputs the standard leaves to the library (docs/numpy-differences.md): ``divide`` of integer and boolean
arrays (in floating point), ``logical_*`` of numeric arrays (their non-zero elements), and ``round`` with
NumPy's ``decimals``.
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from . import _dtypes as dt
from ._checks import broadcast_shape as broadcast_shapes  # (the name _binary calls it by)
from ._checks import broadcast_to_shape, check_tensor, promote_on
from ._data_type_functions import astype
from ._info import default_dtypes_of
from ._launch import launch, result
from ._tensor import Tensor
from .kernels import KIND_WORDS as _KIND_WORDS
from .kernels import OPS, K, Kernel

Op = Kernel  # a row of the table

OPS_BY_NAME = {op.name: op for op in OPS}
_SCALAR_TYPES = (bool, int, float, complex)
_PROMOTION = dt._PROMOTION
_BOOL_DT = dt.bool_
#: the params of an element-wise launch, one frozen dict per compute dtype (no dict built per call)
_COMPUTE = {d: {"dtype": d} for d in dt.ALL_DTYPES}


def _result_dtype(op: Op, dtype: dt.DType) -> dt.DType:
    r = op.result
    if r == "same":
        return dtype
    if r == "bool":
        return _BOOL_DT
    return dt.real_of(dtype)


def _kind_error(op: Op, dtype: dt.DType) -> TypeError:
    return TypeError(f"{op.name}: {dtype.name} is not accepted; {op.name} takes {_KIND_WORDS[op.kinds]} arrays")


def _with_scalar(op: Op, dtype: dt.DType, value) -> tuple[dt.DType, object]:
    """The promoted dtype of an array of ``dtype`` with the Python scalar ``value`` (the standard's rules),
    and the scalar as a NumPy scalar of it, the form kernels take scalar operands in."""
    if type(value) not in _SCALAR_TYPES:
        raise TypeError(f"{op.name}: operands must be arrays or Python scalars, got {type(value).__name__}")
    if dtype.kind not in op.kinds:
        raise _kind_error(op, dtype)
    promoted = dt.promote_scalar(dtype, value, op.name)
    if promoted.kind not in op.kinds:  # a complex scalar beside a real array
        raise TypeError(f"{op.name}: a Python complex with a {dtype.name} array gives {promoted.name}, "
                        f"but {op.name} takes {_KIND_WORDS[op.kinds]} arrays")
    try:
        return promoted, promoted.np.type(value)
    except OverflowError:
        raise OverflowError(f"{op.name}: the Python int {value} does not fit in {promoted.name}") from None


def _unary(op: Op, x, out):
    if type(x) is not Tensor:
        raise TypeError(f"{op.name}: x must be a numr_array array, got {type(x).__name__}")
    dtype = x._dtype
    if dtype.kind not in op.kinds:
        raise _kind_error(op, dtype)
    dev = x._dev
    o = result(out, x._shape, _result_dtype(op, dtype), dev, op.name)
    launch(dev, op, (x,), (o,), _COMPUTE[dtype])
    return o


def _binary(op: Op, x1, x2, out):
    if type(x1) is Tensor:
        dev = x1._dev
        if type(x2) is Tensor:
            if x2._dev is not dev:
                raise ValueError(f"{op.name}: arrays are on different devices ({dev} and {x2._dev}); "
                                 "move one explicitly with to_device()")
            d1 = x1._dtype
            d2 = x2._dtype
            dtype = _PROMOTION[d1, d2]
            if dtype is None or (dtype is not d1 and dtype is not d2):
                dtype = promote_on(dev, d1, d2, op.name)
            if d1.kind not in op.kinds:
                raise _kind_error(op, d1)
            if d2.kind not in op.kinds:
                raise _kind_error(op, d2)
            s1 = x1._shape
            s2 = x2._shape
            if s1 == s2:
                shape = s1
            else:
                shape = broadcast_shapes((s1, s2), op.name)
                x1 = broadcast_to_shape(x1, shape)
                x2 = broadcast_to_shape(x2, shape)
        else:
            dtype, x2 = _with_scalar(op, x1._dtype, x2)
            shape = x1._shape
    elif type(x2) is Tensor:
        dev = x2._dev
        dtype, x1 = _with_scalar(op, x2._dtype, x1)
        shape = x2._shape
    else:
        raise TypeError(f"{op.name}: at least one of x1, x2 must be a numr_array array, "
                        f"got {type(x1).__name__} and {type(x2).__name__}")
    o = result(out, shape, _result_dtype(op, dtype), dev, op.name)
    launch(dev, op, (x1, x2), (o,), _COMPUTE[dtype])
    return o


def _scalar_bound(b: int | float, dtype: dt.DType):
    """A Python bound of clip as a NumPy scalar of ``dtype``; an integer bound beyond the dtype's range
    bounds nothing on that side, so it is clamped to the range (NumPy would raise OverflowError)."""
    if dtype.kind in dt.INTEGER_KINDS:
        info = np.iinfo(dtype.np)
        b = min(max(b, int(info.min)), int(info.max))
    return dtype.np.type(b)


def clip(x, /, min=None, max=None, *, out=None):
    """Clamp each element of ``x`` to [min, max]; min and max are None, scalars, or arrays that broadcast
    with x (the result has their broadcast shape and x's dtype)."""
    op = K.clip
    if type(x) is not Tensor:
        raise TypeError(f"clip: x must be a numr_array array, got {type(x).__name__}")
    dtype = x._dtype
    if dtype.kind not in op.kinds:
        raise _kind_error(op, dtype)
    dev = x._dev
    bounds = []
    shapes = [x._shape]
    compute = dtype  # the dtype x and the array bounds compare in
    for name, b in (("min", min), ("max", max)):
        if b is None:
            bounds.append(None)
        elif type(b) is Tensor:
            if b._dev is not dev:
                raise ValueError(f"clip: {name} is on {b._dev} but x is on {dev}")
            if b._dtype.kind not in op.kinds:
                raise _kind_error(op, b._dtype)
            if _PROMOTION[dtype, b._dtype] is None:
                raise TypeError(f"clip: no type promotion between x ({dtype.name}) and {name} ({b._dtype.name})")
            compute = _PROMOTION[compute, b._dtype]
            bounds.append(b)
            shapes.append(b._shape)
        else:
            if type(b) not in (int, float) or not dt.scalar_compatible(dtype, b):
                raise TypeError(f"clip: {name}={b!r} cannot bound a {dtype.name} array")
            bounds.append(_scalar_bound(b, dtype))
    # x, min and max broadcast together (the result has x's dtype, whatever the bounds' dtypes)
    shape = broadcast_shapes(shapes, "clip") if len(shapes) > 1 else x._shape
    x = broadcast_to_shape(x, shape)
    bounds = [broadcast_to_shape(b, shape) if type(b) is Tensor else b for b in bounds]
    o = result(out, shape, dtype, dev, "clip")
    launch(dev, op, (x, bounds[0], bounds[1]), (o,), _COMPUTE[compute])
    return o


def _make(op: Op):
    if op.arity == 1:
        def f(x, /, *, out=None):
            return _unary(op, x, out)
        params = [inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)]
        doc = f"Element-wise {op.name} of x (accepts {_KIND_WORDS[op.kinds]} dtypes)."
    else:
        def f(x1, x2, /, *, out=None):
            return _binary(op, x1, x2, out)
        params = [inspect.Parameter("x1", inspect.Parameter.POSITIONAL_ONLY),
                  inspect.Parameter("x2", inspect.Parameter.POSITIONAL_ONLY)]
        doc = (f"Element-wise {op.name} of x1 and x2, broadcast together (accepts {_KIND_WORDS[op.kinds]} "
               "dtypes; either may be a Python scalar).")
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    f.__name__ = f.__qualname__ = op.name
    f.__module__ = "numr_array"
    f.__doc__ = doc + "\n\n``out``: an array of exactly the result's shape and dtype on the same device; returned."
    f.__signature__ = inspect.Signature(params)
    return f


# --- the rows with NumPy's habits, written out (one function each, calling _unary/_binary directly) -------
_NON_FLOAT = dt.INTEGER_KINDS + ("bool",)
_NON_FLOAT_DTYPES = frozenset(d for d in dt.ALL_DTYPES if d.kind in _NON_FLOAT)  # one set lookup per division
_NUMERIC_DTYPES = frozenset(d for d in dt.ALL_DTYPES if d.kind in dt.NUMERIC_KINDS)


def _quotient_dtype(x1, x2) -> dt.DType:
    """The real floating-point dtype NumPy divides in when an integer or boolean array takes part: that of
    a floating-point operand, unless a 32- or 64-bit integer needs the default (float64) precision; the
    device's default floating-point dtype otherwise."""
    arrays = [x for x in (x1, x2) if type(x) is Tensor]
    default = default_dtypes_of(arrays[0]._dev)["default_float"]
    floats = [x._dtype for x in arrays if x._dtype.kind in dt.FLOAT_KINDS]
    if not floats:
        return default
    small = all(x._dtype.kind == "bool" or x._dtype.bits <= 16 for x in arrays if x._dtype.kind in _NON_FLOAT)
    return dt.real_of(floats[0] if small else dt.promote(floats[0], default, "divide"))


def divide(x1: Tensor | int | float | complex, x2: Tensor | int | float | complex, /, *,
           out: Tensor | None = None) -> Tensor:
    """Element-wise x1 / x2, broadcast together (also the ``/`` operator; either may be a Python scalar).
    Integer and boolean arrays, whose quotient the standard leaves implementation-defined, divide as in
    NumPy: in floating point, by NumPy's promotion (alone or with a Python scalar: the device's default
    floating-point dtype, float64 where it has it)."""
    if getattr(x1, "_dtype", None) in _NON_FLOAT_DTYPES or getattr(x2, "_dtype", None) in _NON_FLOAT_DTYPES:
        dtype = _quotient_dtype(x1, x2)
        x1, x2 = (int(x) if type(x) is bool
                  else astype(x, dtype) if type(x) is Tensor and x._dtype.kind in _NON_FLOAT else x
                  for x in (x1, x2))
    return _binary(K.divide, x1, x2, out)


def _truth(x):
    """A numeric array's truth values (non-zero), as NumPy's logical functions read them."""
    return _binary(K.not_equal, x, 0, None) if type(x) is Tensor and x._dtype in _NUMERIC_DTYPES else x


def logical_and(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical AND of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    return _binary(K.logical_and, _truth(x1), _truth(x2), out)


def logical_or(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical OR of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    return _binary(K.logical_or, _truth(x1), _truth(x2), out)


def logical_xor(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical XOR of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    return _binary(K.logical_xor, _truth(x1), _truth(x2), out)


def logical_not(x: Tensor, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical NOT of x; a numeric array counts as its non-zero elements (NumPy)."""
    return _unary(K.logical_not, _truth(x), out)


def round(x: Tensor, /, decimals: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Element-wise rounding of x to the nearest integer, half to even (accepts numeric dtypes). NumPy's
    ``decimals`` rounds to that many decimal places (negative: to tens, hundreds, ...) by scaling with
    10**decimals, as NumPy does, so it inherits NumPy's floating-point inexactness (``round(2.675, 2)`` is
    2.67)."""
    decimals = operator.index(decimals)
    if decimals == 0:
        return _unary(K.round, x, out)
    check_tensor(x, "round")
    if x._dtype.kind in dt.INTEGER_KINDS:
        if decimals > 0:
            return _unary(K.round, x, out)
        raise TypeError(f"round: decimals={decimals} on {x._dtype.name} arrays is not supported; "
                        "cast to a floating-point dtype first")
    if x._dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"round: decimals needs a numeric array, got {x._dtype.name}")
    # NumPy's own steps, so that results agree to the last bit: scale up, round half to even, scale back
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)  # (abs is the element-wise function here)
    if decimals > 0:
        return divide(_unary(K.round, multiply(x, scale), None), scale, out=out)
    return multiply(_unary(K.round, divide(x, scale), None), scale, out=out)


_WRITTEN_OUT = ("divide", "logical_and", "logical_or", "logical_xor", "logical_not", "round", "clip")
for _op in OPS:
    if _op.name not in _WRITTEN_OUT:
        globals()[_op.name] = _make(_op)

__all__ = [op.name for op in OPS]
