"""Memory statistics per device, and giving a device's pooled memory back (after torch.cuda's
``memory_stats`` / ``reset_peak_memory_stats`` / ``empty_cache``).

The figures are those of the device's allocator: the memory numr_array's arrays (and capture arenas)
hold, not what other libraries of the process allocate on the same device.
"""

from __future__ import annotations

from . import _capture
from ._device import resolve_device

__all__ = ["memory_stats", "reset_peak_memory_stats", "empty_cache"]


def memory_stats(device=None) -> dict[str, int]:
    """Memory statistics of ``device`` (default: the default device), as a dict of ints:

    - ``bytes_in_use``: bytes held by live arrays and by capture arenas (a graph's arena until the graph goes);
    - ``peak_bytes_in_use``: the most ``bytes_in_use`` reached since the device was first used or since
      :func:`reset_peak_memory_stats`;
    - ``pooled_bytes``: freed memory the backend's pool keeps cached for reuse (CUDA: CuPy's pool on that
      GPU, shared with CuPy code of the process; WebGPU: numr's buffer pool; CPU: always 0);
    - ``allocations``: live allocations.

    A device not used yet reports zeros (and is not started by the call).
    """
    dev = resolve_device(device, "memory_stats")
    client = dev._client
    if client is None:
        return {"bytes_in_use": 0, "peak_bytes_in_use": 0, "pooled_bytes": 0, "allocations": 0}
    allocator = client.allocator
    stats = allocator.stats()
    pooled = allocator.pooled_bytes() if client.lost is None else 0  # a lost device's pool went with it
    return {"bytes_in_use": stats.bytes_in_use, "peak_bytes_in_use": stats.peak_bytes, "pooled_bytes": pooled,
            "allocations": stats.allocations}


def reset_peak_memory_stats(device=None) -> None:
    """Restart ``device``'s ``peak_bytes_in_use`` from its ``bytes_in_use`` now."""
    client = resolve_device(device, "reset_peak_memory_stats")._client
    if client is not None:
        client.allocator.reset_peak()


def empty_cache(device=None) -> None:
    """Give the memory ``device``'s pool caches (``pooled_bytes``) back to the device, as
    ``torch.cuda.empty_cache`` does: CUDA frees CuPy's cached blocks on that GPU (the free part of a block
    that a live array holds part of stays pooled, as in PyTorch's allocator), WebGPU destroys its pooled
    buffers, the CPU pools nothing. Arrays alive keep their memory. CaptureError inside a
    ``capture()`` block (freeing device memory has no place in a graph)."""
    dev = resolve_device(device, "empty_cache")
    _capture.check_not_capturing("empty_cache")
    client = dev._client
    if client is not None and client.lost is None:
        client.allocator.release_pool()
