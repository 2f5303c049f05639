"""Moving data between the host and devices: a host copy of a tensor (``to_numpy``), a tensor from a host
array (``from_numpy``), and ``to_device``.
"""

from __future__ import annotations

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device, parse_device, renew_if_lost
from ._launch import new_tensor
from ._tensor import Tensor

__all__ = ["to_numpy", "from_numpy", "to_device", "reduce_tensor"]


#: whether a client type is a HostInterop (an ABC, whose isinstance costs a third of a host read of a small
#: array): looked up once per type
_HOST_INTEROP: dict[type, bool] = {}


def to_numpy(x: Tensor, func: str) -> np.ndarray:
    """A host copy of ``x`` (a zero-copy view on CPU, which marks its buffer exported) with its shape;
    CaptureError inside a capture."""
    if _rt.lost_count:
        _rt.check_live((x,))
    _capture.check_host_read(x._dev, func)
    client = x._dev._client or x._dev.client
    host = _HOST_INTEROP.get(type(client))
    if host is None:
        host = _HOST_INTEROP[type(client)] = isinstance(client, _rt.HostInterop)
    if host:
        x._buf.exported = True  # the view may outlive every tensor of the buffer: never reused in place
        return client.host_view(x)
    if not x.is_contiguous():
        c = new_tensor(x._dev, x._shape, x._dtype)
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
    t = new_tensor(dev, a.shape, dtype)
    if a.nbytes:
        dev.client.copy_to_device(a, t._buf, 0)
    return t


def to_device(x: Tensor, device, /, *, stream=None) -> Tensor:
    """``x`` on ``device``: x itself when already there; else a copy, device to device between two devices
    of a backend that has such copies (two GPUs on CUDA: ``runtime.PeerCopy``), through the host otherwise."""
    dev = renew_if_lost(parse_device(device, "to_device"))
    if dev is x._dev:
        return x
    st = _capture.current()
    if st is not None and (st.device is dev or st.device is x._dev):  # (other devices' copies run eagerly)
        _capture.check_not_capturing("to_device")
    client, target = x._dev.client, dev.client
    if isinstance(client, _rt.PeerCopy) and type(target) is type(client):
        if _rt.lost_count:
            _rt.check_live((x,))
        if not x.is_contiguous():
            c = new_tensor(x._dev, x._shape, x._dtype)
            client.copy_strided(x, c)
            x = c
        out = new_tensor(dev, x._shape, x._dtype)
        client.copy_to_peer(x, out, target)
        return out
    return from_numpy(to_numpy(x, "to_device"), dev, x._dtype)


def reduce_tensor(x: Tensor) -> tuple:
    """``Tensor.__reduce__``: a pickled tensor is its device's name and a host copy of its data, and loads
    as a new tensor on the device of that name in the loading process (dask workers, multiprocessing)."""
    return (_unpickle, (x._dev._name, np.array(to_numpy(x, "pickle"), copy=True)))


def _unpickle(device: str, data: np.ndarray) -> Tensor:
    return from_numpy(data, parse_device(device, "unpickle"))

