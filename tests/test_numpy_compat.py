"""NumPy habits (numr_array/_numpy_compat.py): NumPy's names and argument forms, differential against
NumPy 2 on the device under test; the standard's own calls unchanged; errors; docs/numpy-differences.md
listing every name."""

import pathlib
import re
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numr_array as xp
from numr_array import _numpy_compat as compat
from numr_array import _statistical

from .helpers import device_data, missing_dtype, needs_libm
from .strategies import DEVICE, INTEGER, REAL_FLOAT, np_arrays, shapes, supported, to_np, views

#: why the device has no float64 (the adapter feature it lacks), or None
NO_FLOAT64 = missing_dtype(xp.float64)


def _t(a) -> xp.Tensor:
    """``a`` on the device, in the dtype the device holds its NumPy dtype in (float64 as float32 on an
    adapter without shader-f64)."""
    return xp.asarray(device_data(np.asarray(a)), device=DEVICE)


def _floor(dtype) -> float:
    """The absolute tolerance of a result of ``dtype`` near 0: about 8 ulps of 1."""
    return 1e-6 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _same(got, ref, exact=False, atol=None):
    ref = np.asarray(ref)
    g = to_np(got)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    if exact or ref.dtype.kind in "biu":
        np.testing.assert_array_equal(g, ref)
    else:
        single = g.dtype in (np.float32, np.complex64)
        np.testing.assert_allclose(g, ref, rtol=1e-5 if single else 1e-12,
                                   atol=_floor(g.dtype) if atol is None else atol, equal_nan=True)


def _sum_error(a: np.ndarray, axis) -> float:
    """A bound on the rounding error of a sum of ``a`` over ``axis`` in its dtype, in any order: (K - 1)
    half ulps of the sum of the K magnitudes (a sum that cancels keeps the error of its terms, 1e-4 for
    float32 terms of 1e3)."""
    count = a.size if axis is None else a.shape[axis]
    magnitude = np.sum(np.abs(a.astype(np.float64)), axis)
    return count / 2 * float(np.finfo(a.dtype).eps) * float(np.max(magnitude, initial=0))


def _mean_error(a: np.ndarray, axis) -> float:
    """A bound on the rounding error of a mean of ``a`` over ``axis`` in its dtype: the sum's over K, plus
    the division's (WGSL allows 2.5 ulp) in ulps of max|a|."""
    count = a.size if axis is None else a.shape[axis]
    return _sum_error(a, axis) / count + 3 * float(np.finfo(a.dtype).eps) * float(np.max(np.abs(a), initial=0))


@st.composite
def float_arrays(draw, min_dims=0, max_dims=3, min_side=0, max_side=4, bound=1e3):
    dtype = draw(st.sampled_from(supported(REAL_FLOAT)))
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    # no subnormals: whether a device flushes them to zero is not what these tests are about
    a = draw(np_arrays(dtype, shape, st.floats(-bound, bound, width=dtype.itemsize * 8, allow_subnormal=False)))
    return (draw(views(a)) if a.size else xp.asarray(a, device=DEVICE)), a


# --- NumPy's names for standard functions -----------------------------------------------------------------
RENAMED = {"arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
           "arctan2": "atan2", "arctanh": "atanh", "absolute": "abs", "power": "pow", "invert": "bitwise_invert",
           "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift", "mod": "remainder",
           "conjugate": "conj"}


@pytest.mark.parametrize("numpy_name, standard_name", list(RENAMED.items()))
def test_renamed_are_the_standard_functions(numpy_name, standard_name):
    """A pure rename costs nothing: it is the standard function itself, with the standard's semantics."""
    assert getattr(xp, numpy_name) is getattr(xp, standard_name)
    if standard_name != "pow":
        needs_libm(standard_name)
    a = np.asarray([0.1, 0.5, 0.9]) if numpy_name.startswith("arc") else np.asarray([1, 2, 5])
    args = (a, a[::-1]) if numpy_name in ("arctan2", "power", "mod", "left_shift", "right_shift") else (a,)
    _same(getattr(xp, numpy_name)(*map(_t, args)), getattr(np, numpy_name)(*args))


