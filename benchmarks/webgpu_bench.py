"""WebGPU benchmarks against CuPy: element-wise on 1 GiB, sum over 1 GiB (bandwidth, ratio to CuPy),
the eager small-op rate, a 300-op element-wise chain on 1024 floats eager vs captured and replayed, a
100-step chain of sin and multiply-by-a-scalar replayed (against CuPy's stream-captured graph), and
the device kernels of the rest of the standard: float32 matmul 4096 and 8192, sort of 1e8 float32 and an
FFT of 2^24 complex64.

Run: ``python benchmarks/webgpu_bench.py [--gib 1.0] [--json out.json] [--skip-kernels]``. CuPy is optional
(its columns are left out without it). Every time is the median of repeats after a warm-up, each ended by a device
synchronisation (a readback on WebGPU, ``stream.synchronize()`` on CUDA); the bandwidth rows time
batches of 10 calls per synchronisation (steady-state throughput, for both libraries), the others one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


import numr_array as xp
from numr_array import _elementwise as ew

DEV = "webgpu:0"


def timed(fn, sync, repeats: int, warmup: int = 2, batch: int = 1) -> float:
    """Median seconds per call of ``batch`` calls of ``fn`` followed by one ``sync()``."""
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        ts.append((time.perf_counter() - t0) / batch)
    return statistics.median(ts)


BATCH = 10  # bandwidth rows: calls per synchronisation, so that its own cost is not counted as bandwidth


def _repeat(f, a, b, n: int) -> None:
    """n calls of f(a, b), each result dropped (the steady state of a loop: memory returns to the pool)."""
    for _ in range(n):
        f(a, b)


def chain(mul, add, x, y, n: int):
    t = x
    for _ in range(n // 2):
        t = mul(t, 0.999)
        t = add(t, y)
    return t


def sin_chain(sin, mul, x, n: int = 100):
    """The issue's capture case: n steps of sin and a multiply by a scalar."""
    t = x
    for _ in range(n):
        t = mul(sin(t), 1.5)
    return t


