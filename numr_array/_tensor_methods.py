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
from . import _elementwise
from . import _manipulation
from . import _namespace as ns
from . import _numpy_protocols
from . import _transfer
from . import runtime as _rt
from ._checks import check_out
from ._tensor import Tensor
from .errors import check_host_read

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
    """The forward, reflected and in-place operator of the binary namespace function ``fn``. An element-wise
    function's operators call its ``_operator`` (fn without ``out``, counting an operand the interpreter
    holds only on its stack as a dead temporary whose memory the result may take: _elementwise._OPERATOR)."""
    call = getattr(fn, "_operator", fn)

    # (a tensor or Python scalar goes straight to fn: no _operand frame on the common path)
    def forward(self, other):
        if type(other) is not Tensor and type(other) not in _SCALARS:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return call(self, other)

    def reflected(self, other):
        if type(other) is not Tensor and type(other) not in _SCALARS:
            other = _operand(other)
            if other is None:
                return NotImplemented
        return call(other, self)

    def inplace(self, other):
        other = _operand(other)
        if other is None:
            return NotImplemented
        fn(self, other, out=self)
        return self

    return forward, reflected, inplace


def _unary(fn):
    call = getattr(fn, "_operator", fn)
    return lambda self: call(self)


def _scalar(self: Tensor, func: str):
    if self._shape != ():
        raise TypeError(f"{func}: only 0-D arrays convert to Python scalars, got shape {self._shape}")
    return ns.to_numpy(self, func).item()


def __bool__(self) -> bool:
    return bool(_scalar(self, "__bool__"))


def __int__(self) -> int:
    if self._dtype.kind == "c":
        raise TypeError("__int__: cannot convert a complex array to int")
    return int(_scalar(self, "__int__"))


def __float__(self) -> float:
    if self._dtype.kind == "c":
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
        raise TypeError(f"__array__: implicit conversion of a {self._dev} tensor to NumPy is not allowed (it "
                        "would copy to the host unasked); copy explicitly: x.to_device('cpu'), or x.numpy() after it")
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


# --- NumPy's ndarray methods and properties, with NumPy's signatures, over the namespace functions --------

def _only(value, default, name: str, func: str) -> None:
    """NumPy's argument ``name`` that numr computes only with its default value."""
    if value is not default and value != default:
        raise TypeError(f"Tensor.{func}: numr_array does not support {name}={value!r}")


def _into(out, r: Tensor, func: str) -> Tensor:
    """``r``, or, with NumPy's ``out=``, r stored into the tensor ``out`` (checked as the namespace checks it)."""
    if out is None:
        return r
    ns.setitem(check_out(out, r._shape, r._dtype, r._dev, func), ..., r)
    return out


def _axes(args: tuple):
    """NumPy's shape or axes given as one sequence or spread over the arguments (``reshape(2, 3)``)."""
    if len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple, list))):
        return None if args[0] is None else tuple(args[0])
    return args


def _sum(self, axis=None, dtype=None, out=None, keepdims=False):
    return ns.sum(self, axis, dtype, out, keepdims)


def _prod(self, axis=None, dtype=None, out=None, keepdims=False):
    return ns.prod(self, axis, dtype, out, keepdims)


def _mean(self, axis=None, dtype=None, out=None, keepdims=False):
    return ns.mean(self, axis, dtype, out, keepdims)


def _std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return ns.std(self, axis, dtype, out, ddof, keepdims)


def _var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return ns.var(self, axis, dtype, out, ddof, keepdims)


def _min(self, axis=None, out=None, keepdims=False):
    return ns.min(self, axis, out, keepdims)


def _max(self, axis=None, out=None, keepdims=False):
    return ns.max(self, axis, out, keepdims)


def _argmin(self, axis=None, out=None, *, keepdims=False):
    return ns.argmin(self, axis, out, keepdims=keepdims)


def _argmax(self, axis=None, out=None, *, keepdims=False):
    return ns.argmax(self, axis, out, keepdims=keepdims)


def _all(self, axis=None, out=None, keepdims=False):
    return ns.all(self, axis=axis, out=out, keepdims=keepdims)


def _any(self, axis=None, out=None, keepdims=False):
    return ns.any(self, axis=axis, out=out, keepdims=keepdims)


def _cumsum(self, axis=None, dtype=None, out=None):
    return _into(out, ns.cumsum(self, axis, dtype), "cumsum")


def _cumprod(self, axis=None, dtype=None, out=None):
    return _into(out, ns.cumprod(self, axis, dtype), "cumprod")


def _reshape(self, *shape, order="C", copy=None):
    _only(order, "C", "order", "reshape")
    return ns.reshape(self, _axes(shape), copy=copy)


def _astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    _only(order, "K", "order", "astype")
    _only(casting, "unsafe", "casting", "astype")
    return ns.astype(self, dtype, copy=copy)