@given(data=st.data())
def test_transpose_swapaxes_ravel(data):
    x, a = data.draw(float_arrays())
    _same(xp.transpose(x), np.transpose(a), exact=True)
    _same(xp.ravel(x), np.ravel(a), exact=True)
    if a.ndim:
        perm = data.draw(st.permutations(range(a.ndim)))
        _same(xp.transpose(x, perm), np.transpose(a, perm), exact=True)
        i, j = data.draw(st.integers(-a.ndim, a.ndim - 1)), data.draw(st.integers(-a.ndim, a.ndim - 1))
        _same(xp.swapaxes(x, i, j), np.swapaxes(a, i, j), exact=True)


def test_ravel_is_a_view_where_possible():
    x = _t(np.arange(6.0).reshape(2, 3))
    r = xp.ravel(x)
    x[0, 1] = 9.0
    assert float(r[1]) == 9.0


@given(data=st.data())
def test_concatenate_and_stack_take_axis_positionally(data):
    x, a = data.draw(float_arrays(min_dims=1))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    _same(xp.concatenate([x, x], axis), np.concatenate([a, a], axis), exact=True)
    _same(xp.concatenate((x, x), None), np.concatenate((a, a), None), exact=True)
    _same(xp.stack([x, x], axis), np.stack([a, a], axis), exact=True)


# --- reductions with NumPy's argument forms ----------------------------------------------------------------
def _prod_pair(got, a: np.ndarray, axis, keep: bool) -> tuple[np.ndarray, np.ndarray]:
    """prod's result and NumPy's reference, in a's dtype from a float64 product: a float32 product
    accumulates in float64 where the device has it, so 0 * 185**35 is 0, where NumPy's float32 product
    overflows to inf first and gives NaN. Without float64 the partial products that overflow or underflow
    float32 depend on the order of the multiplications: only the results where none can are compared."""
    g = to_np(got)
    with np.errstate(over="ignore"):
        ref = np.asarray(np.prod(a, axis, dtype=np.float64, keepdims=keep).astype(a.dtype))
    if NO_FLOAT64 is None or a.dtype != np.float32:
        return g, ref
    m = np.abs(a.astype(np.float64))
    big = np.prod(np.maximum(m, 1), axis, keepdims=keep)
    small = np.prod(np.where(m == 0, 1, np.minimum(m, 1)), axis, keepdims=keep)
    fine = (big <= np.finfo(np.float32).max) & (small >= np.finfo(np.float32).smallest_normal)
    return g[fine], ref[fine]


@given(data=st.data())
def test_reductions_take_numpy_arguments(data):
    x, a = data.draw(float_arrays(min_dims=1, min_side=2))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keep = data.draw(st.booleans())
    # (the absolute tolerances: the rounding error bounds of ours and NumPy's, at least _floor)
    _same(xp.sum(x, axis, None, None, keep), np.sum(a, axis, None, None, keep),
          atol=max(_floor(a.dtype), 2 * _sum_error(a, axis)))
    _same(*_prod_pair(xp.prod(x, axis, keepdims=keep), a, axis, keep))
    for ours, theirs in ((xp.max, np.max), (xp.min, np.min), (xp.amax, np.amax), (xp.amin, np.amin)):
        _same(ours(x, axis, None, keep), theirs(a, axis, None, keep), exact=True)
    _same(xp.mean(x, axis), np.mean(a, axis), atol=max(_floor(a.dtype), 2 * _mean_error(a, axis)))
    ddof = data.draw(st.sampled_from([0, 1]))
    # a mean off by d (ours and NumPy's each) adds up to 2 d**2 to the variance (sum (x - m - d)**2 / (K - ddof)):
    # equal float32 values of about 11 have a std of 2 ulp of 11 = 1.9e-6, and NumPy's often 1 ulp, not 0
    d = 2 * _mean_error(a, axis)
    _same(xp.std(x, axis, None, None, ddof, keep), np.std(a, axis, None, None, ddof, keep),
          atol=max(_floor(a.dtype), 2 * d))
    _same(xp.var(x, axis, ddof=ddof), np.var(a, axis, ddof=ddof), atol=max(_floor(a.dtype), 2 * d * d))
    _same(xp.var(x, axis, correction=ddof), np.var(a, axis, correction=ddof), atol=max(_floor(a.dtype), 2 * d * d))
    if axis is not None:
        _same(xp.argmax(x, axis), np.argmax(a, axis), exact=True)
        _same(xp.argmin(x, axis, keepdims=keep), np.argmin(a, axis, keepdims=keep), exact=True)
    _same(xp.cumsum(x), np.cumsum(a), atol=max(_floor(a.dtype), 2 * _sum_error(a, None)))
    _same(xp.cumprod(x / 1000.0, axis if axis is not None else None), np.cumprod(a / 1000.0, axis))


