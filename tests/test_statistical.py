"""Statistical functions (max, min, mean, prod, sum, std, var, cumulative_sum, cumulative_prod): differential
tests against NumPy on the device under test, their special cases, ``out=`` and their errors.

The helpers at the top (element strategies, axis strategies, result comparison) are shared with the
utility, searching, sorting and set tests."""

import contextlib
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp

from .strategies import (ALL, COMPLEX, DEVICE, FLOAT, INTEGER, NUMERIC, REAL_FLOAT, REAL_NUMERIC, SIGNED,
                         np_arrays, shapes, supported, to_np, views)
from .helpers import defaults, device_data, device_dtype, needs_dtype

DEFAULTS = defaults(DEVICE)
#: the device's default dtypes (int32, float32, complex64 on an adapter without shader-int64/shader-f64)
INT, INDEX = DEFAULTS["integral"], DEFAULTS["indexing"]
FLOAT_DEFAULT, COMPLEX_DEFAULT = DEFAULTS["real floating"], DEFAULTS["complex floating"]

SPECIAL_FLOATS = [math.nan, math.inf, -math.inf, 0.0, -0.0]


def elements(dtype, bound: float = 1e3):
    """Element strategy: the whole range for bools and integers; for floating dtypes, values in
    [-bound, bound] mixed with NaN, infinities and signed zeros (bounded, so that sums cannot overflow
    and the order in which a device adds them cannot change inf or NaN into a finite value)."""
    if dtype.kind not in ("f", "c"):
        return None
    width = 32 if dtype in (xp.float32, xp.complex64) else 64
    real = st.floats(-bound, bound, width=width) | st.sampled_from(SPECIAL_FLOATS)
    if dtype.kind == "c":
        return st.builds(complex, real, real)
    return real


@st.composite
def arrays(draw, dtypes, shape=None, bound: float = 1e3, min_dims=0, max_dims=4, min_side=0, max_side=5):
    """(tensor, NumPy array of the same values): contiguous or a strided/reversed view."""
    dtype = draw(st.sampled_from(supported(dtypes)))
    if shape is None:
        shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    a = draw(np_arrays(dtype, shape, elements(dtype, bound)))
    return draw(views(a)), a


@st.composite
def axes(draw, ndim: int, tuples: bool = True):
    """An ``axis=`` argument: None, an int in [-ndim, ndim), or (with ``tuples``) a tuple of distinct axes."""
    options = [st.none()]
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
        if tuples:
            options.append(st.lists(st.integers(0, ndim - 1), unique=True).flatmap(
                lambda ax: st.tuples(*[st.sampled_from([a, a - ndim]) for a in ax])))
    elif tuples:
        options.append(st.just(()))
    return draw(st.one_of(options))


def np_axis(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


def tolerance(dtype, scale: float = 1.0) -> dict:
    """assert_allclose tolerances for a result of ``dtype`` computed from values of magnitude ``scale``:
    devices may add in another order than NumPy."""
    rtol = 1e-5 if dtype in (xp.float32, xp.complex64) else 1e-12
    return {"rtol": rtol, "atol": rtol * scale}


def assert_result(t, expected, dtype, scale: float = 1.0):
    """``t`` is a tensor of ``dtype`` with ``expected``'s shape and values (NaN where NaN, inf where inf)."""
    assert type(t) is xp.Tensor
    assert t.dtype == dtype, (t.dtype, dtype)
    expected = np.asarray(expected)
    assert t.shape == expected.shape, (t.shape, expected.shape)
    got = to_np(t)
    if dtype.kind == "c":
        # part by part: NumPy compares a complex element with an infinite part only for exact equality, so a
        # rounding difference in the finite part of (inf + 130.61108j) would fail whatever the tolerance
        want = expected.astype(dtype)
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(want), equal_nan=True, **tolerance(dtype, scale))
    elif dtype.kind == "f":
        np.testing.assert_allclose(got, expected.astype(dtype), equal_nan=True, **tolerance(dtype, scale))
    else:
        np.testing.assert_array_equal(got, expected.astype(dtype), strict=True)


def magnitude(a: np.ndarray) -> float:
    """The sum of the finite magnitudes in ``a``: the scale of rounding differences in sums over it."""
    m = np.abs(a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64))
    return float(np.sum(m[np.isfinite(m)])) + 1.0


def product_scale(a: np.ndarray) -> float:
    """The largest finite magnitude in ``a`` (at least 1) to the power of its size: the scale of a product
    over it (magnitude(a) ** size overflows a Python float for long integer arrays)."""
    if a.dtype.kind not in "fc":
        return 1.0  # integer products are compared exactly (and 2.6e11 ** 27 overflows a Python float)
    m = np.abs(a.astype(np.complex128) if a.dtype.kind == "c" else a.astype(np.float64))
    m = m[np.isfinite(m)]
    return max(1.0, float(np.max(m, initial=0.0))) ** a.size


