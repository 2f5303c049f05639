"""``python -m benchmarks.dask_gpu``: dask.distributed over numr chunks on GPUs, out of core and across GPUs.

One data set, X of shape (n_chunks * rows, 64) float32, is made chunk by chunk *inside* the tasks, on the
device of the worker that runs them (nothing is shipped but the results), and streamed through two
computations, each one dask graph:

- ``reduce``: the sum and the sum of squares of X's elements, hence mean and std (one ``da.reduction``,
  tree-reduced ``split_every``, whose chunk step gives both: one task per chunk);
- ``matmul``: ``X.T @ X`` (a 64 x 64 Gram matrix; each chunk gives a small partial, summed in a tree).

Chunk ``b`` is a fixed pattern of ``period`` rows (multiples of 1/1024 in [0, 1)) tiled down the chunk, plus
``(b % 7) / 64``: every value is exact in float32, and the float64 references are closed forms over seven
small blocks, so checking a 200 GB run costs milliseconds. The workers drop each chunk once its partials are
made, so the device never holds more than a few chunks: the total can exceed the device's memory.

Parts, each printed (flushed) as soon as it is measured:

- ``A`` (issue 17, item 4): one worker on device 0 (``cuda:0``): numr chunks, then the same graph with the
  peer's chunks (CuPy; NumPy on ``--device cpu``). The total is at least 1.1x the device's memory when the
  budget allows (sized from a calibration run), so the computation is out of core.
- ``B`` (issue 18): one worker per device (``cuda:0`` .. ``cuda:N-1``), the same graph and total as A;
  scaling = throughput on N devices / throughput on one (goal: >= 1.8x on 2 GPUs for ``reduce``).
- ``W``: A again with numr chunks on ``webgpu:0`` (the same GPU through Vulkan), total sized to the budget
  (smaller than A's when the budget demands it; the line says whether it is out of core), compared
  with the CuPy figure of A.

One worker per GPU: a ``SpecCluster`` (the class ``LocalCluster`` is built on, as dask-cuda's
``LocalCUDACluster`` is) of one ``Nanny`` per GPU, each with its own environment: ``CUDA_VISIBLE_DEVICES=i``,
so that worker i's process sees GPU i alone, as ``cuda:0``, and ``NUMR_DEVICE=cuda:0`` (numr's default
device there, for the arrays dask makes by chunk type alone). ``LocalCluster`` gives every worker one
environment, so it cannot do that. Naming ``cuda:i`` in worker i's tasks instead, with every GPU visible,
fails at the tree reduction: a partial result pickles with its device's name, so worker 0 would receive
worker 1's partial on ``cuda:1`` and combine it with its own on ``cuda:0``, which numr refuses (arrays on
different devices); with one visible GPU per process, ``cuda:0`` names the receiving worker's own GPU.

Output lines (``[elapsed s]`` first) have the form ``A cuda:0 numr reduce: T GB (n x c GB chunks) t s
r GB/s  sum e sumsq e mean e std e  PASS  peak p / m GB on device, out of core``: the data streamed, the
chunking, the wall time of the
``compute`` (graph submission to the result on the client), throughput (X's bytes / that time), the
relative errors against the float64 references (PASS/FAIL against float32 tolerances), and the device
memory the library held at its peak (CuPy: its pool's size after the run) against the device's. ``ratio``
lines give numr's time over the peer's for the same data (below 1: numr is faster, as in
docs/benchmarks.md); ``scaling`` lines give the throughput on N devices over that on one. The last line
is ``ALL PASS`` or ``FAILED: ...``; the exit status is 0 only for ALL PASS. ``--json PATH`` writes every
record.

On a CPU-only machine ``--device cpu --total-gb 0.5`` runs the same code end to end (peer: NumPy; B with
``--workers`` processes on the CPU).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import sys
import time
import traceback
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np

COLS = 64
PERIOD = 4096
SEED = 20261124
N_OFFSETS = 7
SPLIT_EVERY = 16
GB = 1e9
# float32 tolerances (relative to the float64 reference): the sums add ~1e8-1e9 values per chunk on the
# device, then a tree of partials; the Gram matrix contracts over a whole chunk's rows (millions) in one
# GEMM; std comes from E[x^2] - E[x]^2, which loses about a factor of 5 to cancellation on this data.
RTOL = {"sum": 1e-4, "sumsq": 1e-4, "mean": 1e-4, "std": 1e-3, "gram": 1e-3}
PEERS = {"cpu": "numpy", "cuda": "cupy", "webgpu": None}


# ---- the data and its references --------------------------------------------------------------------

def pattern(period: int = PERIOD, cols: int = COLS, seed: int = SEED) -> np.ndarray:
    """The ``period`` x ``cols`` block every chunk tiles: multiples of 1/1024 in [0, 1), exact in float32."""
    return (np.random.default_rng(seed).integers(0, 1024, (period, cols)) / 1024).astype(np.float32)


def offset(b: int) -> float:
    """What chunk ``b`` adds to the pattern: a multiple of 1/64, so every value stays exact in float32."""
    return (b % N_OFFSETS) / 64


def reference(n_chunks: int, rows: int, period: int = PERIOD, cols: int = COLS, seed: int = SEED) -> dict:
    """Float64 sum, sum of squares, mean, std and Gram matrix X.T @ X of the whole data, in closed form."""
    p = pattern(period, cols, seed).astype(np.float64)
    reps = rows // period
    total, sumsq, gram = 0.0, 0.0, np.zeros((cols, cols))
    for j in range(N_OFFSETS):
        count = len(range(j, n_chunks, N_OFFSETS)) * reps  # pattern copies carrying offset j / 64
        if count:
            q = p + j / 64
            total += count * q.sum()
            sumsq += count * (q * q).sum()
            gram += count * (q.T @ q)
    n = n_chunks * rows * cols
    mean = total / n
    return {"n": n, "sum": total, "sumsq": sumsq, "mean": mean, "std": math.sqrt(sumsq / n - mean * mean),
            "gram": gram}


def check(op: str, got: np.ndarray, ref: dict) -> tuple[dict[str, float], bool]:
    """Relative errors of a computation's result against ``reference`` (the Gram matrix's: the largest
    error over its entries, relative to its largest entry), and whether all are within tolerance."""
    got = np.asarray(got, dtype=np.float64)
    if op == "reduce":  # (sum, sum of squares)
        s, ss = got.reshape(2)
        mean = s / ref["n"]
        std = math.sqrt(max(ss / ref["n"] - mean * mean, 0.0))
        errs = {name: float(abs(v - ref[name]) / ref[name]) for name, v in
                (("sum", s), ("sumsq", ss), ("mean", mean), ("std", std))}
    else:
        g = got.reshape(ref["gram"].shape)
        errs = {"gram": float(np.abs(g - ref["gram"]).max() / np.abs(ref["gram"]).max())}
    ok = all(math.isfinite(e) and e <= RTOL[k] for k, e in errs.items())
    return errs, ok


# ---- what runs in the workers -----------------------------------------------------------------------

def worker_device(kind: str) -> str:
    """The device of this worker's chunks: its one visible GPU (``CUDA_VISIBLE_DEVICES``), ``webgpu:0``
    (part W has one worker) or the CPU."""
    return "cpu" if kind == "cpu" else f"{kind}:0"


_patterns: dict[tuple, Any] = {}  # per process: the pattern on each (library, device), made once


def _pattern_on(lib: str, kind: str, period: int, cols: int, seed: int):
    key = (lib, kind, period, cols, seed)
    p = _patterns.get(key)
    if p is None:
        host = pattern(period, cols, seed)
        if lib == "numr":
            import numr_array as xp
            p = xp.asarray(host, device=worker_device(kind))
        elif lib == "cupy":
            import cupy
            p = cupy.asarray(host)
        else:
            p = host
        _patterns[key] = p
    return p


def make_chunk(block_id=None, *, lib: str, kind: str, rows: int, period: int, cols: int, seed: int,
               flat: bool = False):
    """Chunk ``block_id[0]`` of X, made on this worker's device (dask's map_blocks passes ``block_id``);
    ``flat``: its rows one after the other, as one vector (a view)."""
    b = block_id[0]
    shape = (rows // period, period, cols)
    p = _pattern_on(lib, kind, period, cols, seed)
    out_shape = (rows * cols,) if flat else (rows, cols)
    if lib == "numr":
        import numr_array as xp
        return xp.reshape(xp.broadcast_to(p, shape) + offset(b), out_shape)
    mod = np if lib == "numpy" else __import__("cupy")
    return (mod.broadcast_to(p, shape) + np.float32(offset(b))).reshape(out_shape)


def to_host(t, lib: str) -> np.ndarray:
    """A (small) result chunk as NumPy, made in the worker so that the client needs no GPU."""
    if lib == "numr":
        return np.asarray(t.to_device("cpu"))
    if lib == "cupy":
        import cupy
        return cupy.asnumpy(t)
    return np.asarray(t)


def warm_worker(kind: str, lib: str, rows: int, period: int) -> None:
    """Both graphs' chunk work once in this worker (kernels compiled, pools and handles made), wherever the
    scheduler put the warm-up graph's tasks."""
    mod = namespace(lib)
    to_host(moments_chunk(make_chunk((0,), lib=lib, kind=kind, rows=rows, period=period, cols=COLS, seed=SEED,
                                     flat=True), lib=lib), lib)
    x = make_chunk((1, 0), lib=lib, kind=kind, rows=rows, period=period, cols=COLS, seed=SEED)
    to_host(mod.matmul(x.T, x), lib)


