"""``python -m benchmarks.workloads``: array-API-generic programs, side by side in one process.

Each program is written once against a namespace ``xp`` and runs unchanged on NumPy, numr_array (cpu,
webgpu:0, cuda:0), CuPy and PyTorch (those two through ``array_api_compat``). Per (program, backend):
the result of the first run is checked against a float64 NumPy run of the same program on the same data;
then, after a warm-up, every backend's repeats are interleaved (so a change in the machine's load lands on
all alike), each timed run after ``--settle`` untimed ones of its own (default 1), and the median synchronised
time is kept. (A run timed right after other libraries' work, as in a round without settling, can pay for it:
on an H200 numr's jitted WebGPU k-means took 1.17-1.59 ms, median 1.55, in rounds with numr's CUDA backends,
CuPy and PyTorch, 1.02-1.10 in rounds with CuPy's or PyTorch's alone, and its eager calls 7.4-11.1 ms
against 6.2-6.3.) Last, one more run measures the peak memory (see
benchmarks/_backends.py for the instrument each backend uses). A backend that raises, or whose result
fails the check, is reported as such in its cell, and the run goes on.

Sizes: ``cpu`` (NumPy takes 1-100 ms on a 2-core machine), ``gpu`` (main operands of 1-50 MB float32)
and ``tiny`` (a proof that a slow device, such as lavapipe, runs the code path).

``--jit`` adds, beside each numr backend, the same device with every program run through
``numr_array.jit`` (column ``numr:DEV+jit``): its checked first call captures the whole program, the second
captures it again reading in place the inputs it passes again (every call passes the same arrays), every
later call replays and copies the outputs out. A table of eager / jit times follows.

    python -m benchmarks.workloads --size cpu --backends numpy,numr:cpu --repeat 5 --json out.json
    python -m benchmarks.workloads --size gpu --jit
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from benchmarks._backends import DEFAULT_SPECS, GPU_SPECS, PEERS, Backend, load_all, machine_line, numpy_namespace
from benchmarks._timing import runs


# --- the programs: ``run(xp, **arrays, **params)`` returns a tuple of arrays ---------------------------

def kmeans(xp, X, C0, ids, *, iters: int):
    """Lloyd's iterations: squared distances by broadcasting, argmin, centres as one-hot matmuls."""
    C = C0
    for _ in range(iters):
        D = xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
        onehot = xp.astype(xp.argmin(D, axis=1)[:, None] == ids[None, :], X.dtype)
        counts = xp.sum(onehot, axis=0)
        C = (onehot.T @ X) / (counts + xp.astype(counts == 0, X.dtype))[:, None]
    return (C,)


def logreg(xp, X, y, w0, *, steps: int, lr: float):
    """Logistic regression by full-batch gradient descent: X @ w, exp, X.T @ v."""
    w = w0
    scale = lr / X.shape[0]
    for _ in range(steps):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        w = w - scale * (X.T @ (p - y))
    return (w,)


def attention(xp, Q, K, V):
    """Softmax attention over a batch: Q K^T / sqrt(d), stable softmax along the last axis, times V."""
    S = (Q @ xp.matrix_transpose(K)) * (1.0 / math.sqrt(Q.shape[-1]))
    E = xp.exp(S - xp.max(S, axis=-1, keepdims=True))
    return ((E / xp.sum(E, axis=-1, keepdims=True)) @ V,)


def heat(xp, u, *, steps: int, alpha: float):
    """Explicit 1-D heat equation with fixed ends: slices, +, *, concat per step."""
    for _ in range(steps):
        inner = u[1:-1] + alpha * (u[:-2] - 2.0 * u[1:-1] + u[2:])
        u = xp.concat([u[:1], inner, u[-1:]])
    return (u,)


def mlp(xp, X, Y, W1, W2, *, lr: float):
    """One training step of a two-layer perceptron (leaky ReLU, softmax cross-entropy): forward, backward,
    update. Returns the new weights and the gradients."""
    H = X @ W1
    A = xp.where(H > 0, H, 0.01 * H)
    O = A @ W2
    E = xp.exp(O - xp.max(O, axis=1, keepdims=True))
    G = (E / xp.sum(E, axis=1, keepdims=True) - Y) * (1.0 / X.shape[0])
    dW2 = A.T @ G
    dA = G @ W2.T
    dW1 = X.T @ xp.where(H > 0, dA, 0.01 * dA)
    return W1 - lr * dW1, W2 - lr * dW2, dW1, dW2


def sort_stats(xp, X):
    """Sorting along the long axis, a standard deviation along it, a cumulative sum along the short one."""
    return xp.sort(X, axis=0), xp.std(X, axis=0), xp.cumulative_sum(X, axis=1)


