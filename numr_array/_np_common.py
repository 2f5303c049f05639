"""Helpers shared by the ``_np_*`` modules (NumPy's functions the standard lacks, composed of namespace
functions): argument checks with messages naming the function, dtype choices, and small device arrays.
Nothing public is defined here."""

from __future__ import annotations

import operator

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from ._checks import check_axis, check_tensor
from ._data_type_functions import astype
from ._device import Device
from ._info import default_dtypes_of
from ._tensor import Tensor


def tensor(a, func: str, name: str = "a") -> Tensor:
    return check_tensor(a, func, name)


def integer(v, func: str, name: str) -> int:
    """``v`` as a Python int (TypeError naming ``name`` when it is not an integer)."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{func}: {name} must be an integer, got {v!r}")
    return operator.index(v)


def default_float(dev: Device) -> dt.DType:
    return default_dtypes_of(dev)["default_float"]


def default_int(dev: Device) -> dt.DType:
    return default_dtypes_of(dev)["default_integral"]


def floating(a: Tensor, func: str, allow_complex: bool = True) -> Tensor:
    """``a`` as a floating-point array: integer and bool arrays in the device's default float (as NumPy
    computes their means, quantiles, ...), floating ones unchanged."""
    if a._dtype.kind == "c":
        if not allow_complex:
            raise TypeError(f"{func}: complex arrays are not accepted, got {a._dtype.name}")
        return a
    if a._dtype.kind == "f":
        return a
    return astype(a, default_float(a._dev))




def last_axis(a: Tensor, axis, func: str) -> Tensor:
    """``a`` with ``axis`` moved last (flattened when axis is None)."""
    if axis is None:
        return _mn.reshape(a, (-1,))
    axis = check_axis(axis, a.ndim, func)
    return _mn.moveaxis(a, axis, -1) if axis != a.ndim - 1 else a






def gather_along(x: Tensor, indices: Tensor, axis: int) -> Tensor:
    """:func:`take_along_axis` for indices known to be in bounds (clipped by the caller), without its
    host-side bounds check, so that the callers (quantiles, ...) read nothing on the host. ``indices`` has
    x's dimensions; the other axes broadcast."""
    from ._advanced_indexing import gather_along as gather
    return gather(x, indices, axis, "gather_along", checked=False)


def index_mode(ind: Tensor, n: int, mode, func: str) -> Tensor:
    """Integer indices ``ind`` into an axis of ``n`` under NumPy's ``mode``: 'wrap' (modulo n), 'clip' (into
    [0, n)) or 'raise' (as they are: the caller checks the range); ValueError for any other mode."""
    if mode == "wrap":
        return _ew.remainder(ind, n)
    if mode == "clip":
        return _ew.clip(ind, 0, n - 1)
    if mode != "raise":
        raise ValueError(f"{func}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return ind


def index_range(ind: Tensor, func: str) -> tuple[int, int]:
    """The smallest and largest of the non-empty integer tensor ``ind``, read on the host in one transfer."""
    from ._statistical import max as _max, min as _min  # (they import the namespace's creation functions)
    from ._transfer import to_numpy
    lo, hi = to_numpy(_mn.stack([_min(ind), _max(ind)]), func)
    return int(lo), int(hi)

