"""memory_stats, reset_peak_memory_stats and empty_cache on the device under test."""

import gc

import numpy as np
import pytest

import numr_array as xp
from numr_array._device import parse_device

from .strategies import DEVICE

dev = parse_device(DEVICE)
KEYS = {"bytes_in_use", "peak_bytes_in_use", "pooled_bytes", "allocations"}


def test_stats_count_live_arrays_and_the_peak():
    xp.asarray(np.zeros(1, np.float32), device=DEVICE)  # (the device is started)
    gc.collect()
    base = xp.memory_stats(DEVICE)
    assert set(base) == KEYS and all(type(v) is int and v >= 0 for v in base.values())
    xp.reset_peak_memory_stats(DEVICE)
    assert xp.memory_stats(DEVICE)["peak_bytes_in_use"] == base["bytes_in_use"]
    a = xp.zeros((1000,), dtype=xp.float32, device=DEVICE)
    b = xp.zeros((3000,), dtype=xp.float32, device=DEVICE)
    s = xp.memory_stats(DEVICE)
    assert s["bytes_in_use"] >= base["bytes_in_use"] + 16000
    assert s["allocations"] == base["allocations"] + 2
    del a, b
    gc.collect()
    after = xp.memory_stats(DEVICE)
    assert after["bytes_in_use"] == base["bytes_in_use"] and after["allocations"] == base["allocations"]
    assert after["peak_bytes_in_use"] >= base["bytes_in_use"] + 16000  # the peak remembers them
    xp.reset_peak_memory_stats(DEVICE)
    assert xp.memory_stats(DEVICE)["peak_bytes_in_use"] == after["bytes_in_use"]


def test_device_defaults_to_the_default_device():
    default = xp.__array_namespace_info__().default_device()
    assert set(xp.memory_stats()) == KEYS
    assert xp.memory_stats()["bytes_in_use"] == xp.memory_stats(default)["bytes_in_use"]


def test_empty_cache_gives_pooled_memory_back():
    """The freed buffer is cached, and empty_cache gives back all the pool can: on CUDA, CuPy's pool keeps the
    free parts of blocks a live array still holds part of (``floor``: what earlier tests left alive, the same
    before and after; the buffer may come from such a part and go back to it)."""
    gc.collect()
    xp.empty_cache(DEVICE)
    floor = xp.memory_stats(DEVICE)["pooled_bytes"]
    if dev.kind == "webgpu":
        assert floor == 0
    x = xp.ones((1 << 16,), dtype=xp.float32, device=DEVICE)
    held = xp.memory_stats(DEVICE)["pooled_bytes"]
    del x
    gc.collect()
    pooled = xp.memory_stats(DEVICE)["pooled_bytes"]
    if dev.kind == "cpu":
        assert pooled == 0  # NumPy gives host memory back as it goes: nothing is pooled
    else:
        assert pooled >= held + (1 << 18)  # the freed buffer is cached for reuse
    in_use = xp.memory_stats(DEVICE)["bytes_in_use"]
    assert xp.empty_cache(DEVICE) is None
    s = xp.memory_stats(DEVICE)
    assert s["pooled_bytes"] == floor and s["bytes_in_use"] == in_use
    y = xp.full((1 << 16,), 2.0, dtype=xp.float32, device=DEVICE)  # the device still allocates
    assert float(xp.sum(y)) == 2.0 * (1 << 16)


def test_empty_cache_inside_a_capture_raises_capture_error():
    x = xp.ones((8,), device=DEVICE)
    with pytest.raises(xp.CaptureError, match="empty_cache"):
        with xp.capture(device=DEVICE):
            x * 2.0
            xp.empty_cache(DEVICE)
    assert float(xp.sum(x * 2.0)) == 16.0  # the aborted capture left the device usable


def test_bad_device_is_a_value_error():
    for f in (xp.memory_stats, xp.reset_peak_memory_stats, xp.empty_cache):
        with pytest.raises(ValueError, match=f.__name__):
            f("tpu:0")


def test_a_capture_arena_counts_as_in_use_until_its_graph_goes():
    x = xp.ones((1 << 12,), dtype=xp.float32, device=DEVICE)
    gc.collect()
    before = xp.memory_stats(DEVICE)["bytes_in_use"]
    with xp.capture(device=DEVICE) as g:
        t = x * 2.0
        del t
    assert xp.memory_stats(DEVICE)["bytes_in_use"] >= before + g.arena_bytes > before
    del g
    gc.collect()
    assert xp.memory_stats(DEVICE)["bytes_in_use"] == before
