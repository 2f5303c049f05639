"""LU, Cholesky and QR on the WebGPU device (k_factor): cholesky, det, slogdet, inv, solve, qr, matrix_power,
vector_norm and matrix_norm against NumPy, over the float and complex dtypes, batches, strided and
transposed views, empty and 1x1 matrices; the GPU convention for singular and indefinite matrices (no
LinAlgError, no readback); capture and replay."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import numr_array as xp
from numr_array import linalg
from numr_array.backends import get_runtime

from ..helpers import P_NORM_CASES, exact_p_norm
from ..strategies import to_np
from .helpers import no_readback, on_device, random

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
client = xp._device.parse_device(DEV).client
from .helpers import INEXACT as FLOAT, WIDEST  # noqa: E402
SINGLE = (xp.float32, xp.complex64)


def real_of(dtype):
    return {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype)


def tol(dtype, scale: float = 1.0) -> dict:
    r = 5e-4 if dtype in SINGLE else 1e-12
    return {"rtol": r, "atol": r * scale}


cases = st.fixed_dictionaries({
    "dtype": st.sampled_from(FLOAT),
    "batch": st.sampled_from([(), (1,), (3,), (2, 2), (0,)]),
    "n": st.integers(0, 7),
    "layout": st.sampled_from(["contiguous", "strided", "transposed"]),
    "seed": st.integers(0, 2 ** 32 - 1),
})


@settings(max_examples=30, deadline=None)
@given(cases)
def test_lu_kernels_match_numpy(c):
    dtype, n = c["dtype"], c["n"]
    rng = np.random.default_rng(c["seed"])
    shape = c["batch"] + (n, n)
    a = random(rng, dtype, shape) + 2 * np.eye(n, dtype=dtype)
    b = random(rng, dtype, c["batch"] + (n, 2))
    v = random(rng, dtype, (n,))
    x = on_device(a, c["layout"])
    with no_readback():
        det, (sign, logabs) = linalg.det(x), linalg.slogdet(x)
        inv = linalg.inv(x)
        sol, solv = linalg.solve(x, on_device(b, c["layout"])), linalg.solve(x, xp.asarray(v, device=DEV))
    scale = 4.0 ** max(n, 1)
    np.testing.assert_allclose(to_np(det), np.linalg.det(a), **tol(dtype, scale))
    es, el = np.linalg.slogdet(a)
    assert sign.dtype == dtype and logabs.dtype == real_of(dtype)
    np.testing.assert_allclose(to_np(sign), es, **tol(dtype))
    np.testing.assert_allclose(to_np(logabs), el, **tol(dtype, n))
    np.testing.assert_allclose(to_np(inv), np.linalg.inv(a) if n else a, **tol(dtype, 10))
    np.testing.assert_allclose(to_np(sol), np.linalg.solve(a, b) if n else b, **tol(dtype, 10))
    if n:
        want = np.linalg.solve(a, np.broadcast_to(v[:, None], shape[:-1] + (1,)))[..., 0]
        np.testing.assert_allclose(to_np(solv), want, **tol(dtype, 10))


@settings(max_examples=30, deadline=None)
@given(cases, st.booleans())
def test_cholesky_matches_numpy(c, upper):
    dtype, n = c["dtype"], c["n"]
    rng = np.random.default_rng(c["seed"])
    b = random(rng, dtype, c["batch"] + (n, n))
    h = (b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n)).astype(dtype)
    # the strict upper triangle is never read (LAPACK's lower potrf): garbage there changes nothing
    h_dirty = h + np.triu(random(rng, dtype, h.shape), 1)
    with no_readback():
        r = linalg.cholesky(on_device(h_dirty, c["layout"]), upper=upper)
    np.testing.assert_allclose(to_np(r), np.linalg.cholesky(h, upper=upper), **tol(dtype, n))
    rn = to_np(r)
    np.testing.assert_array_equal(rn, np.triu(rn) if upper else np.tril(rn))


@settings(max_examples=40, deadline=None)
@given(cases, st.integers(0, 7), st.sampled_from(["reduced", "complete"]))
def test_qr_matches_lapack(c, m, mode):
    """Householder reflectors with LAPACK's conventions (larfg's beta = -sign(Re alpha) |.|): the same Q and
    R as NumPy, not only up to signs."""
    dtype, n = c["dtype"], c["n"]
    rng = np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + (m, n))
    with no_readback():
        q, r = linalg.qr(on_device(a, c["layout"]), mode=mode)
    eq, er = np.linalg.qr(a, mode=mode)
    assert q.shape == eq.shape and r.shape == er.shape and q.dtype == r.dtype == dtype
    np.testing.assert_allclose(to_np(q), eq, **tol(dtype, 10))
    np.testing.assert_allclose(to_np(r), er, **tol(dtype, 10))
    rn = to_np(r)
    np.testing.assert_array_equal(rn, np.triu(rn))


def test_qr_of_zero_and_rank_deficient_columns():
    # zero columns give tau = 0 (H = I) as LAPACK's larfg; a complex diagonal is still made real
    a = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [0.0, 3.0, 6.0]])
    for dtype in FLOAT:
        arr = a + 1j * np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0.0]]) if dtype.kind == "c" else a
        arr = arr.astype(dtype)
        atol = tol(dtype, 1.0)["atol"] / 10  # 1e-11 (float64), 5e-5 (float32)
        q, r = linalg.qr(xp.asarray(arr, device=DEV))
        np.testing.assert_allclose(to_np(q) @ to_np(r), arr, atol=atol)
        np.testing.assert_allclose(to_np(q).conj().T @ to_np(q), np.eye(3), atol=atol)
        np.testing.assert_allclose(np.abs(to_np(r)), np.abs(np.linalg.qr(arr)[1]), atol=atol)


@settings(max_examples=25, deadline=None)
@given(cases, st.integers(-4, 6))
def test_matrix_power_matches_numpy(c, power):
    dtype, n = c["dtype"], c["n"]
    rng = np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + (n, n), 0.4) + np.eye(n, dtype=dtype)
    with no_readback():
        r = linalg.matrix_power(on_device(a, c["layout"]), power)
    expected = np.linalg.matrix_power(a, power)
    np.testing.assert_allclose(to_np(r), expected, **tol(dtype, float(np.max(np.abs(expected), initial=1)) * 10))


@pytest.mark.parametrize("dtype", [d for d in FLOAT if d.kind == "f"], ids=lambda d: d.name)
def test_large_matrices(dtype):
    """Any size is correct (one invocation walks the whole matrix)."""
    rng = np.random.default_rng(1)
    n = 40
    # (float32: the tolerances are float64's scaled by their epsilons' ratio, 2**29)
    k = 1.0 if dtype == xp.float64 else 2.0 ** 29
    a = (rng.standard_normal((n, n)) + n * np.eye(n)).astype(dtype)
    x = xp.asarray(a, device=DEV)
    np.testing.assert_allclose(to_np(linalg.inv(x)), np.linalg.inv(a), rtol=1e-10 * k, atol=1e-13 * k)
    np.testing.assert_allclose(to_np(linalg.slogdet(x).logabsdet), np.linalg.slogdet(a)[1], rtol=1e-12 * k)
    np.testing.assert_allclose(to_np(linalg.cholesky(xp.asarray(a @ a.T, device=DEV))), np.linalg.cholesky(a @ a.T),
                               rtol=1e-10 * k, atol=1e-10 * k)
    t = rng.standard_normal((n + 5, n)).astype(dtype)
    for got, want in zip(linalg.qr(xp.asarray(t, device=DEV)), np.linalg.qr(t)):
        np.testing.assert_allclose(to_np(got), want, atol=1e-12 * k)


def test_singular_and_indefinite_matrices_follow_the_gpu_convention():
    """No LinAlgError (that would need a readback): det 0, slogdet (0, -inf), non-finite inverses and
    solutions, NaN in a Cholesky factor from the first non-positive pivot on."""
    for dtype in FLOAT:
        singular = xp.asarray([[1.0, 2.0], [2.0, 4.0]], dtype=dtype, device=DEV)
        zero = xp.zeros((2, 2), dtype=dtype, device=DEV)
        with no_readback():
            d, (sign, logabs) = linalg.det(zero), linalg.slogdet(zero)
            inv = linalg.inv(zero)
            sol = linalg.solve(zero, xp.ones((2,), dtype=dtype, device=DEV))
            mp = linalg.matrix_power(zero, -2)
            chol = linalg.cholesky(xp.asarray([[1.0, 2.0], [2.0, 1.0]], dtype=dtype, device=DEV))
        assert to_np(d) == 0 and to_np(sign) == 0 and to_np(logabs) == -np.inf
        for t in (inv, sol, mp):
            assert not np.isfinite(to_np(t)).all()
        assert abs(to_np(linalg.det(singular))) <= 1e-6
        cn = to_np(chol)
        assert cn[0, 0] == 1 and cn[1, 0] == 2 and cn[0, 1] == 0 and np.isnan(cn[1, 1])


def test_nan_propagates():
    a = np.array([[np.nan, 1.0], [1.0, 2.0]], WIDEST)
    x = xp.asarray(a, device=DEV)
    assert np.isnan(to_np(linalg.det(x)))
    assert np.isnan(to_np(linalg.inv(x))).any()
    assert np.isnan(to_np(linalg.qr(x).R)).any()


VECTOR_ORDS = [2, 1, 0, -1, -2, 3, 0.5, -0.5, math.inf, -math.inf]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(FLOAT), st.sampled_from([(), (5,), (3, 4), (2, 3, 4), (0, 3)]), st.sampled_from(VECTOR_ORDS),
       st.booleans(), st.data())
def test_vector_norm_matches_cpu(dtype, shape, order, keepdims, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    a = random(rng, dtype, shape, 3.0)
    if a.size and data.draw(st.booleans(), label="specials"):
        flat = a.reshape(-1)
        flat[data.draw(st.integers(0, flat.size - 1))] = data.draw(st.sampled_from([0.0, np.inf, -np.inf, np.nan]))
    axes = data.draw(st.none() | st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True, max_size=len(shape))
                     .map(tuple), label="axis")
    empty_axes = math.prod(shape[i] for i in (range(len(shape)) if axes is None else axes)) == 0
    if order == -math.inf and empty_axes:
        return
    layout = data.draw(st.sampled_from(["contiguous", "strided"]))
    with no_readback():
        got = linalg.vector_norm(on_device(a, layout), axis=axes, keepdims=keepdims, ord=order)
    want = linalg.vector_norm(xp.asarray(a), axis=axes, keepdims=keepdims, ord=order)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(to_np(got), to_np(want), equal_nan=True, **tol(dtype, 10))


@pytest.mark.parametrize("dtype", sorted({xp.float32, WIDEST}, key=str))
def test_vector_norm_of_tiny_and_huge_orders(dtype):
    """The direct sum(|x|**p)**(1/p) gave 1.0 for [1.25] and p = -2.2e-16 (p rounds to 0 in float32, and
    the rounding of the sum is raised to 1/p in float64): every case against a many-digit reference."""
    rtol = 2e-5 if dtype == xp.float32 else 1e-12
    for values, order in P_NORM_CASES:
        a = np.asarray(values, dtype)
        with np.errstate(all="ignore"), no_readback():
            r = linalg.vector_norm(xp.asarray(a, device=DEV), ord=order)
        with np.errstate(all="ignore"):
            want = np.asarray(exact_p_norm(a, order)).astype(dtype)
        np.testing.assert_allclose(to_np(r), want, rtol=rtol, atol=0, err_msg=f"{values} ord={order}")


@settings(max_examples=40, deadline=None)
@given(cases, st.integers(0, 5), st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]), st.booleans())
def test_matrix_norm_matches_numpy(c, m, order, keepdims):
    dtype, n = c["dtype"], c["n"]
    if {-1: n, -math.inf: m, -2: min(m, n)}.get(order) == 0:
        return
    rng = np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + (m, n), 3.0)
    x = on_device(a, c["layout"])
    with no_readback():
        r = linalg.matrix_norm(x, ord=order, keepdims=keepdims)
    expected = np.linalg.norm(a, order, axis=(-2, -1), keepdims=keepdims) if a.size else \
        np.zeros(c["batch"] + ((1, 1) if keepdims else ()))
    assert r.dtype == real_of(dtype) and r.shape == expected.shape
    np.testing.assert_allclose(to_np(r), expected, **tol(dtype, 10))


CAPTURED = {
    "cholesky": (lambda x: linalg.cholesky(x, upper=True), lambda a: np.linalg.cholesky(a, upper=True)),
    "det": (linalg.det, np.linalg.det),
    "slogdet": (lambda x: linalg.slogdet(x).logabsdet, lambda a: np.linalg.slogdet(a)[1]),
    "qr": (lambda x: linalg.qr(x).R, lambda a: np.linalg.qr(a)[1]),
    "inv": (linalg.inv, np.linalg.inv),
    "matrix_power": (lambda x: linalg.matrix_power(x, -3), lambda a: np.linalg.matrix_power(a, -3)),
    "matrix_norm": (lambda x: linalg.matrix_norm(x, ord=1), lambda a: np.linalg.norm(a, 1)),
    "vector_norm": (lambda x: linalg.vector_norm(x, ord=3, axis=1), lambda a: np.linalg.norm(a, 3, axis=1)),
}


@pytest.mark.parametrize("name", list(CAPTURED))
def test_replays_in_a_capture(name):
    call, reference = CAPTURED[name]
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], WIDEST)
    rtol = 1e-12 if WIDEST == xp.float64 else 2e-6
    x = xp.asarray(a, device=DEV)
    with xp.capture(DEV) as g:
        r = call(x)
    np.testing.assert_allclose(to_np(r), reference(a), rtol=rtol)
    xp.multiply(x, 2.0, out=x)
    g.replay()
    np.testing.assert_allclose(to_np(r), reference(2 * a), rtol=rtol)
