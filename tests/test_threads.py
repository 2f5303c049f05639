"""Several threads on one device: every result right, the allocator's accounting consistent, and a capture
in one thread recording that thread's work only while the others run eagerly.

Run on every device present: cpu always, webgpu:0 with an adapter, cuda:0 with CuPy and a GPU. The
threads start together at a Barrier so that their calls really interleave."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

THREADS = 8
ITERS = 20
N = 256


def _device_param(name: str, kind: str, why: str):
    marks = [] if kind == "cpu" else [getattr(pytest.mark, kind)]
    if kind != "cpu" and get_runtime(kind) is None:
        marks.append(pytest.mark.skip(reason=why))
    return pytest.param(name, marks=marks, id=name)


DEVICES = [
    _device_param("cpu", "cpu", ""),
    _device_param("webgpu:0", "webgpu", "no WebGPU adapter (wgpu missing or no adapter found)"),
    _device_param("cuda:0", "cuda", "no CUDA device: CuPy is missing or finds no GPU"),
]


def run_threads(target, n: int = THREADS, timeout: float = 120.0) -> None:
    """Run ``target(k, barrier)`` in ``n`` threads; re-raise the first exception any of them raised."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(k):
        try:
            target(k, barrier)
        except BaseException as e:  # noqa: BLE001 (reported to the main thread below)
            errors.append(e)
            barrier.abort()  # threads still waiting at the barrier give up instead of hanging

    threads = [threading.Thread(target=body, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "threads did not finish (deadlock?)"
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]


def host(t) -> np.ndarray:
    return np.asarray(t.to_device("cpu"))


def check(got, want, what: str) -> None:
    # float32: a 256-term dot product of unit normals is exact to ~1e-5 relative; 1e-4 leaves room for
    # the summation order of each device
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * N, err_msg=what)


def eager_chain(a, b):
    """A matmul, element-wise ops and reductions: the work each eager thread repeats."""
    c = a @ b
    d = (c - a) * 0.5 + xp.abs(b)
    return c, d, xp.sum(d, axis=1), xp.max(d)


def eager_chain_np(a, b):
    c = a @ b
    d = (c - a) * np.float32(0.5) + np.abs(b)
    return c, d, d.sum(axis=1), d.max()


def eager_worker(device: str, seed: int, iters: int):
    """The body of an eager thread: its own operands, ``iters`` rounds, each result read back and checked."""
    rng = np.random.default_rng(seed)
    a_np = rng.standard_normal((N, N)).astype(np.float32)
    b_np = rng.standard_normal((N, N)).astype(np.float32)
    want = eager_chain_np(a_np, b_np)

    def run(barrier=None):
        a = xp.asarray(a_np, device=device)
        b = xp.asarray(b_np, device=device)
        if barrier is not None:
            barrier.wait()
        for i in range(iters):
            c, d, s, m = eager_chain(a, b)
            check(host(c), want[0], f"matmul, thread {seed}, round {i}")
            check(host(d), want[1], f"element-wise, thread {seed}, round {i}")
            check(host(s), want[2], f"sum, thread {seed}, round {i}")
            check(float(m), want[3], f"max, thread {seed}, round {i}")
    return run


@pytest.mark.parametrize("device", DEVICES)
def test_threads_compute_correctly(device):
    """8 threads x 20 rounds of a 256x256 matmul, element-wise ops, reductions and readbacks, each thread
    on its own data (on WebGPU this raised GPUValidationError: the threads shared one command encoder)."""
    run_threads(lambda k, barrier: eager_worker(device, k, ITERS)(barrier))


