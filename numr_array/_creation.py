"""Creation functions of the standard."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _capture
from . import _device
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device
from ._data_type_functions import astype
from ._checks import check_tensor, device_of
from ._launch import launch, new_tensor
from ._transfer import from_numpy, to_numpy
from ._dlpack import from_dlpack
from ._info import default_dtypes_of
from ._tensor import Tensor
from .runtime import HostInterop
from .kernels import CHECK_LAUNCHES, K, Kernel

__all__ = ["asarray", "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
           "arange", "linspace", "eye", "tril", "triu"]


MAX_SIZE = np.iinfo(np.intp).max  # the largest axis length, element count or byte size of an array


def normalize_shape(shape, func: str) -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints (an int alone means a 1-D shape)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{func}: shape must be an int or a tuple of ints, got {shape!r}")
    out = []
    for n in shape:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"{func}: shape entries must be ints, got {n!r} in {tuple(shape)}")
        if n < 0:
            raise ValueError(f"{func}: negative dimension {n} in shape {tuple(shape)}")
        if n > MAX_SIZE:
            raise ValueError(f"{func}: dimension {n} in shape {tuple(shape)} is beyond the largest possible, "
                             f"{MAX_SIZE}")
        out.append(int(n))
    if math.prod(out) > MAX_SIZE:
        raise ValueError(f"{func}: shape {tuple(out)} has more elements than an array can have ({MAX_SIZE})")
    return tuple(out)


def _int_arg(v, name: str, func: str) -> int:
    """An integer argument (a Python or NumPy int, not a bool); TypeError naming ``func`` otherwise."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{func}: {name} must be an int, got {v!r}")
    return int(v)


def _dtype_arg(dtype, func: str) -> dt.DType | None:
    return None if dtype is None else dt.check_dtype(dtype, func)


def _check_dtype_on(dev: Device, dtype: dt.DType, func: str) -> None:
    if not dev.client.supports_dtype(dtype):
        raise TypeError(f"{func}: {dtype.name} is not supported on device {dev}")


def _new(dev: Device, shape: tuple[int, ...], dtype: dt.DType, func: str) -> Tensor:
    """A new tensor of a creation function; TypeError where ``dev`` lacks ``dtype`` (float64 on a WebGPU
    adapter without shader-f64)."""
    _check_dtype_on(dev, dtype, func)
    return new_tensor(dev, shape, dtype)


def _fill(t: Tensor, value) -> Tensor:
    if t.size:
        launch(t._dev, K.fill, (), (t,), {"value": t._dtype.np.type(value)})
    return t


def _host_array(obj, dtype: dt.DType | None, func: str) -> np.ndarray:
    """``obj`` (a scalar, nested sequence, buffer or host array) as a NumPy array of a standard dtype."""
    if isinstance(obj, (list, tuple)):
        obj = _unwrap_nested(obj)
    try:
        a = np.asarray(obj, dtype=None if dtype is None else dtype.np)
    except OverflowError:
        raise OverflowError(f"{func}: {obj!r} does not fit in {dtype.name if dtype else 'int64'}") from None
    except ValueError as e:  # ragged nesting, or a value the dtype cannot hold
        raise ValueError(f"{func}: cannot make an array from {type(obj).__name__}: {e}") from None
    except TypeError as e:
        raise TypeError(f"{func}: cannot make an array from {type(obj).__name__}: {e}") from None
    if dtype is None:
        if a.dtype.kind == "O" and isinstance(obj, int):
            raise OverflowError(f"{func}: the Python int {obj} does not fit in int64")
        big = next((v for v in a.flat if type(v) is int and not -2 ** 63 <= v < 2 ** 63), None) \
            if a.dtype.kind == "O" else None
        if big is not None:
            raise OverflowError(f"{func}: the Python int {big} in the {type(obj).__name__} does not fit in int64")
        if a.dtype.kind == "u" and _is_python_data(obj):
            raise OverflowError(f"{func}: Python ints beyond int64 need dtype=uint64")
        try:
            dt.from_numpy(a.dtype)
        except TypeError as e:  # float16, strings, objects, ...
            raise TypeError(f"{func}: cannot make an array from {type(obj).__name__}: {e}") from None
    return a


