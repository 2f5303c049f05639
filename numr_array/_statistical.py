"""Statistical functions: the reductions max, min, mean, prod, sum, std, var, and cumulative_sum and
cumulative_prod.

Each one validates its arguments, works out the result's shape and dtype, allocates it (or checks
``out=``) and launches one kernel of the ``reductions`` family with the normalised axes. The reduction
helpers here (``reduction_args``, ``reduction``, ``check_flag``, ``check_kind``, ``index_dtype``) are shared
with the utility, searching, sorting and set modules.
"""

from __future__ import annotations

import math

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._device import Device
from ._elementwise import _bound, _plans, _store, _tail
from ._checks import check_axes, check_axis, check_tensor
from ._data_type_functions import astype
from ._launch import launch, make_view, result
from ._info import default_dtypes_of
from ._tensor import Tensor
from .kernels import K, Kernel

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

REAL_NUMERIC_KINDS = dt.INTEGER_KINDS + ("f",)
# the order of kinds a dtype= argument may move up (but not down) from the input's: casting complex to
# real or floating to integer inside a sum would silently drop parts of the data
_KIND_RANK = {"i": 1, "u": 1, "f": 2, "c": 3}
_UNSIGNED_OF_BITS = {32: dt.uint32, 64: dt.uint64}
# products of single-precision floats accumulate in double precision where the device has it: a partial
# product that overflows float32 (or underflows) would otherwise make 0 * inf = NaN, or inf / 0, of a
# product whose value is representable, depending on the order the backend multiplies in
_WIDER_PRODUCT = {dt.float32: dt.float64, dt.complex64: dt.complex128}

Axis = int | tuple[int, ...] | None


def check_flag(value, name: str, func: str) -> bool:
    """A boolean keyword argument (keepdims, descending, ...); TypeError for anything but a bool."""
    if type(value) is not bool:
        raise TypeError(f"{func}: {name} must be a bool, got {value!r}")
    return value


def check_kind(x: Tensor, kinds: tuple[str, ...], words: str, func: str) -> None:
    if x._dtype.kind not in kinds:
        raise TypeError(f"{func}: {x._dtype.name} is not accepted; {func} takes {words} arrays")


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """The shape of a reduction of ``shape`` over ``axes``."""
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def reduction_args(x, axis, keepdims, func: str) -> tuple[tuple[int, ...], bool, int]:
    """Checked (axes, keepdims, number of elements each result reduces) of a reduction of ``x``."""
    check_tensor(x, func)
    axes = check_axes(axis, x.ndim, func)
    keepdims = check_flag(keepdims, "keepdims", func)
    return axes, keepdims, math.prod(x._shape[a] for a in axes)


def index_dtype(dev: Device) -> dt.DType:
    """The default array index dtype on ``dev``."""
    return default_dtypes_of(dev)["default_integral"]


def _accumulation_dtype(x: Tensor, dtype, func: str) -> dt.DType:
    """The result dtype of sum, prod and the cumulative functions (the standard's ``dtype=`` rules)."""
    src = x._dtype
    if dtype is not None:
        dtype = dt.check_dtype(dtype, func)
        if dtype.kind not in _KIND_RANK or _KIND_RANK[dtype.kind] < _KIND_RANK[src.kind]:
            raise TypeError(f"{func}: cannot accumulate {src.name} values in {dtype.name}")
        if not x._dev.client.supports_dtype(dtype):
            raise TypeError(f"{func}: {dtype.name} is not supported on device {x._dev}")
        return dtype
    if src.kind not in dt.INTEGER_KINDS:
        return src
    default = default_dtypes_of(x._dev)["default_integral"]
    if src.kind == "u":
        default = _UNSIGNED_OF_BITS[default.bits]
    return src if src.bits > default.bits else default


