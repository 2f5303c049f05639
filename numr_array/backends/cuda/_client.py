"""The CUDA client, after numr's CudaClient: one compute stream on which every kernel runs, a copy stream
for device-to-host copies that overlap compute, CuPy's memory pool with a release threshold, and stream
capture of the compute stream into a CUDA graph.

Device loss: a sticky CUDA error (an illegal address or a trap inside a kernel, ...) leaves the process's
context unusable for good. The entry points hand every CuPy CUDA error to ``raise_if_lost``, which
marks the client lost (not recoverable) and raises DeviceLostError; other devices are not affected.

Threads: every thread's work goes to the one compute stream (made current on each thread as it first
launches), so work is ordered by the order of its calls. ``CudaClient._lock`` (a re-entrant lock) is held
by each launch, copy, synchronisation, graph launch and export, and by a capture from ``begin_capture``
to ``end_capture``/``abort_capture``: a stream capture records whatever any thread puts on the stream
(and a synchronisation of a capturing stream breaks the capture), so while one thread captures, the
others' calls wait. It also guards the capture state (``_capturing``, the pending ``FusedRun``) and the
cuBLAS handle's creation. Allocation takes no lock: CuPy's pool has its own, and the direct launcher's
argument slots are per thread.

Several GPUs: a client's work runs with its GPU current. CuPy's current stream is per device and thread, so
the check every launch makes (is the compute stream current?) also finds the current device right, and
otherwise the call makes the GPU and the stream current for its duration (``run``). A copy between two GPUs
(``copy_to_peer``) goes device to device, peer to peer where the hardware has it (``peer_access``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import Sequence

import cupy
import numpy as np
from cupy.cuda import runtime

from ... import errors
from ... import _dtypes as dt
from ..._tensor import Tensor, contiguous_strides
from ...kernels import CHECK_LAUNCHES
from ...runtime import Allocator, Buffer, Client, CudaInterop, Graph, PeerCopy, entry_point, renewed
from ..array_module_kernels import make_kernels, native_views
from ._blas import GEMM_DEFAULT_ALGO, Cublas, blas_types, plan_product, workspace_bytes
from ._direct_elementwise import BINARY_OPS as DIRECT_BINARY, STORE_MAX, UNARY as DIRECT_UNARY, DirectLauncher, FusedRun
from ._cupy_module import make_module
from ._kernels import kernels as cuda_kernels
from ._subnormals import keep_float32_subnormals
from ._direct_elementwise import FUSABLE  # (a line of its own: other branches edit the import above)
from ._direct_elementwise import BLOCK as DIRECT_BLOCK, strided_layout
from ._columns import FUSED_ROW_OPS, fused_rows_source, rows_plan, trailing_rows
from ._matvec import THREADS as MATVEC_THREADS, form as matvec_form, supports as matvec_supports

_FUSED_NOT_BINARY = FUSABLE - DIRECT_BINARY
_get_device = runtime.getDevice
_memcpy_peer = runtime.memcpyPeerAsync  # (a name of this module's: the multi-GPU tests count its calls)
_current_stream = cupy.cuda.get_current_stream
_DEFAULT_STREAMS = (0, runtime.streamLegacy, runtime.streamPerThread)
_OOM = cupy.cuda.memory.OutOfMemoryError
#: the dtypes whose matrix products _speedups.c calls cuBLAS for (product_launch)
_BLAS_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
#: the codes of the direct launches' operand forms in _speedups.c (FORM_*)
_FORM_CODES = {"u": 0, "tt": 1, "ts": 2, "st": 3, "tp": 4, "pt": 5, "r": 6, "gemv": 7, "gemm": 8, "bc": 9}


def _operand_form(kernel: str, out_shape: tuple, operands: tuple) -> tuple | None:
    """(form, element count, per operand the strides it must have, the strided layout or None) of a direct
    launch of ``kernel`` on ``operands`` (``direct_launch``'s) into a C-contiguous ``out_shape``: "r" a sum of
    all of one dense array, "u" one dense array, "tt" two, "ts"/"st" a dense array and a scalar, "tp"/"pt" a
    dense array and one element, "bc" two arrays of any strides (broadcast ones too); None for anything else."""
    dense = contiguous_strides(out_shape)
    n = math.prod(out_shape)
    if kernel == "sum":
        (shape, strides), = operands
        return ("r", math.prod(shape), (strides,), None) if strides == contiguous_strides(shape) else None
    if len(operands) == 1:
        (shape, strides), = operands
        return ("u", n, (strides,), None) if shape == out_shape and strides == dense else None
    a, b = operands
    whole = [x is not None and x[0] == out_shape and x[1] == dense for x in (a, b)]
    if a is None or b is None:
        return None if not (whole[0] or whole[1]) else ("st" if a is None else "ts", n,
                                                          (None, dense) if a is None else (dense, None), None)
    if whole[0] and whole[1]:
        return "tt", n, (dense, dense), None
    one = [math.prod(x[0]) == 1 for x in (a, b)]
    if whole[0] and one[1]:
        return "tp", n, (dense, None), None
    if whole[1] and one[0]:
        return "pt", n, (None, dense), None
    layout = strided_layout(out_shape, _broadcast_strides(*a, out_shape), _broadcast_strides(*b, out_shape))
    return None if layout is None else ("bc", n, (a[1], b[1]), layout)


def _broadcast_strides(shape: tuple, strides: tuple, out_shape: tuple) -> tuple:
    """The element strides of an operand of ``shape`` and ``strides`` broadcast to ``out_shape`` (0 along the
    axes it is broadcast on)."""
    lead = len(out_shape) - len(shape)
    return (0,) * lead + tuple(0 if d == 1 and o != 1 else s for d, s, o in zip(shape, strides, out_shape[lead:]))


@functools.cache
def _driver_address(name: str) -> int | None:
    """The address of the CUDA driver's entry point ``name`` (in the libcuda CuPy has loaded), for the calls
    numr_array._speedups makes; None where it is not found (they then go through CuPy's)."""
    try:
        return ctypes.cast(getattr(ctypes.CDLL("libcuda.so.1"), name), ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None


def _launch_kernel_address() -> int | None:
    return _driver_address("cuLaunchKernel")
_DLPACK_CUDA = 2  # kDLCUDA (dlpack.h)
_NO_DEVICE_SWITCH = contextlib.nullcontext()
_DEFAULT_RELEASE_THRESHOLD_MB = 512
#: what CuPy raises for a failed runtime or driver call (``.status`` is the CUDA error code)
_CUDA_ERRORS = (runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError)
#: the sticky errors (same codes in the runtime and driver APIs): the context cannot be used again
STICKY_ERRORS = {
    214: "cudaErrorECCUncorrectable", 700: "cudaErrorIllegalAddress", 702: "cudaErrorLaunchTimeout",
    710: "cudaErrorAssert", 714: "cudaErrorHardwareStackError", 715: "cudaErrorIllegalInstruction",
    716: "cudaErrorMisalignedAddress", 717: "cudaErrorInvalidAddressSpace", 718: "cudaErrorInvalidPc",
    719: "cudaErrorLaunchFailure",
}
#: cached memory above the threshold is released at the first synchronisation after it has stayed above it
#: this long, so that a hot loop which frees and re-allocates a large block each step does not thrash
RELEASE_DELAY_S = 1.0


#: (device, peer) -> whether ``device`` reaches ``peer``'s memory directly; access is enabled on first asking
_peer_access: dict[tuple[int, int], bool] = {}


def peer_access(device: int, peer: int) -> bool:
    """Whether GPU ``device`` has direct (NVLink or PCIe peer-to-peer) access to GPU ``peer``'s memory, as
    ``cudaDeviceCanAccessPeer`` says; on first asking, that access is enabled for the process. Without it a
    copy between the two still runs device to device, staged by the driver."""
    ok = _peer_access.get((device, peer))
    if ok is None:
        ok = device != peer and bool(runtime.deviceCanAccessPeer(device, peer))
        if ok:
            with cupy.cuda.Device(device):
                runtime._deviceEnsurePeerAccess(peer)  # (CuPy's own call: tolerates access already enabled)
        _peer_access[(device, peer)] = ok
    return ok


def release_threshold_bytes() -> int:
    """NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB (MiB, default 512) in bytes: how much freed memory the pool may
    keep cached; beyond it, cached blocks go back to the driver at a synchronisation (see RELEASE_DELAY_S)."""
    raw = os.environ.get("NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB")
    try:
        mib = float(raw) if raw is not None else _DEFAULT_RELEASE_THRESHOLD_MB
    except ValueError:
        raise ValueError(f"NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB must be a number of MiB, got {raw!r}") from None
    return int(max(mib, 0) * 1024 * 1024)


#: a client entry point: DeviceLostError before any work once the device is lost, and in place of a sticky
#: CUDA error (launch and alloc_tensor, the per-op path, do the same inline)
_entry = entry_point(_CUDA_ERRORS)


class CudaAllocator(Allocator):
    """Device memory from CuPy's pool; a buffer's handle is a ``cupy.cuda.MemoryPointer``, whose block
    goes back to the pool when its last reference (the Buffer's, a CuPy view's, a DLPack capsule's) goes."""

    def __init__(self, client: "CudaClient"):
        super().__init__()
        self._client = client

    def _raw_allocate(self, nbytes: int):
        return self._client.malloc(nbytes)

    def _raw_free(self, handle, nbytes: int) -> None:
        return None  # the MemoryPointer returns the block to the pool when its references go

    def pooled_bytes(self) -> int:
        """The free bytes CuPy's pool caches on this GPU (CuPy code of the process shares the pool)."""
        c = self._client
        with c.on_device():
            return c.pool.free_bytes()

    def release_pool(self) -> None:
        """Free the pool's cached blocks on this GPU (cudaFree waits for the device; the client's lock keeps
        it out of another thread's capture)."""
        c = self._client
        with c._lock, c.on_device():
            c.pool.free_all_blocks()
            c._over_threshold_since = None


class CudaGraph(Graph):
    """An instantiated CUDA graph, launched on the compute stream it was captured from."""

    def __init__(self, client: "CudaClient", graph):
        self._client = client
        self._graph = graph

    def replay(self) -> None:
        c = self._client
        try:
            with c._lock, c.on_device():
                self._graph.launch(c.stream)
        except _CUDA_ERRORS as e:
            c.raise_if_lost(e)
            raise

    def release(self) -> None:
        self._graph = None  # CuPy's Graph destroys the exec and the graph when it goes


@dataclass(frozen=True)
class CudaRawHandle:
    """What a custom kernel needs: the device, and the stream numr's work is ordered on."""

    device: cupy.cuda.Device
    stream: cupy.cuda.Stream
    copy_stream: cupy.cuda.Stream


class CudaClient(Client, CudaInterop, PeerCopy):
    """One GPU: its streams, memory, kernels and capture state."""

    recoverable = False  # a sticky error poisons the process's CUDA context

    def __init__(self, device, index: int):
        self.device = device
        self.index = index
        self._cp_device = cupy.cuda.Device(index)
        with self._cp_device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.copy_stream = cupy.cuda.Stream(non_blocking=True)
            #: recorded on the compute stream where another GPU's stream must wait for it (copy_to_peer)
            self._order_event = cupy.cuda.Event(disable_timing=True)
            # current for this GPU on the creating thread: launches then need no stream switch, and CuPy code
            # the user interleaves (on this thread) is ordered with numr's work; elsewhere launches switch to it
            self.stream.use()
        #: guards launches, copies, synchronisation and capture state (see the module's docstring)
        self._lock = threading.RLock()
        self.pool = cupy.get_default_memory_pool()
        self.release_threshold = release_threshold_bytes()
        self.release_delay = RELEASE_DELAY_S
        self._over_threshold_since: float | None = None
        self.allocator = CudaAllocator(self)
        self._blas: Cublas | None = None
        self._capturing = False
        self._arena_allocator = None
        #: whether CuPy's kernels keep float32 subnormals (as the CPU does); see _subnormals
        self.keeps_float32_subnormals = keep_float32_subnormals()
        self._direct = DirectLauncher(self.stream)
        m = make_module(cupy, self.blas)
        self.kernels = make_kernels(m, cuda_kernels(m, self._direct, self.pool))
        self._run: FusedRun | None = None  # direct ops captured but not yet put into the graph
        #: a complete run held back until the next one is complete too (_retire), with its stores' arena marks;
        #: set only while _run is set, so ``_run is not None`` tells whether anything is pending
        self._held: tuple[FusedRun, dict] | None = None
        self._closed_arena = None  # the ending capture's arena, while end_capture launches the pending runs

    # --- device, streams, memory --------------------------------------------------------------------
    def on_device(self):
        """A context making this GPU current (nothing to do, the common case, when it already is)."""
        return _NO_DEVICE_SWITCH if _get_device() == self.index else self._cp_device

    @property
    def raw_handle(self) -> CudaRawHandle:
        return CudaRawHandle(self._cp_device, self.stream, self.copy_stream)

    def supports_dtype(self, dtype) -> bool:
        return True

    def raise_if_lost(self, e: BaseException) -> None:
        """Raise DeviceLostError from ``e`` (marking this client lost for good) if the device is lost: already
        known, or ``e`` is a sticky CUDA error. The one place CUDA errors become DeviceLostError."""
        if self.lost is None:
            status = getattr(e, "status", None)
            if not isinstance(e, _CUDA_ERRORS) or status not in STICKY_ERRORS:
                return
            self.mark_lost(f"{e}; {STICKY_ERRORS[status]} is a sticky CUDA error: the context is unusable until "
                           "the process exits")
        raise renewed(self.lost) from e

    @_entry
    def malloc(self, nbytes: int):
        """A block of CuPy's pool for this stream; on out-of-memory, cached blocks are freed and the
        allocation tried once more, then MemoryError names the size (and the process stays usable)."""
        try:
            return self._pool_malloc(nbytes)
        except _OOM:
            pass
        if not self._capturing:  # freeing blocks synchronises the device, which a capture cannot take
            gc.collect()
            with self.on_device():
                self.pool.free_all_blocks()
            try:
                return self._pool_malloc(nbytes)
            except _OOM:
                pass
        raise MemoryError(f"{self.device}: out of device memory allocating {nbytes} bytes "
                          f"({nbytes / 2**20:.1f} MiB)")

    def _pool_malloc(self, nbytes: int):
        # the pool files blocks by the current stream: ours, so that reuse is ordered by the compute stream
        return self.run(self.pool.malloc, nbytes)

    def run(self, fn, *args):
        """``fn(*args)`` with this GPU current and the compute stream current on it."""
        if _current_stream() is self.stream or self._adopt_current():
            return fn(*args)
        with self.on_device(), self.stream:  # another stream was chosen: switch for this call only
            return fn(*args)

    def _adopt_current(self) -> bool:
        """Make the compute stream current if this GPU is, and no stream was chosen on it (the default
        stream is current, as after any ``with stream:`` block ends); False when the caller must switch."""
        if _get_device() == self.index and _current_stream().ptr in _DEFAULT_STREAMS:
            self.stream.use()
            return True
        return False

    def alloc_tensor(self, shape, dtype):
        if self.arena is not None:
            return Client.alloc_tensor(self, shape, dtype)
        n = dtype.itemsize
        for d in shape:
            n *= d
        mp = None
        if _current_stream() is self.stream or self._adopt_current():
            try:  # the fast path: a block of CuPy's pool filed under our (current) stream; the CuPy view of
                # the tensor is made later, only if a CuPy kernel needs one (direct launches do not)
                mp = self.pool.malloc(n)
            except _OOM:
                pass
            except _CUDA_ERRORS as e:
                self.raise_if_lost(e)
                raise
        if mp is None:  # another stream is current, or out of memory: the path that switches and retries
            mp = self.malloc(n)
        return self.allocator.track(mp, n), None

    def native(self, t: Tensor):
        """The CuPy view of ``t`` (made once, then kept on the tensor)."""
        if self._run is not None:  # CuPy work on t inside the capture must come after the ops pending for it
            self._flush_run()
        v = t._view
        if v is None:
            size = t._dtype.itemsize
            mp = t._buf.handle
            if t._offset:
                mp = mp + t._offset * size
            v = t._view = cupy.ndarray(t._shape, t._dtype.np, mp, tuple(s * size for s in t._strides))
        return v

    def blas(self) -> Cublas:
        """This client's cuBLAS handle, bound to the compute stream with its own workspace (made once,
        outside any capture: making it allocates).

        The workspace is a cudaMalloc of its own, outside CuPy's pool, as the workspace of CuPy's own cuBLAS
        handle is: it lives as long as the client, and the pool's figures (``memory_stats``, CuPy's hooks)
        count the tensors alone, on both sides."""
        b = self._blas
        if b is None:
            nbytes = workspace_bytes(self._cp_device.compute_capability)
            with self.on_device():
                for attempt in (0, 1):
                    try:
                        ws = cupy.cuda.memory.MemoryPointer(cupy.cuda.memory.Memory(nbytes), 0)
                        break
                    except _CUDA_ERRORS as e:
                        self.raise_if_lost(e)
                        if attempt or self._capturing:
                            raise MemoryError(f"{self.device}: out of device memory allocating cuBLAS's "
                                              f"workspace ({nbytes / 2**20:.1f} MiB)") from e
                        self.pool.free_all_blocks()  # cached blocks may be what the driver lacks
                b = Cublas(self.stream.ptr, ws, nbytes)
            self._blas = b
        return b

    def _trim(self) -> None:
        """Give cached free blocks back to the driver once they have exceeded the release threshold for
        ``release_delay`` seconds (checked at synchronisations, where freeing costs no extra stall)."""
        if self.pool.free_bytes() <= self.release_threshold:
            self._over_threshold_since = None
            return
        now = time.monotonic()
        if self._over_threshold_since is None:
            self._over_threshold_since = now
        if now - self._over_threshold_since >= self.release_delay:
            self.pool.free_all_blocks()
            self._over_threshold_since = None

    # --- synchronisation and copies ---------------------------------------------------------------
    @_entry
    def synchronize(self) -> None:
        with self._lock:
            if self._capturing:
                errors.check_host_read(self.device, "synchronize")
            with self.on_device():
                self.stream.synchronize()
                self._trim()

    @_entry
    def copy_to_device(self, host: np.ndarray, dst: Buffer, dst_offset: int = 0) -> None:
        n = host.nbytes
        if not n:
            return
        dst.mark_constant()  # (first: inside a capture, the arena may give dst memory of its own)
        ptr = dst.handle.ptr + dst_offset
        with self._lock, self.on_device():
            if self._capturing:
                # a capturing stream cannot take a host copy; an upload inside a capture becomes a constant of
                # the graph, written now on the copy stream (begin_capture left no eager work in flight)
                runtime.memcpyAsync(ptr, host.ctypes.data, n, runtime.memcpyHostToDevice, self.copy_stream.ptr)
                self.copy_stream.synchronize()
            elif n <= STORE_MAX:  # (a scalar) its bytes as kernel arguments: cheaper than staging pageable memory
                self._direct.store(ptr, host)
            else:
                # pageable source: returns once the bytes are staged, ordered after the compute stream's work
                runtime.memcpyAsync(ptr, host.ctypes.data, n, runtime.memcpyHostToDevice, self.stream.ptr)

    @_entry
    def copy_from_device(self, src: Buffer, src_offset: int, out: np.ndarray) -> None:
        n = out.nbytes
        if not n:
            return
        with self._lock, self.on_device():
            runtime.memcpyAsync(out.ctypes.data, src.handle.ptr + src_offset, n, runtime.memcpyDeviceToHost,
                                self.stream.ptr)
            self.stream.synchronize()

    def copy_strided(self, src: Tensor, dst: Tensor) -> None:
        self.launch("copy", (src,), (dst,), {})

    @_entry
    def copy_to_peer(self, src: Tensor, dst: Tensor, peer: "CudaClient") -> None:
        """Copy the dense ``src`` into ``dst`` on ``peer``'s GPU with one ``cudaMemcpyPeerAsync`` on the peer's
        compute stream: after this GPU's work so far (an event), and before this GPU's next work (an event
        back), so that ``src``'s block, which the pool files under this GPU's stream, is not reused before the
        copy has read it. Each client's lock is held only for its own steps, never both at once: a capture,
        which holds its device's lock for the whole block, may itself use the other GPU."""
        size = src._dtype.itemsize
        n = size
        for d in src._shape:
            n *= d
        if not n:
            return
        peer_access(peer.index, self.index)  # (both ways: the copy engines of either GPU may serve it)
        peer_access(self.index, peer.index)
        with self._lock, self.on_device():
            runtime.eventRecord(self._order_event.ptr, self.stream.ptr)
        try:
            with peer._lock, peer.on_device():
                runtime.streamWaitEvent(peer.stream.ptr, self._order_event.ptr)
                _memcpy_peer(dst._buf.handle.ptr + dst._offset * size, peer.index,
                             src._buf.handle.ptr + src._offset * size, self.index, n, peer.stream.ptr)
                runtime.eventRecord(peer._order_event.ptr, peer.stream.ptr)
        except _CUDA_ERRORS as e:
            peer.raise_if_lost(e)
            raise
        with self._lock, self.on_device():
            runtime.streamWaitEvent(self.stream.ptr, peer._order_event.ptr)

    # --- kernels -------------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Sequence, outputs: Sequence[Tensor], params: dict) -> None:
        lock = self._lock
        lock.acquire()  # (acquire/release: half the cost of ``with``, on every launch)
        try:
            # inside a capture every element-wise op of real operands joins the pending fused run (the binary
            # ones below, the rest here)
            if self._capturing and kernel in _FUSED_NOT_BINARY and self._record(kernel, inputs, outputs):
                return
            if kernel in DIRECT_BINARY:
                if self._capturing:
                    if self._record(kernel, inputs, outputs):
                        return
                    # not fusable (a broadcast, a strided view, pow): its direct kernel, one node after the run
                    if self._run is not None:
                        self._flush_run()
                    if self._direct.try_binary(kernel, inputs, outputs):
                        return
                elif _current_stream() is self.stream and self._direct.try_binary(kernel, inputs, outputs):
                    return
            elif kernel in DIRECT_UNARY and (self._capturing or _current_stream() is self.stream):
                if self._run is not None:  # (a capture's pending run, which this op did not join above)
                    self._flush_run()
                if self._direct.try_unary(kernel, inputs, outputs):
                    return
            elif kernel == "copy" and not self._capturing and _current_stream() is self.stream \
                    and self._direct.try_copy(inputs[0], outputs[0]):
                return
            elif kernel == "sum" and not self._capturing and _current_stream() is self.stream \
                    and self._direct.try_sum(inputs[0], outputs[0], params["axis"]):
                return
            elif self._capturing and kernel in FUSED_ROW_OPS and self._run is not None \
                    and self._record_reduction(kernel, inputs, outputs, params):
                return
            elif kernel == "matmul" and (self._capturing or _current_stream() is self.stream):
                if self._capturing and self._record_matvec(inputs, outputs):
                    return
                if self._run is not None:
                    self._flush_run()
                # (product_launch plans the same kernels)
                if self._direct.try_dot(inputs, outputs) or self._direct.try_matvec(inputs, outputs):
                    return
            if self._run is not None:
                self._flush_run()
            fn = self.kernels[kernel]
            ins, outs = native_views(self.native, inputs, outputs)
            if self._capturing:
                return self._launch_captured(kernel, fn, ins, outs, params)
            if _current_stream() is self.stream:  # the common case, inline (the stream is per device)
                fn(ins, outs, params)
            else:
                self.run(fn, ins, outs, params)
        except _CUDA_ERRORS as e:
            self.raise_if_lost(e)
            raise
        finally:
            lock.release()

    def direct_launch(self, kernel: str, dtypes: Sequence[np.dtype], result: np.dtype, out_shape: tuple,
                      operands: tuple) -> tuple | None:
        """The eager launch of ``kernel`` on ``operands`` (per operand, in order: (shape, element strides) of an
        array, None for a Python scalar) of NumPy ``dtypes`` into a new C-contiguous result of ``out_shape`` and
        dtype ``result``, as numr_array._speedups runs it: (cuLaunchKernel's address, the direct kernel's
        CUfunction, blocks, threads, the element count, the operand form's code (``_operand_form``), the
        operands' itemsize, the result's, the scalar operand's kind, per operand the strides it must have (None
        for a scalar or a broadcast element), the strided form's layout argument, then ``_device_parts``);
        None where the direct launcher would not take such operands, the driver's entry point is not found, or
        launches are checked. The layout is _speedups.c's G_* (there: what it checks before each launch)."""
        launch = _launch_kernel_address()
        if launch is None or CHECK_LAUNCHES:
            return None
        planned = _operand_form(kernel, out_shape, operands)
        if planned is None:
            return None
        form, n, input_strides, layout = planned
        try:  # (compiles the kernel on first use)
            part = self._direct.native_part(kernel, dtypes, result, form, n)
        except _CUDA_ERRORS as e:
            self.raise_if_lost(e)
            raise
        if part is None:
            return None
        function, blocks, threads = part
        d = dtypes[0]
        kind = ord(d.kind) if d.kind == "f" or (d.kind == "i" and d.itemsize in (4, 8)) else 0
        return (launch, function, blocks, threads, n, _FORM_CODES[form], d.itemsize, result.itemsize, kind,
                input_strides, layout) + self._device_parts()

    def product_launch(self, dtypes: Sequence[np.dtype], result: np.dtype, shapes: tuple, strides: tuple,
                       out_shape: tuple) -> tuple | None:
        """matmul of two arrays of NumPy ``dtypes``, ``shapes`` and element ``strides`` into a new C-contiguous
        result of ``out_shape`` and dtype ``result``, as numr_array._speedups runs it: the G_* layout of
        ``direct_launch`` with form "gemv" or "gemm" and, as its BLAS arguments, the cuBLAS call the kernel
        makes (``_blas.plan_product``: the routine's address, the handle, the plan's integers, the data and
        compute types, the algorithm, alpha's and beta's addresses, which operand is cuBLAS's first); for a
        thin matrix (or its transpose) times a vector, the pass of ``_matvec_launch`` instead; None
        for anything but float32/float64 operands of the result's dtype that cuBLAS reads without a copy, or
        where launches are checked."""
        if CHECK_LAUNCHES or result not in _BLAS_DTYPES or dtypes[0] != result or dtypes[1] != result:
            return None
        if len(shapes[0]) == 1 and shapes[0] == shapes[1] and strides == ((1,), (1,)):
            return self._dot_launch(result, shapes[0][0])
        thin = matvec_form(shapes[0], tuple(strides[0]), shapes[1], tuple(strides[1]))
        if thin is not None and matvec_supports(result, thin[2]):
            return self._matvec_launch(result, tuple(strides), *thin)
        plan = plan_product(shapes[0], list(strides[0]), shapes[1], list(strides[1]), out_shape)
        if plan is None:
            return None
        blas = self.blas()
        dt_code, compute, one, zero = blas_types(result)
        alpha, beta = ctypes.addressof(one), ctypes.addressof(zero)
        if plan[0] == "gemv":
            routine = blas.routine("gemv", result)
            args = (routine, blas.handle.value) + plan[1:7] + (alpha, beta, plan[7])
        else:
            routine = blas.routine("gemm" if plan[12] == 1 else "gemm_batched", result)
            args = (routine, blas.handle.value) + plan[1:13] + (dt_code, compute, GEMM_DEFAULT_ALGO, alpha, beta,
                                                                plan[13])
        return (0, 0, 0, 0, math.prod(out_shape), _FORM_CODES[plan[0]], result.itemsize, result.itemsize, 0,
                tuple(strides), args) + self._device_parts()

    def _dot_launch(self, dtype: np.dtype, n: int) -> tuple | None:
        """product_launch of two dense vectors of ``n`` elements: the direct launcher's dot kernel (``try_dot``,
        which the Python path runs), in the G_* layout of a two-array kernel (words a, b, the result, n)."""
        launch = _launch_kernel_address()
        if launch is None:
            return None
        try:  # (compiles the kernel on first use)
            function = self._direct.dot_function(dtype, n)
        except _CUDA_ERRORS as e:
            self.raise_if_lost(e)
            raise
        if function is None:
            return None
        return (launch, function, 1, DIRECT_BLOCK, n, _FORM_CODES["tt"], dtype.itemsize, dtype.itemsize, 0,
                ((1,), (1,)), None) + self._device_parts()

    def _matvec_launch(self, dtype: np.dtype, strides: tuple, kind: str, n: int, d: int) -> tuple | None:
        """product_launch of a thin matrix (or its transpose) and a dense vector (``_matvec.form``): the direct
        launcher's pass (``try_matvec``, which the Python path runs), in the G_* layout of a two-array kernel
        (words a, b, the result, n)."""
        launch = _launch_kernel_address()
        if launch is None:
            return None
        try:  # (compiles the kernel on first use)
            function = self._direct.matvec_function(kind, dtype, d)
        except _CUDA_ERRORS as e:
            self.raise_if_lost(e)
            raise
        return (launch, function, self._direct.matvec_blocks(n, d), MATVEC_THREADS, n, _FORM_CODES["tt"],
                dtype.itemsize, dtype.itemsize, 0, strides, None) + self._device_parts()

    def concat_launch(self) -> tuple | None:
        """What numr_array._speedups needs to repeat a concat of dense arrays into ranges of a new result (the
        plan's other entries are the namespace's, _manipulation._concat_plan): the driver's
        cuMemcpyDtoDAsync, the compute stream's handle and object, CuPy's current-stream call, the pool's
        malloc and the client's lock (_speedups.c's DC_*); None where launches are checked or the driver's
        entry point is not found."""
        copy = _driver_address("cuMemcpyDtoDAsync_v2")
        if copy is None or CHECK_LAUNCHES:
            return None
        return copy, self.stream.ptr, self.stream, _current_stream, self.pool.malloc, self._lock

    def scalar_launch(self) -> tuple | None:
        """What numr_array._speedups needs to repeat ``asarray`` of a Python scalar (the plan's other entries are
        the namespace's, _creation._scalar_plan): cuLaunchKernel, the store kernel's CUfunction (its arguments
        carry the bytes, ``DirectLauncher.store``), the compute stream's handle and object, CuPy's
        current-stream call, the pool's malloc and the client's lock (_speedups.c's SA_*); None where launches
        are checked or the driver's entry point is not found."""
        launch = _launch_kernel_address()
        if launch is None or CHECK_LAUNCHES:
            return None
        try:  # (compiles the kernel on first use)
            function = self._direct.store_function()
        except _CUDA_ERRORS as e:
            self.raise_if_lost(e)
            raise
        return launch, function, self.stream.ptr, self.stream, _current_stream, self.pool.malloc, self._lock

    def _device_parts(self) -> tuple:
        """The G_* layout's last entries before the plan's own: the compute stream's handle and object, CuPy's
        current-stream call, the pool's malloc, the allocator and the client's lock."""
        return self.stream.ptr, self.stream, _current_stream, self.pool.malloc, self.allocator, self._lock

    @staticmethod
    def writes_directly(shape: tuple[int, ...], strides: tuple[int, ...], dtype) -> bool:
        """Whether the direct kernels write an ``out=`` of this layout (``direct_launch``): C-contiguous."""
        return strides == contiguous_strides(shape)

    def bind(self, kernel: str, params: dict):
        """``run(inputs, outputs)``: ``launch(kernel, inputs, outputs, params)`` for the namespace's per-signature
        plans (eager calls only). An op the direct launcher takes is tried there first, without the dispatch on
        the kernel's name; anything else, or an op it refuses, goes through ``launch``."""
        launch = self.launch
        direct = self._direct.try_binary if kernel in DIRECT_BINARY else \
            self._direct.try_unary if kernel in DIRECT_UNARY else None
        if direct is None:
            return lambda inputs, outputs: launch(kernel, inputs, outputs, params)
        lock = self._lock
        stream = self.stream

        def run(inputs: Sequence, outputs: Sequence[Tensor]) -> None:
            lock.acquire()
            try:
                if not self._capturing and _current_stream() is stream and direct(kernel, inputs, outputs):
                    return
            except _CUDA_ERRORS as e:
                self.raise_if_lost(e)
                raise
            finally:
                lock.release()
            launch(kernel, inputs, outputs, params)

        return run

    def _launch_captured(self, kernel: str, fn, ins, outs, params) -> None:
        try:
            self.run(fn, ins, outs, params)
        except errors.CaptureError:
            raise
        except (NotImplementedError, RuntimeError) as e:
            self.raise_if_lost(e)
            # CuPy refuses cuSOLVER/cuRAND/... on a capturing stream (NotImplementedError), and a CUDA call that
            # would synchronise invalidates the capture (CUDARuntimeError): either way this op has no graph form
            why = f"{kernel} cannot be captured on {self.device} ({type(e).__name__}: {e})"
            errors.abort_active(why)
            raise errors.CaptureError(f"{why}; move it out of the capture() block") from e

    def _record(self, kernel: str, inputs, outputs) -> bool:
        """Add a direct op to the capture's pending fused run (flushing a run it does not fit)."""
        run = self._run
        if run is not None and run.add(kernel, inputs, outputs):
            return True
        fresh = FusedRun()
        if not fresh.add(kernel, inputs, outputs):
            return False
        if run is not None:
            self._retire(run, fresh)
        self._run = fresh
        return True

    def _record_matvec(self, inputs, outputs) -> bool:
        """End the pending fused run with ``X.T @ r`` of its last result r, or start a new run with ``X @ w``
        (``FusedRun.add_tail``, ``add_head``: one pass over a thin X's rows)."""
        run = self._run
        if run is not None and run.add_tail(inputs[0], inputs[1], outputs[0]):
            return True
        fresh = FusedRun()
        if not fresh.add_head(inputs[0], inputs[1], outputs[0]):
            return False
        if run is not None:
            self._retire(run, fresh)
        self._run = fresh
        return True

    def _record_reduction(self, kernel: str, inputs, outputs, params: dict) -> bool:
        """End the pending fused run with a reduction over the trailing axes of its last result, where the
        table's kernel would be ``_columns``' row kernel (whose fold the fused kernel repeats)."""
        x, o = inputs[0], outputs[0]
        shape = trailing_rows(x._shape, params["axis"], math.prod(o._shape)) if type(x) is Tensor else None
        if shape is None:
            return False
        rows, m = shape
        plan = rows_plan(kernel, x._dtype.np, o._dtype.np, rows, m)
        if plan is None:
            return False
        source = functools.partial(fused_rows_source, kernel, x._dtype.np, plan[0], o._dtype.np)
        return self._run.add_reduction(kernel, x, o, rows, m, plan[0], plan[1], float(m), source)

    def _store_marks(self, run: FusedRun) -> dict[int, int | None]:
        """The arena's marks (``_Recycler.events``) of the blocks ``run`` stores into, by address."""
        arena = self.arena or self._closed_arena
        if arena is None:
            return {}
        events = arena._recycler.events
        blocks = {b.handle.ptr: events.get(id(b)) for b in list(arena._buffers)}
        return {ptr: blocks[ptr] for ptr in run.stored_pointers() if ptr in blocks}

    def _dead_pointers(self, run: FusedRun, marks: dict | None, readers: tuple) -> frozenset:
        """The addresses ``run`` stores into that nothing reads: the arena's blocks whose tensors have died (filed
        for reuse, or, with ``marks``, handed out or filed since), but for memory that the runs ``readers``, not
        yet launched, may read."""
        arena = self.arena or self._closed_arena
        if arena is None:
            return frozenset()
        free = arena._recycler.free
        # (once the block has ended: the blocks no tensor held then)
        blocks = list(free.values()) if free is not None else [arena.unheld]
        dead = {block.handle.ptr for group in blocks for block in list(group)}
        if marks:
            now = self._store_marks(run)
            dead |= {ptr for ptr, mark in marks.items() if now.get(ptr) != mark}
        spans = [span for r in readers for span in r.reads()]
        return frozenset(ptr for ptr in run.stored_pointers() if ptr in dead
                         and not any(s < run.store_end(ptr) and ptr < e for s, e in spans))

    def _launch_run(self, run: FusedRun, marks: dict | None, readers: tuple) -> None:
        dead = self._dead_pointers(run, marks, readers)
        self._launch_captured("a fused element-wise run",
                              lambda ins, outs, p: self._direct.launch_run(run, dead), None, None, None)

    def _retire(self, run: FusedRun, fresh: FusedRun) -> None:
        """``run`` is complete (``fresh``, holding the op it did not take, follows it): hold it back and launch
        the run held before. By then more of the program has run, so more of a run's results have died, and
        the kernel leaves their stores out (a logistic regression step's temporaries die a step later: on an
        H200 its fused step took 1.5 µs less without their stores); what the two runs after it read stays."""
        held, self._held = self._held, (run, self._store_marks(run))
        if held is not None:
            self._launch_run(*held, readers=(run, fresh))

    def _flush_run(self) -> None:
        """Put the pending fused runs into the capture: anything captured after them is ordered after them."""
        held, run = self._held, self._run
        self._held = self._run = None
        if held is not None:
            self._launch_run(*held, readers=(run,) if run is not None else ())
        if run is not None:
            self._launch_run(run, None, ())

    # --- capture -------------------------------------------------------------------------------------
    def end_capture(self) -> Graph:
        # the runs still pending are launched after the arena is released: they leave out their stores into
        # the blocks no tensor held as the block ended (Arena.unheld)
        self._closed_arena = self.arena
        try:
            return super().end_capture()
        finally:
            self._closed_arena = None

    @_entry
    def _begin_recording(self) -> None:
        self._lock.acquire()  # held until end_capture/abort_capture: the capture owns the stream
        try:
            self._start_stream_capture()
        except BaseException:
            self._lock.release()
            raise
        self._capturing = True

    def _start_stream_capture(self) -> None:
        self.blas()  # the handle and its workspace must exist before the capture (making them allocates)
        with self.on_device():
            # nothing eager may be in flight while capturing: blocks the pool hands to the arena, and uploads
            # made on the copy stream, must not race with earlier work of the compute stream
            self.stream.synchronize()
            # every CuPy-internal temporary of a captured kernel comes from the graph's arena, so that its
            # address (baked into the graph) is never handed out again while the graph can replay (CuPy's
            # allocator choice is per thread: other threads keep the pool)
            cm = cupy.cuda.using_allocator(self._arena_malloc)
            cm.__enter__()
            try:
                # relaxed: the arena may need cudaMalloc while the capture is open
                self.stream.begin_capture(mode=runtime.streamCaptureModeRelaxed)
            except BaseException:
                cm.__exit__(None, None, None)
                raise
        self._arena_allocator = cm

    def _arena_malloc(self, nbytes: int):
        if _get_device() != self.index:
            # the capturing thread's eager work on another GPU (not captured): that GPU's block of the pool
            return self.pool.malloc(nbytes)
        arena = self.arena
        if arena is None:  # CuPy code outside numr's capture bookkeeping, on this thread: the pool
            return self.malloc(nbytes)
        buf = arena.allocate(nbytes)
        # CuPy frees a temporary by dropping its pointer: a pointer over memory that holds ``buf`` files the
        # arena block for reuse when CuPy is done with it (and keeps the block alive until then)
        return cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(buf.handle.ptr, nbytes, buf, self.index), 0)

    def _stop_capture(self):
        """End the stream capture; the CuPy graph, or the CUDA error that invalidated the capture."""
        self._capturing = False
        cm, self._arena_allocator = self._arena_allocator, None
        try:
            with self.on_device():
                return self.stream.end_capture()
        finally:
            if cm is not None:
                cm.__exit__(None, None, None)

    def _end_recording(self) -> CudaGraph:
        with self._lock:
            if not self._capturing:
                raise RuntimeError(f"end_capture: {self.device} is not being captured by this thread")
            try:
                self._flush_run()
                g = self._stop_capture()
            except runtime.CUDARuntimeError as e:
                self.raise_if_lost(e)
                raise errors.CaptureError(f"capture: the CUDA stream capture on {self.device} failed ({e})") from e
            finally:
                if self._capturing:  # the pending run could not be captured: end the capture all the same
                    self._discard_stream_capture()
                self._lock.release()  # begin_capture's hold
            graph = CudaGraph(self, g)
            # a captured block has not run yet: run it once, so that its results exist as after eager execution
            graph.replay()
            return graph

    def _abort_recording(self) -> None:
        with self._lock:
            if not self._capturing:  # no capture in progress
                return
            try:
                self._discard_stream_capture()
            finally:
                self._lock.release()  # begin_capture's hold

    def _discard_stream_capture(self) -> None:
        self._run = self._held = None
        try:
            self._stop_capture()
        except (runtime.CUDARuntimeError, RuntimeError):
            pass  # an invalidated capture ends with an error; the stream is usable again either way

    # --- interchange ---------------------------------------------------------------------------------
    @_entry
    def dlpack(self, t: Tensor, *, stream=None, max_version=None, copy=None):
        """A DLPack capsule of ``t``'s memory, ordered before the consumer's ``stream``."""
        with self._lock:
            v = self.native(t)
            if copy:
                v = self.run(v.copy)
            return self.run(lambda: v.__dlpack__(stream=stream, max_version=max_version))

    @_entry
    def cuda_array_interface(self, t: Tensor) -> dict:
        """``__cuda_array_interface__`` (v3) of ``t``; its ``stream`` is the compute stream, which a consumer
        synchronises with before reading."""
        with self._lock:
            v = self.native(t)
            return self.run(lambda: v.__cuda_array_interface__)

    def adopt(self, obj) -> Tensor:
        """A tensor over the memory of a CUDA array of another library (CuPy, PyTorch, ... through
        ``__cuda_array_interface__`` or ``__dlpack__``) on this GPU, without a copy."""
        if isinstance(obj, cupy.ndarray):
            arr = obj
        elif isinstance(obj, np.ndarray) or (hasattr(obj, "__dlpack_device__")
                                             and obj.__dlpack_device__()[0] != _DLPACK_CUDA):
            raise ValueError(f"asarray: copy=False, but host memory cannot be shared with {self.device}; "
                             "it needs a copy")
        elif hasattr(obj, "__cuda_array_interface__"):
            with self._lock:  # (synchronises with the producer's stream, as CAI v3 asks)
                arr = self.run(cupy.asarray, obj)
        elif hasattr(obj, "__dlpack__"):
            with self._lock:  # (the producer orders its work before our stream)
                arr = self.run(cupy.from_dlpack, obj)
        else:
            raise TypeError(f"{type(obj).__name__} exposes no CUDA memory (__cuda_array_interface__ or __dlpack__)")
        if arr.data.device_id != self.index:
            raise ValueError(f"the array is on cuda:{arr.data.device_id}, not on {self.device}")
        dtype = dt.from_numpy(arr.dtype)
        item = arr.itemsize
        if any(s % item for s in arr.strides):
            raise ValueError(f"strides {arr.strides} are not multiples of the item size {item}")
        strides = tuple(s // item for s in arr.strides)
        low = high = 0
        if arr.size:
            for n, s in zip(arr.shape, strides):
                if s < 0:
                    low += s * (n - 1)
                else:
                    high += s * (n - 1)
        # the buffer starts at the lowest element, as generic code expects; the view keeps obj's memory alive
        base = arr.data + low * item if low else arr.data
        buf = Buffer(base, (high - low + 1) * item if arr.size else 0, None)
        return Tensor(buf, dtype, tuple(arr.shape), strides, -low, self.device, arr)
