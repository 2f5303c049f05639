"""Device loss: DeviceLostError for every tensor and graph of a lost device, and a new generation for the
arrays created after it.

The generation machinery is tested on the fake backend (a CPU client marked lost by hand: the CPU itself is
never lost). WebGPU loses its device for real (GPUDevice.destroy on lavapipe in CI) and CUDA through a
kernel that faults (on the GPU machine); both run in a subprocess, since a lost device is lost for every
module of the session, and they check the output at the file-descriptor level (capfd).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numr_array as xp
from numr_array import _capture, _device, runtime
from numr_array.backends import get_runtime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _lost_count_restored():
    """Each test's lost devices die with it: later tests run as in a process where no device was lost (the
    namespace skips its liveness checks, and the compiled call and elision their lost-device fallback,
    only while ``runtime.lost_count`` is 0)."""
    before = runtime.lost_count
    yield
    runtime.lost_count = before


@pytest.fixture
def fake0(fake_backend):
    """fake:0 with a client of its own, given back fresh to later tests."""
    dev = _device.parse_device("fake:0")
    dev._client = None
    yield dev
    dev._client = None


def _lose(dev, reason="the test pulled the plug"):
    return dev.client.mark_lost(reason)


# --- the error itself --------------------------------------------------------------------------------
def test_device_lost_error_names_device_reason_and_what_to_do():
    e = xp.DeviceLostError("webgpu:0", "wgpu: Parent device is lost")
    assert isinstance(e, RuntimeError)
    assert str(e) == ("webgpu:0 was lost (wgpu: Parent device is lost): create new arrays on webgpu:0; "
                      "tensors and graphs made before the loss cannot be used")
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is xp.DeviceLostError and str(e2) == str(e) and e2.device == "webgpu:0"
    sticky = xp.DeviceLostError("cuda:0", "cudaErrorIllegalAddress: ...", recoverable=False)
    assert "cannot be used again in this process" in str(sticky) and "other devices still work" in str(sticky)


# --- the generic machinery, on the fake backend --------------------------------------------------------
def test_every_use_of_a_lost_tensor_raises_before_any_work(fake0):
    x = xp.arange(8, dtype=xp.float32, device="fake:0")
    out = xp.zeros((8,), dtype=xp.float32, device="fake:0")
    old = fake0.client
    _lose(fake0)
    ops = {
        "sum": lambda: xp.sum(x),
        "add": lambda: x + 1,
        "inplace": lambda: x.__iadd__(1),
        "out=": lambda: xp.add(out, 1, out=out),
        "to_device": lambda: x.to_device("cpu"),
        "__array__": lambda: np.asarray(x),
        "float": lambda: float(x[0]),
        "setitem": lambda: x.__setitem__(0, 5.0),
        "ones_like": lambda: xp.ones_like(x),
    }
    for name, op in ops.items():
        with pytest.raises(xp.DeviceLostError, match=r"fake:0 was lost \(the test pulled the plug\): "
                                                     r"create new arrays on fake:0") as info:
            op()
        assert info.value.device == "fake:0", name
    assert fake0.client is old  # no new client was made on the lost tensors' behalf
    np.testing.assert_array_equal(old.native(x), np.arange(8, dtype=np.float32))  # nothing ran
    np.testing.assert_array_equal(old.native(out), np.zeros(8, np.float32))


def test_the_next_array_gets_a_new_generation_with_fresh_accounting(fake0):
    x = xp.ones((1000,), dtype=xp.float64, device="fake:0")
    old = fake0.client
    gen = fake0.generation
    _lose(fake0)
    y = xp.ones((8,), dtype=xp.float32, device="fake:0")
    assert fake0.generation == gen + 1 and fake0.client is not old
    assert fake0.client.allocator.stats().bytes_in_use == 32  # only y: the lost client's 8000 bytes are not here
    assert fake0.client.lost is None
    np.testing.assert_array_equal(np.asarray((y + 1).to_device("cpu")), np.full(8, 2, np.float32))
    with pytest.raises(xp.DeviceLostError):  # old tensors keep raising, also next to new ones
        x[:8] + xp.astype(y, xp.float64)
    y64 = xp.astype(y, xp.float64)
    with pytest.raises(xp.DeviceLostError):  # a lost out=, new inputs
        xp.add(y64, y64, out=x[:8])


def test_graphs_of_a_lost_device_raise_and_new_captures_work(fake0):
    x = xp.ones((4,), device="fake:0")
    with xp.capture("fake:0") as g:
        y = x * 2
    g.replay()
    _lose(fake0)
    with pytest.raises(xp.DeviceLostError, match="fake:0 was lost"):
        g.replay()
    z = xp.ones((4,), device="fake:0")
    with xp.capture("fake:0") as g2:
        w = z * 3
    g2.replay()
    np.testing.assert_array_equal(np.asarray(w.to_device("cpu")), np.full(4, 3.0))
    with pytest.raises(xp.DeviceLostError):
        g.replay()
    del y


def test_a_device_lost_during_a_capture_fails_the_block(fake0):
    x = xp.ones((4,), device="fake:0")
    with pytest.raises(xp.DeviceLostError):
        with xp.capture("fake:0"):
            _lose(fake0)
            x + 1
    assert _capture.current() is None  # the capture was aborted, not left half-open
    z = xp.ones((4,), device="fake:0")  # a new generation
    assert xp.sum(z).to_device("cpu").__float__() == 4.0


def test_an_unrecoverable_loss_keeps_the_device_lost_and_others_work(fake0):
    x = xp.ones((4,), device="fake:0")
    lost = fake0.client
    lost.recoverable = False  # as a sticky CUDA error
    _lose(fake0, "cudaErrorIllegalAddress: an illegal memory access was encountered")
    for op in (lambda: x + 1, lambda: xp.ones((4,), device="fake:0"), lambda: xp.asarray([1.0], device="fake:0")):
        with pytest.raises(xp.DeviceLostError, match="fake:0 cannot be used again in this process"):
            op()
    assert fake0.client is lost  # never replaced
    assert float(xp.sum(xp.ones((4,), device="cpu"))) == 4.0
    other = xp.ones((4,), device="fake:1")
    assert float(xp.sum(other).to_device("cpu")) == 4.0


def test_the_first_loss_switches_the_per_tensor_check_on(fake0):
    before = runtime.lost_count
    _lose(fake0)
    _lose(fake0, "a second report of the same loss")
    assert runtime.lost_count == before + 1
    with pytest.raises(xp.DeviceLostError, match="the test pulled the plug"):  # the first reason is kept
        fake0.client.allocator.allocate(8)


# --- WebGPU: destroy the device (lavapipe in CI) --------------------------------------------------------
WEBGPU_DESTROY = """
import numpy as np
import numr_array as xp

