"""NumPy's statistics (numr_array/_np_statistics.py) against NumPy on the device under test: order
statistics by sorting on the device, the NaN-ignoring reductions, average, cov and corrcoef."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numr_array as xp

from .helpers import needs_dtype
from .np_helpers import RNG, float_data, host, on_device, same

FLOATS = [np.float32, np.float64]


def _needs(dtype):
    needs_dtype(xp._dtypes.from_numpy(np.dtype(dtype)))


def _ref(f, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kw)


AXES = [None, 0, 1, -1, (0, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_and_nanmedian(dtype, axis, keepdims):
    _needs(dtype)
    a = float_data((3, 4, 5), dtype, nans=True)
    a[1, :, :] = np.nan  # all-NaN slices along some axes
    for name in ("median", "nanmedian"):
        same(getattr(xp, name)(on_device(a), axis=axis, keepdims=keepdims),
             _ref(getattr(np, name), host(a), axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("name, scale", [("quantile", 1), ("percentile", 100), ("nanquantile", 1),
                                         ("nanpercentile", 100)])
def test_quantiles(name, scale, method):
    a = float_data((4, 7), nans=name.startswith("nan"))
    q = [0.0, 0.1, 0.5, 0.77, 1.0]
    ref = _ref(getattr(np, name), host(a), [v * scale for v in q], axis=1, method=method)
    same(getattr(xp, name)(on_device(a), [v * scale for v in q], axis=1, method=method), ref)
    # q as an array on the device, and as a number
    same(getattr(xp, name)(on_device(a), on_device(np.array(q) * scale), axis=1, method=method), ref)
    same(getattr(xp, name)(on_device(a), 0.3 * scale, method=method),
         _ref(getattr(np, name), host(a), 0.3 * scale, method=method))
    # q as NumPy numbers (xarray passes an array): host numbers, as a list is
    same(getattr(xp, name)(on_device(a), np.array(q) * scale, axis=1, method=method), ref)
    same(getattr(xp, name)(on_device(a), np.float32(0.5) * scale, method=method),
         _ref(getattr(np, name), host(a), 0.5 * scale, method=method))
    with pytest.raises(ValueError, match=f"{name}: q must be 0-D or 1-D"):
        getattr(xp, name)(on_device(a), np.full((2, 2), 0.5))


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
       st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_quantile_matches_numpy(values, q):
    a = host(np.array(values))
    # q in the dtype the device computes in (float32 without shader-f64: a q of 1e-97 is 0 there)
    same(xp.quantile(on_device(a), q), np.quantile(a, np.asarray(q, dtype=a.dtype)),
         rtol=1e-5 if a.dtype == np.float32 else 1e-12)


def test_integer_arrays_give_floats():
    a = RNG.integers(-50, 50, (5, 6))
    same(xp.median(on_device(a), axis=0), np.median(host(a), axis=0))
    same(xp.percentile(on_device(a), [25, 75], axis=1), np.percentile(host(a), [25, 75], axis=1))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_reductions(dtype, axis):
    _needs(dtype)
    a = float_data((5, 6), dtype, nans=True)
    a[2] = np.nan
    t = on_device(a)
    for name in ("nanmax", "nanmin", "nanprod", "nansum"):
        same(getattr(xp, name)(t, axis=axis), _ref(getattr(np, name), host(a), axis=axis))
    for name in ("nanvar", "nanstd"):
        for ddof in (0, 1):
            same(getattr(xp, name)(t, axis=axis, ddof=ddof), _ref(getattr(np, name), host(a), axis=axis, ddof=ddof),
                 rtol=1e-4 if dtype == np.float32 else 1e-10)
    for name in ("nancumsum", "nancumprod"):
        small = np.where(np.isnan(a), a, np.sign(a))  # products that stay finite
        same(getattr(xp, name)(on_device(small), axis=axis), getattr(np, name)(host(small), axis=axis))
    good = a[[0, 1, 3, 4]]
    for name in ("nanargmax", "nanargmin"):
        same(getattr(xp, name)(on_device(good), axis=axis), getattr(np, name)(host(good), axis=axis))


def test_nanargmax_first_of_ties_and_all_nan():
    a = np.array([np.nan, -np.inf, -np.inf])
    same(xp.nanargmax(on_device(a)), np.nanargmax(a))
    with pytest.raises(ValueError, match="nanargmin: All-NaN slice"):
        xp.nanargmin(on_device(np.array([[1.0, np.nan], [np.nan, np.nan]])), axis=1)


def test_average():
    a = float_data((4, 5))
    w = RNG.random(5)
    same(xp.average(on_device(a)), np.average(host(a)))
    same(xp.average(on_device(a), axis=1, weights=on_device(w)), np.average(host(a), axis=1, weights=host(w)))
    w2 = RNG.random((4, 5))
    avg, total = xp.average(on_device(a), axis=0, weights=on_device(w2), returned=True)
    ref_avg, ref_total = np.average(host(a), axis=0, weights=host(w2), returned=True)
    same(avg, ref_avg), same(total, ref_total)
    with pytest.raises(TypeError, match="average"):
        xp.average(on_device(a), weights=on_device(w))


@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("bias", [False, True])
def test_cov_corrcoef(rowvar, bias):
    m = float_data((3, 8))
    y = float_data((2, 8))
    if not rowvar:
        m, y = m.T.copy(), y.T.copy()
    same(xp.cov(on_device(m), rowvar=rowvar, bias=bias), np.cov(host(m), rowvar=rowvar, bias=bias))
    same(xp.cov(on_device(m), on_device(y), rowvar=rowvar), np.cov(host(m), host(y), rowvar=rowvar))
    same(xp.corrcoef(on_device(m), rowvar=rowvar), np.corrcoef(host(m), rowvar=rowvar))
    f = RNG.integers(1, 4, 8)
    aw = RNG.random(8)
    same(xp.cov(on_device(m), rowvar=rowvar, fweights=on_device(f), aweights=on_device(aw)),
         np.cov(host(m), rowvar=rowvar, fweights=host(f), aweights=host(aw)))
    v = float_data(6)
    same(xp.cov(on_device(v)), np.cov(host(v)))


@pytest.mark.parametrize("call, error, text", [
    (lambda: xp.quantile(on_device(np.ones(3)), 1.5), ValueError, "quantile: q must be in"),
    (lambda: xp.percentile(on_device(np.ones(3)), 50, method="weird"), ValueError, "percentile: method"),
    (lambda: xp.median(on_device(np.ones(0))), ValueError, "median"),
    (lambda: xp.median([1, 2]), TypeError, "median"),
    (lambda: xp.quantile(on_device(np.ones(3)), "a"), TypeError, "quantile: q"),
    (lambda: xp.cov(on_device(np.ones((2, 2, 2)))), ValueError, "cov"),
    (lambda: xp.cov(on_device(np.ones((2, 3))), fweights=on_device(np.ones(3))), TypeError,
     "cov: fweights must be integer"),
    (lambda: xp.cov(on_device(np.ones((2, 3))), aweights=on_device(np.ones(2))), ValueError,
     "cov: aweights must be 1-D"),
])
def test_errors(call, error, text):
    with pytest.raises(error, match=text):
        call()
