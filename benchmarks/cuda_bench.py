"""numr_array on CUDA against CuPy, side by side: large element-wise and reduction work, a big matmul,
per-call overhead on tiny arrays, and a 300-kernel element-wise chain eager and replayed as a CUDA graph
(numr's capture fuses the chain's runs of direct element-wise ops into a few kernels; CuPy's graph has one
kernel node per op).

Run on a machine with a GPU:  python benchmarks/cuda_bench.py [--quick]
Every time is taken after a warm-up, with the device synchronised before the clock is read, as the
median of repeats; ratios are numr / CuPy (lower is better for numr).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _sample(fn, sync, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    sync()
    return (time.perf_counter() - start) / inner


def compare(*cases, inner: int, repeats: int) -> list[float]:
    """Median seconds per call of each (fn, sync) case over ``repeats`` runs of ``inner`` calls each, the
    device synchronised before each clock reading; the cases' runs interleaved so that drifting clocks and
    background load weigh on each alike."""
    for fn, sync in cases:
        fn()
        sync()
    samples = [[] for _ in cases]
    for _ in range(repeats):
        for s, (fn, sync) in zip(samples, cases):
            s.append(_sample(fn, sync, inner))
    return [statistics.median(s) for s in samples]


def fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a smoke test)")
    args = parser.parse_args()

    import cupy
    import numr_array as xp
    from numr_array.backends import get_runtime

    if get_runtime("cuda") is None:
        print("no CUDA device")
        return 1
    dev = xp._device.parse_device("cuda:0")
    client = dev.client
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU: {name}; CuPy {cupy.__version__}; CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}")

    nsync = client.synchronize

    def csync():
        cupy.cuda.get_current_stream().synchronize()
    rows = []

    def row(label, t_numr, t_cupy, note=""):
        rows.append((label, t_numr, t_cupy, note))
        ratio = f"{t_numr / t_cupy:.2f}x" if t_cupy else ""
        print(f"{label:44s} numr {fmt(t_numr):>11s}   CuPy {fmt(t_cupy) if t_cupy else '':>11s}   {ratio:>6s} {note}",
              flush=True)

    reps = 5 if args.quick else 15

    # --- element-wise and sum over 1 GiB of float32 ---------------------------------------------------
    n = (64 << 20) // 4 if args.quick else (1 << 30) // 4
    a_c = cupy.arange(n, dtype=cupy.float32)
    o_c = cupy.empty_like(a_c)
    a_n = client.adopt(a_c.copy())
    o_n = xp.empty((n,), dtype=xp.float32, device=dev)
    size = f"{n * 4 >> 20} MiB"
    t_n, t_c = compare((lambda: xp.multiply(a_n, 2.0, out=o_n), nsync),
                       (lambda: cupy.multiply(a_c, 2.0, out=o_c), csync), inner=5, repeats=reps)
    row(f"multiply(x, 2.0, out=) on {size}", t_n, t_c, f"({2 * n * 4 / t_n / 1e9:.0f} GB/s numr)")
    del o_n, o_c
    t_n, t_c = compare((lambda: xp.multiply(a_n, 2.0), nsync),
                       (lambda: cupy.multiply(a_c, 2.0), csync), inner=5, repeats=reps)
    row(f"multiply(x, 2.0) on {size}, new result", t_n, t_c)
    t_n, t_c = compare((lambda: xp.sum(a_n), nsync), (lambda: cupy.sum(a_c), csync), inner=5, repeats=reps)
    row(f"sum(x) over {size}", t_n, t_c, f"({n * 4 / t_n / 1e9:.0f} GB/s numr)")
    del a_n, a_c
    client.synchronize()
    cupy.get_default_memory_pool().free_all_blocks()

    # --- float32 matmul ------------------------------------------------------------------------------
    m = 2048 if args.quick else 8192
    rng = np.random.default_rng(0)
    A_c = cupy.asarray(rng.standard_normal((m, m), dtype=np.float32))
    B_c = cupy.asarray(rng.standard_normal((m, m), dtype=np.float32))
    C_c = cupy.empty((m, m), cupy.float32)
    A_n, B_n = client.adopt(A_c.copy()), client.adopt(B_c.copy())
    C_n = xp.empty((m, m), dtype=xp.float32, device=dev)
    flop = 2 * m ** 3
    t_n, t_c = compare((lambda: xp.matmul(A_n, B_n, out=C_n), nsync),
                       (lambda: cupy.matmul(A_c, B_c, out=C_c), csync), inner=3, repeats=reps)
    row(f"matmul float32 {m}x{m}x{m}, eager", t_n, t_c, f"({flop / t_n / 1e12:.1f} TFLOP/s numr)")
    with xp.capture(device=dev) as g:
        xp.matmul(A_n, B_n, out=C_n)
    t_g, t_c = compare((g.replay, nsync), (lambda: cupy.matmul(A_c, B_c, out=C_c), csync), inner=3, repeats=reps)
    row(f"matmul float32 {m}, numr replay vs CuPy eager", t_g, t_c,
        f"({flop / t_g / 1e12:.1f} TFLOP/s; {t_c / t_g * 100:.0f}% of CuPy eager speed)")
    ok = np.allclose(cupy.asnumpy(C_c[:64, :64]), np.asarray(C_n[:64, :64].to_device("cpu")), rtol=1e-3, atol=1e-2)
    print(f"  captured matmul matches CuPy's: {ok}")
    del g, A_n, B_n, C_n, A_c, B_c, C_c
    client.synchronize()
    cupy.get_default_memory_pool().free_all_blocks()

    # --- per-call time on 8-element arrays ---------------------------------------------------------------
    x8_c, y8_c = cupy.arange(8, dtype=cupy.float32), cupy.ones(8, dtype=cupy.float32)
    x8_n = xp.asarray(np.arange(8, dtype=np.float32), device=dev)
    y8_n = xp.ones((8,), dtype=xp.float32, device=dev)
    o8_n, o8_c = xp.empty((8,), dtype=xp.float32, device=dev), cupy.empty(8, cupy.float32)
    calls = 2000
    t_n, t_c = compare((lambda: xp.add(x8_n, y8_n), nsync),
                       (lambda: cupy.add(x8_c, y8_c), csync), inner=calls, repeats=reps)
    row("add(x, y) on 8 float32, new result, per call", t_n, t_c)
    t_n, t_c = compare((lambda: xp.add(x8_n, y8_n, out=o8_n), nsync),
                       (lambda: cupy.add(x8_c, y8_c, out=o8_c), csync), inner=calls, repeats=reps)
    row("add(x, y, out=) on 8 float32, per call", t_n, t_c)
    t_n, t_c = compare((lambda: xp.multiply(x8_n, 2.0), nsync),
                       (lambda: cupy.multiply(x8_c, 2.0), csync), inner=calls, repeats=reps)
    row("multiply(x, 2.0) on 8 float32, per call", t_n, t_c)

    # --- a 300-kernel element-wise chain on 1024 float32 ---------------------------------------------
    kernels = 300
    x_n = xp.asarray(np.full(1024, 1.0, np.float32), device=dev)
    y_n = xp.asarray(np.full(1024, 0.001, np.float32), device=dev)
    out_n = xp.empty((1024,), dtype=xp.float32, device=dev)
    x_c, y_c = cupy.full(1024, 1.0, cupy.float32), cupy.full(1024, 0.001, cupy.float32)
    out_c = cupy.empty(1024, cupy.float32)

    def chain_n():
        t = x_n
        for _ in range(kernels // 2 - 1):
            t = xp.multiply(t, 0.999)
            t = xp.add(t, y_n)
        t = xp.multiply(t, 0.5)
        xp.add(t, 0.0, out=out_n)

    def chain_c():
        t = x_c
        for _ in range(kernels // 2 - 1):
            t = cupy.multiply(t, 0.999)
            t = cupy.add(t, y_c)
        t = cupy.multiply(t, 0.5)
        cupy.add(t, 0.0, out=out_c)

    t_eager_n, t_eager_c = compare((chain_n, nsync), (chain_c, csync), inner=3, repeats=reps)
    with xp.capture(device=dev) as g:
        chain_n()
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        chain_c()  # warm-up: compile every kernel before capturing
        s.synchronize()
        s.begin_capture()
        chain_c()
        cg = s.end_capture()
    t_replay_n, t_replay_c = compare((g.replay, nsync),
                       (lambda: cg.launch(s), s.synchronize), inner=20, repeats=reps)
    row(f"{kernels}-kernel chain on 1024 float32, eager", t_eager_n, t_eager_c)
    row(f"{kernels}-kernel chain, replay (numr: fused runs in a CUDA graph; CuPy: its stream-captured graph)", t_replay_n, t_replay_c,
        f"(numr replay is {t_eager_n / t_replay_n:.1f}x faster than numr eager)")
    ok = np.allclose(np.asarray(out_n.to_device("cpu")), cupy.asnumpy(out_c), rtol=1e-5)
    print(f"  replayed chain matches CuPy's: {ok}")

    # --- a 100-step chain of sin and multiply-by-a-scalar on 1024 float32, replayed -------------------
    steps = 100
    sx_n = xp.asarray(np.linspace(-3, 3, 1024, dtype=np.float32), device=dev)
    sx_c = cupy.linspace(-3, 3, 1024, dtype=cupy.float32)
    sout_n = xp.empty((1024,), dtype=xp.float32, device=dev)
    sout_c = cupy.empty(1024, cupy.float32)

    def sin_chain(m, t, out):
        for _ in range(steps - 1):
            t = m.multiply(m.sin(t), 1.5)
        m.multiply(m.sin(t), 1.5, out=out)

    sin_chain(xp, sx_n, sout_n)
    eager_bits = np.asarray(sout_n.to_device("cpu")).view(np.uint32).copy()
    with xp.capture(device=dev) as g:
        sin_chain(xp, sx_n, sout_n)
    with s:
        sin_chain(cupy, sx_c, sout_c)
        s.synchronize()
        s.begin_capture()
        sin_chain(cupy, sx_c, sout_c)
        scg = s.end_capture()
    t_replay_n, t_replay_c = compare((g.replay, nsync), (lambda: scg.launch(s), s.synchronize), inner=20,
                                     repeats=reps)
    row(f"{steps}-step sin and multiply chain on 1024 float32, replay (CuPy: its stream-captured graph)",
        t_replay_n, t_replay_c, "(issue 15: <= 0.5x)")
    g.replay()
    same = np.array_equal(np.asarray(sout_n.to_device("cpu")).view(np.uint32), eager_bits)
    print(f"  replay equals numr eager bit for bit: {same}; "
          f"matches CuPy's: {np.allclose(np.asarray(sout_n.to_device('cpu')), cupy.asnumpy(sout_c), rtol=1e-5)}")

    print()
    print(f"| benchmark ({name}) | numr | CuPy | numr / CuPy |")
    print("| --- | ---: | ---: | ---: |")
    for label, t_n, t_c, note in rows:
        print(f"| {label} {note} | {fmt(t_n)} | {fmt(t_c)} | {t_n / t_c:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
