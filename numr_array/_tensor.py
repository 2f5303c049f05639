"""The array object: a reference-counted device buffer + dtype + shape + strides + offset.

Strides and offset are in elements. View operations (slicing, reshape, permute_dims, broadcast_to, ...)
make a new Tensor over the same Buffer; nothing here touches device memory except through the device's
Client. Operators delegate to the namespace functions, so their validation is the functions' own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device
from .runtime import Buffer

_SCALARS = (bool, int, float, complex)


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


class Tensor:
    """An n-dimensional array on one device, as the array API standard specifies the array object."""

    __slots__ = ("_buf", "_dtype", "_shape", "_strides", "_offset", "_dev", "_view", "__weakref__")

    def __init__(self, buf: Buffer, dtype: dt.DType, shape: tuple[int, ...], strides: tuple[int, ...],
                 offset: int, device: Device, view: Any = None):
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
    def dtype(self) -> dt.DType:
        return self._dtype

    @property
    def device(self) -> Device:
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

    @property
    def T(self) -> "Tensor":
        if len(self._shape) != 2:
            raise ValueError(f"Tensor.T: only defined for 2-D arrays (got {len(self._shape)}-D); use .mT or permute_dims")
        return _ns.permute_dims(self, (1, 0))

    @property
    def mT(self) -> "Tensor":
        return _ns.matrix_transpose(self)

    def is_contiguous(self) -> bool:
        return self._strides == contiguous_strides(self._shape) or _size(self._shape) <= 1

    def __array_namespace__(self, *, api_version: str | None = None):
        if api_version is not None and api_version not in _ns.SUPPORTED_VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; "
                             f"supported: {', '.join(_ns.SUPPORTED_VERSIONS)}")
        import numr_array
        return numr_array

    # --- host conversion ----------------------------------------------------------------------------
    def _scalar(self, func: str):
        if self._shape != ():
            raise TypeError(f"{func}: only 0-D arrays convert to Python scalars, got shape {self._shape}")
        return _ns.to_numpy(self, func).item()

    def __bool__(self) -> bool:
        return bool(self._scalar("__bool__"))

    def __int__(self) -> int:
        if self._dtype.kind == "complex floating":
            raise TypeError("__int__: cannot convert a complex array to int")
        return int(self._scalar("__int__"))

    def __float__(self) -> float:
        if self._dtype.kind == "complex floating":
            raise TypeError("__float__: cannot convert a complex array to float; use real() or abs() first")
        return float(self._scalar("__float__"))

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))

    def __index__(self) -> int:
        if self._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"__index__: only integer arrays can be used as an index, got {self._dtype.name}")
        return int(self._scalar("__index__"))

    def __array__(self, dtype=None, copy=None):
        if _rt.lost_count:  # a lost tensor says so, on any device
            _rt.check_live((self,))
        _capture.check_host_read(self._dev, "__array__")
        if self._dev.kind != "cpu":
            raise TypeError(f"__array__: implicit conversion of a {self._dev} tensor to NumPy is not allowed; "
                            "use .to_device('cpu') first")
        a = _ns.to_numpy(self, "__array__")
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("__array__: a dtype change needs a copy, but copy=False")
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return _ns.dlpack_export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA tensors' memory for CuPy, PyTorch and Numba, without a copy (AttributeError elsewhere)."""
        export = getattr(self._dev.client, "cuda_array_interface", None)
        if export is None:
            raise AttributeError(f"__cuda_array_interface__: {self._dev} tensors are not in CUDA memory")
        return export(self)

    def __dlpack_device__(self) -> tuple[int, int]:
        return _ns.dlpack_device(self)

    def to_device(self, device, /, *, stream=None) -> "Tensor":
        return _ns.to_device(self, device, stream=stream)

    def __repr__(self) -> str:
        return _ns.tensor_repr(self)

    __str__ = __repr__

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-D array")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-D array")
        return (self[i] for i in range(self._shape[0]))

    __hash__ = None  # type: ignore[assignment]
    # NumPy ufuncs and NumPy scalars' operators defer to ours instead of converting the tensor to an ndarray
    # (``np.float64(2) * x`` stays a Tensor; ``np.sin(x)`` is a TypeError: use ``xp.sin``)
    __array_ufunc__ = None

    # --- indexing ----------------------------------------------------------------------------------
    def __getitem__(self, key) -> "Tensor":
        return _ns.getitem(self, key)

    def __setitem__(self, key, value) -> None:
        _ns.setitem(self, key, value)


def _install_operators() -> None:
    """Bind the operator dunders to the namespace functions: forward, reflected and in-place forms."""

    def operand(other):
        """``other`` as an operator operand: a tensor or Python scalar as is, a NumPy scalar as its Python
        value (NumPy users write ``x * np.float32(2)``), anything else None."""
        if type(other) is Tensor or type(other) in _SCALARS:
            return other
        if isinstance(other, np.generic) and other.dtype.kind in "biufc":
            return other.item()
        return None

    def binary(name: str):
        def forward(self, other):
            other = operand(other)
            if other is None:
                return NotImplemented
            return getattr(_ns, name)(self, other)

        def reflected(self, other):
            other = operand(other)
            if other is None:
                return NotImplemented
            return getattr(_ns, name)(other, self)

        def inplace(self, other):
            other = operand(other)
            if other is None:
                return NotImplemented
            getattr(_ns, name)(self, other, out=self)
            return self

        return forward, reflected, inplace

    table = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
        "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
        "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
    }
    for dunder, func in table.items():
        f, r, i = binary(func)
        setattr(Tensor, f"__{dunder}__", f)
        setattr(Tensor, f"__r{dunder}__", r)
        setattr(Tensor, f"__i{dunder}__", i)

    for dunder, func in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                         "gt": "greater", "ge": "greater_equal"}.items():
        setattr(Tensor, f"__{dunder}__", binary(func)[0])

    for dunder, func in {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}.items():
        setattr(Tensor, f"__{dunder}__", (lambda fn: lambda self: getattr(_ns, fn)(self))(func))


_install_operators()

from . import _namespace as _ns  # noqa: E402  (the namespace functions the operators call)