@contextlib.contextmanager
def quiet():
    """Silence NumPy's warnings (empty slices, inf - inf) while it computes an expected value."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def arr(values, dtype=None):
    """``values`` on the device (NumPy data in the dtype the device holds it in: float64 as float32 on an
    adapter without shader-f64)."""
    if isinstance(values, np.ndarray):
        values = device_data(values)
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def accumulation_dtype(dtype):
    """The standard's default result dtype of sum and prod: the default integer dtypes (64-bit, or 32-bit on
    a device without int64)."""
    if dtype in SIGNED:
        return device_dtype(xp.int64)
    if dtype in INTEGER:
        return device_dtype(xp.uint64)
    return dtype


# --- sum, prod ---------------------------------------------------------------------------------------

def dtype_args(dtype):
    """dtype= values accepted for an input of ``dtype``: None, or a dtype of the same or a higher kind."""
    rank = {"i": 1, "u": 1, "f": 2, "c": 3}
    return st.none() | st.sampled_from(supported([d for d in NUMERIC if rank[d.kind] >= rank[dtype.kind]]))


@pytest.mark.parametrize("name", ["sum", "prod"])
@given(data=st.data())
def test_sum_prod_match_numpy(name, data):
    # prod: small values and sides, so that float products stay finite whatever the order
    bound, max_side = (1e3, 5) if name == "sum" else (2.0, 3)
    t, a = data.draw(arrays(NUMERIC, bound=bound, max_side=max_side))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    dtype = data.draw(dtype_args(t.dtype))
    kw = {} if dtype is None else {"dtype": dtype}
    got = getattr(xp, name)(t, axis=axis, keepdims=keepdims, **kw)
    rdtype = dtype or accumulation_dtype(t.dtype)
    ref_dtype = rdtype
    if name == "prod" and rdtype in (xp.float32, xp.complex64) and device_dtype(xp.float64) == xp.float64:
        # single-precision products accumulate in double where the device has it: the exact product
        # rounded once (27 int8 31s as complex64: inf + 0j, where NumPy's complex64 loop gives inf + nan j)
        ref_dtype = np.complex128 if rdtype == xp.complex64 else np.float64
    with quiet():
        expected = getattr(np, name)(a.astype(ref_dtype), axis=np_axis(axis), keepdims=keepdims).astype(rdtype)
    assert_result(got, expected, rdtype, magnitude(a) if name == "sum" else product_scale(a))


def test_prod_of_integers_overflowing_complex64_is_inf_plus_zero_j():
    """The soak's case (webgpu:0, seed 2543945722): the exact product, rounded once to complex64."""
    needs_dtype(xp.complex64, xp.float64)
    a = np.full((3, 3, 3), 31, np.int8)
    got = to_np(xp.prod(arr(a), dtype=xp.complex64))
    assert got.real == np.inf and got.imag == 0


@pytest.mark.parametrize("dtype", [xp.float32, xp.complex64])
def test_prod_of_zero_and_an_overflowing_rest_is_zero(dtype):
    """A product whose partial products overflow single precision in some orders: 0 * 139**35 is 0, as
    NumPy's left-to-right product gives, not 0 * inf = NaN (a tree reduction multiplying the 139s first
    overflowed float32 on CUDA); single precision accumulates in double precision for this."""
    needs_dtype(xp.float64 if dtype == xp.float32 else xp.complex128)
    a = np.full((3, 3, 4), 139, dtype)
    a[0, 0, 0] = 0
    x = xp.asarray(a, device=DEVICE)
    np.testing.assert_array_equal(to_np(xp.prod(x)), np.prod(a))


@pytest.mark.parametrize("shape, at, axis", [((2,), [(0,), (1,)], None), ((3,), [(1,)], None),
                                             ((2, 3), [(0, 1), (1, 2)], 0), ((2, 3), [(1, 0)], 1),
                                             ((5000,), [(4999,)], None), ((5000,), [(0,)], None)])
@pytest.mark.parametrize("dtype", [xp.float32, xp.complex64, xp.complex128])
def test_complex_prod_with_an_infinity_in_numpys_order(shape, at, axis, dtype):
    """The soak's case (cuda:0, seed 3598507097): a complex product with an infinite factor depends on the order of
    the multiplications (NumPy, folding from 1 in C order: prod([1, inf]) is inf + nan j, prod([inf, 1]) nan +
    nan j); CuPy's tree gave nan + nan j for [1, inf]. Real inputs taken as complex (dtype=), and complex ones."""
    cdtype = xp.complex128 if dtype == xp.complex128 else xp.complex64
    needs_dtype(dtype, cdtype)
    a = np.ones(shape, np.dtype(dtype.name))
    for i in at:
        a[i] = np.inf
    kw = {"dtype": cdtype} if dtype == xp.float32 else {}
    got = to_np(xp.prod(xp.asarray(a, device=DEVICE), axis=axis, **kw))
    with quiet():
        want = np.prod(a.astype(np.complex128), axis=axis)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(want).astype(part(got).dtype))


