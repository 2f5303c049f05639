"""Matrix-vector products (``rowdot``: X @ w, X.T @ v, v @ X, vecdot) and thin tiled products split over k,
against NumPy: float32 and float64, both orientations, transposed, strided, reversed and broadcast
operands, skinny, empty and one-element shapes, sizes that are not multiples of a workgroup's rows or
lanes, k long enough to be split into parts, out= views, integer wrapping, and capture."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array import _launch
from numr_array.backends import get_runtime
from numr_array.kernels import K

from ..strategies import to_np
from .helpers import call_without_readback as no_readback

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
from numr_array.backends.webgpu import k_contract  # noqa: E402
from .helpers import device_dtype, needs_dtype  # noqa: E402

FLOATS = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]


def dev(a: np.ndarray, layout: str = "contiguous"):
    """``a`` on the device as a contiguous array, a transposed view of its transposed copy (column-major),
    every other element of a wider array along the last axis, or a reversed view of a reversed copy."""
    if layout == "transposed" and a.ndim >= 2:
        return xp.matrix_transpose(xp.asarray(np.swapaxes(a, -1, -2).copy(), device=DEV))
    if layout == "strided" and a.ndim and a.size:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return xp.asarray(big, device=DEV)[..., ::2]
    if layout == "reversed" and a.size:
        return xp.flip(xp.asarray(np.flip(a).copy(), device=DEV))
    return xp.asarray(a, device=DEV)


def close(got, want: np.ndarray, dtype, k: int) -> None:
    """Within the rounding of a k-term float sum in ``dtype`` (terms of size about 1)."""
    g = to_np(got)
    assert g.dtype == device_dtype(want.dtype) and g.shape == want.shape, (g.dtype, want.dtype, g.shape, want.shape)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(g, want, rtol=0, atol=8 * eps * max(k, 1) ** 0.5 * max(1.0, np.abs(want).max(initial=0)))


def skip_f64(dtype) -> None:
    if dtype == np.float64:
        needs_dtype(xp.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (7, 1), (3, 1000), (1000, 3), (257, 65), (4099, 64), (33, 5000)])
def test_matrix_vector_both_orientations(dtype, layout, shape):
    """X @ w (rows of X dotted with w), X.T @ v and v @ X (columns of X dotted with v) over every layout of X."""
    skip_f64(dtype)
    rng = np.random.default_rng(sum(shape))
    X = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype)
    v = rng.standard_normal(shape[0]).astype(dtype)
    Xd = dev(X, layout)
    wd, vd = dev(w, "strided" if layout == "strided" else "contiguous"), dev(v)
    close(no_readback(lambda: Xd @ wd), X @ w, dtype, shape[1])
    close(no_readback(lambda: Xd.T @ vd), X.T @ v, dtype, shape[0])
    close(no_readback(lambda: vd @ Xd), v @ X, dtype, shape[0])
    close(no_readback(lambda: xp.matmul(xp.matrix_transpose(Xd), vd)), X.T @ v, dtype, shape[0])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gpu", [False, True], ids=["as-adapter", "gpu-heuristics"])
def test_long_products_split_into_parts(dtype, gpu, monkeypatch):
    """k long enough that the rows give few workgroups: the sums run as parts and a second launch."""
    skip_f64(dtype)
    if gpu:  # a GPU's lanes per row and split targets, on whatever adapter runs the tests
        monkeypatch.setattr(k_contract, "_cpu_adapter", lambda client: False)
    rng = np.random.default_rng(7)
    for n, d in ((200_003, 5), (100_000, 64), (70_001, 1)):
        X = rng.standard_normal((n, d)).astype(dtype)
        v = rng.standard_normal(n).astype(dtype)
        Xd, vd = dev(X), dev(v)
        close(no_readback(lambda: Xd.T @ vd), X.T @ v, dtype, n)
        close(no_readback(lambda: vd @ Xd), v @ X, dtype, n)
    a = rng.standard_normal(300_001).astype(dtype)
    b = rng.standard_normal(300_001).astype(dtype)
    close(xp.matmul(dev(a), dev(b)), np.asarray(a @ b), dtype, a.size)
    close(xp.vecdot(dev(a), dev(b, "reversed")), np.asarray(a @ b), dtype, a.size)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("gpu", [False, True], ids=["as-adapter", "gpu-heuristics"])
def test_batched_and_broadcast_matrix_vector(dtype, gpu, monkeypatch):
    skip_f64(dtype)
    if gpu:  # a GPU's lanes per row and split targets, on whatever adapter runs the tests
        monkeypatch.setattr(k_contract, "_cpu_adapter", lambda client: False)
    rng = np.random.default_rng(8)
    A = rng.standard_normal((3, 1, 45, 70)).astype(dtype)
    B = rng.standard_normal((2, 70, 1)).astype(dtype)
    v = rng.standard_normal(70).astype(dtype)
    u = rng.standard_normal(45).astype(dtype)
    Ad, Bd = dev(A), dev(B)
    close(Ad @ dev(v), A @ v, dtype, 70)
    close(dev(u) @ Ad, u @ A, dtype, 45)
    close(Ad @ Bd, A @ B, dtype, 70)                          # a column of one: (…, n, k) @ (…, k, 1)
    close(xp.matrix_transpose(Bd) @ xp.matrix_transpose(Ad), np.swapaxes(B, -1, -2) @ np.swapaxes(A, -1, -2),
          dtype, 70)                                          # a row of one: (…, 1, k) @ (…, k, n)
    long = rng.standard_normal((4, 60_000, 3)).astype(dtype)
    w = rng.standard_normal((4, 60_000)).astype(dtype)
    close(xp.matrix_transpose(dev(long)) @ dev(w)[..., None], np.swapaxes(long, -1, -2) @ w[..., None], dtype,
          60_000)                                             # a batch of long products, split into parts


@pytest.mark.parametrize("dtype", FLOATS)
def test_vecdot_batches_conjugates_and_broadcasts(dtype):
    skip_f64(dtype)
    rng = np.random.default_rng(9)
    a = rng.standard_normal((5, 300, 40)).astype(dtype)
    b = rng.standard_normal((300, 40)).astype(dtype)
    close(xp.vecdot(dev(a), dev(b)), np.sum(a * b, axis=-1), dtype, 40)
    close(xp.vecdot(dev(a), dev(b), axis=-2), np.sum(a * b, axis=-2), dtype, 300)
    close(xp.vecdot(dev(a, "strided"), dev(b, "transposed")), np.sum(a * b, axis=-1), dtype, 40)
    ctype = np.complex64 if dtype == np.float32 else np.complex128
    z = (a + 1j * rng.standard_normal(a.shape)).astype(ctype)
    y = (b + 1j * rng.standard_normal(b.shape)).astype(ctype)
    got = to_np(xp.vecdot(dev(z), dev(y)))
    np.testing.assert_allclose(got, np.sum(np.conj(z) * y, axis=-1), rtol=50 * np.finfo(dtype).eps,
                               atol=50 * np.finfo(dtype).eps * 40)


def test_empty_matrix_vector_products():
    for s1, s2 in (((0, 5), (5,)), ((5, 0), (0,)), ((0,), (0, 5)), ((0,), (0,)), ((3, 0, 4), (4,))):
        a, b = np.ones(s1, np.float32), np.ones(s2, np.float32)
        got = to_np(xp.matmul(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)))
        want = np.matmul(a, b)
        assert got.shape == want.shape and np.array_equal(got, want)
    assert float(xp.vecdot(xp.zeros((0,), device=DEV), xp.zeros((0,), device=DEV))) == 0.0


@pytest.mark.parametrize("dtype", [xp.int8, xp.int32, xp.uint16, xp.complex64], ids=lambda d: d.name)
def test_integer_and_complex_matrix_vector_exact(dtype):
    """Integers wrap as NumPy's (int8 sums in int32, then cast), also when summed in parts."""
    rng = np.random.default_rng(10)
    lo = 0 if dtype == xp.uint16 else -100
    for n, d in ((300, 77), (80_000, 3)):
        X = rng.integers(lo, 100, (n, d)).astype(dtype)
        v = rng.integers(lo, 100, n).astype(dtype)
        w = rng.integers(lo, 100, d).astype(dtype)
        if dtype == xp.complex64:  # small integers: every sum exact in float32
            X, v, w = (np.sign(t.real) * (np.abs(t.real) % 3) + 1j for t in (X, v, w))
            X, v, w = X.astype(np.complex64), v.astype(np.complex64), w.astype(np.complex64)
        with np.errstate(over="ignore"):
            want1, want2 = X @ w, X.T @ v
        np.testing.assert_array_equal(to_np(dev(X) @ dev(w)), want1)
        np.testing.assert_array_equal(to_np(dev(X).T @ dev(v)), want2)