@pytest.mark.parametrize("device", DEVICES)
def test_threads_allocate_and_free_consistently(device):
    """Threads allocate and free many small tensors, some freed by another thread than their maker: no
    buffer is handed to two tensors at once, and the accounting ends where it began."""
    dev = xp._device.parse_device(device)
    alloc = dev.client.allocator
    xp.asarray(np.zeros(1, np.float32), device=device)  # the client exists before the count starts
    gc.collect()
    dev.client.synchronize()
    before = alloc.stats()
    made: list[list] = [[] for _ in range(THREADS)]
    swap = threading.Barrier(THREADS)

    def work(k, barrier):
        barrier.wait()
        mine = []
        for i in range(150):
            n = 1 + (7 * i + k) % 300
            value = float(k * 1000 + i)
            t = xp.full((n,), value, dtype=xp.float32, device=device)
            u = t + 1.0  # a temporary freed at once
            del u
            if i % 3 == 0:
                mine.append((t, value))
        for t, value in mine:  # nobody else wrote into this thread's buffers meanwhile
            assert np.array_equal(host(t), np.full(t.shape, value, np.float32)), (k, value)
        made[k] = mine
        swap.wait(60)
        made[(k + 1) % THREADS].clear()  # free another thread's tensors

    run_threads(work)
    del made
    gc.collect()
    dev.client.synchronize()
    after = alloc.stats()
    assert (after.bytes_in_use, after.allocations) == (before.bytes_in_use, before.allocations)


def _graph_len(g) -> int | None:
    steps = getattr(g._graph, "steps", None)  # CPU and WebGPU graphs list their steps; CUDA's do not
    return None if steps is None else len(steps)


def _captured_block(x, w, out):
    y = x @ w
    xp.multiply(xp.abs(y) + x, 0.25, out=out)


