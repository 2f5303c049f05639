"""Creation functions against NumPy: asarray (with copy= semantics), empty/zeros/ones/full and their _like
forms, arange, linspace, eye, tril and triu."""

from __future__ import annotations

import array
import math

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from .helpers import needs_dtype
from .strategies import ALL, DEVICE, FLOAT, NUMERIC, REAL_FLOAT, shapes, supported, tensors, to_np

DEV = xp._device.parse_device(DEVICE)
INFO = xp.__array_namespace_info__()
DEFAULTS = INFO.default_dtypes(device=DEV)
FLOAT_DEFAULT = DEFAULTS["real floating"]


def assert_tensor(t, values, dtype, device=DEV):
    assert type(t) is xp.Tensor
    assert t.dtype == dtype, (t.dtype, dtype)
    assert t.device == device
    a = to_np(t)
    values = np.asarray(values)
    assert a.shape == values.shape, (a.shape, values.shape)
    np.testing.assert_array_equal(a, values.astype(dtype))


# --- asarray ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, kind", [(True, "bool"), (False, "bool"), (0, "integral"), (-7, "integral"),
                                         (1.5, "real floating"), (-0.0, "real floating"),
                                         (1 + 2j, "complex floating")])
def test_asarray_python_scalars_get_the_default_dtypes(value, kind):
    t = xp.asarray(value, device=DEVICE)
    dtype = xp.bool if kind == "bool" else DEFAULTS[kind]
    assert t.shape == () and t.ndim == 0 and t.size == 1
    assert_tensor(t, value, dtype)
    if value == 0.0 and type(value) is float:
        assert math.copysign(1, float(t)) == -1.0  # the sign of zero survives


@pytest.mark.parametrize("obj, shape, kind", [
    ([1, 2, 3], (3,), "integral"), ([[1.0, 2.0], [3.0, 4.0]], (2, 2), "real floating"),
    ([[True], [False]], (2, 1), "bool"), ([], (0,), "real floating"), ([[], []], (2, 0), "real floating"),
    ((1, 2), (2,), "integral"), ([[[1j]]], (1, 1, 1), "complex floating"), ([1, 2.5], (2,), "real floating"),
])
def test_asarray_nested_sequences(obj, shape, kind):
    t = xp.asarray(obj, device=DEVICE)
    assert t.shape == shape
    assert_tensor(t, np.asarray(obj), xp.bool if kind == "bool" else DEFAULTS[kind])


@given(tensors(ALL))
def test_asarray_numpy_arrays_and_tensors(ta):
    t, a = ta
    for copy in (None, True):
        r = xp.asarray(a, device=DEVICE, copy=copy)
        assert_tensor(r, a, t.dtype)
        r = xp.asarray(t, copy=copy)
        assert_tensor(r, a, t.dtype)
        assert (r is t) == (copy is None)
    assert xp.asarray(t, copy=False) is t
    assert xp.asarray(t, dtype=t.dtype) is t
    assert xp.asarray(t, device=DEVICE) is t


@given(hnp.arrays(st.sampled_from([d for d in supported(NUMERIC)]), shapes(max_dims=3)),
       st.sampled_from(supported(NUMERIC)))
def test_asarray_dtype_argument(a, dtype):
    assume(not (a.dtype.kind == "c" and dtype.kind != "c"))
    if dtype.kind in ("i", "u") and a.dtype.kind == "f":
        # casting NaN, infinities or values beyond the range to an integer dtype is unspecified
        info = np.iinfo(dtype)
        assume(np.isfinite(a).all() and (a.size == 0 or (a.min() >= info.min and a.max() <= info.max)))
    with np.errstate(over="ignore"):
        expected = a.astype(dtype)
    assert_tensor(xp.asarray(a, dtype=dtype, device=DEVICE), expected, dtype)