def test_bool_matrix_vector_is_any():
    rng = np.random.default_rng(11)
    X = rng.random((500, 90_000 // 500)) < 0.01
    w = rng.random(X.shape[1]) < 0.5
    v = rng.random(500) < 0.5
    for a, b in ((X, w), (X.T, v)):
        o = xp.empty(a.shape[:1], dtype=xp.bool, device=DEV)
        _launch.launch(o.device, K.matmul, (xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)), (o,), {})
        np.testing.assert_array_equal(to_np(o), a @ b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [((16, 50_000), (50_000, 32)), ((3, 20_000), (20_000, 10)),
                                   ((1024, 8192), (8192, 10)), ((2, 7), (7, 2)), ((130, 70), (70, 3))])
@pytest.mark.parametrize("gpu", [False, True], ids=["as-adapter", "gpu-heuristics"])
def test_thin_tiled_products(dtype, shape, gpu, monkeypatch):
    """Products with few rows or columns (tiles on a GPU; one invocation per result on a software adapter)
    and thin products split over k, with the tall operand transposed as X.T @ Y; also with a GPU's choices
    forced on whatever adapter runs the tests."""
    skip_f64(dtype)
    if gpu:
        monkeypatch.setattr(k_contract, "_cpu_adapter", lambda client: False)
    rng = np.random.default_rng(shape[0][1])
    a = rng.standard_normal(shape[0]).astype(dtype)
    b = rng.standard_normal(shape[1]).astype(dtype)
    close(no_readback(lambda: dev(a) @ dev(b)), a @ b, dtype, shape[0][1])
    close(dev(a, "transposed") @ dev(b, "transposed"), a @ b, dtype, shape[0][1])


def test_thin_products_split_integers_and_out_view():
    rng = np.random.default_rng(12)
    a = rng.integers(-1000, 1000, (5, 60_000)).astype(np.int32)
    b = rng.integers(-1000, 1000, (60_000, 20)).astype(np.int32)
    with np.errstate(over="ignore"):
        want = a @ b
    np.testing.assert_array_equal(to_np(xp.asarray(a, device=DEV) @ xp.asarray(b, device=DEV)), want)
    x = rng.standard_normal((50_000, 8)).astype(np.float32)
    big = xp.zeros((12, 30), dtype=xp.float32, device=DEV)
    xp.matmul(xp.asarray(x, device=DEV).T, xp.asarray(x[:, :6].copy(), device=DEV), out=big[2:10, 3:9])
    want = np.zeros((12, 30), np.float32)
    want[2:10, 3:9] = x.T @ x[:, :6]
    close(big, want, np.float32, 50_000)
    v = xp.zeros((3, 9), dtype=xp.float32, device=DEV)
    xp.matmul(xp.asarray(x, device=DEV).T, xp.asarray(x[:, 0].copy(), device=DEV), out=v[1, ::-1][:8])
    want = np.zeros((3, 9), np.float32)
    want[1, ::-1][:8] = x.T @ x[:, 0]
    close(v, want, np.float32, 50_000)


def test_captured_split_products_replay_new_data():
    rng = np.random.default_rng(13)
    X = xp.asarray(rng.standard_normal((60_000, 6)).astype(np.float32), device=DEV)
    v = xp.asarray(rng.standard_normal(60_000).astype(np.float32), device=DEV)
    with xp.capture(DEV) as g:
        r1 = X.T @ v
        r2 = X @ (X.T @ v)
        r3 = X.T @ X
    newX = rng.standard_normal((60_000, 6)).astype(np.float32)
    X[...] = xp.asarray(newX, device=DEV)
    g.replay()
    vn = to_np(v)
    close(r1, newX.T @ vn, np.float32, 60_000)
    close(r2, newX @ (newX.T @ vn), np.float32, 60_000 * 6)
    close(r3, newX.T @ newX, np.float32, 60_000)


def test_logistic_regression_step_matches_numpy():
    """The program of the benchmark whose transposed matrix-vector product was the cliff."""
    rng = np.random.default_rng(14)
    X = rng.standard_normal((20_000, 16)).astype(np.float32)
    y = (rng.random(20_000) < 0.5).astype(np.float32)
    w, wd = np.zeros(16, np.float32), xp.zeros(16, dtype=xp.float32, device=DEV)
    Xd, yd = dev(X), dev(y)
    for _ in range(3):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w = w - np.float32(0.5 / 20_000) * (X.T @ (p - y))
        pd = 1.0 / (1.0 + xp.exp(-(Xd @ wd)))
        wd = wd - (0.5 / 20_000) * (Xd.T @ (pd - yd))
    np.testing.assert_allclose(to_np(wd), w, rtol=1e-4, atol=1e-6)


def test_matrix_vector_dispatch_counts(monkeypatch):
    """X @ w is one launch, X.T @ v of a tall X at most two (parts, then their sum): no chain of chunked
    launches, and nothing copied to make a transposed operand contiguous."""
    client = xp._device.parse_device(DEV).client
    X = xp.asarray(np.ones((100_000, 64), np.float32), device=DEV)
    v = xp.asarray(np.ones(100_000, np.float32), device=DEV)
    w = xp.asarray(np.ones(64, np.float32), device=DEV)
    (X @ w, X.T @ v)  # pipelines built
    calls = []
    real = client.dispatch
    monkeypatch.setattr(client, "dispatch", lambda *a, **k: (calls.append(a[0]), real(*a, **k))[1])
    r = X @ w
    assert len(calls) == 1
    calls.clear()
    s = X.T @ v
    # (on an adapter that flushes float32 subnormals the parts are summed in float64 and the sum narrowed to
    # float32 bits by the reduction: k_contract's wide path, still two launches)
    assert len(calls) <= 2
    assert np.array_equal(to_np(r), np.full(100_000, 64, np.float32))
    assert np.array_equal(to_np(s), np.full(64, 100_000, np.float32))


@pytest.mark.parametrize("n", [2048, 100_000])
def test_float32_dot_products_keep_subnormal_results_on_a_flushing_adapter(monkeypatch, n):
    """On an adapter that flushes float32 subnormals (NVIDIA's), float32 dot products and matrix-vector
    products run in float64 from the operands' bits and narrow to float32 bits: a converged solver's
    residual r @ r of about 1e-39 stays that subnormal (it was 0, and the cg program's rs_new / rs NaN).
    Forced here on any adapter with float64; both one launch and parts summed by a second launch."""
    needs_dtype(xp.float64)
    client = xp._device.parse_device(DEV).client
    monkeypatch.setattr(client, "flushes_f32_subnormals", True)
    rng = np.random.default_rng(15)
    r = (rng.standard_normal(n) * 1e-21 * (2048 / n) ** 0.5).astype(np.float32)
    want = np.float32(r.astype(np.float64) @ r.astype(np.float64))
    assert 0 < want < np.finfo(np.float32).tiny  # subnormal
    rd = xp.asarray(r, device=DEV)
    for got in (xp.vecdot(rd, rd), rd @ rd):
        np.testing.assert_allclose(float(got), want, rtol=2e-6, atol=0)
    M = np.stack([r, -r, 2 * r]).astype(np.float32)
    want = (M.astype(np.float64) @ r.astype(np.float64)).astype(np.float32)
    got = to_np(xp.asarray(M, device=DEV) @ rd)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    got = to_np(xp.asarray(M.T.copy(), device=DEV).T @ rd)  # the other orientation
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)