x = xp.arange(8, dtype=xp.float32, device="webgpu:0")
with xp.capture("webgpu:0") as g:
    y = x * 2
old = x.device.client
old.raw_handle.device.destroy()

for name, op in [("sum", lambda: xp.sum(x)), ("add", lambda: x + 1), ("asarray", lambda: np.asarray(x)),
                 ("to_device", lambda: x.to_device("cpu")), ("replay", g.replay), ("float", lambda: float(x[0]))]:
    try:
        op()
    except xp.DeviceLostError as e:
        assert e.device == "webgpu:0" and "create new arrays on webgpu:0" in str(e), (name, str(e))
        assert "device" in e.reason and "lost" in e.reason, e.reason
    else:
        raise AssertionError(f"{name} did not raise DeviceLostError")

z = xp.ones((8,), dtype=xp.float32, device="webgpu:0")
assert z.device.client is not old and z.device.generation == 1
assert z.device.client.allocator.stats().bytes_in_use == 32, z.device.client.allocator.stats()
assert float(xp.sum(z)) == 8.0
with xp.capture("webgpu:0") as g2:
    w = z * 3
g2.replay()
assert np.array_equal(np.asarray(w.to_device("cpu")), np.full(8, 3, np.float32))
for op in (lambda: x + z, g.replay, lambda: xp.sum(y)):
    try:
        op()
    except xp.DeviceLostError:
        pass
    else:
        raise AssertionError("an old tensor or graph worked after recovery")
