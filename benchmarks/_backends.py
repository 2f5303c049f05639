"""The array libraries a benchmark runs side by side, each behind one interface.

A backend spec names a namespace and a device: ``numpy`` (the CPU peer), ``numr:cpu``, ``numr:webgpu:0``,
``numr:cuda:0``, ``cupy`` and ``torch`` (CUDA; both through ``array_api_compat``). ``load`` returns a
Backend, or raises when the library or its device is missing, so that a script can report that and carry
on with the others.

Peak memory (``Backend.peak``) is the bytes above what was in use when the measured call began:
- ``tracemalloc`` for NumPy and numr on the CPU: allocations NumPy reports to Python's tracemalloc (every
  array's data, and so every numr CPU buffer, which the CPU allocator takes from ``np.empty`` with no pool
  of its own), plus Python objects. One instrument for both, in-process.
- numr on a GPU: its device allocator's counters (``numr_array.memory_stats``, after ``reset_peak_memory_stats``).
- CuPy: a memory hook on CuPy's pool summing the blocks handed out and given back.
- PyTorch: ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``.
All three GPU figures count memory handed out to arrays, not what a pool keeps in reserve.
"""

from __future__ import annotations

import os
import platform
import tracemalloc
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

DEFAULT_SPECS = ("numpy", "numr:cpu", "numr:webgpu:0", "numr:cuda:0", "cupy", "torch")
GPU_SPECS = ("numr:cuda:0", "numr:webgpu:0", "cupy", "torch")
PEERS = ("numpy", "cupy", "torch")


@dataclass
class Backend:
    name: str
    xp: Any  # the array API namespace
    device: Any  # what its creation functions take as ``device=``
    put: Callable[[np.ndarray], Any]  # a host array onto the device
    get: Callable[[Any], np.ndarray]  # a device array back to the host
    sync: Callable[[], None]
    measure: Callable[[Callable[[], Any]], int]  # peak bytes of one call (see the module docstring)
    memory_method: str
    gpu: bool
    jit: bool = False  # numr only: each program runs as ``numr_array.jit(program)`` (captured once, replayed)

    def peak(self, fn: Callable[[], Any]) -> int:
        """Peak bytes allocated by one synchronised call of ``fn`` above what was in use before it."""
        return self.measure(lambda: (fn(), self.sync()))


def _tracemalloc_peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def numpy_namespace():
    """NumPy itself where it has the array API functions the programs use (``cumulative_sum`` and
    ``astype`` came in NumPy 2.1), else its array_api_compat wrapper (thin, but it adds to per-call figures)."""
    if hasattr(np, "cumulative_sum") and hasattr(np, "astype"):
        return np
    import array_api_compat.numpy
    return array_api_compat.numpy


def _numpy() -> Backend:
    return Backend("numpy", numpy_namespace(), "cpu", np.asarray, np.asarray, lambda: None, _tracemalloc_peak,
                   "tracemalloc", gpu=False)


def _numr(device: str) -> Backend:
    import numr_array as xp

    client = xp.asarray(np.zeros(1, np.float32), device=device).device.client
    gpu = not device.startswith("cpu")

    def allocator_peak(fn):
        client.synchronize()
        xp.reset_peak_memory_stats(device)
        base = xp.memory_stats(device)["bytes_in_use"]
        fn()
        return xp.memory_stats(device)["peak_bytes_in_use"] - base

    return Backend(f"numr:{device}", xp, device, lambda a: xp.asarray(a, device=device),
                   lambda x: np.asarray(x.to_device("cpu")),
                   client.synchronize, allocator_peak if gpu else _tracemalloc_peak,
                   "numr allocator" if gpu else "tracemalloc", gpu=gpu)


def cupy_pool_peak(fn: Callable[[], object]) -> int:
    """Bytes of CuPy's pool handed out (malloc) and not given back (free) at the peak of ``fn()``, above the
    start: a memory hook on the pool."""
    from cupy.cuda import memory_hook

    class PeakHook(memory_hook.MemoryHook):
        name = "PeakHook"

        def __init__(self):
            self.used = self.peak = 0

        def malloc_postprocess(self, **kw):
            self.used += kw["mem_size"]
            self.peak = max(self.peak, self.used)

        def free_postprocess(self, **kw):
            self.used -= kw["mem_size"]

    hook = PeakHook()
    with hook:
        fn()
    return hook.peak


def _cupy() -> Backend:
    import array_api_compat.cupy as xp
    import cupy
    def sync():
        cupy.cuda.get_current_stream().synchronize()

    def pool_peak(fn):
        sync()
        return cupy_pool_peak(fn)

    cupy.zeros(1).sum()  # fails here, not in the first program, when CuPy has no usable GPU
    return Backend("cupy", xp, None, cupy.asarray, cupy.asnumpy, sync, pool_peak, "cupy pool hook", gpu=True)


def _torch() -> Backend:
    import array_api_compat.torch as xp
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA device")
    dev = torch.device("cuda")

    def allocated_peak(fn):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        return torch.cuda.max_memory_allocated() - base

    return Backend("torch", xp, dev, lambda a: torch.asarray(a, device=dev), lambda x: x.cpu().numpy(),
                   torch.cuda.synchronize, allocated_peak, "torch.cuda.max_memory_allocated", gpu=True)


def load(spec: str) -> Backend:
    """The backend ``spec`` names; ImportError/RuntimeError (or the library's own error) when unusable."""
    if spec == "numpy":
        return _numpy()
    if spec.startswith("numr:"):
        return _numr(spec[len("numr:"):])
    if spec == "cupy":
        return _cupy()
    if spec == "torch":
        return _torch()
    raise ValueError(f"unknown backend {spec!r}; known: {', '.join(DEFAULT_SPECS)}")


def load_all(specs: list[str]) -> tuple[list[Backend], dict[str, str]]:
    """The backends that load, and for each that does not, why (one line)."""
    backends, missing = [], {}
    for spec in specs:
        try:
            backends.append(load(spec))
        except Exception as exc:  # a missing library or device is reported, never fatal
            missing[spec] = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
    return backends, missing


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu_names(backends: list[Backend]) -> list[str]:
    names = []
    for b in backends:
        try:
            if b.name == "torch":
                import torch
                names.append(f"{torch.cuda.get_device_name(0)} (torch {torch.__version__}, CUDA {torch.version.cuda})")
            elif b.name == "cupy":
                import cupy
                name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
                names.append(f"{name.decode() if isinstance(name, bytes) else name} (CuPy {cupy.__version__})")
            elif b.name.startswith("numr:webgpu"):
                info = b.put(np.zeros(1, np.float32)).device.client.adapter.info
                kind = f"{info.get('backend_type', '?')}, {info.get('adapter_type', '?')}"
                names.append(f"WebGPU {info.get('device', '?')} ({kind})")
        except Exception as exc:
            names.append(f"{b.name}: no device name ({type(exc).__name__})")
    return names


_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def machine_line(backends: list[Backend]) -> str:
    """One line naming the machine: CPU model and cores, Python, NumPy, and each GPU a backend runs on."""
    parts = [f"{_cpu_model()}, {os.cpu_count()} cores", f"Python {platform.python_version()}", f"NumPy {np.__version__}"]
    parts += [f"{k}={os.environ[k]}" for k in _THREAD_VARS if k in os.environ]
    parts.append("load average %.1f" % os.getloadavg()[0])  # other work on the machine moves every figure
    return "machine: " + "; ".join(parts + _gpu_names(backends))

