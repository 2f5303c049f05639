"""The Tensor methods that are namespace functions, installed on the type from the namespace side.

numr_array/_tensor.py holds the array object's data and the methods that need nothing but it; the backends
import that module. The operators, indexing, host conversion, DLPack, repr and ``__array_namespace__``
call namespace functions, so they are set on the type here, by the package's ``__init__`` once the
namespace exists (the tensor module never imports the namespace). A method that is a namespace function
with the method's own signature is that function itself, with no wrapper between.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from . import _dtypes as dt
from . import _namespace as ns
from . import runtime as _rt
from .errors import check_host_read
from ._tensor import Tensor

_SCALARS = (bool, int, float, complex)


def _operand(other):
    """``other`` as an operator operand: a tensor or Python scalar as is, a NumPy scalar as its Python value
    (NumPy users write ``x * np.float32(2)``), anything else None."""
    if type(other) is Tensor or type(other) in _SCALARS:
        return other
    if isinstance(other, np.generic) and other.dtype.kind in "biufc":
        return other.item()
    return None


def _binary(fn):
    """The forward, reflected and in-place operator of the binary namespace function ``fn``."""

    # (a tensor or Python scalar goes straight to fn: no _operand frame on the common path)
    def forward(self, other):
        if type(other) is not Tensor and type(other) not in _SCALARS:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return fn(self, other)

    def reflected(self, other):
        if type(other) is not Tensor and type(other) not in _SCALARS:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return fn(other, self)

    def inplace(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        fn(self, other, out=self)
        return self

    return forward, reflected, inplace


def _unary(fn):
    return lambda self: fn(self)


def _scalar(self: Tensor, func: str):
    if self._shape != ():
        raise TypeError(f"{func}: only 0-D arrays convert to Python scalars, got shape {self._shape}")
    return ns.to_numpy(self, func).item()


def __bool__(self) -> bool:
    return bool(_scalar(self, "__bool__"))


def __int__(self) -> int:
    if self._dtype.kind == "complex floating":
        raise TypeError("__int__: cannot convert a complex array to int")
    return int(_scalar(self, "__int__"))


def __float__(self) -> float:
    if self._dtype.kind == "complex floating":
        raise TypeError("__float__: cannot convert a complex array to float; use real() or abs() first")
    return float(_scalar(self, "__float__"))


def __complex__(self) -> complex:
    return complex(_scalar(self, "__complex__"))


def __index__(self) -> int:
    if self._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"__index__: only integer arrays can be used as an index, got {self._dtype.name}")
    return int(_scalar(self, "__index__"))


def __array__(self, dtype=None, copy=None):
    if _rt.lost_count:  # a lost tensor says so, on any device
        _rt.check_live((self,))
    check_host_read(self._dev, "__array__")
    if self._dev.kind != "cpu":
        raise TypeError(f"__array__: implicit conversion of a {self._dev} tensor to NumPy is not allowed; "
                        "use .to_device('cpu') first")
    a = ns.to_numpy(self, "__array__")
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError("__array__: a dtype change needs a copy, but copy=False")
        return a.astype(dtype)
    return a.copy() if copy else a


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    return ns.dlpack_export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def to_device(self, device, /, *, stream=None) -> Tensor:
    return ns.to_device(self, device, stream=stream)


def T(self) -> Tensor:
    if len(self._shape) != 2:
        raise ValueError(f"Tensor.T: only defined for 2-D arrays (got {len(self._shape)}-D); use .mT or permute_dims")
    return ns.permute_dims(self, (1, 0))


def mT(self) -> Tensor:
    return ns.matrix_transpose(self)


_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
_COMPARISON = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
               "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}


def install(package: ModuleType) -> None:
    """Set the namespace methods on Tensor; ``package`` is numr_array, which ``__array_namespace__`` returns
    (passed in, since importing the package from here would be a cycle)."""

    def __array_namespace__(self, *, api_version: str | None = None):
        if api_version is not None and api_version not in ns.SUPPORTED_VERSIONS:
            raise ValueError(f"__array_namespace__: unsupported api_version {api_version!r}; "
                             f"supported: {', '.join(ns.SUPPORTED_VERSIONS)}")
        return package

    for f in (__bool__, __int__, __float__, __complex__, __index__, __array__, __dlpack__, to_device,
              __array_namespace__):
        setattr(Tensor, f.__name__, f)
    Tensor.T = property(T)
    Tensor.mT = property(mT)
    Tensor.__dlpack_device__ = ns.dlpack_device
    Tensor.__repr__ = Tensor.__str__ = ns.tensor_repr
    # x[a:b:c] in C where compiled (numr_array/_speedups.c); getitem serves every other key
    Tensor.__getitem__ = ns.getitem if _rt.speedups is None else _rt.speedups.getitem_method(ns.getitem, np.ndarray)
    Tensor.__setitem__ = ns.setitem
    for dunder, name in _BINARY.items():
        f, r, i = _binary(getattr(ns, name))
        setattr(Tensor, f"__{dunder}__", f)
        setattr(Tensor, f"__r{dunder}__", r)
        setattr(Tensor, f"__i{dunder}__", i)
    for dunder, name in _COMPARISON.items():
        setattr(Tensor, f"__{dunder}__", _binary(getattr(ns, name))[0])
    for dunder, name in _UNARY.items():
        setattr(Tensor, f"__{dunder}__", _unary(getattr(ns, name)))