def test_asarray_dtype_of_sequences_and_scalars():
    assert_tensor(xp.asarray([1, 2], dtype=xp.float32, device=DEVICE), [1, 2], xp.float32)
    assert_tensor(xp.asarray(3, dtype=xp.uint8, device=DEVICE), 3, xp.uint8)
    assert_tensor(xp.asarray(True, dtype=xp.bool, device=DEVICE), True, xp.bool)
    assert_tensor(xp.asarray(1.5, dtype=xp.complex64, device=DEVICE), 1.5, xp.complex64)
    assert_tensor(xp.asarray([[1, 2]], dtype=xp.int16, device=DEVICE), [[1, 2]], xp.int16)
    needs_dtype(xp.uint64)
    assert_tensor(xp.asarray(2 ** 64 - 1, dtype=xp.uint64, device=DEVICE), 2 ** 64 - 1, xp.uint64)


def test_asarray_tensor_dtype_change_copies():
    t = xp.asarray([1, 2, 3], dtype=xp.int32, device=DEVICE)
    r = xp.asarray(t, dtype=FLOAT_DEFAULT)
    assert r is not t
    assert_tensor(r, [1, 2, 3], FLOAT_DEFAULT)
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray(t, dtype=FLOAT_DEFAULT, copy=False)


def test_asarray_copy_true_is_independent():
    a = np.arange(4, dtype=FLOAT_DEFAULT)
    t = xp.asarray(a, copy=True, device=DEVICE)
    a[0] = 100.0
    assert to_np(t)[0] == 0.0
    t2 = xp.asarray(t, copy=True)
    assert t2 is not t
    t2[1] = -1.0
    assert to_np(t)[1] == 1.0 and to_np(t2)[1] == -1.0
    t3 = xp.asarray([1.0, 2.0], device=DEVICE, copy=True)
    assert_tensor(t3, [1.0, 2.0], DEFAULTS["real floating"])


def test_asarray_copy_false():
    # Python data and other devices cannot be shared: ValueError rather than a silent copy
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray([1.0, 2.0], copy=False, device=DEVICE)
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray(1.0, copy=False, device=DEVICE)
    t = xp.asarray([1, 2], device=DEVICE)
    assert xp.asarray(t, copy=False) is t
    if DEV.kind == "cpu":
        # a C-contiguous, writable host array is shared on the CPU
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        s = xp.asarray(a, copy=False)
        assert s.dtype == xp.float32 and s.shape == (2, 3)
        a[1, 2] = 42.0
        assert to_np(s)[1, 2] == 42.0
        s[0, 0] = -5.0
        assert a[0, 0] == -5.0
        with pytest.raises(ValueError, match="asarray"):
            xp.asarray(a, dtype=xp.float64, copy=False)
        v = xp.asarray(a[:, ::-2], copy=False)  # any whole-element layout is shared, strides and all
        a[0, 2] = 7.0
        assert to_np(v)[0, 0] == 7.0 and v.shape == (2, 2)
    else:
        with pytest.raises(ValueError, match="asarray"):
            xp.asarray(np.arange(3.0), copy=False, device=DEVICE)


def test_asarray_copy_must_be_a_bool_or_none():
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray([1], copy="yes", device=DEVICE)


def test_asarray_nested_tensors_and_buffers():
    t = xp.asarray(2.0, device=DEVICE)
    r = xp.asarray([t, 3.0, xp.asarray(4.0, device=DEVICE)], device=DEVICE)
    assert_tensor(r, [2.0, 3.0, 4.0], FLOAT_DEFAULT)
    r = xp.asarray([[xp.asarray([1, 2], device=DEVICE)], [[3, 4]]], device=DEVICE)
    assert_tensor(r, [[[1, 2]], [[3, 4]]], DEFAULTS["integral"])
    assert_tensor(xp.asarray(memoryview(bytes([1, 2, 255])), device=DEVICE), [1, 2, 255], xp.uint8)
    assert_tensor(xp.asarray(np.float32(1.5), device=DEVICE), 1.5, xp.float32)
    needs_dtype(xp.float64)  # a buffer of doubles is float64 data
    buf = array.array("d", [1.0, 2.5])
    assert_tensor(xp.asarray(buf, device=DEVICE), [1.0, 2.5], xp.float64)