def _is_python_data(obj) -> bool:
    return isinstance(obj, (int, list, tuple))


# NumPy's dtypes for Python ints, floats and complex numbers, and the default dtypes they stand for
_NUMPY_DEFAULTS = {np.dtype(np.int64): "default_integral", np.dtype(np.float64): "default_float",
                   np.dtype(np.complex128): "default_complex"}


def _device_defaults(a: np.ndarray, dev: Device, func: str) -> np.ndarray:
    """Python data ``a`` (converted by NumPy) in ``dev``'s default dtypes, which may be narrower than NumPy's."""
    which = _NUMPY_DEFAULTS.get(a.dtype)
    target = None if which is None else default_dtypes_of(dev)[which]
    if target is None or target.np == a.dtype:
        return a
    if target.kind in dt.INTEGER_KINDS and a.size:
        info = np.iinfo(target.np)
        if a.min() < info.min or a.max() > info.max:
            raise OverflowError(f"{func}: values beyond {target.name}, the default integer dtype on {dev}")
    return a.astype(target.np)


def _unwrap_nested(seq):
    """Replace tensors inside nested sequences by host arrays (explicitly, so that any device works)."""
    out = []
    for item in seq:
        if type(item) is Tensor:
            out.append(to_numpy(item, "asarray"))
        elif isinstance(item, (list, tuple)):
            out.append(_unwrap_nested(item))
        else:
            out.append(item)
    return out


# --- asarray of Python data by plans ------------------------------------------------------------------
# asarray of a Python scalar, or of a flat list or tuple of them, is checked by the Python path below once
# per (type, dtype argument, device), and kept as a plan where the device's client makes its results on the
# host (CpuClient.host_parts): numr_array._speedups.asarray then converts a repeated call's value as that
# path does (numpy.asarray) and makes the tensor over the converted array, in C. A value that converts
# otherwise (a Python int beyond int64, say) goes back to the Python path and its errors.

_SCALARS = (bool, int, float, complex)
#: (type of obj, dtype argument, type of device, device) -> the plan _speedups.c reads (see there, ``asarray``)
_ASARRAY_PLANS: dict = {}
_PLANS_MAX = 512

if _rt.speedups is not None:
    _c_asarray = _rt.speedups.asarray
else:
    def _c_asarray(plans: dict, obj, dtype, device, copy):
        return NotImplemented


#: the same for a Python scalar on a device whose client has no host parts (a GPU): (type of obj, dtype
#: argument, type of device, device) -> (NumPy dtype of the conversion, dtype, device); asarray then converts a
#: repeated call's value as the Python path does (to the device's narrower default dtype too) and uploads it,
#: and any other outcome (an error, another NumPy dtype, an int beyond that default) goes to the Python path
_SCALAR_PLANS: dict = {}


def _scalar_by_plan(obj, dtype, device, copy):
    """``asarray`` of the Python scalar ``obj`` by its plan, or NotImplemented."""
    if (type(obj) not in _SCALARS or (copy is not None and copy is not True) or _rt.lost_count
            or not (dtype is None or type(dtype) is dt.DType or isinstance(dtype, np.dtype))
            or type(device) not in (Device, str)):
        return NotImplemented
    plan = _SCALAR_PLANS.get((type(obj), dtype, type(device), device))
    if plan is None:
        return NotImplemented
    npdtype, rdtype, dev = plan
    try:
        a = np.asarray(obj, dtype=npdtype if dtype is not None else None)
    except Exception:  # (the Python path raises its own error for it)
        return NotImplemented
    if a.dtype != npdtype:
        return NotImplemented
    if rdtype.np != npdtype:  # the device's default dtype is narrower than NumPy's (as _device_defaults)
        if rdtype.kind in dt.INTEGER_KINDS:
            info = np.iinfo(rdtype.np)
            if not info.min <= obj <= info.max:
                return NotImplemented
        a = a.astype(rdtype.np)
    client = dev._client or dev.client
    buf, view = client.alloc_tensor((), rdtype)
    t = Tensor(buf, rdtype, (), (), 0, dev, view)
    client.copy_to_device(a, buf, 0)
    return t


