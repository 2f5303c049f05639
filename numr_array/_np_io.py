"""NumPy's file functions and host-side utilities: ``save``/``load``/``savez``/``savez_compressed``,
``savetxt``/``loadtxt``/``genfromtxt``/``fromfile`` (the data goes through a host copy: files are on the
host), the error-state and print-option settings, formatting, and dtype questions answered from the
dtype alone."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from . import _dtypes as dt
from ._creation import asarray
from ._tensor import Tensor
from ._transfer import to_numpy

__all__ = [
    "save", "load", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
    "errstate", "seterr", "geterr", "seterrcall", "geterrcall", "set_printoptions", "get_printoptions",
    "printoptions", "array2string", "array_repr", "array_str", "base_repr", "binary_repr",
    "format_float_positional", "format_float_scientific", "typename", "mintypecode", "common_type",
    "min_scalar_type", "promote_types", "issubdtype", "iterable", "may_share_memory", "shares_memory",
    "getbufsize", "setbufsize",
]


def _host(a, func: str) -> np.ndarray:
    """A NumPy copy of the array ``a`` (other objects as NumPy takes them)."""
    return to_numpy(a, func) if isinstance(a, Tensor) else np.asarray(a)


def _device_of(obj, device):
    return asarray(obj, device=device) if isinstance(obj, np.ndarray) else obj


def save(file, arr: Tensor, allow_pickle: bool = False) -> None:
    """Write ``arr`` to a ``.npy`` file (NumPy's format; the data is read back from the device)."""
    np.save(file, _host(arr, "save"), allow_pickle=allow_pickle)


def savez(file, *args: Tensor, **kwds: Tensor) -> None:
    """Write several arrays to an uncompressed ``.npz`` archive."""
    np.savez(file, *(_host(a, "savez") for a in args), **{k: _host(v, "savez") for k, v in kwds.items()})


def savez_compressed(file, *args: Tensor, **kwds: Tensor) -> None:
    """Write several arrays to a compressed ``.npz`` archive."""
    np.savez_compressed(file, *(_host(a, "savez_compressed") for a in args),
                        **{k: _host(v, "savez_compressed") for k, v in kwds.items()})


class _NpzOnDevice:
    """An ``.npz`` archive whose arrays are copied to ``device`` when looked up (a mapping, like NumPy's
    NpzFile, and a context manager)."""

    def __init__(self, npz, device):
        self._npz, self._device = npz, device
        self.files = npz.files

    def __getitem__(self, key: str) -> Tensor:
        return asarray(self._npz[key], device=self._device)

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, key) -> bool:
        return key in self.files

    def keys(self):
        return self.files

    def close(self) -> None:
        self._npz.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load(file, mmap_mode=None, allow_pickle: bool = False, *, device=None):
    """Read a ``.npy`` file into an array on ``device`` (an ``.npz`` archive: a mapping whose arrays are
    copied there when looked up)."""
    obj = np.load(file, mmap_mode=mmap_mode, allow_pickle=allow_pickle)
    if isinstance(obj, np.lib.npyio.NpzFile):
        return _NpzOnDevice(obj, device)
    return asarray(np.ascontiguousarray(obj), device=device)


def savetxt(fname, X: Tensor, *args, **kwargs) -> None:
    """Write a 1-D or 2-D array to a text file (NumPy's ``savetxt`` of a host copy)."""
    np.savetxt(fname, _host(X, "savetxt"), *args, **kwargs)


def loadtxt(fname, *args, device=None, **kwargs) -> Tensor:
    """Read a text file with NumPy's ``loadtxt`` onto ``device``."""
    return _device_of(np.loadtxt(fname, *args, **kwargs), device)


def genfromtxt(fname, *args, device=None, **kwargs) -> Tensor:
    """Read a text file with NumPy's ``genfromtxt`` (missing values allowed) onto ``device``."""
    return _device_of(np.genfromtxt(fname, *args, **kwargs), device)


