"""``python -m benchmarks.operator_slots_check [device]``: Tensor's compiled operator slots on one device (default
``cuda:0``, else ``cpu``), in a few seconds: the elision calibration holds on this interpreter, the operators
give NumPy's values, a dead temporary of an operator is reused (its peak is one buffer) and one that C code
applies the operator to is not, and the host time of a few small operators. Prints PASS/FAIL per check and
exits 1 when one fails.

On a GPU the slots find no compiled plan (plans with a native part are CPU ones): every operator calls the
Python path from C, which then decides the elision with the count the slot verified.
"""

from __future__ import annotations

import operator
import sys
import time
import traceback

import numpy as np


def _device(argv: list[str]) -> str:
    if argv:
        return argv[0]
    import numr_array as xp
    try:
        xp.zeros(1, device="cuda:0")
        return "cuda:0"
    except Exception:  # no CUDA here: the CPU
        return "cpu"


def main(argv: list[str] | None = None) -> int:
    import numr_array as xp
    from numr_array import _elementwise, _launch, runtime

    dev = _device(sys.argv[1:] if argv is None else argv)
    print(f"device {dev}, Python {sys.version.split()[0]}, NumPy {np.__version__}")
    failed = []

    def check(name: str, fn) -> None:
        try:
            ok = fn()
        except Exception:
            traceback.print_exc()
            ok = False
        print(f"{'PASS' if ok else 'FAIL'} {name}")
        if not ok:
            failed.append(name)

    def host(t):
        return np.asarray(t.to_device("cpu"))

    check("compiled module and slots", lambda: runtime.speedups is not None
          and xp.Tensor.__mro__[1] is runtime.speedups.TensorBase)
    check("elision calibrated (Python path and slots)", lambda: _launch.ELIDE and runtime.speedups is not None
          and _elementwise._calibrate_compiled())

    rng = np.random.default_rng(0)
    a_np = rng.uniform(1, 2, 1000).astype(np.float32)
    b_np = rng.uniform(1, 2, 1000).astype(np.float32)
    a, b = xp.asarray(a_np, device=dev), xp.asarray(b_np, device=dev)

    def values() -> bool:
        pairs = [(a + b, a_np + b_np), (a - 1.0, a_np - np.float32(1)), (2.0 * a, np.float32(2) * a_np),
                 (1.0 / a, np.float32(1) / a_np), (a ** 2, a_np ** 2), (-a, -a_np), (abs(-a), a_np),
                 (a < b, a_np < b_np), (0.5 >= a, np.float32(0.5) >= a_np), (a % 0.5, a_np % np.float32(0.5)),
                 (a @ b, a_np @ b_np)]
        for _ in range(2):  # (the second round: plans cached)
            for got, want in pairs:
                np.testing.assert_allclose(host(got), want, rtol=1e-5)
        return a.__add__("x") is NotImplemented

    check("operator values", values)

    n = 1 << 16  # 256 KiB of float32: large enough to elide

    def elision() -> bool:
        x, y = xp.ones(n, dtype=xp.float32, device=dev), xp.ones(n, dtype=xp.float32, device=dev)
        peaks = []
        for f in (lambda: (x * y) + x, lambda: operator.add(x * y, x)):
            f()
            xp.reset_peak_memory_stats(dev)
            before = xp.memory_stats(dev)["bytes_in_use"]
            r = f()
            peaks.append(xp.memory_stats(dev)["peak_bytes_in_use"] - before)
            assert float(r[0]) == 2.0
            del r
        print(f"  peaks: operator {peaks[0]} B, operator.add {peaks[1]} B (one buffer: {4 * n} B)")
        return peaks == [4 * n, 8 * n]

    check("a dead temporary of an operator is reused; operator.add's is not", elision)

    x, y = xp.asarray(a_np[:8], device=dev), xp.asarray(b_np[:8], device=dev)
    for label, fn in (("x + y", lambda: x + y), ("xp.add(x, y)", lambda: xp.add(x, y)), ("x * 2.0", lambda: x * 2.0),
                      ("-x", lambda: -x)):
        fn()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(2000):
                fn()
            xp.asarray(0.0, device=dev).to_device("cpu")  # (a read waits for the queued work)
            best = min(best, (time.perf_counter() - t0) / 2000)
        print(f"  {label:14s} {best * 1e6:7.2f} µs per call (8 float32, host time in a batch)")
    print("ALL PASS" if not failed else f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
