"""Eigen- and singular-value decompositions on the WebGPU device (k_jacobi, k_hessenberg_qr): eigh,
eigvalsh, eig, eigvals, svd, svdvals, matrix_rank and pinv against NumPy, over the float and complex dtypes, batches, strided and
transposed views, empty and 1x1 matrices. Vectors are unique only up to sign/phase, so they are checked by
reconstruction and orthonormality; eigenvalues of eig by matching (their order is the Schur form's). No
kernel reads device data back; capture and replay; scratch split over launches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import numr_array as xp
from numr_array import linalg
from numr_array.backends import get_runtime

from ..strategies import to_np
from .helpers import no_readback, on_device, random

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
client = xp._device.parse_device(DEV).client
from .helpers import INEXACT as FLOAT, missing  # noqa: E402
REAL = [d for d in FLOAT if d.kind == "f"]
SINGLE = (xp.float32, xp.complex64)
needs_f64 = pytest.mark.skipif(xp.float64 not in FLOAT, reason=missing("shader-f64", "shader-int64") or "")


def tol(dtype, scale: float = 1.0) -> dict:
    r = 5e-4 if dtype in SINGLE else 1e-12
    return {"rtol": r, "atol": r * scale}


def adjoint(a):
    return np.conj(np.swapaxes(a, -1, -2))


def cases(square: bool, max_n: int = 6):
    side = st.integers(0, max_n)
    return st.fixed_dictionaries({
        "dtype": st.sampled_from(FLOAT),
        "batch": st.sampled_from([(), (1,), (3,), (2, 2), (0,)]),
        "shape": st.integers(0, max_n).map(lambda n: (n, n)) if square else st.tuples(side, side),
        "layout": st.sampled_from(["contiguous", "strided", "reversed", "transposed"]),
        "seed": st.integers(0, 2 ** 32 - 1),
    })


def matching(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``got`` reordered so that each entry is the nearest to the same entry of ``want`` (greedy)."""
    out = np.empty_like(want)
    for idx in np.ndindex(want.shape[:-1]):
        left = list(got[idx])
        for j, w in enumerate(want[idx]):
            k = int(np.argmin([abs(g - w) for g in left]))
            out[idx + (j,)] = left.pop(k)
    return out


# --- eigh, eigvalsh --------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(cases(square=True))
def test_eigh_eigvalsh(c):
    dtype, rng = c["dtype"], np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + c["shape"], 3.0)
    x = on_device(a, c["layout"])
    with no_readback():
        w, v = linalg.eigh(x)
        w2 = linalg.eigvalsh(x)
    # the lower triangle is the Hermitian matrix (as LAPACK's UPLO='L', NumPy's default)
    h = np.tril(a) + adjoint(np.tril(a, -1))
    h = (h + adjoint(h)) / 2
    n = a.shape[-1]
    s = 3.0 * max(n, 1)
    assert w.dtype == {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype) and v.dtype == dtype
    want = np.linalg.eigvalsh(h) if a.size else np.zeros(a.shape[:-1])
    np.testing.assert_allclose(to_np(w), want, **tol(dtype, s))
    np.testing.assert_array_equal(to_np(w2), to_np(w))
    wn, vn = to_np(w), to_np(v)
    assert np.all(wn[..., :-1] <= wn[..., 1:])
    np.testing.assert_allclose(h @ vn, vn * wn[..., None, :], **tol(dtype, s))
    np.testing.assert_allclose(adjoint(vn) @ vn, np.broadcast_to(np.eye(n), a.shape), **tol(dtype, 10))


def test_eigh_of_diagonal_degenerate_and_badly_scaled_matrices():
    for dtype in FLOAT:
        for a in (np.diag([3.0, -1.0, 2.0, 2.0]), np.ones((5, 5)), np.zeros((3, 3)), np.eye(4) * 1e30,
                  np.array([[1e-30, 2e-30], [2e-30, 1e-30]])):
            a = a.astype(dtype)
            w, v = linalg.eigh(xp.asarray(a, device=DEV))
            scale = np.abs(a).max(initial=0) * a.shape[-1]
            np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(a), rtol=tol(dtype)["rtol"],
                                       atol=scale * (1e-6 if dtype in SINGLE else 1e-14))
            vn = to_np(v)
            np.testing.assert_allclose(adjoint(vn) @ vn, np.eye(a.shape[-1]), **tol(dtype, 10))


