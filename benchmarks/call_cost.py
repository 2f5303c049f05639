"""``python -m benchmarks.call_cost``: the cost of one call on small arrays, side by side in one process.

Single calls (add, multiply by a Python scalar, sum, a slice, asarray of a scalar, an add whose result is
read back) are timed as ``timeit`` does: the best of 7 batches of many calls. A batch ends with one
synchronisation of the device, so on a GPU a figure is the host time per call in a batch of calls that
are queued without reading anything back, the queued work included. The two small-op programs (a heat
stencil, an Adam step) are timed as medians of the same interleaved batches. Ratios put each numr device
against the peers of its kind: NumPy on the CPU, CuPy and PyTorch on a GPU.

    python -m benchmarks.call_cost --backends numpy,numr:cpu,numr:webgpu:0
    python -m benchmarks.call_cost --backends numpy,numr:cpu --cpu-time   # a busy machine: CPU time
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Callable

import numpy as np

from benchmarks._backends import DEFAULT_SPECS, PEERS, Backend, load_all, machine_line
from benchmarks._timing import side_by_side
from benchmarks.workloads import adam, heat


def _data(b: Backend, dtype, n: int = 8, seed: int = 0):
    return b.put(np.random.default_rng(seed).random(n).astype(dtype))


def add(dtype, *, out: bool = False) -> Callable[[Backend], Callable]:
    def setup(b: Backend):
        x, y = _data(b, dtype), _data(b, dtype, seed=1)
        if out:
            o = b.put(np.empty(8, dtype))
            return lambda: b.xp.add(x, y, out=o)
        return lambda: b.xp.add(x, y)
    return setup


def multiply_scalar(b: Backend):
    x = _data(b, np.float32)
    return lambda: x * 2.0


def sum_(b: Backend):
    x = _data(b, np.float32)
    return lambda: b.xp.sum(x)


def slice_(b: Backend):
    x = _data(b, np.float32)
    return lambda: x[2:5]


def asarray_scalar(b: Backend):
    return lambda: b.xp.asarray(1.5, device=b.device)


def add_then_read(b: Backend):
    x, y = _data(b, np.float32), _data(b, np.float32, seed=1)
    return lambda: b.get(b.xp.add(x, y))


def heat_program(b: Backend):
    u = _data(b, np.float32, 4096)
    return lambda: heat(b.xp, u, steps=200, alpha=0.25)


def adam_program(b: Backend):
    p, target = _data(b, np.float32, 1000), _data(b, np.float32, 1000, seed=1)
    return lambda: adam(b.xp, p, target, steps=1, lr=1e-3)


# (row, setup, whether it is a program: programs are medians, single calls best-of)
ROWS = [
    ("add, 8 float32, new result", add(np.float32), False),
    ("add, 8 float64, new result", add(np.float64), False),
    ("add, 8 float32, out=", add(np.float32, out=True), False),
    ("add, 8 float64, out=", add(np.float64, out=True), False),
    ("multiply by 2.0, 8 float32", multiply_scalar, False),
    ("sum, 8 float32", sum_, False),
    ("slice a[2:5], 8 float32", slice_, False),
    ("asarray(1.5)", asarray_scalar, False),
    ("add, 8 float32, then read to host", add_then_read, False),
    ("heat stencil, 4096 float32, 200 steps", heat_program, True),
    ("Adam step, 1000 float32", adam_program, True),
]


def _error_text(exc: BaseException) -> str:
    return f"ERROR {type(exc).__name__}: {exc}".splitlines()[0][:100].replace("|", "/")


def time_row(setup: Callable, program: bool, backends: list[Backend], *, min_time: float, gpu_time: float,
             repeat: int, cpu_time: bool = False) -> dict:
    """Seconds per call for each backend whose setup and first call succeed; an error text for the others.
    Batches last ``min_time`` on the CPU and ``gpu_time`` on a GPU, where each ends with a synchronisation.
    ``cpu_time``: CPU backends' batches read the calling thread's CPU time instead of wall time."""
    fns, cells = {}, {}
    for b in backends:
        try:
            fn = setup(b)
            fn()
            b.sync()
            fns[b.name] = fn
        except Exception as exc:  # reported in the row; the other backends go on
            cells[b.name] = _error_text(exc)
    syncs = {b.name: b.sync for b in backends}
    timing = dict(min_time=min_time, repeat=repeat, syncs=syncs, reduce=statistics.median if program else min,
                  min_times={b.name: gpu_time for b in backends if b.gpu},
                  clocks={b.name: time.thread_time for b in backends if cpu_time and not b.gpu})
    try:
        cells.update(side_by_side(fns, **timing))
    except Exception:  # one of them failed later on: time each alone to find which
        for name, fn in fns.items():
            try:
                cells.update(side_by_side({name: fn}, **timing))
            except Exception as exc:
                cells[name] = _error_text(exc)
    return cells


def ratio_pairs(backends: list[Backend]) -> list[tuple[str, str]]:
    """(numr backend, peer) for every peer on the same kind of device (CPU or GPU)."""
    peers = [b for b in backends if b.name in PEERS]
    return [(b.name, p.name) for b in backends if b.name.startswith("numr:") for p in peers if p.gpu == b.gpu]


def _us(v) -> str:
    return v if isinstance(v, str) else f"{v * 1e6:.2f}"


def table(results: dict, backends: list[Backend]) -> list[str]:
    names = [b.name for b in backends]
    pairs = ratio_pairs(backends)
    head = names + [f"{n} / {p}" for n, p in pairs]
    lines = ["| call (µs per call) | " + " | ".join(head) + " |", "| --- |" + " ---: |" * len(head)]
    for row, cells in results.items():
        ratios = [f"{cells[n] / cells[p]:.2f}x" if all(isinstance(cells.get(k), float) for k in (n, p)) else "-"
                  for n, p in pairs]
        lines.append(f"| {row} | " + " | ".join([_us(cells[n]) for n in names] + ratios) + " |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.call_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=",".join(DEFAULT_SPECS), help="comma-separated backend specs")
    parser.add_argument("--repeat", type=int, default=7, help="batches per backend (best kept; median for programs)")
    parser.add_argument("--min-time", type=float, default=0.01,
                        help="seconds per CPU batch (short batches: more chances of one that nothing else interrupts)")
    parser.add_argument("--gpu-time", type=float, default=0.2,
                        help="seconds per GPU batch (long: the synchronisation that ends it is spread over many calls)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time CPU backends by the calling thread's CPU time (time.thread_time), not wall "
                             "time: on a busy machine, the time spent waiting for a core is left out")
    parser.add_argument("--json", help="write every figure here (seconds per call, or the error)")
    args = parser.parse_args(argv)

    backends, missing = load_all([s for s in args.backends.split(",") if s])
    print(machine_line(backends))
    if args.cpu_time:
        print("clock: the calling thread's CPU time for CPU backends (--cpu-time)")
    for spec, why in missing.items():
        print(f"not run: {spec} ({why})")
    results = {}
    for row, setup, program in ROWS:
        results[row] = time_row(setup, program, backends, min_time=args.min_time, gpu_time=args.gpu_time,
                                repeat=args.repeat, cpu_time=args.cpu_time)
        print(f"done: {row}", file=sys.stderr, flush=True)
    print()
    print("\n".join(table(results, backends)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_line(backends), "args": vars(args), "not_run": missing,
                       "seconds_per_call": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
