"""``python -m benchmarks.replay_cost``: what one replay of a captured iterative program costs the host.

For each iterative program of ``benchmarks/workloads.py`` (kmeans, logreg, heat, cg, adam) at a small size,
so that the device's own work is small beside the host's, on each device given:

* ``launches``: the launches the capture recorded (one per kernel dispatch, before fusion);
* ``dispatches``: the dispatches (steps) one replay runs, after fusion;
* ``replay``: host CPU time (``time.thread_time``) of one ``g.replay()`` in a batch of replays followed by
  one synchronisation, and per dispatch;
* ``jit``: host CPU time of one call of the program under ``numr_array.jit`` (inputs copied in, replay,
  outputs copied out);
* ``eager``: host CPU time of one eager call of the program (one synchronisation per batch);
* ``eager/jit``: the jit's speed-up in host time, and ``wall eager/jit`` the same in wall time.

Every replay is checked against eager, bit for bit, before timing (``PASS``/``FAIL`` per line). Figures are
medians of interleaved batches (benchmarks/_timing.py); no figure is asserted.

    python3 -m benchmarks.replay_cost --device webgpu:0 --device cpu
    python3 -m benchmarks.replay_cost --device webgpu:0 --size gpu   # the workloads' gpu sizes
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import numr_array as xp
from benchmarks._backends import load_all, machine_line
from benchmarks._timing import side_by_side
from benchmarks import workloads

ITERATIVE = ("kmeans", "logreg", "heat", "cg", "adam")
#: small sizes: the device's work is negligible beside the host's on a software adapter
SMALL = {
    "kmeans": dict(n=512, d=8, k=4, iters=5),
    "logreg": dict(n=512, d=16, steps=20),
    "heat": dict(n=1024, steps=50),
    "cg": dict(n=64, iters=20),
    "adam": dict(n=1000, steps=20),
}


def _host(x) -> np.ndarray:
    return np.asarray(x.to_device("cpu"))


def _graph_of(fn: xp.JitFunction):
    (entry,) = fn._cache.values()
    return entry.graph


def _steps(graph) -> int | None:
    """The dispatches a replay of ``graph`` runs: its recorded steps (WebGPU, CPU); None for a CUDA graph, whose
    kernel nodes are the driver's."""
    steps = getattr(graph._graph, "steps", None)
    return None if steps is None else len(steps)


def measure(name: str, device: str, size: str, min_time: float, repeat: int) -> dict:
    program = next(p for p in workloads.PROGRAMS if p.name == name)
    params = SMALL[name] if size == "small" else program.sizes[size]
    host, kw = program.make(np.random.default_rng(0), **params)
    arrays = {k: xp.asarray(v, device=device) for k, v in host.items()}

    def eager():
        return program.run(xp, **arrays, **kw)

    jitted = xp.jit(program.run)
    expect = [_host(o) for o in eager()]
    first = [_host(o) for o in jitted(xp, **arrays, **kw)]
    again = [_host(o) for o in jitted(xp, **arrays, **kw)]
    same = all(np.array_equal(a, b) and np.array_equal(a, c) for a, b, c in zip(expect, first, again))
    g = _graph_of(jitted)
    client = g._client
    dispatches = _steps(g)
    launches = dispatches
    if hasattr(client, "fusion") and dispatches is not None:  # captured without fusion: the launches it records
        plain = xp.jit(program.run)
        client.fusion = False
        try:
            plain(xp, **arrays, **kw)
        finally:
            client.fusion = True
        launches = _steps(_graph_of(plain))
    sync = client.synchronize
    fns = {"replay": g.replay, "jit": lambda: jitted(xp, **arrays, **kw), "eager": eager}
    syncs = {k: sync for k in fns}
    host = side_by_side(fns, min_time=min_time, repeat=repeat, syncs=syncs,
                        clocks={k: time.thread_time for k in fns})
    wall = side_by_side({"jit": fns["jit"], "eager": eager}, min_time=min_time, repeat=max(3, repeat // 2),
                        syncs=syncs)
    return dict(program=name, device=device, launches=launches, dispatches=dispatches, ok=same,
                replay_us=host["replay"] * 1e6,
                per_dispatch_us=None if dispatches is None else host["replay"] * 1e6 / max(dispatches, 1),
                jit_us=host["jit"] * 1e6, eager_us=host["eager"] * 1e6,
                speedup=host["eager"] / host["jit"], wall_speedup=wall["eager"] / wall["jit"],
                wall_jit_us=wall["jit"] * 1e6, wall_eager_us=wall["eager"] * 1e6)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", action="append", help="numr device (repeatable); default webgpu:0 and cpu")
    parser.add_argument("--size", default="small", choices=["small", "tiny", "cpu", "gpu"])
    parser.add_argument("--programs", default=",".join(ITERATIVE))
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per timed batch")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    devices = args.device or ["webgpu:0", "cpu"]
    backends, _missing = load_all([f"numr:{d}" for d in devices])
    print(machine_line(backends))
    print(f"# replay cost, size {args.size}; host times are CPU time of the calling thread (time.thread_time)")
    print("| program | device | launches | dispatches | replay µs | µs/dispatch | jit µs | eager µs "
          "| eager/jit (host) | eager/jit (wall) | replay == eager |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    failed = False
    for device in devices:
        for name in args.programs.split(","):
            try:
                r = measure(name, device, args.size, args.min_time, args.repeat)
            except Exception as exc:  # reported, and the others go on
                failed = True
                print(f"| {name} | {device} | error: {type(exc).__name__}: {str(exc).splitlines()[0][:100]} |")
                continue
            failed |= not r["ok"]
            per = "-" if r["per_dispatch_us"] is None else f"{r['per_dispatch_us']:.2f}"
            print(f"| {name} | {device} | {r['launches'] or '-'} | {r['dispatches'] or '-'} | {r['replay_us']:.0f} "
                  f"| {per} | {r['jit_us']:.0f} | {r['eager_us']:.0f} | {r['speedup']:.1f}x "
                  f"| {r['wall_speedup']:.1f}x | {'PASS' if r['ok'] else 'FAIL'} |", flush=True)
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