@given(data=st.data())
def test_standard_calls_are_unchanged(data):
    """Calls written against the standard give exactly what the standard functions give."""
    x, _ = data.draw(float_arrays(min_dims=1, min_side=1))
    for name in ("sum", "prod", "max", "min", "mean"):
        _same(getattr(xp, name)(x, axis=0, keepdims=True),
              to_np(getattr(_statistical, name)(x, axis=0, keepdims=True)), exact=True)
    for name in ("std", "var"):
        _same(getattr(xp, name)(x, axis=-1, correction=0.5),
              to_np(getattr(_statistical, name)(x, axis=-1, correction=0.5)), exact=True)


@pytest.mark.skipif(NO_FLOAT64 is not None, reason=str(NO_FLOAT64))
def test_mean_std_var_dtype():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = _t(a)
    _same(xp.mean(x, 0, xp.float64), np.mean(a, 0, np.float64))
    _same(xp.std(x, None, xp.float64, ddof=1), np.std(a, None, np.float64, ddof=1))
    _same(xp.var(_t(a.astype(np.float32)), 1, xp.float64), np.var(a.astype(np.float32), 1, np.float64))
    assert xp.mean(x, dtype=xp.float32).dtype == xp.float32
    with pytest.raises(TypeError):  # the standard's mean takes floating-point arrays only
        xp.mean(x)
    _same(xp.mean(x, dtype="float64"), np.mean(a, dtype="float64"))