def test_the_cg_trace_benchmark_runs(capsys):
    """benchmarks/webgpu_ops.py --cg-trace (the step-by-step check the H200 run uses) on a small system."""
    from benchmarks.webgpu_ops import cg_trace
    assert cg_trace(64, 5) == 0
    assert "every step finite" in capsys.readouterr().out


@pytest.mark.parametrize("split", [True, False], ids=["8x8-split", "4x4"])
def test_few_large_tiles_and_a_long_k_take_8x8_blocks_in_parts(split, monkeypatch):
    """With a GPU's choices: a product of too few 128 x 128 tiles for the device but a long k (the MLP's
    X.T @ dH of tall X, here 256 x 32768 x 256: 4 tiles) takes 8 x 8 blocks with k split into parts and
    summed (SPLIT_LARGE_BLOCKS), else 4 x 4 blocks (split too at this size, not at the MLP's 1024 x 1024);
    both give NumPy's product, transposed or not."""
    monkeypatch.setattr(k_contract, "_cpu_adapter", lambda client: False)
    monkeypatch.setattr(k_contract, "SPLIT_LARGE_BLOCKS", split)
    c = xp._device.parse_device(DEV).client
    keys = []
    real = c.dispatch
    monkeypatch.setattr(c, "dispatch", lambda pipe, *a, **k: (keys.append(
        next(key for key, p in c._pipelines.items() if p is pipe)), real(pipe, *a, **k))[1])
    rng = np.random.default_rng(14)
    x = rng.standard_normal((32768, 256)).astype(np.float32)
    d = rng.standard_normal((32768, 256)).astype(np.float32)
    close(dev(x).T @ dev(d), x.T @ d, np.float32, 32768)
    gemms = [k for k in keys if k[0] == "gemm"]
    assert len(gemms) == 1 and gemms[0][4] == (8 if split else 4)
    if split:
        assert any(k[0] == "reduce" for k in keys)
    close(dev(x.T.copy()) @ dev(d), x.T @ d, np.float32, 32768)