def _scalar_plan(obj, dtype, device, converted: np.ndarray, t: Tensor) -> None:
    """Keep the plan of ``asarray(obj, dtype=dtype, device=device)`` for the Python scalar ``obj`` on a device
    without host parts, whose Python path converted it to ``converted`` and made ``t`` from that."""
    if type(device) in (Device, str) and (dtype is None or type(dtype) is dt.DType or isinstance(dtype, np.dtype)):
        if len(_SCALAR_PLANS) >= _PLANS_MAX:
            _SCALAR_PLANS.clear()
        key = (type(obj), dtype, type(device), device)
        _SCALAR_PLANS[key] = (converted.dtype, t._dtype, t._dev)
        # where the client launches an upload from C, the compiled asarray converts and uploads: a float to a
        # float dtype, an int to a signed one, a bool to bool, each unchanged by the device's defaults
        rd = t._dtype
        kind = {float: "f", int: "i", bool: "b"}.get(type(obj))
        launch = getattr(t._dev._client, "scalar_launch", None)
        if (launch is None or _rt.speedups is None or kind is None or rd.kind != kind or converted.dtype != rd.np
                or type(dtype) is np.dtype):
            return
        part = launch()
        if part is not None:
            if len(_ASARRAY_PLANS) >= _PLANS_MAX:
                _ASARRAY_PLANS.clear()
            _ASARRAY_PLANS[key] = (dtype, device, t._dev, t._dev._client.allocator, rd, rd.itemsize, ord(kind)) + part


def _asarray_plan(obj, dtype, device, dev: Device, a: np.ndarray, t: Tensor) -> None:
    """Keep (or extend) the plan of ``asarray(obj, dtype=dtype, device=device)`` (``device``: as given, or
    ``dev``, the default device, for None), whose Python path converted ``obj`` to the host array ``a`` and
    made ``t`` on ``dev`` from it unchanged."""
    parts = getattr(dev._client, "host_parts", None)
    if (parts is None or _rt.speedups is None or not (dtype is None or type(dtype) is dt.DType)
            or type(device) not in (Device, str)):
        return
    if type(obj) not in _SCALARS and not (type(obj) in (list, tuple) and all(type(v) in _SCALARS for v in obj)):
        return
    key = (type(obj), dtype, type(device), device)  # (a Device equals its name: the type tells them apart)
    plan = _ASARRAY_PLANS.get(key)
    if plan is None:
        if len(_ASARRAY_PLANS) >= _PLANS_MAX:
            _ASARRAY_PLANS.clear()
        plan = _ASARRAY_PLANS[key] = (dtype, device, dev, parts()[0], np.asarray,
                                      None if dtype is None else dtype.np, {})
    plan[-1][a.dtype] = (t._dtype, t._dtype.itemsize)