def _copy(self, order="C"):
    _only(order, "C", "order", "copy")
    return ns.copy(self)


def _item(self, *args):
    """The element (all of a size-1 array, or at a flat index or an index tuple) as a Python scalar."""
    if not args:
        if self.size != 1:
            raise ValueError(f"Tensor.item: only an array of size 1 converts to a Python scalar without an "
                             f"index, got shape {self._shape}")
        return ns.to_numpy(self, "item").item()
    index = args[0] if len(args) == 1 else args
    if not isinstance(index, tuple):  # a flat index, in C order
        size = self.size
        if type(index) is not int or not -size <= index < size:
            raise IndexError(f"Tensor.item: index {index!r} is out of bounds for an array of size {size}")
        index = tuple(int(i) for i in np.unravel_index(index % size, self._shape))
    return _scalar(self[index], "item")


def _tolist(self):
    return ns.to_numpy(self, "tolist").tolist()


def _tobytes(self, order="C"):
    _only(order, "C", "order", "tobytes")
    return ns.to_numpy(self, "tobytes").tobytes()


def _ravel(self, order="C"):
    _only(order, "C", "order", "ravel")
    return ns.ravel(self)


def _flatten(self, order="C"):
    _only(order, "C", "order", "flatten")
    return ns.reshape(self, (-1,), copy=True)


def _transpose(self, *axes):
    axes = _axes(axes) if axes else None
    return ns.permute_dims(self, tuple(range(self.ndim))[::-1] if axes is None else axes)


def _swapaxes(self, axis1, axis2):
    return ns.swapaxes(self, axis1, axis2)


def _squeeze(self, axis=None):
    return ns.squeeze(self, tuple(i for i, n in enumerate(self._shape) if n == 1) if axis is None else axis)


def _clip(self, min=None, max=None, out=None):
    return ns.clip(self, min, max, out=out)


def _round(self, decimals=0, out=None):
    return ns.round(self, decimals, out=out)


def _sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """Sorts in place, as NumPy's method does (every kind sorts to the same values)."""
    _only(order, None, "order", "sort")
    ns.setitem(self, ..., ns.sort(self, axis=axis))


def _argsort(self, axis=-1, kind=None, order=None, *, stable=None):
    _only(order, None, "order", "argsort")
    return ns.argsort(self, axis=axis)


def _dot(self, b, out=None):
    return _into(out, ns.dot(self, b), "dot")


def _fill(self, value) -> None:
    ns.setitem(self, ..., value)


def _index_operand(self, v):
    """NumPy's index or value argument as a tensor on ``self``'s device (Python data is uploaded)."""
    return v if type(v) is Tensor else ns.asarray(v, device=self._dev)


def _repeat(self, repeats, axis=None):
    return ns.repeat(self, repeats if type(repeats) is int else _index_operand(self, repeats), axis=axis)


def _take(self, indices, axis=None, out=None, mode="raise"):
    _only(mode, "raise", "mode", "take")
    x = ns.reshape(self, (-1,)) if axis is None else self
    idx = _index_operand(self, indices)
    flat = ns.reshape(idx, (-1,))
    r = ns.take(x, flat, axis=0 if axis is None else axis)
    if idx.ndim != 1:
        ax = 0 if axis is None else axis % self.ndim
        r = ns.reshape(r, r.shape[:ax] + idx.shape + r.shape[ax + 1:])
    return _into(out, r, "take")


def _diagonal(self, offset=0, axis1=0, axis2=1):
    rest = [i for i in range(self.ndim) if i not in (axis1 % self.ndim, axis2 % self.ndim)]
    return _package.linalg.diagonal(ns.permute_dims(self, (*rest, axis1 % self.ndim, axis2 % self.ndim)),
                                    offset=offset)


def _trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return _into(out, ns.trace(self, offset, axis1, axis2, dtype), "trace")


def _searchsorted(self, v, side="left", sorter=None):
    return ns.searchsorted(self, v if type(v) in _SCALARS else _index_operand(self, v), side=side,
                           sorter=None if sorter is None else _index_operand(self, sorter))


def _nonzero(self):
    return ns.nonzero(self)


def _conj(self):
    return ns.conj(self)


def _numpy(self):
    """The tensor as a NumPy array sharing its memory (CPU tensors only, as PyTorch's ``Tensor.numpy``)."""
    if self._dev.kind != "cpu":
        raise TypeError(f"Tensor.numpy: a {self._dev} tensor is not in host memory; copy it explicitly with "
                        "x.to_device('cpu').numpy()")
    return ns.to_numpy(self, "numpy")


def __format__(self, spec: str) -> str:
    if self._shape == ():
        return format(_scalar(self, "__format__"), spec)
    if spec:
        raise TypeError(f"__format__: format specifier {spec!r} needs a 0-D array, got shape {self._shape}; "
                        "format its elements (t[i].item()) or use repr")
    return str(self)


