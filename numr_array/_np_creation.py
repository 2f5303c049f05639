"""NumPy's array-creation functions the standard lacks: ``logspace``, ``geomspace``, ``tri``, ``vander``,
the window functions, ``fromfunction``, and the constructors from host data (``fromiter``,
``frombuffer``, ``fromstring``: NumPy builds the host array, which is then copied to the device, as
``asarray`` does). Values are computed on the device from ``arange``/``linspace``."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from ._creation import arange, asarray, linspace, ones, tril
from ._data_type_functions import astype
from ._device import resolve_device
from ._np_common import default_float, integer, tensor
from ._searching import where
from ._tensor import Tensor

__all__ = ["logspace", "geomspace", "tri", "vander", "bartlett", "blackman", "hamming", "hanning", "kaiser",
           "fromfunction", "fromiter", "frombuffer", "fromstring"]


def logspace(start: float, stop: float, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: dt.DType | None = None, axis: int = 0, *, device=None) -> Tensor:
    """``base ** linspace(start, stop, num)``."""
    if axis != 0:
        raise ValueError(f"logspace: only axis=0 is supported, got {axis!r}")
    y = linspace(start, stop, num, endpoint, device=device)
    r = _ew.pow(float(base), y)
    return r if dtype is None else astype(r, dtype)


def geomspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: dt.DType | None = None,
              axis: int = 0, *, device=None) -> Tensor:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (both non-zero, one sign), the
    ends exact."""
    if axis != 0:
        raise ValueError(f"geomspace: only axis=0 is supported, got {axis!r}")
    if start == 0 or stop == 0:
        raise ValueError("geomspace: geometric sequence cannot include zero")
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError("geomspace: complex bounds are not supported")
    sign = -1.0 if start < 0 and stop < 0 else 1.0
    if (start < 0) != (stop < 0):
        raise ValueError("geomspace: start and stop must have one sign (complex results are not supported)")
    lo, hi = math.log10(abs(start)), math.log10(abs(stop))
    r = _ew.pow(10.0, linspace(lo, hi, num, endpoint, device=device))
    num = integer(num, "geomspace", "num")
    if num:
        r[0] = abs(float(start))
        if endpoint and num > 1:
            r[-1] = abs(float(stop))
    r = _ew.multiply(r, sign) if sign < 0 else r
    return r if dtype is None else astype(r, dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: dt.DType | None = None, *, device=None) -> Tensor:
    """An (N, M) array with ones at and below the ``k``-th diagonal."""
    N = integer(N, "tri", "N")
    M = N if M is None else integer(M, "tri", "M")
    dev = resolve_device(device, "tri")
    return tril(ones((N, M), dtype=dtype or default_float(dev), device=dev), k=integer(k, "tri", "k"))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N-1), ..., x, 1`` (increasing powers with
    ``increasing``)."""
    tensor(x, "vander", "x")
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape {x.shape}")
    N = x.shape[0] if N is None else integer(N, "vander", "N")
    if N < 0:
        raise ValueError(f"vander: N must be non-negative, got {N}")
    cols = [ones(x.shape, dtype=x._dtype, device=x._dev)] if N else []
    for _ in range(1, N):
        cols.append(_ew.multiply(cols[-1], x))
    if not cols:
        return _mn.reshape(x, (-1, 1))[:, :0]
    m = _mn.stack(cols, axis=1)
    return m if increasing else _mn.flip(m, axis=1)


def _window_n(M, func: str) -> int:
    return integer(M, func, "M")


def _window(M: int, func: str, device, body: Callable[[Tensor, int], Tensor]) -> Tensor:
    M = _window_n(M, func)
    dev = resolve_device(device, func)
    fdt = default_float(dev)
    if M < 1:
        return arange(0, dtype=fdt, device=dev)
    if M == 1:
        return ones(1, dtype=fdt, device=dev)
    return body(arange(M, dtype=fdt, device=dev), M)


def bartlett(M: int, *, device=None) -> Tensor:
    """The Bartlett (triangular) window of ``M`` points."""
    def body(n, M):
        half = (M - 1) / 2.0
        return where(_ew.less_equal(n, half), _ew.divide(_ew.multiply(n, 2.0), M - 1),
                     _ew.subtract(2.0, _ew.divide(_ew.multiply(n, 2.0), M - 1)))
    return _window(M, "bartlett", device, body)


def blackman(M: int, *, device=None) -> Tensor:
    """The Blackman window of ``M`` points."""
    def body(n, M):
        n = _ew.add(_ew.multiply(n, 2.0), float(1 - M))  # NumPy's n: 1 - M to M - 1 in steps of 2
        return _ew.add(_ew.add(0.42, _ew.multiply(_ew.cos(_ew.multiply(n, math.pi / (M - 1))), 0.5)),
                       _ew.multiply(_ew.cos(_ew.multiply(n, 2.0 * math.pi / (M - 1))), 0.08))
    return _window(M, "blackman", device, body)


def _cosine_window(M: int, a: float, func: str, device) -> Tensor:
    def body(n, M):
        n = _ew.add(_ew.multiply(n, 2.0), float(1 - M))
        return _ew.add(a, _ew.multiply(_ew.cos(_ew.multiply(n, math.pi / (M - 1))), 1.0 - a))
    return _window(M, func, device, body)


def hamming(M: int, *, device=None) -> Tensor:
    """The Hamming window of ``M`` points."""
    return _cosine_window(M, 0.54, "hamming", device)


def hanning(M: int, *, device=None) -> Tensor:
    """The Hann window of ``M`` points."""
    return _cosine_window(M, 0.5, "hanning", device)


def kaiser(M: int, beta: float, *, device=None) -> Tensor:
    """The Kaiser window of ``M`` points and shape ``beta``."""
    from ._np_math import i0

    def body(n, M):
        alpha = (M - 1) / 2.0
        r = _ew.divide(_ew.subtract(n, alpha), alpha)
        arg = _ew.multiply(_ew.sqrt(_ew.subtract(1.0, _ew.multiply(r, r))), float(beta))
        return _ew.divide(i0(arg), float(np.i0(float(beta))))
    return _window(M, "kaiser", device, body)


def fromfunction(function: Callable, shape: tuple[int, ...], *, dtype: dt.DType | None = None, device=None,
                 **kwargs):
    """``function(*indices(shape))``: the function called once with the coordinate arrays."""
    from ._np_indexing import indices
    dev = resolve_device(device, "fromfunction")
    grid = indices(shape, dtype=dtype or default_float(dev), device=dev)
    return function(*(grid[i] for i in range(len(shape))), **kwargs)


def fromiter(iter, dtype, count: int = -1, *, device=None) -> Tensor:
    """A 1-D array from an iterable (built on the host by NumPy, then copied to the device)."""
    return asarray(np.fromiter(iter, dtype=_np_dtype(dtype), count=count), device=device)


def frombuffer(buffer, dtype=None, count: int = -1, offset: int = 0, *, device=None) -> Tensor:
    """A 1-D array from the bytes of ``buffer`` (copied to the device)."""
    a = np.frombuffer(buffer, dtype=_np_dtype(dtype) if dtype is not None else np.float64, count=count, offset=offset)
    return asarray(a.copy(), device=device)


def fromstring(string: str, dtype=None, count: int = -1, *, sep: str, device=None) -> Tensor:
    """A 1-D array from numbers in text separated by ``sep`` (parsed on the host)."""
    a = np.fromstring(string, dtype=_np_dtype(dtype) if dtype is not None else np.float64, count=count, sep=sep)
    return asarray(a, device=device)


def _np_dtype(dtype):
    return dtype.np if isinstance(dtype, dt.DType) else np.dtype(dtype)
