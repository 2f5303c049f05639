"""Searching functions: where (argmax, argmin, nonzero, searchsorted, count_nonzero join later)."""

from __future__ import annotations

from . import _dtypes as dt
from ._dispatch import broadcast_shapes, broadcast_to_shape, check_tensor, launch, result
from ._tensor import Tensor

__all__ = ["where"]


def where(condition, x1, x2, /, *, out=None) -> Tensor:
    """Elements of x1 where condition is true, else of x2; x1 or x2 may be Python scalars."""
    check_tensor(condition, "where", "condition")
    if condition._dtype is not dt.bool_:
        raise TypeError(f"where: condition must be a bool array, got {condition._dtype.name}")
    dev = condition._dev
    arrays = [a for a in (x1, x2) if type(a) is Tensor]
    for a in arrays:
        if a._dev is not dev:
            raise ValueError(f"where: arrays are on different devices ({dev} and {a._dev})")
    for name, a in (("x1", x1), ("x2", x2)):
        if type(a) is not Tensor and type(a) not in (bool, int, float, complex):
            raise TypeError(f"where: {name} must be an array or a Python scalar, got {type(a).__name__}")
    if not arrays:
        raise TypeError("where: at least one of x1, x2 must be an array")
    dtype = arrays[0]._dtype if len(arrays) == 1 else dt.promote(x1._dtype, x2._dtype, "where")
    values = []
    for a in (x1, x2):
        if type(a) is not Tensor:
            if not dt.scalar_compatible(dtype, a):
                raise TypeError(f"where: a Python {type(a).__name__} cannot be combined with {dtype.name}")
            a = dtype.np.type(a)
        values.append(a)
    shape = broadcast_shapes([condition._shape] + [a._shape for a in arrays], "where")
    ins = [broadcast_to_shape(v, shape) if type(v) is Tensor else v for v in [condition] + values]
    o = result(out, shape, dtype, dev, "where")
    launch(dev, "where", ins, (o,))
    return o