#: NumPy's, CuPy's and PyTorch's attributes that numr spells another way: properties whose AttributeError
#: says what to use (so ``hasattr`` is still False)
_HINTS = {
    "get": "copy to the host explicitly: x.to_device('cpu').numpy() (CuPy's .get())",
    "cpu": "move it with x.to_device('cpu')", "cuda": "move it with x.to_device('cuda:0')",
    "flat": "use x.reshape(-1) (a view where the strides allow) or x.ravel()",
    "view": "numr_array has no dtype-reinterpreting view; slicing, reshape and permute_dims make views",
    "base": "numr_array tensors do not expose their base; views share the tensor's buffer",
    "flags": "numr_array tensors have no flags; x.is_contiguous() says whether x is C-contiguous",
}


def _hinted(name: str, hint: str) -> property:
    def get(self):
        raise AttributeError(f"'Tensor' object has no attribute {name!r}; {hint}", name=name, obj=self)
    return property(get)


_METHODS = {
    "sum": _sum, "prod": _prod, "mean": _mean, "std": _std, "var": _var, "min": _min, "max": _max,
    "argmin": _argmin, "argmax": _argmax, "all": _all, "any": _any, "cumsum": _cumsum, "cumprod": _cumprod,
    "reshape": _reshape, "astype": _astype, "copy": _copy, "item": _item, "tolist": _tolist, "tobytes": _tobytes,
    "ravel": _ravel, "flatten": _flatten, "transpose": _transpose, "swapaxes": _swapaxes, "squeeze": _squeeze,
    "clip": _clip,
    "round": _round, "sort": _sort, "argsort": _argsort, "dot": _dot, "fill": _fill, "repeat": _repeat,
    "take": _take, "diagonal": _diagonal, "trace": _trace, "searchsorted": _searchsorted, "nonzero": _nonzero,
    "conj": _conj, "conjugate": _conj, "numpy": _numpy, "__format__": __format__,
}
_PROPERTIES = {
    # a complex array's parts are copies, not views as in NumPy; a real (or bool) array's real part is the array
    # itself (NumPy's is a view of it) and its imaginary part zeros, as in NumPy. (xarray's protocol check
    # reads both of every array it wraps, bool ones included.)
    "real": lambda self: ns.real(self) if self._dtype.kind == "c" else self,
    "imag": lambda self: ns.imag(self) if self._dtype.kind == "c" else ns.zeros_like(self),
    "nbytes": lambda self: self.size * self._dtype.itemsize, "itemsize": lambda self: self._dtype.itemsize,
}
_package: ModuleType


def T(self) -> Tensor:
    if len(self._shape) != 2:
        raise ValueError(f"Tensor.T: only defined for 2-D arrays (got {len(self._shape)}-D); use .mT or permute_dims")
    return _manipulation.transposed(self)


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
    global _package
    _package = package
    _numpy_protocols.install(package)
    for name, f in _METHODS.items():
        f.__name__ = f.__qualname__ = name
        setattr(Tensor, name, f)
    for name, get in _PROPERTIES.items():
        setattr(Tensor, name, property(get))
    for name, hint in _HINTS.items():
        setattr(Tensor, name, _hinted(name, hint))
    Tensor.T = property(T)
    Tensor.mT = property(mT)
    Tensor.__dlpack_device__ = ns.dlpack_device
    Tensor.__reduce__ = _transfer.reduce_tensor
    Tensor.__repr__ = Tensor.__str__ = ns.tensor_repr
    # x[a:b:c] in C where compiled (numr_array/_speedups.c); getitem serves every other key
    Tensor.__getitem__ = ns.getitem if _rt.speedups is None else _rt.speedups.getitem_method(ns.getitem, np.ndarray)
    Tensor.__setitem__ = ns.setitem
    if _rt.speedups is None:
        for dunder, name in _BINARY.items():
            f, r, i = _binary(getattr(ns, name))
            setattr(Tensor, f"__{dunder}__", f)
            setattr(Tensor, f"__r{dunder}__", r)
            setattr(Tensor, f"__i{dunder}__", i)
        for dunder, name in _COMPARISON.items():
            setattr(Tensor, f"__{dunder}__", _binary(getattr(ns, name))[0])
        for dunder, name in _UNARY.items():
            setattr(Tensor, f"__{dunder}__", _unary(getattr(ns, name)))
    else:  # the operators are the slots of Tensor's compiled base (_speedups.c, TensorBase)
        _rt.speedups.configure_operators(
            {dunder: (*getattr(ns, name)._slot, getattr(ns, name))
             for dunder, name in (_BINARY | _COMPARISON | _UNARY).items()}, _operand, _elementwise.__dict__)
