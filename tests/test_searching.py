"""Searching functions (argmax, argmin, count_nonzero, nonzero, searchsorted, where): differential tests
against NumPy on the device under test, special cases, ``out=`` and errors."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp

from .strategies import ALL, COMPLEX, DEVICE, INTEGER, REAL_NUMERIC, supported, to_np
from .helpers import needs_dtype
from .test_statistical import INDEX, INT, arr, arrays, assert_result, axes, np_axis


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(data=st.data())
def test_argmax_argmin_match_numpy(name, data):
    # small values, so that ties (first occurrence wins) are common
    t, a = data.draw(arrays(REAL_NUMERIC, bound=2.0))
    axis = data.draw(axes(a.ndim, tuples=False))
    keepdims = data.draw(st.booleans())
    count = a.size if axis is None else a.shape[axis]
    if count == 0:
        with pytest.raises(ValueError, match=name):
            getattr(xp, name)(t, axis=axis, keepdims=keepdims)
        return
    got = getattr(xp, name)(t, axis=axis, keepdims=keepdims)
    assert_result(got, getattr(np, name)(a, axis=axis, keepdims=keepdims), INDEX)


def test_argmax_argmin_special_cases():
    x = arr([[3.0, math.nan, 5.0, math.nan], [-0.0, 0.0, -1.0, -1.0]])
    assert_result(xp.argmax(x, axis=1), [1, 0], INDEX)  # the first NaN; ties: the first occurrence
    assert_result(xp.argmin(x, axis=1, keepdims=True), [[1], [2]], INDEX)
    assert_result(xp.argmax(x), 1, INDEX)
    assert_result(xp.argmin(x, keepdims=True), [[1]], INDEX)
    assert_result(xp.argmax(arr(7)), 0, INDEX)
    assert_result(xp.argmax(xp.zeros((0, 3), device=DEVICE), axis=1), np.zeros(0), INDEX)
    with pytest.raises(ValueError, match="no elements"):
        xp.argmin(xp.zeros((3, 0), device=DEVICE), axis=1)
    with pytest.raises(ValueError, match="no elements"):
        xp.argmax(xp.zeros(0, device=DEVICE))


def test_argmax_argmin_errors_and_out():
    x = arr([[1, 5, 2], [7, 0, 7]], dtype=xp.uint8)
    out = xp.zeros((2,), dtype=INDEX, device=DEVICE)
    assert xp.argmax(x, axis=-1, out=out) is out
    assert_result(out, [1, 0], INDEX)
    with pytest.raises(TypeError):
        xp.argmax(x, axis=1, out=xp.zeros((2,), dtype=xp.int16, device=DEVICE))  # not the index dtype
    with pytest.raises(TypeError):
        xp.argmax(x, axis=(0, 1))
    with pytest.raises(IndexError):
        xp.argmin(x, axis=2)
    with pytest.raises(TypeError):
        xp.argmin(x, keepdims=None)
    for dtype in supported(COMPLEX + [xp.bool]):
        with pytest.raises(TypeError, match="argmax"):
            xp.argmax(xp.ones(2, dtype=dtype, device=DEVICE))


@given(data=st.data())
def test_count_nonzero_matches_numpy(data):
    t, a = data.draw(arrays(ALL, bound=1.0))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    got = xp.count_nonzero(t, axis=axis, keepdims=keepdims)
    assert_result(got, np.count_nonzero(a, axis=np_axis(axis), keepdims=keepdims), INT)


def test_count_nonzero_special_cases():
    assert_result(xp.count_nonzero(arr([0j, 1j, -0.0 + 0j, math.nan + 0j])), 2, INT)
    assert_result(xp.count_nonzero(arr([0.0, -0.0, math.nan, math.inf])), 2, INT)
    assert_result(xp.count_nonzero(arr([[True, False], [True, True]]), axis=0), [2, 1], INT)
    assert_result(xp.count_nonzero(xp.zeros((0, 2), device=DEVICE)), 0, INT)
    out = xp.zeros((1, 2), dtype=INT, device=DEVICE)
    assert xp.count_nonzero(arr([[1, 0], [1, 1]]), axis=0, keepdims=True, out=out) is out
    assert_result(out, [[2, 1]], INT)
    with pytest.raises(ValueError, match="repeated"):
        xp.count_nonzero(arr([[1]]), axis=(0, 0))


@given(data=st.data())
def test_nonzero_matches_numpy(data):
    t, a = data.draw(arrays(ALL, bound=1.0, min_dims=1))
    got = xp.nonzero(t)
    expected = np.nonzero(a)
    assert type(got) is tuple and len(got) == a.ndim
    for g, e in zip(got, expected):
        assert_result(g, e, INDEX)


def test_nonzero_special_cases_and_errors():
    got = xp.nonzero(arr([[0.0, math.nan], [-0.0, 1j * 0 + 2]]))
    assert [to_np(g).tolist() for g in got] == [[0, 1], [1, 1]]
    with pytest.raises(ValueError, match="0-D"):
        xp.nonzero(arr(1))
    with pytest.raises(TypeError):
        xp.nonzero([1, 2])
    x = arr([1, 0, 2])
    with pytest.raises(xp.CaptureError, match="nonzero"):
        with xp.capture(device=DEVICE):
            xp.nonzero(x)
    assert [to_np(g).tolist() for g in xp.nonzero(x)] == [[0, 2]]  # the device is usable after the abort


@st.composite
def sorted_1d(draw, dtypes):
    """(ascending 1-D tensor, NumPy array), with repeats; NaNs (which sort last) included."""
    t, a = draw(arrays(dtypes, bound=5.0, min_dims=1, max_dims=1, max_side=8))
    a = np.sort(a)
    return xp.asarray(a, device=DEVICE), a


@given(data=st.data())
def test_searchsorted_matches_numpy(data):
    x1, a1 = data.draw(sorted_1d(REAL_NUMERIC))
    side = data.draw(st.sampled_from(["left", "right"]))
    kind = data.draw(st.sampled_from(["array", "scalar"]))
    if kind == "array":
        others = [d for d in supported(REAL_NUMERIC) if xp.can_cast(d, x1.dtype)]
        x2, a2 = data.draw(arrays(others, bound=6.0))
    else:
        if x1.dtype in INTEGER:
            info = np.iinfo(x1.dtype)
            x2 = data.draw(st.integers(int(info.min), int(info.max)))
        else:
            x2 = data.draw(st.floats(-6, 6) | st.sampled_from([math.nan, math.inf, -0.0]))
        a2 = np.asarray(x2, dtype=x1.dtype)
    use_sorter = data.draw(st.booleans())
    if use_sorter:
        perm = np.asarray(data.draw(st.permutations(range(a1.size))), dtype=INDEX)
        shuffled = np.empty_like(a1)
        shuffled[perm] = a1  # shuffled[perm] is sorted: perm sorts it
        got = xp.searchsorted(xp.asarray(shuffled, device=DEVICE), x2, side=side,
                              sorter=xp.asarray(perm, device=DEVICE))
    else:
        got = xp.searchsorted(x1, x2, side=side)
    assert_result(got, np.searchsorted(a1, a2, side=side), INDEX)


def test_searchsorted_examples_and_errors():
    x1 = arr([1.0, 2.0, 2.0, 3.0, math.nan])
    assert_result(xp.searchsorted(x1, 2.0), 1, INDEX)
    assert_result(xp.searchsorted(x1, 2.0, side="right"), 3, INDEX)
    assert_result(xp.searchsorted(x1, arr([[0.0, math.nan], [9.0, -0.0]])), [[0, 4], [4, 0]], INDEX)
    assert_result(xp.searchsorted(arr([1, 3], dtype=xp.int8), 2), 1, INDEX)
    out = xp.zeros((2,), dtype=INDEX, device=DEVICE)
    assert xp.searchsorted(x1, arr([2.5, 1.0]), out=out) is out
    assert_result(out, [3, 0], INDEX)
    with pytest.raises(TypeError):
        xp.searchsorted(arr([1, 2]), 1.5)  # a float in an integer array
    with pytest.raises(TypeError):
        xp.searchsorted(arr([1, 2]), True)
    # a float array searched for integers compares as NumPy does (the standard leaves mixed kinds open)
    assert_result(xp.searchsorted(arr([1.0, 2.0]), arr([1, 3])), [0, 2], INDEX)
    with pytest.raises(TypeError):
        xp.searchsorted(arr([1j, 2j]), 1j)
    with pytest.raises(ValueError, match="1-D"):
        xp.searchsorted(arr([[1.0]]), 1.0)
    with pytest.raises(ValueError, match="side"):
        xp.searchsorted(x1, 1.0, side="middle")
    with pytest.raises(ValueError, match="sorter"):
        xp.searchsorted(x1, 1.0, sorter=arr([0, 1]))
    with pytest.raises(TypeError):
        xp.searchsorted(x1, 1.0, sorter=arr([0.0, 1, 2, 3, 4]))
    with pytest.raises(OverflowError):
        xp.searchsorted(arr([1, 2], dtype=xp.uint8), -1)
    with pytest.raises(TypeError):
        xp.searchsorted([1.0, 2.0], 1.0)
    needs_dtype(xp.int64, xp.uint64)
    # int64 with uint64 compare as NumPy compares them (in float64; the standard leaves it open)
    got = xp.searchsorted(arr([1, 2], dtype=xp.int64), arr([1, 3], dtype=xp.uint64))
    np.testing.assert_array_equal(to_np(got), np.searchsorted(np.array([1, 2]), np.array([1, 3], np.uint64)))


def test_searchsorted_cross_device(fake_backend):
    with pytest.raises(ValueError, match="device"):
        xp.searchsorted(xp.ones(3, device="fake:0"), xp.ones(2, device="fake:1"))


@given(data=st.data())
def test_where_matches_numpy(data):
    t, a = data.draw(arrays(ALL))
    c = data.draw(arrays([xp.bool], shape=a.shape[data.draw(st.integers(0, a.ndim)):]))
    got = xp.where(c[0], t, xp.zeros((), dtype=t.dtype, device=DEVICE))
    assert_result(got, np.where(c[1], a, np.zeros((), a.dtype)), t.dtype)


def test_where_takes_numpy_scalars_as_the_operators_do():
    """A NumPy scalar is its Python value, as in ``x * np.float32(2)`` (xarray's ``where`` fill value is
    one); other objects are still refused."""
    c = xp.asarray([True, False], device=DEVICE)
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=DEVICE)
    r = xp.where(c, x, np.float64(np.nan))
    assert r.dtype is xp.float32 and np.isnan(to_np(r)[1]) and to_np(r)[0] == 1
    r = xp.where(c, np.int32(7), xp.asarray([3, 4], dtype=xp.int8, device=DEVICE))
    assert r.dtype is xp.int8 and to_np(r).tolist() == [7, 4]
    with pytest.raises(TypeError, match="where: x2"):
        xp.where(c, x, np.array([1.0, 2.0]))


def test_where_complex_scalar_promotes_a_real_array():
    c = xp.asarray([True, False], device=DEVICE)
    r = xp.where(c, xp.asarray([1.0, 2.0], dtype=xp.float32, device=DEVICE), 1j)
    assert r.dtype == xp.complex64
    assert to_np(r).tolist() == [1 + 0j, 1j]