def _kernels(monkeypatch) -> list:
    """The keys of the pipelines dispatched from now on (their first elements: the kernel families)."""
    client = xp._device.parse_device(DEV).client
    seen = []
    real = client.dispatch
    keys = {id(p): k for k, p in client._pipelines.items()}

    def dispatch(pipe, *a, **kw):
        seen.append(keys.get(id(pipe)) or next((k for k, p in client._pipelines.items() if p is pipe), None))
        return real(pipe, *a, **kw)

    monkeypatch.setattr(client, "dispatch", dispatch)
    return seen


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("N, K, M", [(16, 50_000, 32), (2, 4096, 512), (512, 4100, 2), (3, 9_999, 7),
                                     (32, 4097, 32)])
def test_few_outputs_and_a_long_k_take_the_thin_kernel(dtype, layout, N, K, M, monkeypatch):
    """k-means' ``onehot.T @ X`` and its kin (_thin_gemm): one pass of partial products and their sum,
    against NumPy, for each operand's layout (k running along either axis of the memory), k not a multiple
    of a tile; the same bits twice."""
    from numr_array.backends.webgpu import _thin_gemm
    skip_f64(dtype)
    rng = np.random.default_rng(N * M)
    a = rng.standard_normal((K, N)).astype(dtype).T  # (x1 N x K, contiguous along n as onehot.T is)
    b = rng.standard_normal((K, M)).astype(dtype)
    x1, x2 = dev(np.ascontiguousarray(a), layout), dev(b, layout)
    x1t = xp.matrix_transpose(dev(np.ascontiguousarray(a.T), layout))
    seen = _kernels(monkeypatch)
    for first in (x1, x1t):
        got = no_readback(lambda: first @ x2)
        close(got, a @ b, dtype, K)
        assert np.array_equal(to_np(got), to_np(first @ x2))
    assert sum(k[0] == "thin-gemm" for k in seen if k) == 4
    assert _thin_gemm.takes([], (N, 0, 0), (M, 0, 0), (K, 0, 0), (xp.float32,) * 3)


