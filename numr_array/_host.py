"""Moving data between devices and out to other libraries: to_device, DLPack, repr."""

from __future__ import annotations

import numpy as np

from . import _capture
from ._device import parse_device, renew_if_lost
from ._dispatch import from_numpy, to_numpy
from ._tensor import Tensor

__all__: list[str] = []

# DLPack device types (dlpack.h): kDLCPU, kDLCUDA, kDLWebGPU
_DLPACK_DEVICE = {"cpu": 1, "cuda": 2, "webgpu": 15}
_DLPACK_KIND = {v: k for k, v in _DLPACK_DEVICE.items()}
_DLPACK_CPU = (1, 0)


def to_device(x: Tensor, device, /, *, stream=None) -> Tensor:
    """``x`` on ``device``: x itself when already there, else a copy through the host."""
    dev = renew_if_lost(parse_device(device, "to_device"))
    if dev is x._dev:
        return x
    _capture.check_not_capturing("to_device")
    return from_numpy(to_numpy(x, "to_device"), dev, x._dtype)


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
    exporter = getattr(x._dev.client, "dlpack", None)
    if exporter is None:
        raise BufferError(f"__dlpack__: {x._dev} does not export its memory through DLPack; "
                          "pass dl_device=(1, 0) for a host copy (numpy.from_dlpack(x, device='cpu'))")
    return exporter(x, stream=stream, max_version=max_version, copy=copy)


def tensor_repr(x: Tensor) -> str:
    suffix = f"dtype={x._dtype.name}" + ("" if x._dev.kind == "cpu" else f", device={x._dev}")
    st = _capture.current()
    if st is not None and st.device is x._dev:
        return f"Tensor(<in capture>, shape={x._shape}, {suffix})"
    body = np.array2string(to_numpy(x, "repr"), separator=", ", prefix="Tensor(")
    if x.size == 0:
        body = f"[], shape={x._shape}"
    return f"Tensor({body}, {suffix})"
