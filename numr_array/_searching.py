"""Searching functions: argmax, argmin, count_nonzero, nonzero, searchsorted and where."""

from __future__ import annotations

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device
from ._checks import broadcast_shape, broadcast_to_shape, check_tensor, promote_on
from ._launch import launch, new_tensor, result
from ._transfer import to_numpy
from ._statistical import REAL_NUMERIC_KINDS, check_kind, index_dtype, reduction, reduction_args
from ._elementwise import _plans, _store
from ._tensor import Tensor
from .kernels import K, Kernel

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _arg_extremum(k: Kernel, x, axis, keepdims, out) -> Tensor:
    kernel = k.name
    if isinstance(axis, tuple):
        raise TypeError(f"{kernel}: axis must be an int or None, got {axis!r}")
    axes, keepdims, count = reduction_args(x, axis, keepdims, kernel)
    check_kind(x, REAL_NUMERIC_KINDS, "real numeric", kernel)
    if count == 0:
        raise ValueError(f"{kernel}: the search over axes {axes} of an array of shape {x._shape} has no elements")
    return reduction(k, x, axes, keepdims, index_dtype(x._dev), out, kernel)


def argmax(x, /, axis: int | None = None, out=None, *, keepdims: bool = False) -> Tensor:
    """The index of the first largest element of ``x`` (flattened when axis is None); NaN counts as largest.
    Also NumPy's positional ``(axis, out)``."""
    return _arg_extremum(K.argmax, x, axis, keepdims, out)


def argmin(x, /, axis: int | None = None, out=None, *, keepdims: bool = False) -> Tensor:
    """The index of the first smallest element of ``x`` (flattened when axis is None); NaN counts as
    smallest. Also NumPy's positional ``(axis, out)``."""
    return _arg_extremum(K.argmin, x, axis, keepdims, out)


def count_nonzero(x, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                  out=None) -> Tensor:
    """How many elements of ``x`` over ``axis`` are non-zero (True; complex: either part non-zero)."""
    axes, keepdims, _ = reduction_args(x, axis, keepdims, "count_nonzero")
    return reduction(K.count_nonzero, x, axes, keepdims, index_dtype(x._dev), out, "count_nonzero")