def reduction(kernel: Kernel, x: Tensor, axes: tuple[int, ...], keepdims: bool, dtype: dt.DType, out,
              func: str, params: dict | None = None, plan: tuple | None = None) -> Tensor:
    """Run the reduction ``kernel`` of x over ``axes`` into ``out`` (checked) or a new tensor of ``dtype``;
    ``plan``: (table, key) where the call may be kept as a plan of the compiled call (see _reduce_key)."""
    o = result(out, reduced_shape(x._shape, axes, keepdims), dtype, x._dev, func)
    if o.size:
        p = {"axis": axes, "keepdims": keepdims, **(params or {})}
        launch(x._dev, kernel, (x,), (o,), p)
        if plan is not None:
            _reduce_plan(plan, kernel, x, o, p)
    return o


# --- per-signature plans of sum, prod, max, min and mean -----------------------------------------------
# As for element-wise calls (numr_array/_elementwise.py): a call the Python path below validated and ran is
# kept as a plan, keyed on what decides its checks and result (x's dtype, shape and client, the axis and
# keepdims as given), where the client runs the kernel as one NumPy ufunc reduction (CpuClient.
# reduce_launch); numr_array._speedups.reduce repeats such a call in C and hands every other call (a new
# signature, dtype= or out= given, a capture, a lost device) to the Python path unchanged.

if _rt.speedups is not None:
    _c_reduce = _rt.speedups.reduce
else:
    def _c_reduce(plans: dict, x, axis, keepdims, dtype, out):
        return NotImplemented

_PLANS_SUM = _plans("reduce:sum")
_PLANS_PROD = _plans("reduce:prod")
_PLANS_MAX = _plans("reduce:max")
_PLANS_MIN = _plans("reduce:min")
_PLANS_MEAN = _plans("reduce:mean")


# On a client whose reductions are not ufunc calls (a GPU's), the plan is kept in a second table, the
# function's "bound" one, as the client's bound kernel: a repeated call is then a lookup, an allocation and
# that kernel's launch (the client's own per-signature launch plan, on WebGPU), in _bound_reduce below.
_BOUND = {name: _plans("reduce-bound:" + name) for name in ("sum", "prod", "max", "min", "mean")}


def _bound_reduce(table: dict, x, axis, keepdims, dtype, out):
    """The reduction of a signature kept in the bound plan ``table``, into a new tensor; NotImplemented where
    the Python path must run: no plan, dtype= or out= given, an axis or keepdims not of the types a key
    compares, a capture (its bookkeeping) or a lost device (its checks)."""
    if (dtype is not None or out is not None or type(keepdims) is not bool or type(x) is not Tensor
            or _capture.capturing or _rt.lost_count):
        return NotImplemented
    if axis is not None and type(axis) is not int and not (type(axis) is tuple and
                                                           all(type(a) is int for a in axis)):
        return NotImplemented
    plan = table.get((x._dtype, x._shape, x._dev._client, axis, keepdims))
    if plan is None:
        return NotImplemented
    rdtype, shape, strides, dev, alloc, run = plan
    buf, view = alloc(shape, rdtype)
    o = Tensor(buf, rdtype, shape, strides, 0, dev, view)
    run((x,), (o,))
    return o


def _reduce_key(plans: dict, x, axis, keepdims, dtype, out) -> tuple | None:
    """(plans, the compiled call's key) of a reduction call, or None where it takes no plan: dtype= or out=
    given, or an axis or keepdims not of the exact types the key compares (True would equal axis 1)."""
    if (_rt.speedups is None or dtype is not None or out is not None or type(keepdims) is not bool
            or type(x) is not Tensor):
        return None
    if axis is not None and type(axis) is not int and not (type(axis) is tuple and
                                                           all(type(a) is int for a in axis)):
        return None
    return plans, (x._dtype, x._shape, x._dev._client, axis, keepdims)