def test_asarray_device_argument():
    for dev in (DEVICE, DEV):
        t = xp.asarray([1, 2], device=dev)
        assert t.device == DEV
    t = xp.asarray([1, 2], device=DEVICE)
    moved = xp.asarray(t, device="cpu")
    assert moved.device == xp._device.parse_device("cpu")
    np.testing.assert_array_equal(to_np(moved), [1, 2])
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray([1], device="nosuchdevice")
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray([1], device=3)


def test_asarray_errors():
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray(1.5, dtype=xp.int32, device=DEVICE)
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray(1j, dtype=xp.float64, device=DEVICE)
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray([1], dtype="float16", device=DEVICE)
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray(np.ones(2, np.float16), device=DEVICE)
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray("abc", device=DEVICE)
    with pytest.raises(TypeError, match="asarray"):
        xp.asarray(object(), device=DEVICE)
    with pytest.raises(ValueError, match="asarray"):
        xp.asarray([[1], [2, 3]], device=DEVICE)
    with pytest.raises(OverflowError, match="asarray"):
        xp.asarray(2 ** 63, device=DEVICE)
    with pytest.raises(OverflowError, match="asarray"):
        xp.asarray(-(2 ** 63) - 1, device=DEVICE)
    with pytest.raises(OverflowError, match="asarray"):
        xp.asarray(-1, dtype=xp.uint8, device=DEVICE)


# --- empty, zeros, ones, full and the _like forms -----------------------------------------------

@given(shapes(), st.sampled_from([None] + supported(ALL)), st.sampled_from(["tuple", "list", "int"]))
def test_empty_zeros_ones(shape, dtype, form):
    arg = shape if form == "tuple" else list(shape) if form == "list" else (shape[0] if len(shape) == 1 else shape)
    expect_dtype = DEFAULTS["real floating"] if dtype is None else dtype
    e = xp.empty(arg, dtype=dtype, device=DEVICE)
    assert e.shape == shape and e.dtype == expect_dtype and e.device == DEV
    assert_tensor(xp.zeros(arg, dtype=dtype, device=DEVICE), np.zeros(shape), expect_dtype)
    assert_tensor(xp.ones(arg, dtype=dtype, device=DEVICE), np.ones(shape), expect_dtype)


def test_shape_argument_forms_and_errors():
    assert xp.zeros(3, device=DEVICE).shape == (3,)
    assert xp.zeros((), device=DEVICE).shape == ()
    assert xp.zeros(np.int64(2), device=DEVICE).shape == (2,)
    assert xp.ones((0, 3), device=DEVICE).shape == (0, 3)
    for f in (xp.empty, xp.zeros, xp.ones):
        with pytest.raises(ValueError, match=f.__name__):
            f((2, -1), device=DEVICE)
        with pytest.raises(TypeError, match=f.__name__):
            f((2.0,), device=DEVICE)
        with pytest.raises(TypeError, match=f.__name__):
            f((True,), device=DEVICE)
        with pytest.raises(TypeError, match=f.__name__):
            f("3", device=DEVICE)
        with pytest.raises(TypeError, match=f.__name__):
            f((2,), dtype=np.float16, device=DEVICE)


@pytest.mark.parametrize("fill, kind", [(True, "bool"), (3, "integral"), (-2.5, "real floating"),
                                        (1 - 1j, "complex floating"), (math.inf, "real floating")])