def asarray(obj: Any, /, *, dtype=None, device=None, copy: bool | None = None) -> Tensor:
    """An array from ``obj``: an array, a Python scalar, a nested sequence, or an object with the buffer
    protocol, ``__array__`` or ``__dlpack__``. ``copy=False`` never copies (ValueError where it must)."""
    r = _c_asarray(_ASARRAY_PLANS, obj, dtype, _device._default if device is None else device, copy)
    if r is NotImplemented:
        r = _scalar_by_plan(obj, dtype, _device._default if device is None else device, copy)
    if r is not NotImplemented:
        return r
    given = dtype
    dtype = _dtype_arg(dtype, "asarray")
    if copy is not None and type(copy) is not bool:
        raise ValueError(f"asarray: copy must be True, False or None, got {copy!r}")
    if type(obj) is Tensor:
        dev = obj._dev if device is None else device_of(device, "asarray")
        target = obj._dtype if dtype is None else dtype
        if dev is obj._dev and target is obj._dtype and not copy:
            return obj
        if copy is False:
            raise ValueError(f"asarray: copy=False but the result needs a copy (to {dev}, {target.name})")
        return astype(obj.to_device(dev) if dev is not obj._dev else obj, target, copy=True)
    if not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        return _from_dlpack_object(obj, dtype, device, copy)
    dev = device_of(device, "asarray")
    if copy is False:
        client = dev.client
        if not isinstance(client, HostInterop) or not (isinstance(obj, np.ndarray) or hasattr(obj, "__array__")):
            raise ValueError(f"asarray: copy=False but {type(obj).__name__} cannot be shared with {dev} without a copy")
        a = np.asarray(obj)
        if dtype is not None and a.dtype != dtype.np:
            raise ValueError(f"asarray: copy=False but the data is {a.dtype}, not {dtype.name}")
        return client.adopt(a)
    if dtype is not None and ((type(obj) is float and dtype.kind not in dt.FLOAT_KINDS)
                              or (type(obj) is complex and dtype.kind != "c")):
        raise TypeError(f"asarray: a Python {type(obj).__name__} cannot become a {dtype.name} array")
    a = _host_array(obj, dtype, "asarray")
    converted = a
    if dtype is None and (_is_python_data(obj) or type(obj) in (float, complex)):
        a = _device_defaults(a, dev, "asarray")
    _check_dtype_on(dev, dtype or dt.from_numpy(a.dtype), "asarray")
    t = from_numpy(a, dev)
    if type(obj) in _SCALARS and getattr(dev._client or dev.client, "host_parts", None) is None:
        _scalar_plan(obj, given, dev if device is None else device, converted, t)
    elif a is converted:
        _asarray_plan(obj, given, dev if device is None else device, dev, a, t)
    return t


def _from_dlpack_object(obj, dtype: dt.DType | None, device, copy: bool | None) -> Tensor:
    """asarray of another library's array (CuPy, PyTorch, ...): through DLPack, shared where allowed."""
    t = from_dlpack(obj, device=device, copy=copy)
    if dtype is None or dtype is t._dtype:
        return t
    if copy is False:
        raise ValueError(f"asarray: copy=False but the data is {t._dtype.name}, not {dtype.name}")
    return astype(t, dtype, copy=False)


def empty(shape, *, dtype=None, device=None) -> Tensor:
    dev = device_of(device, "empty")
    dtype = _dtype_arg(dtype, "empty") or _default_float(dev)
    return _new(dev, normalize_shape(shape, "empty"), dtype, "empty")


def zeros(shape, *, dtype=None, device=None) -> Tensor:
    dev = device_of(device, "zeros")
    dtype = _dtype_arg(dtype, "zeros") or _default_float(dev)
    return _fill(_new(dev, normalize_shape(shape, "zeros"), dtype, "zeros"), 0)


def ones(shape, *, dtype=None, device=None) -> Tensor:
    dev = device_of(device, "ones")
    dtype = _dtype_arg(dtype, "ones") or _default_float(dev)
    return _fill(_new(dev, normalize_shape(shape, "ones"), dtype, "ones"), 1)


