"""The ``fft`` extension of the array API standard (2025.12): the 14 functions.

Sizes, axes and the norm mode are resolved here (a size of -1 in ``s`` means that axis' default size,
as ``None`` would), so kernels get plain ints. Result dtypes keep the input's precision: complex64 in,
complex64 out; float32 into a complex transform gives complex64 and a complex64 spectrum into a real
transform gives float32. The complex transforms (fft, ifft, fftn, ifftn, irfft, irfftn, hfft) take real
floating-point input too, as zero imaginary parts (the standard says x "should" be complex); rfft,
rfftn and ihfft require real input, as the standard says they must.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence

from . import _dtypes as dt
from ._creation import MAX_SIZE
from ._checks import check_axis, check_tensor, device_of
from ._launch import launch, new_tensor
from ._info import default_dtypes_of
from ._tensor import Tensor
from .kernels import K, Kernel

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

Norm = Literal["backward", "ortho", "forward"]
_NORMS = ("backward", "ortho", "forward")


def _input(x, func: str, real: bool) -> Tensor:
    """``x`` checked: floating-point, and real-valued where ``real``."""
    check_tensor(x, func)
    kind = x._dtype.kind
    if kind not in dt.FLOAT_KINDS or (real and kind != "f"):
        need = "a real floating-point" if real else "a floating-point"
        raise TypeError(f"{func}: x must have {need} dtype, got {x._dtype.name}")
    return x


def _norm(norm, func: str) -> str:
    if norm not in _NORMS:
        raise ValueError(f"{func}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return norm


def _int(n, func: str, name: str) -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{func}: {name} must be an int, got {n!r}")
    return n.__index__()


def _size(n, func: str, name: str, length: int, default: int) -> int:
    """A transform length: a positive int, or -1 for ``default`` (what the axis of ``length`` gives)."""
    n = _int(n, func, name)
    if n == -1:
        if default < 1:
            raise ValueError(f"{func}: an axis of length {length} gives no points to transform; pass {name}")
        return default
    if not 1 <= n <= MAX_SIZE:
        raise ValueError(f"{func}: {name} must be a positive number of points up to {MAX_SIZE} (or -1), got {n}")
    return n


def _one_dim(kernel: Kernel, x, n, axis, norm, real_in: bool, out_kind: str, half_in: bool, half_out: bool) -> Tensor:
    """A 1-D transform along ``axis``.

    ``half_in``: the input holds n//2+1 points of a Hermitian spectrum of n (irfft, hfft; n defaults to
    2*(M-1)); ``half_out``: the output holds n//2+1 of them (rfft, ihfft).
    """
    func = kernel.name
    _input(x, func, real_in)
    norm = _norm(norm, func)
    axis = check_axis(axis, x.ndim, func)
    m = x._shape[axis]
    n = _size(-1 if n is None else n, func, "n", m, 2 * (m - 1) if half_in else m)
    length = n // 2 + 1 if half_out else n
    dtype = dt.complex_of(x._dtype) if out_kind == "complex" else dt.real_of(x._dtype)
    o = new_tensor(x._dev, x._shape[:axis] + (length,) + x._shape[axis + 1:], dtype)
    return _transform(kernel, x, o, m == 0, {"n": n, "axis": axis, "norm": norm})


def _transform(kernel: Kernel, x: Tensor, o: Tensor, empty_axis: bool, params: dict) -> Tensor:
    """Launch ``kernel`` into ``o``; where an axis to transform is empty, its zero-padded input is all zeros
    and so is the result (as the standard's zero-padding gives; NumPy's irfft leaves it uninitialised)."""
    if not o.size:
        return o
    if empty_axis:
        launch(x._dev, K.fill, (), (o,), {"value": o._dtype.np.type(0)})
    else:
        launch(x._dev, kernel, (x,), (o,), params)
    return o


def _axes(axes, ndim: int, func: str) -> tuple[int, ...]:
    """``axes=`` as distinct normalised axes (a repeated axis is rejected: the standard leaves it open)."""
    if isinstance(axes, (str, bytes)) or not isinstance(axes, Sequence):
        raise TypeError(f"{func}: axes must be a sequence of ints, got {axes!r}")
    out = tuple(check_axis(a, ndim, func) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{func}: repeated axis in axes {tuple(axes)}")
    return out


def _n_dim(kernel: Kernel, x, s, axes, norm, real_in: bool, out_kind: str, half_in: bool, half_out: bool) -> Tensor:
    """An n-D transform over ``axes``; the last of them is the Hermitian-half axis where ``half_*``."""
    func = kernel.name
    _input(x, func, real_in)
    norm = _norm(norm, func)
    if axes is None:
        if s is not None:
            raise ValueError(f"{func}: s={s!r} needs axes too (the standard requires both or neither)")
        axes = tuple(range(x.ndim))
    else:
        axes = _axes(axes, x.ndim, func)
    half = half_in or half_out
    if half and not axes:
        raise ValueError(f"{func}: needs at least one axis to transform")
    if s is None:
        s = (-1,) * len(axes)
    elif isinstance(s, (str, bytes)) or not isinstance(s, Sequence):
        raise TypeError(f"{func}: s must be a sequence of ints, got {s!r}")
    elif len(s) != len(axes):
        raise ValueError(f"{func}: s {tuple(s)} and axes {axes} differ in length")
    sizes = []
    for i, (a, n) in enumerate(zip(axes, s)):
        m = x._shape[a]
        sizes.append(_size(n, func, "s", m, 2 * (m - 1) if half_in and i == len(axes) - 1 else m))
    shape = list(x._shape)
    for i, (a, n) in enumerate(zip(axes, sizes)):
        shape[a] = n // 2 + 1 if half_out and i == len(axes) - 1 else n
    dtype = dt.complex_of(x._dtype) if out_kind == "complex" else dt.real_of(x._dtype)
    o = new_tensor(x._dev, tuple(shape), dtype)
    return _transform(kernel, x, o, any(x._shape[a] == 0 for a in axes),
                      {"s": tuple(sizes), "axes": axes, "norm": norm})


def fft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The 1-D discrete Fourier transform along ``axis`` (zero-padded or trimmed to n points)."""
    return _one_dim(K.fft, x, n, axis, norm, False, "complex", False, False)


