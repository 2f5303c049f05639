"""Arena reuse on CUDA: CuPy's temporaries and numr's tensors that die inside a capture give their memory
back to the graph's arena; a FusedRun whose steps write memory an earlier step read still replays as
eager execution runs; memory_stats/empty_cache see CuPy's pool."""

import gc

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)


DEV = "cuda:0"
dev = xp._device.parse_device(DEV)
client = dev.client


def on(a):
    return xp.asarray(a, device=DEV)


def test_cupy_temporaries_are_reused(requested):
    n = (1 << 20) + 1
    rng = np.random.default_rng(0)
    a, a2 = (rng.standard_normal(n) for _ in range(2))
    lo, hi = on(np.float64(-1.0)), on(np.float64(1.0))

    def run(x):
        t = x
        for _ in range(10):
            # clip with array bounds (broadcast: not a fused step) computes through CuPy temporaries
            t = xp.clip(xp.sin(t) * 3.0, lo, hi)
        return t

    x = on(a)
    with xp.capture(device=DEV) as g:
        r = run(x)
    live = 4 * n * 8  # t, the product, clip's result and its temporary
    assert g.arena_bytes <= 2 * live and g.arena_bytes < sum(requested) // 4
    x[...] = on(a2)
    g.replay()
    assert to_np(r).tobytes() == to_np(run(on(a2))).tobytes()


def test_fused_run_writing_memory_an_earlier_step_read(requested):
    """Small contiguous binary ops become one FusedRun; with reuse, a later step's output is the memory
    an earlier step read (same address, same extent): per element, the steps still run in order."""
    rng = np.random.default_rng(1)
    a, b, a2 = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))

    def run(x, y):
        t = x * 1.0
        for _ in range(20):
            t = t * 2.0
            t = t - y
            t = (t + x) * 0.25
        return t

    x, y = on(a), on(b)
    with xp.capture(device=DEV) as g:
        r = run(x, y)
    assert g.arena_bytes <= 3 * 4000 < sum(requested)
    x[...] = on(a2)
    g.replay()
    assert to_np(r).tobytes() == to_np(run(on(a2), y)).tobytes()


def test_memory_stats_and_empty_cache_see_cupys_pool():
    t = xp.empty((32 << 20,), dtype=xp.uint8, device=DEV)
    del t
    gc.collect()
    with client.on_device():
        assert xp.memory_stats(DEV)["pooled_bytes"] == client.pool.free_bytes() >= 32 << 20
    xp.empty_cache(DEV)
    with client.on_device():
        assert client.pool.free_bytes() == 0
    assert xp.memory_stats(DEV)["pooled_bytes"] == 0


def test_release_threshold_is_the_environment_knob():
    from numr_array.backends.cuda._client import release_threshold_bytes
    assert client.release_threshold == release_threshold_bytes()  # read when the client was made