def _fill_dtype(fill_value, dtype: dt.DType | None, dev: Device, func: str) -> dt.DType:
    if type(fill_value) not in (bool, int, float, complex):
        raise TypeError(f"{func}: fill_value must be a Python bool, int, float or complex, "
                        f"got {type(fill_value).__name__}")
    if dtype is None:  # (the default integer dtype is int32 on a WebGPU adapter without shader-int64)
        dtype = dt.default_dtype_of_scalar(fill_value, **default_dtypes_of(dev))
    elif not dt.scalar_compatible(dtype, fill_value) and not (type(fill_value) is int and dtype.kind != "b"):
        raise TypeError(f"{func}: fill_value {fill_value!r} does not suit dtype {dtype.name}")
    if dtype.kind in dt.INTEGER_KINDS:
        info = np.iinfo(dtype.np)
        if not info.min <= fill_value <= info.max:
            raise OverflowError(f"{func}: fill_value {fill_value} does not fit in {dtype.name}")
    elif type(fill_value) is int:
        _python_float(fill_value, "fill_value", func)
    return dtype


def _python_float(v: int, name: str, func: str) -> float:
    """A Python int as a float; OverflowError naming ``func`` beyond the float range (as NumPy raises for
    out-of-range Python ints, and as asarray and full do for integer dtypes)."""
    try:
        return float(v)
    except OverflowError:
        raise OverflowError(f"{func}: {name} {v} is too large for a floating-point dtype") from None


def full(shape, fill_value, *, dtype=None, device=None) -> Tensor:
    dev = device_of(device, "full")
    dtype = _fill_dtype(fill_value, _dtype_arg(dtype, "full"), dev, "full")
    return _fill(_new(dev, normalize_shape(shape, "full"), dtype, "full"), fill_value)


def _like(x, dtype, device, shape, func):
    """(device, dtype, shape) of a ``*_like`` result: x's unless given (``shape`` as NumPy's ``*_like``)."""
    check_tensor(x, func)
    dev = x._dev if device is None else device_of(device, func)
    shape = x._shape if shape is None else normalize_shape(shape, func)
    return dev, (x._dtype if dtype is None else dt.check_dtype(dtype, func)), shape


# zeros_like, ones_like and empty_like of a tensor alone (no dtype, device or shape) keep a plan per (x's dtype,
# shape, client) where the client makes its results on the host (CpuClient.host_parts) and launches are not
# checked: numr_array._speedups.like then makes a repeated call's result in C, as numpy.zeros or numpy.empty
# and ndarray.fill (the fill kernel's assignment of one value: the same bytes), outside a capture.
_EMPTY_LIKE_PLANS: dict = {}
_ZEROS_LIKE_PLANS: dict = {}
_ONES_LIKE_PLANS: dict = {}

if _rt.speedups is not None:
    _c_like = _rt.speedups.like
else:
    def _c_like(plans: dict, x, dtype, device, shape):
        return NotImplemented


def _like_plan(plans: dict, x: Tensor, t: Tensor, make, value) -> None:
    """Keep the plan of a ``*_like(x)`` whose Python path made ``t``: ``make`` (numpy.zeros or numpy.empty)
    makes its array, filled with ``value`` unless None."""
    parts = getattr(x._dev._client, "host_parts", None)
    if parts is None or _rt.speedups is None or CHECK_LAUNCHES or _capture.capturing or t._dev is not x._dev:
        return
    if len(plans) >= _PLANS_MAX:
        plans.clear()
    dtype = t._dtype
    plans[x._dtype, x._shape, x._dev._client] = (
        dtype, t._shape, t._strides, t._dev, parts()[0], dtype.itemsize * t.size, dtype.np, make,
        None if value is None else dtype.np.type(value))


def _like_py(plans: dict, func: str, fill, make, plan_fill, x, dtype, device, shape) -> Tensor:
    """The Python path of ``func`` (empty_like, zeros_like, ones_like; ``fill``: None or the value written),
    which keeps a plan for a call of ``x`` alone (``make`` and ``plan_fill``: how the compiled call makes the
    array, _speedups.like)."""
    dev, rdtype, rshape = _like(x, dtype, device, shape, func)
    t = _new(dev, rshape, rdtype, func)
    if fill is not None:
        t = _fill(t, fill)
    if dtype is None and device is None and shape is None:  # (not ==: a NumPy dtype equals None)
        _like_plan(plans, x, t, make, plan_fill)
    return t