def test_ddof_and_correction_together_is_an_error():
    x = _t([1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="ddof"):
        xp.std(x, ddof=1, correction=1)
    with pytest.raises(ValueError, match="ddof"):
        xp.var(x, ddof=0, correction=0)


def test_reduction_out():
    x = _t(np.arange(6.0).reshape(2, 3))
    out = xp.empty((3,), dtype=x.dtype, device=DEVICE)
    assert xp.sum(x, 0, None, out) is out
    _same(out, [3.0, 5.0, 7.0])
    assert xp.mean(x, 0, out=out) is out
    _same(out, [1.5, 2.5, 3.5])


# --- element-wise: round(decimals), divide and logical_* on the dtypes the standard leaves open ---------------
@given(data=st.data())
def test_round_decimals_matches_numpy(data):
    x, a = data.draw(float_arrays(bound=1e6))
    decimals = data.draw(st.integers(-3, 5))
    _same(xp.round(x, decimals), np.round(a, decimals), exact=True)
    _same(xp.around(x, decimals), np.around(a, decimals), exact=True)


def test_round_decimals_cases_to_the_last_bit():
    # scale, round half to even, divide back (NumPy's steps): the last bit is the division's, which WGSL
    # lets a driver give to 2.5 ulp; Mesa's OpenGL adapter (no shader-f64) gives complex64
    # round(1+2.55j, 1) 2.6000001j where NumPy's correctly rounded division gives 2.5999999j
    if NO_FLOAT64 is not None:
        pytest.skip(f"{NO_FLOAT64} (float32 division on such an adapter need not be correctly rounded)")
    # (the references round in the dtype the device holds the data in)
    a = device_data(np.array([2.675, -1.005, 12345.0]))
    _same(xp.round(_t(a), 2), np.round(a, 2), exact=True)
    z = device_data(np.array([1 + 2.55j]))
    _same(xp.round(_t(z), 1), np.round(z, 1), exact=True)


def test_round_decimals_cases():
    _same(xp.round(_t([15, 25, -35]), 2), [15, 25, -35])
    out = xp.empty((2,), device=DEVICE)
    assert xp.round(_t([0.125, 0.375]), 2, out=out) is out
    _same(out, np.round(device_data(np.array([0.125, 0.375])), 2), exact=True)
    with pytest.raises(TypeError):
        xp.round(_t([15, 25]), -1)
    with pytest.raises(TypeError):
        xp.round(_t([True]), 1)


@given(data=st.data())
def test_divide_integer_and_bool_arrays_like_numpy(data):
    dtype = data.draw(st.sampled_from(supported(INTEGER + [xp.bool])))
    shape = data.draw(shapes(max_dims=2))
    a = data.draw(np_arrays(dtype, shape))
    b = data.draw(np_arrays(dtype, shape))
    x, y = data.draw(views(a)), data.draw(views(b))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got, ref = x / y, np.true_divide(a, b)
        got_fn = xp.divide(x, y)
        got_scalar = xp.divide(x, 2) if dtype.kind != "b" else xp.divide(x, True)
        ref_scalar = np.true_divide(a, 2 if dtype.kind != "b" else True)
    default_float = xp.__array_namespace_info__().default_dtypes(device=DEVICE)["real floating"]
    assert got.dtype == got_fn.dtype == default_float
    _same(got, ref.astype(default_float))
    _same(got_fn, ref.astype(default_float))
    _same(got_scalar, ref_scalar.astype(default_float))


def test_divide_keeps_the_standard_for_floats():
    x = _t(np.asarray([1.0, -2.0], np.float32))
    assert (x / 2).dtype == xp.float32
    assert (_t([1, 2]) / 2.5).dtype == xp.__array_namespace_info__().default_dtypes(device=DEVICE)["real floating"]
    assert xp.true_divide is xp.divide
    i = _t([1, 2, 3])
    with pytest.raises(TypeError):
        i /= 2  # an integer out cannot hold the quotient; NumPy raises too
    _same(i, [1, 2, 3])


@pytest.mark.skipif(NO_FLOAT64 is not None, reason=f"NumPy's promotions here need float64 ({NO_FLOAT64})")
@pytest.mark.parametrize("ints", ["bool", "int8", "uint16", "int32", "uint64"])
@pytest.mark.parametrize("floats", ["float32", "float64", "complex64", "complex128"])
def test_divide_mixed_integer_and_float_arrays_like_numpy(ints, floats):
    a, b = np.asarray([1, 0, 3]).astype(ints), np.asarray([0.5, 2.0, -4.0]).astype(floats)
    for x, y in ((a, b), (b, a)):
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref, got = x / y, _t(x) / _t(y)
        assert got.dtype.name == ref.dtype.name
        _same(got, ref)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_functions_take_numeric_arrays(name):
    a, b = np.asarray([0.0, 1.5, -0.0, np.nan]), np.asarray([3, 0, 0, 2])
    _same(getattr(xp, name)(_t(a), _t(b)), getattr(np, name)(a, b), exact=True)
    _same(getattr(xp, name)(_t(a > 0), True), getattr(np, name)(a > 0, True), exact=True)
    _same(xp.logical_not(_t(b)), np.logical_not(b), exact=True)


# --- where, diff, linspace -----------------------------------------------------------------------------------
def test_where_with_only_a_condition_is_nonzero():
    a = np.asarray([[0, 3], [4, 0]])
    got = xp.where(_t(a) > 0)
    assert isinstance(got, tuple) and len(got) == 2
    for g, r in zip(got, np.where(a > 0)):
        _same(g, r, exact=True)
    _same(xp.where(_t(a) > 0, _t(a), -1), np.where(a > 0, a, -1), exact=True)
    with pytest.raises(TypeError, match="both"):
        xp.where(_t(a) > 0, _t(a))


@given(data=st.data())
def test_diff_takes_n_then_axis_positionally(data):
    x, a = data.draw(float_arrays(min_dims=1, min_side=3))
    n = data.draw(st.integers(0, 2))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    _same(xp.diff(x, n, axis), np.diff(a, n, axis), exact=True)
    _same(xp.diff(x, n=n, axis=axis), np.diff(a, n=n, axis=axis), exact=True)


def test_linspace_numpy_forms():
    _same(xp.linspace(0, 1, device=DEVICE), np.linspace(0, 1))
    _same(xp.linspace(0.0, 1.0, 5, False, device=DEVICE), np.linspace(0.0, 1.0, 5, False))
    lo, hi = _t(np.asarray(-2.0)), _t(np.asarray(3.0))
    got = xp.linspace(lo, hi, 11)
    assert got.device == lo.device
    _same(got, np.linspace(-2.0, 3.0, 11))
    with pytest.raises(TypeError, match="0-D"):
        xp.linspace(_t([0.0, 1.0]), 1.0, 3)


# --- NumPy functions the standard lacks -----------------------------------------------------------------------
def test_array_copies_by_default():
    x = _t([1.0, 2.0])
    y = xp.array(x)
    x[0] = 5.0
    assert float(y[0]) == 1.0
    assert xp.array(x, copy=None) is x
    _same(xp.array([[1, 2], [3, 4]], xp.int32, device=DEVICE), np.array([[1, 2], [3, 4]], np.int32))
    z = xp.copy(x)
    x[1] = 7.0
    assert float(z[1]) == 2.0
    assert isinstance(x, xp.ndarray)


@given(data=st.data())
def test_atleast_and_stacking(data):
    x, a = data.draw(float_arrays(max_dims=3, min_side=1))
    for ours, theirs in ((xp.atleast_1d, np.atleast_1d), (xp.atleast_2d, np.atleast_2d),
                         (xp.atleast_3d, np.atleast_3d)):
        _same(ours(x), theirs(a), exact=True)
        assert [t.shape for t in ours(x, x)] == [r.shape for r in theirs(a, a)]
    _same(xp.hstack([x, x]), np.hstack([a, a]), exact=True)
    if a.ndim <= 2:
        _same(xp.vstack([x, x]), np.vstack([a, a]), exact=True)


@given(data=st.data())
def test_split(data):
    x, a = data.draw(float_arrays(min_dims=1, min_side=0, max_side=6))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    sections = data.draw(st.sampled_from([d for d in range(1, 7) if n % d == 0] or [1]))
    for got, ref in zip(xp.split(x, sections, axis), np.split(a, sections, axis), strict=True):
        _same(got, ref, exact=True)
    cuts = sorted(data.draw(st.lists(st.integers(0, n + 2), max_size=3)))
    for got, ref in zip(xp.split(x, cuts, axis), np.split(a, cuts, axis), strict=True):
        _same(got, ref, exact=True)


def test_split_uneven_sections_is_an_error():
    with pytest.raises(ValueError, match="equally"):
        xp.split(_t(np.arange(5)), 2)


@given(data=st.data())
def test_dot_inner_outer(data):
    dtype = data.draw(st.sampled_from(supported([xp.int32, xp.int64] + REAL_FLOAT)))
    nd1, nd2 = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    k = data.draw(st.integers(1, 3))
    side = st.integers(1, 3)
    s1 = tuple(data.draw(side) for _ in range(max(nd1 - 1, 0))) + ((k,) if nd1 else ())
    s2 = (tuple(data.draw(side) for _ in range(max(nd2 - 2, 0))) + ((k,) if nd2 else ())
          + ((data.draw(side),) if nd2 >= 2 else ()))
    elements = (st.integers(-9, 9) if dtype.kind != "f"
                else st.floats(-9, 9, width=dtype.itemsize * 8, allow_subnormal=False))
    a, b = data.draw(np_arrays(dtype, s1, elements)), data.draw(np_arrays(dtype, s2, elements))
    x, y = data.draw(views(a)) if a.ndim else _t(a), data.draw(views(b)) if b.ndim else _t(b)
    _same(xp.dot(x, y), np.dot(a, b))
    _same(xp.outer(x, y), np.outer(a, b))
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] == b.shape[-1]:
        _same(xp.inner(x, y), np.inner(a, b))


