"""Sorting functions: sort and argsort.

Order: ascending puts NaNs last, descending puts them first (NaN sorts as the largest value, as in
``searchsorted``); a stable sort keeps equal elements (including -0.0 and +0.0) in their original order in
both directions.
"""

from __future__ import annotations

from ._checks import check_axis, check_tensor
from ._launch import launch, result
from ._statistical import REAL_NUMERIC_KINDS, check_flag, check_kind, index_dtype
from ._tensor import Tensor
from .kernels import K, Kernel

__all__ = ["argsort", "sort"]


def _sort(k: Kernel, x, axis, descending, stable, out, index: bool) -> Tensor:
    kernel = k.name
    check_tensor(x, kernel)
    check_kind(x, REAL_NUMERIC_KINDS, "real numeric", kernel)
    axis = check_axis(axis, x.ndim, kernel)
    descending = check_flag(descending, "descending", kernel)
    stable = check_flag(stable, "stable", kernel)
    o = result(out, x._shape, index_dtype(x._dev) if index else x._dtype, x._dev, kernel)
    if o.size:
        launch(x._dev, k, (x,), (o,), {"axis": axis, "descending": descending, "stable": stable})
    return o


def sort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True, out=None) -> Tensor:
    """A copy of ``x`` sorted along ``axis``."""
    return _sort(K.sort, x, axis, descending, stable, out, False)


def argsort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True, out=None) -> Tensor:
    """The indices that sort ``x`` along ``axis``."""
    return _sort(K.argsort, x, axis, descending, stable, out, True)
