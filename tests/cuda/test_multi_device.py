"""Several GPUs in one host: every GPU listed; to_device between GPUs copies device to device (never through
the host); work on cuda:1 stays on GPU 1 whichever device CuPy has current; mixed devices raise the
standard's ValueError; a capture on cuda:0 leaves cuda:1 usable (same thread or another, and a capture of its
own); linalg, fft, matmul and random numbers on cuda:1; one thread per GPU and two sharing one.

Needs two GPUs (``nvidia-h200-x2``); skipped, naming the missing device, with fewer."""

import contextlib
import threading

import numpy as np
import pytest

import numr_array as xp
from numr_array import _dlpack, _transfer
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)
if get_runtime("cuda").device_count() < 2:
    pytest.skip("one CUDA device only (cuda:0): these tests need a second GPU, cuda:1", allow_module_level=True)

import cupy  # noqa: E402
from cupy.cuda import runtime  # noqa: E402

from numr_array.backends.cuda import _client as cuda_client  # noqa: E402

D0, D1 = xp._device.parse_device("cuda:0"), xp._device.parse_device("cuda:1")
BIG = 1 << 21  # a large array: many blocks of the direct kernels, and CuPy's reductions and temporaries


def gpu_of(t) -> int:
    """The GPU holding ``t``'s memory, as the CUDA driver reports it for the pointer."""
    return runtime.pointerGetAttributes(t.__cuda_array_interface__["data"][0]).device


def no_host(*args, **kwargs):
    raise AssertionError("a copy between two GPUs went through the host")


@contextlib.contextmanager
def host_forbidden(monkeypatch):
    """Inside the block every host transfer fails; yields the cudaMemcpyPeerAsync calls made in it, each
    (dst, dst_device, src, src_device, nbytes, stream)."""
    calls = []
    real = cuda_client._memcpy_peer

    def counted(*args):
        calls.append(args)
        return real(*args)

    with monkeypatch.context() as m:
        m.setattr(cuda_client, "_memcpy_peer", counted)
        m.setattr(_transfer, "to_numpy", no_host)
        m.setattr(_transfer, "from_numpy", no_host)
        m.setattr(cuda_client.CudaClient, "copy_from_device", no_host)
        m.setattr(cuda_client.CudaClient, "copy_to_device", no_host)
        m.setattr(_dlpack, "_copy", no_host)
        yield calls


def test_every_gpu_is_listed():
    n = runtime.getDeviceCount()
    listed = [str(d) for d in xp.__array_namespace_info__().devices() if d.kind == "cuda"]
    assert listed == [f"cuda:{i}" for i in range(n)]
    assert xp.asarray([1.0], device="cuda:1").device == D1


def test_peer_access_is_what_the_driver_reports():
    for a, b in ((0, 1), (1, 0)):
        assert cuda_client.peer_access(a, b) == bool(runtime.deviceCanAccessPeer(a, b))
    assert not cuda_client.peer_access(1, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int8, np.uint64, np.bool_])
def test_to_device_between_gpus_copies_device_to_device(monkeypatch, dtype):
    a = (np.abs(np.random.default_rng(0).standard_normal((257, 33))) * 50 % 100).astype(dtype)
    x = xp.asarray(a, device=D0)
    e = xp.asarray(np.zeros((0, 4), dtype), device=D0)
    with host_forbidden(monkeypatch) as copies:
        y = x.to_device("cuda:1")
        z = x[::2, 3:].to_device(D1)  # strided: made dense on cuda:0, then one peer copy
        back = y.to_device("cuda:0")
        empty = e.to_device(D1)  # nothing to copy
    assert (y.device, z.device, back.device, empty.device) == (D1, D1, D0, D1)
    assert (gpu_of(x), gpu_of(y), gpu_of(z), gpu_of(back)) == (0, 1, 1, 0)
    assert [(c[1], c[3], c[4]) for c in copies] == [(1, 0, a.nbytes), (1, 0, a[::2, 3:].nbytes), (0, 1, a.nbytes)]
    assert to_np(y).tobytes() == a.tobytes()
    assert to_np(z).tobytes() == np.ascontiguousarray(a[::2, 3:]).tobytes()
    assert to_np(back).tobytes() == a.tobytes()
    assert empty.shape == (0, 4)


