"""``__getitem__`` and ``__setitem__``.

A key is parsed once into entries (ints, slices, None, index arrays; Ellipsis expanded). A key of ints,
slices and None makes a zero-copy view (and ``x[key] = v`` a copy or fill into it); a key with an integer
or boolean array goes to :mod:`._advanced_indexing`, which gathers and scatters through kernels.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes as dt
from ._advanced_indexing import broadcasts_to, gather, scatter
from ._checks import broadcast_to_shape
from ._launch import launch, make_view
from ._transfer import from_numpy
from ._tensor import Tensor
from .kernels import K

__all__: list[str] = []

_SCALARS = (bool, int, float, complex)
_FULL = slice(None)


def _index_array(x: Tensor, k, func: str) -> Tensor:
    """An array in a key: a tensor on x's device, or a host index (a nested list of Python ints or bools,
    or a NumPy array), copied to x's device."""
    if type(k) is not Tensor:
        try:
            a = np.asarray(k)
        except ValueError:  # ragged
            a = np.asarray(None)
        if a.size == 0 and a.dtype.kind == "f":
            a = a.astype(np.int64)  # [] indexes nothing along its axis
        if a.dtype.kind not in "biu":
            raise IndexError(f"{func}: a list or NumPy array in an index must hold only ints or only bools, got {k!r}")
        if a.dtype.kind in "iu" and not x._dev.client.supports_dtype(dt.from_numpy(a.dtype)):
            # int64 on a device without it (WebGPU without shader-int64) indexes as int32: no buffer there
            # holds 2**31 elements, so a value beyond int32 is out of bounds for every axis
            beyond = a[(a < -2**31) | (a > 2**31 - 1)]
            if beyond.size:
                raise IndexError(f"{func}: index {int(beyond.flat[0])} is out of bounds on device {x._dev}")
            a = a.astype(np.int32)
        k = from_numpy(a, x._dev)
    elif k._dev is not x._dev:
        raise ValueError(f"{func}: the index array is on {k._dev} but the array is on {x._dev}")
    if k._dtype is not dt.bool_ and k._dtype.kind not in dt.INTEGER_KINDS:
        raise IndexError(f"{func}: arrays used as indices must have an integer or bool dtype, got {k._dtype.name}")
    return k


def _slice(k: slice, func: str) -> slice:
    """``k`` with int (or None) bounds: what a kernel's array module and ``slice.indices`` both accept."""
    try:
        bounds = [None if v is None else operator.index(v) for v in (k.start, k.stop, k.step)]
    except TypeError:
        raise IndexError(f"{func}: slice bounds must be ints or None, got {k!r}") from None
    if bounds[2] == 0:
        raise ValueError(f"{func}: slice step cannot be zero")
    return slice(*bounds)


def _int_index(k, func: str) -> int:
    if not isinstance(k, bool):
        try:
            return operator.index(k)
        except TypeError:
            pass
    raise IndexError(f"{func}: invalid index {k!r}; use ints, slices, None, Ellipsis or integer/bool arrays")


def parse_key(x: Tensor, key, func: str) -> tuple[list, bool]:
    """(entries, whether the key holds an index array).

    Entries: one per key item with Ellipsis expanded to full slices and full slices appended for
    unindexed trailing axes; ints are bounds-checked and made non-negative, bool arrays' shapes checked.
    """
    items = key if isinstance(key, tuple) else (key,)
    entries: list = []
    ellipsis_at = None
    consumed = 0
    has_array = False
    for k in items:
        if k is None:
            entries.append(None)
            continue
        if k is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError(f"{func}: an index can hold only one Ellipsis (...)")
            ellipsis_at = len(entries)
            continue
        if isinstance(k, slice):
            entries.append(_slice(k, func))
            consumed += 1
        elif type(k) is Tensor or isinstance(k, (list, np.ndarray)):
            k = _index_array(x, k, func)
            has_array = True
            entries.append(k)
            consumed += k.ndim if k._dtype is dt.bool_ else 1
        else:
            entries.append(_int_index(k, func))
            consumed += 1
    if consumed > x.ndim:
        raise IndexError(f"{func}: too many indices ({consumed}) for an array of {x.ndim} dimensions")
    fill = [_FULL] * (x.ndim - consumed)
    if ellipsis_at is None:
        entries.extend(fill)
    else:
        entries[ellipsis_at:ellipsis_at] = fill
    dim = 0
    for i, e in enumerate(entries):
        if e is None or isinstance(e, slice):
            dim += e is not None
        elif type(e) is int:
            n = x._shape[dim]
            if not -n <= e < n:
                raise IndexError(f"{func}: index {e} is out of bounds for axis {dim} with size {n}")
            entries[i] = e % n
            dim += 1
        elif e._dtype is dt.bool_:
            sizes = x._shape[dim:dim + e.ndim]
            if any(b not in (n, 0) for b, n in zip(e._shape, sizes)):
                raise IndexError(f"{func}: a boolean index of shape {e._shape} does not match the indexed "
                                 f"axes {dim}..{dim + e.ndim - 1} of shape {sizes}")
            dim += e.ndim
        else:
            dim += 1
    return entries, has_array


