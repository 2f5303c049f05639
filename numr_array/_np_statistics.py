"""NumPy's statistics the standard lacks: order statistics (``median``, ``quantile``, ``percentile`` and
their NaN-ignoring forms), the other NaN-ignoring reductions, ``average``, ``cov`` and ``corrcoef``.

Order statistics sort along the axis on the device (NaNs sort last) and gather the ranks they need with
``take_along_axis``: no data goes to the host, so each runs on every device and inside capture.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from . import _statistical as _st
from ._checks import check_axes, check_tensor
from ._creation import asarray, full_like
from ._data_type_functions import astype
from ._linear_algebra_functions import matmul
from ._np_common import floating, gather_along, tensor
from ._searching import argmax, argmin, where
from ._sorting import sort
from ._tensor import Tensor
from ._utility import all as _all
from ._utility import any as _any

__all__ = [
    "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile", "nanmax", "nanmin",
    "nanargmax", "nanargmin", "nanprod", "nanstd", "nanvar", "nancumsum", "nancumprod", "average", "cov",
    "corrcoef",
]

Axis = int | tuple[int, ...] | None
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _real(a, func: str) -> Tensor:
    check_tensor(a, func, "a")
    if a._dtype.kind not in dt.INTEGER_KINDS + ("f",):
        raise TypeError(f"{func}: a must have a real numeric dtype, got {a._dtype.name}")
    return a


def _gathered_last(a: Tensor, axis: Axis, func: str) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the reduced axes moved last and merged into one, and the reduced axes."""
    axes = check_axes(axis, a.ndim, func)
    keep = [i for i in range(a.ndim) if i not in axes]
    moved = _mn.permute_dims(a, tuple(keep) + axes) if a.ndim else a
    return _mn.reshape(moved, tuple(a._shape[i] for i in keep) + (-1,)), axes


def _keepdims(r: Tensor, shape: tuple[int, ...], axes: tuple[int, ...], lead: int) -> Tensor:
    """``r`` (``lead`` q axes, then the kept axes) with the reduced axes put back as size 1."""
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return _mn.reshape(r, r._shape[:lead] + kept)


def _q_tensor(q, a: Tensor, func: str, scale: float) -> tuple[Tensor, bool]:
    """``q`` (a number, a sequence or an array) as a 1-D array of ``a``'s dtype divided by ``scale``,
    and whether q was 0-D; ValueError outside [0, 1] for Python numbers (arrays are not read)."""
    if isinstance(q, Tensor):
        check_tensor(q, func, "q")
        if q._dtype.kind not in dt.INTEGER_KINDS + ("f",):
            raise TypeError(f"{func}: q must be real, got {q._dtype.name}")
        scalar = q.ndim == 0
        if q.ndim > 1:
            raise ValueError(f"{func}: q must be 0-D or 1-D, got shape {q._shape}")
        qt = astype(_mn.reshape(q, (-1,)), a._dtype)
        return (_ew.divide(qt, scale) if scale != 1 else qt), scalar
    if isinstance(q, (np.ndarray, np.generic)) and q.dtype.kind in "iuf":  # NumPy's q (xarray's): host numbers
        if q.ndim > 1:
            raise ValueError(f"{func}: q must be 0-D or 1-D, got shape {q.shape}")
        q = q.tolist()
    values = [q] if isinstance(q, (int, float)) and not isinstance(q, bool) else list(q) \
        if isinstance(q, Sequence) else None
    if values is None or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{func}: q must be a number, a sequence of numbers or an array, got {q!r}")
    values = [v / scale for v in values]
    if not all(0 <= v <= 1 for v in values):
        raise ValueError(f"{func}: q must be in [0, {scale:g}], got {q!r}")
    return asarray(values, dtype=a._dtype, device=a._dev), not isinstance(q, Sequence)


def _lerp(lo: Tensor, hi: Tensor, t: Tensor) -> Tensor:
    """NumPy's _lerp: ``lo + (hi - lo) t``, from the upper end for t >= 0.5 (monotone and exact at ends)."""
    d = _ew.subtract(hi, lo)
    return where(_ew.greater_equal(t, 0.5), _ew.subtract(hi, _ew.multiply(d, _ew.subtract(1.0, t))),
                 _ew.add(lo, _ew.multiply(d, t)))