def test_a_peer_copy_is_ordered_with_both_gpus_work():
    # the source is still being computed when the copy is queued, and its block (a temporary, freed as soon as
    # to_device returns) is at once reused on cuda:0 by a fill: the copy must read the finished values
    want = np.arange(BIG, dtype=np.float32) * 2 + 1
    x = xp.arange(BIG, dtype=xp.float32, device=D0)
    for _ in range(3):
        y = (x * 2.0 + 1.0).to_device(D1)
        w = xp.full((BIG,), -1.0, dtype=xp.float32, device=D0)
        z = y * 1.0  # and cuda:1's next work comes after the copy
        np.testing.assert_array_equal(to_np(z), want)
        np.testing.assert_array_equal(to_np(y), want)
        assert float(xp.sum(w)) == -BIG


def test_from_dlpack_of_another_gpus_array_copies_device_to_device(monkeypatch):
    with cupy.cuda.Device(1):
        c = cupy.arange(12, dtype=cupy.float64).reshape(3, 4)
        c.device.synchronize()
    shared = xp.from_dlpack(c)
    assert shared.device == D1 and shared.__cuda_array_interface__["data"][0] == c.data.ptr
    with host_forbidden(monkeypatch) as copies:
        t = xp.from_dlpack(c, device="cuda:0")
        u = xp.asarray(c, device="cuda:0")  # (asarray of a DLPack producer is from_dlpack)
    assert [(k[1], k[3]) for k in copies] == [(0, 1), (0, 1)]
    for r in (t, u):
        assert r.device == D0 and gpu_of(r) == 0
        assert to_np(r).tolist() == np.arange(12.0).reshape(3, 4).tolist()


@pytest.mark.parametrize("current", [0, 1])
def test_work_on_cuda1_stays_on_gpu1_whichever_device_is_current(current):
    rng = np.random.default_rng(1)
    small, big = rng.standard_normal(8), rng.standard_normal(BIG).astype(np.float32)
    with cupy.cuda.Device(current):
        s, b = xp.asarray(small, device=D1), xp.asarray(big, device=D1)
        r_small = s * 2.0 + xp.sin(s)  # the direct launcher (small operands), then CuPy
        r_big = xp.exp(b) - b  # CuPy's kernels
        total = xp.sum(b)
        mean = xp.mean(r_small)
        zero = xp.asarray(small, device=D0) * 0.0  # and cuda:0's work with cuda:1 current
    for t in (r_small, r_big, total, mean):
        assert t.device == D1 and gpu_of(t) == 1
    assert zero.device == D0 and gpu_of(zero) == 0
    np.testing.assert_allclose(to_np(r_small), small * 2 + np.sin(small), rtol=1e-14)
    np.testing.assert_allclose(to_np(r_big), np.exp(big) - big, rtol=1e-6)  # (exp(b) - b >= 1: no cancellation)
    # a float32 tree sum of 2**21 terms: within log2(n) * eps * sum|x| of the exact sum
    assert abs(float(total) - big.sum(dtype=np.float64)) <= 21 * 2**-23 * np.abs(big).sum(dtype=np.float64)
    assert to_np(zero).tolist() == [0.0] * 8


def test_mixing_gpus_raises_the_standards_error():
    x0, x1 = xp.ones((3, 3), device=D0), xp.ones((3, 3), device=D1)
    both = r"cuda:0.*cuda:1|cuda:1.*cuda:0"
    for f in (lambda: xp.add(x0, x1), lambda: x0 + x1, lambda: x1 * x0, lambda: xp.matmul(x0, x1),
              lambda: xp.concat([x0, x1]), lambda: xp.where(x0 > 0, x0, x1), lambda: xp.add(x0, x0, out=x1)):
        with pytest.raises(ValueError, match=both):
            f()
    assert to_np(x1).tolist() == np.ones((3, 3)).tolist()  # out untouched


def test_linalg_fft_and_matmul_on_cuda1():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((48, 48))
    spd = a @ a.T + 48 * np.eye(48)
    b = rng.standard_normal((48, 3))
    v = rng.standard_normal(256)
    A, S, B, V = (xp.asarray(t, device=D1) for t in (a, spd, b, v))
    a32 = a.astype(np.float32)
    A32 = xp.astype(A, xp.float32)
    results = {
        "matmul": (A @ B, a @ b),
        "matmul_f32": (A32 @ A32, a32 @ a32),
        "solve": (xp.linalg.solve(S, B), np.linalg.solve(spd, b)),
        "inv": (xp.linalg.inv(S), np.linalg.inv(spd)),
        "cholesky": (xp.linalg.cholesky(S), np.linalg.cholesky(spd)),
        "eigvalsh": (xp.linalg.eigvalsh(S), np.linalg.eigvalsh(spd)),
        "svdvals": (xp.linalg.svdvals(A), np.linalg.svd(a, compute_uv=False)),
        "fft": (xp.fft.fft(V), np.fft.fft(v)),
        "rfft": (xp.fft.rfft(V), np.fft.rfft(v)),
        "ifft": (xp.fft.ifft(xp.fft.fft(V)), v.astype(complex)),
    }
    for name, (got, want) in results.items():
        assert got.device == D1 and gpu_of(got) == 1, name
        rtol = 1e-4 if name == "matmul_f32" else 1e-9
        np.testing.assert_allclose(to_np(got), want, rtol=rtol, atol=rtol * np.abs(want).max(), err_msg=name)


