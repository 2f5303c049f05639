"""Issue 15's capture case on WebGPU in seconds: the 100-step chain of float32 ``sin`` and multiply-by-a-scalar
on 1024 elements, captured and replayed on webgpu:0 (checked bit for bit against eager) and, where CuPy is
installed, CuPy's stream-captured graph of it timed side by side (goal: WebGPU's replay <= 1.0x CuPy's);
and float32 sin, cos, tan on the same adapter against NumPy's float64 functions over float32 values of every
exponent, those next to multiples of pi/2 and huge ones (goal: within 0.502, 0.502, 0.8 ulp).

Run: ``python -m benchmarks.webgpu_sin_chain [--repeats 50] [--n 1000000]``. Prints one PASS/FAIL line per
check (replay bits, accuracy per function) and the replay times, median of ``--repeats`` replays each ended by
a synchronisation; a check that raises prints FAIL with the error and the others still run.
"""

from __future__ import annotations

import argparse
import traceback

import numpy as np

import numr_array as xp
from numr_array import _elementwise as ew

from .webgpu_bench import sin_chain, timed

DEV = "webgpu:0"
MAX_ULP = {"sin": 0.502, "cos": 0.502, "tan": 0.8}


def float32_samples(n: int, rng) -> np.ndarray:
    """n random finite float32 bit patterns of both signs, plus the float32 values next to multiples of
    pi/2 (up to 2^40 of them), the largest finite and 16367173 * 2^72 (the one nearest a multiple of pi/2)."""
    x = rng.integers(0, 0x7F800000, n, dtype=np.int64).astype(np.uint32).view(np.float32)
    k = np.unique(np.exp(rng.uniform(0, np.log(2.0 ** 40), 2000)).round())
    near = ((k * (np.pi / 2)).astype(np.float32).view(np.int32)[:, None] + np.arange(-2, 3)).ravel().view(np.float32)
    x = np.concatenate([x, near, np.array([3.4028235e38, np.ldexp(16367173.0, 72)], np.float32)])
    return np.concatenate([x, -x])


def check_accuracy(n: int) -> None:
    x = float32_samples(n, np.random.default_rng(15))
    d = xp.asarray(x, device=DEV)
    for name, bound in MAX_ULP.items():
        got = np.asarray(getattr(ew, name)(d).to_device("cpu"))
        exact = getattr(np, name)(x.astype(np.float64))
        e = np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
        cr = float(np.mean(got == exact.astype(np.float32)))
        ok = e.max() <= bound and not np.isnan(got).any()
        print(f"{'PASS' if ok else 'FAIL'} float32 {name}: max {e.max():.4f} ulp (bound {bound}), "
              f"{cr:.5f} correctly rounded, {x.size} values")


def webgpu_replay(repeats: int) -> float:
    client = xp._device.parse_device(DEV).client
    s = xp.asarray(np.linspace(-3, 3, 1024, dtype=np.float32), device=DEV)
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        ew.multiply(sin_chain(ew.sin, ew.multiply, s), 1.0, out=out)
    t = timed(g.replay, client.synchronize, repeats) * 1e3
    want = np.asarray(ew.multiply(sin_chain(ew.sin, ew.multiply, s), 1.0).to_device("cpu")).view(np.uint32)
    same = np.array_equal(np.asarray(out.to_device("cpu")).view(np.uint32), want)
    print(f"{'PASS' if same else 'FAIL'} sin chain: replay equals eager, bit for bit "
          f"({len(g._graph.steps)} dispatches per replay)")
    return t


def cupy_replay(repeats: int) -> float | None:
    try:
        import cupy as cp
    except ImportError:
        return None
    stream = cp.cuda.Stream(non_blocking=True)
    s = cp.linspace(-3, 3, 1024, dtype=cp.float32)
    out = cp.empty(1024, cp.float32)
    with stream:
        cp.multiply(sin_chain(cp.sin, cp.multiply, s), 1.0, out=out)  # warm the kernels outside the capture
        stream.begin_capture()
        cp.multiply(sin_chain(cp.sin, cp.multiply, s), 1.0, out=out)
        graph = stream.end_capture()
    return timed(lambda: graph.launch(stream), stream.synchronize, repeats) * 1e3


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--n", type=int, default=1_000_000, help="random float32 values for the accuracy check")
    args = p.parse_args(argv)
    client = xp._device.parse_device(DEV).client
    print(f"WebGPU adapter: {client.adapter.info.get('device')} ({client.adapter.info.get('backend_type')}), "
          f"float64: {client.has_f64}")
    mine = ref = None
    for what, run in (("accuracy", lambda: check_accuracy(args.n)), ("webgpu replay", lambda: webgpu_replay(args.repeats)),
                      ("cupy replay", lambda: cupy_replay(args.repeats))):
        try:
            r = run()
        except Exception:
            print(f"FAIL {what}: raised\n{traceback.format_exc()}")
            continue
        if what == "webgpu replay":
            mine = r
        elif what == "cupy replay":
            ref = r
    if mine is not None:
        print(f"sin chain replay: numr webgpu:0 {mine:.4f} ms")
    if ref is None:
        print("sin chain replay: CuPy not installed, no ratio")
    else:
        print(f"sin chain replay: CuPy graph {ref:.4f} ms")
        if mine is not None:
            print(f"{'MET' if mine <= ref else 'NOT MET'} goal webgpu <= 1.0x CuPy: {mine / ref:.3f}x")


if __name__ == "__main__":
    main()