def nonzero(x, /) -> tuple[Tensor, ...]:
    """The indices of the non-zero elements of ``x``, one index array per dimension, in row-major order.

    The result's length depends on the data, so the host reads the count: not allowed in a capture."""
    check_tensor(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: x must have at least one dimension, got a 0-D array")
    dev = x._dev
    _capture.check_host_read(dev, "nonzero")
    count = reduction(K.count_nonzero, x, tuple(range(x.ndim)), False, index_dtype(dev), None, "nonzero")
    n = int(to_numpy(count, "nonzero"))
    outs = tuple(new_tensor(dev, (n,), index_dtype(dev)) for _ in range(x.ndim))
    if n:
        launch(dev, K.nonzero, (x,), outs)
    return outs


def scalar_tensor(value, dtype: dt.DType, dev: Device, func: str) -> Tensor:
    """A 0-D tensor holding the Python scalar ``value`` (already checked to suit ``dtype``), for the
    kernels whose native functions take arrays only; OverflowError when an int does not fit."""
    try:
        v = dtype.np.type(value)
    except OverflowError:
        raise OverflowError(f"{func}: the Python int {value} does not fit in {dtype.name}") from None
    t = new_tensor(dev, (), dtype)
    launch(dev, K.fill, (), (t,), {"value": v})
    return t


def searchsorted(x1, x2, /, *, side: str = "left", sorter=None, out=None) -> Tensor:
    """Indices at which the elements of ``x2`` (an array or a Python int or float) would be inserted into
    the ascending 1-D array ``x1`` (ascending once indexed by ``sorter``) to keep it sorted."""
    check_tensor(x1, "searchsorted", "x1")
    check_kind(x1, REAL_NUMERIC_KINDS, "real numeric", "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-D, got shape {x1._shape}")
    dev = x1._dev
    if type(x2) is Tensor:
        if x2._dev is not dev:
            raise ValueError(f"searchsorted: x2 is on device {x2._dev} but x1 is on device {dev}")
        check_kind(x2, REAL_NUMERIC_KINDS, "real numeric", "searchsorted")
        promote_on(dev, x1._dtype, x2._dtype, "searchsorted")
        shape = x2._shape
    elif type(x2) in (int, float):
        if not dt.scalar_compatible(x1._dtype, x2):
            raise TypeError(f"searchsorted: a Python {type(x2).__name__} cannot be searched for in a "
                            f"{x1._dtype.name} array")
        x2 = scalar_tensor(x2, x1._dtype, dev, "searchsorted")
        shape = ()
    else:
        raise TypeError(f"searchsorted: x2 must be an array or a Python int or float, got {type(x2).__name__}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        check_tensor(sorter, "searchsorted", "sorter")
        if sorter._dev is not dev:
            raise ValueError(f"searchsorted: sorter is on device {sorter._dev} but x1 is on device {dev}")
        check_kind(sorter, dt.INTEGER_KINDS, "integer", "searchsorted")
        if sorter._shape != x1._shape:
            raise ValueError(f"searchsorted: sorter has shape {sorter._shape} but x1 has shape {x1._shape}")
    o = result(out, shape, index_dtype(dev), dev, "searchsorted")
    if o.size:
        launch(dev, K.searchsorted, (x1, x2, sorter), (o,), {"side": side})
    return o


if _rt.speedups is not None:
    _c_where = _rt.speedups.where
else:
    def _c_where(plans: dict, condition, x1, x2, out):
        return NotImplemented

#: where's plans of three arrays (see _speedups.c, ``where``): kept by the Python path below
_PLANS_WHERE = _plans("search:where")


def where(condition, x1=None, x2=None, /, *, out=None) -> Tensor | tuple[Tensor, ...]:
    """Elements of x1 where condition is true, else of x2; x1 or x2 may be Python (or NumPy) scalars. With the
    condition alone, NumPy's ``where(condition)``, which is :func:`nonzero` (the indices where it is true)."""
    r = _c_where(_PLANS_WHERE, condition, x1, x2, out)
    if r is not NotImplemented:
        return r
    if x1 is None or x2 is None:
        if x1 is None and x2 is None and out is None:
            return nonzero(condition)
        raise TypeError("where: give both x1 and x2, or neither (for the indices where condition is true)")
    check_tensor(condition, "where", "condition")
    if condition._dtype is not dt.bool_:
        raise TypeError(f"where: condition must be a bool array, got {condition._dtype.name}")
    dev = condition._dev
    arrays = [a for a in (x1, x2) if type(a) is Tensor]
    for a in arrays:
        if a._dev is not dev:
            raise ValueError(f"where: arrays are on different devices ({dev} and {a._dev})")
    # a NumPy scalar counts as its Python value, as the operators take it (xarray's fill value is one)
    x1, x2 = (a.item() if isinstance(a, np.generic) and a.dtype.kind in "biufc" else a for a in (x1, x2))
    for name, a in (("x1", x1), ("x2", x2)):
        if type(a) is not Tensor and type(a) not in (bool, int, float, complex):
            raise TypeError(f"where: {name} must be an array or a Python scalar, got {type(a).__name__}")
    if not arrays:
        raise TypeError("where: at least one of x1, x2 must be an array")
    dtype = arrays[0]._dtype if len(arrays) == 1 else promote_on(dev, x1._dtype, x2._dtype, "where")
    for a in (x1, x2):
        if type(a) is not Tensor:
            dtype = dt.promote_scalar(dtype, a, "where")  # a complex scalar makes a real result complex
    values = [a if type(a) is Tensor else dtype.np.type(a) for a in (x1, x2)]
    shape = broadcast_shape([condition._shape] + [a._shape for a in arrays], "where")
    ins = [broadcast_to_shape(v, shape) if type(v) is Tensor else v for v in [condition] + values]
    o = result(out, shape, dtype, dev, "where")
    launch(dev, K.where, ins, (o,))
    if out is None and len(arrays) == 2 and x1._dtype is dtype and x2._dtype is dtype:
        launch_of = getattr(dev._client, "where_launch", None)
        fn = launch_of() if launch_of is not None else None
        if fn is not None:
            allocator, native, _ = dev._client.host_parts()
            _store(_PLANS_WHERE, (condition._dtype, dtype, dtype, condition._shape, x1._shape, x2._shape, dev._client),
                   (dtype, shape, o._strides, dev, allocator, dtype.itemsize * o.size, fn, native,
                    tuple(s * dtype.itemsize for s in o._strides)))
    return o
