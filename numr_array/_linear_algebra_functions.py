"""Linear algebra functions of the main namespace: matmul (tensordot, vecdot and matrix_transpose join later)."""

from __future__ import annotations

from . import _dtypes as dt
from ._dispatch import broadcast_shapes, check_same_device, check_tensor, launch, result
from ._tensor import Tensor

__all__ = ["matmul"]


def matmul(x1, x2, /, *, out=None) -> Tensor:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    check_tensor(x1, "matmul", "x1")
    check_tensor(x2, "matmul", "x2")
    dev = check_same_device("matmul", x1, x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if x._dtype.kind not in dt.NUMERIC_KINDS:
            raise TypeError(f"matmul: {name} must be numeric, got {x._dtype.name}")
        if x.ndim == 0:
            raise ValueError(f"matmul: {name} must have at least one dimension, got a 0-D array")
    dtype = dt.promote(x1._dtype, x2._dtype, "matmul")
    s1, s2 = x1._shape, x2._shape
    k1 = s1[-1]
    k2 = s2[0] if len(s2) == 1 else s2[-2]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: x1 {s1} and x2 {s2}")
    batch = broadcast_shapes((s1[:-2], s2[:-2]), "matmul")
    shape = batch + (s1[-2:-1] if len(s1) > 1 else ()) + (s2[-1:] if len(s2) > 1 else ())
    o = result(out, shape, dtype, dev, "matmul")
    launch(dev, "matmul", (x1, x2), (o,))
    return o