def test_dot_does_not_conjugate():
    a = np.asarray([1 + 2j, 3 - 1j])
    _same(xp.dot(_t(a), _t(a)), np.dot(a, a))
    _same(xp.inner(_t(a), _t(a)), np.inner(a, a))


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
def test_diag_identity_trace(k):
    v = np.asarray([1.5, -2.0, 3.0])
    _same(xp.diag(_t(v), k), np.diag(v, k), exact=True)
    m = np.arange(12.0).reshape(3, 4)
    _same(xp.diag(_t(m), k), np.diag(m, k), exact=True)
    _same(xp.diag(_t(v > 0), k), np.diag(v > 0, k), exact=True)
    t = np.arange(24).reshape(2, 3, 4)
    _same(xp.trace(_t(t), k), np.trace(t, k))
    _same(xp.trace(_t(t), k, 2, 0), np.trace(t, k, 2, 0))
    _same(xp.identity(3, xp.int32, device=DEVICE), np.identity(3, np.int32))
    with pytest.raises(ValueError):
        xp.diag(_t(t))
    with pytest.raises(ValueError):
        xp.trace(_t(t), 0, 1, -2)


@given(data=st.data())
def test_isclose_allclose_array_equal(data):
    x, a = data.draw(float_arrays(max_dims=2))
    noise = data.draw(np_arrays(xp.float64, a.shape, st.sampled_from([0.0, 1e-9, 1e-3, np.inf, np.nan])))
    b = (a + noise).astype(a.dtype)
    y = _t(b)
    for equal_nan in (False, True):
        _same(xp.isclose(x, y, equal_nan=equal_nan), np.isclose(a, b, equal_nan=equal_nan), exact=True)
        assert xp.allclose(x, y, 1e-6, 1e-9, equal_nan) == np.allclose(a, b, 1e-6, 1e-9, equal_nan)
        assert xp.array_equal(x, y, equal_nan) == np.array_equal(a, b, equal_nan)
    _same(xp.isclose(x, 0.0), np.isclose(a, 0.0), exact=True)
    assert not xp.array_equal(x, xp.expand_dims(x, axis=0))


