"""DLPack both ways: ``from_dlpack``, arrays from any object with ``__dlpack__`` (NumPy, CuPy, PyTorch,
numr_array itself), and the export behind ``Tensor.__dlpack__`` / ``__dlpack_device__``.

CPU data is shared, not copied, whenever the caller allows: the producer's memory becomes the buffer of
the new tensor (the CPU client takes a C-contiguous NumPy array as a buffer handle), and the tensor's
strides and offset describe the producer's layout within it. CUDA data bound for another GPU is copied
device to device (``to_device``); everything else goes through a host copy.
"""

from __future__ import annotations

import numpy as np

from . import _capture
from . import _dtypes as dt
from ._checks import device_of
from ._data_type_functions import astype
from ._device import Device, parse_device
from ._launch import make_view
from ._tensor import Tensor
from ._transfer import from_numpy, to_device, to_numpy
from .runtime import Interop

__all__ = ["from_dlpack"]

# DLPack device types (dlpack.h) whose memory the host can read directly: kDLCPU, kDLCUDAHost
_HOST_TYPES = (1, 3)
_CUDA = 2
# DLPack device types (dlpack.h): kDLCPU, kDLCUDA, kDLWebGPU
_DLPACK_DEVICE = {"cpu": 1, "cuda": 2, "webgpu": 15}
_DLPACK_KIND = {v: k for k, v in _DLPACK_DEVICE.items()}
_DLPACK_CPU = (1, 0)


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
    if dev.kind == source.kind == "cuda" and dev is not source:  # another GPU's memory: copied device to device
        try:
            shared = source.client.adopt(x)
        except TypeError as e:  # a dtype the standard lacks, reported as DLPack consumers report it
            raise BufferError(f"from_dlpack: {e}") from None
        return to_device(shared, dev)
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


def dlpack_device(x: Tensor) -> tuple[int, int]:
    kind = x._dev.kind
    if kind not in _DLPACK_DEVICE:
        raise BufferError(f"__dlpack_device__: {x._dev} memory has no DLPack device type")
    return (_DLPACK_DEVICE[kind], x._dev.index)


def _check_stream(stream, kind: str | None) -> None:
    """``stream`` as the standard allows it for the device the consumer reads on: an int on CUDA, where
    0 is ambiguous (None, 1 or 2) and so refused, as is anything below -1; only None elsewhere (the CPU
    has no streams, and no stream type is defined for WebGPU)."""
    if stream is None:
        return
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"__dlpack__: stream must be an int or None, got {stream!r}")
    if kind != "cuda":
        raise ValueError(f"__dlpack__: only stream=None is valid for {kind or 'this'} memory, got stream={stream}")
    if stream == 0 or stream < -1:
        raise ValueError(f"__dlpack__: stream={stream} is not a valid CUDA stream (0 is ambiguous; use None, "
                         "-1, 1, 2 or a stream pointer)")


def dlpack_export(x: Tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of ``x``: its own memory where the device exports it, or with ``dl_device=(1, 0)``
    (kDLCPU) a host copy from any device (unless ``copy=False``)."""
    _check_stream(stream, x._dev.kind if dl_device is None else _DLPACK_KIND.get(tuple(dl_device)[0]))
    _capture.check_host_read(x._dev, "__dlpack__")
    if dl_device is not None and tuple(dl_device) != dlpack_device(x):
        if tuple(dl_device) == _DLPACK_CPU and copy is not False:
            # off the CPU, to_numpy is a fresh C-contiguous host array of x's shape, which the consumer owns
            return to_numpy(x, "__dlpack__").__dlpack__(max_version=max_version)
        raise BufferError(f"__dlpack__: cannot export {x._dev} memory to DLPack device {tuple(dl_device)}"
                          + ("" if copy is not False else " without a copy"))
    client = x._dev.client
    if not isinstance(client, Interop):
        raise BufferError(f"__dlpack__: {x._dev} does not export its memory through DLPack; "
                          "pass dl_device=(1, 0) for a host copy (numpy.from_dlpack(x, device='cpu'))")
    capsule = client.dlpack(x, stream=stream, max_version=max_version, copy=copy)
    if not copy:
        x._buf.exported = True  # the consumer shares the memory: never reused in place
    return capsule
