"""sort and argsort: differential tests against a reference sort on the device under test, stability in
both directions, NaN and signed-zero order, ``out=`` and errors."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp

from .strategies import COMPLEX, DEVICE, REAL_NUMERIC, supported, to_np
from .test_statistical import FLOAT_DEFAULT, INDEX, arr, arrays, assert_result


def reference_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable order of the documented convention: NaN sorts as the largest value (last ascending,
    first descending), and equal values (-0.0 and +0.0 among them) keep their original order."""
    moved = np.moveaxis(a, axis, -1)
    out = np.empty(moved.shape, np.int64)
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx].tolist()
        nan = [isinstance(v, float) and math.isnan(v) for v in row]
        keys = [(1, 0) if n else (0, v) for v, n in zip(row, nan)]
        # Python's sort is stable in both directions (reverse=True keeps equal keys in their order)
        out[idx] = sorted(range(len(row)), key=keys.__getitem__, reverse=descending)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("name", ["sort", "argsort"])
@given(data=st.data())
def test_sort_argsort_match_reference(name, data):
    # few distinct values, so that ties (and -0.0 beside +0.0) are frequent
    t, a = data.draw(arrays(REAL_NUMERIC, bound=2.0, min_dims=1, max_side=6))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    stable = data.draw(st.booleans())
    got = getattr(xp, name)(t, axis=axis, descending=descending, stable=stable)
    order = reference_argsort(a, axis, descending)
    expected_values = np.take_along_axis(a, order, axis=axis)
    if name == "argsort":
        assert got.dtype == INDEX and got.shape == a.shape
        idx = to_np(got)
        if stable:
            np.testing.assert_array_equal(idx, order)
        else:
            # any order of ties, but a permutation that sorts
            np.testing.assert_array_equal(np.sort(idx, axis=axis), np.broadcast_to(
                np.arange(a.shape[axis]).reshape([-1 if i == axis % a.ndim else 1 for i in range(a.ndim)]), a.shape))
            np.testing.assert_array_equal(np.take_along_axis(a, idx, axis=axis), expected_values)
    else:
        assert_result(got, expected_values, t.dtype)
        if stable and a.dtype.kind == "f":  # the signs of equal zeros come in their original order
            np.testing.assert_array_equal(np.signbit(to_np(got)), np.signbit(expected_values))


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_keeps_signed_zeros_and_nans_of_a_long_array_in_order(descending):
    # long enough that a fast (unstable) sort's partitioning reorders equal elements (short arrays are
    # insertion-sorted, which is stable anyway): zeros of both signs without NaN, then NaNs of both signs
    # without zeros, so that each of the CPU's two checks for a fast sort must see its own case
    rng = np.random.default_rng(14)
    zeros = rng.choice(np.array([-1.0, 1.0, 2.0, 0.0, -0.0], np.float32), 3000)
    nans = np.where(rng.random(3000) < 0.3, np.copysign(np.float32(np.nan), rng.choice([-1.0, 1.0], 3000)),
                    rng.standard_normal(3000)).astype(np.float32)
    for a in (zeros, nans):
        got = to_np(xp.sort(arr(a), descending=descending))
        expected = np.take_along_axis(a, reference_argsort(a, 0, descending), axis=0)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))
        # (GPU radix sorts order floats by their bits: -NaN came before -inf on CUDA)
        np.testing.assert_array_equal(to_np(xp.argsort(arr(a), descending=descending)),
                                      reference_argsort(a, 0, descending))


def test_sort_examples():
    x = arr([3.0, math.nan, -0.0, 1.0, 0.0, math.nan, -math.inf])
    asc = to_np(xp.sort(x))
    assert asc[:5].tolist() == [-math.inf, 0.0, 0.0, 1.0, 3.0] and np.isnan(asc[5:]).all()
    assert np.signbit(asc[1]) and not np.signbit(asc[2])  # -0.0 came first in x
    desc = to_np(xp.sort(x, descending=True))
    assert np.isnan(desc[:2]).all() and desc[2:].tolist() == [3.0, 1.0, 0.0, 0.0, -math.inf]
    assert np.signbit(desc[4]) and not np.signbit(desc[5])  # stable descending: still -0.0 first
    assert_result(xp.argsort(arr([2, 1, 2, 1]), descending=True), [0, 2, 1, 3], INDEX)
    assert_result(xp.argsort(arr([[2, 1], [0, 5]], dtype=xp.uint8), axis=0), [[1, 0], [0, 1]], INDEX)
    assert_result(xp.sort(xp.zeros((2, 0), device=DEVICE)), np.zeros((2, 0)), FLOAT_DEFAULT)
    assert_result(xp.argsort(xp.zeros((0, 3), device=DEVICE), axis=0), np.zeros((0, 3)), INDEX)


def test_sort_out_and_errors():
    x = arr([[3, 1, 2], [0, -1, 5]], dtype=xp.int16)
    big = xp.zeros((2, 6), dtype=xp.int16, device=DEVICE)
    out = big[:, ::2]
    assert xp.sort(x, out=out) is out
    assert_result(out, [[1, 2, 3], [-1, 0, 5]], xp.int16)
    assert np.all(to_np(big[:, 1::2]) == 0)
    iout = xp.zeros((2, 3), dtype=INDEX, device=DEVICE)
    assert xp.argsort(x, axis=0, descending=True, out=iout) is iout
    assert_result(iout, [[0, 0, 1], [1, 1, 0]], INDEX)
    assert xp.sort(x, out=x) is x  # in place
    assert_result(x, [[1, 2, 3], [-1, 0, 5]], xp.int16)
    with pytest.raises(TypeError):
        xp.sort(x, out=xp.zeros((2, 3), device=DEVICE))
    with pytest.raises(TypeError):
        xp.argsort(x, out=xp.zeros((2, 3), dtype=xp.int16, device=DEVICE))
    with pytest.raises(ValueError):
        xp.argsort(x, out=xp.zeros((3, 2), dtype=INDEX, device=DEVICE))
    for f in (xp.sort, xp.argsort):
        with pytest.raises(IndexError):
            f(x, axis=2)
        with pytest.raises(IndexError):
            f(arr(1.0))
        with pytest.raises(TypeError):
            f(x, axis=None)
        with pytest.raises(TypeError):
            f(x, descending="yes")
        with pytest.raises(TypeError):
            f(x, stable=None)
        with pytest.raises(TypeError):
            f([3, 1])
        for dtype in supported(COMPLEX + [xp.bool]):
            with pytest.raises(TypeError, match=f.__name__):
                f(xp.ones(2, dtype=dtype, device=DEVICE))


def test_sort_capture_and_replay():
    x = arr([3.0, 1.0, 2.0])
    with xp.capture(device=DEVICE) as g:
        s = xp.sort(x)
        i = xp.argsort(x, descending=True)
    x[...] = arr([0.0, 9.0, 4.0])
    g.replay()
    assert_result(s, [0.0, 4.0, 9.0], FLOAT_DEFAULT)
    assert_result(i, [1, 2, 0], INDEX)
