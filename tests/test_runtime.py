"""The Runtime layer: devices, the allocator's accounting and freeze, copies, capture set-up, interop,
backend discovery."""

import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numr_array as xp
from numr_array import backends
from numr_array._device import parse_device
from numr_array._capture import Arena
from numr_array.runtime import AllocatorFrozenError, CudaInterop, HostInterop, Interop

from .strategies import DEVICE


def test_device_strings_round_trip():
    cpu = parse_device("cpu")
    assert str(cpu) == "cpu" and repr(cpu) == "cpu"
    assert parse_device(cpu) is cpu
    assert cpu == "cpu" and cpu != "cuda:0"
    assert str(parse_device("cuda:0")) == "cuda:0"
    assert str(parse_device("webgpu:1")) == "webgpu:1"


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:", "cpu:1", "webgpu:-1", ""])
def test_bad_device_names_raise_value_error(bad):
    with pytest.raises(ValueError, match="device"):
        xp.zeros(3, device=bad)


def test_bad_device_type_raises_type_error():
    with pytest.raises(TypeError, match="device"):
        xp.zeros(3, device=0)


def test_unavailable_device_raises_value_error():
    with pytest.raises(ValueError, match="cuda:7"):
        xp.zeros(3, device="cuda:7")


def test_devices_lists_cpu_first():
    devs = xp.__array_namespace_info__().devices()
    assert devs[0] == "cpu"
    assert all(isinstance(d, xp.Device) for d in devs)


def test_missing_backend_library_is_absent(monkeypatch):
    monkeypatch.setitem(backends.BACKEND_MODULES, "webgpu", "numr_array_no_such_module")
    monkeypatch.setattr(backends, "_runtimes", {})
    assert all(d.kind != "webgpu" for d in xp.__array_namespace_info__().devices())
    assert xp.add(xp.ones(2), 1.0).shape == (2,)  # nothing else notices