def test_full_infers_the_dtype(fill, kind):
    t = xp.full((2, 3), fill, device=DEVICE)
    dtype = xp.bool if kind == "bool" else DEFAULTS[kind]
    assert_tensor(t, np.full((2, 3), fill), dtype)
    assert_tensor(xp.full((), fill, device=DEVICE), np.asarray(fill), dtype)


@given(st.sampled_from(supported(ALL)), shapes(max_dims=3), st.data())
def test_full_with_dtype(dtype, shape, data):
    if dtype.kind == "b":
        fill = data.draw(st.booleans())
    elif dtype.kind in ("i", "u"):
        info = np.iinfo(dtype)
        fill = data.draw(st.integers(int(info.min), int(info.max)))
    elif dtype.kind == "f":
        fill = data.draw(st.one_of(st.integers(-1000, 1000), st.floats(width=dtype.itemsize * 8)))
    else:
        fill = data.draw(st.one_of(st.integers(-1000, 1000), st.floats(width=dtype.itemsize * 8 // 2),
                                   st.complex_numbers(width=dtype.itemsize * 8)))
    t = xp.full(shape, fill, dtype=dtype, device=DEVICE)
    assert_tensor(t, np.full(shape, fill, dtype=dtype), dtype)
    x = xp.zeros((2,) + shape, dtype=dtype, device=DEVICE)
    assert_tensor(xp.full_like(x, fill), np.full((2,) + shape, fill, dtype=dtype), dtype)


def test_full_errors():
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), 1.5, dtype=xp.int32, device=DEVICE)
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), 1j, dtype=xp.float64, device=DEVICE)
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), 1, dtype=xp.bool, device=DEVICE)
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), True, dtype=xp.int8, device=DEVICE)
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), "1", device=DEVICE)
    with pytest.raises(TypeError, match="full"):
        xp.full((2,), np.float64(1.0), device=DEVICE)
    with pytest.raises(OverflowError, match="full"):
        xp.full((2,), 300, dtype=xp.uint8, device=DEVICE)
    with pytest.raises(ValueError, match="full"):
        xp.full((-2,), 1, device=DEVICE)
    x = xp.zeros((2,), dtype=xp.int16, device=DEVICE)
    with pytest.raises(TypeError, match="full_like"):
        xp.full_like(x, 0.5)
    needs_dtype(xp.uint64)
    with pytest.raises(OverflowError, match="full"):
        xp.full((2,), -1, dtype=xp.uint64, device=DEVICE)


@given(tensors(ALL), st.sampled_from([None] + supported(ALL)))
def test_like_functions(ta, dtype):
    t, a = ta
    expect = t.dtype if dtype is None else dtype
    for f, values in ((xp.zeros_like, np.zeros(a.shape)), (xp.ones_like, np.ones(a.shape))):
        r = f(t, dtype=dtype)
        assert_tensor(r, values, expect)
        assert r.device == t.device
    e = xp.empty_like(t, dtype=dtype)
    assert e.shape == a.shape and e.dtype == expect and e.device == t.device
    r = xp.zeros_like(t, device=DEVICE)
    assert r.device == DEV
    np.testing.assert_array_equal(to_np(t), a)  # the template is untouched


def test_like_functions_errors():
    for f in (xp.empty_like, xp.zeros_like, xp.ones_like):
        with pytest.raises(TypeError, match=f.__name__):
            f(np.zeros(3))
        with pytest.raises(TypeError, match=f.__name__):
            f(xp.zeros(3, device=DEVICE), dtype="U3")
    with pytest.raises(TypeError, match="full_like"):
        xp.full_like([1, 2], 1)


# --- arange -------------------------------------------------------------------------------------

def _arange_length(start, stop, step) -> int:
    return max(0, math.ceil((stop - start) / step))


@given(st.integers(-50, 50), st.one_of(st.none(), st.integers(-50, 50)),
       st.integers(-7, 7).filter(lambda s: s != 0))