def basic_view(x: Tensor, entries: list) -> Tensor:
    """The zero-copy view ``x[entries]`` for parsed entries of ints, slices and None."""
    shape, strides = [], []
    offset = x._offset
    dim = 0
    for e in entries:
        if e is None:
            shape.append(1)
            strides.append(0)
            continue
        st = x._strides[dim]
        if isinstance(e, slice):
            start, stop, step = e.indices(x._shape[dim])
            length = len(range(start, stop, step))
            if length:
                offset += start * st
            shape.append(length)
            strides.append(st * step)
        else:
            offset += e * st
        dim += 1
    return make_view(x, tuple(shape), tuple(strides), offset, (*entries, Ellipsis))


def getitem(x: Tensor, key) -> Tensor:
    """``x[key]``: a view for ints, slices, None and Ellipsis; a gathered copy for index arrays."""
    if type(key) is slice and x._shape:
        # the commonest key, x[a:b:c], without the general parser (which reports any error in it)
        try:
            start, stop, step = key.indices(x._shape[0])
        except (TypeError, ValueError):
            pass
        else:
            st = x._strides[0]
            return make_view(x, (len(range(start, stop, step)),) + x._shape[1:], (st * step,) + x._strides[1:],
                             x._offset + start * st, (key, Ellipsis))
    entries, has_array = parse_key(x, key, "__getitem__")
    if has_array:
        return gather(x, entries, "__getitem__")
    return basic_view(x, entries)


def setitem_value(x: Tensor, value, func: str):
    """``value`` checked for writing into ``x``: a tensor whose dtype promotes to x's, or a Python scalar
    that the standard lets combine with x's dtype (returned as a NumPy scalar of x's dtype)."""
    if type(value) is Tensor:
        if value._dev is not x._dev:
            raise ValueError(f"{func}: value is on {value._dev} but the array is on {x._dev}")
        if dt._PROMOTION[value._dtype, x._dtype] is not x._dtype:
            raise TypeError(f"{func}: cannot write {value._dtype.name} values into a {x._dtype.name} array")
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        value = value.item()  # a NumPy scalar (np.float64 is even a float) is written as its Python value
    if type(value) not in _SCALARS:
        raise TypeError(f"{func}: value must be an array or a Python scalar, got {type(value).__name__}")
    if not dt.scalar_compatible(x._dtype, value):
        raise TypeError(f"{func}: a Python {type(value).__name__} cannot be stored in a {x._dtype.name} array")
    try:
        return x._dtype.np.type(value)
    except OverflowError:
        raise OverflowError(f"{func}: {value} does not fit in {x._dtype.name}") from None


def _masked_write(x: Tensor, entries: list, value) -> bool:
    """``x[entries] = value`` for a key of one boolean mask among slices and None, where value's shape does
    not depend on the mask's count: an element-wise masked copy into a view of x, with no host read (so it
    can be captured). False, with nothing done, for any other key or value."""
    arrays = [i for i, e in enumerate(entries) if type(e) is Tensor]
    if len(arrays) != 1 or entries[arrays[0]]._dtype is not dt.bool_ or any(type(e) is int for e in entries):
        return False
    p = arrays[0]  # the mask's first axis in the view below: each slice or None before it makes one axis
    mask = entries[p]
    m = mask.ndim
    target = basic_view(x, entries[:p] + [_FULL] * m + entries[p + 1:])
    counted = target._shape[:p] + (1,) + target._shape[p + m:]  # x[entries]'s shape, the count taken as 1
    if type(value) is Tensor and not broadcasts_to(value._shape, counted):
        return False
    if mask._shape != target._shape[p:p + m] or target.size == 0:
        return True  # an axis of size 0 in the mask selects nothing
    rest = target.ndim - p - m
    mask = make_view(mask, target._shape, (0,) * p + mask._strides + (0,) * rest, mask._offset)
    if type(value) is Tensor:
        v = broadcast_to_shape(value, counted)
        value = make_view(v, target._shape, v._strides[:p] + (0,) * m + v._strides[p + 1:], v._offset)
    launch(x._dev, K.mask_assign, (mask, value), (target,))
    return True


def setitem(x: Tensor, key, value) -> None:
    """``x[key] = value``: value (an array or Python scalar) is broadcast to the shape of ``x[key]``."""
    entries, has_array = parse_key(x, key, "__setitem__")
    value = setitem_value(x, value, "__setitem__")
    if has_array:
        if not _masked_write(x, entries, value):
            scatter(x, entries, value, "__setitem__")
        return
    target = basic_view(x, entries)
    if type(value) is Tensor:
        if not broadcasts_to(value._shape, target._shape):
            raise ValueError(f"__setitem__: value of shape {value._shape} does not broadcast to {target._shape}")
        if target.size:
            launch(x._dev, K.copy, (broadcast_to_shape(value, target._shape),), (target,))
    elif target.size:
        launch(x._dev, K.fill, (), (target,), {"value": value})