def ifft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The 1-D inverse discrete Fourier transform along ``axis``."""
    return _one_dim(K.ifft, x, n, axis, norm, False, "complex", False, False)


def rfft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The 1-D transform of real x: the n//2+1 non-negative frequency terms."""
    return _one_dim(K.rfft, x, n, axis, norm, True, "complex", False, True)


def irfft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The inverse of rfft: n real points (default 2*(M-1)) from n//2+1 spectrum terms."""
    return _one_dim(K.irfft, x, n, axis, norm, False, "real", True, False)


def hfft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first n//2+1 points: n real values."""
    return _one_dim(K.hfft, x, n, axis, norm, False, "real", True, False)


def ihfft(x, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Tensor:
    """The inverse of hfft: the n//2+1 first points of the Hermitian inverse transform of real x."""
    return _one_dim(K.ihfft, x, n, axis, norm, True, "complex", False, True)


def fftn(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: Norm = "backward") -> Tensor:
    """The n-D discrete Fourier transform over ``axes`` (all when None), each padded/trimmed to s."""
    return _n_dim(K.fftn, x, s, axes, norm, False, "complex", False, False)


def ifftn(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Tensor:
    """The n-D inverse discrete Fourier transform over ``axes``."""
    return _n_dim(K.ifftn, x, s, axes, norm, False, "complex", False, False)


def rfftn(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Tensor:
    """The n-D transform of real x; the last axis keeps its s[-1]//2+1 non-negative frequencies."""
    return _n_dim(K.rfftn, x, s, axes, norm, True, "complex", False, True)


def irfftn(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: Norm = "backward") -> Tensor:
    """The inverse of rfftn: real output of sizes s (the last defaulting to 2*(M-1))."""
    return _n_dim(K.irfftn, x, s, axes, norm, False, "real", True, False)


def _freq_args(n, d, dtype, device, func: str):
    n = _int(n, func, "n")
    if not 1 <= n <= MAX_SIZE:
        raise ValueError(f"{func}: n must be a positive window length up to {MAX_SIZE}, got {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{func}: d must be a float, got {d!r}")
    if d == 0 or not math.isfinite(d):
        raise ValueError(f"{func}: d must be a finite non-zero sample spacing, got {d}")
    dev = device_of(device, func)
    if dtype is None:
        dtype = default_dtypes_of(dev)["default_float"]
    elif (dtype := dt.check_dtype(dtype, func)).kind != "f":
        raise TypeError(f"{func}: dtype must be a real floating-point dtype, got {dtype.name}")
    return n, float(d), dtype, dev


def fftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an n-point transform: [0, 1, ..., -2, -1] / (d*n)."""
    n, d, dtype, dev = _freq_args(n, d, dtype, device, "fftfreq")
    o = new_tensor(dev, (n,), dtype)
    launch(dev, K.fftfreq, (), (o,), {"d": d})
    return o


def rfftfreq(n: int, /, *, d: float = 1.0, dtype=None, device=None) -> Tensor:
    """The non-negative sample frequencies of an n-point rfft: [0, 1, ..., n//2] / (d*n)."""
    n, d, dtype, dev = _freq_args(n, d, dtype, device, "rfftfreq")
    o = new_tensor(dev, (n // 2 + 1,), dtype)
    launch(dev, K.rfftfreq, (), (o,), {"n": n, "d": d})
    return o


def _shift(kernel: Kernel, x, axes) -> Tensor:
    func = kernel.name
    check_tensor(x, func)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int) and not isinstance(axes, bool):
        axes = (check_axis(axes, x.ndim, func),)
    else:
        axes = _axes(axes, x.ndim, func)
    o = new_tensor(x._dev, x._shape, x._dtype)
    if o.size:
        if axes:
            launch(x._dev, kernel, (x,), (o,), {"axes": axes})
        else:  # no axis to shift (a 0-D x, or axes=()): a plain copy
            launch(x._dev, K.copy, (x,), (o,))
    return o


def fftshift(x, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """x with the zero-frequency term moved to the centre of each of ``axes`` (all when None)."""
    return _shift(K.fftshift, x, axes)


def ifftshift(x, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift (they differ by one place on odd-length axes)."""
    return _shift(K.ifftshift, x, axes)


# --- NumPy's two-dimensional transforms: the n-dimensional ones over the last two axes ----------------
__all__ += ["fft2", "ifft2", "rfft2", "irfft2"]


def fft2(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: Norm = "backward") -> Tensor:
    """:func:`fftn` over ``axes`` (the last two by default)."""
    return fftn(x, s=s, axes=axes, norm=norm)


def ifft2(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: Norm = "backward") -> Tensor:
    """:func:`ifftn` over ``axes`` (the last two by default)."""
    return ifftn(x, s=s, axes=axes, norm=norm)


def rfft2(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: Norm = "backward") -> Tensor:
    """:func:`rfftn` over ``axes`` (the last two by default)."""
    return rfftn(x, s=s, axes=axes, norm=norm)


def irfft2(x, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: Norm = "backward") -> Tensor:
    """:func:`irfftn` over ``axes`` (the last two by default)."""
    return irfftn(x, s=s, axes=axes, norm=norm)
