"""The CPU runtime: host memory, NumPy kernels, and capture as a list of prebound NumPy calls."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ... import _dtypes as dt
from ...runtime import Allocator, Buffer, Client, Graph, Runtime
from ..._tensor import Tensor, contiguous_strides
from .._ndarray import make_kernels


class CpuAllocator(Allocator):
    """Host memory from NumPy; freed when the last view of it goes. A buffer's handle is a C-contiguous
    NumPy array (bytes, or the typed array a new tensor was allocated as)."""

    def _raw_allocate(self, nbytes: int) -> np.ndarray:
        try:
            return np.empty(nbytes, np.uint8)
        except MemoryError:
            raise MemoryError(f"cpu: cannot allocate {nbytes} bytes") from None

    def _raw_free(self, handle, nbytes: int) -> None:
        return None  # NumPy frees the bytes when the last view of them goes

    def deallocate(self, buffer: Buffer) -> None:
        # the accounting of Allocator.deallocate without the call to the no-op _raw_free: this runs once
        # per temporary, on the eager path's critical path
        buffer.owner = None
        self._in_use -= buffer.nbytes
        self._count -= 1


class CpuGraph(Graph):
    """The launches of a capture, each bound to its kernel and its NumPy views, replayed in order."""

    def __init__(self, steps: list):
        self.steps = steps

    def replay(self) -> None:
        for kernel, ins, outs, params in self.steps:
            kernel(ins, outs, params)


class CpuClient(Client):
    def __init__(self, device):
        self.device = device
        self.allocator = CpuAllocator()
        self.kernels = make_kernels(np)
        self._recording: list | None = None

    @property
    def raw_handle(self) -> None:
        return None  # kernels are NumPy calls on host memory; there is no stream or context to hand out

    def synchronize(self) -> None:
        return None  # every launch has finished when it returns

    def native(self, t: Tensor) -> np.ndarray:
        """The NumPy view of ``t`` (made once, then kept on the tensor)."""
        v = t._view
        if v is None:
            size = t._dtype.itemsize
            v = t._view = np.ndarray(t._shape, t._dtype.np, self._bytes(t._buf), t._offset * size,
                                     tuple(s * size for s in t._strides))
        return v

    host_view = native

    def alloc_tensor(self, shape, dtype):
        if self.arena is not None:
            return Client.alloc_tensor(self, shape, dtype)
        try:
            arr = np.empty(shape, dtype.np)
        except MemoryError:
            raise MemoryError(f"cpu: cannot allocate an array of shape {shape} and dtype {dtype.name}") from None
        return self.allocator.track(arr, arr.nbytes), arr

    def adopt(self, a: np.ndarray) -> Tensor:
        """A tensor over the memory of the host array ``a``, without a copy (C-contiguous, writable only)."""
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise ValueError("asarray: copy=False needs a C-contiguous, writable host array; this one is "
                             f"{'not C-contiguous' if not a.flags.c_contiguous else 'read-only'}")
        dtype = dt.from_numpy(a.dtype)
        # no owner: the memory belongs to ``a`` (kept alive by the handle), not to our allocator
        buf = Buffer(a.reshape(-1), a.nbytes, None)
        return Tensor(buf, dtype, a.shape, contiguous_strides(a.shape), 0, self.device, a)

    @staticmethod
    def _bytes(buf: Buffer) -> np.ndarray:
        h = buf.handle
        return h if h.dtype == np.uint8 and h.ndim == 1 else h.reshape(-1).view(np.uint8)

    def launch(self, kernel: str, inputs: Sequence, outputs: Sequence[Tensor], params: dict) -> None:
        fn = self.kernels[kernel]
        ins = []
        for t in inputs:
            if type(t) is Tensor:
                v = t._view
                ins.append(v if v is not None else self.native(t))
            else:
                ins.append(t)
        outs = []
        for t in outputs:
            v = t._view
            outs.append(v if v is not None else self.native(t))
        fn(ins, outs, params)
        if self._recording is not None:
            self._recording.append((fn, ins, outs, params))

    def copy_to_device(self, host: np.ndarray, dst: Buffer, dst_offset: int = 0) -> None:
        self._bytes(dst)[dst_offset:dst_offset + host.nbytes] = host.reshape(-1).view(np.uint8)

    def copy_from_device(self, src: Buffer, src_offset: int, out: np.ndarray) -> None:
        out.reshape(-1).view(np.uint8)[:] = self._bytes(src)[src_offset:src_offset + out.nbytes]

    def copy_within_device(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int, nbytes: int) -> None:
        self._bytes(dst)[dst_offset:dst_offset + nbytes] = self._bytes(src)[src_offset:src_offset + nbytes]

    def copy_strided(self, src: Tensor, dst: Tensor) -> None:
        np.copyto(self.native(dst), self.native(src))

    def dlpack(self, t: Tensor, **kwargs):
        return self.native(t).__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def begin_capture(self) -> None:
        self._recording = []

    def end_capture(self) -> CpuGraph:
        steps, self._recording = self._recording, None
        return CpuGraph(steps)

    def abort_capture(self) -> None:
        self._recording = None


class CpuRuntime(Runtime):
    name = "cpu"
    supports_graph_capture = True

    def device_count(self) -> int:
        return 1

    def create_client(self, index: int) -> CpuClient:
        from ..._device import parse_device
        return CpuClient(parse_device("cpu"))


def create_runtime() -> CpuRuntime:
    return CpuRuntime()
