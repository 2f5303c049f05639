"""``python -m benchmarks --device cpu``: numr_array against its peers, side by side in one run.

Each row times the same operation in numr_array and in the peers (NumPy and array-api-strict on CPU), as
the median of repeated runs after a warm-up, and prints the ratio numr / peer (below 1 is faster).
The CUDA and WebGPU suites are benchmarks/cuda_bench.py and benchmarks/webgpu_bench.py (GPU machine).
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

import numr_array as xp
from benchmarks._timing import side_by_side


def chain(ns, x, y, out, length: int = 100):
    t = x
    for _ in range(length // 2 - 1):
        t = ns.multiply(t, 0.999)
        t = ns.add(t, y)
    t = ns.multiply(t, 0.5)
    return ns.add(t, 0.0, out=out) if out is not None else ns.add(t, 0.0)


def cpu_rows(device: str):
    try:
        import array_api_strict as strict
    except ImportError:
        strict = None
    rng = np.random.default_rng(0)
    cases = []

    def case(name, data, op):
        """``op(ns, *arrays)`` run on numr, NumPy and array-api-strict arrays holding ``data``."""
        mine = [xp.asarray(d, device=device) for d in data]
        peers = {"numpy": (np, data)}
        if strict is not None:
            peers["array-api-strict"] = (strict, [strict.asarray(d) for d in data])
        cases.append((name, lambda: op(xp, *mine), {k: (lambda ns=ns, a=a: op(ns, *a)) for k, (ns, a) in peers.items()}))

    small = [rng.random(8, dtype=np.float32), rng.random(8, dtype=np.float32)]
    case("add, 8 float32 (per call)", small, lambda ns, a, b: ns.add(a, b))
    case("sum, 8 float32 (per call)", small[:1], lambda ns, a: ns.sum(a))
    case("getitem a[2:5], 8 float32 (per call)", small[:1], lambda ns, a: a[2:5])
    big = [rng.random(10**7, dtype=np.float32), rng.random(10**7, dtype=np.float32)]
    case("add, 1e7 float32", big, lambda ns, a, b: ns.add(a, b))
    case("sum, 1e7 float32", big[:1], lambda ns, a: ns.sum(a))
    mats = [rng.random((512, 512), dtype=np.float32), rng.random((512, 512), dtype=np.float32)]
    case("matmul 512x512 float32", mats, lambda ns, a, b: ns.matmul(a, b))

    x = xp.asarray(np.ones(1024, np.float32), device=device)
    y = xp.asarray(np.full(1024, 1e-3, np.float32), device=device)
    out = xp.empty((1024,), dtype=xp.float32, device=device)
    with xp.capture(device=device) as g:
        chain(xp, x, y, out)
    xn, yn = np.ones(1024, np.float32), np.full(1024, 1e-3, np.float32)
    on = np.empty(1024, np.float32)
    peers = {"numpy": lambda: chain(np, xn, yn, on), "numr eager": lambda: chain(xp, x, y, out)}
    cases.append(("100-op chain, 1024 float32: replay", g.replay, peers))
    cases.append(("100-op chain, 1024 float32: eager", lambda: chain(xp, x, y, out),
                  {"numpy": lambda: chain(np, xn, yn, on)}))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--device", default="cpu", help="cpu (cuda and webgpu: see benchmarks/*_bench.py)")
    args = parser.parse_args()
    if not args.device.startswith("cpu"):
        raise SystemExit("python -m benchmarks runs the CPU suite; use benchmarks/cuda_bench.py or webgpu_bench.py")
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}")
    print(f"{'operation':44} {'numr':>11}  ratios (numr / peer)")
    for name, mine, peers in cpu_rows(args.device):
        t = side_by_side({"numr": mine, **peers})
        ratios = ", ".join(f"{peer} {t['numr'] / t[peer]:.2f}x" for peer in peers)
        print(f"{name:44} {t['numr'] * 1e6:9.2f}us  {ratios}")


if __name__ == "__main__":
    main()