@pytest.mark.parametrize("device", DEVICES)
def test_capture_in_one_thread_while_others_run_eagerly(device):
    """One thread captures and replays while the others compute eagerly on the same device: the graph holds
    the capturing thread's launches only, replays right, and the eager threads' results are right. (With one
    process-wide capture state, an eager thread's readback on the CPU raised CaptureError and aborted the
    capture; on CUDA and WebGPU the eager threads' launches would go into the graph.)"""
    rng = np.random.default_rng(99)
    w_np = rng.standard_normal((N, N)).astype(np.float32)
    x_np = [rng.standard_normal((N, N)).astype(np.float32) for _ in range(4)]

    def want(x):
        return (np.abs(x @ w_np) + x) * np.float32(0.25)

    # the same block captured alone: how many launches its graph has
    w = xp.asarray(w_np, device=device)
    x = xp.asarray(x_np[0], device=device)
    out = xp.empty((N, N), dtype=xp.float32, device=device)
    with xp.capture(device=device) as alone:
        _captured_block(x, w, out)
    steps_alone = _graph_len(alone)
    started = threading.Event()

    def work(k, barrier):
        if k:
            run = eager_worker(device, 100 + k, ITERS // 2)
            barrier.wait()
            started.set()
            run()
            return
        barrier.wait()
        started.wait(30)  # the eager threads are under way
        for r in range(3):
            x = xp.asarray(x_np[0], device=device)
            out = xp.empty((N, N), dtype=xp.float32, device=device)
            with xp.capture(device=device) as g:
                _captured_block(x, w, out)
            assert {id(t) for t in g.inputs} <= {id(x), id(w)} and [id(t) for t in g.outputs] == [id(out)]
            if steps_alone is not None:
                assert _graph_len(g) == steps_alone, "the graph recorded another thread's launches"
            check(host(out), want(x_np[0]), f"captured block, round {r}")
            for i, xi in enumerate(x_np[1:]):
                x[...] = xp.asarray(xi, device=device)
                g.replay()
                check(host(out), want(xi), f"replay {i}, round {r}")

    run_threads(work)


@pytest.mark.parametrize("device", DEVICES)
def test_two_threads_capture_one_device(device):
    """Two threads capture the same device at once: the second capture waits for the first; each graph
    holds its own thread's work and replays right."""
    rng = np.random.default_rng(7)
    data = [rng.standard_normal(64).astype(np.float32) for _ in range(2)]
    first_inside = threading.Event()

    def work(k, barrier):
        x = xp.asarray(data[k], device=device)
        out = xp.empty((64,), dtype=xp.float32, device=device)
        barrier.wait()
        if k:
            assert first_inside.wait(10)
        with xp.capture(device=device) as g:
            if not k:
                first_inside.set()
                time.sleep(0.2)  # thread 1 asks for its capture meanwhile
            xp.multiply(x * float(k + 2), x, out=out)
        for r in range(5):
            x[...] = xp.asarray(data[k] + r, device=device)
            g.replay()
            np.testing.assert_allclose(host(out), (data[k] + r) * np.float32(k + 2) * (data[k] + r), rtol=1e-6)

    run_threads(work, n=2)


def test_capture_state_is_per_thread():
    """A capture belongs to its thread: another thread is not inside it (may capture another device, read
    its own data back, nest no error), and the capture in progress is untouched by what it does."""
    from numr_array import _capture

    x = xp.asarray(np.arange(4.0), device="cpu")
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        entered.wait(10)
        seen["state"] = _capture.current()
        seen["read"] = np.asarray(x + 1.0)  # a host read of the captured device: not this thread's capture
        done.set()

    t = threading.Thread(target=other, daemon=True)
    t.start()
    out = xp.empty((4,), device="cpu")
    with xp.capture(device="cpu") as g:
        xp.multiply(x, 2.0, out=out)
        entered.set()
        assert done.wait(10)
    t.join(10)
    assert seen["state"] is None
    np.testing.assert_array_equal(seen["read"], np.arange(4.0) + 1)
    assert len(g._graph.steps) == 1  # the other thread's add was not recorded
    x[...] = 5.0
    g.replay()
    np.testing.assert_array_equal(np.asarray(out), np.full(4, 10.0))


@pytest.mark.parametrize("device", [p for p in DEVICES if p.id != "cpu"])
def test_a_free_never_waits_for_the_device_lock(device):
    """A tensor's last reference can go in any thread at any moment, also while another thread (or the same
    one, inside the client's own code) holds the device's lock: the free must not wait for that lock, or
    two threads freeing each other's device memory could deadlock. The memory is accounted for at once."""
    dev = xp._device.parse_device(device)
    client, alloc = dev.client, dev.client.allocator
    ts = [xp.full((1000,), float(k), dtype=xp.float32, device=device) for k in range(2)]
    gc.collect()
    before = alloc.stats()
    with client._lock:
        ts.pop()  # freed by this thread while it holds the lock
        t = threading.Thread(target=ts.pop, daemon=True)  # and by another one meanwhile
        t.start()
        t.join(10)
        assert not t.is_alive(), "freeing a tensor waited for the device lock"
    after = alloc.stats()
    assert before.bytes_in_use - after.bytes_in_use == 2 * 4000
    assert before.allocations - after.allocations == 2
    u = xp.full((1000,), 7.0, dtype=xp.float32, device=device)  # the freed memory is usable again
    assert np.array_equal(host(u), np.full(1000, 7.0, np.float32))


def test_first_use_from_many_threads_makes_one_client(fake_backend, monkeypatch):
    """Threads that use a device for the first time at once share one Client (two WebGPU clients would be
    two wgpu devices, and a buffer of one is invalid on the other)."""
    from tests.fake_backend import FakeRuntime

    made = []
    create = FakeRuntime.create_client

    def slow_create(self, device):
        made.append(device)
        time.sleep(0.05)  # widen the window in which another thread could start a second client
        return create(self, device)

    monkeypatch.setattr(FakeRuntime, "create_client", slow_create)
    dev = xp._device.parse_device("fake:1")
    monkeypatch.setattr(dev, "_client", None)
    clients = [None] * THREADS

    def work(k, barrier):
        barrier.wait()
        clients[k] = dev.client

    run_threads(work)
    assert made == [dev] and all(c is clients[0] for c in clients)