@pytest.mark.parametrize("N, K, M, taken", [(16, 4096, 32, True), (16, 4095, 32, False), (32, 5000, 32, True),
                                            (32, 5000, 33, False), (1, 5000, 32, False)])
def test_the_thin_kernel_takes_only_few_outputs_and_a_long_k(N, K, M, taken, monkeypatch):
    """Its bounds: N * M at most MOST_OUT, K at least MIN_K (else gemm's tiles, or rowdot for one row)."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((N, K)).astype(np.float32), rng.standard_normal((K, M)).astype(np.float32)
    x1, x2 = dev(a), dev(b)
    x1 @ x2
    seen = _kernels(monkeypatch)
    close(x1 @ x2, a @ b, np.float32, K)
    assert any(k and k[0] == "thin-gemm" for k in seen) == taken


def test_the_thin_kernel_propagates_nan_and_infinity_and_replays():
    """A NaN or an infinity in one row of k reaches the outputs it multiplies into (and only those); a
    captured product replays new data."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6000, 4)).astype(np.float32)
    b = rng.standard_normal((6000, 8)).astype(np.float32)
    a[4321, 1] = np.nan
    b[77, 3] = np.inf
    a[77, :] = np.abs(a[77, :]) + 1
    got = to_np(xp.asarray(a, device=DEV).T @ xp.asarray(b, device=DEV))
    want = a.T @ b
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(got).sum() == 8
    assert np.array_equal(np.isinf(got), np.isinf(want)) and np.isinf(got[[0, 2, 3], 3]).all()
    X = xp.asarray(a, device=DEV)
    Y = xp.asarray(b, device=DEV)
    with xp.capture(DEV) as g:
        r = X.T @ Y
    a2, b2 = rng.standard_normal((6000, 4)).astype(np.float32), rng.standard_normal((6000, 8)).astype(np.float32)
    X[...] = xp.asarray(a2, device=DEV)
    Y[...] = xp.asarray(b2, device=DEV)
    g.replay()
    close(r, a2.T @ b2, np.float32, 6000)
    assert np.array_equal(to_np(r), to_np(X.T @ Y))


