"""Utility functions: all, any (logical reductions) and diff."""

from __future__ import annotations

import operator

from . import _dtypes as dt
from ._checks import check_axis, check_tensor, promote_on
from ._launch import launch, result
from ._statistical import reduction, check_kind, reduction_args
from ._tensor import Tensor
from .kernels import K

__all__ = ["all", "any", "diff"]


def all(x, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, out=None) -> Tensor:
    """Whether every element of ``x`` over ``axis`` is true (non-zero; NaN counts as true); True when empty."""
    axes, keepdims, _ = reduction_args(x, axis, keepdims, "all")
    return reduction(K.all, x, axes, keepdims, dt.bool_, out, "all")


def any(x, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, out=None) -> Tensor:
    """Whether some element of ``x`` over ``axis`` is true (non-zero; NaN counts as true); False when empty."""
    axes, keepdims, _ = reduction_args(x, axis, keepdims, "any")
    return reduction(K.any, x, axes, keepdims, dt.bool_, out, "any")


def diff(x, /, n: int = 1, axis: int = -1, prepend: Tensor | None = None, append: Tensor | None = None, *,
         out=None) -> Tensor:
    """The ``n``-th forward difference of ``x`` along ``axis``, after joining ``prepend`` and ``append``
    to it along that axis; their dtypes promote with x's, and the result has the promoted dtype. Also
    NumPy's positional ``(n, axis, prepend, append)`` (note the order: NumPy's ``diff(a, 2)`` is the second
    difference)."""
    check_tensor(x, "diff")
    check_kind(x, dt.NUMERIC_KINDS, "numeric", "diff")
    axis = check_axis(axis, x.ndim, "diff")
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"diff: n must be an int, got {n!r}")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    dtype = x._dtype
    length = x._shape[axis]
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        check_tensor(extra, "diff", name)
        if extra._dev is not x._dev:
            raise ValueError(f"diff: {name} is on device {extra._dev} but x is on device {x._dev}")
        dtype = promote_on(x._dev, dtype, extra._dtype, "diff")
        es = extra._shape
        if len(es) != x.ndim or es[:axis] + es[axis + 1:] != x._shape[:axis] + x._shape[axis + 1:]:
            raise ValueError(f"diff: {name} has shape {extra._shape}, which must match x's shape {x._shape} "
                             f"except along axis {axis}")
        length += es[axis]
    shape = x._shape[:axis] + (max(length - n, 0),) + x._shape[axis + 1:]
    o = result(out, shape, dtype, x._dev, "diff")
    if o.size:
        launch(x._dev, K.diff, (x, prepend, append), (o,), {"axis": axis, "n": n})
    return o