@pytest.mark.parametrize("n", [2, 5000])
def test_complex_prod_of_i_and_infinite_i_is_minus_inf_plus_nan_j(n):
    """Session 8's cuda:0 soak (seeds 710957108, 3297634701): prod([1j, inf j]) had a NaN real part where
    NumPy's fold gives -inf + nan j ((0 + 1j)(0 + inf j), then nothing more); the same after 4998 ones."""
    needs_dtype(xp.complex64)
    a = np.ones(n, np.complex64)
    a[-2:] = [1j, complex(0, np.inf)]
    got = to_np(xp.prod(xp.asarray(a, device=DEVICE)))
    assert got.real == -np.inf and np.isnan(got.imag)


@pytest.mark.parametrize("shape, at, axis", [((2,), [(0,)], 0), ((4,), [(1,)], 0), ((5000,), [(3,)], 0),
                                             ((5000,), [(4999,)], 0), ((3, 3000), [(0, 5), (2, 2999)], 1),
                                             ((3000, 3), [(7, 1)], 0)])
@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128])
def test_complex_cumulative_prod_with_an_infinity_in_numpys_order(shape, at, axis, dtype):
    """Running complex products with an infinite factor, as NumPy's (each the one before times the next): CuPy's
    scan gave NaN where NumPy has inf + nan j on lines of thousands (cuda:0)."""
    needs_dtype(dtype)
    a = np.ones(shape, np.dtype(dtype.name))
    for i in at:
        a[i] = np.inf
    got = to_np(xp.cumulative_prod(xp.asarray(a, device=DEVICE), axis=axis))
    with quiet():
        want = np.cumprod(a, axis=axis)
    for part in (np.real, np.imag):
        np.testing.assert_array_equal(part(got), part(want))


@pytest.mark.parametrize("special", [complex(np.inf, 0), complex(0, np.inf), complex(np.inf, 1)])
def test_complex_cumulative_prod_of_unit_values_and_an_infinity(special):
    """Running products of unit complex values with an infinity at 2255 of 2913: after it, where the parts are
    infinite or NaN is NumPy's (webgpu:0's blockwise scan gave nan + nan j where NumPy has -inf + nan j); the
    finite products before it within rounding."""
    needs_dtype(xp.complex64)
    a = np.exp(1j * np.random.default_rng(5).uniform(0, 2 * np.pi, 2913)).astype(np.complex64)
    a[2255] = special
    got = to_np(xp.cumulative_prod(xp.asarray(a, device=DEVICE)))
    with quiet():
        want = np.cumprod(a)
    for part in (np.real, np.imag):
        for where in (np.isnan, np.isinf):
            np.testing.assert_array_equal(where(part(got)), where(part(want)))
    np.testing.assert_allclose(got[:2255], want[:2255], rtol=1e-4, atol=1e-4)


def test_sum_prod_empty_and_defaults():
    e = xp.zeros((0, 3), dtype=xp.float32, device=DEVICE)
    assert_result(xp.sum(e), 0.0, xp.float32)
    assert_result(xp.prod(e, axis=0), [1.0, 1.0, 1.0], xp.float32)
    assert_result(xp.sum(e, axis=1), np.zeros(0), xp.float32)
    assert_result(xp.sum(arr([1, 2], dtype=xp.int8)), 3, INT)
    assert_result(xp.prod(arr([200, 2], dtype=xp.uint8)), 400, device_dtype(xp.uint64))
    assert_result(xp.sum(arr([100, 100], dtype=xp.int8), dtype=xp.int8), -56, xp.int8)  # wraps in the asked dtype
    assert_result(xp.sum(arr([1, 2], dtype=xp.int32), dtype=xp.float32), 3.0, xp.float32)
    assert_result(xp.sum(arr([1.5, 2.5]), dtype=COMPLEX_DEFAULT), 4.0 + 0j, COMPLEX_DEFAULT)
    assert_result(xp.sum(arr([[1 + 2j, 3 - 1j]], dtype=xp.complex64), axis=-1), [4 + 1j], xp.complex64)


def test_sum_nan_and_inf():
    assert math.isnan(float(xp.sum(arr([1.0, math.nan]))))
    assert math.isnan(float(xp.sum(arr([math.inf, -math.inf]))))
    assert float(xp.sum(arr([math.inf, 1.0]))) == math.inf
    assert math.isnan(float(xp.prod(arr([math.inf, 0.0]))))


