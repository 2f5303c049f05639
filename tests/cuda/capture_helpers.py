"""What the CUDA fusion tests share (imported once a test module has found a GPU): arrays on cuda:0 and their
bytes, the fused kernels a capture launches, and a replay's check against eager."""

from collections.abc import Callable

import numpy as np

import numr_array as xp

from ..strategies import to_np

DEV = "cuda:0"
client = xp._device.parse_device(DEV).client


def on(a):
    return xp.asarray(a, device=DEV)


def bits(t) -> np.ndarray:
    return np.ascontiguousarray(to_np(t)).view(np.uint8)


def record_runs(monkeypatch, describe: Callable) -> list:
    """``describe(run)`` of each fused kernel launched (each launch of a FusedRun, eager or in a capture)."""
    seen = []
    launch_run = client._direct.launch_run
    monkeypatch.setattr(client._direct, "launch_run",
                        lambda run, dead=frozenset(): (seen.append(describe(run)), launch_run(run, dead)))
    return seen


def replay_equals_eager(block, arrays, runs: list, expect: Callable[[list], bool]) -> None:
    """Capture ``block(*tensors)``, check ``expect(runs)`` (the fused kernels it became) and that its results are
    eager's bits, then set new data (the arrays reversed) and check that a replay gives eager's bits."""
    tensors = [on(a) for a in arrays]
    eager = [bits(r) for r in block(*tensors)]
    runs.clear()
    with xp.capture(device=DEV) as g:
        results = block(*tensors)
    assert expect(runs), runs
    for r, e in zip(results, eager):
        np.testing.assert_array_equal(bits(r), e)
    for t, a in zip(tensors, arrays):
        t[...] = on(np.ascontiguousarray(a[::-1]))
    g.replay()
    want = [bits(r) for r in block(*tensors)]
    for r, e in zip(results, want):
        np.testing.assert_array_equal(bits(r), e)
