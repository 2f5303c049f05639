"""The WebGPU runtime over wgpu-py: one device (``webgpu:0``) on the chosen adapter.

The adapter is wgpu's high-performance one; ``NUMR_WEBGPU_ADAPTER`` (a substring of the adapter's name)
picks another, and wgpu's ``WGPU_BACKEND_TYPE`` (Vulkan, Metal, D3D12, OpenGL) restricts the backend.
The device is requested with the adapter's own limits and with shader-f16, shader-f64, shader-int64 and
subgroup where the adapter offers them. Without wgpu, or without an adapter, ``create_runtime`` returns
None and the backend is absent from ``devices()``.
"""

from __future__ import annotations

import os

from ...runtime import Runtime

#: features requested when the adapter offers them (wgpu-py's names)
WANTED_FEATURES = ("shader-f16", "shader-f64", "shader-int64", "subgroup")


def _pick_adapter(wgpu):
    want = os.environ.get("NUMR_WEBGPU_ADAPTER")
    backend = os.environ.get("WGPU_BACKEND_TYPE", "").strip().lower()
    if not want:
        try:
            return wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception:
            return None
    for a in wgpu.gpu.enumerate_adapters_sync():
        info = a.info
        if want.lower() in str(info.get("device", "")).lower() and (
                not backend or str(info.get("backend_type", "")).lower() == backend):
            return a
    return None


class WebGPURuntime(Runtime):
    name = "webgpu"
    supports_graph_capture = True

    def __init__(self, wgpu, adapter):
        self._wgpu = wgpu
        self.adapter = adapter
        self._client = None

    def device_count(self) -> int:
        return 1

    def create_client(self, device):
        from ._client import WebGPUClient
        from ._kernels import make_kernels
        a = self.adapter
        features = [f for f in WANTED_FEATURES if f in a.features]
        wdevice = a.request_device_sync(required_features=features, required_limits=dict(a.limits))
        return WebGPUClient(device, a, wdevice, set(wdevice.features), make_kernels())


def create_runtime() -> WebGPURuntime | None:
    try:
        import wgpu
    except ImportError:
        return None
    adapter = _pick_adapter(wgpu)
    if adapter is None:
        return None
    return WebGPURuntime(wgpu, adapter)