# --- max, min -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
@given(data=st.data())
def test_max_min_match_numpy(name, data):
    t, a = data.draw(arrays(REAL_NUMERIC))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    count = a.size if axis is None else math.prod(a.shape[i] for i in np.atleast_1d(axis))
    if count == 0:
        with pytest.raises(ValueError, match=name):
            getattr(xp, name)(t, axis=axis, keepdims=keepdims)
        return
    got = getattr(xp, name)(t, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(a, axis=np_axis(axis), keepdims=keepdims)
    assert_result(got, expected, t.dtype)


def test_max_min_propagate_nan():
    x = arr([[1.0, math.nan, 3.0], [-math.inf, 0.0, 2.0]])
    assert_result(xp.max(x, axis=1), [math.nan, 2.0], FLOAT_DEFAULT)
    assert_result(xp.min(x, axis=0), [-math.inf, math.nan, 2.0], FLOAT_DEFAULT)
    assert math.isnan(float(xp.max(x)))


def test_max_min_of_nothing_raise_value_error():
    for shape, axis in [((0,), None), ((3, 0), 1), ((0, 0), 0), ((2, 0, 3), (0, 1))]:
        e = xp.zeros(shape, device=DEVICE)
        for f in (xp.max, xp.min):
            with pytest.raises(ValueError, match="no elements"):
                f(e, axis=axis)
    assert xp.max(xp.zeros((0, 3), device=DEVICE), axis=1).shape == (0,)  # nothing to reduce, nothing to fail


# --- mean, var, std ---------------------------------------------------------------------------------

@given(data=st.data())
def test_mean_matches_numpy(data):
    t, a = data.draw(arrays(FLOAT))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    got = xp.mean(t, axis=axis, keepdims=keepdims)
    with quiet():
        expected = np.mean(a, axis=np_axis(axis), keepdims=keepdims)
    if a.dtype.kind == "c":
        # NumPy's complex mean makes both parts NaN when one is; the standard lets either happen
        g = to_np(got)
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(g), nan)
        expected = np.where(nan, g, expected)
    assert_result(got, expected, t.dtype, 1e3)


@pytest.mark.parametrize("name", ["var", "std"])
@given(data=st.data())
def test_var_std_match_numpy(name, data):
    t, a = data.draw(arrays(REAL_FLOAT))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1, 0.5, 2.0]))
    got = getattr(xp, name)(t, axis=axis, correction=correction, keepdims=keepdims)
    count = a.size if axis is None else math.prod(a.shape[i] for i in np.atleast_1d(axis))
    with quiet():
        expected = getattr(np, name)(a, axis=np_axis(axis), ddof=correction, keepdims=keepdims)
    if count - correction <= 0:
        expected = np.full_like(expected, np.nan)
    scale = 1e6 if name == "var" else 1e3
    assert_result(got, expected, t.dtype, scale)


def test_mean_var_std_special_cases():
    e = xp.zeros((0, 2), dtype=xp.float32, device=DEVICE)
    assert_result(xp.mean(e), math.nan, xp.float32)
    assert_result(xp.mean(e, axis=0, keepdims=True), [[math.nan, math.nan]], xp.float32)
    m = xp.mean(xp.zeros(0, dtype=xp.complex64, device=DEVICE))
    assert math.isnan(complex(m).real) and math.isnan(complex(m).imag)
    x = arr([1.0, 2.0, 4.0])
    assert_result(xp.var(x, correction=3), math.nan, FLOAT_DEFAULT)
    assert_result(xp.std(x, correction=2.5), (14 / 3 / 0.5) ** 0.5, FLOAT_DEFAULT)  # squared deviations: 14/3
    assert_result(xp.var(x, correction=1), np.var([1.0, 2.0, 4.0], ddof=1), FLOAT_DEFAULT)
    assert math.isnan(float(xp.var(arr([1.0, math.nan]))))
    assert math.isnan(float(xp.std(arr([1.0, math.inf]))))
    assert math.isnan(float(xp.mean(arr([1.0, math.nan]))))
    assert_result(xp.mean(arr([1 + 1j, 3 + 3j])), 2 + 2j, COMPLEX_DEFAULT)


@pytest.mark.parametrize("name", ["var", "std"])
def test_float32_var_std_over_many_rows_are_rounded_like_float32(name):
    # NumPy adds the rows of a C-contiguous array into its running sums one after another: its float32 std
    # of these 100003 rows of 8 is off by 1.1e-5 (2.4e-4 over 1M rows); within a few float32 roundings here
    x = (np.random.default_rng(14).standard_normal((100003, 8)) * 2 + 5).astype(np.float32)
    got = to_np(getattr(xp, name)(arr(x), axis=0))
    exact = getattr(np, name)(x.astype(np.float64), axis=0)
    np.testing.assert_allclose(got, exact, rtol=1e-6)


