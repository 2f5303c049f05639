"""The namespace layer's argument checks: the one place for validating arrays, axes, devices and ``out=``,
and for broadcasting (the result shape, and zero-copy broadcast views of the operands).

Every public function validates with these helpers before any kernel runs, so a call that fails leaves
its inputs and ``out`` untouched, and no backend repeats any of it.
"""

from __future__ import annotations

from typing import Sequence

from . import _dtypes as dt
from ._device import Device, resolve_device
from ._tensor import Tensor

__all__ = [
    "check_tensor", "check_same_device", "check_axis", "check_axes", "promote_on", "broadcast_shape",
    "broadcast_to_shape", "check_out", "device_of",
]


def check_tensor(x, func: str, name: str = "x") -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{func}: {name} must be a numr_array array, got {type(x).__name__}")
    return x


def check_same_device(func: str, *tensors: Tensor) -> Device:
    dev = tensors[0]._dev
    for t in tensors[1:]:
        if t._dev is not dev:
            raise ValueError(f"{func}: arrays are on different devices ({dev} and {t._dev}); "
                             "move one explicitly with to_device()")
    return dev


def check_axis(axis, ndim: int, func: str) -> int:
    """A normalised axis in [0, ndim); IndexError when out of range (TypeError when not an int)."""
    if type(axis) is not int:
        if isinstance(axis, (bool, float)) or not hasattr(axis, "__index__"):
            raise TypeError(f"{func}: axis must be an int, got {axis!r}")
        axis = int(axis.__index__())
    if not -ndim <= axis < ndim:
        raise IndexError(f"{func}: axis {axis} is out of bounds for an array of {ndim} dimensions")
    return axis % ndim if ndim else 0


def check_axes(axis, ndim: int, func: str) -> tuple[int, ...]:
    """``axis=`` of a reduction: None (all axes), an int, or a tuple of distinct ints."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        axes = tuple(check_axis(a, ndim, func) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{func}: repeated axis in {axis}")
        return axes
    return (check_axis(axis, ndim, func),)


def promote_on(dev: Device, d1: dt.DType, d2: dt.DType, func: str) -> dt.DType:
    """The promoted dtype of ``d1`` and ``d2``, TypeError where there is none or ``dev`` lacks it (int8 and
    uint32 promote to int64, which a WebGPU adapter without shader-int64 cannot compute in)."""
    r = dt.promote(d1, d2, func)
    if r is not d1 and r is not d2 and not dev.client.supports_dtype(r):
        raise TypeError(f"{func}: {d1.name} and {d2.name} promote to {r.name}, which device {dev} does not "
                        "support")
    return r


def broadcast_shape(shapes: Sequence[tuple[int, ...]], func: str) -> tuple[int, ...]:
    """The broadcast shape of ``shapes``; ValueError naming them when they are incompatible."""
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(-ndim, 0):
        n = 1
        for s in shapes:
            if -i <= len(s):
                m = s[i]
                if m != 1:
                    if n != 1 and n != m:
                        raise ValueError(f"{func}: shapes {', '.join(map(str, shapes))} cannot be broadcast together")
                    n = m
        out.append(n)
    return tuple(out)


def broadcast_to_shape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A zero-copy view of ``x`` broadcast to ``shape`` (already known compatible)."""
    if x._shape == shape:
        return x
    lead = len(shape) - len(x._shape)
    strides = [0] * lead
    for n, s, st in zip(shape[lead:], x._shape, x._strides):
        strides.append(st if s == n else 0)
    return Tensor(x._buf, x._dtype, shape, tuple(strides), x._offset, x._dev)


def check_out(out, shape: tuple[int, ...], dtype: dt.DType, dev: Device, func: str) -> Tensor:
    """Validate ``out=``: a tensor on ``dev`` with exactly the result's shape and dtype."""
    if type(out) is not Tensor:
        raise TypeError(f"{func}: out must be a numr_array array, got {type(out).__name__}")
    if out._dtype is not dtype:
        raise TypeError(f"{func}: out has dtype {out._dtype.name} but the result is {dtype.name}")
    if out._shape != shape:
        raise ValueError(f"{func}: out has shape {out._shape} but the result has shape {shape}")
    if out._dev is not dev:
        raise ValueError(f"{func}: out is on device {out._dev} but the inputs are on device {dev}")
    if 0 in out._strides and any(st == 0 and n > 1 for st, n in zip(out._strides, out._shape)):
        raise ValueError(f"{func}: out is a broadcast view (strides {out._strides}); several of its elements "
                         "share one memory location")
    return out


def device_of(device, func: str) -> Device:
    return resolve_device(device, func)
