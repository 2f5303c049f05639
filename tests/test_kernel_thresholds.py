"""Reductions, arg-reductions, scans and sorts at the sizes where the backends change kernels (one invocation
per output or a workgroup per output, a reduction split into parts, a scan in blocks, lines walked by one
invocation), each operand in any layout, into a new array or an out= of NaN: against NumPy. The
differential tests of the families draw small shapes; these draw sizes on both sides of each threshold,
as tests/test_linalg.py's ``test_matmul_at_the_kernels_thresholds`` does for products."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, strategies as st

import numr_array as xp

from .strategies import DEVICE, laid_out, to_np
from .helpers import dtypes

#: lengths on both sides of the kernels' thresholds: a scan's one-invocation lines (8), a warp, the
#: one-invocation-per-output reductions (32 reduced elements), a workgroup (256), the outputs past which
#: every reduction is walked by one invocation each (16384)
EDGES = [1, 2, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1000, 4097, 16383, 16384, 20000]
DTYPES = [d for d in (xp.float32, xp.float64, xp.int32, xp.int64) if d in dtypes(DEVICE)]


def matrices(data) -> tuple:
    """(tensor, array, dtype) of an m x n matrix, m and n from EDGES (at most 2M elements)."""
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    m, n = data.draw(st.sampled_from(EDGES), label="m"), data.draw(st.sampled_from(EDGES), label="n")
    assume(m * n <= 2_000_000)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    if dtype.kind == "f":
        a = rng.standard_normal((m, n)).astype(dtype.name)
    else:
        a = rng.integers(-100, 100, (m, n)).astype(dtype.name)
    x = data.draw(laid_out(a), label="x")
    return x, a, dtype


def close(got: np.ndarray, want: np.ndarray, dtype, terms: int) -> None:
    """Exact for integers; for floats within the rounding of a ``terms``-term sum of values about 1."""
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    eps = np.finfo(dtype.name).eps
    scale = max(1.0, np.abs(want).max(initial=0))
    np.testing.assert_allclose(got, want, rtol=0, atol=8 * eps * max(terms, 1) ** 0.5 * scale)


@given(st.data())
def test_reductions_at_the_kernels_thresholds(data):
    x, a, dtype = matrices(data)
    op = data.draw(st.sampled_from(["sum", "max", "min", "mean", "argmin", "argmax"]), label="op")
    axis = data.draw(st.sampled_from([0, 1, -1, None] + ([(0, 1)] if not op.startswith("arg") else [])), label="axis")
    assume(not (op == "mean" and dtype.kind != "f"))
    keepdims = data.draw(st.booleans(), label="keepdims") if not op.startswith("arg") or axis is not None else False
    fn = getattr(xp, op)
    ref = getattr(np, op)
    wide = a.astype(np.float64) if dtype.kind == "f" else a
    want = ref(wide, axis=axis, keepdims=keepdims)
    got = to_np(fn(x, axis=axis, keepdims=keepdims))
    if op.startswith("arg"):
        np.testing.assert_array_equal(got, want)
        return
    terms = a.size if axis is None or axis == (0, 1) else a.shape[axis]
    if dtype.kind != "f" and op == "sum":
        want = want.astype(got.dtype)
    close(got, np.asarray(want).astype(got.dtype) if dtype.kind != "f" else want, dtype, terms)


@given(st.data())
def test_cumulative_sums_at_the_kernels_thresholds(data):
    x, a, dtype = matrices(data)
    axis = data.draw(st.sampled_from([0, 1]), label="axis")
    include_initial = data.draw(st.booleans(), label="include_initial")
    want = np.cumsum(a.astype(np.float64) if dtype.kind == "f" else a, axis=axis)
    if include_initial:
        want = np.concatenate([np.zeros_like(np.take(want, [0], axis=axis)), want], axis=axis)
    got = to_np(xp.cumulative_sum(x, axis=axis, include_initial=include_initial))
    close(got, want.astype(got.dtype) if dtype.kind != "f" else want, dtype, a.shape[axis])


@given(st.data())
def test_sorts_at_the_kernels_thresholds(data):
    x, a, dtype = matrices(data)
    axis = data.draw(st.sampled_from([0, 1, -1]), label="axis")
    descending = data.draw(st.booleans(), label="descending")
    want = np.sort(a, axis=axis)
    if descending:
        want = np.flip(want, axis=axis)
    np.testing.assert_array_equal(to_np(xp.sort(x, axis=axis, descending=descending)), want)
    idx = to_np(xp.argsort(x, axis=axis, descending=descending, stable=True))
    np.testing.assert_array_equal(np.take_along_axis(a, idx.astype(np.int64), axis=axis), want)
    assert (np.sort(idx, axis=axis) == np.expand_dims(np.arange(a.shape[axis]), 1 - axis % 2)).all()