@pytest.mark.parametrize("dtype", REAL_FLOAT)
def test_var_std_over_outer_axes_of_large_arrays(dtype):
    # many rows of few kept elements, in layouts and sizes around the CPU's blocked sums (blocks of 4096
    # elements, chunks of 65536): a tail of rows after the last block and chunk, reduced axes given in any
    # order, a transposed input, keepdims, a correction, an out= view, and NaN and inf in single columns
    needs_dtype(dtype)
    rng = np.random.default_rng(15)
    base = (rng.standard_normal((70001, 6)) * 3 - 2).astype(dtype)
    t = arr(base)
    # (tensor, its values, axis): whole chunks and blocks only; in any order; a transposed view (the
    # reduced axis outermost in memory); a tail of rows after the last whole block
    def reshaped(rows, shape):
        return xp.reshape(t[:rows], shape), base[:rows].reshape(shape)

    cases = [(t[:65472], base[:65472], 0), (*reshaped(69999, (3, 23333, 6)), (1, 0)), (t.T, base.T, 1),
             (*reshaped(69999, (23333, 3, 6)), 0), (*reshaped(40000, (20000, 2, 6)), (0, 1)), (t, base, 0)]
    for x, a, axis in cases:
        for name in ("var", "std"):
            for correction, keepdims in ((0, False), (1.5, True)):
                got = getattr(xp, name)(x, axis=axis, correction=correction, keepdims=keepdims)
                expected = getattr(np, name)(a.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdims)
                assert_result(got, expected, dtype, 10.0)
    special = base.copy()
    special[123, 1] = np.nan
    special[70000, 4] = np.inf
    with quiet():  # inf - inf
        expected = np.std(special.astype(np.float64), axis=0)
    big = xp.full((6, 2), 7.0, dtype=dtype, device=DEVICE)
    out = big[:, 0]
    assert xp.std(arr(special), axis=0, out=out) is out
    got = to_np(big)
    assert np.isnan(got[1, 0]) and np.isnan(got[4, 0]) and np.all(got[:, 1] == 7.0)
    assert_result(out, expected, dtype, 10.0)


def test_cumulative_sum_with_an_infinite_part_compares_the_finite_part_with_tolerance():
    # found on CUDA by a random seed: inf + 130.61108j against NumPy's inf + 130.61107j
    got = xp.asarray(np.array([np.inf + 130.61108j], np.complex64), device=DEVICE)
    assert_result(got, np.array([np.inf + 130.61107j], np.complex64), xp.complex64, 200.0)
    with pytest.raises(AssertionError):  # a wrong finite part still fails
        assert_result(got, np.array([np.inf + 131.0j], np.complex64), xp.complex64, 200.0)


# --- cumulative_sum, cumulative_prod -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@given(data=st.data())
def test_cumulative_match_numpy(name, data):
    bound, max_side = (1e3, 5) if name == "cumulative_sum" else (2.0, 3)
    t, a = data.draw(arrays(NUMERIC, bound=bound, min_dims=1, max_side=max_side))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1)) if a.ndim > 1 else data.draw(st.sampled_from([None, 0, -1]))
    include_initial = data.draw(st.booleans())
    dtype = data.draw(dtype_args(t.dtype))
    kw = {"include_initial": include_initial} | ({} if axis is None else {"axis": axis}) | \
        ({} if dtype is None else {"dtype": dtype})
    got = getattr(xp, name)(t, **kw)
    rdtype = dtype or accumulation_dtype(t.dtype)
    ax = 0 if axis is None else axis
    with quiet():
        expected = (np.cumsum if name == "cumulative_sum" else np.cumprod)(a.astype(rdtype), axis=ax)
    if include_initial:
        ident = np.full(a.shape[:ax % a.ndim] + (1,) + a.shape[ax % a.ndim + 1:], 0 if name == "cumulative_sum" else 1,
                        rdtype)
        expected = np.concatenate([ident, expected], axis=ax)
    # (a NumPy float power: it overflows to inf where a Python float power would raise)
    assert_result(got, expected, rdtype, np.float64(magnitude(a)) ** (1 if name == "cumulative_sum" else a.size or 1))


def test_cumulative_examples():
    x = arr([[1, 2, 3], [4, 5, 6]], dtype=xp.int16)
    assert_result(xp.cumulative_sum(x, axis=1), [[1, 3, 6], [4, 9, 15]], INT)
    assert_result(xp.cumulative_prod(x, axis=0, include_initial=True), [[1, 1, 1], [1, 2, 3], [4, 10, 18]], INT)
    assert_result(xp.cumulative_sum(arr([], dtype=xp.float32), include_initial=True), [0.0], xp.float32)
    assert_result(xp.cumulative_sum(xp.zeros((2, 0), device=DEVICE), axis=1, include_initial=True),
                  [[0.0], [0.0]], FLOAT_DEFAULT)
    assert_result(xp.cumulative_sum(arr([1.0, math.inf, -math.inf, 1.0])), [1.0, math.inf, math.nan, math.nan],
                  FLOAT_DEFAULT)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_along_a_short_axis_of_many_lanes(name):
    # the CPU's step-at-a-time accumulation (axis of at most 16, at least 1024 lanes, out of x's dtype):
    # NumPy's own bits there, in every layout, with include_initial (a strided body) and out aliasing x
    rng = np.random.default_rng(16)
    f = getattr(xp, name)
    ref = np.cumsum if name == "cumulative_sum" else np.cumprod
    for dtype in supported(NUMERIC):
        base = device_data((rng.standard_normal((4096, 8)) * 3).astype(dtype))
        t = arr(base)
        for x, a, axis in [(t, base, 1), (t.T, base.T, 0), (xp.reshape(t, (64, 4, 128)), base.reshape(64, 4, 128), 1),
                           (t[:, ::2], base[:, ::2], 1)]:
            for include_initial in (False, True):
                got = f(x, axis=axis, dtype=dtype, include_initial=include_initial)
                with quiet():
                    expected = ref(a, axis=axis, dtype=dtype)
                if include_initial:
                    expected = np.concatenate([np.ones_like(expected[:1]) * (name == "cumulative_prod"),
                                               expected] if axis == 0 else
                                              [np.ones_like(expected[..., :1, :] if a.ndim == 3 else expected[:, :1])
                                               * (name == "cumulative_prod"), expected], axis=axis)
                if DEVICE == "cpu":
                    np.testing.assert_array_equal(to_np(got), expected, strict=True)
                else:
                    assert_result(got, expected, dtype, 1e3)
    x = arr(np.ones((2048, 8), np.float32))
    assert f(x, axis=1, out=x) is x
    assert_result(x, ref(np.ones((2048, 8), np.float32), axis=1), xp.float32)


