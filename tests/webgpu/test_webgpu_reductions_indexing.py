"""Reductions, cumulative functions, indexing (get and set), manipulation, where/clip and contractions on
the WebGPU device, against the CPU backend, over dtypes, axes and views (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
from .helpers import DTYPES, INDEX, NUMERIC, REAL, device_dtype  # noqa: E402


def tol(dtype) -> float:
    return 2e-5 if dtype in (xp.float32, xp.complex64) else 1e-12


def both(f, *arrays):
    """f on the WebGPU device and on the CPU, with the same data (np arrays become tensors)."""
    return (f(*[xp.asarray(a, device=DEV) if isinstance(a, np.ndarray) else a for a in arrays]),
            f(*[xp.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays]))


def same(pair, dtype=None, exact=None):
    got, want = pair
    if isinstance(got, tuple):
        for g, w in zip(got, want):
            same((g, w), dtype, exact)
        return
    assert got.dtype == device_dtype(want.dtype) and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    g, w = to_np(got), to_np(want)
    if exact or g.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=tol(got.dtype), atol=tol(got.dtype), equal_nan=True)


@st.composite
def arrays_and_axes(draw, dtypes, min_side=0):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=min_side, max_side=6))
    if dtype == xp.bool:
        a = draw(hnp.arrays(np.bool_, shape))
    elif dtype.kind in ("i", "u"):
        a = draw(hnp.arrays(dtype, shape, elements=st.integers(0 if dtype.kind[0] == "u" else -9, 9)))
    else:
        a = draw(hnp.arrays(dtype, shape, elements=st.floats(-8, 8, width=32)))
    if draw(st.booleans()) and a.ndim:
        a = a[..., ::-1]
    axis = draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1),
                          st.lists(st.integers(0, a.ndim - 1), unique=True, max_size=a.ndim).map(tuple)))
    return dtype, a, axis


@given(arrays_and_axes(NUMERIC), st.sampled_from(["sum", "prod", "mean", "max", "min", "var", "std"]),
       st.booleans())
def test_statistical_reductions_match_cpu(case, name, keepdims):
    dtype, a, axis = case
    f = getattr(xp, name)
    kinds = {"mean": ("f", "c"), "var": ("f",), "std": ("f",),
             "max": ("i", "u", "f"),
             "min": ("i", "u", "f")}.get(name)
    if kinds and dtype.kind not in kinds:
        with pytest.raises(TypeError):
            f(xp.asarray(a, device=DEV), axis=axis)
        return
    try:
        want = f(xp.asarray(a), axis=axis, keepdims=keepdims)
    except ValueError:  # max/min over nothing
        with pytest.raises(ValueError):
            f(xp.asarray(a, device=DEV), axis=axis, keepdims=keepdims)
        return
    got = f(xp.asarray(a, device=DEV), axis=axis, keepdims=keepdims)
    same((got, want))


@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std_of_equal_values_are_zero(keepdims):
    """The mean is shifted by each reduction's first element, so equal values have an exact mean and a
    variance of exactly 0 (a plain sum / K gave 2 ulp of 10.28832, and NumPy's float32 std gives 1)."""
    a = np.empty((2, 12, 3), np.float32)
    a[...] = np.array([10.28832, 11.0236435, 1e30], np.float32)  # equal along axis 1, and (0, 1)'s column
    x = xp.asarray(a, device=DEV)
    for axis in (1, (0, 1)):
        for f in (xp.var, xp.std):
            for correction in (0, 1):
                got = to_np(f(x, axis=axis, keepdims=keepdims, correction=correction))
                np.testing.assert_array_equal(got, np.zeros_like(np.var(a, axis=axis, keepdims=keepdims)))


@given(arrays_and_axes(DTYPES), st.sampled_from(["all", "any", "count_nonzero"]))
def test_logical_reductions_match_cpu(case, name):
    dtype, a, axis = case
    same(both(lambda x: getattr(xp, name)(x, axis=axis), a))


def test_reductions_into_out_and_over_long_axes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 70000)).astype(np.float32)
    same(both(lambda x: xp.sum(x, axis=1), a))
    same(both(lambda x: xp.max(x), a))
    same(both(lambda x: xp.mean(x, axis=0), a))
    b = rng.integers(-100, 100, 200000).astype(np.int8)
    same(both(lambda x: xp.sum(x), b))
    out = xp.empty((3,), dtype=xp.float32, device=DEV)
    r = xp.sum(xp.asarray(a, device=DEV), axis=1, out=out)
    assert r is out
    np.testing.assert_allclose(to_np(out), a.sum(axis=1), rtol=1e-4, atol=1e-3)
    e = np.zeros((4, 0), np.float32)
    same(both(lambda x: xp.sum(x, axis=1), e))
    same(both(lambda x: xp.prod(x, axis=1), e))
    same(both(lambda x: xp.all(x, axis=1), e))