def empty_like(x, /, *, dtype=None, device=None, shape=None) -> Tensor:
    r = _c_like(_EMPTY_LIKE_PLANS, x, dtype, device, shape)  # (a cached call runs in one frame: this one)
    if r is not NotImplemented:
        return r
    return _like_py(_EMPTY_LIKE_PLANS, "empty_like", None, np.empty, None, x, dtype, device, shape)


def zeros_like(x, /, *, dtype=None, device=None, shape=None) -> Tensor:
    r = _c_like(_ZEROS_LIKE_PLANS, x, dtype, device, shape)  # (a cached call runs in one frame: this one)
    if r is not NotImplemented:
        return r
    return _like_py(_ZEROS_LIKE_PLANS, "zeros_like", 0, np.zeros, None, x, dtype, device, shape)


def ones_like(x, /, *, dtype=None, device=None, shape=None) -> Tensor:
    r = _c_like(_ONES_LIKE_PLANS, x, dtype, device, shape)  # (a cached call runs in one frame: this one)
    if r is not NotImplemented:
        return r
    return _like_py(_ONES_LIKE_PLANS, "ones_like", 1, np.empty, 1, x, dtype, device, shape)


def full_like(x, /, fill_value, *, dtype=None, device=None, shape=None) -> Tensor:
    dev, dtype, shape = _like(x, dtype, device, shape, "full_like")
    dtype = _fill_dtype(fill_value, dtype, dev, "full_like")
    return _fill(_new(dev, shape, dtype, "full_like"), fill_value)


def _default_float(dev: Device) -> dt.DType:
    return default_dtypes_of(dev)["default_float"]