def test_lanes_summed_by_subgroup_shuffles_give_the_workgroup_trees_bits(monkeypatch):
    """A row's lanes are summed by subgroup shuffles for the tree's levels below the subgroup's size
    (client.subgroup_rows), in workgroup memory above it: the same tree, so matrix-vector products along k,
    dot products of long vectors, and a captured conjugate-gradient run (its dot products phases of
    one-workgroup programs) have the same bits with the shuffles and without them."""
    from benchmarks import workloads
    client = xp._device.parse_device(DEV).client
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2048, 2048)).astype(np.float32)
    p, q = rng.standard_normal(2048).astype(np.float32), rng.standard_normal(5000).astype(np.float32)
    inputs, kw = workloads.make_cg(rng, 256, 5)

    def results() -> list:
        args = [dev(inputs["A"]), dev(inputs["b"])]
        with xp.capture(device=DEV) as g:
            x = workloads.cg(xp, *args, **kw)[0]
        g.replay()
        return [to_np(dev(A) @ dev(p)).tobytes(), to_np(xp.vecdot(dev(q), dev(q[::-1].copy()))).tobytes(),
                to_np(dev(A[:3]) @ dev(p)).tobytes(), to_np(x).tobytes()]

    shuffled = results()
    assert client.subgroup_rows == 0 or any(
        k[0] == "rowdot" and k[-1] == client.subgroup_rows for k in client._pipelines)
    monkeypatch.setattr(client, "subgroup_rows", 0)
    assert results() == shuffled


def _zeros_and_ones(case: str, rng, K: int, N: int, M: int) -> tuple[np.ndarray, np.ndarray]:
    """x1.T (K x N, as k-means' one-hot mask) and x2 (K x M) for a thin product whose x1 is (mostly) zeros and
    ones."""
    lab = rng.integers(0, N, K)
    a = (lab[:, None] == np.arange(N)[None, :]).astype(np.float32)  # one one per row of k (k-means)
    b = rng.standard_normal((K, M)).astype(np.float32)
    if case == "random zeros and ones":
        a = (rng.random((K, N)) < 0.3).astype(np.float32)
    elif case == "rows of k without a one":
        a[100:2500] = 0
    elif case == "infinity in a row without a one":
        a[100:2500] = 0
        b[150, M - 1] = np.inf
    elif case == "infinity where a one is":
        b[77, 1] = np.inf
    elif case == "NaN":
        b[4000, 0] = np.nan
    elif case == "a value neither 0 nor 1":
        a[5, lab[5]] = 0.5
    elif case == "negative zeros":
        a[a == 0] = -0.0
    elif case == "two ones per row of k":  # (as many ones as a chunk lists, ONES_LIST)
        a[np.arange(K), (lab + 1) % N] = 1
    elif case == "all ones":
        a[:] = 1
    elif case == "all zeros":
        a[:] = 0
    elif case == "a sum that is a negative subnormal":  # -0 where an adapter flushes it, then a positive term
        a[:3] = 0
        a[0, 0] = a[1, 0] = a[2, 1] = 1
        b[0, :], b[1, :], b[2, :] = 1.5e-38, -1.6e-38, 1.0
    return a, b


ONES_CASES = ["one-hot", "two ones per row of k", "random zeros and ones", "rows of k without a one",
              "infinity in a row without a one", "infinity where a one is", "NaN", "a value neither 0 nor 1",
              "negative zeros", "all ones", "all zeros", "a sum that is a negative subnormal"]
#: the cases where x1's ones alone do not give the tiles' bits (a value of x1 not 0 or 1, one of x2 not
#: finite) or are more than a chunk lists (16 rows of x1: 30% ones, all ones)
ONES_FALL_BACK = {"infinity in a row without a one", "infinity where a one is", "NaN", "a value neither 0 nor 1",
                  "random zeros and ones", "all ones"}