@given(arrays_and_axes(NUMERIC, min_side=1), st.booleans())
def test_cumulative_and_diff_match_cpu(case, include_initial):
    dtype, a, axis = case
    ax = axis if isinstance(axis, int) else -1
    same(both(lambda x: xp.cumulative_sum(x, axis=ax, include_initial=include_initial), a))
    if dtype.kind != "c" and a.shape[ax] <= 5:
        same(both(lambda x: xp.cumulative_prod(x, axis=ax), a))
    same(both(lambda x: xp.diff(x, axis=ax), a))
    same(both(lambda x: xp.diff(x, axis=ax, n=2, prepend=x, append=x), a))


def test_cumulative_copies_the_first_element():
    """The first element of each line is copied, not combined with the identity: 1 * (inf+0j) is inf+nanj,
    0 + -0.0 is +0.0 (found by the generic tests)."""
    a = np.array([[np.inf, 2.0, -0.0], [-0.0, -0.0, np.nan]], np.float32)
    for f in (xp.cumulative_sum, xp.cumulative_prod):
        for axis in (0, 1):
            for dtype in [d for d in (xp.float32, xp.float64, xp.complex64, xp.complex128) if d in DTYPES]:
                for incl in (False, True):
                    got, want = both(lambda x: f(x, axis=axis, dtype=dtype, include_initial=incl), a)
                    g, w = to_np(got), to_np(want)
                    for part in ((np.real, np.imag) if g.dtype.kind == "c" else (np.real,)):
                        np.testing.assert_array_equal(part(g), part(w), err_msg=f"{f.__name__} {dtype} {axis}")
                        assert (np.signbit(part(g)) == np.signbit(part(w)))[~np.isnan(part(w))].all(), (g, w)


@st.composite
def index_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    a = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    kind = draw(st.sampled_from(["ints", "two", "mask", "mixed", "slice+array"]))
    idx_dtype = draw(st.sampled_from([d for d in (xp.int8, xp.int32, xp.int64, xp.uint8) if d in DTYPES]))
    n0 = shape[0]
    lo = 0 if idx_dtype.kind == "u" else -n0
    ints = np.array(draw(st.lists(st.integers(lo, n0 - 1), min_size=1, max_size=6)), dtype=idx_dtype)
    if kind == "ints":
        key = lambda d: (xp.asarray(ints, device=d),)
    elif kind == "two" and len(shape) > 1:
        j = np.array([draw(st.integers(-shape[1], shape[1] - 1)) for _ in ints], dtype=INDEX)
        key = lambda d: (xp.asarray(ints, device=d), xp.asarray(j, device=d))
    elif kind == "mask":
        m = draw(hnp.arrays(np.bool_, shape[:1 + draw(st.integers(0, len(shape) - 1))]))
        key = lambda d: (xp.asarray(m, device=d),)
    elif kind == "mixed" and len(shape) > 1:
        key = lambda d: (slice(None), xp.asarray(np.clip(ints, 0, shape[1] - 1), device=d))
    else:
        key = lambda d: (slice(None, None, -1), xp.asarray(ints, device=d)) if len(shape) == 1 else (
            slice(1, None), xp.asarray(ints, device=d)[:, None]) if len(shape) > 1 else (xp.asarray(ints, device=d),)
    return dtype, a, key


def _key(k, d):
    return tuple(xp.asarray(e, device=d) if type(e) is xp.Tensor else e for e in k)