def test_random_numbers_on_cuda1_are_cuda0s():
    g0, g1 = xp.random.default_rng(7, device=D0), xp.random.default_rng(7, device=D1)
    for draw in (lambda g: g.random(1000), lambda g: g.integers(0, 1000, size=500),
                 lambda g: g.random(7, dtype=xp.float32)):
        r0, r1 = draw(g0), draw(g1)
        assert r1.device == D1 and gpu_of(r1) == 1
        assert to_np(r1).tobytes() == to_np(r0).tobytes()
    n0, n1 = g0.standard_normal(1000), g1.standard_normal(1000)
    np.testing.assert_allclose(to_np(n1), to_np(n0), rtol=1e-12)
    assert xp.random.random(5, device=D1).device == D1


def _cuda0_block(x0, out0):
    xp.add(x0 * 2.0, 1.0, out=out0)


def test_capture_on_cuda0_leaves_cuda1_eager_on_the_same_thread():
    rng = np.random.default_rng(4)
    a, big = rng.standard_normal(64), rng.standard_normal(BIG)
    spd = np.eye(32) * 4 + rng.standard_normal((32, 32)) * 0.1
    spd = spd @ spd.T
    b = rng.standard_normal((32, 2))
    x0, out0 = xp.asarray(a, device=D0), xp.empty((64,), dtype=xp.float64, device=D0)
    x1, big1, m1, b1 = (xp.asarray(t, device=D1) for t in (a, big, spd, b))

    with xp.capture(device=D0) as plain:
        _cuda0_block(x0, out0)
    with xp.capture(device=D0) as g:
        _cuda0_block(x0, out0)
        y1 = x1 * 3.0 + 1.0
        s1 = xp.linalg.solve(m1, b1)  # cuSOLVER on cuda:1: its workspace from cuda:1's pool
        r1 = xp.sum(xp.reshape(big1, (1024, -1)), axis=0)  # a CuPy reduction with temporaries
        f1 = xp.fft.fft(big1[:4096])
        host = float(xp.sum(x1))  # a host read of cuda:1's data
        h1 = x1.to_device("cpu")  # and a copy out of it
    # cuda:1's work took nothing from cuda:0's arena, and the graph holds no cuda:1 tensor
    assert g.arena_bytes == plain.arena_bytes
    assert all(t.device == D0 for t in g.inputs + g.outputs)
    for t in (y1, s1, r1, f1):
        assert t.device == D1 and gpu_of(t) == 1
    np.testing.assert_allclose(to_np(y1), a * 3 + 1, rtol=1e-15)
    np.testing.assert_allclose(to_np(s1), np.linalg.solve(spd, b), rtol=1e-10)
    np.testing.assert_allclose(to_np(r1), big.reshape(1024, -1).sum(axis=0), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_np(f1), np.fft.fft(big[:4096]), rtol=1e-9, atol=1e-9)
    assert host == pytest.approx(a.sum(), rel=1e-12) and np.asarray(h1).tolist() == a.tolist()
    np.testing.assert_array_equal(to_np(out0), a * 2 + 1)
    # a replay re-runs cuda:0's block only
    x0[...] = xp.asarray(np.ones(64), device=D0)
    x1[...] = xp.asarray(np.zeros(64), device=D1)
    g.replay()
    np.testing.assert_array_equal(to_np(out0), np.full(64, 3.0))
    np.testing.assert_allclose(to_np(y1), a * 3 + 1, rtol=1e-15)
    # copies to or from the captured device are refused (and the capture aborted), cuda:0 usable after
    for f in (lambda: x1.to_device(D0), lambda: x0.to_device(D1)):
        with pytest.raises(xp.CaptureError, match="to_device"):
            with xp.capture(device=D0):
                f()
    assert float(xp.sum(x0)) == 64.0


