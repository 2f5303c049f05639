"""The CUDA runtime over CuPy: a device ``cuda:N`` per GPU.

Kernels are the shared NumPy-API kernels (``backends/_ndarray``) bound to CuPy, with matrix products sent
through a capturable cuBLAS handle (see ``_blas``). Any CuPy build works (cupy-cuda12x, cupy-cuda13x);
without CuPy, or without a GPU, ``create_runtime`` returns None and no ``cuda`` device exists.
"""

from __future__ import annotations

from ...runtime import Runtime


class CudaRuntime(Runtime):
    name = "cuda"
    supports_graph_capture = True

    def __init__(self, count: int):
        self._count = count

    def device_count(self) -> int:
        return self._count

    def create_client(self, device):
        from ._client import CudaClient
        return CudaClient(device, device.index)


def create_runtime() -> CudaRuntime | None:
    """The CUDA runtime, or None when CuPy is missing or finds no GPU (no driver, no device)."""
    try:
        import cupy
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # ImportError, or CuPy's CUDARuntimeError when there is no driver or device
        return None
    return CudaRuntime(count) if count > 0 else None