@given(index_cases())
def test_integer_and_mask_indexing_get_and_set(case):
    dtype, a, key = case
    try:
        want = xp.asarray(a)[key("cpu")]
    except IndexError:
        with pytest.raises(IndexError):
            xp.asarray(a, device=DEV)[key(DEV)]
        return
    got = xp.asarray(a, device=DEV)[key(DEV)]
    same((got, want), exact=True)
    # scatter: a tensor of the indexed shape, and a scalar
    xg, xc = xp.asarray(a, device=DEV), xp.asarray(a)
    vals = np.arange(want.size).reshape(want.shape).astype(dtype)[::-1]
    xg[key(DEV)] = xp.asarray(vals, device=DEV)
    xc[key("cpu")] = xp.asarray(vals)
    if len({tuple(np.ravel(to_np(t))) for t in (xg, xc)}) > 1:  # repeated indices: any one write may win
        assert set(to_np(xg).ravel()) <= set(np.concatenate([a.ravel(), vals.ravel()]))
    scalar = True if dtype == xp.bool else 3
    xg[key(DEV)] = scalar
    xc[key("cpu")] = scalar
    same((xg, xc), exact=True)


def test_take_take_along_axis_nonzero_repeat_roll_match_cpu():
    rng = np.random.default_rng(2)
    for dtype in DTYPES:
        a = rng.integers(0, 50, (4, 5, 3)).astype(dtype)
        idx = np.array([3, -1, 0, 2], np.int32)
        same(both(lambda x: xp.take(x, xp.asarray(idx, device=x.device), axis=1), a), exact=True)
        order = np.argsort(a.real if a.dtype.kind == "c" else a, axis=1).astype(INDEX)
        same(both(lambda x: xp.take_along_axis(x, xp.asarray(order, device=x.device), axis=1), a), exact=True)
        same(both(lambda x: xp.nonzero(x), a), exact=True)
        same(both(lambda x: xp.repeat(x, xp.asarray(np.array([2, 0, 1], INDEX), device=x.device), axis=2), a),
             exact=True)
        same(both(lambda x: xp.repeat(x, 3), a), exact=True)
        same(both(lambda x: xp.roll(x, 7), a), exact=True)
        same(both(lambda x: xp.roll(x, (1, -2), axis=(0, 2)), a), exact=True)


def test_manipulation_functions_match_cpu():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = -a
    for f in [lambda x, y: xp.concat([x, y], axis=1), lambda x, y: xp.stack([x, y]),
              lambda x, y: xp.flip(x, axis=(0, 2)),
              lambda x, y: xp.reshape(x[:, ::-1], (4, 6)), lambda x, y: xp.tile(x, (2, 1, 1)),
              lambda x, y: xp.moveaxis(x, 0, -1), lambda x, y: xp.broadcast_to(x[:1], (3, 3, 4)),
              lambda x, y: xp.squeeze(x[:1], axis=0), lambda x, y: xp.expand_dims(x, axis=1),
              lambda x, y: xp.permute_dims(x, (2, 0, 1))]:
        same(both(f, a, b), exact=True)
    same(both(lambda x, y: xp.unstack(x, axis=1), a, b), exact=True)


@given(arrays_and_axes(REAL), st.integers(-5, 5), st.integers(-3, 9))
def test_where_and_clip_match_cpu(case, lo, hi):
    dtype, a, _ = case
    cond = (np.arange(a.size).reshape(a.shape) % 3) == 0
    same(both(lambda c, x: xp.where(c, x, x[..., ::-1]), cond, a), exact=True)
    same(both(lambda c, x: xp.where(c, x, 1), cond, a), exact=True)
    if dtype.kind == "u":
        lo = abs(lo)
    same(both(lambda x: ew.clip(x, lo, hi), a), exact=True)
    same(both(lambda x: ew.clip(x, min=x[..., :1]), a), exact=True)


@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: d.name)
def test_matmul_tensordot_vecdot_match_cpu(dtype):
    rng = np.random.default_rng(5)
    mk = lambda *s: rng.integers(-3, 4, s).astype(dtype) if dtype.kind != "u" else (
        rng.integers(0, 4, s).astype(dtype))
    for s1, s2 in [((3, 4), (4, 2)), ((4,), (4, 5)), ((2, 3, 4), (4,)), ((5,), (5,)), ((2, 1, 3, 4), (3, 4, 2))]:
        same(both(xp.matmul, mk(*s1), mk(*s2)))
    same(both(lambda x, y: xp.tensordot(x, y, axes=([1, 0], [0, 2])), mk(3, 4, 2), mk(4, 5, 3)))
    same(both(lambda x, y: xp.vecdot(x, y), mk(3, 4), mk(2, 1, 4)))