def _arange_number(v, name: str) -> int | float:
    """An arange bound or step as a Python int or float (NumPy scalars accepted)."""
    if type(v) is int or isinstance(v, np.integer):
        return int(v)
    if type(v) is float or isinstance(v, np.floating):
        if not math.isfinite(v):
            raise ValueError(f"arange: {name} must be finite, got {v!r}")
        return float(v)
    raise TypeError(f"arange: {name} must be an int or a float, got {v!r}")


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> Tensor:
    """Values start, start+step, ... below stop; ceil((stop-start)/step) of them."""
    start = _arange_number(start, "start")
    stop = None if stop is None else _arange_number(stop, "stop")
    step = _arange_number(step, "step")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    dev = device_of(device, "arange")
    dtype = _dtype_arg(dtype, "arange")
    if dtype is None:
        defaults = default_dtypes_of(dev)
        is_float = any(type(v) is float for v in (start, stop, step))
        dtype = defaults["default_float" if is_float else "default_integral"]
    if type(start) is int and type(stop) is int and type(step) is int:
        n = max(0, -((start - stop) // step))  # ceil((stop - start) / step), exactly
    else:
        n = max(0, math.ceil((stop - start) / step))
    if dtype.kind in dt.INTEGER_KINDS and n:
        info = np.iinfo(dtype.np)
        last = start + (n - 1) * step
        if not (info.min <= start <= info.max and info.min <= last <= info.max):
            raise OverflowError(f"arange: values from {start} to {last} do not fit in {dtype.name}")
    elif dtype.kind not in dt.INTEGER_KINDS:
        start, step = _python_float(start, "start", "arange"), _python_float(step, "step", "arange")
    out = _new(dev, normalize_shape(n, "arange"), dtype, "arange")
    if n:
        launch(dev, K.arange, (), (out,), {"start": start, "step": step})
    return out


def _host_number(v, func: str):
    """A 0-D array as the Python number it holds (read on the host); anything else unchanged."""
    if type(v) is not Tensor:
        return v
    if v.ndim:
        raise TypeError(f"{func}: array bounds must be 0-D, got shape {v.shape}")
    return complex(v) if v.dtype.kind == "c" else float(v) if v.dtype.kind in dt.FLOAT_KINDS else int(v)


def linspace(start, stop, /, num: int = 50, endpoint: bool = True, *, dtype=None, device=None) -> Tensor:
    """``num`` evenly spaced values from start to stop (stop included when endpoint). Also NumPy's default
    ``num=50``, ``endpoint`` given positionally, and 0-D arrays as bounds (read on the host; the result goes
    on their device unless ``device`` says otherwise)."""
    if type(start) is Tensor or type(stop) is Tensor:
        if device is None:
            device = next(v.device for v in (start, stop) if type(v) is Tensor)
        start, stop = _host_number(start, "linspace"), _host_number(stop, "linspace")
    for name, v in (("start", start), ("stop", stop)):
        if type(v) not in (int, float, complex) and not isinstance(v, (np.number,)):
            raise TypeError(f"linspace: {name} must be a Python number, got {v!r}")
    num = _int_arg(num, "num", "linspace")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    dev = device_of(device, "linspace")
    dtype = _dtype_arg(dtype, "linspace")
    defaults = default_dtypes_of(dev)
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = defaults["default_complex" if is_complex else "default_float"]
    elif dtype.kind not in dt.FLOAT_KINDS or (is_complex and dtype.kind != "c"):
        raise TypeError(f"linspace: dtype must be a floating-point dtype suited to the bounds, got {dtype.name}")
    # the kernels get Python floats (complex numbers): a Python int of any size fits (or OverflowError)
    bound = complex if dtype.kind == "c" else float
    start, stop = (bound(_python_float(v, name, "linspace") if isinstance(v, (int, np.integer)) else v)
                   for name, v in (("start", start), ("stop", stop)))
    out = _new(dev, normalize_shape(num, "linspace"), dtype, "linspace")
    if num:
        launch(dev, K.linspace, (), (out,), {"start": start, "stop": stop, "endpoint": bool(endpoint)})
    return out


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype=None, device=None) -> Tensor:
    """A 2-D array with ones on the k-th diagonal."""
    n_rows = _int_arg(n_rows, "n_rows", "eye")
    n_cols = n_rows if n_cols is None else _int_arg(n_cols, "n_cols", "eye")
    k = _int_arg(k, "k", "eye")
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye: sizes must be non-negative, got {n_rows}, {n_cols}")
    dev = device_of(device, "eye")
    dtype = _dtype_arg(dtype, "eye") or _default_float(dev)
    out = _new(dev, normalize_shape((n_rows, n_cols), "eye"), dtype, "eye")
    if out.size:
        launch(dev, K.eye, (), (out,), {"k": _clamp_diagonal(k, out._shape)})
    return out


def _tri(x, k, func: str, kernel: Kernel) -> Tensor:
    check_tensor(x, func)
    if x.ndim < 2:
        raise ValueError(f"{func}: x must have at least 2 dimensions, got shape {x._shape}")
    k = _int_arg(k, "k", func)
    out = new_tensor(x._dev, x._shape, x._dtype)
    if out.size:
        launch(x._dev, kernel, (x,), (out,), {"k": _clamp_diagonal(k, x._shape)})
    return out


def _clamp_diagonal(k: int, shape: tuple[int, ...]) -> int:
    """``k`` within [-rows, cols] of the last two axes: a diagonal further out selects the same elements
    (none, or all), and a Python int of any size then fits the kernels' C integers."""
    return max(-shape[-2], min(k, shape[-1]))


def tril(x, /, *, k: int = 0) -> Tensor:
    """x with the elements above the k-th diagonal (of the last two axes) zeroed."""
    return _tri(x, k, "tril", K.tril)


def triu(x, /, *, k: int = 0) -> Tensor:
    """x with the elements below the k-th diagonal (of the last two axes) zeroed."""
    return _tri(x, k, "triu", K.triu)