del x, y, g, old
import gc; gc.collect()
assert float(xp.sum(z * 2)) == 16.0
"""

WEBGPU_LOST_CALLBACK = """
import numr_array as xp
from wgpu.backends.wgpu_native._api import to_c_string_view
from wgpu.backends.wgpu_native._ffi import ffi, lib

x = xp.ones((8,), device="webgpu:0")
client = x.device.client
# what wgpu-native does when it loses a device: call the device-lost callback (wgpu-py logs it)
wdev = client.wdevice
wdev._device_lost_callback(ffi.new("WGPUDevice *", wdev._internal), lib.WGPUDeviceLostReason_Unknown,
                           to_c_string_view("the adapter was reset"), ffi.NULL, ffi.NULL)
assert client.lost is not None and "the adapter was reset" in client.lost.reason, client.lost
try:
    xp.sum(x)
except xp.DeviceLostError as e:
    assert "(unknown)" in str(e) and "the adapter was reset" in str(e), str(e)
else:
    raise AssertionError("sum of a lost tensor worked")
assert float(xp.sum(xp.ones((8,), device="webgpu:0"))) == 8.0
"""


def _run(script: str) -> int:
    """Run ``script`` in a fresh interpreter writing to this process's stdout/stderr (so capfd sees it)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, env=env, timeout=300).returncode


needs_webgpu = pytest.mark.skipif(get_runtime("webgpu") is None, reason="no WebGPU adapter")


@pytest.mark.webgpu
@needs_webgpu
@pytest.mark.parametrize("script", [WEBGPU_DESTROY, WEBGPU_LOST_CALLBACK], ids=["destroy", "lost-callback"])
def test_webgpu_loss_raises_recovers_and_prints_nothing(script, capfd):
    rc = _run(script)
    out, err = capfd.readouterr()
    assert rc == 0, err
    assert out == ""
    assert "DEVICE LOST" not in err and "device was lost" not in err, err


# --- CUDA: a kernel that faults (on the GPU machine) -------------------------------------------------
CUDA_FAULT = """
import cupy
import numr_array as xp

x = xp.ones((8,), device="cuda:0")
client = x.device.client
fault = cupy.RawKernel(r'extern "C" __global__ void f() { *(volatile int*)0 = 1; }', "f")
with client.raw_handle.device, client.stream:
    fault((1,), (1,), ())
try:
    for _ in range(3):  # the fault is reported by the first CUDA call that completes after it
        float(xp.sum(x))
except xp.DeviceLostError as e:
    assert e.device == "cuda:0" and not e.recoverable, str(e)
    assert "cudaErrorIllegalAddress" in str(e) and "cannot be used again in this process" in str(e), str(e)
else:
    raise AssertionError("no DeviceLostError after an illegal address")
for op in (lambda: x + 1, lambda: xp.ones((4,), device="cuda:0")):
    try:
        op()
    except xp.DeviceLostError as e:
        assert "cudaErrorIllegalAddress" in str(e), str(e)
    else:
        raise AssertionError("cuda:0 worked after a sticky error")
assert float(xp.sum(xp.ones((4,), device="cpu"))) == 4.0
import os
os._exit(0)  # skip CuPy's teardown on the dead context: what it prints or does is not numr's
"""


@pytest.mark.cuda
@pytest.mark.skipif(get_runtime("cuda") is None, reason="no CUDA device")
def test_cuda_sticky_error_raises_device_lost_and_cpu_still_works(capfd):
    rc = _run(CUDA_FAULT)
    out, err = capfd.readouterr()
    assert rc == 0, err
    assert out == ""
