"""Capture on CUDA: a block becomes one CUDA graph of the compute stream; replay re-launches it on new
input data; intermediates live in the graph's arena; matrix products are captured through our cuBLAS
handle; host reads and uncapturable library calls raise CaptureError and leave the stream usable."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)

import cupy  # noqa: E402

from numr_array.backends.cuda._client import CudaGraph  # noqa: E402
from numr_array.backends.cuda._direct_elementwise import FusedRun  # noqa: E402

DEV = "cuda:0"
dev = xp._device.parse_device(DEV)
client = dev.client


def on(a):
    return xp.asarray(a, device=DEV)


def assert_stream_usable():
    assert not client.stream.is_capturing()
    r = xp.sum(on(np.arange(10.0)) * 2)
    assert float(r) == 90.0
    with xp.capture(device=DEV) as g:
        y = on(np.ones(4)) + 1  # an upload inside the block becomes a constant of the graph
    g.replay()
    assert np.array_equal(to_np(y), np.full(4, 2.0))


def chain(x, y, n):
    t = x
    for i in range(n // 2):
        t = xp.multiply(t, 0.999)
        t = xp.add(t, y)
    return t


def chain_np(a, b, n):
    t = a
    for i in range(n // 2):
        t = t * a.dtype.type(0.999)
        t = t + b
    return t


def test_capture_makes_a_cuda_graph_and_replays_on_new_data():
    a = np.linspace(-1, 1, 1024, dtype=np.float32)
    b = np.full(1024, 0.001, np.float32)
    x, y = on(a), on(b)
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        xp.add(chain(x, y, 300), 0.0, out=out)
    assert isinstance(g._graph, CudaGraph)
    assert isinstance(g._graph._graph, cupy.cuda.graph.Graph)
    np.testing.assert_allclose(to_np(out), chain_np(a, b, 300), rtol=1e-5)  # the block ran once
    a2 = np.cos(a)
    x[...] = on(a2)
    g.replay()
    np.testing.assert_allclose(to_np(out), chain_np(a2, b, 300), rtol=1e-5)
    for _ in range(3):
        g.replay()
    np.testing.assert_allclose(to_np(out), chain_np(a2, b, 300), rtol=1e-5)


@given(st.lists(st.sampled_from(["sin", "exp", "abs", "neg", "mul", "addy", "sub", "max"]), min_size=1, max_size=12),
       st.integers(0, 2**31))
def test_replay_equals_eager(ops, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(37), rng.standard_normal(37)
    x, y = on(a), on(b)
    out = xp.empty((37,), device=DEV)

    def run(t, u):
        for op in ops:
            t = {"sin": lambda: xp.sin(t), "exp": lambda: xp.exp(xp.clip(t, -5, 5)), "abs": lambda: xp.abs(t),
                 "neg": lambda: -t, "mul": lambda: t * 1.5, "addy": lambda: t + u, "sub": lambda: u - t,
                 "max": lambda: xp.maximum(t, u)}[op]()
        return t

    with xp.capture(device=DEV) as g:
        xp.add(run(x, y), 0.0, out=out)
    a2 = rng.standard_normal(37)
    x[...] = on(a2)
    g.replay()
    np.testing.assert_allclose(to_np(out), to_np(run(on(a2), y)), rtol=1e-12)


def test_intermediates_come_from_the_arena_and_are_never_reused():
    x = on(np.arange(4096.0))
    out = xp.empty((4096,), device=DEV)
    with xp.capture(device=DEV) as g:
        t1 = xp.sqrt(x + 1.0)  # CuPy temporaries too (clip computes through one) come from the arena
        t2 = xp.clip(t1, 2.0, 50.0)
        xp.multiply(t2, 2.0, out=out)
    arena = [b.handle.ptr for b in g._arena._buffers]
    assert g.arena_bytes >= 2 * 4096 * 8 and t1._buf.handle.ptr in arena
    del t1, t2
    gc.collect()
    # eager tensors allocated now get other memory than the graph's intermediates, so replay leaves them be
    eager = [xp.full((4096,), 123.0, device=DEV) for _ in range(8)]
    for e in eager:
        assert e._buf.handle.ptr not in arena
    x[...] = 9.0
    g.replay()
    assert np.array_equal(to_np(out), np.full(4096, 2 * np.sqrt(10.0)))
    for e in eager:
        assert np.array_equal(to_np(e), np.full(4096, 123.0))


def test_graph_holds_its_tensors_and_releases_graph_then_arena():
    x = on(np.arange(8.0))
    out = xp.empty((8,), device=DEV)
    with xp.capture(device=DEV) as g:
        t = x * 2.0
        xp.add(t, 1.0, out=out)
    xb, tb = weakref.ref(x._buf), weakref.ref(t._buf.block)  # (t's memory, which the arena holds)
    del x, t
    gc.collect()
    assert xb() is not None and tb() is not None
    g.replay()
    assert np.array_equal(to_np(out), np.arange(8.0) * 2 + 1)
    del g
    gc.collect()
    assert xb() is None and tb() is None


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.complex64, xp.int32])
def test_matmul_tensordot_vecdot_are_captured(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 8, 16)).astype(dtype)
    b = rng.standard_normal((16, 4)).astype(dtype)
    x, y = on(a), on(b)
    out = xp.empty((2, 8, 4), dtype=dtype, device=DEV)
    with xp.capture(device=DEV) as g:
        xp.matmul(x, y, out=out)
        td = xp.tensordot(x, y, axes=([2], [0]))
        vd = xp.vecdot(x, x)
        mt = x @ xp.matrix_transpose(x)
    tol = 1e-4 if dtype in (xp.float32, xp.complex64) else 1e-10
    a2 = (a * 0.5 - 1).astype(dtype)
    x[...] = on(a2)
    g.replay()
    np.testing.assert_allclose(to_np(out), a2 @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(td), np.tensordot(a2, b, axes=([2], [0])), rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(vd), np.vecdot(a2, a2), rtol=tol, atol=tol)
    np.testing.assert_allclose(to_np(mt), a2 @ a2.swapaxes(-1, -2), rtol=tol, atol=tol)


def test_captured_matmul_has_no_cublas_error_and_replays_fast_path():
    a = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
    x = on(a)
    with xp.capture(device=DEV) as g:
        y = x @ x
    for _ in range(3):
        g.replay()
    np.testing.assert_allclose(to_np(y), a @ a, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("read", ["float", "bool", "to_numpy", "nonzero", "mask", "synchronize", "dlpack"])
def test_host_reads_raise_capture_error_and_leave_the_stream_usable(read):
    x = on(np.array([1.0, -2.0, 3.0]))
    calls = {
        "float": lambda y: float(y[0]),
        "bool": lambda y: bool(y[0] > 0),
        "to_numpy": lambda y: y.to_device("cpu"),
        "nonzero": lambda y: xp.nonzero(y),
        "mask": lambda y: y[y > 0],
        "synchronize": lambda y: client.synchronize(),
        "dlpack": lambda y: cupy.from_dlpack(y),
    }
    with pytest.raises(xp.CaptureError):
        with xp.capture(device=DEV) as g:
            y = x * 2.0
            calls[read](y)
    with pytest.raises(xp.CaptureError):
        g.replay()
    assert not client.allocator.is_frozen and client.arena is None
    assert_stream_usable()


def test_uncapturable_library_calls_raise_capture_error():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = on(a)
    with pytest.raises(xp.CaptureError, match="inv"):
        with xp.capture(device=DEV):
            xp.linalg.inv(x)
    assert_stream_usable()
    np.testing.assert_allclose(to_np(xp.linalg.inv(x)), np.linalg.inv(a))


def test_exception_inside_the_block_aborts_the_cuda_capture():
    x = on(np.ones(3))
    with pytest.raises(ZeroDivisionError):
        with xp.capture(device=DEV):
            x + 1
            1 / 0
    assert_stream_usable()


def test_replay_is_asynchronous_and_reading_synchronises():
    # entries of y @ x stay about 0.03, so float32 rounding differences stay small
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((1024, 1024)) / 32).astype(np.float32)
    x = on(a)
    with xp.capture(device=DEV) as g:
        y = x
        for _ in range(5):
            y = xp.tanh(y @ x)
    a2 = (rng.standard_normal((1024, 1024)) / 32).astype(np.float32)
    x[...] = on(a2)
    g.replay()
    g.replay()  # both queued without waiting; reading y waits for them
    expected = a2.astype(np.float64)
    for _ in range(5):
        expected = np.tanh(expected @ a2)
    assert np.abs(expected).mean() > 0.01
    np.testing.assert_allclose(to_np(y), expected, rtol=1e-3, atol=1e-5)


def test_upload_inside_capture_is_a_graph_constant():
    x = on(np.arange(5.0))
    with xp.capture(device=DEV) as g:
        c = xp.asarray(np.full(5, 10.0), device=DEV)
        y = x + c
    x[...] = 1.0
    g.replay()
    assert np.array_equal(to_np(y), np.full(5, 11.0))


def test_direct_ops_in_a_capture_become_fused_kernels_with_eager_results(monkeypatch):
    a = np.linspace(-1, 1, 1024, dtype=np.float32)
    b = np.full(1024, 0.001, np.float32)
    x, y = on(a), on(b)
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    runs = []
    launch_run = client._direct.launch_run
    monkeypatch.setattr(client._direct, "launch_run",
                        lambda run, dead=frozenset(): (runs.append(len(run.steps)), launch_run(run, dead)))
    with xp.capture(device=DEV) as g:
        xp.add(chain(x, y, 300), 0.0, out=out)
    # 301 ops in kernels of at most MAX_STEPS steps each
    assert sum(runs) == 301 and len(runs) == -(-301 // FusedRun.MAX_STEPS)
    eager = to_np(chain(x, y, 300))
    np.testing.assert_array_equal(to_np(out), eager)  # the same roundings as one kernel per op
    x[...] = on(np.cos(a))
    g.replay()
    np.testing.assert_array_equal(to_np(out), to_np(chain(x, y, 300)))


def test_fused_runs_mix_dtypes_scalars_comparisons_and_in_place_updates():
    rng = np.random.default_rng(5)
    i = on(rng.integers(-2**31, 2**31 - 1, 64, dtype=np.int32))
    f = on(rng.standard_normal(64))
    u8 = on(rng.integers(0, 255, 64, dtype=np.uint8))

    def block():
        j = xp.multiply(i, 3)  # wraps
        j = xp.subtract(7, j)
        m = xp.less(xp.bitwise_and(j, 0xFF), 100)
        m = xp.logical_xor(m, xp.greater(f, 0.0))
        g2 = xp.divide(f, xp.add(f, 1.0))
        v = xp.add(u8, u8)
        xp.multiply(v, 3, out=v)  # in place
        return j, m, g2, v

    eager = [to_np(t) for t in block()]
    with xp.capture(device=DEV) as g:
        results = block()
    for t, e in zip(results, eager):
        np.testing.assert_array_equal(to_np(t), e, strict=True)
    g.replay()
    for t, e in zip(results, eager):
        np.testing.assert_array_equal(to_np(t), e, strict=True)


def test_an_op_reading_an_overlapping_shifted_view_is_not_fused_with_its_writer():
    # x[0:8] written, then x[4:12] read: element i of the second op needs element i + 4 of the first,
    # which another thread computes; the second op must start a new kernel
    c = on(np.arange(8, dtype=np.float32))
    buf = on(np.zeros(16, np.float32))
    d = xp.empty((8,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        xp.multiply(c, 2.0, out=buf[0:8])
        xp.add(buf[4:12], 1.0, out=d)
    want = np.zeros(16, np.float32)
    want[0:8] = np.arange(8) * 2
    np.testing.assert_array_equal(to_np(d), want[4:12] + 1)
    c[...] = on(np.arange(8, dtype=np.float32) + 100)
    g.replay()
    want[0:8] = (np.arange(8) + 100) * 2
    np.testing.assert_array_equal(to_np(d), want[4:12] + 1)