def test_cumulative_errors():
    x = arr([[1.0, 2.0]])
    with pytest.raises(ValueError, match="axis is required"):
        xp.cumulative_sum(x)
    with pytest.raises(ValueError, match="0-D"):
        xp.cumulative_prod(arr(1.0))
    with pytest.raises(IndexError):
        xp.cumulative_sum(x, axis=2)
    with pytest.raises(TypeError):
        xp.cumulative_sum(arr([1.0]), dtype=INT)
    with pytest.raises(TypeError):
        xp.cumulative_sum(arr([1.0]), include_initial=1)


# --- out= -------------------------------------------------------------------------------------------

REDUCTIONS = [("sum", {}), ("prod", {}), ("max", {}), ("min", {}), ("mean", {}), ("var", {"correction": 1}),
              ("std", {})]


@pytest.mark.parametrize("name,kw", REDUCTIONS)
@given(data=st.data())
def test_out_receives_the_result(name, kw, data):
    t, a = data.draw(arrays(REAL_FLOAT, min_dims=1, min_side=1, bound=2.0))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    expected = getattr(xp, name)(t, axis=axis, keepdims=keepdims, **kw)
    # out= as a non-contiguous view of a larger tensor, to show the kernel writes through its strides
    big = xp.full(expected.shape + (2,), 7.0, dtype=t.dtype, device=DEVICE)
    out = big[..., 0]
    r = getattr(xp, name)(t, axis=axis, keepdims=keepdims, out=out, **kw)
    assert r is out
    assert_result(out, to_np(expected), t.dtype)
    assert np.all(to_np(big[..., 1]) == 7.0)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_out_cumulative(name):
    x = arr([[1.0, 2.0], [3.0, 4.0]])
    big = xp.full((2, 6), 7.0, device=DEVICE)
    out = big[:, ::2]
    r = getattr(xp, name)(x, axis=1, include_initial=True, out=out)
    assert r is out
    assert_result(out, to_np(getattr(xp, name)(x, axis=1, include_initial=True)), FLOAT_DEFAULT)
    assert np.all(to_np(big[:, 1::2]) == 7.0)


@pytest.mark.parametrize("name,kw", REDUCTIONS + [("cumulative_sum", {"axis": 0})])
def test_bad_out_raises_and_touches_nothing(name, kw):
    x = arr([[1.0, 2.0], [3.0, 4.0]])
    f = getattr(xp, name)
    shape = (2, 2) if name.startswith("cumulative") else ()
    # (an out of another dtype than the result's: float32 where that is float64, and an integer dtype)
    bad = [(xp.zeros(shape, dtype=d, device=DEVICE), TypeError) for d in (xp.float32, xp.int16) if d != x.dtype]
    bad += [(xp.zeros((5,), device=DEVICE), ValueError),
           (to_np(x), TypeError)]
    for out, exc in bad:
        before = np.array(to_np(out)) if isinstance(out, xp.Tensor) else None
        with pytest.raises(exc, match=name):
            f(x, out=out, **kw)
        if before is not None:
            assert np.array_equal(to_np(out), before)
    assert np.array_equal(to_np(x), [[1.0, 2.0], [3.0, 4.0]])


def test_out_aliasing_the_input():
    x = arr([1.0, 2.0, 3.0])
    assert xp.cumulative_sum(x, out=x) is x
    assert_result(x, [1.0, 3.0, 6.0], FLOAT_DEFAULT)


# --- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,dtypes", [
    ("max", [xp.bool] + COMPLEX), ("min", [xp.bool] + COMPLEX),
    ("mean", [xp.bool] + INTEGER), ("var", [xp.bool] + INTEGER + COMPLEX), ("std", [xp.bool] + INTEGER + COMPLEX),
])
def test_wrong_dtype_kind_raises_type_error(name, dtypes):
    for dtype in supported(dtypes):
        with pytest.raises(TypeError, match=name):
            getattr(xp, name)(xp.ones(3, dtype=dtype, device=DEVICE))


