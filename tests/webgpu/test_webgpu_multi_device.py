"""Several WebGPU adapters: ``webgpu:N`` per adapter of webgpu:0's backend (GPUs; software adapters only
beside a software webgpu:0), and copies between two of them, which go through the host (WebGPU has no
device-to-device copy between adapters)."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime
from numr_array.backends import webgpu as wgpu_backend

from ..strategies import to_np

if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter", allow_module_level=True)


class _Adapter:
    def __init__(self, backend, kind, name="gpu"):
        self.info = {"backend_type": backend, "adapter_type": kind, "device": name}


class _Wgpu:
    """wgpu's adapter requests over a fixed list; the request returns ``requested`` (default: the first)."""

    def __init__(self, adapters, requested=None):
        self.gpu = self
        self._adapters = adapters
        self._requested = requested if requested is not None else adapters[0]

    def request_adapter_sync(self, power_preference=None):
        return self._requested

    def enumerate_adapters_sync(self):
        return list(self._adapters)


@pytest.fixture
def plain_env(monkeypatch):
    monkeypatch.delenv("NUMR_WEBGPU_ADAPTER", raising=False)
    monkeypatch.delenv("WGPU_BACKEND_TYPE", raising=False)


def test_every_gpu_adapter_of_the_backend_is_a_device(plain_env, monkeypatch):
    gpu0, gpu1 = _Adapter("Vulkan", "DiscreteGPU", "H200"), _Adapter("Vulkan", "DiscreteGPU", "H200")
    igpu = _Adapter("Vulkan", "IntegratedGPU", "igpu")
    lavapipe, gl = _Adapter("Vulkan", "CPU", "llvmpipe"), _Adapter("OpenGL", "DiscreteGPU", "H200")
    pick = wgpu_backend._pick_adapters
    got = pick(_Wgpu([gpu0, lavapipe, igpu, gl, gpu1]))
    assert got[0] is gpu0 and got[1] is gpu1 and got[2] is igpu and len(got) == 3  # discrete first
    # wgpu's request returns a new object for an enumerated adapter: the first equal one is its own
    again = _Adapter("Vulkan", "DiscreteGPU", "H200")
    got = pick(_Wgpu([gpu0, gpu1], requested=again))
    assert got[0] is again and got[1:] == [gpu1]
    assert pick(_Wgpu([lavapipe, gl])) == [lavapipe]  # a software webgpu:0: no other native adapter
    assert pick(_Wgpu([lavapipe, _Adapter("Vulkan", "CPU", "swiftshader")]))[1].info["device"] == "swiftshader"
    monkeypatch.setenv("NUMR_WEBGPU_ADAPTER", "h200")
    assert pick(_Wgpu([gpu0, igpu, gpu1])) == [gpu0, gpu1]


def test_devices_lists_each_adapter():
    n = get_runtime("webgpu").device_count()
    listed = [str(d) for d in xp.__array_namespace_info__().devices() if d.kind == "webgpu"]
    assert listed == [f"webgpu:{i}" for i in range(n)]


@pytest.fixture
def two_devices(monkeypatch):
    """webgpu:0 and webgpu:1: two adapters where the host has them, else two wgpu devices of webgpu:0's
    adapter (each with its own memory, as two adapters' devices are)."""
    rt = get_runtime("webgpu")
    if rt.device_count() < 2:
        monkeypatch.setattr(rt, "adapters", [rt.adapters[0], rt.adapters[0]])
        monkeypatch.setattr(xp._device.parse_device("webgpu:1"), "_client", None)  # (dropped again after)
    yield


def test_to_device_between_two_webgpu_devices_through_the_host(two_devices):
    a = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    x = xp.asarray(a, device="webgpu:0")
    y = x.to_device("webgpu:1")
    z = (y * 2 + 1).to_device("webgpu:0")
    assert (str(y.device), str(z.device)) == ("webgpu:1", "webgpu:0")
    assert to_np(y).tobytes() == a.tobytes()
    np.testing.assert_allclose(to_np(z), a * 2 + 1, rtol=1e-6)
    with pytest.raises(ValueError, match="webgpu:0.*webgpu:1|webgpu:1.*webgpu:0"):
        x + y