def test_arange_integers(start, stop, step):
    args = (start,) if stop is None else (start, stop, step)
    t = xp.arange(*args, device=DEVICE)
    expected = np.arange(*args)
    assert t.shape == (len(range(*((0, start) if stop is None else args))),)
    assert_tensor(t, expected, DEFAULTS["integral"])


@given(st.floats(-100, 100), st.floats(-100, 100), st.floats(0.01, 10), st.booleans(),
       st.sampled_from(supported(REAL_FLOAT)))
def test_arange_floats(start, stop, step, negative, dtype):
    if negative:
        step = -step
    t = xp.arange(start, stop, step, dtype=dtype, device=DEVICE)
    n = _arange_length(start, stop, step)
    assert t.shape == (n,) and t.dtype == dtype
    expected = (start + np.arange(n) * step).astype(dtype)
    # near 0 (start + i * step cancelling) the error is absolute: a few roundings of the largest term
    atol = 4 * float(np.finfo(dtype).eps) * (abs(start) + n * abs(step))
    np.testing.assert_allclose(to_np(t), expected, rtol=1e-6 if dtype == xp.float32 else 1e-12, atol=atol)
    # the default dtype for float arguments
    assert xp.arange(start, stop, step, device=DEVICE).dtype == DEFAULTS["real floating"]


def test_arange_cases():
    assert_tensor(xp.arange(0, 1, 0.1, device=DEVICE), np.arange(0, 1, 0.1, dtype=FLOAT_DEFAULT), FLOAT_DEFAULT)
    assert xp.arange(0, 1, 0.1, device=DEVICE).shape == (10,)
    assert xp.arange(0, 0.3, 0.1, device=DEVICE).shape == (3,)  # ceil(2.9999999999999996)
    assert xp.arange(10, 0, -3, device=DEVICE).shape == (4,)
    assert_tensor(xp.arange(10, 0, -3, device=DEVICE), [10, 7, 4, 1], DEFAULTS["integral"])
    for args in ((0,), (5, 5), (5, 0), (0, 5, -1), (1.0, 1.0), (2.0, 1.0, 0.5)):
        assert xp.arange(*args, device=DEVICE).shape == (0,)
    assert_tensor(xp.arange(5, dtype=xp.float32, device=DEVICE), np.arange(5), xp.float32)
    assert_tensor(xp.arange(-100, 100, 150, dtype=xp.int8, device=DEVICE), [-100, 50], xp.int8)
    assert_tensor(xp.arange(255, -1, -100, dtype=xp.uint8, device=DEVICE), [255, 155, 55], xp.uint8)
    assert_tensor(xp.arange(np.int32(3), device=DEVICE), [0, 1, 2], DEFAULTS["integral"])
    needs_dtype(xp.int64, xp.uint64)  # (the cases left need 64-bit integers)
    assert_tensor(xp.arange(2 ** 64 - 3, 2 ** 64, dtype=xp.uint64, device=DEVICE),
                  np.array([2 ** 64 - 3, 2 ** 64 - 2, 2 ** 64 - 1], np.uint64), xp.uint64)
    # the length of a long integer range is exact (no float rounding of (stop - start) / step)
    big = xp.arange(0, 10 ** 18 + 1, 10 ** 17, device=DEVICE)
    assert big.shape == (11,) and int(big[10]) == 10 ** 18


def test_arange_errors():
    with pytest.raises(ValueError, match="arange"):
        xp.arange(0, 10, 0, device=DEVICE)
    with pytest.raises(ValueError, match="arange"):
        xp.arange(0, math.inf, device=DEVICE)
    with pytest.raises(TypeError, match="arange"):
        xp.arange("3", device=DEVICE)
    with pytest.raises(TypeError, match="arange"):
        xp.arange(0, 1j, device=DEVICE)
    with pytest.raises(TypeError, match="arange"):
        xp.arange(True, device=DEVICE)
    with pytest.raises(OverflowError, match="arange"):
        xp.arange(0, 300, dtype=xp.uint8, device=DEVICE)