def device_info(kind: str) -> dict:
    """What this worker's device is: name, memory, PCI bus (for cuda: that each worker has its own GPU)."""
    info = {"device": worker_device(kind), "pid": os.getpid(),
            "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}
    import numr_array as xp
    t = xp.asarray(np.zeros(1, np.float32), device=worker_device(kind))  # starts numr's client on it
    if kind == "cuda":
        import cupy
        info["memory_bytes"] = int(cupy.cuda.runtime.memGetInfo()[1])
        info["name"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        info["pci_bus_id"] = cupy.cuda.Device(0).pci_bus_id
    elif kind == "webgpu":
        adapter = t.device.client.adapter
        info["name"] = str(adapter.info.get("device", ""))
        info["memory_bytes"] = None  # WebGPU does not say; the same GPU's CUDA figure stands in (part W)
    else:
        info["name"] = platform.processor() or platform.machine()
        info["memory_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return info


def reset_memory(kind: str, lib: str) -> None:
    """Start a peak-memory measurement on this worker's device (numr: its allocator's peak; CuPy: an empty
    pool, whose size after the run is then the most it held at once)."""
    if lib == "numr" and kind != "cpu":
        import numr_array as xp
        xp.empty_cache(worker_device(kind))
        xp.reset_peak_memory_stats(worker_device(kind))
    elif lib == "cupy":
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()


def peak_memory(kind: str, lib: str) -> int | None:
    if lib == "numr" and kind != "cpu":
        import numr_array as xp
        return int(xp.memory_stats(worker_device(kind))["peak_bytes_in_use"])
    if lib == "cupy":
        import cupy
        return int(cupy.get_default_memory_pool().total_bytes())
    return None


# ---- the graphs ----------------------------------------------------------------------------------

def meta_of(lib: str, ndim: int):
    """The chunk type's empty array of ``ndim`` dimensions, made on the client (numr: on cpu, so that the
    client needs no GPU)."""
    if lib == "numr":
        import numr_array as xp
        return xp.empty((0,) * ndim, dtype=xp.float32, device="cpu")
    return namespace(lib).empty((0,) * ndim, dtype=np.float32)


def namespace(lib: str):
    if lib == "numr":
        import numr_array
        return numr_array
    return np if lib == "numpy" else __import__("cupy")


def moments_chunk(x, axis=None, keepdims=None, *, lib: str):
    """The sum and the sum of squares of a 1-D chunk, as a 2-vector."""
    mod = namespace(lib)
    return mod.stack([mod.sum(x), mod.sum(x * x)])


def moments_combine(x, axis=None, keepdims=None, *, lib: str):
    """The sums of the (sum, sum of squares) pairs that ``x`` concatenates."""
    mod = namespace(lib)
    return mod.sum(mod.reshape(x, (x.shape[0] // 2, 2)), axis=0)


def graphs(op: str, lib: str, kind: str, n_chunks: int, rows: int, period: int, cols: int = COLS,
           seed: int = SEED):
    """The dask array of ``op`` over X made of ``n_chunks`` chunks of ``rows`` rows, ending in NumPy.

    ``reduce`` is one dask reduction (``da.reduction``, the machinery of ``sum``, tree-reduced ``split_every``)
    of X's elements whose chunk step gives both the sum and the sum of squares: one task per chunk, fused with
    the chunk's generation, so that each chunk is made and reduced in one go and only two numbers leave it
    (``X.sum()`` and ``(X * X).sum()`` together keep each chunk until both ran, in three tasks per chunk)."""
    import dask.array as da

    if op == "reduce":
        X = da.map_blocks(make_chunk, dtype=np.float32, chunks=((rows * cols,) * n_chunks,), meta=meta_of(lib, 1),
                          lib=lib, kind=kind, rows=rows, period=period, cols=cols, seed=seed, flat=True)
        combine = partial(moments_combine, lib=lib)
        out = da.reduction(X, partial(moments_chunk, lib=lib), combine, combine=combine, axis=0, keepdims=True,
                           dtype=np.float32, split_every=SPLIT_EVERY, output_size=2, meta=meta_of(lib, 1))
    else:
        X = da.map_blocks(make_chunk, dtype=np.float32, chunks=((rows,) * n_chunks, (cols,)), meta=meta_of(lib, 2),
                          lib=lib, kind=kind, rows=rows, period=period, cols=cols, seed=seed)
        out = X.T @ X
    return out.map_blocks(to_host, lib=lib, dtype=np.float32, meta=np.empty((0,) * out.ndim, np.float32))


@dataclass
class Record:
    part: str
    kind: str
    lib: str
    op: str
    workers: int
    devices: list[str]
    n_chunks: int
    chunk_bytes: int
    total_bytes: int
    seconds: float
    gbps: float
    errors: dict[str, float]
    passed: bool
    peak_bytes: int | None = None  # the largest of the workers' peaks
    device_memory_bytes: int | None = None
    out_of_core: bool | None = None
    note: str = ""


class Budget:
    """Wall time left for the whole run (every part together)."""

    def __init__(self, seconds: float):
        self.start = time.perf_counter()
        self.seconds = seconds

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.seconds - self.elapsed()


class Run:
    """The records and printed lines of one invocation."""

    def __init__(self, budget: Budget, json_path: str | None):
        self.budget = budget
        self.json_path = json_path
        self.records: list[Record] = []
        self.events: list[dict] = []  # ratios, scaling, skips, errors
        self.failures: list[str] = []
        self.machine: dict = {"host": platform.node(), "python": platform.python_version()}

    def say(self, line: str) -> None:
        print(f"[{self.budget.elapsed():6.1f}s] {line}", flush=True)

    def event(self, kind: str, line: str, **data) -> None:
        self.events.append({"kind": kind, "line": line, **data})
        self.say(line)
        if kind == "error":
            self.failures.append(line)
        self.write()

    def add(self, r: Record) -> None:
        self.records.append(r)
        if not r.passed:
            self.failures.append(f"{r.part} {r.lib} {r.op} on {','.join(r.devices)}")
        errs = " ".join(f"{k} {v:.1e}" for k, v in r.errors.items())
        mem = ""
        if r.peak_bytes is not None:
            mem = f"  peak {r.peak_bytes / GB:.3g}"
        if r.device_memory_bytes:
            mem += f"{'  held' if not mem else ''} / {r.device_memory_bytes / GB:.3g}"
        if mem:
            mem += " GB on device" + {True: ", out of core", False: ", NOT out of core", None: ""}[r.out_of_core]
        self.say(f"{r.part} {','.join(r.devices) if r.workers <= 2 else f'{r.workers} x {r.kind}'} {r.lib} {r.op}: "
                 f"{r.total_bytes / GB:.3f} GB ({r.n_chunks} x {r.chunk_bytes / GB:.3f} GB chunks) "
                 f"{r.seconds:.3f} s {r.gbps:.3g} GB/s  {errs}  {'PASS' if r.passed else 'FAIL'}{mem}"
                 f"{'  (' + r.note + ')' if r.note else ''}")
        self.write()

    def write(self) -> None:
        if self.json_path:
            with open(self.json_path, "w") as f:
                json.dump({"machine": self.machine, "budget_s": self.budget.seconds,
                           "elapsed_s": self.budget.elapsed(), "records": [asdict(r) for r in self.records],
                           "events": self.events, "failures": self.failures}, f, indent=1)


# ---- clusters -------------------------------------------------------------------------------------

def worker_env(kind: str, i: int) -> dict[str, str]:
    """The environment of worker ``i``: GPU i alone, as ``cuda:0`` (see the module docstring)."""
    env = {"NCCL_NVLS_ENABLE": "0", "NUMR_DEVICE": worker_device(kind)}
    if kind == "cuda":
        env["CUDA_VISIBLE_DEVICES"] = str(i)  # read when CUDA starts in the worker, at its first task
    return env


def make_cluster(kind: str, n: int):
    """A cluster of ``n`` worker processes, one thread each, worker i on device i of ``kind`` (see the
    module docstring), no memory limit (the data lives on the device; sizeof counts it as process memory,
    and spilling would copy chunks to the host)."""
    from distributed import Nanny, Scheduler, SpecCluster
    workers = {f"{kind}{i}": {"cls": Nanny, "options": {"nthreads": 1, "env": worker_env(kind, i),
                                                          "memory_limit": 0, "dashboard": False,
                                                          # not the workers' heartbeat errors at teardown
                                                          "silence_logs": logging.CRITICAL}}
               for i in range(n)}
    scheduler = {"cls": Scheduler, "options": {"dashboard": False, "dashboard_address": ":0"}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=logging.ERROR)


class Part:
    """One cluster and what it measures."""

    def __init__(self, run: Run, name: str, kind: str, n_workers: int, chunk_gb: float, period: int):
        from distributed import Client
        self.run, self.name, self.kind, self.n = run, name, kind, n_workers
        self.cluster = make_cluster(kind, n_workers)
        try:
            self.client = Client(self.cluster)
            self.client.wait_for_workers(n_workers, timeout=60)
            infos = self.client.run(device_info, kind)
        except BaseException:
            self.cluster.close(timeout=10)
            raise
        self.infos = [infos[w] for w in sorted(infos)]
        # by their host-wide names (worker i's cuda:0 is the host's cuda:i)
        self.devices = [f"cuda:{i['CUDA_VISIBLE_DEVICES']}" if kind == "cuda" else i["device"] for i in self.infos]
        # the device memory the data is measured against (none on the CPU: out of core means a GPU's)
        self.memory = None if kind == "cpu" else min((i["memory_bytes"] for i in self.infos if i["memory_bytes"]),
                                                     default=None)
        self.period = period
        self.rows = max(period, int(chunk_gb * GB / (4 * COLS)) // period * period)
        self.chunk_bytes = self.rows * COLS * 4
        run.event("cluster", f"{name}: {n_workers} worker(s) on {kind}: " + "; ".join(
            f"{d} = {i['name']}{' (' + i['pci_bus_id'] + ')' if i.get('pci_bus_id') else ''}"
            f"{', %.1f GB' % (i['memory_bytes'] / GB) if i['memory_bytes'] else ''}"
            for d, i in zip(self.devices, self.infos)), part=name, workers=self.infos)

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        finally:
            self.cluster.close(timeout=10)

    def compute(self, op: str, lib: str, n_chunks: int, timeout: float) -> tuple[float, np.ndarray]:
        from distributed import wait
        array = graphs(op, lib, self.kind, n_chunks, self.rows, self.period)
        t0 = time.perf_counter()
        future = self.client.compute(array)
        wait(future, timeout=timeout)
        result = future.result()
        return time.perf_counter() - t0, result

    def measure(self, op: str, lib: str, n_chunks: int, timeout: float, note: str = "") -> Record:
        self.client.run(reset_memory, self.kind, lib)
        seconds, result = self.compute(op, lib, n_chunks, timeout)
        peaks = [p for p in self.client.run(peak_memory, self.kind, lib).values() if p is not None]
        errors, ok = check(op, result, reference(n_chunks, self.rows, self.period))
        total = n_chunks * self.chunk_bytes
        return Record(self.name, self.kind, lib, op, self.n, self.devices, n_chunks, self.chunk_bytes, total,
                      seconds, total / seconds / GB, errors, ok, max(peaks) if peaks else None, self.memory,
                      None if not self.memory else total > self.memory, note)

    def warm(self, lib: str, timeout: float) -> bool:
        """Both graphs' chunk work in every worker, then both graphs on two chunks per worker (checked)."""
        self.client.run(warm_worker, self.kind, lib, self.rows, self.period)
        for op in ("reduce", "matmul"):
            _, result = self.compute(op, lib, 2 * self.n, timeout)
            errors, ok = check(op, result, reference(2 * self.n, self.rows, self.period))
            if not ok:
                raise AssertionError(f"warm-up {lib} {op} on {self.kind} is wrong: {errors}")
        return True

    def rate(self, lib: str, n_chunks: int, timeout: float) -> float:
        """Bytes per second of the slower of the two graphs on ``n_chunks`` chunks (after ``warm``)."""
        worst = math.inf
        for op in ("reduce", "matmul"):
            seconds, result = self.compute(op, lib, n_chunks, timeout)
            errors, ok = check(op, result, reference(n_chunks, self.rows, self.period))
            if not ok:
                raise AssertionError(f"calibration {lib} {op} on {self.kind} is wrong: {errors}")
            worst = min(worst, n_chunks * self.chunk_bytes / seconds)
        return worst


# ---- the parts ------------------------------------------------------------------------------------

def guarded(run: Run, what: str, fn, *args, **kwargs):
    """``fn(*args)``, or None after printing an ERROR line (the run carries on with the next thing)."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (reported; one broken library or device must not lose the others)
        detail = traceback.format_exception_only(type(e), e)[-1].strip()
        run.event("error", f"ERROR {what}: {detail[:500]}")
        return None


def plan_chunks(run: Run, part: Part, rate: float, target_s: float, until: float, runs: int,
                memory: int | None) -> tuple[int, str]:
    """How many chunks one timed graph streams: ``target_s`` at ``rate``, raised to 1.1x the device's memory
    ``memory`` (out of core) when given, then capped so that the part's ``runs`` timed graphs end before
    ``until`` (elapsed seconds), with a margin."""
    per = part.chunk_bytes
    n = max(part.n, round(rate * target_s / per))
    if memory:
        n = max(n, math.ceil(1.1 * memory / per))
    afford = max(part.n, int(rate * max(0.0, until - run.budget.elapsed()) / runs / 1.3 / per))
    if n > afford:
        return afford, "shrunk to fit the time budget"
    return n, ""


def part_single(run: Run, args, name: str, kind: str, lib_peer: str | None, chunk_gb: float, until: float,
                memory: int | None = None) -> dict:
    """Part A (or W): one worker on device 0; numr, then the peer on the same total; checked and timed.
    ``memory``: the device's memory where the worker cannot tell (webgpu: the same GPU's CUDA figure)."""
    part = Part(run, name, kind, 1, chunk_gb, args.period)
    memory = part.memory or memory
    out: dict = {"memory": memory}
    try:
        warmed = [lib for lib in ["numr"] + ([lib_peer] if lib_peer else [])
                  if guarded(run, f"{name} warm-up {lib} on {kind}", part.warm, lib, run.budget.left())]
        if not warmed:
            return out
        if args.total_gb:
            n, note = max(1, round(args.total_gb * GB / part.chunk_bytes)), ""
        else:
            rates = [guarded(run, f"{name} calibration {lib} on {kind}", part.rate, lib, 8, run.budget.left())
                     for lib in warmed]
            if not all(rates):
                return out
            n, note = plan_chunks(run, part, min(rates), args.run_seconds, until, 2 * len(warmed),
                                  memory if kind != "cpu" else None)
        out["n_chunks"] = n
        for lib in warmed:
            for op in ("reduce", "matmul"):
                r = guarded(run, f"{name} {lib} {op} on {kind}", part.measure, op, lib, n,
                            max(5.0, run.budget.left() - 3), note)
                if r is not None:
                    if r.device_memory_bytes is None and memory:
                        r.device_memory_bytes, r.out_of_core = memory, r.total_bytes > memory
                    run.add(r)
                    out[(lib, op)] = r
        return out
    finally:
        guarded(run, f"{name} closing the cluster", part.close)


def part_multi(run: Run, args, kind: str, n: int, lib_peer: str | None, single: dict) -> None:
    """Part B: one worker per device, the same graph and total as A; scaling against A."""
    part = Part(run, "B", kind, n, args.chunk_gb, args.period)
    try:
        total_n = single.get("n_chunks")
        if total_n is None:  # part A failed before sizing its runs
            total_n = max(n, round((args.total_gb or 1.0) * GB / part.chunk_bytes))
            run.event("skip", f"B: no size from part A; {total_n} chunks ({args.total_gb or 1.0} GB), no scaling")
        for lib in ["numr"] + ([lib_peer] if lib_peer else []):
            if guarded(run, f"B warm-up {lib} on {n} x {kind}", part.warm, lib, run.budget.left()) is None:
                continue
            for op in ("reduce", "matmul"):
                left = run.budget.left()
                one = single.get((lib, op))
                if one is not None and one.seconds * 1.3 / n > left - 5:
                    run.event("skip", f"SKIP B {lib} {op}: {left:.0f} s left, {one.seconds / n:.0f} s needed")
                    continue
                r = guarded(run, f"B {lib} {op} on {n} x {kind}", part.measure, op, lib, total_n,
                            max(5.0, left - 3))
                if r is None:
                    continue
                run.add(r)
                if one is not None:
                    s = r.gbps / one.gbps
                    goal = ("  (goal >= 1.8x on 2 GPUs: " + ("met" if s >= 1.8 else "NOT met") + ")"
                            if op == "reduce" and kind == "cuda" and n == 2 else "")
                    run.event("scaling", f"scaling {lib} {op} 1 -> {n} x {kind}: {s:.2f}x "
                                         f"({one.gbps:.3g} -> {r.gbps:.3g} GB/s){goal}",
                              lib=lib, op=op, devices=n, factor=s)
    finally:
        guarded(run, "B closing the cluster", part.close)


def ratios(run: Run, part: str, mine: dict, peer: dict, lib_peer: str, label: str) -> None:
    """numr's time over the peer's for the same data (the peer's throughput over numr's): below 1 is faster."""
    for op in ("reduce", "matmul"):
        a, b = mine.get(("numr", op)), peer.get((lib_peer, op))
        if a is not None and b is not None:
            run.event("ratio", f"ratio {part} {op}: numr on {label} / {lib_peer} = {b.gbps / a.gbps:.2f} "
                               f"(time per GB; below 1 numr is faster: {a.gbps:.3g} vs {b.gbps:.3g} GB/s)",
                      part=part, op=op, ratio=b.gbps / a.gbps)


def device_count(kind: str) -> int:
    if kind == "cpu":
        return 1
    import numr_array as xp
    return sum(1 for d in xp.__array_namespace_info__().devices() if str(d).startswith(kind + ":"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dask_gpu", description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cuda", "cpu", "webgpu"], default=None,
                   help="the device kind of parts A and B (default: cuda where present, else cpu)")
    p.add_argument("--budget", type=float, default=150.0, help="wall seconds for everything (default 150)")
    p.add_argument("--total-gb", type=float, default=None,
                   help="GB (1e9 bytes) streamed per timed graph (default: sized from a calibration run, at "
                        "least 1.1x the device's memory where the budget allows)")
    p.add_argument("--chunk-gb", type=float, default=None,
                   help="GB per chunk in parts A and B (default: 2 on cuda, 0.5 on webgpu, 0.05 on cpu)")
    p.add_argument("--webgpu-chunk-gb", type=float, default=0.5, help="GB per webgpu chunk (default 0.5)")
    p.add_argument("--run-seconds", type=float, default=None,
                   help="target seconds of one timed graph when sizing from calibration (default budget / 25)")
    p.add_argument("--workers", type=int, default=None,
                   help="workers (devices) in part B (default: every device of the kind; 2 on cpu)")
    p.add_argument("--webgpu", choices=["auto", "on", "off"], default="auto",
                   help="part W: numr on webgpu:0 (auto: when --device is cuda and a webgpu adapter exists)")
    p.add_argument("--period", type=int, default=PERIOD, help=argparse.SUPPRESS)
    p.add_argument("--json", default=None, help="write every record and figure to this JSON file")
    args = p.parse_args(argv)

    budget = Budget(args.budget)
    run = Run(budget, args.json)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off here too (each worker's env has it)
    import dask
    import distributed
    if args.device is None:
        args.device = "cuda" if device_count("cuda") else "cpu"
    if args.chunk_gb is None:
        args.chunk_gb = {"cuda": 2.0, "webgpu": args.webgpu_chunk_gb, "cpu": 0.05}[args.device]
    if args.run_seconds is None:
        args.run_seconds = args.budget / 25
    n_dev = device_count(args.device)
    n_multi = args.workers or (2 if args.device == "cpu" else n_dev)
    do_webgpu = args.webgpu == "on" or (args.webgpu == "auto" and args.device == "cuda" and device_count("webgpu"))
    run.machine.update({"dask": dask.__version__, "distributed": distributed.__version__, "device": args.device,
                        "devices": n_dev, "argv": sys.argv[1:] if argv is None else argv})
    run.say(f"dask {dask.__version__}, distributed {distributed.__version__}; {n_dev} {args.device} device(s); "
            f"budget {args.budget:.0f} s; parts: A" + (f", B ({n_multi} workers)" if n_multi > 1 else "")
            + (", W (webgpu:0)" if do_webgpu else ""))
    if n_dev == 0:
        run.event("error", f"ERROR no {args.device} device on this machine")
        run.say("FAILED: " + "; ".join(run.failures))
        return 1

    peer = PEERS[args.device]
    run.machine["numpy"] = np.__version__
    if peer == "cupy":
        cupy = guarded(run, "importing CuPy (the peer)", __import__, "cupy")
        if cupy is None:
            peer = None
        else:
            run.machine["cupy"] = cupy.__version__
    # A sizes its runs to end by 45% of the budget; B streams the same total over N devices; W gets the rest
    single = guarded(run, "part A", part_single, run, args, "A", args.device, peer, args.chunk_gb,
                     0.45 * args.budget) or {}
    if peer:
        ratios(run, "A", single, single, peer, args.device + ":0" if args.device != "cpu" else "cpu")
    if n_multi > 1:
        if args.device == "webgpu":  # Vulkan ignores CUDA_VISIBLE_DEVICES: no way to give a process one adapter
            run.event("skip", "SKIP B: one worker per GPU is a CUDA setup (CUDA_VISIBLE_DEVICES per worker)")
        elif n_multi > n_dev and args.device != "cpu":
            run.event("skip", f"SKIP B: {n_multi} workers asked for, {n_dev} {args.device} device(s)")
        elif budget.left() < 20:
            run.event("skip", f"SKIP B: {budget.left():.0f} s of the budget left")
        else:
            guarded(run, "part B", part_multi, run, args, args.device, n_multi, peer, single)
    if do_webgpu:
        if budget.left() < 25:
            run.event("skip", f"SKIP W: {budget.left():.0f} s of the budget left")
        else:
            w = guarded(run, "part W", part_single, run, args, "W", "webgpu", None, args.webgpu_chunk_gb,
                        args.budget - 8, single.get("memory") if args.device == "cuda" else None) or {}
            if peer == "cupy":
                ratios(run, "W", w, single, "cupy", "webgpu:0")
    run.machine["elapsed_s"] = budget.elapsed()
    run.write()
    if run.failures:
        run.say("FAILED: " + "; ".join(run.failures))
        return 1
    run.say(f"ALL PASS ({len(run.records)} timed graphs, {budget.elapsed():.1f} s)")
    return 0


if __name__ == "__main__":
    # run the importable module's main, so that the tasks' functions pickle by reference
    # (benchmarks.dask_gpu.make_chunk) rather than as __main__ functions
    from benchmarks.dask_gpu import main as _main
    sys.exit(_main())