def _reduce_plan(plan: tuple, kernel: Kernel, x: Tensor, o: Tensor, params: dict) -> None:
    """Keep the plan of the reduction just run into the new tensor ``o`` (the layout _speedups.c reads),
    where its client runs the kernel as a ufunc reduction; else its bound plan (_bound_reduce)."""
    client = o._dev._client
    launch_of = getattr(client, "reduce_launch", None)
    part = launch_of(kernel.name, params, o._dtype.np, x.size // o.size) if launch_of is not None else None
    if part is None:
        if launch_of is None and _direct_reduce_plan(plan, kernel, x, o, client):
            return
        if launch_of is None and hasattr(client, "bind"):
            run = _bound(client, o._dev, kernel, params)
            _store(_BOUND[kernel.name], plan[1], (o._dtype, o._shape, o._strides, o._dev, client.alloc_tensor, run))
        return
    allocator, native, empty = client.host_parts()
    plans, key = plan
    _store(plans, key, (o._dtype, o._shape, o._strides, o._dev, allocator, o._dtype.itemsize * o.size,
                        o._dtype.np, empty, native) + part)


def _direct_reduce_plan(plan: tuple, kernel: Kernel, x: Tensor, o: Tensor, client) -> bool:
    """Keep a GPU client's direct kernel of a reduction of all of ``x`` into the one element of ``o`` (its
    ``direct_launch``, form "r": the one-block sum of a small array) as a plan the compiled call launches, in
    an element-wise plan's layout; False where the client has no such kernel for it."""
    direct = getattr(client, "direct_launch", None)
    if direct is None or o.size != 1 or x.size == 0:
        return False
    part = direct(kernel.name, [x._dtype.np], o._dtype.np, o._shape, ((x._shape, x._strides),))
    if part is None:
        return False
    plans, key = plan
    _store(plans, key, (o._dtype, o._shape, o._strides, None, o._dev, None, None, False, False,
                        part + _tail(o._dtype, o._shape)))
    return True


def _fill_nan(x: Tensor, axes: tuple[int, ...], keepdims: bool, out, func: str) -> Tensor:
    """The result of a mean, var or std over no elements (or too few for the correction): all NaN."""
    o = result(out, reduced_shape(x._shape, axes, keepdims), x._dtype, x._dev, func)
    nan = complex(math.nan, math.nan) if x._dtype.kind == "c" else math.nan
    if o.size:
        launch(x._dev, K.fill, (), (o,), {"value": x._dtype.np.type(nan)})
    return o


def _extremum(k: Kernel, plans: dict, x, axis, keepdims, out) -> Tensor:
    kernel = k.name
    plan = _reduce_key(plans, x, axis, keepdims, None, out)
    axes, keepdims, count = reduction_args(x, axis, keepdims, kernel)
    check_kind(x, REAL_NUMERIC_KINDS, "real numeric", kernel)
    if count == 0:
        raise ValueError(f"{kernel}: the reduction over axes {axes} of an array of shape {x._shape} has no "
                         "elements, and so no " + ("maximum" if kernel == "max" else "minimum"))
    return reduction(k, x, axes, keepdims, x._dtype, out, kernel, plan=plan)


def max(x, /, axis: Axis = None, out=None, keepdims: bool = False) -> Tensor:
    """The largest element of ``x`` over ``axis`` (NaN propagates); ValueError over zero elements. Also
    NumPy's positional ``(axis, out, keepdims)``."""
    r = _c_reduce(_PLANS_MAX, x, axis, keepdims, None, out)
    if r is NotImplemented:
        r = _bound_reduce(_BOUND["max"], x, axis, keepdims, None, out)
    return _extremum(K.max, _PLANS_MAX, x, axis, keepdims, out) if r is NotImplemented else r


def min(x, /, axis: Axis = None, out=None, keepdims: bool = False) -> Tensor:
    """The smallest element of ``x`` over ``axis`` (NaN propagates); ValueError over zero elements. Also
    NumPy's positional ``(axis, out, keepdims)``."""
    r = _c_reduce(_PLANS_MIN, x, axis, keepdims, None, out)
    if r is NotImplemented:
        r = _bound_reduce(_BOUND["min"], x, axis, keepdims, None, out)
    return _extremum(K.min, _PLANS_MIN, x, axis, keepdims, out) if r is NotImplemented else r


def _counts(x: Tensor) -> Tensor:
    """A bool array as the default integers, which sum and prod count with, as NumPy does (the standard
    leaves bool input to them unspecified)."""
    if type(x) is Tensor and x._dtype is dt.bool_:
        return astype(x, default_dtypes_of(x._dev)["default_integral"])
    return x


def _accumulate(k: Kernel, plans: dict, x, axis, dtype, keepdims, out) -> Tensor:
    kernel = k.name
    plan = _reduce_key(plans, x, axis, keepdims, dtype, out)
    axes, keepdims, _ = reduction_args(x, axis, keepdims, kernel)
    counted = _counts(x)
    check_kind(counted, dt.NUMERIC_KINDS, "numeric", kernel)
    return reduction(k, counted, axes, keepdims, _accumulation_dtype(counted, dtype, kernel), out, kernel,
                     plan=plan if counted is x else None)


def sum(x, /, axis: Axis = None, dtype: dt.DType | None = None, out=None, keepdims: bool = False) -> Tensor:
    """The sum of ``x`` over ``axis``; integers accumulate in the default integer dtype of their signedness
    unless ``dtype`` says otherwise; the empty sum is 0. Also NumPy's positional ``(axis, dtype, out,
    keepdims)``."""
    r = _c_reduce(_PLANS_SUM, x, axis, keepdims, dtype, out)
    if r is NotImplemented:
        r = _bound_reduce(_BOUND["sum"], x, axis, keepdims, dtype, out)
    return _accumulate(K.sum, _PLANS_SUM, x, axis, dtype, keepdims, out) if r is NotImplemented else r


def prod(x, /, axis: Axis = None, dtype: dt.DType | None = None, out=None, keepdims: bool = False) -> Tensor:
    """The product of ``x`` over ``axis`` (dtype rules as :func:`sum`); the empty product is 1. Also NumPy's
    positional ``(axis, dtype, out, keepdims)``. float32 and complex64 products accumulate in float64 and
    complex128 where the device has them."""
    r = _c_reduce(_PLANS_PROD, x, axis, keepdims, dtype, out)
    if r is NotImplemented:
        r = _bound_reduce(_BOUND["prod"], x, axis, keepdims, dtype, out)
    if r is not NotImplemented:
        return r
    plan = _reduce_key(_PLANS_PROD, x, axis, keepdims, dtype, out)
    axes, keepdims, _ = reduction_args(x, axis, keepdims, "prod")
    counted = _counts(x)
    check_kind(counted, dt.NUMERIC_KINDS, "numeric", "prod")
    dtype = _accumulation_dtype(counted, dtype, "prod")
    acc = _WIDER_PRODUCT.get(dtype, dtype)
    if not counted._dev.client.supports_dtype(acc):
        acc = dtype
    return reduction(K.prod, counted, axes, keepdims, dtype, out, "prod", {"acc": acc},
                     plan=plan if counted is x else None)


def in_dtype(x, dtype, func: str) -> Tensor:
    """``x`` cast to NumPy's ``dtype=`` of mean/std/var (the dtype the statistic is computed and returned in)."""
    if dtype is None:
        return x
    check_tensor(x, func)
    return astype(x, dt.check_dtype(dtype, func), copy=False)


def mean(x, /, axis: Axis = None, dtype: dt.DType | None = None, out=None, keepdims: bool = False) -> Tensor:
    """The arithmetic mean of the floating-point array ``x`` over ``axis``; NaN over zero elements. Also
    NumPy's positional ``(axis, dtype, out, keepdims)``; ``dtype`` casts x first, so integer arrays need
    ``dtype=float64`` (NumPy does that cast implicitly)."""
    r = _c_reduce(_PLANS_MEAN, x, axis, keepdims, dtype, out)
    if r is NotImplemented:
        r = _bound_reduce(_BOUND["mean"], x, axis, keepdims, dtype, out)
    if r is not NotImplemented:
        return r
    plan = _reduce_key(_PLANS_MEAN, x, axis, keepdims, dtype, out)
    if dtype is not None:
        x = in_dtype(x, dtype, "mean")
    axes, keepdims, count = reduction_args(x, axis, keepdims, "mean")
    check_kind(x, dt.FLOAT_KINDS, "floating-point", "mean")
    if count == 0:
        return _fill_nan(x, axes, keepdims, out, "mean")
    return reduction(K.mean, x, axes, keepdims, x._dtype, out, "mean", plan=plan)


def _moment(k: Kernel, x, axis, correction, keepdims, out) -> Tensor:
    kernel = k.name
    axes, keepdims, count = reduction_args(x, axis, keepdims, kernel)
    check_kind(x, ("f",), "real floating-point", kernel)
    if type(correction) not in (int, float):
        raise TypeError(f"{kernel}: correction must be an int or a float, got {correction!r}")
    if not correction >= 0:
        raise ValueError(f"{kernel}: correction must be non-negative, got {correction!r}")
    if count - correction <= 0:
        return _fill_nan(x, axes, keepdims, out, kernel)
    return reduction(k, x, axes, keepdims, x._dtype, out, kernel, {"correction": correction})


def _correction(ddof, correction, func: str) -> int | float:
    if ddof is not None and correction is not None:
        raise ValueError(f"{func}: give ddof or correction, not both (ddof={ddof!r}, correction={correction!r})")
    value = ddof if ddof is not None else correction
    return 0.0 if value is None else value


def var(x, /, axis: Axis = None, dtype: dt.DType | None = None, out=None, ddof: int | float | None = None,
        keepdims: bool = False, *, correction: int | float | None = None) -> Tensor:
    """The variance of ``x`` over ``axis``, dividing by (M - correction); NaN where that is <= 0. Also
    NumPy's positional ``(axis, dtype, out, ddof, keepdims)``, where ``ddof`` is the standard's
    ``correction`` under NumPy's name and ``dtype`` casts x first."""
    return _moment(K.var, in_dtype(x, dtype, "var"), axis, _correction(ddof, correction, "var"), keepdims, out)


def std(x, /, axis: Axis = None, dtype: dt.DType | None = None, out=None, ddof: int | float | None = None,
        keepdims: bool = False, *, correction: int | float | None = None) -> Tensor:
    """The standard deviation of ``x`` over ``axis`` (the square root of :func:`var`); NumPy's arguments
    as :func:`var`."""
    return _moment(K.std, in_dtype(x, dtype, "std"), axis, _correction(ddof, correction, "std"), keepdims, out)


def _cumulative(k: Kernel, identity: int, x, axis, dtype, include_initial, out) -> Tensor:
    kernel = k.name
    check_tensor(x, kernel)
    x = _counts(x)
    check_kind(x, dt.NUMERIC_KINDS, "numeric", kernel)
    include_initial = check_flag(include_initial, "include_initial", kernel)
    if x.ndim == 0:
        raise ValueError(f"{kernel}: x must have at least one dimension, got a 0-D array")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{kernel}: axis is required for an array of {x.ndim} dimensions (shape {x._shape})")
        axis = 0
    axis = check_axis(axis, x.ndim, kernel)
    dtype = _accumulation_dtype(x, dtype, kernel)
    shape = x._shape
    if include_initial:
        shape = shape[:axis] + (shape[axis] + 1,) + shape[axis + 1:]
    o = result(out, shape, dtype, x._dev, kernel)
    if not o.size:
        return o
    body = o
    if include_initial:
        st = o._strides[axis]
        body = make_view(o, x._shape, o._strides, o._offset + st)
    if body.size:
        launch(x._dev, k, (x,), (body,), {"axis": axis})
    if include_initial:
        # written after the body, so that an ``out`` overlapping x cannot change what the kernel reads
        head = make_view(o, shape[:axis] + (1,) + shape[axis + 1:], o._strides, o._offset)
        launch(x._dev, K.fill, (), (head,), {"value": dtype.np.type(identity)})
    return o


def cumulative_sum(x, /, *, axis: int | None = None, dtype: dt.DType | None = None,
                   include_initial: bool = False, out=None) -> Tensor:
    """Running sums of ``x`` along ``axis`` (dtype rules as :func:`sum`); ``include_initial`` prepends 0."""
    return _cumulative(K.cumulative_sum, 0, x, axis, dtype, include_initial, out)


def cumulative_prod(x, /, *, axis: int | None = None, dtype: dt.DType | None = None,
                    include_initial: bool = False, out=None) -> Tensor:
    """Running products of ``x`` along ``axis`` (dtype rules as :func:`sum`); ``include_initial`` prepends 1."""
    return _cumulative(K.cumulative_prod, 1, x, axis, dtype, include_initial, out)