# --- linspace -----------------------------------------------------------------------------------

@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.integers(0, 20), st.booleans(),
       st.sampled_from([None] + supported(FLOAT)))
def test_linspace(start, stop, num, endpoint, dtype):
    t = xp.linspace(start, stop, num, dtype=dtype, endpoint=endpoint, device=DEVICE)
    expect = DEFAULTS["real floating"] if dtype is None else dtype
    assert t.shape == (num,) and t.dtype == expect
    ref = np.linspace(start, stop, num, endpoint=endpoint).astype(expect)
    tol = 1e-6 if expect in (xp.float32, xp.complex64) else 1e-12
    np.testing.assert_allclose(to_np(t), ref, rtol=tol, atol=tol * max(1.0, abs(start), abs(stop)))
    if num and dtype is None:
        assert to_np(t)[0] == start
        if endpoint and num > 1:
            assert to_np(t)[-1] == stop


def test_linspace_cases():
    assert_tensor(xp.linspace(0, 1, 5, device=DEVICE), [0, 0.25, 0.5, 0.75, 1.0], FLOAT_DEFAULT)
    assert_tensor(xp.linspace(0, 1, 4, endpoint=False, device=DEVICE), [0, 0.25, 0.5, 0.75], FLOAT_DEFAULT)
    assert_tensor(xp.linspace(2, 3, 1, device=DEVICE), [2.0], FLOAT_DEFAULT)
    assert xp.linspace(2, 3, 0, device=DEVICE).shape == (0,)
    c = xp.linspace(0, 2 + 2j, 3, device=DEVICE)
    assert_tensor(c, [0, 1 + 1j, 2 + 2j], DEFAULTS["complex floating"])
    assert_tensor(xp.linspace(0, 1, 3, dtype=xp.float32, device=DEVICE), [0, 0.5, 1], xp.float32)
    with pytest.raises(TypeError, match="linspace"):
        xp.linspace(0, 1, 3, dtype=xp.int32, device=DEVICE)
    with pytest.raises(TypeError, match="linspace"):
        xp.linspace(0, 1j, 3, dtype=xp.float64, device=DEVICE)
    with pytest.raises(ValueError, match="linspace"):
        xp.linspace(0, 1, -1, device=DEVICE)
    with pytest.raises(TypeError, match="linspace"):
        xp.linspace("0", 1, 3, device=DEVICE)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 2.5, device=DEVICE)


# --- eye, tril, triu ----------------------------------------------------------------------------

@given(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6)), st.integers(-8, 8),
       st.sampled_from([None] + supported(ALL)))
def test_eye(n_rows, n_cols, k, dtype):
    t = xp.eye(n_rows, n_cols, k=k, dtype=dtype, device=DEVICE)
    expect = DEFAULTS["real floating"] if dtype is None else dtype
    assert_tensor(t, np.eye(n_rows, n_cols, k), expect)


def test_eye_errors():
    with pytest.raises(ValueError, match="eye"):
        xp.eye(-1, device=DEVICE)
    with pytest.raises(ValueError, match="eye"):
        xp.eye(2, -3, device=DEVICE)
    with pytest.raises(TypeError):
        xp.eye(2.0, device=DEVICE)
    with pytest.raises(TypeError):
        xp.eye(2, k=1.0, device=DEVICE)


@given(st.data())
def test_tril_triu(data):
    shape = data.draw(shapes(min_dims=2, max_dims=4), label="shape")
    t, a = data.draw(tensors(ALL, shape=shape), label="x")
    k = data.draw(st.integers(-6, 6), label="k")
    for f, ref in ((xp.tril, np.tril), (xp.triu, np.triu)):
        r = f(t, k=k)
        assert_tensor(r, ref(a, k), t.dtype)
        r0 = f(t)
        assert_tensor(r0, ref(a), t.dtype)
    np.testing.assert_array_equal(to_np(t), a)