def test_capture_on_cuda0_while_another_thread_works_on_cuda1():
    rng = np.random.default_rng(5)
    a, m = rng.standard_normal(64), rng.standard_normal((64, 64))
    x0, out0 = xp.asarray(a, device=D0), xp.empty((64,), dtype=xp.float64, device=D0)
    inside, done, result, failures = threading.Event(), threading.Event(), {}, []

    def worker():
        try:
            inside.wait(30)
            x1, m1 = xp.asarray(a, device=D1), xp.asarray(m, device=D1)
            y = xp.tanh(m1 @ x1) + 1.0
            result["y"], result["sum"], result["gpu"] = to_np(y), float(xp.sum(y)), gpu_of(y)
        except BaseException as e:  # noqa: BLE001  (reported by the test below)
            failures.append(e)
        finally:
            done.set()

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    with xp.capture(device=D0) as g:
        _cuda0_block(x0, out0)
        inside.set()
        assert done.wait(60), "cuda:1's work in another thread waited for cuda:0's capture"
        xp.multiply(out0, 2.0, out=out0)
    t.join(10)
    assert not failures, failures
    want = np.tanh(m @ a) + 1
    # (absolute: 1 + tanh(z) cancels where tanh(z) is near -1, so an ulp of z's matrix product, summed in
    # cuBLAS's order, not NumPy's, is an ulp of 1 there, however small the result)
    np.testing.assert_allclose(result["y"], want, rtol=1e-12, atol=1e-13)
    assert result["gpu"] == 1 and result["sum"] == pytest.approx(want.sum(), rel=1e-12)
    x0[...] = xp.asarray(np.ones(64), device=D0)
    g.replay()
    np.testing.assert_array_equal(to_np(out0), np.full(64, 6.0))


def test_two_threads_capture_two_gpus_at_once():
    a = np.linspace(-1, 1, 4096)
    w = np.random.default_rng(6).standard_normal((64, 64)) / 8
    barrier, results, failures = threading.Barrier(2, timeout=60), {}, []

    def work(dev):
        try:
            x, wt = xp.asarray(a, device=dev), xp.asarray(w, device=dev)
            out = xp.empty((64, 64), dtype=xp.float64, device=dev)
            with xp.capture(device=dev) as g:
                barrier.wait()  # both captures open together
                xp.matmul(xp.tanh(xp.reshape(x, (64, 64))), wt, out=out)
                s = xp.sum(out * out)
            x[...] = xp.asarray(-a, device=dev)
            g.replay()
            results[str(dev)] = (to_np(out), float(s), gpu_of(out))
        except BaseException as e:  # noqa: BLE001
            failures.append((dev, e))

    threads = [threading.Thread(target=work, args=(d,), daemon=True) for d in (D0, D1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    want = np.tanh(-a.reshape(64, 64)) @ w
    for i, dev in enumerate(("cuda:0", "cuda:1")):
        got, s, gpu = results[dev]
        assert gpu == i
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
        assert s == pytest.approx((want * want).sum(), rel=1e-12)


def test_capture_on_cuda1_replays_there():
    a = np.random.default_rng(8).standard_normal((32, 32))
    x = xp.asarray(a, device=D1)
    out = xp.empty((32,), dtype=xp.float64, device=D1)
    with xp.capture(device="cuda:1") as g:
        xp.add(xp.sum(xp.exp(x @ x * 0.01), axis=0), 1.0, out=out)  # cuBLAS, CuPy and direct kernels
    x[...] = xp.asarray(a.T.copy(), device=D1)
    g.replay()
    assert gpu_of(out) == 1
    np.testing.assert_allclose(to_np(out), np.exp(a.T @ a.T * 0.01).sum(axis=0) + 1.0, rtol=1e-12)


def test_one_thread_per_gpu_and_two_sharing_each():
    n = runtime.getDeviceCount()
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((64, 64)), rng.standard_normal((64, 64)) / 8
    want = a
    for _ in range(10):
        want = np.tanh(want @ w) + 0.5
    results, failures = {}, []

    def work(key, dev):
        try:
            x, wt = xp.asarray(a, device=dev), xp.asarray(w, device=dev)
            for _ in range(10):
                x = xp.tanh(x @ wt) + 0.5
            results[key] = (to_np(x), float(xp.sum(x)), gpu_of(x), x.device)
        except BaseException as e:  # noqa: BLE001
            failures.append((key, e))

    threads = [threading.Thread(target=work, args=((i, k), f"cuda:{i}"), daemon=True)
               for i in range(n) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures, failures
    assert len(results) == 2 * n
    for (i, _), (got, s, gpu, dev) in results.items():
        assert gpu == i and str(dev) == f"cuda:{i}"
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)  # (ten products and tanh: a few ulps)
        assert s == pytest.approx(want.sum(), rel=1e-10)