# --- svd, svdvals ------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(cases(square=False), st.booleans())
def test_svd_svdvals(c, full):
    dtype, rng = c["dtype"], np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + c["shape"], 2.0)
    x = on_device(a, c["layout"])
    with no_readback():
        u, s, vh = linalg.svd(x, full_matrices=full)
        s2 = linalg.svdvals(x)
    m, n = c["shape"]
    k = min(m, n)
    assert u.shape == c["batch"] + (m, m if full else k) and vh.shape == c["batch"] + (n if full else k, n)
    un, sn, vhn = to_np(u), to_np(s), to_np(vh)
    scale = 2.0 * max(m, n, 1)
    want = np.linalg.svd(a, compute_uv=False) if a.size else np.zeros(c["batch"] + (k,))
    np.testing.assert_allclose(sn, want, **tol(dtype, scale))
    np.testing.assert_allclose(to_np(s2), sn, **tol(dtype, scale))
    assert np.all(sn[..., :-1] >= sn[..., 1:])
    np.testing.assert_allclose((un[..., :k] * sn[..., None, :]) @ vhn[..., :k, :], a, **tol(dtype, scale))
    ku, kv = un.shape[-1], vhn.shape[-2]
    np.testing.assert_allclose(adjoint(un) @ un, np.broadcast_to(np.eye(ku), un.shape[:-2] + (ku, ku)),
                               **tol(dtype, 10))
    np.testing.assert_allclose(vhn @ adjoint(vhn), np.broadcast_to(np.eye(kv), vhn.shape[:-2] + (kv, kv)),
                               **tol(dtype, 10))


def test_svd_of_rank_deficient_matrices_completes_u_and_v():
    for dtype in FLOAT:
        for a in (np.zeros((4, 3)), np.outer([1.0, 2.0, 2.0, 0.0], [3.0, 0.0, 4.0]), np.ones((2, 5)) * 1e-30,
                  np.eye(3)[:, :1] * 1e20):
            a = a.astype(dtype)
            u, s, vh = linalg.svd(xp.asarray(a, device=DEV))
            un, sn, vhn = to_np(u), to_np(s), to_np(vh)
            scale = np.abs(a).max(initial=0) * 4
            close = {"rtol": 1e-5, "atol": scale * 1e-6} if dtype in SINGLE else {"rtol": 1e-13, "atol": scale * 1e-14}
            np.testing.assert_allclose(sn, np.linalg.svd(a, compute_uv=False), **close)
            np.testing.assert_allclose(adjoint(un) @ un, np.eye(a.shape[0]), **tol(dtype, 10))
            np.testing.assert_allclose(vhn @ adjoint(vhn), np.eye(a.shape[1]), **tol(dtype, 10))
            k = min(a.shape)
            np.testing.assert_allclose((un[:, :k] * sn) @ vhn[:k], a, **close)


