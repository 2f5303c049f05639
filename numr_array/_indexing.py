"""``__getitem__`` and ``__setitem__``: basic indexing makes zero-copy views; integer-array and
boolean-mask indexing gather and scatter through kernels."""

from __future__ import annotations

import operator

from . import _dtypes as dt
from ._dispatch import broadcast_shapes, broadcast_to_shape, launch, make_view
from ._tensor import Tensor

__all__: list[str] = []


def _normalize_key(key, ndim: int) -> list:
    """The key as a list of ints, slices and None with any Ellipsis expanded."""
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("__getitem__: an index can have only one Ellipsis")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"__getitem__: too many indices ({consumed}) for an array of {ndim} dimensions")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(k)
    if n_ell == 0:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def basic_view(x: Tensor, key) -> Tensor:
    """The zero-copy view ``x[key]`` for a key of ints, slices, None and Ellipsis."""
    shape, strides = [], []
    offset = x._offset
    dim = 0
    for k in _normalize_key(key, x.ndim):
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n = x._shape[dim]
        st = x._strides[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                offset += start * st
            shape.append(length)
            strides.append(st * step)
        else:
            if isinstance(k, bool) or not hasattr(k, "__index__"):
                raise IndexError(f"__getitem__: invalid index {k!r}; use ints, slices, None, Ellipsis or arrays")
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"__getitem__: index {i} is out of bounds for axis {dim} with size {n}")
            offset += (i % n) * st
        dim += 1
    return make_view(x, tuple(shape), tuple(strides), offset)


def _is_basic(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if type(k) is Tensor or isinstance(k, (list,)):
            return False
    return True


def getitem(x: Tensor, key) -> Tensor:
    if _is_basic(key):
        return basic_view(x, key)
    from ._advanced_indexing import advanced_getitem
    return advanced_getitem(x, key)


def setitem(x: Tensor, key, value) -> None:
    """Write ``value`` (an array or Python scalar, broadcast) into ``x[key]``."""
    if not _is_basic(key):
        from ._advanced_indexing import advanced_setitem
        advanced_setitem(x, key, value)
        return
    target = basic_view(x, key)
    if type(value) is Tensor:
        if value._dev is not x._dev:
            raise ValueError(f"__setitem__: value is on {value._dev} but the array is on {x._dev}")
        if dt._PROMOTION[value._dtype, x._dtype] is not x._dtype:
            raise TypeError(f"__setitem__: cannot write {value._dtype.name} values into a {x._dtype.name} array")
        shape = broadcast_shapes((target._shape, value._shape), "__setitem__")
        if shape != target._shape:
            raise ValueError(f"__setitem__: value of shape {value._shape} does not broadcast to {target._shape}")
        if target.size:
            launch(x._dev, "copy", (broadcast_to_shape(value, shape),), (target,))
    elif type(value) in (bool, int, float, complex):
        if not dt.scalar_compatible(x._dtype, value):
            raise TypeError(f"__setitem__: a Python {type(value).__name__} cannot be stored in a {x._dtype.name} array")
        if target.size:
            launch(x._dev, "fill", (), (target,), {"value": x._dtype.np.type(value)})
    else:
        raise TypeError(f"__setitem__: value must be an array or a Python scalar, got {type(value).__name__}")
