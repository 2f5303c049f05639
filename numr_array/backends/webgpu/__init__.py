"""The WebGPU runtime over wgpu-py: a device ``webgpu:N`` per adapter, ``webgpu:0`` on the chosen one.

The adapter of ``webgpu:0`` is wgpu's high-performance one, except that an adapter of a native backend
(Vulkan, Metal, D3D12) is taken over an OpenGL one: wgpu's OpenGL backend offers neither shader-f64 nor
shader-int64.
``NUMR_WEBGPU_ADAPTER`` (a substring of the adapter's name) picks another, and wgpu's
``WGPU_BACKEND_TYPE`` (Vulkan, Metal, D3D12, OpenGL) restricts the backend. The device is requested with
the adapter's own limits and with shader-f16, shader-f64, shader-int64 and subgroup where the adapter
offers them. ``webgpu:1``, ``webgpu:2``, ... are the host's other adapters of the same backend (the
other GPUs: software adapters only when ``webgpu:0`` is one), best first (``_rank``). Without wgpu, or
without an adapter, ``create_runtime`` returns None and the backend is absent from ``devices()``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from typing import Iterator

from ...runtime import Runtime

log = logging.getLogger(__name__)

#: features requested when the adapter offers them (wgpu-py's names)
WANTED_FEATURES = ("shader-f16", "shader-f64", "shader-int64", "subgroup")
#: wgpu backends that are not OpenGL (the ones whose adapters can offer shader-f64 and shader-int64)
NATIVE_BACKENDS = ("vulkan", "metal", "d3d12")
#: wgpu's adapter types, best first, for choosing among native adapters
_ADAPTER_TYPES = ("discretegpu", "integratedgpu", "virtualgpu", "unknown", "cpu")
#: what Mesa's EGL prints on stderr each time wgpu's OpenGL backend probes for Wayland in a session
#: without XDG_RUNTIME_DIR (a headless machine, a container): noise, since no window is ever made
_EGL_NOISE = b"XDG_RUNTIME_DIR is invalid or not set in the environment"


@contextlib.contextmanager
def native_stderr_filtered() -> Iterator[None]:
    """Run the block with the process's stderr (file descriptor 2) sent to a temporary file, then write
    back to stderr all it received except the lines of ``_EGL_NOISE``. Native libraries write to the
    descriptor directly, so redirecting ``sys.stderr`` would not catch them."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr to protect
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = [line for line in tmp.read().splitlines(keepends=True) if _EGL_NOISE not in line]
            if kept:
                os.write(2, b"".join(kept))


def _backend(adapter) -> str:
    return str(adapter.info.get("backend_type", "")).lower()


def _rank(adapter) -> tuple[bool, int]:
    """Sort key: native backends first, then by adapter type (discrete GPU first)."""
    kind = _kind(adapter)
    return (_backend(adapter) not in NATIVE_BACKENDS,
            _ADAPTER_TYPES.index(kind) if kind in _ADAPTER_TYPES else _ADAPTER_TYPES.index("unknown"))


def _pick_adapter(wgpu):
    want = os.environ.get("NUMR_WEBGPU_ADAPTER", "").lower()
    backend = os.environ.get("WGPU_BACKEND_TYPE", "").strip().lower()
    if not want:
        try:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as e:
            log.debug("webgpu: wgpu's request for a high-performance adapter failed: %s", e)
            adapter = None
        if backend or (adapter is not None and _backend(adapter) in NATIVE_BACKENDS):
            return adapter
        # wgpu may prefer an OpenGL adapter (a GPU's GL driver) while a native one exists (lavapipe)
        native = [a for a in _enumerate(wgpu) if _backend(a) in NATIVE_BACKENDS]
        return min(native, key=_rank) if native else adapter
    matches = [a for a in _enumerate(wgpu) if want in str(a.info.get("device", "")).lower()
               and (not backend or _backend(a) == backend)]
    return min(matches, key=_rank) if matches else None


def _pick_adapters(wgpu) -> list:
    """The adapter of each device: ``_pick_adapter``'s first, then the other adapters of its backend that
    match ``NUMR_WEBGPU_ADAPTER`` (a CPU one only if the first is a CPU one), best first."""
    first = _pick_adapter(wgpu)
    if first is None:
        return []
    want = os.environ.get("NUMR_WEBGPU_ADAPTER", "").lower()
    cpu = _kind(first) == "cpu"
    others = [a for a in _enumerate(wgpu) if _backend(a) == _backend(first) and (cpu or _kind(a) != "cpu")
              and want in str(a.info.get("device", "")).lower()]
    # the enumeration lists ``first``'s own adapter too: the same object, or (wgpu's request returns a new
    # one) the first adapter reporting the same info, which is the one wgpu's request chooses among equals
    same = next((a for a in others if a is first), None) or next(
        (a for a in others if dict(a.info) == dict(first.info)), None)
    return [first] + sorted((a for a in others if a is not same), key=_rank)


def _kind(adapter) -> str:
    return str(adapter.info.get("adapter_type", "")).lower()


def _enumerate(wgpu) -> list:
    try:
        return list(wgpu.gpu.enumerate_adapters_sync())
    except Exception:
        return []


class WebGPURuntime(Runtime):
    name = "webgpu"

    def __init__(self, wgpu, adapters: list):
        self._wgpu = wgpu
        self.adapters = adapters
        self.adapter = adapters[0]  # webgpu:0's

    def device_count(self) -> int:
        return len(self.adapters)

    def create_client(self, device):
        from ._client import WebGPUClient, check_not_forked
        from ._kernels import make_kernels
        check_not_forked(device)
        a = self.adapters[device.index]
        features = [f for f in WANTED_FEATURES if f in a.features]
        wdevice = a.request_device_sync(required_features=features, required_limits=dict(a.limits))
        return WebGPUClient(device, a, wdevice, set(wdevice.features), make_kernels())


def create_runtime() -> WebGPURuntime | None:
    try:
        import wgpu
    except ImportError as e:
        log.info("webgpu backend absent: wgpu cannot be imported (%s)", e)
        return None
    with native_stderr_filtered():
        adapters = _pick_adapters(wgpu)
    if not adapters:
        log.info("webgpu backend absent: no WebGPU adapter (NUMR_WEBGPU_ADAPTER=%r, WGPU_BACKEND_TYPE=%r)",
                 os.environ.get("NUMR_WEBGPU_ADAPTER", ""), os.environ.get("WGPU_BACKEND_TYPE", ""))
        return None
    for i, adapter in enumerate(adapters):
        info = adapter.info
        log.info("webgpu:%d on the adapter %r (%s backend, %s; features: %s)", i, info.get("device", ""),
                 info.get("backend_type", ""), info.get("adapter_type", ""),
                 ", ".join(f for f in WANTED_FEATURES if f in adapter.features) or "none of the optional ones")
    return WebGPURuntime(wgpu, adapters)
