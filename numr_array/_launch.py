"""Results and launches: a call's result tensor (a new one, from the capture arena while capturing, or
``out=`` checked), views over a tensor's buffer, and ``launch``, which runs a declared kernel on a device
(with the capture bookkeeping). Argument checks come first, from ``_checks.py``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._checks import check_out
from ._device import Device
from ._tensor import _STRIDES, Tensor, contiguous_strides
from .kernels import CHECK_LAUNCHES, Kernel, check_launch

__all__ = ["make_view", "new_tensor", "result", "launch"]


def make_view(x: Tensor, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, key=None) -> Tensor:
    """A view of ``x``'s buffer. An empty view gets offset 0: its offset is never read, and one past the end
    of the buffer (``x[..., ::-1]`` of shape (0, 3)) is rejected by backends that check it (NumPy's ndarray).

    ``key``: a basic index (a tuple of ints, slices and None, ending in Ellipsis) that gives this view of
    ``x``. Where ``x`` has a NumPy view (CPU), the new tensor's is that view indexed with ``key`` (NumPy
    indexes as numr does): a fraction of the cost of making one from the buffer with NumPy's ndarray
    constructor, which its first launch would otherwise do."""
    v = x._view
    return Tensor(x._buf, x._dtype, shape, strides, 0 if 0 in shape else offset, x._dev,
                  v[key] if key is not None and type(v) is np.ndarray else None)


def new_tensor(dev: Device, shape: tuple[int, ...], dtype: dt.DType) -> Tensor:
    """A new C-contiguous tensor (uninitialised): from the capture arena while capturing."""
    buf, view = (dev._client or dev.client).alloc_tensor(shape, dtype)
    return Tensor(buf, dtype, shape, contiguous_strides(shape), 0, dev, view)


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
