"""``python -m benchmarks.memory``: the whole-program memory peak of array-API-generic programs, numr_array
side by side with its peers, each program and library run in a process of its own.

A fresh process per (program, library) gives a clean peak. On the CPU the figure is the process's resident
set high-water mark (``VmHWM`` in /proc/self/status, which counts NumPy's buffers wherever they come from;
``tracemalloc`` and ``ru_maxrss`` of one process running both libraries could not tell them apart): the
whole program, from the interpreter's start, and the rise above the resident set just before the program
(its data already made; /proc/self/clear_refs restarts the high-water mark there). On a GPU the figure is
the device memory handed out to arrays at the peak: numr's ``memory_stats`` and, for numr and CuPy alike,
a hook on CuPy's memory pool (numr's CUDA memory comes from that pool, so the hook counts both the same
way); PyTorch's ``torch.cuda.max_memory_allocated``.

    python -m benchmarks.memory                      # CPU: numpy against numr:cpu
    python -m benchmarks.memory --device cuda:0      # GPU: numr:cuda:0 against cupy and torch
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Callable

import numpy as np

from benchmarks import workloads
from benchmarks._backends import cupy_pool_peak

#: the issue 19 program: k-means of 100k x 32 (k=16, 5 iterations), then 20 steps of logistic regression
ISSUE19 = {"kmeans": dict(n=100_000, d=32, k=16, iters=5), "logreg": dict(n=100_000, d=32, steps=20)}


def _issue19(size: str):
    """(data maker, program) of k-means then logistic regression, at the issue's size (``cpu``) or ten
    times the points (``gpu``)."""
    scale = 10 if size == "gpu" else 1

    def make(rng):
        km, kp = workloads.make_kmeans(rng, **{**ISSUE19["kmeans"], "n": ISSUE19["kmeans"]["n"] * scale})
        lg, lp = workloads.make_logreg(rng, **{**ISSUE19["logreg"], "n": ISSUE19["logreg"]["n"] * scale})
        return {**km, "Xl": lg["X"], "y": lg["y"], "w0": lg["w0"]}, {**kp, "steps": lp["steps"], "lr": lp["lr"]}

    def run(xp, X, C0, ids, Xl, y, w0, *, iters, steps, lr):
        C, = workloads.kmeans(xp, X, C0, ids, iters=iters)
        w, = workloads.logreg(xp, Xl, y, w0, steps=steps, lr=lr)
        return C, w

    return make, run


def programs(size: str) -> dict[str, tuple[Callable, Callable]]:
    """name -> (make(rng) -> (host arrays, params), run(xp, **arrays, **params))."""
    progs = {"kmeans+logreg (issue 19)": _issue19(size)}
    for p in workloads.PROGRAMS:
        progs[p.name] = (lambda rng, p=p: p.make(rng, **p.sizes[size]), p.run)
    return progs


def _status(key: str) -> int:
    """A /proc/self/status figure in bytes (VmHWM, VmRSS)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {key}")


def child(spec: str, name: str, size: str) -> dict:
    """Run program ``name`` once on backend ``spec`` in this process; its peaks (see the module docstring)."""
    from benchmarks._backends import load

    make, run = programs(size)[name]
    backend = load(spec)
    host, params = make(np.random.default_rng(0))
    arrays = {k: backend.put(v) for k, v in host.items()}
    backend.sync()
    del host
    out = {"spec": spec, "program": name}
    if not backend.gpu:
        rss = _status("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:  # restart VmHWM from the resident set now
            f.write("5")
        run(backend.xp, **arrays, **params)
        out.update(rss_before=rss, rss_peak=_status("VmHWM"))
        return out
    peaks = {}
    if spec.startswith("numr:cuda") or spec == "cupy":
        peaks["cupy pool hook"] = cupy_pool_peak(lambda: (run(backend.xp, **arrays, **params), backend.sync()))
    if spec.startswith("numr:"):
        import numr_array as xp
        xp.reset_peak_memory_stats(backend.device)
        base = xp.memory_stats(backend.device)["bytes_in_use"]
        run(backend.xp, **arrays, **params)
        backend.sync()
        peaks["numr memory_stats"] = xp.memory_stats(backend.device)["peak_bytes_in_use"] - base
    if spec == "torch":
        import torch
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        run(backend.xp, **arrays, **params)
        torch.cuda.synchronize()
        peaks["torch max_memory_allocated"] = torch.cuda.max_memory_allocated() - base
    out["device_peaks"] = peaks
    return out


def measure(spec: str, name: str, size: str) -> dict:
    """``child`` in a fresh interpreter; {"error": ...} when it fails."""
    cmd = [sys.executable, "-m", "benchmarks.memory", "--child", spec, name, size]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path[1:]))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return {"spec": spec, "program": name, "error": (proc.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu (numr against numpy) or cuda:0 (against cupy, torch)")
    parser.add_argument("--size", choices=("tiny", "cpu", "gpu"), help="workloads size (default: cpu, gpu on a GPU)")
    parser.add_argument("--programs", default="", help="comma-separated subset (default: all)")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--child", nargs=3, metavar=("SPEC", "PROGRAM", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    gpu = args.device != "cpu"
    size = args.size or ("gpu" if gpu else "cpu")
    names = [n for n in programs(size) if not args.programs or n in args.programs.split(",")]
    specs = [f"numr:{args.device}", "cupy", "torch"] if gpu else ["numpy", "numr:cpu"]
    from benchmarks._backends import machine_line
    print(machine_line([]), f"; size {size}; numr elision:", _elision_line())
    results = []
    for name in names:
        row = {spec: measure(spec, name, size) for spec in specs}
        results.extend(row.values())
        print(_row(name, row, specs, gpu), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine_line([]), "size": size, "results": results}, f, indent=1)
    return 1 if any("error" in r for r in results) else 0


def _elision_line() -> str:
    from numr_array import _launch
    return f"on (operands from {_launch.ELIDE_MIN_BYTES} bytes)" if _launch.ELIDE else "off"


def _row(name: str, row: dict, specs: list[str], gpu: bool) -> str:
    errors = [f"{s}: {r['error']}" for s, r in row.items() if "error" in r]
    if errors:
        return f"{name}: ERROR " + "; ".join(errors)
    if not gpu:
        np_, nr = row["numpy"], row["numr:cpu"]
        return (f"{name}: RSS peak numpy {_mib(np_['rss_peak'])}, numr {_mib(nr['rss_peak'])} "
                f"(ratio {nr['rss_peak'] / np_['rss_peak']:.2f}); above the start numpy "
                f"{_mib(np_['rss_peak'] - np_['rss_before'])}, numr {_mib(nr['rss_peak'] - nr['rss_before'])} "
                f"(ratio {(nr['rss_peak'] - nr['rss_before']) / max(np_['rss_peak'] - np_['rss_before'], 1):.2f})")
    numr = row[specs[0]]["device_peaks"]
    cupy = row["cupy"]["device_peaks"]["cupy pool hook"]
    torch = row["torch"]["device_peaks"]["torch max_memory_allocated"]
    hook = numr["cupy pool hook"]
    return (f"{name}: device peak numr {_mib(hook)} (pool hook; memory_stats {_mib(numr['numr memory_stats'])}), "
            f"cupy {_mib(cupy)}, torch {_mib(torch)}; numr/cupy {hook / max(cupy, 1):.2f} (pool hook, both), "
            f"numr/torch {numr['numr memory_stats'] / max(torch, 1):.2f}")


if __name__ == "__main__":
    sys.exit(main())
