"""Set functions (unique_all, unique_counts, unique_inverse, unique_values, isin): differential tests
against NumPy on the device under test, the standard's NaN and signed-zero rules, and errors."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp

from .strategies import ALL, DEVICE, INTEGER, REAL_FLOAT, supported, to_np
from .helpers import needs_dtype, supported_promotion
from .test_statistical import INDEX, INT, arr, arrays, assert_result


def expected_unique(a: np.ndarray):
    """(values, first indices, inverse, counts) by the standard's value equality: each NaN (and each
    complex value with a NaN part) distinct, -0.0 and +0.0 one value (the first occurring), ascending."""
    flat = a.reshape(-1)
    nan = np.isnan(flat) if flat.dtype.kind in "fc" else np.zeros(flat.shape, bool)
    # NumPy's unique merges NaNs and ignores the sign of zeros: use it for the non-NaN values only
    values, first, inverse, counts = np.unique(flat[~nan], return_index=True, return_inverse=True,
                                               return_counts=True)
    kept = np.flatnonzero(~nan)
    first = kept[first]
    values = flat[first]  # the first occurrence's sign of zero
    nan_at = np.flatnonzero(nan)
    full_inverse = np.empty(flat.shape, np.int64)
    full_inverse[kept] = inverse
    full_inverse[nan_at] = len(values) + np.arange(len(nan_at))
    return (np.concatenate([values, flat[nan_at]]), np.concatenate([first, nan_at]),
            full_inverse.reshape(a.shape), np.concatenate([counts, np.ones(len(nan_at), np.int64)]))


def sort_key(values: np.ndarray) -> np.ndarray:
    """A permutation putting unique values in one canonical order (NaNs last), to compare sets."""
    return np.argsort(values, kind="stable")


@given(data=st.data())
def test_unique_all_matches_reference(data):
    # few distinct values, so that repeats, NaNs and both zeros are common
    t, a = data.draw(arrays(ALL, bound=2.0, max_side=4))
    values, indices, inverse, counts = xp.unique_all(t)
    ev, ei, einv, ec = expected_unique(a)
    # the order of unique values is implementation-defined: compare through each one's own order
    v = to_np(values)
    assert_result(values, v, t.dtype)
    assert values.shape == ev.shape
    p, q = sort_key(v), sort_key(ev)
    np.testing.assert_array_equal(v[p], ev[q])
    if a.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(v[p]), np.signbit(ev[q]))
    assert_result(indices, to_np(indices), INDEX)
    np.testing.assert_array_equal(to_np(indices)[p], ei[q])
    np.testing.assert_array_equal(to_np(counts)[p], ec[q])
    assert counts.dtype == INDEX
    # inverse: each element's unique value, by position
    assert inverse.shape == a.shape and inverse.dtype == INDEX
    rank = np.empty(len(p), np.int64)
    rank[p] = np.arange(len(p))
    erank = np.empty(len(q), np.int64)
    erank[q] = np.arange(len(q))
    np.testing.assert_array_equal(rank[to_np(inverse)] if a.size else to_np(inverse), erank[einv] if a.size else einv)


@given(data=st.data())
def test_unique_values_counts_inverse_agree_with_unique_all(data):
    t, a = data.draw(arrays(ALL, bound=2.0, max_side=4))
    values, indices, inverse, counts = xp.unique_all(t)
    assert_result(xp.unique_values(t), to_np(values), t.dtype)
    uc = xp.unique_counts(t)
    assert uc._fields == ("values", "counts")
    assert_result(uc.values, to_np(values), t.dtype)
    assert_result(uc.counts, to_np(counts), INDEX)
    ui = xp.unique_inverse(t)
    assert ui._fields == ("values", "inverse_indices")
    assert_result(ui.inverse_indices, to_np(inverse), INDEX)
    # the inverse reconstructs x (up to the sign of zeros)
    with np.errstate(invalid="ignore"):
        recon = to_np(ui.values)[to_np(ui.inverse_indices)]
    np.testing.assert_array_equal(recon, a)


def test_unique_special_cases():
    x = arr([[math.nan, 0.0, -0.0], [math.nan, 1.0, 0.0]])
    r = xp.unique_all(x)
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    v = to_np(r.values)
    assert v[:2].tolist() == [0.0, 1.0] and np.isnan(v[2:]).all() and len(v) == 4
    assert not np.signbit(v[0])  # +0.0 occurs first
    assert to_np(r.counts).tolist() == [3, 1, 1, 1]
    assert to_np(r.indices).tolist() == [1, 4, 0, 3]
    assert to_np(r.inverse_indices).tolist() == [[2, 0, 0], [3, 1, 0]]
    assert np.signbit(to_np(xp.unique_values(arr([-0.0, 0.0])))).tolist() == [True]
    c = to_np(xp.unique_counts(arr([complex(math.nan, 1), complex(1, math.nan), 1 + 1j, 1 + 1j])).counts)
    assert sorted(c.tolist()) == [1, 1, 2]
    e = xp.unique_all(xp.zeros((2, 0), dtype=xp.int8, device=DEVICE))
    assert [t.shape for t in e] == [(0,), (0,), (2, 0), (0,)]
    assert e.values.dtype == xp.int8 and e.counts.dtype == INDEX
    # long runs of ties: the indices are first occurrences however the device sorts
    big = np.tile(np.array([3.0, 1.0, -0.0, 2.0, 0.0]), 2000)[::-1].copy()
    r = xp.unique_all(arr(big))
    assert to_np(r.values).tolist() == [0.0, 1.0, 2.0, 3.0] and np.signbit(to_np(r.values)[0]) == np.signbit(big[0])
    assert to_np(r.indices).tolist() == [0, 3, 1, 4]
    assert to_np(r.counts).tolist() == [4000, 2000, 2000, 2000]
    assert_result(xp.unique_values(arr(5)), [5], INT)  # 0-D flattens to one element
    assert_result(xp.unique_inverse(arr(True)).inverse_indices, 0, INDEX)


def test_unique_errors_and_capture():
    with pytest.raises(TypeError):
        xp.unique_values([1, 2])
    x = arr([1, 2, 2])
    for f in (xp.unique_values, xp.unique_counts, xp.unique_inverse, xp.unique_all):
        with pytest.raises(xp.CaptureError, match=f.__name__):
            with xp.capture(device=DEVICE):
                f(x)
    assert_result(xp.unique_values(x), [1, 2], INT)  # the device is usable after the aborts


@given(data=st.data())
def test_isin_matches_numpy(data):
    t1, a1 = data.draw(arrays(INTEGER, bound=2.0))
    partners = [d for d in supported(INTEGER) if _promotes(d, t1.dtype)]
    t2, a2 = data.draw(arrays(partners, max_side=4))
    # values from x2 in x1 as well, so that both outcomes are common
    if a2.size and a1.size:
        k = data.draw(st.integers(0, min(a1.size, a2.size)))
        flat = a1.reshape(-1)
        flat[:k] = a2.reshape(-1)[:k].astype(a1.dtype)
        t1 = xp.asarray(flat.reshape(a1.shape), device=DEVICE)
        a1 = flat.reshape(a1.shape)
    invert = data.draw(st.booleans())
    if not supported_promotion(t1.dtype, t2.dtype):  # (int8 with uint32 on a device without int64)
        with pytest.raises(TypeError, match="isin"):
            xp.isin(t1, t2, invert=invert)
        return
    assert_result(xp.isin(t1, t2, invert=invert), np.isin(a1, a2, invert=invert), xp.bool)


def _promotes(a, b) -> bool:
    try:
        xp.result_type(a, b)
        return True
    except TypeError:
        return False


@given(data=st.data())
def test_isin_with_python_ints(data):
    t, a = data.draw(arrays(INTEGER, max_side=4))
    info = np.iinfo(a.dtype)
    v = data.draw(st.sampled_from(a.reshape(-1).tolist() or [0]) | st.integers(int(info.min), int(info.max)))
    invert = data.draw(st.booleans())
    assert_result(xp.isin(t, v, invert=invert), np.isin(a, v, invert=invert), xp.bool)
    assert_result(xp.isin(v, t, invert=invert), np.isin(v, a, invert=invert), xp.bool)


def test_isin_examples_and_errors():
    x1 = arr([[1, 2], [3, 4]], dtype=xp.int16)
    x2 = arr([4, 1, 9], dtype=xp.uint8)
    assert_result(xp.isin(x1, x2), [[True, False], [False, True]], xp.bool)
    assert_result(xp.isin(x1, x2, invert=True), [[False, True], [True, False]], xp.bool)
    assert_result(xp.isin(3, x1), True, xp.bool)
    assert_result(xp.isin(x1, xp.zeros(0, dtype=xp.int16, device=DEVICE)), np.zeros((2, 2), bool), xp.bool)
    out = xp.ones((2, 2), dtype=xp.bool, device=DEVICE)
    assert xp.isin(x1, 2, out=out) is out
    assert_result(out, [[False, True], [False, False]], xp.bool)
    with pytest.raises(TypeError):
        xp.isin(1, 2)
    with pytest.raises(TypeError):
        xp.isin(arr([1.0]), arr([1.0]))
    for dtype in supported(REAL_FLOAT + [xp.bool]):
        with pytest.raises(TypeError, match="isin"):
            xp.isin(xp.ones(2, dtype=dtype, device=DEVICE), x1)
    with pytest.raises(TypeError):
        xp.isin(x1, 1.0)
    with pytest.raises(OverflowError):
        xp.isin(x2, 300)
    with pytest.raises(TypeError):
        xp.isin(x1, x2, invert=1)
    with pytest.raises(ValueError):
        xp.isin(x1, x2, out=xp.ones((3,), dtype=xp.bool, device=DEVICE))
    needs_dtype(xp.int64, xp.uint64, xp.float64)
    # int64 with uint64 compare as NumPy compares them (the standard leaves the promotion open)
    assert_result(xp.isin(arr([1, 5], dtype=xp.int64), arr([1], dtype=xp.uint64)), [True, False], xp.bool)


def test_isin_cross_device(fake_backend):
    with pytest.raises(ValueError, match="device"):
        xp.isin(xp.ones(3, dtype=xp.int8, device="fake:0"), xp.ones(2, dtype=xp.int8, device="fake:1"))
