"""``from_dlpack``: arrays from any object with ``__dlpack__`` (NumPy, CuPy, PyTorch, numr_array itself).

CPU data is shared, not copied, whenever the caller allows: the producer's memory becomes the buffer of
the new tensor (the CPU client takes a C-contiguous NumPy array as a buffer handle), and the tensor's
strides and offset describe the producer's layout within it. Everything else goes through a host copy.
"""

from __future__ import annotations

import numpy as np

from . import _dtypes as dt
from ._data_type_functions import astype
from ._device import Device, parse_device
from ._dispatch import device_of, from_numpy, make_view
from ._tensor import Tensor

__all__ = ["from_dlpack"]

# DLPack device types (dlpack.h) whose memory the host can read directly: kDLCPU, kDLCUDAHost
_HOST_TYPES = (1, 3)
_CUDA = 2


class CopyRequiredError(ValueError, BufferError):
    """copy=False, but the data can only arrive by a copy. The standard's text names both ValueError (under
    Raises) and BufferError (for ``copy``), so this is both."""


def from_dlpack(x: object, /, *, device=None, copy: bool | None = None) -> Tensor:
    """An array holding the data of ``x`` (anything with ``__dlpack__``): shared where possible, copied
    when ``copy`` is True or the data must move to ``device``; ``copy=False`` never copies."""
    if copy not in (None, True, False):
        raise ValueError(f"from_dlpack: copy must be True, False or None, got {copy!r}")
    target = None if device is None else device_of(device, "from_dlpack")
    if type(x) is Tensor:
        return _from_tensor(x, target, copy)
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__/__dlpack_device__ methods")
    source = _source_device(x)
    dev = source if target is None else target
    _check_available(dev)
    if dev.kind == "cpu" and source.kind == "cpu" and not copy:
        return _share(np.from_dlpack(x), dev)
    if dev is source and not copy and dev.kind == "cuda":
        return dev.client.adopt(x)  # the producer's device memory, shared
    if copy is False:
        raise CopyRequiredError(f"from_dlpack: copy=False, but data on {source} can reach {dev} only by a copy")
    # a host copy (the producer copies device memory out when dl_device asks for the CPU), then onto dev
    host = np.from_dlpack(x, device="cpu")
    return _copy(host, dev)


def _from_tensor(x: Tensor, target: Device | None, copy: bool | None) -> Tensor:
    dev = x._dev if target is None else target
    if dev is x._dev and not copy:
        return make_view(x, x._shape, x._strides, x._offset)
    if copy is False:
        raise CopyRequiredError(f"from_dlpack: copy=False, but moving data from {x._dev} to {dev} copies it")
    if dev is x._dev:
        return astype(x, x._dtype, copy=True)
    return x.to_device(dev)


def _source_device(x) -> Device:
    kind, index = x.__dlpack_device__()
    kind = int(kind)
    if kind in _HOST_TYPES:
        return parse_device("cpu")
    if kind == _CUDA:
        return parse_device(f"cuda:{int(index)}")
    raise BufferError(f"from_dlpack: DLPack device type {kind} is not supported (only CPU and CUDA memory)")


def _check_available(dev: Device) -> None:
    try:
        dev.client
    except ValueError:
        raise BufferError(f"from_dlpack: device {dev} is not available to import data onto") from None


def _dtype_of(a: np.ndarray) -> dt.DType:
    try:
        return dt.from_numpy(a.dtype)
    except TypeError:
        raise BufferError(f"from_dlpack: the data type {a.dtype} has no numr_array dtype") from None


def _copy(a: np.ndarray, dev: Device) -> Tensor:
    """A new tensor on ``dev`` holding a copy of the host array ``a``."""
    return from_numpy(a, dev, _dtype_of(a))


def _share(a: np.ndarray, dev: Device) -> Tensor:
    """A CPU tensor over the memory of the host array ``a``, in ``a``'s own layout, without a copy."""
    _dtype_of(a)  # BufferError, as DLPack consumers report it, for a dtype the standard lacks
    return dev.client.adopt(a)