def fromfile(file, dtype=float, count: int = -1, sep: str = "", offset: int = 0, *, device=None) -> Tensor:
    """Read raw or text data from a file with NumPy's ``fromfile`` onto ``device``."""
    dtype = dtype.np if isinstance(dtype, dt.DType) else dtype
    return asarray(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset), device=device)


# numr raises its errors rather than warning, and its devices do not report floating-point exceptions:
# the error state is kept for code that sets and reads it, and consulted by nothing
_ERR_KINDS = ("divide", "over", "under", "invalid")
_ERR_VALUES = ("ignore", "warn", "raise", "call", "print", "log")
_errstate = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_errcall = [None]


def seterr(all: str | None = None, divide: str | None = None, over: str | None = None, under: str | None = None,
           invalid: str | None = None) -> dict:
    """Set the floating-point error handling (recorded only: numr consults none of it) and return the old."""
    old = dict(_errstate)
    for kind, value in (("divide", divide), ("over", over), ("under", under), ("invalid", invalid)):
        value = value if value is not None else all
        if value is not None:
            if value not in _ERR_VALUES:
                raise ValueError(f"seterr: {kind} must be one of {', '.join(_ERR_VALUES)}, got {value!r}")
            _errstate[kind] = value
    return old


def geterr() -> dict:
    """The floating-point error handling last set."""
    return dict(_errstate)


def seterrcall(func):
    """Set the error callback (recorded only) and return the old one."""
    old, _errcall[0] = _errcall[0], func
    return old


def geterrcall():
    """The error callback last set."""
    return _errcall[0]


class errstate(contextlib.ContextDecorator):
    """A context manager (and decorator) setting the error handling for its block, restored after. numr's
    computations report no floating-point exceptions, so this changes no result."""

    def __init__(self, *, call=None, all=None, divide=None, over=None, under=None, invalid=None):
        self._args = {"all": all, "divide": divide, "over": over, "under": under, "invalid": invalid}
        self._call = call

    def __enter__(self):
        self._old = seterr(**self._args)
        self._old_call = seterrcall(self._call) if self._call is not None else None
        return self

    def __exit__(self, *exc) -> None:
        _errstate.update(self._old)
        if self._call is not None:
            seterrcall(self._old_call)


def set_printoptions(*args, **kwargs) -> None:
    """Set how arrays print: numr's ``repr`` formats through NumPy, so this is NumPy's setting."""
    np.set_printoptions(*args, **kwargs)


def get_printoptions() -> dict:
    """The print options in force (NumPy's)."""
    return np.get_printoptions()


def printoptions(*args, **kwargs):
    """A context manager setting the print options for its block."""
    return np.printoptions(*args, **kwargs)


def array2string(a: Tensor, *args, **kwargs) -> str:
    """The text of ``a``'s values (NumPy's ``array2string`` of a host copy)."""
    return np.array2string(_host(a, "array2string"), *args, **kwargs)


def array_repr(arr: Tensor, *args, **kwargs) -> str:
    """``repr(arr)``."""
    if not isinstance(arr, Tensor):
        raise TypeError(f"array_repr: arr must be a numr_array array, got {type(arr).__name__}")
    return repr(arr)


def array_str(a: Tensor, *args, **kwargs) -> str:
    """The text of ``a``'s values, as ``str`` of a NumPy array."""
    return np.array_str(_host(a, "array_str"), *args, **kwargs)


def base_repr(number: int, base: int = 2, padding: int = 0) -> str:
    """The text of ``number`` in ``base`` (NumPy's)."""
    return np.base_repr(number, base, padding)


def binary_repr(num: int, width: int | None = None) -> str:
    """The binary text of ``num`` (two's complement of ``width`` bits for negative numbers; NumPy's)."""
    return np.binary_repr(num, width)


def format_float_positional(x, *args, **kwargs) -> str:
    """A float (a Python number or a 0-D array) in positional notation (NumPy's formatting)."""
    return np.format_float_positional(_host(x, "format_float_positional")[()] if isinstance(x, Tensor) else x,
                                      *args, **kwargs)


def format_float_scientific(x, *args, **kwargs) -> str:
    """A float (a Python number or a 0-D array) in scientific notation (NumPy's formatting)."""
    return np.format_float_scientific(_host(x, "format_float_scientific")[()] if isinstance(x, Tensor) else x,
                                      *args, **kwargs)


