"""The CPU runtime: host memory, NumPy kernels, and capture as a list of prebound NumPy calls.

Threads: launches take no lock, so NumPy runs in several threads at once (it releases the GIL in its
loops); NumPy's floating-point error state is per thread (a context variable). A capture records the
launches of its own thread only, and two captures of the device take turns (``_capture_lock``).
"""

from __future__ import annotations

import contextvars
import threading
from typing import Sequence

import numpy as np

from ... import _dtypes as dt
from ...runtime import Allocator, Buffer, Client, Graph, HostInterop, Runtime
from ..._tensor import Tensor, _size, contiguous_strides
from ...kernels import CHECK_LAUNCHES
from ..array_module_kernels import make_kernels, native_views


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

    # the accounting of Allocator.deallocate without the call to the no-op _raw_free: this runs once per
    # temporary, on the eager path's critical path
    deallocate = Allocator._untrack


try:
    # NumPy 2 keeps its floating-point error state in a context variable; setting it directly costs a
    # fraction of entering np.errstate, which matters once per launch
    from numpy._core._ufunc_config import _extobj_contextvar as _NP_ERRSTATE
    with np.errstate(all="ignore"):
        _IGNORE = _NP_ERRSTATE.get()
except ImportError:  # a NumPy without it: the public (slower) way
    _NP_ERRSTATE = None


class _Quiet(threading.local):
    """The calling thread's quiet context: made once per thread, NumPy's error state "ignore" in it and no
    other context variable (only kernels run in it). The same as numr_array._speedups uses."""

    def __init__(self) -> None:
        ctx = contextvars.Context()
        ctx.run(_NP_ERRSTATE.set, _IGNORE)
        self.run = ctx.run


_quiet = _Quiet() if _NP_ERRSTATE is not None else None


def _quietly(run, *args) -> None:
    """Run ``run(*args)`` with NumPy's floating-point warnings off: like CuPy and WebGPU kernels, CPU
    kernels return inf/NaN for invalid operations without warning (the standard's special cases). The
    error state is set once per thread, in its quiet context, which each call enters (a context switch, no
    set and reset); a call already inside it (a kernel's own launch) runs as it is."""
    if _quiet is None:
        with np.errstate(all="ignore"):
            run(*args)
        return
    if _NP_ERRSTATE.get() is _IGNORE:
        run(*args)
        return
    _quiet.run(run, *args)


class CpuGraph(Graph):
    """The launches of a capture, each bound to its kernel and its NumPy views, replayed in order."""

    def __init__(self, steps: list):
        self.steps = steps

    def replay(self) -> None:
        _quietly(self._run)

    def _run(self) -> None:
        for kernel, ins, outs, params in self.steps:
            kernel(ins, outs, params)