def bench_webgpu(n_big: int, repeats: int) -> dict:
    client = xp._device.parse_device(DEV).client
    sync = client.synchronize
    r: dict = {"adapter": dict(client.adapter.info), "features": sorted(client.features)}
    x = xp.ones((n_big,), dtype=xp.float32, device=DEV)
    y = xp.empty((n_big,), dtype=xp.float32, device=DEV)
    t = timed(lambda: ew.multiply(x, 2.0, out=y), sync, repeats, batch=BATCH)
    r["elementwise_s"] = t
    r["elementwise_GBps"] = 2 * 4 * n_big / t / 1e9
    t = timed(lambda: xp.sum(x), sync, repeats, batch=BATCH)
    r["sum_s"] = t
    r["sum_GBps"] = 4 * n_big / t / 1e9
    assert float(xp.sum(x)) == float(n_big)
    x = y = None  # give the 2 GiB back before the small-array runs
    client.allocator.release_pool()

    a = xp.ones((1024,), dtype=xp.float32, device=DEV)
    b = xp.ones((1024,), dtype=xp.float32, device=DEV)
    n_small = 2000
    t = timed(lambda: _repeat(ew.add, a, b, n_small), sync, max(3, repeats // 2))
    r["eager_ops_per_s"] = n_small / t
    r["eager_us_per_op"] = t / n_small * 1e6
    r["chain_eager_ms"] = timed(lambda: chain(ew.multiply, ew.add, a, b, 300), sync, repeats) * 1e3
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        ew.add(chain(ew.multiply, ew.add, a, b, 300), 0.0, out=out)
    r["chain_replay_ms"] = timed(g.replay, sync, repeats) * 1e3
    r["chain_replay_speedup"] = r["chain_eager_ms"] / r["chain_replay_ms"]
    want = chain(ew.multiply, ew.add, a, b, 300)
    assert float(xp.max(ew.abs(ew.subtract(want, out)))) == 0.0
    import numpy as np
    s = xp.asarray(np.linspace(-3, 3, 1024, dtype=np.float32), device=DEV)
    with xp.capture(device=DEV) as g:
        ew.multiply(sin_chain(ew.sin, ew.multiply, s), 1.0, out=out)
    r["sin_chain_replay_ms"] = timed(g.replay, sync, repeats) * 1e3
    want = np.asarray(ew.multiply(sin_chain(ew.sin, ew.multiply, s), 1.0).to_device("cpu")).view(np.uint32)
    assert np.array_equal(np.asarray(out.to_device("cpu")).view(np.uint32), want)  # replay == eager, bits
    return r


def bench_cupy(n_big: int, repeats: int) -> dict | None:
    try:
        import cupy as cp
    except ImportError:
        return None
    sync = cp.cuda.get_current_stream().synchronize
    r: dict = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}
    x = cp.ones(n_big, cp.float32)
    y = cp.empty(n_big, cp.float32)
    t = timed(lambda: cp.multiply(x, 2.0, out=y), sync, repeats, batch=BATCH)
    r["elementwise_s"] = t
    r["elementwise_GBps"] = 2 * 4 * n_big / t / 1e9
    t = timed(lambda: x.sum(), sync, repeats, batch=BATCH)
    r["sum_s"] = t
    r["sum_GBps"] = 4 * n_big / t / 1e9
    x = y = None
    cp.get_default_memory_pool().free_all_blocks()
    a = cp.ones(1024, cp.float32)
    b = cp.ones(1024, cp.float32)
    n_small = 2000
    t = timed(lambda: _repeat(cp.add, a, b, n_small), sync, max(3, repeats // 2))
    r["eager_ops_per_s"] = n_small / t
    r["eager_us_per_op"] = t / n_small * 1e6
    r["chain_eager_ms"] = timed(lambda: chain(cp.multiply, cp.add, a, b, 300), sync, repeats) * 1e3
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        chain(cp.multiply, cp.add, a, b, 300)  # warm the kernels outside the capture
        stream.begin_capture()
        chain(cp.multiply, cp.add, a, b, 300)
        graph = stream.end_capture()
    r["chain_replay_ms"] = timed(lambda: graph.launch(stream), stream.synchronize, repeats) * 1e3
    r["chain_replay_speedup"] = r["chain_eager_ms"] / r["chain_replay_ms"]
    s = cp.linspace(-3, 3, 1024, dtype=cp.float32)
    out = cp.empty(1024, cp.float32)
    with stream:
        cp.multiply(sin_chain(cp.sin, cp.multiply, s), 1.0, out=out)  # warm the kernels
        stream.begin_capture()
        cp.multiply(sin_chain(cp.sin, cp.multiply, s), 1.0, out=out)
        sgraph = stream.end_capture()
    r["sin_chain_replay_ms"] = timed(lambda: sgraph.launch(stream), stream.synchronize, repeats) * 1e3
    return r


KERNEL_ROWS = [("float32 matmul 4096 (TFLOP/s)", "matmul4096_TFLOPs", True),
               ("float32 matmul 8192 (TFLOP/s)", "matmul8192_TFLOPs", True),
               ("sort 1e8 float32 (ms)", "sort_ms", False),
               ("fft 2^24 complex64 (ms)", "fft_ms", False)]


def kernels(xp_mod, asarray, sync, repeats: int) -> dict:
    """matmul, sort and fft timings for one library (numr on WebGPU, or CuPy) on the same NumPy data."""
    import numpy as np
    rng = np.random.default_rng(0)
    r: dict = {}
    for n in (4096, 8192):
        a = asarray(rng.standard_normal((n, n), np.float32))
        b = asarray(rng.standard_normal((n, n), np.float32))
        t = timed(lambda: xp_mod.matmul(a, b), sync, max(3, repeats // 2), warmup=1)
        r[f"matmul{n}_TFLOPs"] = 2 * n ** 3 / t / 1e12
        a = b = None
    x = asarray(rng.standard_normal(10 ** 8).astype(np.float32))
    r["sort_ms"] = timed(lambda: xp_mod.sort(x), sync, max(3, repeats // 2), warmup=1) * 1e3
    x = None
    z = asarray((rng.standard_normal(1 << 24) + 1j * rng.standard_normal(1 << 24)).astype(np.complex64))
    r["fft_ms"] = timed(lambda: xp_mod.fft.fft(z), sync, repeats, warmup=1) * 1e3
    return r


def check_kernels() -> None:
    """The timed kernels give NumPy's results (on sizes small enough to check on the host)."""
    import numpy as np
    rng = np.random.default_rng(1)
    a = rng.standard_normal((257, 300), np.float32)
    b = rng.standard_normal((300, 129), np.float32)
    got = np.asarray(xp.matmul(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)).to_device("cpu"))
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-3)
    x = rng.standard_normal(100_003).astype(np.float32)
    assert np.array_equal(np.asarray(xp.sort(xp.asarray(x, device=DEV)).to_device("cpu")), np.sort(x))
    z = (rng.standard_normal(1 << 16) + 1j * rng.standard_normal(1 << 16)).astype(np.complex64)
    got = np.asarray(xp.fft.fft(xp.asarray(z, device=DEV)).to_device("cpu"))
    want = np.fft.fft(z.astype(np.complex128))
    assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gib", type=float, default=1.0, help="size of the large array in GiB (float32)")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--json", help="write the results here as JSON")
    p.add_argument("--skip-kernels", action="store_true", help="leave out matmul, sort and fft")
    args = p.parse_args()
    n_big = int(args.gib * (1 << 30)) // 4
    res = {"n_big": n_big, "webgpu": bench_webgpu(n_big, args.repeats), "cupy": bench_cupy(n_big, args.repeats)}
    w, c = res["webgpu"], res["cupy"]
    rows = [("element-wise x*2 on %.2f GiB (GB/s)" % args.gib, "elementwise_GBps", True),
            ("sum over %.2f GiB (GB/s)" % args.gib, "sum_GBps", True),
            ("eager small ops (ops/s)", "eager_ops_per_s", True),
            ("300-op chain, eager (ms)", "chain_eager_ms", False),
            ("300-op chain, replay (ms)", "chain_replay_ms", False),
            ("replay speed-up over eager", "chain_replay_speedup", True),
            ("100-step sin chain, replay (ms; issue 15: <= 1x)", "sin_chain_replay_ms", False)]
    if not args.skip_kernels:
        check_kernels()
        client = xp._device.parse_device(DEV).client
        client.allocator.release_pool()
        w.update(kernels(xp, lambda a: xp.asarray(a, device=DEV), client.synchronize, args.repeats))
        if c:
            import cupy as cp
            c.update(kernels(cp, cp.asarray, cp.cuda.get_current_stream().synchronize, args.repeats))
        rows += KERNEL_ROWS
    print(f"WebGPU adapter: {w['adapter'].get('device')} ({w['adapter'].get('backend_type')})")
    if c:
        print(f"CUDA device:    {c['device']}")
    print(f"{'':42s} {'numr webgpu':>12s} {'CuPy':>12s} {'ratio':>8s}")
    for label, key, higher in rows:
        a = w[key]
        b = c[key] if c else float("nan")
        ratio = (a / b if higher else b / a) if c else float("nan")
        print(f"{label:42s} {a:12.4g} {b:12.4g} {ratio:8.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2, default=str)


if __name__ == "__main__":
    main()