@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod"])
def test_bools_count_as_numpy(name):
    # the standard leaves bool input to these unspecified; NumPy counts in its default integer
    a = np.array([[True, False, True], [True, True, False]])
    x = xp.asarray(a, device=DEVICE)
    f = getattr(xp, name)
    ref = {"sum": np.sum, "prod": np.prod, "cumulative_sum": np.cumsum, "cumulative_prod": np.cumprod}[name]
    integral = xp.__array_namespace_info__().default_dtypes(device=DEVICE)["integral"]
    for axis in ([0, 1] if name.startswith("cumulative") else [None, 0, 1]):
        got = f(x, axis=axis)
        assert got.dtype == integral
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), ref(a, axis=axis))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "var", "std"])
def test_argument_errors(name):
    f = getattr(xp, name)
    x = xp.ones((2, 3), device=DEVICE)
    with pytest.raises(IndexError):
        f(x, axis=2)
    with pytest.raises(IndexError):
        f(x, axis=(0, -3))
    with pytest.raises(ValueError, match="repeated"):
        f(x, axis=(1, -1))
    with pytest.raises(TypeError):
        f(x, axis=1.0)
    with pytest.raises(TypeError):
        f(x, keepdims=1)
    with pytest.raises(TypeError):
        f(np.ones(3))
    with pytest.raises(IndexError):
        f(arr(1.0), axis=0)


def test_dtype_and_correction_errors():
    x = xp.ones(3, dtype=FLOAT_DEFAULT, device=DEVICE)
    with pytest.raises(TypeError):
        xp.sum(x, dtype=INT)  # floating to integer
    with pytest.raises(TypeError):
        xp.prod(xp.ones(3, dtype=xp.complex64, device=DEVICE), dtype=FLOAT_DEFAULT)
    with pytest.raises(TypeError):
        xp.sum(x, dtype="float16")
    with pytest.raises(TypeError):
        xp.sum(x, dtype=xp.bool)
    with pytest.raises(ValueError):
        xp.var(x, correction=-1)
    with pytest.raises(TypeError):
        xp.std(x, correction="1")
    with pytest.raises(TypeError):
        xp.std(x, correction=True)


def test_0d_and_empty_tuple_axis():
    x = arr(2.5)
    for name in ("sum", "prod", "max", "min", "mean"):
        assert_result(getattr(xp, name)(x), 2.5, FLOAT_DEFAULT)
        assert_result(getattr(xp, name)(x, axis=()), 2.5, FLOAT_DEFAULT)
    y = arr([[1.0, 2.0]])
    assert_result(xp.sum(y, axis=()), [[1.0, 2.0]], FLOAT_DEFAULT)
    assert_result(xp.var(x), 0.0, FLOAT_DEFAULT)


def test_reductions_capture_and_replay():
    x = arr([[1.0, 2.0], [3.0, 4.0]])
    with xp.capture(device=DEVICE) as g:
        s = xp.sum(x, axis=0)
        m = xp.max(x)
        c = xp.cumulative_sum(x, axis=1, include_initial=True)
    x[...] = arr([[10.0, 20.0], [30.0, 40.0]])
    g.replay()
    assert_result(s, [40.0, 60.0], FLOAT_DEFAULT)
    assert_result(m, 40.0, FLOAT_DEFAULT)
    assert_result(c, [[0.0, 10.0, 30.0], [0.0, 30.0, 70.0]], FLOAT_DEFAULT)


def test_cross_device_out_raises(fake_backend):
    x = xp.ones(3, device="fake:0")
    with pytest.raises(ValueError, match="device"):
        xp.sum(x, out=xp.zeros((), device="fake:1"))


# --- all, any, diff (utility functions) --------------------------------------------------------------

@pytest.mark.parametrize("name", ["all", "any"])
@given(data=st.data())
def test_all_any_match_numpy(name, data):
    # small ints and floats mixed with zeros, so that both outcomes happen
    t, a = data.draw(arrays(ALL, bound=1.0))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    got = getattr(xp, name)(t, axis=axis, keepdims=keepdims)
    assert_result(got, getattr(np, name)(a, axis=np_axis(axis), keepdims=keepdims), xp.bool)


def test_all_any_special_cases():
    assert bool(xp.all(arr([math.nan, math.inf, -math.inf])))
    assert bool(xp.any(arr([0.0, -0.0, math.nan])))
    assert not bool(xp.any(arr([0.0, -0.0])))
    assert bool(xp.all(arr([1j, 1.0 + 0j])))
    assert not bool(xp.all(arr([1j, 0j])))
    e = xp.zeros((2, 0), device=DEVICE)
    assert_result(xp.all(e, axis=1), [True, True], xp.bool)
    assert_result(xp.any(e, axis=1, keepdims=True), [[False], [False]], xp.bool)
    assert_result(xp.all(e), True, xp.bool)
    out = xp.ones((3,), dtype=xp.bool, device=DEVICE)
    assert xp.any(arr([[0, 1, 0], [0, 0, 0]]), axis=0, out=out) is out
    assert_result(out, [False, True, False], xp.bool)
    with pytest.raises(TypeError):
        xp.all(xp.ones(3, device=DEVICE), out=xp.ones((), device=DEVICE))
    with pytest.raises(IndexError):
        xp.any(xp.ones(3, device=DEVICE), axis=1)