class CpuClient(Client, HostInterop):
    def __init__(self, device):
        self.device = device
        self.allocator = CpuAllocator()
        self.kernels = make_kernels(np)
        self._recording: list | None = None
        self._recorder: int | None = None  # the ident of the capturing thread
        self._capture_lock = threading.Lock()  # held by a capture from begin_capture to end/abort_capture

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
            # the handle itself as the buffer (it is C-contiguous, typed or bytes): no byte view made per view
            v = t._view = np.ndarray(t._shape, t._dtype.np, t._buf.handle, t._offset * size,
                                     tuple([s * size for s in t._strides]))
        return v

    host_view = native

    def alloc_tensor(self, shape, dtype):
        if self.arena is not None and self._recorder == threading.get_ident():
            return Client.alloc_tensor(self, shape, dtype)
        try:
            arr = np.empty(shape, dtype.np)
        except (MemoryError, ValueError):  # ValueError: NumPy's "array is too big" (beyond intp bytes)
            raise MemoryError(f"cpu: cannot allocate an array of shape {shape} and dtype {dtype.name}") from None
        return self.allocator.track(arr, arr.nbytes), arr

    def adopt(self, a: np.ndarray) -> Tensor:
        """A tensor over the memory of the host array ``a``, in ``a``'s own layout, without a copy.

        The buffer is the span of bytes from ``a``'s lowest to its highest element address; its handle
        keeps ``a``'s memory alive, and the memory stays its owner's (no allocator accounts for it).
        ValueError for a layout that strides in part-elements.
        """
        dtype = dt.from_numpy(a.dtype)
        size = a.itemsize
        if any(s % size for s in a.strides):
            raise ValueError(f"asarray: the host array's strides {a.strides} are not whole {dtype.name} elements")
        if a.size == 0:
            return Tensor(Buffer(np.empty(0, np.uint8), 0, None), dtype, a.shape, contiguous_strides(a.shape),
                          0, self.device)
        lowest = tuple(n - 1 if s < 0 else 0 for n, s in zip(a.shape, a.strides))
        span = size + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides))
        first = a[tuple(slice(i, i + 1) for i in lowest) + (...,)].reshape(1).view(np.uint8)
        memory = np.lib.stride_tricks.as_strided(first, shape=(span,), strides=(1,), writeable=a.flags.writeable)
        strides = tuple(s // size for s in a.strides)
        offset = sum((n - 1) * -s for n, s in zip(a.shape, strides) if s < 0)
        return Tensor(Buffer(memory, span, None), dtype, a.shape, strides, offset, self.device, a)

    @staticmethod
    def _bytes(buf: Buffer) -> np.ndarray:
        h = buf.handle
        return h if h.dtype == np.uint8 and h.ndim == 1 else h.reshape(-1).view(np.uint8)

    def launch(self, kernel: str, inputs: Sequence, outputs: Sequence[Tensor], params: dict) -> None:
        fn = self.kernels[kernel]
        ins, outs = native_views(self.native, inputs, outputs)
        _quietly(fn, ins, outs, params)
        recording = self._recording
        if recording is not None and self._recorder == threading.get_ident():
            recording.append((fn, ins, outs, params))

    def bind(self, kernel: str, params: dict):
        """``run(inputs, outputs)``: ``launch(kernel, inputs, outputs, params)`` with the kernel looked up
        once, for the namespace's per-signature plans; a ufunc kernel (of one output) is called directly."""
        fn = self.kernels[kernel]
        ufunc = getattr(fn, "ufunc", None)
        native = self.native

        def run(inputs: Sequence, outputs: Sequence[Tensor]) -> None:
            ins = []
            for t in inputs:
                if type(t) is Tensor:
                    v = t._view
                    ins.append(v if v is not None else native(t))
                else:
                    ins.append(t)
            o = outputs[0]
            ov = o._view
            if ov is None:
                ov = native(o)
            if ufunc is None:
                _quietly(fn, ins, [ov], params)
            else:
                _quietly(ufunc, *ins, ov)  # out positionally: NumPy parses no keywords
            recording = self._recording
            if recording is not None and self._recorder == threading.get_ident():
                recording.append((fn, ins, [ov], params))

        return run

    def ufunc_launch(self, kernel: str, dtypes: Sequence[np.dtype], result: np.dtype) -> tuple | None:
        """The eager launch of ``kernel`` on operands of the NumPy ``dtypes`` (arrays, or NumPy scalars of
        the operand's dtype) as numr_array._speedups runs it: (ufunc, allocator, view maker, NumPy's
        error-state context variable, its "ignore all" value, numpy.empty), or None where that launch is not
        one ufunc call whose own result (of dtype ``result``) is the kernel's, or launches are checked.

        The ufunc's result, or numpy.empty's, becomes the tensor's buffer, accounted as ``alloc_tensor``
        accounts it; an ``out=`` is written directly only where ``writes_directly`` says so."""
        fn = self.kernels[kernel]
        ufunc = getattr(fn, "fresh_ufunc", None)
        if ufunc is None or _NP_ERRSTATE is None or CHECK_LAUNCHES:
            return None
        try:
            if ufunc.resolve_dtypes((*dtypes, None))[-1] != result:
                return None
        except (TypeError, ValueError):  # NumPy has no loop for them (the kernel converts first)
            return None
        allocator, native, empty = self.host_parts()
        return ufunc, allocator, native, _NP_ERRSTATE, _IGNORE, empty

    def reduce_launch(self, kernel: str, params: dict, result: np.dtype, count: int) -> tuple | None:
        """The eager launch of the reduction ``kernel`` (sum, prod, max, min, mean) with ``params`` into a
        new result of NumPy dtype ``result``, reducing ``count`` elements per result element, as
        numr_array._speedups runs it: (NumPy's error-state context variable, its "ignore all" value,
        ``ufunc.reduce``, the axes, the accumulation dtype (None: NumPy's default), keepdims, whether the
        result is accumulated in that dtype and then rounded once to ``result`` (a wider product), and None
        or (numpy.true_divide, the count as numpy.intp) to divide a mean's sum by in place): the steps of the
        NumPy functions the kernels call. None where the kernel is not one of those, or launches are
        checked."""
        ufunc = getattr(self.kernels[kernel], "reduce_ufunc", None)
        if ufunc is None or _NP_ERRSTATE is None or CHECK_LAUNCHES:
            return None
        acc = None
        if kernel == "sum":
            acc = result
        elif kernel == "prod":
            acc = params["acc"].np
        divide = (np.true_divide, np.intp(count)) if kernel == "mean" else None
        return (_NP_ERRSTATE, _IGNORE, ufunc.reduce, params["axis"], acc, params["keepdims"],
                acc is not None and acc != result, divide)

    def where_launch(self):
        """The eager launch of the where kernel on a condition and two arrays of the result's dtype, as
        numr_array._speedups runs it: numpy.where, whose own result becomes the tensor (the kernel's copies
        into a result give its values); None where launches are checked."""
        return None if CHECK_LAUNCHES else np.where

    def host_parts(self) -> tuple:
        """(allocator, view maker, numpy.empty): what numr_array._speedups needs to make a result of this
        client as ``alloc_tensor`` does (outside a capture): a NumPy array, accounted by the allocator."""
        return self.allocator, self.native, np.empty

    @staticmethod
    def writes_directly(shape: tuple[int, ...], strides: tuple[int, ...], dtype) -> bool:
        """Whether the ufunc kernels write an ``out=`` of this layout directly (the condition of
        array_module_kernels.elementwise._numpy_ufunc): C-contiguous, not one complex element."""
        return strides == contiguous_strides(shape) and not (dtype.kind == "c" and
                                                              _size(shape) == 1)

    def copy_to_device(self, host: np.ndarray, dst: Buffer, dst_offset: int = 0) -> None:
        dst.mark_constant()  # not recorded: inside a capture these bytes are a constant of the graph
        self._bytes(dst)[dst_offset:dst_offset + host.nbytes] = host.reshape(-1).view(np.uint8)

    def copy_from_device(self, src: Buffer, src_offset: int, out: np.ndarray) -> None:
        out.reshape(-1).view(np.uint8)[:] = self._bytes(src)[src_offset:src_offset + out.nbytes]

    def copy_strided(self, src: Tensor, dst: Tensor) -> None:
        self.launch("copy", (src,), (dst,), {})  # a kernel launch, so a capture records it like any other

    def dlpack(self, t: Tensor, *, stream=None, max_version=None, copy=None):
        given = (("stream", stream), ("max_version", max_version), ("copy", copy))
        return self.native(t).__dlpack__(**{k: v for k, v in given if v is not None})

    def _begin_recording(self) -> None:
        self._capture_lock.acquire()
        self._recorder = threading.get_ident()
        self._recording = []

    def _end_recording(self) -> CpuGraph:
        steps = self._recording
        self._abort_recording()
        return CpuGraph(steps)

    def _abort_recording(self) -> None:
        if self._recorder != threading.get_ident():  # no capture of this thread in progress
            return
        self._recording = None
        self._recorder = None
        self._capture_lock.release()


class CpuRuntime(Runtime):
    name = "cpu"

    def device_count(self) -> int:
        return 1

    def create_client(self, device) -> CpuClient:
        return CpuClient(device)


def create_runtime() -> CpuRuntime:
    return CpuRuntime()