@needs_f64
@pytest.mark.parametrize("shape", [(400, 6), (6, 400), (1000, 3), (3000, 6)], ids=str)
def test_svd_of_tall_float64_matrices_is_accurate_to_float64(shape):
    """Centred tall (and wide) data matrices, as PCA gives them: singular values, U S Vh and the
    orthogonality of U and V to float64 accuracy. Thousands of one-row steps in the first phases ran
    past lavapipe's loop limit (untaken loops count too), which cut a rotation short: a 400x6 float64
    SVD's singular values were off by 5e-5 and U S Vh by 4e-4."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    a -= a.mean(axis=0)
    for dtype in (d for d in FLOAT if d not in SINGLE):
        x = xp.asarray(a.astype(dtype), device=DEV)
        u, s, vh = (to_np(t) for t in linalg.svd(x, full_matrices=False))
        want = np.linalg.svd(a, compute_uv=False)
        smax = want[0]
        np.testing.assert_allclose(s, want, rtol=1e-12, atol=smax * 1e-14)
        np.testing.assert_allclose(to_np(linalg.svdvals(x)), want, rtol=1e-12, atol=smax * 1e-14)
        np.testing.assert_allclose((u * s) @ vh, a, rtol=0, atol=smax * 1e-13)
        k = min(shape)
        np.testing.assert_allclose(adjoint(u) @ u, np.eye(k), atol=1e-13)
        np.testing.assert_allclose(vh @ adjoint(vh), np.eye(k), atol=1e-13)


# --- matrix_rank, pinv ---------------------------------------------------------------------------------

@st.composite
def low_rank(draw):
    dtype = draw(st.sampled_from(FLOAT))
    batch = draw(st.sampled_from([(), (3,), (2, 2), (0,)]))
    m, n = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    r = draw(st.integers(0, min(m, n)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    a = (rng.integers(-3, 4, batch + (m, r)) @ rng.integers(-3, 4, batch + (r, n))).astype(dtype)
    return a, draw(st.sampled_from(["contiguous", "strided", "reversed", "transposed"]))


def rtols(batch):
    """rtol=: None, a Python float, or a float32/float64 array broadcasting against the batch."""
    values = st.sampled_from([1e-3, 0.1, 0.5])
    arrays = st.tuples(st.sampled_from(REAL), st.integers(0, len(batch))).flatmap(
        lambda t: st.lists(values, min_size=int(np.prod(batch[t[1]:])), max_size=int(np.prod(batch[t[1]:])))
        .map(lambda v: np.asarray(v, t[0]).reshape(batch[t[1]:])))
    return st.one_of(st.none(), values, arrays)


@settings(max_examples=30, deadline=None)
@given(low_rank(), st.data())
def test_matrix_rank(case, data):
    a, layout = case
    rtol = data.draw(rtols(a.shape[:-2]), label="rtol")
    x = on_device(a, layout)
    arg = xp.asarray(rtol, device=DEV) if isinstance(rtol, np.ndarray) else rtol
    with no_readback():
        r = linalg.matrix_rank(x, rtol=arg)
    s = np.linalg.svd(a, compute_uv=False)
    if s.shape[-1] == 0:
        want = np.zeros(np.broadcast_shapes(a.shape[:-2], np.shape(rtol)), np.int64)
    else:
        cut = max(a.shape[-2:]) * np.finfo(s.dtype).eps if rtol is None else rtol
        want = np.count_nonzero(s > s.max(axis=-1, keepdims=True) * np.asarray(cut)[..., None], axis=-1)
    assert r.dtype == xp.__array_namespace_info__().default_dtypes(device=DEV)["integral"]
    np.testing.assert_array_equal(to_np(r), want)


@settings(max_examples=30, deadline=None)
@given(cases(square=False, max_n=5), st.data())
def test_pinv(c, data):
    dtype, rng = c["dtype"], np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + c["shape"])
    rtol = data.draw(rtols(c["batch"]), label="rtol")
    if rtol is not None and min(c["shape"]) > 1:
        # keep the singular values clear of the cutoff: the kept set must not depend on rounding
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        s = np.linspace(1.0, 0.45, s.shape[-1]) ** 4
        a = ((u * s[..., None, :]) @ vh).astype(dtype)
    x = on_device(a, c["layout"])
    arg = xp.asarray(rtol, device=DEV) if isinstance(rtol, np.ndarray) else rtol
    with no_readback():
        p = linalg.pinv(x, rtol=arg)
    cut = max(c["shape"]) * np.finfo(dtype).eps if rtol is None else rtol
    want = np.linalg.pinv(a, rcond=np.asarray(cut)) if a.size else np.zeros(p.shape, dtype)
    assert p.dtype == dtype and p.shape == want.shape
    np.testing.assert_allclose(to_np(p), want, **tol(dtype, max(1.0, np.abs(want).max(initial=0)) * 10))


def test_pinv_and_rank_of_a_rank_one_matrix():
    a = np.outer([1.0, 2.0, 2.0], [3.0, 0.0, 4.0])
    for dtype in FLOAT:
        x = xp.asarray(a.astype(dtype), device=DEV)
        np.testing.assert_allclose(to_np(linalg.pinv(x)), a.T / np.sum(a * a), **tol(dtype, 1))
        assert int(linalg.matrix_rank(x)) == 1 and int(linalg.matrix_rank(x, rtol=2.0)) == 0


# --- eig, eigvals --------------------------------------------------------------------------------------

def check_eig(a: np.ndarray, w, v, scale: float) -> None:
    dtype = xp.complex64 if a.dtype in (np.float32, np.complex64) else xp.complex128
    assert w.dtype == dtype and v.dtype == dtype and w.shape == a.shape[:-1] and v.shape == a.shape
    wn, vn = to_np(w), to_np(v)
    loose = 1e-2 if dtype == xp.complex64 else 1e-6  # eigenvalues of near-defective matrices move by sqrt(eps)
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], rtol=loose, atol=loose * scale)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1, rtol=1e-5 if dtype == xp.complex64 else 1e-12)
    want = np.linalg.eigvals(a) if a.size else np.zeros(a.shape[:-1])
    np.testing.assert_allclose(matching(wn, want), want, rtol=loose, atol=loose * scale)
    if a.dtype.kind == "f":  # real input: exact conjugate pairs
        for idx in np.ndindex(wn.shape[:-1]):
            z = wn[idx]
            np.testing.assert_array_equal(np.sort_complex(z[z.imag != 0]), np.sort_complex(np.conj(z[z.imag != 0])))


@settings(max_examples=30, deadline=None)
@given(cases(square=True, max_n=7))
def test_eig_eigvals(c):
    dtype, rng = c["dtype"], np.random.default_rng(c["seed"])
    a = random(rng, dtype, c["batch"] + c["shape"])
    x = on_device(a, c["layout"])
    with no_readback():
        w, v = linalg.eig(x)
        e = linalg.eigvals(x)
    check_eig(a, w, v, max(1, a.shape[-1]) * 3.0)
    np.testing.assert_allclose(to_np(e), to_np(w), **tol(dtype, 10))


SPECIAL = [
    [[0.0, -1.0], [1.0, 0.0]],                         # a rotation: +-i
    [[1.0, 1.0], [0.0, 1.0]],                          # a Jordan block
    [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    [[0.0] * 3] * 3,
    [[5.0]],
    [[1.0, 2.0, 0.0], [0.0, 1.0, 2.0], [2.0, 0.0, 1.0]],  # circulant: complex pair
    np.diag(np.ones(5), 1)[:5, :5] + np.diag([1.0], -4),   # a cyclic shift: the 5th roots of unity
]


@pytest.mark.parametrize("dtype", FLOAT)
def test_eig_of_special_matrices(dtype):
    for a in SPECIAL + [np.random.default_rng(1).standard_normal((16, 16))]:
        a = np.asarray(a, dtype)
        w, v = linalg.eig(xp.asarray(a, device=DEV))
        check_eig(a, w, v, max(1, a.shape[-1]) * max(1.0, np.abs(a).max()))


def test_eig_of_a_non_finite_matrix_is_nan():
    for dtype in FLOAT:
        a = np.array([[1.0, np.nan], [2.0, 3.0]], dtype)
        w, v = linalg.eig(xp.asarray(a, device=DEV))
        assert np.isnan(to_np(w)).all() and np.isnan(to_np(v)).all()


# --- larger matrices, scratch split over launches, capture -------------------------------------------

@needs_f64
def test_a_larger_matrix():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, 30))
    x = xp.asarray(a, device=DEV)
    np.testing.assert_allclose(to_np(linalg.svdvals(x)), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    h = a[:30] + a[:30].T
    np.testing.assert_allclose(to_np(linalg.eigvalsh(xp.asarray(h, device=DEV))), np.linalg.eigvalsh(h),
                               rtol=1e-12, atol=1e-12 * np.abs(h).max() * 30)
    w, v = linalg.eig(xp.asarray(a[:30], device=DEV))
    check_eig(a[:30], w, v, 100.0)


@needs_f64
def test_scratch_split_over_launches(monkeypatch):
    # 5 matrices of 3x3 float64: 144 bytes of eigh scratch each, 3 per launch under a 512-byte binding
    monkeypatch.setattr(client, "max_binding", 512)
    a = np.random.default_rng(2).standard_normal((5, 3, 3))
    h = a + np.swapaxes(a, -1, -2)
    w, _ = linalg.eigh(xp.asarray(h, device=DEV))
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(h), rtol=1e-12, atol=1e-12)
    with pytest.raises(MemoryError):
        linalg.svdvals(xp.asarray(np.ones((100, 100)), device=DEV))


@needs_f64
def test_capture_and_replay():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 4, 4)), rng.standard_normal((2, 4, 4))
    x = xp.asarray(a, device=DEV)
    with xp.capture(device=DEV) as g:
        s = linalg.svdvals(x)
        w = linalg.eigvalsh(xp.add(x, xp.matrix_transpose(x)))
        e = linalg.eigvals(x)
        r = linalg.matrix_rank(x, rtol=0.5)
    x[...] = xp.asarray(b, device=DEV)
    g.replay()
    np.testing.assert_allclose(to_np(s), np.linalg.svd(b, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(b + np.swapaxes(b, -1, -2)), rtol=1e-12, atol=1e-12)
    want = np.linalg.eigvals(b)
    # (a non-symmetric matrix's eigenvalues move by their condition number times eps: up to ~1e4 here)
    np.testing.assert_allclose(matching(to_np(e), want), want, rtol=1e-10)
    sb = np.linalg.svd(b, compute_uv=False)
    np.testing.assert_array_equal(to_np(r), np.count_nonzero(sb > sb[..., :1] * 0.5, axis=-1))