@given(data=st.data())
def test_diff_matches_numpy(data):
    t, a = data.draw(arrays(NUMERIC, min_dims=1))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 3))
    kw, parts = {}, [a]
    for name in ("prepend", "append"):
        if data.draw(st.booleans()):
            side = data.draw(st.integers(0, 2))
            shape = a.shape[:axis % a.ndim] + (side,) + a.shape[axis % a.ndim + 1:]
            dtype = data.draw(st.sampled_from(supported([d for d in NUMERIC if xp.can_cast(d, t.dtype)])))
            e, ea = data.draw(arrays([dtype], shape=shape))
            kw[name] = e
            parts.insert(0 if name == "prepend" else len(parts), ea)
    got = xp.diff(t, axis=axis, n=n, **kw)
    # joined first: np.diff ignores prepend and append when n is 0, the standard does not
    with quiet():
        expected = np.diff(np.concatenate(parts, axis=axis, dtype=t.dtype), axis=axis, n=n)
    assert_result(got, expected, t.dtype, 1e3)


def test_diff_with_n_beyond_the_axis_is_empty_at_once():
    """n at least the axis length (after prepend/append) gives the empty result without running n
    differences (NumPy's diff loops n times: n=2**70 never returns)."""
    x = arr([[1, 4, 9], [2, 2, 2]], dtype=xp.int16)
    assert_result(xp.diff(x, n=2 ** 70), np.zeros((2, 0)), xp.int16)
    assert_result(xp.diff(x, axis=0, n=2 ** 70, prepend=x), np.zeros((0, 3)), xp.int16)
    out = xp.zeros((2, 0), dtype=xp.int16, device=DEVICE)
    assert xp.diff(x, n=2 ** 62, out=out) is out
    with xp.capture(DEVICE) as g:
        r = xp.diff(x, n=2 ** 70)
    g.replay()
    assert r.shape == (2, 0)
    for n, exc in ((-1, ValueError), (-(2 ** 70), ValueError), (1.0, TypeError), (True, TypeError),
                   ("1", TypeError)):
        with pytest.raises(exc, match="diff: n"):
            xp.diff(x, n=n)


def test_diff_examples_and_errors():
    x = arr([[1, 4, 9], [2, 2, 2]], dtype=xp.int16)
    assert_result(xp.diff(x), [[3, 5], [0, 0]], xp.int16)
    assert_result(xp.diff(x, axis=0), [[1, -2, -7]], xp.int16)
    assert_result(xp.diff(x, n=2), [[2], [0]], xp.int16)
    assert_result(xp.diff(x, n=5), np.zeros((2, 0)), xp.int16)
    assert_result(xp.diff(x, n=0), to_np(x), xp.int16)
    pre = arr([[0], [0]], dtype=xp.int8)
    assert_result(xp.diff(x, prepend=pre, append=arr([[10], [1]], dtype=xp.int32)),
                  [[1, 3, 5, 1], [2, 0, 0, -1]], xp.int32)  # promoted with int32
    assert_result(xp.diff(arr([1.0, math.inf, math.inf])), [math.inf, math.nan], FLOAT_DEFAULT)
    out = xp.zeros((2, 2), dtype=xp.int16, device=DEVICE)
    assert xp.diff(x, out=out) is out
    assert_result(out, [[3, 5], [0, 0]], xp.int16)
    with pytest.raises(ValueError, match="prepend"):
        xp.diff(x, prepend=arr([0, 0, 0], dtype=xp.int16))
    with pytest.raises(ValueError, match="append"):
        xp.diff(x, axis=0, append=arr([[0, 0]], dtype=xp.int16).T)
    # int16 with a float prepend promotes as NumPy does (the standard leaves mixed kinds open)
    np.testing.assert_array_equal(to_np(xp.diff(x, prepend=arr([[0.5], [0.5]]))),
                                  np.diff(to_np(x), prepend=[[0.5], [0.5]]))
    with pytest.raises(TypeError):
        xp.diff(x, append=[[1], [2]])
    with pytest.raises(TypeError):
        xp.diff(arr([True, False]))
    with pytest.raises(ValueError):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError):
        xp.diff(x, n=1.0)
    with pytest.raises(IndexError):
        xp.diff(x, axis=2)
    with pytest.raises(IndexError):
        xp.diff(arr(1.0))
    with pytest.raises(ValueError, match="shape"):
        xp.diff(x, out=xp.zeros((2, 3), dtype=xp.int16, device=DEVICE))