def _order_statistic(a, q, axis, keepdims, method, func: str, scale: float, nan_ignoring: bool,
                     median: bool = False) -> Tensor:
    a = floating(_real(a, func), func)
    if method not in _METHODS:
        raise ValueError(f"{func}: method must be one of {', '.join(_METHODS)}, got {method!r}")
    if type(keepdims) is not bool:
        raise TypeError(f"{func}: keepdims must be a bool, got {keepdims!r}")
    qt, scalar = (None, True) if median else _q_tensor(q, a, func, scale)
    flat, axes = _gathered_last(a, axis, func)
    n = flat._shape[-1]
    if n == 0:
        raise ValueError(f"{func}: the reduction over axes {axes} of an array of shape {a._shape} is empty")
    s = sort(flat, axis=-1)  # NaNs last
    nan = _ew.isnan(s)
    if nan_ignoring:
        count = _st.sum(astype(_ew.logical_not(nan), a._dtype), axis=-1, keepdims=True)  # (..., 1)
    else:
        count = full_like(s[..., :1], float(n))
    last = _ew.subtract(count, 1.0)
    pos = _ew.multiply(last, 0.5) if median else _ew.multiply(last, qt)  # (..., Q)
    lo, hi = _ew.floor(pos), _ew.ceil(pos)
    idx_dtype = _st.index_dtype(a._dev)

    def at(p: Tensor) -> Tensor:
        return gather_along(s, astype(_ew.clip(p, 0.0, float(n - 1)), idx_dtype), s.ndim - 1)

    if median or method == "midpoint":
        r = _ew.multiply(_ew.add(at(lo), at(hi)), 0.5)
    elif method == "lower":
        r = at(lo)
    elif method == "higher":
        r = at(hi)
    elif method == "nearest":
        r = at(_ew.round(pos))
    else:
        r = _lerp(at(lo), at(hi), _ew.subtract(pos, lo))
    # a slice with a NaN gives NaN (NaN-ignoring: a slice of NaNs only)
    r = where(_ew.equal(count, 0.0) if nan_ignoring else nan[..., -1:], math.nan, r)
    r = _mn.moveaxis(r, -1, 0)  # q's axis first
    if keepdims:
        r = _keepdims(r, a._shape, axes, 1)
    return r[0] if scalar else r