def test_tril_triu_errors():
    for f in (xp.tril, xp.triu):
        with pytest.raises(ValueError, match=f.__name__):
            f(xp.ones((3,), device=DEVICE))
        with pytest.raises(ValueError, match=f.__name__):
            f(xp.ones((), device=DEVICE))
        with pytest.raises(TypeError, match=f.__name__):
            f(np.ones((3, 3)))
        with pytest.raises(TypeError):
            f(xp.ones((3, 3), device=DEVICE), k=1.5)


HUGE = 2 ** 70  # beyond int64 and uint64, but exact in every floating-point dtype


def test_huge_python_ints_where_the_dtype_holds_them():
    """Bounds and fill values beyond int64 are fine for floating-point results (they leaked NumPy's
    UFuncTypeError / 'Python int too large to convert to C long'), and so are diagonals beyond the matrix."""
    f = DEFAULTS["real floating"]
    assert_tensor(xp.linspace(0, HUGE, 3, device=DEVICE), [0.0, 2.0 ** 69, 2.0 ** 70], f)
    assert_tensor(xp.linspace(-HUGE, HUGE, 4, endpoint=False, device=DEVICE), [-(2.0 ** 70), -(2.0 ** 69), 0.0,
                                                                                2.0 ** 69], f)
    assert_tensor(xp.arange(0, HUGE, 2 ** 69, dtype=f, device=DEVICE), [0.0, 2.0 ** 69], f)
    assert_tensor(xp.full((2,), HUGE, dtype=f, device=DEVICE), [2.0 ** 70] * 2, f)
    a = np.arange(1, 7).reshape(2, 3)
    x = xp.asarray(a, dtype=xp.int32, device=DEVICE)
    for k, lower, upper in ((HUGE, a, np.zeros_like(a)), (-HUGE, np.zeros_like(a), a)):
        assert_tensor(xp.tril(x, k=k), lower, x.dtype)
        assert_tensor(xp.triu(x, k=k), upper, x.dtype)
        assert_tensor(xp.eye(2, 3, k=k, device=DEVICE), np.zeros((2, 3)), f)


@pytest.mark.parametrize("call, exc, name", [
    (lambda: xp.linspace(0, 10 ** 400, 3, device=DEVICE), OverflowError, "linspace: stop"),
    (lambda: xp.linspace(0, 1, HUGE, device=DEVICE), ValueError, "linspace: dimension"),
    (lambda: xp.arange(0, 1, 10 ** 400, dtype=DEFAULTS["real floating"], device=DEVICE), OverflowError,
     "arange: step"),
    (lambda: xp.full((2,), HUGE, device=DEVICE), OverflowError, "full: fill_value"),
    (lambda: xp.full((2,), 10 ** 400, dtype=DEFAULTS["real floating"], device=DEVICE), OverflowError,
     "full: fill_value"),
    (lambda: xp.full_like(xp.ones((2,), device=DEVICE), 10 ** 400), OverflowError, "full_like: fill_value"),
    (lambda: xp.asarray([1, HUGE], device=DEVICE), OverflowError, "asarray"),
    (lambda: xp.asarray([[2 ** 64]], device=DEVICE), OverflowError, "asarray"),
    (lambda: xp.zeros((HUGE, 0), device=DEVICE), ValueError, "zeros: dimension"),
    (lambda: xp.eye(HUGE, 0, device=DEVICE), ValueError, "eye: dimension"),
], ids=["linspace bound", "linspace num", "arange step", "full int", "full float", "full_like float",
        "asarray list", "asarray nested", "zeros", "eye"])
def test_huge_python_ints_beyond_the_dtype(call, exc, name):
    """Out of range: OverflowError (Python's and NumPy's type for an int that does not fit; the standard
    leaves the case unspecified) or, for a size, ValueError; the message names the function."""
    with pytest.raises(exc, match=name):
        call()
