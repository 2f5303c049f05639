"""``python -m benchmarks.webgpu_programs``: fft_conv and mlp (benchmarks/workloads.py) on numr webgpu:0 against
CuPy, every run's time shown, under three ways of waiting for a readback; then the programs' dispatches timed one
by one.

Session 5's H200 runs of the WebGPU programs were bimodal: fft_conv under the jit took 0.8, 10.7 and 10.7 ms,
mlp eagerly 14.2, 3.9 and 13.3 ms, while no CUDA run had such an outlier. This script separates the two parts:

1. **Readback waits**, numr alone (CuPy not started yet). Each program runs ``--repeat`` times per wait,
   synchronised after each run:
   ``spin`` (the client's default on a GPU: this thread alone polls without blocking, up to
   NUMR_WEBGPU_SPIN_MS, then blocks), ``block`` (this thread alone, a blocking wait at once) and
   ``wgpu-py`` (session 5's readback: wgpu-py's map_async, which wakes its poll thread into a second
   blocking wait, beside this thread's). Per wait: min / median / max ms, the runs more than 3 ms above
   the minimum (``slow``); eager and under ``numr_array.jit`` (``+jit``). Also 100 synchronisations after
   one small add. fft_conv also runs with 256 and 1024 invocations per workgroup of its passes
   (``k_fft.PASS_THREADS``); mlp, and its X.T @ dH alone, with 8 x 8 blocks over parts of k and with 4 x 4
   blocks (``k_contract.SPLIT_LARGE_BLOCKS``).
2. **Beside CuPy**: CuPy alone, then one CuPy run and one numr run (spin, eager) in turn, as
   benchmarks/workloads.py interleaves them; the ratio of the medians.
3. **Dispatches.** One run of each program with the device drained before and after every dispatch: the
   milliseconds of each kernel (less the cost of an empty synchronisation), largest first.

Each program's result is checked against a float64 NumPy run first (FAIL lines say so; the script goes on).
The last line is PASS when every check passed, and ``spin`` has no slow run alone or beside CuPy and its
median beside CuPy is within 2x CuPy's, for both programs.

    python -m benchmarks.webgpu_programs            # the gpu sizes, about 20 s on an H200
    python -m benchmarks.webgpu_programs --size tiny --no-peer   # the code path, on lavapipe
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import traceback

import numpy as np

from benchmarks._timing import runs
from benchmarks.workloads import PROGRAMS, _reference, check

DEV = "webgpu:0"
NAMES = ("fft_conv", "mlp")


def _wgpu_py_read(dev, staging, size: int, spin_s: float) -> bytes:
    """Session 5's readback: wgpu-py's map_async (its poll thread wakes and waits too), this thread's
    blocking poll, then the promise."""
    promise = staging.map_async("READ_NOSYNC", 0, size)
    staging._device._poll_wait()
    promise.sync_wait()
    try:
        return bytes(staging.read_mapped(0, size, copy=False))
    finally:
        staging.unmap()


def _waits(client) -> dict:
    """name -> function setting the client to wait that way."""
    direct = client._direct
    read = direct.read
    spin = client.spin_s or 0.05

    def setter(fn, spin_s):
        def apply():
            direct.read = fn
            client.spin_s = spin_s
        return apply

    return {"spin": setter(read, spin), "block": setter(read, 0.0), "wgpu-py": setter(_wgpu_py_read, 0.0)}


def _runs(fn, sync, repeat: int) -> list[float]:
    return runs(fn, sync, repeat=repeat, warmup=0)


def _summary(ts: list[float]) -> tuple[str, float, int]:
    lo, med = min(ts), statistics.median(ts)
    slow = sum(t > lo + 3e-3 for t in ts)
    return f"min {lo * 1e3:7.2f}  median {med * 1e3:7.2f}  max {max(ts) * 1e3:7.2f} ms  slow {slow}/{len(ts)}", med, slow


def _peer():
    try:
        import cupy
        import array_api_compat.cupy as cxp
        cupy.zeros(1)
        return cxp, cupy.asarray, cupy.cuda.get_current_stream().synchronize
    except Exception as exc:  # no CuPy or no CUDA device: the numr figures still stand
        print(f"CuPy: not run ({type(exc).__name__}: {exc})")
        return None


def _dispatch_profile(xp, client, program, arrays, params, empty_sync: float) -> list[tuple[str, float]]:
    """(kernel, seconds) of each dispatch of one run, drained before and after each."""
    from numr_array.backends.webgpu import _client as C
    names = {id(p): key for key, p in client._pipelines.items()}
    real = C.WebGPUClient.dispatch
    rows = []

    def timed(self, pipe, *a, **k):
        self.synchronize()
        t0 = time.perf_counter()
        real(self, pipe, *a, **k)
        self.synchronize()
        key = names.get(id(pipe)) or next((kk for kk, p in self._pipelines.items() if p is pipe), "?")
        rows.append((str(key[0] if isinstance(key, tuple) else key), time.perf_counter() - t0 - empty_sync))

    C.WebGPUClient.dispatch = timed
    try:
        program.run(xp, **arrays, **params)
        client.synchronize()
    finally:
        C.WebGPUClient.dispatch = real
    return rows


def _row(label: str, ts: list[float], base: float | None) -> tuple[float, int]:
    text, med, slow = _summary(ts)
    print(f"  {label:22s} {text}" + (f"  {med / base:6.2f}x CuPy" if base else ""))
    return med, slow


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.webgpu_programs", description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("tiny", "cpu", "gpu"), default="gpu")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-peer", action="store_true", help="skip CuPy")
    args = parser.parse_args(argv)

    import numr_array as xp
    client = xp._device.parse_device(DEV).client
    info = client.adapter.info
    print(f"WebGPU: {info.get('device')} ({info.get('backend_type')}, {info.get('adapter_type')}); "
          f"spin {client.spin_s * 1e3:.0f} ms by default")
    if client._direct is None:
        print("FAIL: wgpu-py's internals differ (no direct calls): readbacks go through map_sync")
        return 1
    waits = _waits(client)
    ok = True
    small = xp.ones((1024,), dtype=xp.float32, device=DEV)
    for wait, apply in list(waits.items()):
        apply()
        ts = []
        try:
            for _ in range(100):
                small + small  # work queued for the timed wait
                t0 = time.perf_counter()
                client.synchronize()
                ts.append(time.perf_counter() - t0)
        except Exception as exc:  # (the wgpu-py wait on another wgpu-py version): the others go on
            print(f"sync after a small add, {wait:8s}: FAIL ({type(exc).__name__}: {exc}); not run further")
            waits.pop(wait)
            ok = wait != "spin" and ok
            continue
        print(f"sync after a small add, {wait:8s}: median {statistics.median(ts) * 1e6:8.1f} us, "
              f"max {max(ts) * 1e3:6.2f} ms, over 2 ms: {sum(t > 2e-3 for t in ts)}/100")
    if "spin" not in waits:
        print("FAIL: the client's own readback raised")
        return 1
    waits["spin"]()
    empty = statistics.median(_runs(lambda: None, client.synchronize, 50))

    # 1. numr alone (CuPy not yet started): every wait, eager and jit
    progs = {}
    for name in NAMES:
        program = next(p for p in PROGRAMS if p.name == name)
        host, params = program.make(np.random.default_rng(list(p.name for p in PROGRAMS).index(name)),
                                    **program.sizes[args.size])
        print(f"\n{name}, {program.label.format(**program.sizes[args.size])}: numr webgpu:0 alone")
        reference = _reference(program, host, params)
        try:
            arrays = {k: xp.asarray(v, device=DEV) for k, v in host.items()}
            run = lambda program=program, arrays=arrays, params=params: program.run(xp, **arrays, **params)
            jitted = xp.jit(program.run)
            jrun = lambda jitted=jitted, arrays=arrays, params=params: jitted(xp, **arrays, **params)
            for label, fn in (("eager", run), ("jit (capture, then a replay)", jrun), ("jit", jrun)):
                errs = check([np.asarray(o.to_device("cpu")) for o in fn()], reference)
                if not all(e <= t for e, t in zip(errs, program.tols)):
                    ok = False
                    print(f"  FAIL: {label} result off: errors {errs}, tolerances {program.tols}")
        except Exception:
            ok = False
            print("  FAIL: numr webgpu:0 raised\n" + traceback.format_exc())
            continue
        progs[name] = (program, host, params, arrays, run)
        for wait, apply in waits.items():
            apply()
            for label, fn in ((wait, run), (wait + "+jit", jrun)):
                _, slow = _row(label, _runs(fn, client.synchronize, args.repeat), None)
                if label == "spin" and slow:
                    ok = False
        waits["spin"]()
        if name == "fft_conv":  # the passes' invocations per workgroup (k_fft.PASS_THREADS), spin, eager
            from numr_array.backends.webgpu import k_fft
            default = k_fft.PASS_THREADS
            try:
                for threads in (256, 1024):
                    k_fft.PASS_THREADS = threads
                    run()
                    _row(f"threads {threads}", _runs(run, client.synchronize, args.repeat), None)
            finally:
                k_fft.PASS_THREADS = default
        if name == "mlp":  # X.T @ dH in 8 x 8 blocks over 4 parts of k, or 4 x 4 blocks (k_contract.SPLIT_LARGE_BLOCKS)
            from numr_array.backends.webgpu import k_contract
            default = k_contract.SPLIT_LARGE_BLOCKS
            X, dH = arrays["X"], arrays["X"][:, :arrays["W1"].shape[1]]
            try:
                for split in (True, False):
                    k_contract.SPLIT_LARGE_BLOCKS = split
                    label = "8x8 in parts" if split else "4x4 blocks"
                    product = lambda: X.T @ dH
                    product()
                    _row(f"X.T@dH {label}", _runs(product, client.synchronize, args.repeat), None)
                    run()
                    _row(f"mlp, {label}", _runs(run, client.synchronize, args.repeat), None)
            finally:
                k_contract.SPLIT_LARGE_BLOCKS = default

    # 2. beside CuPy: CuPy alone, then one run of each in turn (as benchmarks/workloads.py times them)
    peer = None if args.no_peer else _peer()
    for name, (program, host, params, arrays, run) in progs.items():
        if peer is None:
            break
        print(f"\n{name}: beside CuPy")
        pxp, pput, psync = peer
        parrays = {k: pput(v) for k, v in host.items()}
        prun = lambda: program.run(pxp, **parrays, **params)
        prun()
        psync()
        _, _ = _row("CuPy alone", _runs(prun, psync, args.repeat), None)
        mine, theirs = [], []
        for _ in range(args.repeat):
            theirs += _runs(prun, psync, 1)
            mine += _runs(run, client.synchronize, 1)
        base, _ = _row("CuPy, in turn", theirs, None)
        med, slow = _row("spin, in turn", mine, base)
        if slow or med > 2 * base:
            ok = False

    # 3. each dispatch alone
    for name, (program, host, params, arrays, run) in progs.items():
        rows = _dispatch_profile(xp, client, program, arrays, params, empty)
        total = sum(t for _, t in rows)
        by_kernel: dict = {}
        for k, t in rows:
            n, s = by_kernel.get(k, (0, 0.0))
            by_kernel[k] = (n + 1, s + t)
        print(f"\n{name}: {len(rows)} dispatches, {total * 1e3:.2f} ms drained one by one (an empty sync: "
              f"{empty * 1e6:.0f} us, taken off each):")
        for k, (n, s) in sorted(by_kernel.items(), key=lambda kv: -kv[1][1])[:8]:
            print(f"    {k:24s} x{n:<3d} {s * 1e3:8.3f} ms")
    if len(progs) < len(NAMES):
        ok = False
    print("\nPASS" if ok else "\nFAIL (see above: a check, a slow run of spin, or spin beside CuPy above 2x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