def median(a: Tensor, axis: Axis = None, out: None = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:
    """The median over ``axis`` (the mean of the two middle values of an even count); NaN for a slice
    holding a NaN. Integer arrays give the default floating-point dtype."""
    _no_out(out, "median")
    return _order_statistic(a, None, axis, keepdims, "linear", "median", 1.0, False, median=True)


def nanmedian(a: Tensor, axis: Axis = None, out: None = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Tensor:
    """:func:`median` of the elements that are not NaN (NaN for an all-NaN slice)."""
    _no_out(out, "nanmedian")
    return _order_statistic(a, None, axis, keepdims, "linear", "nanmedian", 1.0, True, median=True)


def quantile(a: Tensor, q, axis: Axis = None, out: None = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: None = None) -> Tensor:
    """The ``q``-th quantiles (q in [0, 1]: a number, a sequence or an array) over ``axis``; q's axis
    comes first. ``method``: linear (default), lower, higher, nearest, midpoint."""
    _no_out(out, "quantile", weights)
    return _order_statistic(a, q, axis, keepdims, method, "quantile", 1.0, False)


def percentile(a: Tensor, q, axis: Axis = None, out: None = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: None = None) -> Tensor:
    """:func:`quantile` with q in percent, [0, 100]."""
    _no_out(out, "percentile", weights)
    return _order_statistic(a, q, axis, keepdims, method, "percentile", 100.0, False)


def nanquantile(a: Tensor, q, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: None = None) -> Tensor:
    """:func:`quantile` of the elements that are not NaN."""
    _no_out(out, "nanquantile", weights)
    return _order_statistic(a, q, axis, keepdims, method, "nanquantile", 1.0, True)


def nanpercentile(a: Tensor, q, axis: Axis = None, out: None = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: None = None) -> Tensor:
    """:func:`percentile` of the elements that are not NaN."""
    _no_out(out, "nanpercentile", weights)
    return _order_statistic(a, q, axis, keepdims, method, "nanpercentile", 100.0, True)


def _no_out(out, func: str, weights=None) -> None:
    if out is not None:
        raise TypeError(f"{func}: out= is not supported (the result is a new array)")
    if weights is not None:
        raise TypeError(f"{func}: weights= is not supported")


def _nan_filled(a, func: str, fill: float) -> Tensor:
    check_tensor(a, func, "a")
    if a._dtype.kind not in dt.FLOAT_KINDS:
        return a
    return where(_ew.isnan(a), fill, a)


def nanmax(a: Tensor, axis: Axis = None, out: Tensor | None = None, keepdims: bool = False) -> Tensor:
    """:func:`max` ignoring NaNs (NaN for an all-NaN slice)."""
    m = _st.max(_nan_filled(_real(a, "nanmax"), "nanmax", -math.inf), axis=axis, keepdims=keepdims)
    return _all_nan_to_nan(a, m, axis, keepdims, out)


def nanmin(a: Tensor, axis: Axis = None, out: Tensor | None = None, keepdims: bool = False) -> Tensor:
    """:func:`min` ignoring NaNs (NaN for an all-NaN slice)."""
    m = _st.min(_nan_filled(_real(a, "nanmin"), "nanmin", math.inf), axis=axis, keepdims=keepdims)
    return _all_nan_to_nan(a, m, axis, keepdims, out)


def _all_nan_to_nan(a: Tensor, m: Tensor, axis, keepdims, out) -> Tensor:
    if a._dtype.kind not in dt.FLOAT_KINDS:
        return _copy_out(m, out)
    return where(_all(_ew.isnan(a), axis=axis, keepdims=keepdims), math.nan, m, out=out)


def _copy_out(m: Tensor, out: Tensor | None) -> Tensor:
    """``m``, or ``m`` written into ``out`` (checked as the result's)."""
    return m if out is None else _ew.positive(m, out=out)


def _nan_arg(a, axis, out, keepdims, func: str, fill: float) -> Tensor:
    _real(a, func)
    arg = argmax if fill < 0 else argmin
    if a._dtype.kind not in dt.FLOAT_KINDS:
        return arg(a, axis=axis, out=out, keepdims=keepdims)
    if bool(_any(_all(_ew.isnan(a), axis=axis))):
        raise ValueError(f"{func}: All-NaN slice encountered")
    # NumPy's way: NaNs as -inf (+inf), so a NaN before an equal infinity is the one found
    return arg(where(_ew.isnan(a), fill, a), axis=axis, out=out, keepdims=keepdims)


def nanargmax(a: Tensor, axis: int | None = None, out: Tensor | None = None, *, keepdims: bool = False) -> Tensor:
    """:func:`argmax` ignoring NaNs; ValueError for an all-NaN slice, as in NumPy (whether there is one is
    read on the host)."""
    return _nan_arg(a, axis, out, keepdims, "nanargmax", -math.inf)


def nanargmin(a: Tensor, axis: int | None = None, out: Tensor | None = None, *, keepdims: bool = False) -> Tensor:
    """:func:`argmin` ignoring NaNs; ValueError for an all-NaN slice (read on the host)."""
    return _nan_arg(a, axis, out, keepdims, "nanargmin", math.inf)


def nanprod(a: Tensor, axis: Axis = None, dtype: dt.DType | None = None, out: Tensor | None = None,
            keepdims: bool = False) -> Tensor:
    """:func:`prod` counting NaNs as one."""
    return _st.prod(_nan_filled(a, "nanprod", 1.0), axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def nancumsum(a: Tensor, axis: int | None = None, dtype: dt.DType | None = None) -> Tensor:
    """Running sums counting NaNs as zero (of the flattened array when axis is None)."""
    from ._numpy_compat import cumsum
    return cumsum(_nan_filled(a, "nancumsum", 0.0), axis, dtype)


def nancumprod(a: Tensor, axis: int | None = None, dtype: dt.DType | None = None) -> Tensor:
    """Running products counting NaNs as one (of the flattened array when axis is None)."""
    from ._numpy_compat import cumprod
    return cumprod(_nan_filled(a, "nancumprod", 1.0), axis, dtype)


def nanvar(a: Tensor, axis: Axis = None, dtype: dt.DType | None = None, out: Tensor | None = None,
           ddof: int | float = 0, keepdims: bool = False) -> Tensor:
    """:func:`var` of the elements that are not NaN (NaN where fewer than ddof + 1 remain)."""
    return _nan_moment(a, axis, dtype, out, ddof, keepdims, "nanvar", False)


def nanstd(a: Tensor, axis: Axis = None, dtype: dt.DType | None = None, out: Tensor | None = None,
           ddof: int | float = 0, keepdims: bool = False) -> Tensor:
    """:func:`std` of the elements that are not NaN."""
    return _nan_moment(a, axis, dtype, out, ddof, keepdims, "nanstd", True)


def _nan_moment(a, axis, dtype, out, ddof, keepdims, func: str, root: bool) -> Tensor:
    a = _st.in_dtype(tensor(a, func), dtype, func)
    if a._dtype.kind not in dt.FLOAT_KINDS:
        f = _st.std if root else _st.var
        return f(floating(a, func), axis=axis, out=out, ddof=ddof, keepdims=keepdims)
    if type(ddof) not in (int, float) or ddof < 0:
        raise ValueError(f"{func}: ddof must be a non-negative number, got {ddof!r}")
    valid = _ew.logical_not(_ew.isnan(a))
    real = dt.real_of(a._dtype)
    count = _st.sum(astype(valid, real), axis=axis, keepdims=True)
    mean = _ew.divide(_st.sum(where(valid, a, 0), axis=axis, keepdims=True), count)
    d = where(valid, _ew.subtract(a, mean), 0)
    sq = _ew.multiply(_ew.real(d), _ew.real(d)) if a._dtype.kind == "f" else \
        _ew.real(_ew.multiply(d, _ew.conj(d)))
    dof = _ew.subtract(count, float(ddof))
    v = _ew.divide(_st.sum(sq, axis=axis, keepdims=True), where(_ew.greater(dof, 0), dof, math.nan))
    if root:
        v = _ew.sqrt(v)
    if not keepdims:
        v = _mn.squeeze(v, axis=check_axes(axis, a.ndim, func)) if a.ndim else v
    return v if out is None else _copy_out(v, out)


def average(a: Tensor, axis: Axis = None, weights: Tensor | None = None, returned: bool = False, *,
            keepdims: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """The mean over ``axis``, weighted by ``weights`` (shaped like ``a``, or 1-D along a single axis);
    with ``returned``, also the sum of the weights. ZeroDivisionError when the weights sum to zero cannot
    be raised without reading them: such a slice gives NaN or inf."""
    check_tensor(a, "average", "a")
    a = floating(a, "average")
    if weights is None:
        avg = _st.mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        n = math.prod(a._shape[i] for i in check_axes(axis, a.ndim, "average"))
        return avg, _ew.add(_ew.multiply(_ew.real(avg) if avg._dtype.kind == "c" else avg, 0), float(n))
    check_tensor(weights, "average", "weights")
    if weights._shape != a._shape:
        if axis is None:
            raise TypeError(f"average: axis must be given when weights (shape {weights._shape}) and a "
                            f"(shape {a._shape}) differ in shape")
        if weights.ndim != 1 or not isinstance(axis, int):
            raise TypeError(f"average: 1-D weights need a single axis, got shape {weights._shape}, axis {axis!r}")
        ax = axis % a.ndim
        if weights._shape[0] != a._shape[ax]:
            raise ValueError(f"average: weights of length {weights._shape[0]} do not match axis {axis} of a "
                             f"(length {a._shape[ax]})")
        weights = _mn.reshape(weights, tuple(-1 if i == ax else 1 for i in range(a.ndim)))
    w = floating(weights, "average")
    wsum = _st.sum(_mn.broadcast_to(w, a._shape), axis=axis, keepdims=keepdims)
    avg = _ew.divide(_st.sum(_ew.multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    return (avg, _ew.add(wsum, _ew.multiply(avg, 0))) if returned else avg


def cov(m: Tensor, y: Tensor | None = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Tensor | None = None, aweights: Tensor | None = None, *, dtype: dt.DType | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``m`` (columns with ``rowvar=False``), and of
    ``y``'s too when given; NumPy's ``bias``/``ddof`` and frequency/analytic weights."""
    check_tensor(m, "cov", "m")
    if m.ndim > 2:
        raise ValueError(f"cov: m must be 1-D or 2-D, got shape {m._shape}")
    x = _mn.reshape(m, (1, -1)) if m.ndim < 2 else m
    if not rowvar and x._shape[0] != 1:
        x = _mn.matrix_transpose(x)
    if y is not None:
        check_tensor(y, "cov", "y")
        yy = _mn.reshape(y, (1, -1)) if y.ndim < 2 else y
        if not rowvar and yy._shape[0] != 1:
            yy = _mn.matrix_transpose(yy)
        x = _mn.concat([_result(x, yy), _result(yy, x)], axis=0)
    x = _result(x, x) if dtype is None else astype(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x._shape[1]
    w = None
    if fweights is not None:
        if _vector(fweights, n, "fweights")._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"cov: fweights must be integer, got {fweights._dtype.name}")
        w = floating(fweights, "cov")
    if aweights is not None:
        aw = floating(_vector(aweights, n, "aweights"), "cov")
        w = aw if w is None else _ew.multiply(w, aw)
    if w is None:
        avg = _st.mean(x, axis=1, keepdims=True)
        fact = float(n - ddof)
        xc = _ew.subtract(x, avg)
        c = matmul(xc, _ew.conj(_mn.matrix_transpose(xc)) if xc._dtype.kind == "c"
                   else _mn.matrix_transpose(xc))
        c = _ew.divide(c, fact if fact > 0 else 0.0)
    else:
        w = astype(w, dt.real_of(x._dtype))
        w_sum = _st.sum(w)
        avg = _ew.divide(_st.sum(_ew.multiply(x, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = _ew.subtract(w_sum, float(ddof))
        else:
            fact = _ew.subtract(w_sum, _ew.divide(_ew.multiply(_st.sum(_ew.multiply(w, aw)), float(ddof)), w_sum))
        fact = where(_ew.less_equal(fact, 0), 0.0, fact)
        xc = _ew.subtract(x, avg)
        xt = _mn.matrix_transpose(_ew.multiply(xc, w))
        c = _ew.divide(matmul(xc, _ew.conj(xt) if xc._dtype.kind == "c" else xt), fact)
    return c[0, 0] if c._shape == (1, 1) and m.ndim < 2 and y is None else c


def _result(a: Tensor, b: Tensor) -> Tensor:
    """``a`` in the floating dtype NumPy's cov computes ``a`` and ``b`` in (at least the default float)."""
    d = dt.promote(a._dtype, b._dtype, "cov")
    if d.kind not in dt.FLOAT_KINDS:
        return floating(a, "cov")
    return astype(a, d)


def _vector(w, n: int, name: str) -> Tensor:
    check_tensor(w, "cov", name)
    if w._shape != (n,):
        raise ValueError(f"cov: {name} must be 1-D of length {n}, got shape {w._shape}")
    return w


def corrcoef(x: Tensor, y: Tensor | None = None, rowvar: bool = True, *, dtype: dt.DType | None = None) -> Tensor:
    """Pearson correlation coefficients: :func:`cov` normalised by the standard deviations, real parts
    clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return _ew.divide(c, c)
    from ._numpy_compat import diag
    d = diag(c)
    s = _ew.sqrt(_ew.real(d) if d._dtype.kind == "c" else d)
    c = _ew.divide(_ew.divide(c, _mn.reshape(s, (-1, 1))), _mn.reshape(s, (1, -1)))
    if c._dtype.kind == "c":
        # NumPy clips the real and imaginary parts each to [-1, 1]
        re, im = (astype(_ew.clip(part, -1.0, 1.0), c._dtype) for part in (_ew.real(c), _ew.imag(c)))
        return _ew.add(re, _ew.multiply(im, 1j))
    return _ew.clip(c, -1.0, 1.0)
