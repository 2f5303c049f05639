"""``python -m benchmarks.webgpu_dispatch_profile``: where a captured program's GPU time goes on WebGPU.

A program of ``benchmarks/workloads.py`` is captured once on a WebGPU device; each of its graph's dispatches
is then replayed in a compute pass of its own whose beginning and end write GPU timestamps, so each dispatch's
time is the GPU's, without the host's submission and synchronisation that timing a dispatch alone from the
host adds (about 12 µs on an H200). Per kind of kernel (the pipeline's cache key): the dispatches, the median
of their per-round sums, and that per dispatch; then the sum over all kinds beside the whole graph replayed
as the jit replays it (one pass, host-timed), whose difference is what separate passes and the host add.

The device is asked for the ``timestamp-query`` feature (this script only: numr_array does not take it);
an adapter without it cannot run this script. Timestamps are read as nanoseconds (the timestamp period of
NVIDIA's and Mesa's Vulkan drivers).

    python -m benchmarks.webgpu_dispatch_profile --program logreg --size gpu --rounds 9
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def kind_of(client, pipe) -> str:
    """A short name for a pipeline: its cache key's leading words (a fused kernel's source left out)."""
    for key, p in client._pipelines.items():
        if p is pipe:
            parts = [str(k) for k in key[:3] if not (isinstance(k, str) and "\n" in k)]
            return " ".join(parts)[:60]
    return "?"


def profile(client, steps: list, rounds: int) -> list[list[float]]:
    """Per round, each step's GPU time in µs (its own compute pass between two timestamps)."""
    import wgpu
    dev = client.wdevice
    n = len(steps)
    qs = dev.create_query_set(type="timestamp", count=2 * n)
    resolved = dev.create_buffer(size=16 * n, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
    out = []
    client.synchronize()
    for _ in range(rounds):
        enc = dev.create_command_encoder()
        for i, (pipe, bg, off, grid) in enumerate(steps):
            p = enc.begin_compute_pass(timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 2 * i,
                                                         "end_of_pass_write_index": 2 * i + 1})
            p.set_pipeline(pipe.pipeline)
            p.set_bind_group(0, bg, [off])
            p.dispatch_workgroups(*grid)
            p.end()
        enc.resolve_query_set(qs, 0, 2 * n, resolved, 0)
        dev.queue.submit([enc.finish()])
        ticks = np.frombuffer(dev.queue.read_buffer(resolved), np.uint64).astype(np.int64)
        out.append(list((ticks[1::2] - ticks[0::2]) / 1e3))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", default="logreg")
    ap.add_argument("--size", default="gpu", choices=("tiny", "cpu", "gpu"))
    ap.add_argument("--device", default="webgpu:0")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args(argv)

    from numr_array.backends import webgpu
    webgpu.WANTED_FEATURES = tuple(webgpu.WANTED_FEATURES) + ("timestamp-query",)
    import numr_array as xp
    from benchmarks import workloads as W

    prog = {p.name: p for p in W.PROGRAMS}[args.program]
    arrays, kw = prog.make(np.random.default_rng(0), **prog.sizes[args.size])
    ts = {k: xp.asarray(v, device=args.device) for k, v in arrays.items()}
    client = xp._device.parse_device(args.device).client
    if "timestamp-query" not in client.features:
        raise SystemExit(f"{args.device}: the adapter does not offer timestamp-query")
    with xp.capture(device=args.device) as g:
        prog.run(xp, **ts, **kw)
    steps = g._graph.steps
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 2.0:  # the GPU's clocks up first
        g.replay()
        client.synchronize()
    whole = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        g.replay()
        client.synchronize()
        whole.append((time.perf_counter() - t0) * 1e6)
    per = profile(client, steps, args.rounds)
    kinds: dict[str, list[int]] = {}
    for i, (pipe, *_rest) in enumerate(steps):
        kinds.setdefault(kind_of(client, pipe), []).append(i)
    print(f"{args.program} ({args.size}) on {args.device} ({client.adapter.info.get('device', '?')}): "
          f"{len(steps)} dispatches, {args.rounds} rounds")
    total = statistics.median(sum(r) for r in per)
    rows = []
    for name, idx in kinds.items():
        s = statistics.median(sum(r[i] for i in idx) for r in per)
        rows.append((s, name, len(idx)))
    for s, name, k in sorted(rows, reverse=True):
        print(f"  {s:9.1f} µs  {100 * s / total:5.1f}%  {k:4d} x {s / k:8.2f} µs  {name}")
    print(f"  sum of the dispatches' GPU times {total:.1f} µs; the graph replayed whole {statistics.median(whole):.1f}"
          f" µs (median, host-timed with its synchronisation; min {min(whole):.1f})")


if __name__ == "__main__":
    main()
