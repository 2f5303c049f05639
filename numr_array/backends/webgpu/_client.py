"""The WebGPU Client: memory, submission, pipelines and capture on one wgpu device (after numr's WgpuClient).

Submission: every launch is encoded into one pending command encoder (inside one open compute pass) and
the encoder is submitted at a synchronisation point: a readback, ``synchronize``, a host write into a
buffer, a capture boundary, after ``MAX_PENDING`` launches, or after a launch that binds
``EARLY_SUBMIT_BYTES``. Kernel parameters go into a uniform buffer through a dynamic offset, so that a
bind group (one per set of buffer windows) serves every launch on the same buffers; bind groups and
pipelines are cached.

Capture: launches still run when captured, and each is also recorded as (pipeline, bind group, dynamic
offset, workgroup counts); the parameters of captured launches live in uniform buffers the graph owns.
At the end of the capture, runs of element-wise launches are merged into single dispatches (``_fuse``);
``replay`` encodes the record into the pending compute pass, as eager launches go, so that the readback (or
the launches) after it share its submission; a longer replay is submitted in chunks as it is encoded
(FIRST_CHUNK dispatches, then twice as many, up to ``replay_chunk``: NUMR_WEBGPU_REPLAY_CHUNK), so that the
GPU runs the first while the host encodes the rest. From a graph's second replay on, each replay also encodes
the next into a finished command buffer of its own while the GPU runs it (``WebGPUClient.replay``).

Dispatches are encoded through wgpu-native's functions directly where wgpu-py's internals allow it
(``_Direct``): wgpu-py's per-call error capture costs more than the encoding itself.

Device loss: wgpu reports it through its device-lost callback (taken from the "wgpu" logger by
``_LostLog``) or as a validation error "Parent device is lost" from the call that meets it. Either marks
the client lost (``Client.mark_lost``), and the entry points (``_entry``) then raise DeviceLostError;
nothing is submitted to a lost device (wgpu-native aborts the process on such a submit).

Exit: ``_drain_at_exit`` (atexit) waits for the work submitted to each live client before the interpreter
tears down, which lavapipe's queue thread, compiling a shader's variants as it runs, did not survive. Fork: in a
child forked after a client was made, every client is lost and no device can be opened (``check_not_forked``).
Interrupts: a Ctrl-C in the main thread is held while the pending encoder and pass change (``_InterruptHeld``),
and one during a readback's wait is raised once the staging buffer is unmapped (``_Direct.read``).

Threads: ``WebGPUClient._lock`` (a re-entrant lock) guards all of the client's mutable state: the pending
encoder and pass, the uniform pools, the pipeline, layout and bind-group caches, the staging buffer, the
allocator's pool and registry, and the capture record. Every entry point (``launch``, the copies,
``synchronize``, ``flush``, ``replay``, allocation) holds it for the whole call, so a kernel's encoding,
submission and readback are never interleaved with another thread's; kernels and the methods they call
(``dispatch``, ``pipeline``, ...) run under it. A capture holds it from ``begin_capture`` to
``end_capture``/``abort_capture``: other threads' calls on the device wait for the block to end. A Buffer
freed in any thread (its last reference can go anywhere, even inside this client's code) is only queued
(``WebGPUAllocator._freed``) and pooled at the next allocation or launch, under the lock.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import logging
import os
import signal
import sys
import threading
import time
import weakref
from collections import OrderedDict
from typing import Any, NamedTuple, Sequence

import numpy as np
import wgpu

from ...errors import DeviceLostError
from ...runtime import Allocator, Buffer, Client, Graph, entry_point, renewed
from ..._tensor import Tensor
from ._shader import pack_words
from ... import _dtypes as dt

_USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
_serials = itertools.count(1)

#: launches encoded before the pending encoder is submitted even without a synchronisation point
MAX_PENDING = 1024
#: pipelines of captured dispatches (fused ones, whose source holds their shape: _shader.baked) the cache keeps,
#: the least recently used dropped first: a graph holds its own, so only a later capture recompiles
CAPTURED_PIPELINES = 256
#: a launch that binds this many bytes is submitted at once, so that the GPU works on it while the host
#: encodes what follows instead of waiting for the next synchronisation (a 1 GiB sum ran 14% faster)
EARLY_SUBMIT_BYTES = 64 << 20


def _replay_chunk() -> int:
    """NUMR_WEBGPU_REPLAY_CHUNK: the most dispatches of a replay submitted together (128 when unset or
    unreadable; 0: a replay is submitted whole, with what follows it). A replay submitted as it is encoded keeps
    the GPU working on its first dispatches while the host encodes the rest, instead of idle until the end.
    (A graph's replays after its second submit the buffer the one before prepared: ``WebGPUClient.replay``.)"""
    try:
        return max(0, int(os.environ.get("NUMR_WEBGPU_REPLAY_CHUNK", "128")))
    except ValueError:
        return 128


#: dispatches of a replay's first chunk (the next ones double, up to _replay_chunk's): the GPU starts on them
#: while the host encodes the rest (cg on n = 2048 encodes its 101 dispatches in 0.2-0.4 ms on an H200 host)
FIRST_CHUNK = 16

#: bytes of each uniform buffer launches take parameter slots from
UNIFORM_POOL_BYTES = 1 << 20


def _address(handle) -> int:
    from wgpu.backends.wgpu_native._ffi import ffi
    return int(ffi.cast("uintptr_t", handle))


#: the live clients by the address of their wgpu device, for _LostLog
_clients: "weakref.WeakValueDictionary[int, WebGPUClient]" = weakref.WeakValueDictionary()


class _LostLog(logging.Filter):
    """wgpu-py 0.32 has no ``device.lost`` promise: its device-lost callback only logs "DEVICE LOST!" and the
    reason to the "wgpu" logger (which logging's last resort prints). This filter takes those two records
    when they are about a device of numr's, marks its client lost with the reason, and drops them."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        if msg != "DEVICE LOST!" and not msg.startswith("The WGPU device was lost"):
            return True
        f = sys._getframe(1)
        while f is not None and f.f_code.co_name != "device_lost_callback":  # the callback's frame names the device
            f = f.f_back
        try:
            client = _clients.get(_address(f.f_locals["c_device"][0]))
        except Exception:  # not wgpu-native's callback (another wgpu-py version): leave the record alone
            return True
        if client is None:
            return True
        if msg != "DEVICE LOST!":
            client.mark_lost(_reason(msg))
        return False


logging.getLogger("wgpu").addFilter(_LostLog())


#: whether this process (or the one it was forked from) has opened a WebGPU device
_opened = False
#: in a child process forked after its parent opened a WebGPU device: wgpu is unusable here (``check_not_forked``)
_forked = False


def _after_fork_in_child() -> None:
    """In a child process made by fork, each client's wgpu device is still the parent's, whose driver threads
    did not follow the fork: a call on it hung, and so did the first submission on a device the child opened
    afresh (lavapipe; wgpu-native's state came over mid-use). Every client is marked lost, so that the
    parent's arrays raise DeviceLostError, and opening another device raises (``check_not_forked``)."""
    global _forked
    _forked = _opened
    for client in list(_clients.values()):
        client.mark_lost("the device was opened by the parent process, before this process forked")


os.register_at_fork(after_in_child=_after_fork_in_child)


def check_not_forked(device) -> None:
    """RuntimeError where this process was forked after its parent opened a WebGPU device (a child of
    ``multiprocessing``'s "fork" start method): wgpu cannot be used in it. (A parent that only listed the
    adapters leaves wgpu usable.)"""
    if _forked:
        raise RuntimeError(f"{device}: this process was forked after its parent opened a WebGPU device, and wgpu "
                           "cannot be used in a forked child; start it with the 'spawn' or 'forkserver' method "
                           "(multiprocessing.get_context('spawn'))")


@atexit.register
def _drain_at_exit() -> None:
    """Wait, before the interpreter tears down, for the work submitted to each live client: lavapipe compiles a
    shader's variants on its queue thread while it runs a submission, and LLVM torn down under that thread
    crashed the process (SIGSEGV or abort at exit, on a run without Mesa's shader cache). Registered after
    wgpu's import, so it runs before wgpu-py's own exit handlers."""
    for client in list(_clients.values()):
        client.wait_submitted()


#: kernel compilation (DEBUG): one record per pipeline built, none per launch
log = logging.getLogger(__name__)


def _spin_ms() -> float:
    """NUMR_WEBGPU_SPIN_MS: milliseconds a readback polls without blocking (50 when unset or unreadable)."""
    try:
        return max(0.0, float(os.environ.get("NUMR_WEBGPU_SPIN_MS", "50")))
    except ValueError:
        return 50.0


def _reason(message: str) -> str:
    """wgpu's multi-line message as one line."""
    return "wgpu: " + ": ".join(line.strip() for line in message.splitlines() if line.strip() not in ("", "Caused by:"))


#: a client entry point: DeviceLostError before any work once the device is lost, and in place of the wgpu
#: error of a call that finds it lost
_entry = entry_point((wgpu.GPUError,))


class WBuf:
    """A wgpu buffer of the allocator, with a serial number that keys caches (ids of dead objects recur)."""

    __slots__ = ("buf", "size", "serial")

    def __init__(self, buf, size: int):
        self.buf = buf
        self.size = size
        self.serial = next(_serials)


def _size_class(n: int) -> int:
    """Bytes actually allocated for a request of ``n``: powers of two up to 1 MiB, then steps of 1/8 of
    a power of two, so that freed buffers are reused by requests of similar size."""
    if n <= 512:
        return 512
    if n <= 1 << 20:
        return 1 << (n - 1).bit_length()
    step = 1 << ((n - 1).bit_length() - 3)
    return -(-n // step) * step


def format_bytes(n: int) -> str:
    """``n`` with its unit, and in KiB/MiB/GiB too when that is at least 1: '4 bytes', '2147483647 bytes
    (2.0 GiB)'."""
    text = f"{n} byte" + ("" if n == 1 else "s")
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{text} ({n / (1 << shift):.1f} {unit})"
    return text


class WebGPUAllocator(Allocator):
    """Storage buffers from the device, kept in a pool by size class when freed (creating a buffer costs
    a driver allocation and a clear). ``registry`` maps serial -> WBuf for every buffer it owns."""

    def __init__(self, client: "WebGPUClient"):
        super().__init__()
        self._client = client
        self._pool: dict[int, list[WBuf]] = {}
        self._pooled = 0
        self.pool_limit = int(os.environ.get("NUMR_WEBGPU_POOL_MB", "2048")) << 20
        self.registry: dict[int, WBuf] = {}
        self._freed: list[WBuf] = []  # freed, not yet pooled (list.append and pop are atomic)

    def _raw_allocate(self, nbytes: int) -> WBuf:
        lock = self._client._lock
        lock.acquire()  # (acquire/release: half the cost of ``with``, on every allocation)
        try:
            if self._freed:
                self.pool_freed()
            return self._allocate_locked(nbytes)
        finally:
            lock.release()

    def _allocate_locked(self, nbytes: int) -> WBuf:
        size = _size_class(nbytes)
        limit = self._client.max_buffer_size
        if size > limit:
            size = -(-nbytes // 256) * 256
            if size > limit:
                raise MemoryError(f"{self._client.device}: cannot allocate {format_bytes(nbytes)}; the adapter's "
                                  f"largest buffer (max-buffer-size) is {format_bytes(limit)}")
        free = self._pool.get(size)
        if free:
            self._pooled -= size
            return free.pop()
        try:
            buf = self._client.wdevice.create_buffer(size=size, usage=_USAGE)
        except Exception as e:  # the device is out of memory: give the pool back and try once more
            self._client.raise_if_lost(e)
            if not self._pooled:
                raise MemoryError(f"{self._client.device}: cannot allocate {nbytes} bytes ({e})") from None
            self.release_pool()
            try:
                buf = self._client.wdevice.create_buffer(size=size, usage=_USAGE)
            except Exception as e2:
                raise MemoryError(f"{self._client.device}: cannot allocate {nbytes} bytes ({e2})") from None
        w = WBuf(buf, size)
        self.registry[w.serial] = w
        return w

    def _raw_free(self, handle: WBuf, nbytes: int) -> None:
        if self.lost is not None:  # its memory went with the device
            return
        # any thread, at any point, even inside the client's own code holding its lock: queue it only
        self._freed.append(handle)

    def pool_freed(self) -> None:
        """Pool the buffers freed since the last call (under the client's lock)."""
        freed = self._freed
        while freed:
            handle = freed.pop()
            self._pool.setdefault(handle.size, []).append(handle)
            self._pooled += handle.size
        while self._pooled > self.pool_limit:
            self._drop(max(s for s, lst in self._pool.items() if lst))

    def _drop(self, size: int) -> None:
        # a buffer that pending (unsubmitted) launches use must outlive their submission: destroying it
        # first makes the submit fail; once submitted, wgpu keeps it until the GPU is done with it
        self._client.flush()
        w = self._pool[size].pop()
        self._pooled -= size
        del self.registry[w.serial]
        self._client.forget_buffer(w)
        w.buf.destroy()

    def pooled_bytes(self) -> int:
        with self._client._lock:
            self.pool_freed()
            return self._pooled

    def release_pool(self) -> None:
        """Destroy every pooled (free) buffer."""
        with self._client._lock:
            self.pool_freed()
            for size, lst in self._pool.items():
                while lst:
                    self._drop(size)


class UniformPool:
    """A uniform buffer that launches take parameter slots from, mirrored on the host and written to the
    device just before the submit that first uses each slot."""

    __slots__ = ("buf", "mirror", "used", "written", "serial")

    def __init__(self, wdevice):
        self.buf = wdevice.create_buffer(size=UNIFORM_POOL_BYTES,
                                         usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self.mirror = bytearray(UNIFORM_POOL_BYTES)
        self.used = 0
        self.written = 0
        self.serial = next(_serials)


class Pipeline(NamedTuple):
    pipeline: Any
    nbind: int    # storage bindings (tensors) after the uniform block
    ubytes: int   # bytes of the uniform block the shader reads
    handle: Any   # wgpu-native's handle, for the direct encoding calls


#: the small upload's kernel (WebGPUClient._upload_small): word 0 the number of words, word 3 where the first
#: goes in the window, words 4-7 the data
_UPLOAD_WGSL = """struct U { w: array<vec4<u32>, 2> }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> b1: array<u32>;
@compute @workgroup_size(1)
fn main() {
  for (var i = 0u; i < u.w[0].x; i = i + 1u) { b1[u.w[0].w + i] = u.w[1][i]; }
}
"""


class _Direct:
    """wgpu-native's compute-pass encoding functions called directly, without wgpu-py's per-call error
    capture (which costs more than the call itself on the eager path and in every replayed dispatch), and
    the readback's map and poll (``read``). Only for commands whose objects wgpu has validated already;
    None where wgpu-py's internals differ."""

    def __init__(self):
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        self.ffi = ffi
        self.set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        self.set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        self.dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self._map_async = lib.wgpuBufferMapAsync
        self._poll = lib.wgpuDevicePoll
        self._mapped_range = lib.wgpuBufferGetConstMappedRange
        self._unmap = lib.wgpuBufferUnmap
        self._read_mode = lib.WGPUMapMode_Read
        self._success = lib.WGPUMapAsyncStatus_Success
        status = self._status = [None]
        interrupt = self._interrupt = [None]

        def interrupted(_type, exc, tb):
            # an interrupt (Ctrl-C) raised in the callback before it recorded the status, which cffi would
            # print and drop: the wait for the status then never ended. The status is the callback's argument
            # (its frame's); the interrupt is raised by ``read`` once the buffer is unmapped
            status[0] = tb.tb_frame.f_locals.get("code", -1)
            interrupt[0] = exc

        @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)", onerror=interrupted)
        def mapped(code, _message, _u1, _u2):
            status[0] = code

        self._info = ffi.new("WGPUBufferMapCallbackInfo *", {
            "mode": lib.WGPUCallbackMode_AllowProcessEvents, "callback": mapped})
        self._keep = mapped  # (the struct holds only the C pointer: the callback object must live on)

    def encode(self, h, chunk: list, last):
        """``chunk``'s dispatches (WebGPUGraph.encoded's entries) into the compute pass whose handle is ``h``,
        whose pipeline is ``last``; returns the pass's pipeline after them."""
        set_pipeline, set_bind_group, dispatch = self.set_pipeline, self.set_bind_group, self.dispatch
        for pipe, ph, bg, off, x, y, z in chunk:  # (this loop is a replay's host cost: kept bare)
            if pipe is not last:
                set_pipeline(h, ph)
                last = pipe
            set_bind_group(h, 0, bg, 1, off)
            dispatch(h, x, y, z)
        return last

    def read(self, dev, staging, size: int, spin_s: float) -> bytes:
        """Bytes [0, size) of the MAP_READ buffer ``staging`` once the work submitted before is done.
        The map is requested here and this thread alone polls the device for it: wgpu-py's map_async
        also wakes its poll thread into a second blocking wait beside this one (session 5's H200 runs
        of WebGPU programs took ~10 ms longer about half the time with it, CUDA's never; see
        docs/devices.md). Polls do not block for the first ``spin_s`` seconds (a blocking wait may sleep
        past the GPU's completion)."""
        status, interrupt = self._status, self._interrupt
        status[0] = interrupt[0] = None
        buf = staging._internal
        self._map_async(buf, self._read_mode, 0, size, self._info[0])
        try:
            self._wait(dev, spin_s)
        except BaseException:  # an interrupt between polls: the map settled first, so the buffer maps again
            self._wait(dev, 0.0)
            if status[0] == self._success:
                self._unmap(buf)
            raise
        if status[0] != self._success:
            raise wgpu.GPUError(f"could not map the staging buffer for a readback (status {status[0]})")
        try:
            data = bytes(self.ffi.buffer(self._mapped_range(buf, 0, size), size))
        finally:
            self._unmap(buf)
        if interrupt[0] is not None:
            raise interrupt[0]
        return data

    def _wait(self, dev, spin_s: float) -> None:
        """Poll the device until the map's callback has recorded its status: without blocking for the first
        ``spin_s`` seconds, then blocking."""
        status, poll, null = self._status, self._poll, self.ffi.NULL
        if status[0] is None and spin_s > 0:
            end = time.perf_counter() + spin_s
            while status[0] is None and time.perf_counter() < end:
                poll(dev, 0, null)
        while status[0] is None:
            poll(dev, 1, null)

    @classmethod
    def load(cls):
        try:
            return cls()
        except Exception:
            return None


class _InterruptHeld:
    """Hold a KeyboardInterrupt (SIGINT under Python's default handler, in the main thread, where it is raised)
    until the outermost such block ends, then raise it: the client's encoder and pass change with their wgpu
    objects together. A Ctrl-C between finishing the pending encoder and dropping it left every later
    submission failing ("Encoding must not have ended"); one between setting a pipeline and recording it
    (``_last_pipe``, cleared first for that) would have run a later launch with the wrong pipeline."""

    depth = 0  # the main thread's open blocks
    got = False

    def __enter__(self) -> None:
        cls = _InterruptHeld
        if threading.current_thread() is not threading.main_thread():
            return
        if cls.depth == 0:
            cls.got = False
            try:
                before = signal.signal(signal.SIGINT, _hold_interrupt)
            except (ValueError, OSError):  # (an interpreter where signals cannot be set: nothing held)
                return
            if before is not signal.default_int_handler:  # (the program's own handler: left to it)
                signal.signal(signal.SIGINT, before)
                return
        cls.depth += 1

    def __exit__(self, kind, _value, _tb) -> None:
        cls = _InterruptHeld
        if cls.depth == 0 or threading.current_thread() is not threading.main_thread():
            return
        cls.depth -= 1
        if cls.depth == 0:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            if cls.got and kind is None:
                raise KeyboardInterrupt


def _hold_interrupt(_signum, _frame) -> None:
    _InterruptHeld.got = True


class WebGPUGraph(Graph):
    """A captured sequence of dispatches, with the uniform buffers their parameters are in and the bind
    groups they use."""

    def __init__(self, client: "WebGPUClient", steps: list, pools: list[UniformPool], memory: list = ()):
        """``memory``: Buffers the fusion pass took for the steps (workgroups' partial results), held as long
        as the graph can replay."""
        self._client = client
        self.steps = steps
        self._pools = pools
        self._memory = list(memory)
        direct = client._direct
        #: per step, what the direct encoding calls take, resolved once for every replay: (pipeline, its
        #: wgpu-native handle, the bind group's, the dynamic offset as a C array, the workgroup counts), in
        #: chunks (FIRST_CHUNK steps, doubling up to client.replay_chunk), each but the last submitted as soon
        #: as it is encoded
        self.encoded = None
        if direct is not None:
            flat = [(st[0], st[0].handle, st[1]._internal, direct.ffi.new("uint32_t[1]", [st[2]])) + tuple(st[3])
                    for st in steps]
            self.encoded = []
            most = client.replay_chunk or len(flat) or 1
            size, k = min(FIRST_CHUNK, most), 0
            while k < len(flat):  # chunks of FIRST_CHUNK dispatches, doubling up to replay_chunk
                self.encoded.append(flat[k:k + size])
                k += size
                size = min(2 * size, most)
        #: the next replay's dispatches in a finished command buffer of their own, encoded by the replay before
        #: it while the GPU ran that (``WebGPUClient.replay``); how many replays have run
        self.ready = None
        self.replays = 0

    def replay(self) -> None:
        self._client.replay(self)

    def release(self) -> None:
        self.steps = []
        self.encoded = None
        self.ready = None
        self._pools = []
        self._memory = []


class WebGPUClient(Client):
    def __init__(self, device, adapter, wdevice, features: set[str], kernels: dict):
        """``kernels``: the kernel table (_kernels.make_kernels), built by the runtime: the family modules
        import this one, so this one does not import them."""
        self.device = device
        self.adapter = adapter
        self.wdevice = wdevice
        self.queue = wdevice.queue
        self.features = features
        limits = wdevice.limits
        self.max_buffer_size = int(limits["max-buffer-size"])
        self.max_binding = int(limits["max-storage-buffer-binding-size"]) // 256 * 256
        self.max_storage_per_stage = int(limits["max-storage-buffers-per-shader-stage"])
        self.storage_align = max(16, int(limits["min-storage-buffer-offset-alignment"]))
        self.uniform_align = max(16, int(limits["min-uniform-buffer-offset-alignment"]))
        self.has_f64 = "shader-f64" in features and "shader-int64" in features
        #: whether end_capture merges chains of element-wise launches into single dispatches
        self.fusion = os.environ.get("NUMR_WEBGPU_FUSION", "1") != "0"
        self.replay_chunk = _replay_chunk()
        #: whether a graph's replays from its second on encode the next one after submitting (``replay``)
        self.prepare_replays = True
        self.has_i64 = "shader-int64" in features
        #: guards all mutable state of the client and its allocator (see the module's docstring)
        self._lock = threading.RLock()
        self.allocator = WebGPUAllocator(self)
        self._freed = self.allocator._freed
        self._pipelines: dict[Any, Pipeline] = {}
        self._captured_keys: OrderedDict = OrderedDict()  # (the captured pipelines' keys, oldest first)
        #: eager map launches' plans by signature (_map_template._eager)
        self.map_plans: dict[tuple, Any] = {}
        #: eager one-dispatch reductions' plans by signature (k_reduce.reduce)
        self.reduce_plans: dict[tuple, Any] = {}
        self._layouts: dict[int, tuple[Any, Any]] = {}
        self._bind_groups: dict[tuple, Any] = {}
        self._bg_keys_of: dict[int, list[tuple]] = {}
        self._enc = None
        self._pass = None
        self._pending = 0
        self._upool = UniformPool(wdevice)
        self._eager_pool = self._upool
        self._steps: list | None = None
        self._records: list = []  # per captured step, its record for the fusion pass (MapRecord, ReduceRecord...) or None
        self._bound: list = []  # per captured step, its (WBuf, byte offset, byte size) bindings (fusion pass)
        self._whole: dict = {}  # captured step -> the words it writes whole without reading (fusion pass)
        self._unheld: set = set()  # serials of the capture arena's blocks no tensor holds at its end
        self._capture_pools: list[UniformPool] = []
        #: Buffers the fusion pass of the capture in progress took (_fuse: workgroups' partial counts), for its graph
        self.fusion_memory: list = []
        self._direct = _Direct.load()
        #: seconds a readback polls without blocking before it waits in the driver (NUMR_WEBGPU_SPIN_MS);
        #: none on a CPU adapter, whose device threads a spinning thread would slow down
        self.spin_s = 0.0 if adapter.info.get("adapter_type") == "CPU" else _spin_ms() / 1e3
        self._offset_arg = self._direct.ffi.new("uint32_t[1]") if self._direct else None
        self._last_pipe = None
        self._staging = None
        self._staging_size = 0
        self._fence = WBuf(wdevice.create_buffer(size=256, usage=_USAGE), 256)
        #: readbacks of device data through the staging buffer (what a chain of device work should avoid)
        self.readbacks = 0
        self.kernels = kernels
        _clients[_address(wdevice._internal)] = self
        global _opened
        _opened = True

    def wait_submitted(self, timeout_s: float = 5.0) -> None:
        """Block until the GPU has finished the work submitted so far (work still pending in the encoder is
        dropped with the client, where wgpu-native's poll is reachable). Does nothing on a lost device, or where
        another thread holds the client's lock for ``timeout_s`` (a daemon thread stopped mid-call at exit)."""
        if self.lost is not None or not self._lock.acquire(timeout=timeout_s):
            return
        try:
            if self._direct is not None:  # (wgpu-native's blocking poll: returns once the queue is idle)
                self._direct._poll(self.wdevice._internal, 1, self._direct.ffi.NULL)
            else:  # (a readback: submits the pending work too)
                self._read_staging(self._fence, 0, 4)
        except Exception:  # (at exit: a device lost meanwhile has nothing left to wait for)
            pass
        finally:
            self._lock.release()

    def raise_if_lost(self, e: BaseException) -> None:
        """Raise DeviceLostError from ``e`` (marking this client lost) if the device is lost: already known,
        or the wgpu error ``e`` says so."""
        if self.lost is None:
            if not (isinstance(e, wgpu.GPUError) and "device is lost" in str(e).lower()):
                return
            self.mark_lost(_reason(str(e)))
        raise renewed(self.lost) from e

    # --- capabilities -----------------------------------------------------------------------------
    def supports_dtype(self, dtype) -> bool:
        if dtype in (dt.float64, dt.complex128):
            return self.has_f64
        if dtype in (dt.int64, dt.uint64):
            return self.has_i64
        return True

    def _probe(self, src: str, data: np.ndarray) -> np.ndarray:
        """The u32 words ``data`` after one workgroup of ``src`` (its entry point ``main``, binding 0 the words)
        ran over them: a probe of the adapter's behaviour, run once, outside any capture."""
        with self._lock:
            self.flush()
            dev = self.wdevice
            buf = dev.create_buffer_with_data(data=data.astype(np.uint32).tobytes(),
                                              usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
            try:
                pipe = dev.create_compute_pipeline(layout="auto", compute=dict(
                    module=dev.create_shader_module(code=src), entry_point="main"))
                bg = dev.create_bind_group(layout=pipe.get_bind_group_layout(0),
                                           entries=[dict(binding=0, resource=dict(buffer=buf))])
                enc = dev.create_command_encoder()
                cp = enc.begin_compute_pass()
                cp.set_pipeline(pipe)
                cp.set_bind_group(0, bg)
                cp.dispatch_workgroups(1)
                cp.end()
                self.queue.submit([enc.finish()])
                return np.frombuffer(self.queue.read_buffer(buf), np.uint32)
            finally:
                buf.destroy()

    @functools.cached_property
    def flushes_f32_subnormals(self) -> bool:
        """Whether the adapter's float32 arithmetic flushes subnormals to zero (WebGPU allows it; NVIDIA's
        Vulkan driver does, lavapipe does not): a one-thread probe, run on first use, multiplies the
        smallest subnormals by 1 and adds 0 (operands read from memory, so nothing is folded)."""
        out = self._probe("@group(0) @binding(0) var<storage, read_write> v: array<u32, 4>;\n"
                          "@compute @workgroup_size(1) fn main() {\n"
                          "  let one = bitcast<f32>(v[2]);\n"
                          "  v[0] = bitcast<u32>(bitcast<f32>(v[0]) * one);\n"
                          "  v[1] = bitcast<u32>(bitcast<f32>(v[1]) + bitcast<f32>(v[3]));\n}\n",
                          np.array([1, 0x00400000, 0x3f800000, 0]))
        return bool(out[0] != 1 or out[1] != 0x00400000)

    @functools.cached_property
    def subgroup_rows(self) -> int:
        """The most lanes of consecutive invocations a kernel may sum by subgroup shuffles (0: none): the size
        of the subgroups of a 256-invocation workgroup, where a one-workgroup probe, run on first use, finds
        them filled in invocation order (subgroup_invocation_id = local_invocation_index % size) and a float
        shuffle correct. (The size can differ between pipelines only on adapters whose subgroups vary per
        shader, Intel's and Arm's, of at least 8 lanes there; kernels take at most this many lanes.)"""
        if "subgroup" not in self.features:
            return 0
        try:
            out = self._probe("@group(0) @binding(0) var<storage, read_write> v: array<u32, 768>;\n"
                              "@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) li: u32,\n"
                              "    @builtin(subgroup_invocation_id) sid: u32, @builtin(subgroup_size) ss: u32) {\n"
                              "  v[li] = sid;\n  v[256u + li] = ss;\n  let x = f32(li) * 0.5;\n"
                              "  v[512u + li] = bitcast<u32>(x + subgroupShuffleXor(x, 1u));\n}\n",
                              np.zeros(768))
        except Exception as e:  # (a shader compiler without the operations)
            self.raise_if_lost(e)
            log.debug("%s: no subgroup shuffles: %s", self.device, e)
            return 0
        li = np.arange(256)
        size = int(out[256])
        shuffled = (li * 0.5 + (li ^ 1) * 0.5).astype(np.float32).view(np.uint32)
        if size < 2 or 256 % size or not (out[256:512] == size).all() or not np.array_equal(out[:256], li % size) \
                or not np.array_equal(out[512:], shuffled):
            return 0
        return min(size, 32)

    @property
    @_entry
    def raw_handle(self):
        """(wgpu device, queue) for custom kernels; pending launches are submitted first so that work
        submitted through the handle runs after them."""
        self.flush()
        return RawHandle(self.wdevice, self.queue)

    # --- pipelines and bind groups --------------------------------------------------------------------
    def _layout(self, nbind: int):
        lay = self._layouts.get(nbind)
        if lay is None:
            vis = wgpu.ShaderStage.COMPUTE
            entries = [{"binding": 0, "visibility": vis, "buffer": {"type": "uniform", "has_dynamic_offset": True}}]
            entries += [{"binding": k, "visibility": vis, "buffer": {"type": "storage"}} for k in range(1, nbind + 1)]
            bgl = self.wdevice.create_bind_group_layout(entries=entries)
            lay = self._layouts[nbind] = (bgl, self.wdevice.create_pipeline_layout(bind_group_layouts=[bgl]))
        return lay

    def cached_pipeline(self, key) -> Pipeline | None:
        """The compute pipeline cached under ``key``, or None before its first build."""
        return self._pipelines.get(key)

    def pipeline(self, key, make_source, nbind: int, ubytes: int, captured: bool = False) -> Pipeline:
        """The compute pipeline cached under ``key``, built from ``make_source()`` on first use; ``captured``:
        one captured dispatch's, of the CAPTURED_PIPELINES most recently used."""
        p = self._pipelines.get(key)
        if captured:
            self._captured_keys[key] = None
            self._captured_keys.move_to_end(key)
            while len(self._captured_keys) > CAPTURED_PIPELINES:
                self._pipelines.pop(self._captured_keys.popitem(last=False)[0], None)
        if p is None:
            source = make_source()
            log.debug("%s: compiling the WGSL kernel %r (%d lines)", self.device, key, source.count("\n") + 1)
            try:
                module = self.wdevice.create_shader_module(code=source)
                pipe = self.wdevice.create_compute_pipeline(layout=self._layout(nbind)[1],
                                                            compute={"module": module, "entry_point": "main"})
            except Exception as e:
                self.raise_if_lost(e)
                numbered = "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(source.splitlines()))
                raise RuntimeError(f"{self.device}: WGSL for kernel {key!r} failed to compile:\n{e}\n"
                                   f"{numbered}") from None
            p = self._pipelines[key] = Pipeline(pipe, nbind, ubytes, getattr(pipe, "_internal", None))
        return p

    def _bind_group(self, nbind: int, pool: UniformPool, ubytes: int, binds: tuple):
        key = (pool.serial, ubytes) + binds
        bg = self._bind_groups.get(key)
        if bg is None:
            entries = [{"binding": 0, "resource": {"buffer": pool.buf, "offset": 0, "size": ubytes}}]
            for k in range(nbind):
                w, off, size = binds[3 * k], binds[3 * k + 1], binds[3 * k + 2]
                entries.append({"binding": k + 1, "resource": {"buffer": w.buf, "offset": off, "size": size}})
            bg = self.wdevice.create_bind_group(layout=self._layout(nbind)[0], entries=entries)
            if self._steps is None:  # a graph's bind groups live with the graph, not in the cache
                if len(self._bind_groups) >= 16384:
                    self._bind_groups.clear()
                    self._bg_keys_of.clear()
                self._bind_groups[key] = bg
                for k in range(nbind):
                    self._bg_keys_of.setdefault(binds[3 * k].serial, []).append(key)
        return bg

    def forget_buffer(self, w: WBuf) -> None:
        """Drop the cached bind groups of a buffer about to be destroyed."""
        for key in self._bg_keys_of.pop(w.serial, ()):
            self._bind_groups.pop(key, None)

    # --- encoding and submission ------------------------------------------------------------------
    @property
    def capturing(self) -> bool:
        """Whether launches are being recorded for a graph."""
        return self._steps is not None

    def dispatch(self, pipe: Pipeline, uniform: bytes, binds: tuple, grid: tuple[int, int, int],
                 record=None, whole: tuple[int, int, int] | None = None) -> None:
        """Encode one dispatch of ``pipe``: ``uniform`` its parameter words, ``binds`` a flat tuple of
        (WBuf, byte offset, byte size) per storage binding, ``grid`` the workgroup counts; ``record``: while
        capturing, what the fusion pass needs to merge it with its neighbours (a map launch's MapRecord, a
        reduction's ReduceRecord); ``whole``: (memory serial, first word, end word) of words the dispatch
        writes, every one, without reading them (``_views.whole_words``; the fusion pass's dead stores)."""
        ubytes = pipe.ubytes
        pool = self._upool
        off = pool.used
        if off + ubytes <= UNIFORM_POOL_BYTES:  # (_slot's common case inline: this runs per launch)
            pool.mirror[off:off + len(uniform)] = uniform
            pool.used = off + -(-ubytes // self.uniform_align) * self.uniform_align
        else:
            pool, off = self._slot(uniform, ubytes)
        bg = self._bind_groups.get((pool.serial, ubytes) + binds)
        if bg is None:
            bg = self._bind_group(pipe.nbind, pool, ubytes, binds)
        p = self._pass
        if p is None:
            p = self._compute_pass()
        direct = self._direct
        if direct is not None:
            h = p._internal
            if pipe is not self._last_pipe:
                self._last_pipe = None  # (unknown until set: see _InterruptHeld)
                direct.set_pipeline(h, pipe.handle)
                self._last_pipe = pipe
            self._offset_arg[0] = off
            direct.set_bind_group(h, 0, bg._internal, 1, self._offset_arg)
            direct.dispatch(h, grid[0], grid[1], grid[2])
        else:
            p.set_pipeline(pipe.pipeline)
            p.set_bind_group(0, bg, [off])
            p.dispatch_workgroups(*grid)
        if self._steps is not None:
            self._steps.append((pipe, bg, off, grid))
            self._records.append(record)
            self._bound.append([binds[j:j + 3] for j in range(0, len(binds), 3)])
            if whole is not None:
                self._whole[len(self._steps) - 1] = whole
        self._pending += 1
        if self._pending >= MAX_PENDING or sum(binds[2::3]) >= EARLY_SUBMIT_BYTES:
            self.flush()

    def _slot(self, uniform: bytes, ubytes: int) -> tuple[UniformPool, int]:
        """A uniform slot holding ``uniform``: from the graph's buffers while capturing, else the eager one
        (submitting pending work when it is full)."""
        pool = self._upool
        off = pool.used
        if off + ubytes > UNIFORM_POOL_BYTES:
            if self._steps is None:
                self.flush()
            else:
                pool = self._upool = UniformPool(self.wdevice)
                self._capture_pools.append(pool)
            off = 0
        pool.mirror[off:off + len(uniform)] = uniform
        pool.used = off + -(-ubytes // self.uniform_align) * self.uniform_align
        return pool, off

    def encode_recorded(self, pipe: Pipeline, uniform: bytes, binds: tuple, grid: tuple[int, int, int]) -> tuple:
        """A step for the graph being captured, not run now (the fusion pass's merged launches)."""
        pool, off = self._slot(uniform, pipe.ubytes)
        return (pipe, self._bind_group(pipe.nbind, pool, pipe.ubytes, binds), off, grid)

    def _compute_pass(self):
        self._last_pipe = None
        if self._enc is None:  # (both taken at once: an interrupt before drops two empty objects)
            enc = self.wdevice.create_command_encoder()
            self._enc, self._pass = enc, enc.begin_compute_pass()
        else:  # (an encoder with commands: a pass begun on it and not recorded would lock it)
            with _InterruptHeld():
                self._pass = self._enc.begin_compute_pass()
        return self._pass

    def _copy_encoder(self):
        if self._pass is not None:
            with _InterruptHeld():
                self._pass.end()
                self._pass = None
        if self._enc is None:
            self._enc = self.wdevice.create_command_encoder()
        return self._enc

    @_entry
    def flush(self) -> None:
        """Submit the pending encoder (writing the uniform slots its launches use first)."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if self._pass is None and self._enc is None:
            self._submit()  # (the uniform pools' writes alone: nothing an interrupt could leave half done)
            return
        with _InterruptHeld():
            self._submit()

    def _submit(self) -> None:
        if self._pass is not None:
            self._pass.end()
            self._pass = None
        # written even with nothing to submit: the fusion pass's merged launches take slots without encoding
        # anything (encode_recorded), and the capture's last launch may have submitted everything already
        # (EARLY_SUBMIT_BYTES); the queue runs these writes before its next submission
        for pool in [self._eager_pool] + self._capture_pools:
            if pool.used > pool.written:
                self.queue.write_buffer(pool.buf, pool.written, memoryview(pool.mirror)[pool.written:pool.used])
                pool.written = pool.used
        if self._enc is None:
            return
        self.queue.submit([self._enc.finish()])
        self._enc = None
        self._pending = 0
        eager = self._eager_pool
        if self._upool is eager:  # submitted: later writes to the same slots are ordered after it
            eager.used = eager.written = 0

    @_entry
    def synchronize(self) -> None:
        with self._lock:
            if self._freed:
                self.allocator.pool_freed()
            self._read_staging(self._fence, 0, 4)  # a readback waits for everything submitted before it

    # --- copies -------------------------------------------------------------------------------------
    def _staging_buffer(self, size: int):
        if size > self._staging_size or self._staging is None:
            if size <= 64 << 20:
                cap = max(1 << 16, 1 << (size - 1).bit_length())
                self._staging = self.wdevice.create_buffer(
                    size=cap, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
                self._staging_size = cap
            else:
                return self.wdevice.create_buffer(size=size,
                                                  usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        return self._staging

    def _read_staging(self, w: WBuf, start: int, size: int) -> memoryview:
        """Bytes [start, start+size) of ``w`` (4-aligned) after all pending work; the caller copies them out
        before the next call."""
        staging = self._staging_buffer(size)
        with _InterruptHeld():  # (one hold for the pass's end and the submission)
            self._copy_encoder().copy_buffer_to_buffer(w.buf, start, staging, 0, size)
            self.flush()
        if self._direct is not None:
            return memoryview(self._direct.read(self.wdevice._internal, staging, size, self.spin_s))
        staging.map_sync(wgpu.MapMode.READ, 0, size)
        try:
            data = bytes(staging.read_mapped(0, size, copy=False))
        finally:
            staging.unmap()
        return memoryview(data)

    @_entry
    def copy_from_device(self, src: Buffer, src_offset: int, out: np.ndarray) -> None:
        n = out.nbytes
        if not n:
            return
        start = src_offset & ~3
        end = (src_offset + n + 3) & ~3
        with self._lock:
            self.readbacks += 1
            data = self._read_staging(src.handle, start, end - start)
        out.reshape(-1).view(np.uint8)[:] = np.frombuffer(data, np.uint8, n, src_offset - start)

    @_entry
    def copy_to_device(self, host: np.ndarray, dst: Buffer, dst_offset: int = 0) -> None:
        data = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
        n = data.nbytes
        if not n:
            return
        dst.mark_constant()  # a queue write, not recorded: inside a capture these bytes are a constant of the graph
        with self._lock:
            if n > 16 or dst_offset & 3 or self._steps is not None or not self._upload_small(data, n, dst, dst_offset):
                self._copy_to_device(data, n, dst, dst_offset)

    def _upload_small(self, data: np.ndarray, n: int, dst: Buffer, dst_offset: int) -> bool:
        """Write up to 16 bytes (a scalar) at the word-aligned ``dst_offset`` with a dispatch that copies them
        from its uniform words, encoded after the pending work: no submission first and no queue write, which
        cost more than the launch (an ``asarray`` of a Python scalar in a batch of calls). False where the
        last word would be partial short of the buffer's end (its other bytes must be kept)."""
        end = dst_offset + n
        b0 = dst_offset - dst_offset % self.storage_align
        size = max(16, end - b0 + 3 & ~3)
        if end & 3 and end < dst.nbytes or b0 + size > dst.handle.size:
            return False
        pipe = self._pipelines.get("upload")
        if pipe is None:
            pipe = self.pipeline("upload", lambda: _UPLOAD_WGSL, 1, 32)
        self.dispatch(pipe, pack_words([(n + 3) >> 2, 1, 0, (dst_offset - b0) >> 2]) + data.tobytes() + bytes(16 - n),
                      (dst.handle, b0, size), (1, 1, 1))
        return True

    def _copy_to_device(self, data: np.ndarray, n: int, dst: Buffer, dst_offset: int) -> None:
        self.flush()  # queue writes run before the pending encoder's work: submit that first
        w = dst.handle
        start = dst_offset & ~3
        end = (dst_offset + n + 3) & ~3
        if start != dst_offset or (end != dst_offset + n and dst_offset + n < dst.nbytes):
            # a partial word at an edge holds bytes of other elements: merge with the device's copy
            merged = np.frombuffer(self._read_staging(w, start, end - start), np.uint8).copy()
            merged[dst_offset - start:dst_offset - start + n] = data
            data = merged
        elif end != dst_offset + n:  # the tail of the buffer: the padding bytes are free
            data = np.concatenate([data, np.zeros(end - dst_offset - n, np.uint8)])
        self.queue.write_buffer(w.buf, start, data)

    def copy_strided(self, src: Tensor, dst: Tensor) -> None:
        self.launch("copy", (src,), (dst,), {})

    # --- launches -----------------------------------------------------------------------------------
    @_entry
    def launch(self, kernel: str, inputs: Sequence, outputs: Sequence[Tensor], params: dict) -> None:
        fn = self.kernels.get(kernel)
        if fn is None:
            raise NotImplementedError(f"{kernel}: not implemented on {self.device} yet")
        lock = self._lock
        lock.acquire()  # (acquire/release: half the cost of ``with``, on every launch)
        try:
            if self._freed:
                self.allocator.pool_freed()
            fn(self, inputs, outputs, params)
        finally:
            lock.release()

    def bind(self, kernel: str, params: dict):
        """``run(inputs, outputs)``: ``launch(kernel, inputs, outputs, params)`` with the kernel looked up
        once and the entry checks inline (the namespace's per-signature plans call it once per eager call);
        None for a kernel this client lacks, whose launch raises NotImplementedError."""
        fn = self.kernels.get(kernel)
        if fn is None:
            return None
        lock = self._lock

        def run(inputs: Sequence, outputs: Sequence[Tensor]) -> None:
            if self.lost is not None:
                raise renewed(self.lost)
            lock.acquire()
            try:
                if self._freed:
                    self.allocator.pool_freed()
                fn(self, inputs, outputs, params)
            except wgpu.GPUError as e:
                self.raise_if_lost(e)
                raise
            finally:
                lock.release()

        return run

    # --- capture ------------------------------------------------------------------------------------
    @_entry
    def _begin_recording(self) -> None:
        self._lock.acquire()  # held until end_capture/abort_capture: the capture owns the device
        try:
            self.flush()
            self._upool = UniformPool(self.wdevice)
        except BaseException:
            self._upool = self._eager_pool
            self._lock.release()
            raise
        self._steps = []
        self._records = []
        self._bound = []
        self._whole = {}
        self._capture_pools = [self._upool]

    @_entry
    def _end_recording(self) -> WebGPUGraph:
        from ._fuse import fuse
        with self._lock:
            if self._steps is None:
                raise RuntimeError(f"end_capture: {self.device} is not being captured by this thread")
            try:
                steps = (fuse(self, self._steps, self._records, self._bound, self._unheld, self._whole)
                         if self.fusion else self._steps)
                self.flush()  # also writes the fused launches' parameters into the graph's uniform buffers
                return WebGPUGraph(self, steps, self._capture_pools, self.fusion_memory)
            finally:
                self._reset_capture()
                self._lock.release()  # begin_capture's hold

    def _abort_recording(self) -> None:
        with self._lock:
            if self._steps is None:  # no capture in progress
                return
            try:
                self.flush()
            except DeviceLostError:
                pass  # what was recorded is discarded either way
            finally:
                self._reset_capture()
                self._lock.release()  # begin_capture's hold

    def end_capture(self):
        arena = self.arena
        # (the base class drops the arena before _end_recording: what the fusion pass needs of it, taken first)
        self._unheld = {b.handle.serial for b in arena.unheld} if arena is not None else set()
        return super().end_capture()

    def _reset_capture(self) -> None:
        self._steps = None
        self._records = []
        self._bound = []
        self._whole = {}
        self._unheld = set()
        self._capture_pools = []
        self.fusion_memory = []
        self._upool = self._eager_pool

    @_entry
    def replay(self, graph: WebGPUGraph) -> None:
        """Run ``graph``'s steps after the work already encoded: its first two replays encode them into the
        pending compute pass, later ones submit the command buffer the replay before encoded for them. From the
        second replay on (``prepare_replays``), a replay is submitted whole and then the next one is encoded and
        finished while the GPU runs it: a graph replayed again is likely replayed many times, and its encoding
        (wgpu's finish above all) then leaves the time between a call and the GPU's start (on an H200,
        logistic regression's 101 dispatches: 166 µs before the first chunk's submission)."""
        with self._lock:
            if self._freed:
                self.allocator.pool_freed()
            ready, graph.ready = graph.ready, None
            if ready is None:
                self._replay(graph.steps, graph.encoded)
            else:
                self._flush()  # (the work before it first)
                self.queue.submit([ready])
            graph.replays += 1
            if graph.replays >= 2 and graph.encoded is not None and self.prepare_replays:
                self._flush()
                graph.ready = self._encoded_apart(graph.encoded)

    def _encoded_apart(self, encoded: list):
        """A finished command buffer of ``encoded``'s dispatches (a WebGPUGraph's), apart from the pending
        encoder."""
        # (a Ctrl-C meanwhile drops both objects, neither the client's)
        enc = self.wdevice.create_command_encoder()
        p = enc.begin_compute_pass()
        last = None
        for chunk in encoded:
            last = self._direct.encode(p._internal, chunk, last)
        p.end()
        return enc.finish()

    def _replay(self, steps: list, encoded: list | None) -> None:
        # into the pending pass, as an eager launch goes: a replay followed by a readback (or by the next
        # launches, as in a jitted call's copies) is then one submission instead of two
        p = self._pass
        if p is None:
            p = self._compute_pass()
        direct = self._direct
        if direct is not None and encoded is not None:
            last_chunk = len(encoded) - 1
            for c, chunk in enumerate(encoded):
                last, self._last_pipe = self._last_pipe, None  # (unknown until the chunk is encoded)
                self._last_pipe = direct.encode(p._internal, chunk, last)
                self._pending += len(chunk)
                if c < last_chunk:  # the GPU starts on this chunk while the next is encoded
                    self._flush()
                    p = self._compute_pass()
        else:
            last = None
            for pipe, bg, off, grid in steps:
                if pipe is not last:
                    p.set_pipeline(pipe.pipeline)
                    last = pipe
                p.set_bind_group(0, bg, [off])
                p.dispatch_workgroups(*grid)
            self._pending += len(steps)
        if self._pending >= MAX_PENDING:
            self._flush()


class RawHandle(NamedTuple):
    """The escape hatch for custom kernels: the wgpu device and its queue."""
    device: Any
    queue: Any