def getbufsize() -> int:
    """NumPy's ufunc buffer size (numr has no such buffer; the setting is NumPy's)."""
    return np.getbufsize()


def setbufsize(size: int) -> int:
    """Set NumPy's ufunc buffer size, returning the old one (it changes nothing numr computes)."""
    return np.setbufsize(size)


def iterable(y) -> bool:
    """Whether ``iter(y)`` works (a 0-D array is not iterable)."""
    if isinstance(y, Tensor):
        return y.ndim > 0
    return np.iterable(y)


def _np_of(x):
    if isinstance(x, Tensor):
        return x._dtype.np
    if isinstance(x, dt.DType):
        return x.np
    return x


def typename(char: str) -> str:
    """NumPy's description of a type code."""
    return np.typename(char)


def mintypecode(typechars, typeset: str = "GDFgdf", default: str = "d") -> str:
    """The smallest type code of ``typeset`` that the given types (codes or arrays) safely cast to."""
    return np.mintypecode([np.dtype(_np_of(t)).char if not isinstance(t, str) else t for t in typechars],
                          typeset, default)


def common_type(*arrays: Tensor) -> np.dtype:
    """The floating dtype (of the inexact kinds, integers counting as float64) all ``arrays`` fit."""
    return dt.from_numpy(np.dtype(np.common_type(*(np.empty(0, dtype=_np_of(a)) for a in arrays)))).np


def min_scalar_type(a) -> np.dtype:
    """The smallest dtype holding the scalar ``a`` (arrays: their own dtype)."""
    if isinstance(a, Tensor):
        return a.dtype
    return dt.from_numpy(np.min_scalar_type(a)).np


def promote_types(type1, type2) -> np.dtype:
    """The smallest dtype both types cast to safely (NumPy's rule, not the standard's)."""
    return dt.from_numpy(np.promote_types(_np_of(type1), _np_of(type2))).np


def issubdtype(arg1, arg2) -> bool:
    """Whether ``arg1`` is a dtype of the kind or type ``arg2`` (NumPy's abstract types, numr dtypes)."""
    return bool(np.issubdtype(_np_of(arg1), _np_of(arg2)))


def _offsets(t: Tensor) -> np.ndarray:
    """The buffer offsets (in elements) of ``t``'s elements: its layout, not its data."""
    off = np.full((), t._offset, dtype=np.int64)
    for s, n in zip(t._strides, t._shape):
        off = off[..., None] + s * np.arange(n, dtype=np.int64)
    return off.ravel()


def _extent(t: Tensor) -> tuple[int, int]:
    lo = t._offset + sum(s * (n - 1) for s, n in zip(t._strides, t._shape) if s < 0)
    hi = t._offset + sum(s * (n - 1) for s, n in zip(t._strides, t._shape) if s > 0)
    return lo, hi


def _pair(a, b, func: str) -> bool:
    """Whether ``a`` and ``b`` are non-empty views of one buffer (TypeError for non-arrays)."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError(f"{func}: a and b must be numr_array arrays")
    return a._buf is b._buf and a.size > 0 and b.size > 0 and a._dtype.bits == b._dtype.bits


def _overlap(a: Tensor, b: Tensor, func: str) -> bool:
    if not _pair(a, b, func):
        return False
    (alo, ahi), (blo, bhi) = _extent(a), _extent(b)
    return alo <= bhi and blo <= ahi


def may_share_memory(a: Tensor, b: Tensor, max_work=None) -> bool:
    """Whether the two arrays are views of one buffer whose extents overlap (no data is read)."""
    return _overlap(a, b, "may_share_memory")


def shares_memory(a: Tensor, b: Tensor, max_work=None) -> bool:
    """Whether the two arrays are views of one buffer with an element in common, exactly (from their
    layouts; no data is read)."""
    if not _overlap(a, b, "shares_memory"):
        return False
    return bool(np.intersect1d(_offsets(a), _offsets(b)).size)
