"""NumPy's counting functions (numr_array/_np_histograms.py) against NumPy on the device under test."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numr_array as xp

from .np_helpers import RNG, float_data, host, on_device, same


def running_sum_error(w: np.ndarray) -> float:
    """A bound on the rounding error of a weighted count: the difference of two entries of a running sum of
    all the (sorted) weights, computed by a scan of log2(n) levels in their dtype."""
    w = host(w)
    if not w.size or w.dtype.kind != "f":
        return 0.0
    levels = max(1, int(np.ceil(np.log2(w.size))))
    return float(np.finfo(w.dtype).eps) * float(np.sum(np.abs(w), dtype=np.float64)) * levels


@given(st.lists(st.integers(0, 40), max_size=50), st.integers(0, 60), st.booleans())
def test_bincount(values, minlength, weighted):
    x = np.array(values, dtype=np.int64)
    w = RNG.random(x.size) if weighted else None
    got = xp.bincount(on_device(x), None if w is None else on_device(w), minlength=minlength)
    same(got, np.bincount(host(x), None if w is None else host(w), minlength=minlength),
         atol=0.0 if w is None else running_sum_error(w))


def test_bincount_errors():
    with pytest.raises(ValueError, match="bincount: x must be non-negative"):
        xp.bincount(on_device(np.array([1, -1])))
    with pytest.raises(TypeError, match="bincount: x must have an integer dtype"):
        xp.bincount(on_device(np.array([1.0])))
    with pytest.raises(ValueError, match="bincount: x must be 1-D"):
        xp.bincount(on_device(np.array([[1]])))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("decreasing", [False, True])
def test_digitize(right, decreasing):
    bins = np.array([-3.0, -1.0, 0.0, 0.0, 2.5, 7.0])
    if decreasing:
        bins = bins[::-1].copy()
    x = np.concatenate([bins, float_data(30), [-np.inf, np.inf]])
    same(xp.digitize(on_device(x), on_device(bins), right=right), np.digitize(host(x), host(bins), right=right))
    with pytest.raises(ValueError, match="digitize: bins must be monotonically"):
        xp.digitize(on_device(x), on_device(np.array([0.0, 2.0, 1.0])))


@pytest.mark.parametrize("bins", [1, 7, 10])
@pytest.mark.parametrize("range_", [None, (-5.0, 5.0), (2.0, 2.0)])
@pytest.mark.parametrize("density", [False, True])
def test_histogram_equal_bins(bins, range_, density):
    a = float_data(200)
    w = RNG.random(200)
    h, e = xp.histogram(on_device(a), bins, range=range_, density=density)
    hn, en = np.histogram(host(a), bins, range=range_, density=density)
    same(h, hn), same(e, en)
    h, e = xp.histogram(on_device(a), bins, range=range_, weights=on_device(w))
    same(h, np.histogram(host(a), bins, range=range_, weights=host(w))[0], atol=running_sum_error(w))
    same(xp.histogram_bin_edges(on_device(a), bins, range=range_), np.histogram_bin_edges(host(a), bins, range=range_))


def test_histogram_edges_integers_and_constant_data():
    edges = np.array([-10.0, -1.0, 0.0, 0.5, 3.0, 10.0])
    a = np.concatenate([float_data(100), edges])
    h, e = xp.histogram(on_device(a), on_device(edges))
    same(h, np.histogram(host(a), host(edges))[0]), same(e, host(edges))
    i = RNG.integers(-20, 20, 100)
    same(xp.histogram(on_device(i), 6)[0], np.histogram(host(i), 6)[0])
    same(xp.histogram(on_device(i), 6)[1], np.histogram(host(i), 6)[1])
    c = np.full(10, 3.0)
    same(xp.histogram(on_device(c), 4)[0], np.histogram(host(c), 4)[0])


def test_histogram_errors():
    with pytest.raises(ValueError, match="histogram: autodetected range"):
        xp.histogram(on_device(np.array([1.0, np.nan])))
    with pytest.raises(ValueError, match="histogram: bin estimators"):
        xp.histogram(on_device(np.array([1.0])), "auto")
    with pytest.raises(ValueError, match="histogram: max must be larger"):
        xp.histogram(on_device(np.array([1.0])), 3, range=(2, 1))


@pytest.mark.parametrize("bins", [5, (3, 4)])
def test_histogram2d_and_dd(bins):
    x, y, z = float_data(100), float_data(100), float_data(100)
    h, ex, ey = xp.histogram2d(on_device(x), on_device(y), bins)
    hn, exn, eyn = np.histogram2d(host(x), host(y), bins)
    same(h, hn), same(ex, exn), same(ey, eyn)
    h, _, _ = xp.histogram2d(on_device(x), on_device(y), bins, range=[(-5, 5), (-8, 8)], density=True)
    same(h, np.histogram2d(host(x), host(y), bins, range=[(-5, 5), (-8, 8)], density=True)[0])
    sample = np.stack([x, y, z], axis=1)
    h, edges = xp.histogramdd(on_device(sample), (2, 3, 4), weights=on_device(x))
    hn, edges_n = np.histogramdd(host(sample), (2, 3, 4), weights=host(x))
    same(h, hn, atol=running_sum_error(x))
    for got, ref in zip(edges, edges_n):
        same(got, ref)
