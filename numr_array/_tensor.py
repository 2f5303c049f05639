"""The array object: a reference-counted device buffer + dtype + shape + strides + offset.

Strides and offset are in elements. View operations (slicing, reshape, permute_dims, broadcast_to, ...)
make a new Tensor over the same Buffer; nothing here touches device memory except through the device's
Client. The methods that are namespace functions (operators, indexing, host conversion, repr, ...) are
installed on the type by the namespace side (numr_array/_tensor_methods.py), so this module, which the
backends import, imports nothing of the namespace layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import _dtypes as dt
from .runtime import Buffer, CudaInterop, speedups

if TYPE_CHECKING:
    from ._device import Device


_STRIDES: dict[tuple[int, ...], tuple[int, ...]] = {}


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """C-order strides (in elements) of ``shape``; memoised, since a few shapes recur in every program."""
    s = _STRIDES.get(shape)
    if s is None:
        s = _compute_strides(shape)
        if len(_STRIDES) < 4096:
            _STRIDES[shape] = s
    return s


def _compute_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    acc = 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n if n > 0 else 1
    return tuple(reversed(strides))


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


#: Tensor's base: where numr_array._speedups is built, its TensorBase, whose number slots and rich comparison
#: are Tensor's operators in C (configured by numr_array/_tensor_methods.py); else object, and the operators
#: are Python methods
_TensorBase = object if speedups is None else speedups.TensorBase


class Tensor(_TensorBase):
    """An n-dimensional array on one device, as the array API standard specifies the array object."""

    __slots__ = ("_buf", "_dtype", "_shape", "_strides", "_offset", "_dev", "_view", "__weakref__")
    # above NumPy's arrays and dask's (11), as CuPy's: a mixed operation takes this type's implementation
    __array_priority__ = 100

    def __init__(self, buf: Buffer, dtype: dt.DType, shape: tuple[int, ...], strides: tuple[int, ...],
                 offset: int, device: "Device", view: Any = None):
        self._buf = buf
        self._dtype = dtype
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dev = device
        # the backend's own view of this tensor (a NumPy/CuPy array), made on first launch and kept
        self._view = view

    # --- attributes -----------------------------------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        """The data type: a ``numpy.dtype``, as NumPy's and CuPy's arrays have (``x.dtype is xp.float32``)."""
        return self._dtype.np

    @property
    def device(self) -> "Device":
        return self._dev

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return _size(self._shape)

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in elements (not bytes, unlike NumPy)."""
        return self._strides

    def is_contiguous(self) -> bool:
        return self._strides == contiguous_strides(self._shape) or _size(self._shape) <= 1

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA tensors' memory for CuPy, PyTorch and Numba, without a copy (AttributeError elsewhere)."""
        client = self._dev.client
        if not isinstance(client, CudaInterop):
            raise AttributeError(f"__cuda_array_interface__: {self._dev} tensors are not in CUDA memory")
        interface = client.cuda_array_interface(self)
        self._buf.exported = True  # a consumer may keep the pointer alone: never reused in place
        return interface

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-D array")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-D array")
        return (self[i] for i in range(self._shape[0]))

    __hash__ = None  # type: ignore[assignment]