def test_numr_device_env_picks_default():
    code = "import numr_array as xp; print(xp.ones(2).device, xp.__array_namespace_info__().default_device())"
    env = dict(os.environ, NUMR_DEVICE="cpu", PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["cpu", "cpu"]
    env["NUMR_DEVICE"] = "tpu:0"
    bad = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "NUMR_DEVICE" in bad.stderr


def test_mixing_devices_raises_value_error(fake_backend):
    a = xp.ones(3, device="cpu")
    b = xp.ones(3, device="fake:1")
    assert b.device == "fake:1"
    for call in (lambda: a + b, lambda: xp.add(a, b), lambda: xp.matmul(a, b), lambda: xp.where(a > 0, a, b)):
        with pytest.raises(ValueError, match="device"):
            call()
    out = xp.zeros(3, device="fake:0")
    with pytest.raises(ValueError, match="device"):
        xp.add(b, b, out=out)
    assert np.array_equal(np.asarray(b.to_device("cpu") + a), [2, 2, 2])  # explicit transfer works


def test_allocator_accounts_bytes_and_peak():
    alloc = parse_device(DEVICE).client.allocator
    gc.collect()
    before = alloc.stats()
    x = xp.empty((1000,), dtype=xp.float32, device=DEVICE)
    during = alloc.stats()
    assert during.bytes_in_use == before.bytes_in_use + 4000
    assert during.allocations == before.allocations + 1
    assert during.peak_bytes >= during.bytes_in_use
    del x
    gc.collect()
    after = alloc.stats()
    assert after.bytes_in_use == before.bytes_in_use
    assert after.peak_bytes >= during.bytes_in_use


def test_views_share_the_buffer_and_keep_it_alive():
    alloc = parse_device(DEVICE).client.allocator
    gc.collect()
    base = alloc.stats().bytes_in_use
    x = xp.arange(12, dtype=xp.float32, device=DEVICE)
    v = xp.reshape(x, (3, 4))[1:, ::-1].mT if hasattr(xp, "reshape") else x[::2]
    assert v._buf is x._buf
    del x
    gc.collect()
    assert alloc.stats().bytes_in_use == base + 48  # the view holds the whole buffer
    del v
    gc.collect()
    assert alloc.stats().bytes_in_use == base


def test_frozen_allocator_refuses_allocation():
    alloc = parse_device(DEVICE).client.allocator
    alloc.freeze()
    try:
        assert alloc.is_frozen
        with pytest.raises(AllocatorFrozenError):
            alloc.allocate(16)
    finally:
        alloc.unfreeze()
    assert not alloc.is_frozen
    assert alloc.allocate(16).nbytes == 16


def test_copies_through_the_client():
    client = parse_device(DEVICE).client
    src = np.arange(16, dtype=np.int32)
    a = client.allocator.allocate(64)
    b = client.allocator.allocate(64)
    client.copy_to_device(src, a, 0)
    client.copy_to_device(src[:12], b, 16)
    out = np.zeros(12, np.int32)
    client.copy_from_device(b, 16, out)
    assert np.array_equal(out, src[:12])
    out2 = np.zeros(4, np.int32)
    client.copy_from_device(a, 8, out2)
    assert np.array_equal(out2, src[2:6])


def test_copy_strided_makes_views_contiguous():
    client = parse_device(DEVICE).client
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = xp.asarray(a, device=DEVICE)
    v = x[::-1, 1::2]
    dst = xp.empty(v.shape, dtype=v.dtype, device=DEVICE)
    client.copy_strided(v, dst)
    assert dst.is_contiguous() and not v.is_contiguous()
    assert np.array_equal(np.asarray(dst.to_device("cpu")), a[::-1, 1::2])


def test_client_interface_members():
    rt = backends.get_runtime(parse_device(DEVICE).kind)
    assert isinstance(rt.name, str)
    client = parse_device(DEVICE).client
    client.synchronize()
    client.raw_handle  # the escape hatch exists (None on CPU, where NumPy needs no handle)


def test_begin_capture_freezes_the_allocator_and_installs_the_arena():
    client = parse_device(DEVICE).client
    arena = Arena(client.allocator)
    client.begin_capture(arena)
    try:
        assert client.arena is arena and client.allocator.is_frozen
        with pytest.raises(AllocatorFrozenError):
            client.allocator.allocate(16)
        with pytest.raises(AllocatorFrozenError):  # memory a backend obtained itself is refused alike
            client.allocator.track(np.empty(16, np.uint8), 16)
        assert id(client.alloc(16)) in arena.ids  # this thread allocates from the arena
        if parse_device(DEVICE).kind == "cpu":  # (elsewhere other threads wait for the capture to end)
            other = []
            t = threading.Thread(target=lambda: other.append(client.alloc(16)))
            t.start()
            t.join()
            assert other and id(other[0]) not in arena.ids  # other threads keep the allocator
            t = threading.Thread(target=client.abort_capture)  # not this thread's capture: nothing happens
            t.start()
            t.join()
            assert client.arena is arena and client.allocator.is_frozen
    finally:
        graph = client.end_capture()
    assert client.arena is None and not client.allocator.is_frozen
    graph.replay()  # an empty graph
    assert client.allocator.allocate(16).nbytes == 16


def test_abort_capture_unfreezes_and_removes_the_arena():
    client = parse_device(DEVICE).client
    client.begin_capture(Arena(client.allocator))
    client.abort_capture()
    assert client.arena is None and not client.allocator.is_frozen
    client.abort_capture()  # a second abort finds no capture: nothing happens
    assert client.allocator.allocate(16).nbytes == 16


def test_interop_is_declared_by_the_client_type():
    client = parse_device(DEVICE).client
    kind = parse_device(DEVICE).kind
    assert isinstance(client, HostInterop) == (kind == "cpu")
    assert isinstance(client, CudaInterop) == (kind == "cuda")
    assert isinstance(client, Interop) == (kind in ("cpu", "cuda"))
    x = xp.arange(4, dtype=xp.float32, device=DEVICE)
    assert hasattr(x, "__cuda_array_interface__") == (kind == "cuda")
