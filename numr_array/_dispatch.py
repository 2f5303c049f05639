"""The namespace layer's shared machinery: the one place for argument checks, broadcasting, result
allocation, ``out=`` handling, host transfers, and launching a kernel (with capture bookkeeping).

Every public function validates with these helpers before any kernel runs, so a call that fails leaves
its inputs and ``out`` untouched, and no backend repeats any of it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device, resolve_device
from ._tensor import _STRIDES, Tensor, contiguous_strides
from .kernels import CHECK_LAUNCHES, Kernel, check_launch

__all__ = [
    "check_tensor", "check_same_device", "check_axis", "check_axes", "broadcast_shapes", "broadcast_to_shape",
    "empty", "check_out", "result", "launch", "to_numpy", "from_numpy", "make_view",
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


def broadcast_shapes(shapes: Sequence[tuple[int, ...]], func: str) -> tuple[int, ...]:
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


def make_view(x: Tensor, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Tensor:
    """A view of ``x``'s buffer. An empty view gets offset 0: its offset is never read, and one past the end
    of the buffer (``x[..., ::-1]`` of shape (0, 3)) is rejected by backends that check it (NumPy's ndarray)."""
    return Tensor(x._buf, x._dtype, shape, strides, 0 if 0 in shape else offset, x._dev)


def empty(dev: Device, shape: tuple[int, ...], dtype: dt.DType) -> Tensor:
    """A new C-contiguous tensor (uninitialised): from the capture arena while capturing."""
    buf, view = (dev._client or dev.client).alloc_tensor(shape, dtype)
    return Tensor(buf, dtype, shape, contiguous_strides(shape), 0, dev, view)


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


def result(out, shape: tuple[int, ...], dtype: dt.DType, dev: Device, func: str) -> Tensor:
    """The tensor a call writes its result into: ``out`` validated, or a new one."""
    if out is None:
        buf, view = (dev._client or dev.client).alloc_tensor(shape, dtype)
        return Tensor(buf, dtype, shape, _STRIDES.get(shape) or contiguous_strides(shape), 0, dev, view)
    return check_out(out, shape, dtype, dev, func)


_NO_PARAMS: dict = {}


def launch(dev: Device, kernel: Kernel, inputs: Sequence, outputs: Sequence[Tensor],
           params: dict | None = None) -> None:
    """Run the declared ``kernel`` (numr_array/kernels.py) on ``dev``; while ``dev`` is captured, the graph
    holds the outside tensors it touches. DeviceLostError, before any work, when a tensor was made on a
    client that has since been lost."""
    if _rt.lost_count:
        _rt.check_live(inputs)
        _rt.check_live(outputs)
    if _capture.capturing:
        state = _capture.local.state
        if state is not None and state.device is dev:
            state.track(inputs, outputs)
    (dev._client or dev.client).launch(kernel.name, inputs, outputs, _NO_PARAMS if params is None else params)


if CHECK_LAUNCHES:  # chosen once at import, so that an unchecked launch costs nothing extra
    _launch_unchecked = launch

    def launch(dev: Device, kernel: Kernel, inputs: Sequence, outputs: Sequence[Tensor],
               params: dict | None = None) -> None:
        check_launch(kernel, inputs, outputs, _NO_PARAMS if params is None else params)
        _launch_unchecked(dev, kernel, inputs, outputs, params)


def to_numpy(x: Tensor, func: str) -> np.ndarray:
    """A host copy of ``x`` (a zero-copy view on CPU) with its shape; CaptureError inside a capture."""
    if _rt.lost_count:
        _rt.check_live((x,))
    _capture.check_host_read(x._dev, func)
    client = x._dev.client
    host_view = getattr(client, "host_view", None)
    if host_view is not None:
        return host_view(x)
    if not x.is_contiguous():
        c = empty(x._dev, x._shape, x._dtype)
        client.copy_strided(x, c)
        x = c
    out = np.empty(x._shape, x._dtype.np)
    if out.nbytes:
        client.copy_from_device(x._buf, x._offset * x._dtype.itemsize, out)
    return out


def from_numpy(a: np.ndarray, dev: Device, dtype: dt.DType | None = None) -> Tensor:
    """A new tensor on ``dev`` holding a copy of the host array ``a`` (cast to ``dtype`` if given)."""
    if dtype is None:
        dtype = dt.from_numpy(a.dtype)
    a = np.asarray(a, dtype=dtype.np, order="C")  # (np.ascontiguousarray would make 0-D arrays 1-D)
    t = empty(dev, a.shape, dtype)
    if a.nbytes:
        dev.client.copy_to_device(a, t._buf, 0)
    return t


def device_of(device, func: str) -> Device:
    return resolve_device(device, func)
