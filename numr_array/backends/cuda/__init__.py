"""The CUDA runtime over CuPy: a device ``cuda:N`` per GPU.

Kernels are the shared NumPy-API kernels (``backends/array_module_kernels``) bound to CuPy, with matrix products sent
through a capturable cuBLAS handle (see ``_blas``). Any CuPy build works (cupy-cuda12x, cupy-cuda13x);
without CuPy, or without a GPU, ``create_runtime`` returns None and no ``cuda`` device exists.
"""

from __future__ import annotations

import logging

from ...runtime import Runtime

log = logging.getLogger(__name__)


class CudaRuntime(Runtime):
    name = "cuda"

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
    except ImportError as e:
        log.info("cuda backend absent: CuPy cannot be imported (%s)", e)
        return None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CuPy's CUDARuntimeError when there is no driver or device
        log.info("cuda backend absent: CuPy finds no CUDA device (%s: %s)", type(e).__name__, e)
        return None
    if count == 0:
        log.info("cuda backend absent: the CUDA driver reports no device")
        return None
    return CudaRuntime(count)
