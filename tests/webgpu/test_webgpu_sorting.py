"""sort, argsort, searchsorted, unique_* and isin on the WebGPU device against the CPU backend: every
dtype, axes, views, NaN, signed zeros and infinities, ties (stability in both directions), empty and
size-1 inputs, lines long enough for the global stages of the bitonic network, and no host readback."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import k_sort  # noqa: E402

DEV = "webgpu:0"
from .helpers import DTYPES, WIDEST, device_dtype, needs_dtype, supported_promotion  # noqa: E402
REAL = [d for d in DTYPES if d.kind in ("i", "u", "f")]
INTEGER = [d for d in REAL if d.kind != "f"]
SPECIAL = [math.nan, -math.nan, 0.0, -0.0, math.inf, -math.inf]


def client():
    return xp.asarray(0, device=DEV)._dev.client


def on_both(f, *arrays, reads: int = 0):
    """f on the WebGPU device (asserting that it reads back only the namespace's ``reads``) and on the
    CPU, same data."""
    args = [xp.asarray(a, device=DEV) if isinstance(a, np.ndarray) else a for a in arrays]
    c = client()
    before = c.readbacks
    got = f(*args)
    assert c.readbacks == before + reads, "a kernel read device data back to the host"
    return got, f(*[xp.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays])


def same(got, want):
    assert got.dtype == device_dtype(want.dtype) and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    g, w = to_np(got), to_np(want)
    np.testing.assert_array_equal(g, w)
    if g.dtype.kind in "fc":  # bit-exact: the signs of zeros too
        np.testing.assert_array_equal(np.signbit(g.real), np.signbit(w.real))
        np.testing.assert_array_equal(np.signbit(np.imag(g)), np.signbit(np.imag(w)))


def values(draw, dtype, shape) -> np.ndarray:
    """Few distinct values (ties are frequent), with NaN, both zeros and infinities for floats."""
    if dtype == xp.bool:
        return draw(hnp.arrays(np.bool_, shape))
    if dtype.kind in ("i", "u"):
        info = np.iinfo(dtype)
        elems = st.sampled_from([info.min, info.max, 0, 1, 2, info.max // 2, info.min // 2 + 3])
        return draw(hnp.arrays(dtype, shape, elements=elems))
    real = st.sampled_from([1.5, -2.0, 3.0] + SPECIAL)
    if dtype.kind == "c":
        return draw(hnp.arrays(dtype, shape, elements=st.builds(complex, real, real)))
    return draw(hnp.arrays(dtype, shape, elements=real))


@st.composite
def cases(draw, dtypes, min_dims=1):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=0, max_side=7)) if min_dims else \
        draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7))
    a = values(draw, dtype, shape)
    if a.ndim and draw(st.booleans()):  # a strided, reversed view
        a = a[..., ::-2]
    return dtype, a


@settings(max_examples=60, deadline=None)
@given(cases(REAL), st.data())
def test_sort_argsort_match_cpu(case, data):
    _, a = case
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    for f in (xp.sort, xp.argsort):
        same(*on_both(lambda t, f=f: f(t, axis=axis, descending=descending), a))


def _stable_order(a: np.ndarray, descending: bool) -> np.ndarray:
    return a.size - 1 - np.flip(np.argsort(np.flip(a), kind="stable")) if descending else np.argsort(a, kind="stable")


@pytest.mark.parametrize("dtype,n", [("float32", 4095), ("float32", 4097), ("float32", 3 * 4096 + 5),
                                     ("float32", (1 << 17) + 3), ("int8", 9000), ("uint16", 20000),
                                     ("float64", 20000), ("int64", 5000), ("uint64", 3000)])
def test_long_lines(dtype, n):
    needs_dtype(getattr(xp, dtype))
    # long enough for the stages that go through global memory (several per launch)
    rng = np.random.default_rng(n)
    a = rng.integers(0, 50, n).astype(dtype)
    if a.dtype.kind == "f":
        a[rng.integers(0, n, n // 10)] = np.nan
        a[rng.integers(0, n, n // 10)] = -0.0
        a -= 25
    t = xp.asarray(a, device=DEV)
    for descending in (False, True):
        np.testing.assert_array_equal(to_np(xp.argsort(t, descending=descending)), _stable_order(a, descending))
    same(*on_both(lambda t: xp.sort(t, descending=True), a))


@contextlib.contextmanager
def radix_everywhere():
    """Every single-line sort takes the radix path (normally only lines of RADIX_MIN or more), counted."""
    calls = []
    saved, radix = k_sort.RADIX_MIN, k_sort._radix
    k_sort.RADIX_MIN = 1
    k_sort._radix = lambda *args: (calls.append(args[2]), radix(*args))
    try:
        yield calls
    finally:
        k_sort.RADIX_MIN, k_sort._radix = saved, radix


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "int32", "float64", "int64", "uint64"])
def test_radix_sort_across_tiles(dtype):
    needs_dtype(getattr(xp, dtype))
    # tile edges (2048 elements), few distinct values (ties keep their order), NaN and both zeros
    rng = np.random.default_rng(7)
    for n in (1, 2, 2047, 2048, 2049, 6001):
        a = rng.integers(0, 40, n).astype(dtype)
        if a.dtype.kind == "f":
            a[rng.integers(0, n, n // 7 + 1)] = np.nan
            a[rng.integers(0, n, n // 7 + 1)] = -0.0
            a -= 20
        t = xp.asarray(a, device=DEV)
        with radix_everywhere() as calls:
            for descending in (False, True):
                got = to_np(xp.argsort(t, descending=descending))
                np.testing.assert_array_equal(got, _stable_order(a, descending), err_msg=f"{dtype} n={n}")
            same(*on_both(lambda t: xp.sort(t), a))
        assert len(calls) >= 3


@settings(max_examples=40, deadline=None)
@given(cases(DTYPES, min_dims=1))
def test_radix_unique_all_matches_cpu(case):
    _, a = case
    a = a.reshape(-1)  # one line: the keys of every dtype (complex: five words) through the radix passes
    with radix_everywhere() as calls:
        for got, want in zip(*on_both(xp.unique_all, a, reads=int(a.size > 0))):
            same(got, want)
    assert calls or a.size == 0


@pytest.mark.parametrize("shape,axis", [((777, 3), 1), ((777, 3), 0), ((5, 1), 1), ((1, 1), 0), ((3, 1000, 2), 1),
                                        ((300, 33), 1)])
def test_many_lines(shape, axis):
    # lines shorter than a tile share it; all lines go in one dispatch
    a = np.random.default_rng(0).integers(-3, 3, shape).astype(np.float32)
    for descending in (False, True):
        same(*on_both(lambda t, d=descending: xp.argsort(t, axis=axis, descending=d), a))
        same(*on_both(lambda t, d=descending: xp.sort(t, axis=axis, descending=d), a))


def test_sort_into_its_input():
    a = np.array([[3.0, -0.0, 1.0, 0.0], [np.nan, 2.0, -1.0, 2.0]], WIDEST)
    t = xp.asarray(a, device=DEV)
    xp.sort(t, axis=1, out=t)
    same(t, xp.sort(xp.asarray(a), axis=1))


@settings(max_examples=60, deadline=None)
@given(cases(DTYPES, min_dims=0))
def test_unique_all_matches_cpu(case):
    _, a = case
    # the namespace reads the number of unique values
    for got, want in zip(*on_both(xp.unique_all, a, reads=int(a.size > 0))):
        same(got, want)


@pytest.mark.parametrize("dtype", ["complex128", "complex64", "bool", "uint8"])
def test_unique_long(dtype):
    needs_dtype(getattr(xp, dtype))
    rng = np.random.default_rng(1)
    parts = np.array([0.0, -0.0, 1.0, np.nan, -np.inf])[rng.integers(0, 5, (2, 20000))]
    a = (parts[0] + 1j * parts[1]).astype(dtype) if dtype.startswith("complex") else \
        rng.integers(0, 7, 20000).astype(dtype)
    for got, want in zip(*on_both(xp.unique_all, a.reshape(100, 200)[:, ::-1], reads=1)):
        same(got, want)


@st.composite
def search_cases(draw):
    d1 = draw(st.sampled_from(REAL))
    d2 = draw(st.sampled_from([d for d in REAL if supported_promotion(d1, d)]))
    x1 = values(draw, d1, (draw(st.integers(0, 9)),))
    x2 = values(draw, d2, draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5)))
    return x1, x2


@settings(max_examples=60, deadline=None)
@given(search_cases(), st.sampled_from(["left", "right"]),
       st.sampled_from([None] + [d for d in ("int8", "uint32", "int64") if getattr(xp, d) in DTYPES]))
def test_searchsorted_matches_cpu(case, side, sorter_dtype):
    x1, x2 = case
    if sorter_dtype is None:
        same(*on_both(lambda a, b: xp.searchsorted(a, b, side=side), np.sort(x1), x2))
    else:
        sorter = np.argsort(x1, kind="stable").astype(sorter_dtype)
        same(*on_both(lambda a, b, s: xp.searchsorted(a, b, side=side, sorter=s), x1, x2, sorter))


def test_searchsorted_scalars_and_views():
    x1 = np.array([-np.inf, -1.0, -0.0, 0.0, 0.0, 2.0, np.inf, np.nan, np.nan], WIDEST)
    for v in (0.0, -0.0, 2.0, np.inf, np.nan, -5.0):
        for side in ("left", "right"):
            same(*on_both(lambda a, v=v, side=side: xp.searchsorted(a, float(v), side=side), x1))
    same(*on_both(lambda a, b: xp.searchsorted(a[::2], b[::-1]), x1, x1))


@settings(max_examples=60, deadline=None)
@given(st.data(), st.booleans())
def test_isin_matches_cpu(data, invert):
    d1 = data.draw(st.sampled_from(INTEGER))
    d2 = data.draw(st.sampled_from([d for d in INTEGER if supported_promotion(d1, d)]))
    x1 = values(data.draw, d1, data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    x2 = values(data.draw, d2, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6)))
    same(*on_both(lambda a, b: xp.isin(a, b, invert=invert), x1, x2))


@pytest.mark.parametrize("dtype, bound", [("int64", 10 ** 12), ("int32", 10 ** 9)])
def test_isin_large_set_and_scalars(dtype, bound):
    needs_dtype(getattr(xp, dtype))
    rng = np.random.default_rng(2)
    x2 = rng.integers(-bound, bound, 10000).astype(dtype)
    x1 = np.concatenate([x2[::7], rng.integers(-bound, bound, 501).astype(dtype)]).reshape(-1, 2)
    same(*on_both(xp.isin, x1, x2))
    same(*on_both(lambda b: xp.isin(int(x2[3]), b), x2))
    same(*on_both(lambda a: xp.isin(a, 5, invert=True), np.arange(10, dtype=dtype)))


def test_sort_and_search_capture_replay():
    a = np.array([3.0, np.nan, -1.0, 0.0, -0.0, 2.0], np.float32)
    t = xp.asarray(a, device=DEV)
    probe = xp.asarray(np.array([0.0, 2.5, np.nan], np.float32), device=DEV)
    with xp.capture(DEV) as g:
        s = xp.sort(t)
        i = xp.searchsorted(s, probe, side="right")
        m = xp.isin(xp.astype(xp.argsort(t), xp.int32), xp.asarray(np.array([0, 5], np.int32), device=DEV))
    b = np.array([1.0, -2.0, np.inf, 0.5, np.nan, 0.0], np.float32)
    t[...] = xp.asarray(b, device=DEV)
    g.replay()
    np.testing.assert_array_equal(to_np(s), np.sort(b))
    np.testing.assert_array_equal(to_np(i), np.searchsorted(np.sort(b), to_np(probe), side="right"))
    np.testing.assert_array_equal(to_np(m), np.isin(np.argsort(b, kind="stable"), [0, 5]))