@pytest.mark.parametrize("case", ONES_CASES)
@pytest.mark.parametrize("N, K, M", [(16, 20_000, 32), (8, 9_000, 8), (3, 5_001, 7)])
def test_a_thin_product_of_zeros_and_ones_gives_the_tiles_bits(case, N, K, M, monkeypatch):
    """_thin_gemm.ONES: where x1 holds only zeros and ones, each output adds x2's rows at its row's ones (the
    same fma(1, x, acc) in the same order); its bits are the tiles' (ONES = 0) in every case, over parts of one
    mask chunk (16 x 32: 512 values of k a part) or two (8 x 8: 1024), k not a multiple of either."""
    from numr_array.backends.webgpu import _thin_gemm
    a, b = _zeros_and_ones(case, np.random.default_rng(N + K), K, N, M)
    x1, x2 = xp.matrix_transpose(dev(a)), dev(b)
    results = {}
    for ones in (0, 8, 3):
        monkeypatch.setattr(_thin_gemm, "ONES", ones)
        results[ones] = to_np(x1 @ x2).tobytes()
    assert results[8] == results[0] == results[3]
    if case not in ONES_FALL_BACK:
        close(np.frombuffer(results[8], np.float32).reshape(N, M), a.T @ b, np.float32, K)


@pytest.mark.parametrize("case", ONES_CASES)
def test_a_thin_product_takes_its_tiles_exactly_where_the_ones_cannot_give_their_bits(case, monkeypatch):
    """With the tiles taken out of the pass (their branch never taken), the ones alone give the tiles' bits
    in every case but those that must fall back (so each path is the one that ran): two ones in each row of k
    fill a chunk's list exactly (ONES_LIST), thirty percent of 16 rows overflow it."""
    from numr_array.backends.webgpu import _thin_gemm
    client = xp._device.parse_device(DEV).client
    N, K, M = 16, 20_000, 32
    a, b = _zeros_and_ones(case, np.random.default_rng(7), K, N, M)
    x1, x2 = xp.matrix_transpose(dev(a)), dev(b)
    monkeypatch.setattr(_thin_gemm, "ONES", 0)
    tiles = to_np(x1 @ x2).tobytes()
    monkeypatch.setattr(_thin_gemm, "ONES", 8)
    build = client.pipeline

    def without_tiles(key, make, *args, **kw):
        if isinstance(key, tuple) and key[0] == "thin-gemm" and key[-1]:
            src = make()
            assert src.count("if (dense_) {") == 1
            return build(key + ("no tiles",), lambda: src.replace("if (dense_) {", "if (dense_ && false) {"), *args, **kw)
        return build(key, make, *args, **kw)

    monkeypatch.setattr(client, "pipeline", without_tiles)
    for key in [k for k in client._pipelines if isinstance(k, tuple) and k[0] == "thin-gemm"]:
        client._pipelines.pop(key)  # (built again, through without_tiles)
    ones_only = to_np(x1 @ x2).tobytes()
    assert (ones_only == tiles) == (case not in ONES_FALL_BACK)


def test_captured_k_means_with_the_ones_replays_as_eager():
    """benchmarks/workloads.py's k-means (20k x 8 points, 16 centres: its onehot.T @ X a thin pass with the
    ones' path) captured and replayed on new data: eager's bits."""
    from benchmarks import workloads
    client = xp._device.parse_device(DEV).client
    host, kw = workloads.make_kmeans(np.random.default_rng(3), 20_000, 8, 16, 2)
    args = {k: xp.asarray(v, device=DEV) for k, v in host.items()}
    with xp.capture(DEV) as g:
        got = workloads.kmeans(xp, **args, **kw)
    ones = {id(p) for k, p in client._pipelines.items() if isinstance(k, tuple) and k[0] == "thin-gemm" and k[-1]}
    assert sum(id(step[0]) in ones for step in g._graph.steps) == 2
    host2, _ = workloads.make_kmeans(np.random.default_rng(4), 20_000, 8, 16, 2)
    for k, v in host2.items():
        args[k][...] = xp.asarray(v, device=DEV)
    g.replay()
    replayed = [to_np(t).tobytes() for t in got]
    for k, v in host2.items():
        args[k][...] = xp.asarray(v, device=DEV)
    assert replayed == [to_np(t).tobytes() for t in workloads.kmeans(xp, **args, **kw)]
