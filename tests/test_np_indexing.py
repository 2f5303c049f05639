"""NumPy's index helpers, sorting extras and 1-D set functions (numr_array/_np_indexing.py) against NumPy
on the device under test."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numr_array as xp

from .np_helpers import RNG, host, on_device, same
from .strategies import to_np


def _all_same(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        same(g, r)


def test_nonzero_forms():
    a = RNG.integers(0, 3, (3, 4, 2))
    same(xp.argwhere(on_device(a)), np.argwhere(a))
    same(xp.flatnonzero(on_device(a)), np.flatnonzero(a))
    same(xp.argwhere(on_device(np.array(0))), np.argwhere(np.array(0)))


def test_ravel_unravel():
    shape = (3, 4, 5)
    flat = RNG.integers(0, 60, 20)
    _all_same(xp.unravel_index(on_device(flat), shape), np.unravel_index(flat, shape))
    coords = np.unravel_index(flat, shape)
    same(xp.ravel_multi_index(tuple(on_device(c) for c in coords), shape), np.ravel_multi_index(coords, shape))
    wild = (coords[0] + 5, coords[1] - 7, coords[2])
    for mode in ("wrap", "clip"):
        same(xp.ravel_multi_index(tuple(on_device(c) for c in wild), shape, mode=mode),
             np.ravel_multi_index(wild, shape, mode=mode))


def test_grids():
    same(xp.indices((2, 3)), np.indices((2, 3)))
    _all_same(xp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True))
    rows, cols = np.array([0, 2]), np.array([True, False, True, True])
    _all_same(xp.ix_(on_device(rows), on_device(cols)), np.ix_(rows, cols))
    m = np.arange(20).reshape(4, 5)
    same(on_device(m)[xp.ix_(on_device(rows), on_device(cols))], m[np.ix_(rows, cols)])


@pytest.mark.parametrize("k", [-2, 0, 1, 3])
def test_triangles_and_diagonals(k):
    _all_same(xp.tril_indices(4, k), np.tril_indices(4, k))
    _all_same(xp.triu_indices(4, k, 6), np.triu_indices(4, k, 6))
    m = np.zeros((3, 5))
    _all_same(xp.tril_indices_from(on_device(m), k), np.tril_indices_from(m, k))
    _all_same(xp.triu_indices_from(on_device(m), k), np.triu_indices_from(m, k))
    _all_same(xp.mask_indices(4, xp.triu, k), np.mask_indices(4, np.triu, k))
    _all_same(xp.diag_indices(3, 3), np.diag_indices(3, 3))
    _all_same(xp.diag_indices_from(on_device(np.zeros((2, 2)))), np.diag_indices_from(np.zeros((2, 2))))


def test_sorting_extras():
    keys = (RNG.integers(0, 3, 12), RNG.integers(0, 3, 12), RNG.integers(0, 2, 12))
    same(xp.lexsort(tuple(on_device(k) for k in keys)), np.lexsort(keys))
    a = RNG.standard_normal((3, 8))
    for kth in (0, 3, [1, 5]):
        p = xp.partition(on_device(a), kth, axis=1)
        ref = np.partition(host(a), kth, axis=1)
        for k in np.atleast_1d(kth):  # the kth elements are NumPy's; the rest only partitioned
            same(p[:, int(k)], ref[:, k])
        ip = xp.argpartition(on_device(a), kth, axis=1)
        same(xp.take_along_axis(on_device(a), ip, axis=1), to_np(p))
    with pytest.raises(ValueError, match="partition: kth"):
        xp.partition(on_device(a), 9)
    same(xp.sort_complex(on_device(np.array([5, 3, 6, 2, 1]))), np.sort_complex(np.array([5, 3, 6, 2, 1])))
    z = np.array([1 + 2j, 1 - 1j, -1 + 0j, 1 + 0j])
    same(xp.sort_complex(on_device(z)), np.sort_complex(host(z)))


@given(st.lists(st.sampled_from([0.0, 1.5, -2.0, 3.0, float("nan"), 7.0]), max_size=12))
def test_unique_flags(values):
    a = np.array(values)
    for flags in [(False, False, False), (True, True, True), (False, True, False), (False, False, True),
                  (True, False, False), (False, True, True)]:
        got = xp.unique(on_device(a), *flags)
        ref = np.unique(host(a), *flags)
        if isinstance(ref, tuple):
            _all_same(got, ref)
        else:
            same(got, ref)
    same(xp.unique(on_device(a), equal_nan=False), np.unique(host(a), equal_nan=False))


@given(st.lists(st.integers(-5, 5), max_size=10), st.lists(st.integers(-5, 5), max_size=10))
def test_set_operations(x, y):
    a, b = np.array(x, dtype=np.int64), np.array(y, dtype=np.int64)
    ta, tb = on_device(a), on_device(b)
    same(xp.intersect1d(ta, tb), np.intersect1d(host(a), host(b)))
    same(xp.union1d(ta, tb), np.union1d(host(a), host(b)))
    same(xp.setdiff1d(ta, tb), np.setdiff1d(host(a), host(b)))
    same(xp.setxor1d(ta, tb), np.setxor1d(host(a), host(b)))
    _all_same(xp.intersect1d(ta, tb, return_indices=True), np.intersect1d(host(a), host(b), return_indices=True))


def test_set_operations_of_floats():
    a, b = np.array([1.5, np.nan, 2.0, 3.0]), np.array([np.nan, 3.0, 4.0])
    same(xp.intersect1d(on_device(a), on_device(b)), np.intersect1d(host(a), host(b)))
    same(xp.setdiff1d(on_device(a), on_device(b)), np.setdiff1d(host(a), host(b)))
    same(xp.setxor1d(on_device(a), on_device(b)), np.setxor1d(host(a), host(b)))
    same(xp.union1d(on_device(a), on_device(b)), np.union1d(host(a), host(b)))
    with pytest.raises(NotImplementedError, match="unique: axis"):
        xp.unique(on_device(a), axis=0)