def test_isclose_special_values_and_integers():
    a = np.asarray([np.inf, -np.inf, np.nan, 1.0, 0.0])
    b = np.asarray([np.inf, np.inf, np.nan, 1.0 + 1e-9, 1e-9])
    _same(xp.isclose(_t(a), _t(b)), np.isclose(a, b), exact=True)
    _same(xp.isclose(_t(a), _t(b), equal_nan=True), np.isclose(a, b, equal_nan=True), exact=True)
    _same(xp.isclose(_t([1, 2, 3]), 2), np.isclose([1, 2, 3], 2), exact=True)


def test_degrees_radians_nan_functions():
    a = np.asarray([[0.0, 90.0, np.nan], [180.0, -45.0, 30.0]])
    for ours, theirs in ((xp.deg2rad, np.deg2rad), (xp.radians, np.radians), (xp.rad2deg, np.rad2deg),
                         (xp.degrees, np.degrees)):
        _same(ours(_t(a)), theirs(a))
    _same(xp.nansum(_t(a)), np.nansum(a))
    _same(xp.nansum(_t(a), 1, keepdims=True), np.nansum(a, 1, keepdims=True))
    _same(xp.nanmean(_t(a), 0), np.nanmean(a, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        all_nan = np.full((2, 2), np.nan)
        _same(xp.nanmean(_t(all_nan), 1), np.nanmean(all_nan, 1))
    _same(xp.nansum(_t(np.asarray([1, 2]))), 3)


def test_shape_queries():
    x = _t(np.zeros((2, 3, 4)))
    assert (xp.ndim(x), xp.shape(x), xp.size(x), xp.size(x, -1)) == (3, (2, 3, 4), 24, 4)


@pytest.mark.parametrize("call", [
    lambda: xp.ravel([1, 2]), lambda: xp.transpose(np.zeros(2)), lambda: xp.swapaxes([1], 0, 0),
    lambda: xp.diag([1, 2]), lambda: xp.dot([1], _t([1])), lambda: xp.split([1, 2], 2),
    lambda: xp.cumsum([1]), lambda: xp.atleast_1d([1]), lambda: xp.hstack(_t([1.0])), lambda: xp.copy([1.0]),
    lambda: xp.isclose(1.0, 2.0), lambda: xp.ndim(3), lambda: xp.nansum([1.0]), lambda: xp.trace([[1]]),
])
def test_non_arrays_are_type_errors(call):
    """Host data becomes an array only through array()/asarray(), so device transfers stay explicit."""
    with pytest.raises(TypeError):
        call()


def test_axis_errors():
    x = _t(np.zeros((2, 3)))
    with pytest.raises(IndexError):
        xp.swapaxes(x, 0, 2)
    with pytest.raises(IndexError):
        xp.sum(x, 2)
    with pytest.raises(IndexError):
        xp.split(x, 1, 3)


def test_wrappers_are_capturable():
    """The wrappers add no host reads of their own: a block of them captures and replays."""
    if not hasattr(xp, "capture"):
        pytest.skip("no capture")
    x = _t(np.arange(6, dtype=np.int64).reshape(2, 3))
    out = xp.empty((3,), device=DEVICE)
    with xp.capture(device=x.device) as g:
        y = xp.concatenate([x, x], 0)
        s = xp.sum(y, 0)
        xp.divide(s, 4, out=out)
    x[...] = _t(np.ones((2, 3), dtype=np.int64))
    g.replay()
    _same(out, [1.0, 1.0, 1.0])
    with pytest.raises(xp.CaptureError), xp.capture(device=x.device):
        xp.allclose(x, x)


def test_every_name_is_exported_and_documented():
    doc = (pathlib.Path(__file__).parents[1] / "docs" / "numpy-differences.md").read_text()
    for name in compat.__all__:
        assert getattr(xp, name) is getattr(compat, name), f"numr_array.{name} is not the compat {name}"
        assert re.search(rf"`{name}[`(]", doc), f"docs/numpy-differences.md does not mention {name}"
