"""Data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _dtypes as dt
from ._checks import check_tensor, device_of
from ._launch import launch, new_tensor
from ._tensor import Tensor
from .kernels import K

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]

isdtype = dt.isdtype


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """``x`` converted to ``dtype`` (and moved to ``device``); returns x itself when nothing changes and not copy."""
    check_tensor(x, "astype")
    dtype = dt.check_dtype(dtype, "astype")
    if x._dtype.kind == "c" and dtype.kind not in ("c", "b"):
        raise TypeError(f"astype: casting {x._dtype.name} to {dtype.name} would drop the imaginary part; "
                        "take real() or abs() first")
    if device is not None:
        dev = device_of(device, "astype")
        if dev is not x._dev:
            x = x.to_device(dev)
            copy = False
    if dtype is x._dtype and not copy:
        return x
    dev = x._dev
    if not dev.client.supports_dtype(dtype):
        raise TypeError(f"astype: {dtype.name} is not supported on device {dev}")
    out = new_tensor(dev, x._shape, dtype)
    if out.size:
        launch(dev, K.copy, (x,), (out,))
    return out


def _dtype_of(v, func: str) -> dt.DType:
    if type(v) is Tensor:
        return v._dtype
    d = dt.BY_PUBLIC_ID.get(id(v))  # (before isinstance, which is slow for np.dtype)
    if d is not None:
        return d
    if isinstance(v, (dt.DType, np.dtype, str, type)):
        return dt.check_dtype(v, func)
    d = getattr(v, "dtype", None)  # NumPy's scalars (NEP 50) and arrays, dask's arrays, ...: their dtype
    if isinstance(d, (dt.DType, np.dtype)):
        return dt.check_dtype(d, func)
    raise TypeError(f"{func}: expected an array or a dtype, got {v!r}")


def can_cast(from_, to, /) -> bool:
    """Whether the standard's promotion rules allow ``from_`` to become ``to`` without loss of kind."""
    f = _dtype_of(from_, "can_cast")
    to = dt.check_dtype(to, "can_cast")
    if type(from_) is Tensor and not from_._dev.client.supports_dtype(to):
        return False  # an array's casts are those of its device's promotion graph
    return dt.STANDARD_PROMOTION[f, to] is to


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype the standard's promotion gives for arrays, dtypes and Python scalars together."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    dtypes = [_dtype_of(v, "result_type") for v in arrays_and_dtypes if type(v) not in (bool, int, float, complex)]
    scalars = [v for v in arrays_and_dtypes if type(v) in (bool, int, float, complex)]
    if not dtypes:
        raise ValueError("result_type: at least one array or dtype is required beside Python scalars")
    r = dtypes[0]
    for d in dtypes[1:]:
        r = dt.promote(r, d, "result_type")
    for s in scalars:
        r = dt.promote_scalar(r, s, "result_type")
    return r.np


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type, /) -> finfo_object:
    """Machine limits of a floating-point dtype (for complex dtypes, of their real part)."""
    d = _dtype_of(type, "finfo")
    if d.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"finfo: {d.name} is not a floating-point dtype")
    r = dt.real_of(d)
    i = np.finfo(r.np)
    return finfo_object(i.bits, float(i.eps), float(i.max), float(i.min), float(i.smallest_normal), r.np)


def iinfo(type, /) -> iinfo_object:
    """Machine limits of an integer dtype."""
    d = _dtype_of(type, "iinfo")
    if d.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"iinfo: {d.name} is not an integer dtype")
    i = np.iinfo(d.np)
    return iinfo_object(i.bits, int(i.max), int(i.min), d.np)
