"""A reduction walked by one invocation per output loads elements ahead of combining them, in the loop's order,
and float32's square is its own product where that is exact: their results bit for bit as before (NumPy's
sequential sum, the float64 square narrowed), eager and replayed. Also rowdot's layouts of a GPU adapter
(lanes along k, a product of few rows spread over every lane, parts), which a software adapter's tests do not
reach, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import k_contract  # noqa: E402
from numr_array.backends.webgpu._client import WebGPUClient  # noqa: E402

from .helpers import DEV, host, needs_dtype  # noqa: E402


@pytest.fixture(params=[False, True], ids=["as-adapter", "flushing"])
def flushing(request, monkeypatch):
    """The adapter as it is, and as one that flushes float32 subnormals (float32 steps through float64)."""
    if request.param:
        monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    return request.param


def _square_operands() -> np.ndarray:
    """float32 values whose squares are subnormal, zero, near float32's smallest normal, near overflow,
    infinite or NaN, and random ones, with both signs."""
    rng = np.random.default_rng(12)
    parts = [rng.integers(0, 2**32, 20_000, dtype=np.uint64).astype(np.uint32),
             np.arange(0, 0x01000000, 4099, dtype=np.uint32),  # subnormals and the smallest normals
             (0x1f000000 + np.arange(-2**16, 2**16, 7)).astype(np.uint32),  # squares near 2^-130
             (0x20000000 + np.arange(-2**16, 2**16, 7)).astype(np.uint32),  # squares near 2^-126
             (0x5f800000 + np.arange(-2**16, 2**16, 7)).astype(np.uint32),  # squares near overflow
             np.array([0, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fc12345, 1, 0x007fffff, 0x00800000], np.uint32)]
    b = np.concatenate(parts)
    return np.concatenate([b, b ^ np.uint32(0x80000000)]).view(np.float32)


def test_float32_square_is_the_narrowed_float64_square(flushing):
    needs_dtype(xp.float64)  # (x ** 2 goes through float64 only where the adapter has it)
    x = _square_operands()
    with np.errstate(over="ignore", invalid="ignore"):
        want = (x.astype(np.float64) ** 2).astype(np.float32)
    X = xp.asarray(x, device=DEV)
    got = host(X ** 2)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), x[~same][:8]


def test_sum_over_a_short_axis_is_sequential():
    # one invocation per output walks the axis in order, four loads ahead: NumPy's left-to-right float32 sum
    rng = np.random.default_rng(4)
    for k in (1, 3, 4, 5, 8, 13, 32):
        a = (rng.standard_normal((3000, k)) * 10.0 ** rng.integers(-3, 4, (3000, k))).astype(np.float32)
        got = host(xp.sum(xp.asarray(a, device=DEV), axis=1))
        want = np.add.accumulate(a, axis=1)[:, -1]
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), k


def test_fused_distances_replay_eager(flushing):
    # k-means' squared distances: a difference, a square and a sum over the short axis as one dispatch
    needs_dtype(xp.float64)
    rng = np.random.default_rng(5)
    X = xp.asarray(rng.standard_normal((2000, 29)).astype(np.float32), device=DEV)
    C = xp.asarray(rng.standard_normal((16, 29)).astype(np.float32), device=DEV)
    with xp.capture(device=DEV) as g:
        D = xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    assert len(g._graph.steps) == 1
    eager = host(xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1))
    g.replay()
    assert np.array_equal(host(D).view(np.uint32), eager.view(np.uint32))
    x, c = host(X).astype(np.float64), host(C).astype(np.float64)
    np.testing.assert_allclose(eager, ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_rowdot_gpu_layouts(dtype, monkeypatch):
    # the layouts a GPU adapter gets (a software one sums a row in one lane where rows are many, and splits k
    # into chunks short enough for its loop limit): one to four rows over all 256 lanes, 17 and 300 rows
    needs_dtype(getattr(xp, np.dtype(dtype).name))
    monkeypatch.setattr(k_contract, "_cpu_adapter", lambda client: False)
    rng = np.random.default_rng(9)
    for n, k in [(1, 1), (1, 7), (1, 2048), (2, 5), (3, 4097), (4, 33), (1, 70_000), (17, 1025), (300, 64)]:
        if dtype is np.int32:
            a, v = rng.integers(-9, 9, (n, k)).astype(dtype), rng.integers(-9, 9, k).astype(dtype)
        else:
            a, v = rng.standard_normal((n, k)).astype(dtype), rng.standard_normal(k).astype(dtype)
            if dtype is np.complex64:
                a = a + 1j * rng.standard_normal((n, k)).astype(np.float32)
        A, V = xp.asarray(a, device=DEV), xp.asarray(v, device=DEV)
        tol = 0 if dtype is np.int32 else 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
        for got, want in ((A @ V, a.astype(np.complex128) @ v), (xp.vecdot(V, V), np.vdot(v.astype(np.complex128), v))):
            np.testing.assert_allclose(host(got), want, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(want)))))
    with xp.capture(device=DEV) as g:
        r = xp.vecdot(V, V)
    eager = host(xp.vecdot(V, V))
    g.replay()
    assert host(r).tobytes() == eager.tobytes()
