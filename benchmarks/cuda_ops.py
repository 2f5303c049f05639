"""``python -m benchmarks.cuda_ops``: the single ops behind the GPU programs of benchmarks/workloads.py (issue 15's
table: transposed matrix times vector, arg-reductions and reductions along an axis, concat, where, ...), on
numr cuda:0, CuPy and PyTorch (both through array_api_compat) side by side in one process. Each call is
synchronised, as in the issue; a figure is the median over interleaved batches, in µs per op.

    python -m benchmarks.cuda_ops [--backends numr:cuda:0,cupy,torch] [--only argmin,concat]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from benchmarks._backends import Backend, load_all, machine_line
from benchmarks._timing import side_by_side


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _setup(b: Backend, rng, name: str):
    """The call measured for op ``name`` on backend ``b`` (its data made here, outside the timing)."""
    xp = b.xp
    if name in ("X.T @ v", "X @ w"):
        X, v, w = b.put(_f32(rng, 200_000, 64)), b.put(_f32(rng, 200_000)), b.put(_f32(rng, 64))
        return (lambda: X.T @ v) if name == "X.T @ v" else (lambda: X @ w)
    if name == "argmin(D, axis=1)":
        D = b.put(_f32(rng, 200_000, 16))
        return lambda: xp.argmin(D, axis=1)
    if name == "concat of three slices of 1M":
        u = b.put(_f32(rng, 1 << 20))
        return lambda: xp.concat([u[:1], u[1:-1], u[-1:]])
    if name == "exp(-v), 200k":
        v = b.put(_f32(rng, 200_000))
        return lambda: xp.exp(-v)
    if name == "where(H > 0, H, 0.01 * H)":
        H = b.put(_f32(rng, 8192, 1024))
        return lambda: xp.where(H > 0, H, 0.01 * H)
    if name == "H @ W, 8192x1024x1024":
        H, W = b.put(_f32(rng, 8192, 1024)), b.put(_f32(rng, 1024, 1024))
        return lambda: H @ W
    if name == "A.T @ G, 8192x1024 by 8192x10":
        A, G = b.put(_f32(rng, 8192, 1024)), b.put(_f32(rng, 8192, 10))
        return lambda: A.T @ G
    if name == "max(S, axis=-1, keepdims), 16x1024x1024":
        S = b.put(_f32(rng, 16, 1024, 1024))
        return lambda: xp.max(S, axis=-1, keepdims=True)
    if name == "sum(X, axis=0), 200k x 16":
        X = b.put(_f32(rng, 200_000, 16))
        return lambda: xp.sum(X, axis=0)
    if name == "mean(X, axis=0), 200k x 16":
        X = b.put(_f32(rng, 200_000, 16))
        return lambda: xp.mean(X, axis=0)
    if name == "argmax(D, axis=0), 200k x 16":
        D = b.put(_f32(rng, 200_000, 16))
        return lambda: xp.argmax(D, axis=0)
    if name == "std(X, axis=0), 1M x 8":
        X = b.put(_f32(rng, 1 << 20, 8))
        return lambda: xp.std(X, axis=0)
    if name == "sort(X, axis=0), 1M x 8":
        X = b.put(_f32(rng, 1 << 20, 8))
        return lambda: xp.sort(X, axis=0)
    if name == "sum of 8 float32":
        x = b.put(_f32(rng, 8))
        return lambda: xp.sum(x)
    raise KeyError(name)


OPS = ["X.T @ v", "X @ w", "argmin(D, axis=1)", "concat of three slices of 1M", "exp(-v), 200k",
       "where(H > 0, H, 0.01 * H)", "H @ W, 8192x1024x1024", "A.T @ G, 8192x1024 by 8192x10",
       "max(S, axis=-1, keepdims), 16x1024x1024", "sum(X, axis=0), 200k x 16", "mean(X, axis=0), 200k x 16",
       "argmax(D, axis=0), 200k x 16", "std(X, axis=0), 1M x 8",
       "sort(X, axis=0), 1M x 8", "sum of 8 float32"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_ops", description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="numr:cuda:0,cupy,torch")
    parser.add_argument("--only", default="", help="comma-separated substrings of the op names to run")
    parser.add_argument("--repeat", type=int, default=9, help="batches per backend (median kept)")
    parser.add_argument("--min-time", type=float, default=0.03, help="seconds per batch")
    args = parser.parse_args(argv)
    backends, missing = load_all([s for s in args.backends.split(",") if s])
    print(machine_line(backends))
    for spec, why in missing.items():
        print(f"not run: {spec} ({why})")
    names = [b.name for b in backends]
    numr = next((n for n in names if n.startswith("numr:")), None)
    peers = [n for n in names if n in ("cupy", "torch")]
    head = names + [f"{numr} / {p}" for p in peers if numr]
    print("\n| op (µs, synchronised) | " + " | ".join(head) + " |\n| --- |" + " ---: |" * len(head))
    wanted = [s for s in args.only.split(",") if s]
    for op in OPS:
        if wanted and not any(w in op for w in wanted):
            continue
        fns, cells = {}, {}
        for b in backends:
            try:
                call = _setup(b, np.random.default_rng(0), op)
                fns[b.name] = (lambda call, sync: lambda: (call(), sync()))(call, b.sync)
                fns[b.name]()
            except Exception as exc:  # reported in the row; the others go on
                fns.pop(b.name, None)
                cells[b.name] = f"ERROR {type(exc).__name__}: {exc}".splitlines()[0][:80].replace("|", "/")
        cells.update(side_by_side(fns, min_time=args.min_time, repeat=args.repeat, reduce=statistics.median))
        row = [c if isinstance(c, str) else f"{c * 1e6:.1f}" for c in (cells[n] for n in names)]
        if numr:
            row += [f"{cells[numr] / cells[p]:.2f}x" if all(isinstance(cells.get(k), float) for k in (numr, p))
                    else "-" for p in peers]
        print(f"| {op} | " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
