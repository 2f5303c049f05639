"""Timing helpers shared by the benchmark scripts: every figure is taken side by side in one process.

``sync`` arguments are the device's synchronisation (a no-op on the CPU): it is called before the clock is
read, so a GPU figure includes the work the calls queued, not only the host time that queued it.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable


def _noop() -> None:
    return None


def batch(fn: Callable, n: int, sync: Callable = _noop, clock: Callable = time.perf_counter) -> float:
    """Seconds per call of ``n`` calls of ``fn`` followed by one ``sync``, read on ``clock`` (wall time, or
    ``time.thread_time`` for the calling thread's CPU time)."""
    start = clock()
    for _ in range(n):
        fn()
    sync()
    return (clock() - start) / n


def batch_size(fn: Callable, min_time: float, sync: Callable = _noop, clock: Callable = time.perf_counter) -> int:
    """How many calls of ``fn`` (then one ``sync``) take about ``min_time`` seconds."""
    fn()
    sync()
    n = 1
    while True:
        elapsed = batch(fn, n, sync, clock) * n
        if elapsed > min_time / 4:
            return max(1, int(n * min_time / elapsed))
        n *= 2


def side_by_side(fns: dict, *, min_time: float = 0.05, repeat: int = 15, syncs: dict | None = None,
                 reduce: Callable = statistics.median, min_times: dict | None = None,
                 clocks: dict | None = None) -> dict:
    """Seconds per call of each function (``reduce`` over ``repeat`` batches: the median by default,
    ``min`` for timeit's best-of), their batches interleaved so that a change in the machine's load lands
    on all of them alike. ``syncs`` maps a name to its device's synchronisation, run once per batch;
    ``min_times`` gives a name a batch length other than ``min_time``; ``clocks`` a clock other than wall
    time (``time.thread_time``: the calling thread's CPU time)."""
    syncs, min_times, clocks = syncs or {}, min_times or {}, clocks or {}
    sizes = {name: batch_size(fn, min_times.get(name, min_time), syncs.get(name, _noop),
                              clocks.get(name, time.perf_counter)) for name, fn in fns.items()}
    times: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(batch(fn, sizes[name], syncs.get(name, _noop), clocks.get(name, time.perf_counter)))
    return {name: reduce(t) for name, t in times.items()}


def runs(fn: Callable, sync: Callable = _noop, *, repeat: int = 5, warmup: int = 1) -> list[float]:
    """Seconds of each of ``repeat`` synchronised runs of ``fn`` after ``warmup`` untimed ones (a whole
    program: one run is long enough to time alone)."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return times
