"""``python3 -m benchmarks.fused_reduction``: a captured reduction fused with the element-wise launches that
produce its operand (backends/webgpu/_fuse_reduce.py), checked and timed on one WebGPU device in seconds.

At a size of ``benchmarks/workloads.py``'s k-means (``gpu``: X 200000x32, C 16x32 float32, whose broadcast
difference is 410 MB):

* the distances ``sum((X[:, None, :] - C[None]) ** 2, axis=-1)`` captured with and without the reduction
  fusion: dispatches per replay, replay == eager bit for bit on new data in X and C, and the synchronised
  wall time of eager, of the unfused replay and of the fused one (median of 5);
* the k-means program (5 iterations) under ``numr_array.jit`` against eager: its output bit for bit, the
  dispatches per replay, and the wall times (median of 5).

Prints the adapter and its largest storage binding (a producer beyond it is split into several launches,
which are not fused), one line per figure, then PASS or FAIL. No figure is asserted.

    python3 -m benchmarks.fused_reduction --size gpu
    python3 -m benchmarks.fused_reduction --size tiny   # lavapipe: the code path in seconds
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

import numr_array as xp
from benchmarks import workloads
from benchmarks._timing import runs


def _bits(t) -> bytes:
    return np.ascontiguousarray(np.asarray(t.to_device("cpu"))).tobytes()


def _median(fn, sync, n: int = 5) -> float:
    """Median seconds of ``n`` synchronised calls after one untimed one."""
    return statistics.median(runs(fn, sync, repeat=n, warmup=1))


def _distances(X, C):
    return xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="webgpu:0")
    parser.add_argument("--size", default="gpu", choices=["tiny", "cpu", "gpu"])
    args = parser.parse_args(argv)
    from numr_array.backends.webgpu import _fuse_reduce

    program = next(p for p in workloads.PROGRAMS if p.name == "kmeans")
    sizes = program.sizes[args.size]
    host, params = program.make(np.random.default_rng(0), **sizes)
    arrays = {k: xp.asarray(v, device=args.device) for k, v in host.items()}
    X, C = arrays["X"], arrays["C0"]
    ok = True

    def check(name: str, good: bool) -> None:
        nonlocal ok
        ok &= good
        print(f"{name}: {'PASS' if good else 'FAIL'}", flush=True)

    graphs = {}
    plan = _fuse_reduce.plan
    for fused in (True, False):
        if not fused:
            _fuse_reduce.plan = lambda *a: None
        try:
            with xp.capture(device=args.device) as g:
                r = _distances(X, C)
        finally:
            _fuse_reduce.plan = plan
        graphs[fused] = (g, r)
    client = graphs[True][0]._client
    info = client.adapter.info
    print(f"device: {args.device}: {info.get('device', '?')} ({info.get('backend_type', '?')}), largest storage "
          f"binding {client.max_binding} bytes")
    print(f"k-means distances, X {tuple(X.shape)}, C {tuple(C.shape)}: dispatches per replay "
          f"{len(graphs[True][0]._graph.steps)} fused, {len(graphs[False][0]._graph.steps)} not")
    rng = np.random.default_rng(1)
    X[...] = xp.asarray(rng.standard_normal(X.shape).astype(np.float32), device=args.device)
    C[...] = xp.asarray(rng.standard_normal(C.shape).astype(np.float32), device=args.device)
    want = _bits(_distances(X, C))
    for fused, (g, r) in graphs.items():
        g.replay()
        check(f"distances replay ({'fused' if fused else 'not fused'}) == eager, bit for bit", _bits(r) == want)
    sync = client.synchronize
    t_eager = _median(lambda: _distances(X, C), sync)
    t_plain = _median(graphs[False][0].replay, sync)
    t_fused = _median(graphs[True][0].replay, sync)
    print(f"distances: eager {t_eager * 1e3:.3f} ms, replay {t_plain * 1e3:.3f} ms unfused, "
          f"{t_fused * 1e3:.3f} ms fused; eager/fused {t_eager / t_fused:.1f}x, unfused/fused {t_plain / t_fused:.1f}x")
    del graphs

    arrays = {k: xp.asarray(v, device=args.device) for k, v in host.items()}
    jitted = xp.jit(program.run)
    first = jitted(xp, **arrays, **params)
    eager = program.run(xp, **arrays, **params)
    again = jitted(xp, **arrays, **params)
    check("k-means under the jit == eager, bit for bit",
          all(_bits(a) == _bits(b) == _bits(c) for a, b, c in zip(first, eager, again)))
    (entry,) = jitted._cache.values()
    t_eager = _median(lambda: program.run(xp, **arrays, **params), sync)
    t_jit = _median(lambda: jitted(xp, **arrays, **params), sync)
    print(f"k-means ({program.label.format(**sizes)}): {len(entry.graph._graph.steps)} dispatches per replay; "
          f"eager {t_eager * 1e3:.2f} ms, jit {t_jit * 1e3:.2f} ms, eager/jit {t_eager / t_jit:.2f}x")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