def fft_conv(xp, x, h):
    """Full linear convolution through real FFTs zero-padded to len(x) + len(h) - 1."""
    n = x.shape[0] + h.shape[0] - 1
    return (xp.fft.irfft(xp.fft.rfft(x, n=n) * xp.fft.rfft(h, n=n), n=n),)


def cg(xp, A, b, *, iters: int):
    """A fixed number of conjugate-gradient iterations on A x = b (A symmetric positive definite)."""
    x = xp.zeros_like(b)
    r = p = b
    rs = xp.vecdot(r, r)
    for _ in range(iters):
        Ap = A @ p
        alpha = rs / xp.vecdot(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = xp.vecdot(r, r)
        p = r + (rs_new / rs) * p
        rs = rs_new
    return (x,)


def adam(xp, p, target, *, steps: int, lr: float):
    """Adam on the quadratic 0.5 |p - target|^2: a dozen small element-wise ops per step."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    m = xp.zeros_like(p)
    v = xp.zeros_like(p)
    for t in range(1, steps + 1):
        g = p - target
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * (g * g)
        step = (lr / (1 - b1 ** t)) * m / (xp.sqrt(v * (1.0 / (1 - b2 ** t))) + eps)
        p = p - step
    return (p,)


# --- their data ---------------------------------------------------------------------------------------

def _f32(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float32)


def make_kmeans(rng, n, d, k, iters):
    # starting centres near the true ones: no two start in one cluster, so no point lies near a boundary
    # where float32 and float64 could pick different labels
    centres = rng.uniform(-10, 10, (k, d))
    X = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    C0 = centres + 0.5 * rng.standard_normal((k, d))
    return {"X": _f32(X), "C0": _f32(C0), "ids": np.arange(k, dtype=np.int32)}, {"iters": iters}


def make_logreg(rng, n, d, steps):
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0)
    return {"X": _f32(X), "y": _f32(y), "w0": np.zeros(d, np.float32)}, {"steps": steps, "lr": 0.5}


def make_attention(rng, b, s, d):
    return {name: _f32(rng.standard_normal((b, s, d))) for name in "QKV"}, {}


def make_heat(rng, n, steps):
    return {"u": _f32(rng.random(n))}, {"steps": steps, "alpha": 0.25}


def make_mlp(rng, n, d, h, c):
    Y = np.eye(c)[rng.integers(0, c, n)]
    return ({"X": _f32(rng.standard_normal((n, d))), "Y": _f32(Y),
             "W1": _f32(rng.standard_normal((d, h)) / math.sqrt(d)),
             "W2": _f32(rng.standard_normal((h, c)) / math.sqrt(h))}, {"lr": 0.1})


def make_sort_stats(rng, n, m):
    return {"X": _f32(rng.standard_normal((n, m)))}, {}


def make_fft_conv(rng, n, m):
    return {"x": _f32(rng.standard_normal(n)), "h": _f32(rng.standard_normal(m) / m)}, {}


def make_cg(rng, n, iters):
    # eigenvalues of M^T M / n + I lie in about [1, 5]: well conditioned, so float32 CG settles near the
    # float64 solution within the iterations
    M = rng.standard_normal((n, n))
    return {"A": _f32(M.T @ M / n + np.eye(n)), "b": _f32(rng.standard_normal(n))}, {"iters": iters}


def make_adam(rng, n, steps):
    return {"p": _f32(rng.standard_normal(n)), "target": _f32(rng.standard_normal(n))}, {"steps": steps, "lr": 1e-2}


@dataclass(frozen=True)
class Program:
    name: str
    run: Callable
    make: Callable  # make(rng, **sizes[size]) -> (host arrays, Python parameters)
    label: str  # formatted with the size's parameters
    sizes: dict  # size name -> keyword arguments of make
    tols: tuple  # per output: the allowed max |result - float64 result| / max |float64 result|


PROGRAMS = [
    Program("kmeans", kmeans, make_kmeans, "{n}x{d}, k={k}, {iters} iterations", {
        "tiny": dict(n=512, d=8, k=4, iters=2), "cpu": dict(n=20_000, d=16, k=8, iters=5),
        "gpu": dict(n=200_000, d=32, k=16, iters=5)}, (1e-4,)),
    Program("logreg", logreg, make_logreg, "{n}x{d}, {steps} steps", {
        "tiny": dict(n=512, d=16, steps=5), "cpu": dict(n=50_000, d=32, steps=20),
        "gpu": dict(n=200_000, d=64, steps=50)}, (1e-4,)),
    Program("attention", attention, make_attention, "{b}x{s}x{d}", {
        "tiny": dict(b=2, s=64, d=16), "cpu": dict(b=8, s=256, d=64), "gpu": dict(b=16, s=1024, d=64)}, (1e-4,)),
    Program("heat", heat, make_heat, "{n} points, {steps} steps", {
        "tiny": dict(n=1024, steps=20), "cpu": dict(n=65_536, steps=200), "gpu": dict(n=1 << 20, steps=200)}, (1e-5,)),
    Program("mlp", mlp, make_mlp, "{n}x{d}x{h}x{c}, one step", {
        "tiny": dict(n=256, d=32, h=32, c=10), "cpu": dict(n=2048, d=256, h=256, c=10),
        "gpu": dict(n=8192, d=1024, h=1024, c=10)}, (1e-4,) * 4),
    Program("sort_stats", sort_stats, make_sort_stats, "{n}x{m}", {
        "tiny": dict(n=1024, m=8), "cpu": dict(n=100_000, m=8), "gpu": dict(n=1 << 20, m=8)},
        # the sort selects float32 values, exactly; a float32 std over 1M rows is off by 2.4e-4 in NumPy itself
        (1e-6, 1e-3, 1e-5)),
    Program("fft_conv", fft_conv, make_fft_conv, "{n} by {m}", {
        "tiny": dict(n=4096 - 64, m=65), "cpu": dict(n=(1 << 18) - 1024, m=1025),
        "gpu": dict(n=(1 << 20) - 4096, m=4097)}, (1e-4,)),
    Program("cg", cg, make_cg, "n={n}, {iters} iterations", {
        "tiny": dict(n=64, iters=10), "cpu": dict(n=2048, iters=50), "gpu": dict(n=2048, iters=50)}, (1e-4,)),
    Program("adam", adam, make_adam, "{n} parameters, {steps} steps", {
        "tiny": dict(n=1000, steps=5), "cpu": dict(n=100_000, steps=50), "gpu": dict(n=1 << 22, steps=50)}, (1e-4,)),
]


# --- running them -------------------------------------------------------------------------------------

@dataclass
class Result:
    program: str
    backend: str
    times: list = field(default_factory=list)  # seconds per synchronised run
    peak_bytes: int | None = None
    memory_method: str = ""
    errs: list | None = None  # the check's normalised max error, per output
    tols: tuple = ()
    error: str | None = None  # what the backend raised, when it did
    memory_error: str | None = None  # what the peak-memory run raised (the times stand)

    @property
    def ok(self) -> bool:
        return (self.error is None and self.errs is not None and len(self.errs) == len(self.tols)
                and all(e <= t for e, t in zip(self.errs, self.tols)))

    def worst(self) -> tuple[float, float]:
        """(error, tolerance) of the output furthest over (or nearest to) its tolerance."""
        if not self.errs or len(self.errs) != len(self.tols):
            return math.inf, self.tols[0]
        return max(zip(self.errs, self.tols), key=lambda et: et[0] / et[1])

    @property
    def seconds(self) -> float | None:
        return statistics.median(self.times) if self.times else None


def check(outputs, reference) -> list[float]:
    """Per output, max |got - ref| / max |ref| of ``outputs`` (host arrays) against ``reference``: inf for a
    wrong shape or a non-finite value (a wrong count of outputs gives a list that fails the check)."""
    errs = []
    for got, ref in zip(outputs, reference):
        if got.shape != ref.shape or not np.all(np.isfinite(got)):
            errs.append(math.inf)
        elif ref.size:
            scale = max(float(np.max(np.abs(ref))), 1e-30)
            errs.append(float(np.max(np.abs(got.astype(np.float64) - ref))) / scale)
        else:
            errs.append(0.0)
    return errs if len(outputs) == len(reference) else errs + [math.inf]


def _reference(program: Program, host: dict, params: dict) -> tuple:
    wide = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in host.items()}
    return tuple(np.asarray(r) for r in program.run(numpy_namespace(), **wide, **params))


def _error_text(exc: BaseException) -> str:
    """One line for a table cell."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:120].replace("|", "/")


def _prepare(backend: Backend, program: Program, host: dict, params: dict, reference, result: Result):
    """The program bound to ``backend``'s copy of the data, after a first, checked run; None if it raised."""
    try:
        arrays = {k: backend.put(v) for k, v in host.items()}
        run = backend.xp.jit(program.run) if backend.jit else program.run

        def call():
            return run(backend.xp, **arrays, **params)

        result.errs = check([np.asarray(backend.get(o)) for o in call()], reference)
        if backend.jit:  # the first call captured; the timed calls replay: check a replay too
            replayed = check([np.asarray(backend.get(o)) for o in call()], reference)
            result.errs = [max(a, b) for a, b in zip(result.errs, replayed)] + result.errs[len(replayed):]
        return call
    except Exception as exc:  # reported in the table; the other backends go on
        result.error = _error_text(exc)
        return None


def run_program(program: Program, size: str, backends: list[Backend], *, repeat: int, warmup: int,
                memory: bool, settle: int = 1) -> list[Result]:
    rng = np.random.default_rng(list(p.name for p in PROGRAMS).index(program.name))
    host, params = program.make(rng, **program.sizes[size])
    results = {b.name: Result(program.name, b.name, tols=program.tols, memory_method=b.memory_method) for b in backends}
    try:
        reference = _reference(program, host, params)
    except Exception as exc:  # nothing to check against: every cell says why
        for r in results.values():
            r.error = "float64 reference: " + _error_text(exc)
        return list(results.values())
    calls = {b.name: _prepare(b, program, host, params, reference, results[b.name]) for b in backends}
    live = [b for b in backends if calls[b.name] is not None]
    for _ in range(warmup):
        for b in list(live):
            _guarded(lambda: runs(calls[b.name], b.sync, repeat=0, warmup=1), results[b.name], live, b)
    for _ in range(repeat):  # one run of every backend per round
        for b in list(live):
            _guarded(lambda: results[b.name].times.extend(runs(calls[b.name], b.sync, repeat=1, warmup=settle)),
                     results[b.name], live, b)
    if memory:
        for b in live:
            try:
                results[b.name].peak_bytes = b.peak(calls[b.name])
            except Exception as exc:
                results[b.name].memory_error = _error_text(exc)
    return [results[b.name] for b in backends]


def _guarded(step: Callable, result: Result, live: list, backend: Backend) -> None:
    """Run ``step``; if it raises, record the error and drop the backend from the rest of this program."""
    try:
        step()
    except Exception as exc:
        result.error = _error_text(exc)
        live.remove(backend)


# --- the report ---------------------------------------------------------------------------------------

def _cell(r: Result) -> str:
    if r.error is not None:
        return f"**ERROR** {r.error}"
    text = f"{r.seconds * 1e3:.2f} ms" if r.seconds is not None else "-"
    if r.peak_bytes is not None:
        text += f" · {format_bytes(r.peak_bytes)}"
    if r.memory_error is not None:
        text += f" · memory **ERROR** {r.memory_error}"
    if not r.ok:
        err, tol = r.worst()
        text = f"**FAIL** (error {err:.1e} > {tol:.0e}) {text}"
    return text


def format_bytes(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if abs(n) >= 2**20 else f"{n / 2**10:.0f} KiB"


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def times_table(results: dict, programs: list[Program], size: str, names: list[str]) -> list[str]:
    lines = [f"| program ({size} size) | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for p in programs:
        label = p.label.format(**p.sizes[size])
        lines.append(f"| {p.name}, {label} | " + " | ".join(_cell(results[p.name, n]) for n in names) + " |")
    return lines


def ratio_table(results: dict, programs: list[Program], peer: str, names: list[str]) -> list[str]:
    """Time (and peak memory) of each backend over ``peer``'s, per program and as a geometric mean over
    the programs where both ran and passed their check."""
    others = [n for n in names if n != peer]
    lines = [f"| / {peer}: time (memory) | " + " | ".join(others) + " |", "| --- |" + " ---: |" * len(others)]
    time_ratios: dict = {n: [] for n in others}
    mem_ratios: dict = {n: [] for n in others}
    for p in programs:
        base = results[p.name, peer]
        cells = []
        for n in others:
            r = results[p.name, n]
            if not (r.ok and base.ok and r.seconds and base.seconds):
                cells.append("ERROR" if r.error else "**FAIL**" if not r.ok else "-")
                continue
            t = r.seconds / base.seconds
            time_ratios[n].append(t)
            text = f"{t:.2f}"
            if r.peak_bytes and base.peak_bytes:
                mem_ratios[n].append(r.peak_bytes / base.peak_bytes)
                text += f" ({mem_ratios[n][-1]:.2f})"
            cells.append(text)
        lines.append(f"| {p.name} | " + " | ".join(cells) + " |")
    cells = []
    for n in others:
        t, m = _geomean(time_ratios[n]), _geomean(mem_ratios[n])
        text = "-" if t is None else f"**{t:.2f}**" + (f" ({m:.2f})" if m is not None else "")
        cells.append(text + f" [{len(time_ratios[n])}/{len(programs)}]")
    lines.append("| geometric mean [programs] | " + " | ".join(cells) + " |")
    return lines


def jit_table(results: dict, programs: list[Program], names: list[str]) -> list[str]:
    """Eager time over jit time (the jit's speed-up) of each numr backend that has a jit twin."""
    pairs = [(n, n + "+jit") for n in names if n + "+jit" in names]
    lines = ["| eager / jit | " + " | ".join(n for n, _ in pairs) + " |", "| --- |" + " ---: |" * len(pairs)]
    speedups: dict = {n: [] for n, _ in pairs}
    for p in programs:
        cells = []
        for n, j in pairs:
            e, r = results[p.name, n], results[p.name, j]
            if not (e.ok and r.ok and e.seconds and r.seconds):
                cells.append("ERROR" if e.error or r.error else "**FAIL**")
                continue
            speedups[n].append(e.seconds / r.seconds)
            cells.append(f"{speedups[n][-1]:.2f}x")
        lines.append(f"| {p.name} | " + " | ".join(cells) + " |")
    cells = []
    for n, _ in pairs:
        g = _geomean(speedups[n])
        cells.append(("-" if g is None else f"**{g:.2f}x**") + f" [{len(speedups[n])}/{len(programs)}]")
    lines.append("| geometric mean [programs] | " + " | ".join(cells) + " |")
    return lines


def with_jit(backends: list[Backend]) -> list[Backend]:
    """``backends`` with a jit twin after each numr backend."""
    out = []
    for b in backends:
        out.append(b)
        if b.name.startswith("numr:"):
            out.append(dataclasses.replace(b, name=b.name + "+jit", jit=True))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.workloads", description=__doc__.splitlines()[0])
    parser.add_argument("--backends", help="comma-separated backend specs (default: all of "
                        f"{','.join(DEFAULT_SPECS)}; at --size gpu, {','.join(GPU_SPECS)})")
    parser.add_argument("--size", choices=("tiny", "cpu", "gpu"), default="cpu")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per backend (median kept)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs after the checked first run")
    parser.add_argument("--settle", type=int, default=1, help="untimed runs of a backend before each of its "
                        "timed runs in a round (0: timed right after the previous backend's)")
    parser.add_argument("--programs", default="", help="comma-separated subset of: " + ",".join(p.name for p in PROGRAMS))
    parser.add_argument("--peers", default="", help="ratios against these (default: numpy, cupy, torch where run)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory run")
    parser.add_argument("--jit", action="store_true", help="also run each program under numr_array.jit on "
                        "every numr backend (columns numr:DEV+jit)")
    parser.add_argument("--json", help="write every result here")
    args = parser.parse_args(argv)

    wanted = [s for s in args.programs.split(",") if s]
    unknown = set(wanted) - {p.name for p in PROGRAMS}
    if unknown:
        parser.error(f"unknown programs: {', '.join(sorted(unknown))}")
    programs = [p for p in PROGRAMS if not wanted or p.name in wanted]
    specs = args.backends.split(",") if args.backends else GPU_SPECS if args.size == "gpu" else DEFAULT_SPECS
    backends, missing = load_all([s for s in specs if s])
    if args.jit:
        backends = with_jit(backends)
    names = [b.name for b in backends]
    peers = [s for s in args.peers.split(",") if s] or [n for n in PEERS if n in names]

    print(machine_line(backends))
    for spec, why in missing.items():
        print(f"not run: {spec} ({why})")
    print("memory: " + "; ".join(f"{b.name}: {b.memory_method}" for b in backends))
    results = {}
    for p in programs:
        for r in run_program(p, args.size, backends, repeat=args.repeat, warmup=args.warmup,
                             memory=not args.no_memory, settle=args.settle):
            results[p.name, r.backend] = r
        print(f"done: {p.name}", file=sys.stderr, flush=True)
    print()
    print("\n".join(times_table(results, programs, args.size, names)))
    for peer in peers:
        if peer in names and len(names) > 1:
            print()
            print("\n".join(ratio_table(results, programs, peer, names)))
    if args.jit:
        print()
        print("\n".join(jit_table(results, programs, names)))
    failed = [f"{r.program} on {r.backend}" for r in results.values() if not r.ok]
    if failed:
        print(f"\n**{len(failed)} FAILED** (error or check): " + ", ".join(failed))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_line(backends), "args": vars(args), "not_run": missing,
                       "results": [asdict(r) | {"ok": r.ok, "median_s": r.seconds} for r in results.values()]}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
