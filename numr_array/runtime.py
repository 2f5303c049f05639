"""The Runtime interface every backend implements (after numr's ``Runtime`` trait).

A backend package (``numr_array.backends.<name>``) exposes ``create_runtime() -> Runtime | None``; it
returns None when its library (CuPy, wgpu) is missing or finds no device, and the backend is then simply
absent from ``devices()``. The namespace layer talks to a device only through its :class:`Client`:

* memory: :meth:`Client.alloc` / :meth:`Client.alloc_tensor` (graph arena while capturing, else the
  :class:`Allocator`), copies to and from the host, and :meth:`Client.copy_strided`;
* compute: :meth:`Client.launch` runs one kernel declared in numr_array/kernels.py (the contract: its
  operands and params keys) on tensors whose shapes, dtypes and strides the namespace has already
  validated; a backend never validates, promotes or allocates results itself (an element-wise launch
  carries its compute dtype as ``params["dtype"]``);
* capture: :meth:`Client.begin_capture` / :meth:`Client.end_capture` (or :meth:`Client.abort_capture`)
  bracket a block whose launches become a :class:`Graph` that :meth:`Graph.replay` re-runs on the same
  buffers; they freeze the allocator and install the capture's arena, and call the backend's hooks
  (``_begin_recording``, ``_end_recording``, ``_abort_recording``);
* loss: a backend that finds its device lost calls :meth:`Client.mark_lost`; the client, its allocator
  (and so every buffer it made) and its graphs then refuse all work with DeviceLostError, and a
  recoverable device gets a new client (a new generation) when the next array is created on it;
* interop (optional): a client that shares its memory with other libraries without a copy also
  implements :class:`HostInterop` (memory the host reads directly: CPU) or :class:`CudaInterop` (CUDA
  memory); the namespace tests for them with ``isinstance``. WebGPU implements neither;
* peer copies (optional): a client that copies to another device of its backend without the host
  implements :class:`PeerCopy` (CUDA); ``to_device`` between two such devices uses it.

Errors, the part of the contract the namespace and users rely on (each backend's wording below):

* out of memory: :meth:`Allocator.allocate` and :meth:`Client.alloc_tensor` raise MemoryError naming
  the size (CPU: ``"cpu: cannot allocate N bytes"`` or ``"... an array of shape S and dtype D"``; CUDA:
  ``"cuda:i: out of device memory allocating N bytes (M MiB)"`` after freeing CuPy's cached blocks once,
  outside a capture; WebGPU: ``"webgpu:i: cannot allocate N bytes (wgpu's reason)"`` after emptying its
  pool once, or ``"... the adapter's largest buffer (max-buffer-size) is ..."``); the device stays usable;
* frozen: while a capture is active, an allocation from the allocator (not the arena) in the capturing
  thread raises :class:`AllocatorFrozenError`;
* device loss: :class:`~numr_array.errors.DeviceLostError` from every entry point once the device is
  lost. CPU: never lost. CUDA: a sticky CUDA error (illegal address, launch failure, ...) loses the
  device for the process (``recoverable = False``). WebGPU: wgpu's device-lost callback, or the
  "Parent device is lost" validation error, loses it; ``recoverable = True``;
* capture: :class:`~numr_array.errors.CaptureError` (raised after aborting the capture, so the device
  stays usable) for an operation the backend cannot record. CPU and WebGPU record every kernel; CUDA
  raises it for a library call that refuses stream capture (cuSOLVER-backed linalg, CuPy's LU) and when
  the stream capture itself fails at ``end_capture``. Host reads raise it on every backend
  (``errors.check_host_read``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import pathlib
import threading
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .errors import DeviceLostError

if TYPE_CHECKING:
    from ._device import Device
    from ._tensor import Tensor


def _compiled():
    """numr_array._speedups (numr_array/_speedups.c), or None where it was not compiled (no C compiler at
    install) or ``NUMR_SPEEDUPS=0`` turns it off (the pure-Python path, for tests and comparisons). Imported
    by name: the compiled module imports nothing of numr_array, which tests/test_contract.py, reading .py
    sources only, cannot see."""
    if os.environ.get("NUMR_SPEEDUPS", "1") == "0":
        return None
    try:
        module = importlib.import_module("numr_array._speedups")
    except ImportError:
        return None
    # In a checkout (editable install) the source lies beside the module: one built from another version of
    # it may not match the Python around it, so it is refused (an installed wheel carries no source).
    source = pathlib.Path(__file__).with_name("_speedups.c")
    if source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() != getattr(module, "SOURCE_SHA256", ""):
        warnings.warn("numr_array._speedups was compiled from another version of numr_array/_speedups.c: "
                      "running the pure-Python path; rebuild it with `pip install -e .`", RuntimeWarning, stacklevel=2)
        return None
    return module


#: the compiled parts, or None: a Buffer's end and the accounting run in C, without a Python frame, and the
#: namespace's element-wise calls of a cached CPU plan (numr_array._elementwise)
speedups = _compiled()
BufferBase = speedups.BufferBase if speedups is not None else None
Ledger = speedups.Ledger if speedups is not None else None

if BufferBase is None:  # not compiled: the same in Python
    class BufferBase:
        """The data of a device allocation, returned to its owner when the last reference goes."""

        __slots__ = ("handle", "nbytes", "owner", "__weakref__")

        def __init__(self, handle: Any, nbytes: int, owner: "Allocator | None"):
            self.handle = handle
            self.nbytes = nbytes
            self.owner = owner

        def __del__(self):
            owner = self.owner
            if owner is not None:
                owner.deallocate(self)


class Buffer(BufferBase):
    """One device allocation, reference-counted by Python.

    ``handle`` is the backend's own object (a NumPy byte array on CPU, a CuPy memory pointer on CUDA, a
    wgpu buffer on WebGPU). When the last reference goes, the memory returns to ``owner`` (the allocator,
    or a graph's arena, which keeps its memory until the graph itself goes, and may reuse it within the
    capture block once the buffer is dead): ``owner.deallocate(buffer)``.
    """

    # ``exported``: set once the memory is handed to another library (NumPy, DLPack,
    # __cuda_array_interface__), which may hold it without holding a reference to any tensor: then no result
    # is ever written into it in place of a new buffer (numr_array._launch.reusable). The C path's results
    # (numr_array/_speedups.c, make_result) set it False without running __init__.
    __slots__ = ("exported",)

    def __init__(self, handle: Any, nbytes: int, owner: "Allocator | None"):
        BufferBase.__init__(self, handle, nbytes, owner)
        self.exported = False

    def mark_constant(self) -> None:
        """A host upload is about to write this buffer (called first, by ``copy_to_device``). Inside a capture
        that write is not recorded, so its bytes are a constant of the graph: a capture arena's buffer then
        gets memory no other tensor of the block uses (its ``handle`` may change). Else nothing."""
        return None


@dataclass(frozen=True)
class AllocatorStats:
    bytes_in_use: int
    peak_bytes: int
    allocations: int


class AllocatorFrozenError(RuntimeError):
    """Raised by an allocation from a frozen allocator: during capture all memory comes from the arena."""


#: the ``Allocator._frozen`` of a lost allocator: no thread's ident, so every thread reaches the lost check
_LOST = -1


if Ledger is None:  # not compiled: the accounting in Python, under a lock (the C one is atomic under the GIL)
    class Ledger:
        """An allocator's byte accounting: bytes in use, their peak, live allocations.

        Updated under ``_stats_lock``, since a Buffer is freed by whichever thread drops its last reference.
        That lock is held for a few integer updates only (no call that could free a Buffer, which would take
        it again), so it is a plain Lock; acquire/release rather than ``with``, which costs twice as much."""

        def __init__(self) -> None:
            self._in_use = 0
            self._peak = 0
            self._count = 0
            self._stats_lock = threading.Lock()

        def _add(self, nbytes: int) -> None:
            lock = self._stats_lock
            lock.acquire()
            try:
                in_use = self._in_use = self._in_use + nbytes
                self._count += 1
                if in_use > self._peak:
                    self._peak = in_use
            finally:
                lock.release()

        def _untrack(self, buffer: "Buffer") -> None:
            buffer.owner = None
            lock = self._stats_lock
            lock.acquire()
            try:
                self._in_use -= buffer.nbytes
                self._count -= 1
            finally:
                lock.release()

        def _totals(self) -> tuple[int, int, int]:
            with self._stats_lock:
                return self._in_use, self._peak, self._count

        def _reset_peak(self) -> None:
            with self._stats_lock:
                self._peak = self._in_use


class Allocator(Ledger, ABC):
    """Device memory with byte accounting (the :class:`Ledger`) and a freeze switch.

    Guarantees: ``allocate`` returns a Buffer of at least ``nbytes`` (MemoryError naming the size when
    the device has no room); while frozen, ``allocate`` raises AllocatorFrozenError in the thread that
    froze it (the capturing thread) so no buffer can come from the pool behind a capture's back
    (``allocate_unfrozen`` is the arena's way in); other threads allocate as usual. Once its device is
    lost (``lost`` set) it refuses every thread with DeviceLostError.

    Thread safety: the accounting is atomic (the Ledger's), whichever thread frees a Buffer.
    """

    #: the DeviceLostError of this allocator's device once it is lost: its memory, and every buffer in it, is gone
    lost: DeviceLostError | None = None

    def __init__(self) -> None:
        Ledger.__init__(self)
        self._frozen: int | None = None  # the ident of the thread that froze the allocator

    @abstractmethod
    def _raw_allocate(self, nbytes: int) -> Any:
        """Return a backend handle for ``nbytes`` bytes; MemoryError when the device has no room."""

    @abstractmethod
    def _raw_free(self, handle: Any, nbytes: int) -> None:
        """Give the memory behind ``handle`` back to the device or its pool (called from any thread)."""

    def allocate(self, nbytes: int) -> Buffer:
        if self._frozen is not None:
            self._check_frozen(nbytes)  # before _raw_allocate takes memory from the device
        return self.track(self._raw_allocate(nbytes), nbytes, True)

    def _check_frozen(self, nbytes: int) -> None:
        if self.lost is not None:
            raise renewed(self.lost)
        if self._frozen == threading.get_ident():
            raise AllocatorFrozenError(f"allocate({nbytes}): the allocator is frozen while a graph is captured")

    def allocate_unfrozen(self, nbytes: int) -> Buffer:
        if self.lost is not None:
            raise renewed(self.lost)
        return self.track(self._raw_allocate(nbytes), nbytes, True)

    def track(self, handle: Any, nbytes: int, checked: bool = False) -> Buffer:
        """Account for ``nbytes`` of memory at ``handle`` as a Buffer: memory from ``_raw_allocate``, or
        memory a backend obtained itself (in a shape it can use directly). Unless ``checked`` (the caller
        has checked the freeze and loss already), refused as ``allocate`` is while frozen or lost."""
        if not checked and self._frozen is not None:
            self._check_frozen(nbytes)
        self._add(nbytes)
        return Buffer(handle, nbytes, self)

    def deallocate(self, buffer: Buffer) -> None:
        """Return ``buffer``'s memory; called when the Buffer's last reference goes, in any thread."""
        self._untrack(buffer)
        self._raw_free(buffer.handle, buffer.nbytes)

    def mark_lost(self, err: DeviceLostError) -> None:
        """Refuse every thread's allocations with ``err`` from now on (the device and its memory are gone)."""
        self.lost = err
        self._frozen = _LOST

    def freeze(self) -> None:
        """Refuse allocations from the calling thread until ``unfreeze``."""
        self._frozen = threading.get_ident()

    def unfreeze(self) -> None:
        # a lost allocator stays "frozen" for every thread, so that its check costs allocations nothing
        self._frozen = None if self.lost is None else _LOST

    @property
    def is_frozen(self) -> bool:
        return self._frozen is not None

    def stats(self) -> AllocatorStats:
        return AllocatorStats(*self._totals())

    def reset_peak(self) -> None:
        """Start the high-water mark afresh from the bytes in use now."""
        self._reset_peak()

    def pooled_bytes(self) -> int:
        """Freed memory the backend keeps cached for reuse rather than giving back to the device (none here)."""
        return 0

    def release_pool(self) -> None:
        """Give the cached memory of ``pooled_bytes`` back to the device (nothing to do here)."""
        return None


class Graph(ABC):
    """A recorded sequence of launches on fixed buffers."""

    @abstractmethod
    def replay(self) -> None:
        """Re-run every recorded launch, in order, on the buffers it was recorded with."""

    def release(self) -> None:
        """Free backend resources (a CUDA graph exec); the buffers themselves are the CapturedGraph's."""
        return None


class Client(ABC):
    """Operations on one device: memory, copies, kernel launches, synchronisation and capture.

    Several threads may call one Client at once: each backend makes every method safe for that (a lock
    where the device's state is shared, docs/architecture.md "Threads"), and a capture records only the
    launches of the thread that began it.
    """

    device: "Device"
    allocator: Allocator
    #: the active capture's arena while this device is being captured (set by begin_capture, removed by
    #: end_capture/abort_capture), else None; it serves only the capturing thread (``arena.thread``)
    arena: Any = None
    #: the DeviceLostError once the device is lost (see mark_lost), else None
    lost: DeviceLostError | None = None
    #: whether a lost device can be replaced by a fresh one in this process (WebGPU: yes; CUDA: no, a sticky
    #: error poisons the process's context; the CPU is never lost)
    recoverable: bool = True

    def raise_if_lost(self, e: BaseException) -> None:
        """Raise DeviceLostError from the backend error ``e`` (marking this client lost) if ``e`` means the
        device is lost, or it was already; else return, and the caller re-raises ``e``. Backends whose
        devices can be lost override this; the base class knows no such error."""
        if self.lost is not None:
            raise renewed(self.lost) from e

    def mark_lost(self, reason: str) -> DeviceLostError:
        """Record that the device is lost (the first reason is kept) and return the error to raise: from now
        on this client, its allocator's buffers and its graphs refuse all work, and a recoverable device
        gets a new client at the next array created on it (``_device.resolve_device``)."""
        global lost_count
        if self.lost is None:
            self.lost = DeviceLostError(str(self.device), reason, self.recoverable)
            self.allocator.mark_lost(self.lost)
            lost_count += 1
        return renewed(self.lost)

    def alloc(self, nbytes: int) -> Buffer:
        """A buffer for a result: from the capture arena in the capturing thread, else from the allocator."""
        arena = self.arena
        if arena is not None and arena.thread == threading.get_ident():
            return arena.allocate(nbytes)
        return self.allocator.allocate(nbytes)

    def alloc_tensor(self, shape: tuple[int, ...], dtype) -> tuple[Buffer, Any]:
        """Memory for a new C-contiguous tensor, with the backend's native view of it where that comes free."""
        n = dtype.itemsize
        for d in shape:
            n *= d
        return self.alloc(n), None

    @property
    @abstractmethod
    def raw_handle(self) -> Any:
        """The backend's native handle (stream and device on CUDA, device and queue on WebGPU) for custom kernels."""

    @abstractmethod
    def synchronize(self) -> None:
        """Block until all work submitted to this device has finished."""

    @abstractmethod
    def copy_to_device(self, host: np.ndarray, dst: Buffer, dst_offset: int = 0) -> None:
        """Copy the bytes of the C-contiguous ``host`` array into ``dst`` at byte ``dst_offset``."""

    @abstractmethod
    def copy_from_device(self, src: Buffer, src_offset: int, out: np.ndarray) -> None:
        """Fill the C-contiguous host array ``out`` with ``out.nbytes`` bytes of ``src`` from byte ``src_offset``."""

    @abstractmethod
    def copy_strided(self, src: "Tensor", dst: "Tensor") -> None:
        """Write the strided view ``src`` into the C-contiguous tensor ``dst`` of the same shape and dtype."""

    @abstractmethod
    def launch(self, kernel: str, inputs: Sequence["Tensor"], outputs: Sequence["Tensor"], params: dict) -> None:
        """Run the declared kernel named ``kernel`` reading ``inputs`` and writing ``outputs`` with the
        declared ``params``; recorded when a capture is active."""

    def begin_capture(self, arena) -> None:
        """Start recording every launch of the calling thread on this device, with ``arena`` (the capture's
        scratch memory, serving only ``arena.thread``) giving every allocation of this thread until
        end_capture/abort_capture, and the allocator frozen for this thread meanwhile.

        Waits while another thread captures this device; from here to end_capture/abort_capture (called
        by the same thread) the capture owns the device: a backend whose capture records a queue all
        threads share (CUDA, WebGPU) makes other threads' calls on the device wait until then. If the
        backend cannot start recording, its error propagates and nothing is frozen or installed."""
        self._begin_recording()
        self.allocator.freeze()
        self.arena = arena

    def end_capture(self) -> Graph:
        """Stop recording and return the graph of the launches since begin_capture. The arena is removed
        and the allocator unfrozen first; the device is released even when this raises (CaptureError on
        CUDA when the stream capture failed)."""
        self._release_arena()
        return self._end_recording()

    def abort_capture(self) -> None:
        """Stop recording and discard what was recorded; the device stays usable and is released. Does
        nothing when the calling thread is not capturing this device."""
        self._release_arena()
        self._abort_recording()

    def _release_arena(self) -> None:
        arena = self.arena
        if arena is not None and arena.thread == threading.get_ident():
            self.arena = None
            self.allocator.unfreeze()

    @abstractmethod
    def _begin_recording(self) -> None:
        """Backend hook of begin_capture: wait for the device (see begin_capture) and start recording."""

    @abstractmethod
    def _end_recording(self) -> Graph:
        """Backend hook of end_capture: stop recording, release the device, return the graph."""

    @abstractmethod
    def _abort_recording(self) -> None:
        """Backend hook of abort_capture: discard the recording and release the device (no-op without one)."""

    def supports_dtype(self, dtype) -> bool:
        return True


class Interop(ABC):
    """Optional part of the Client interface: tensors that share memory with other libraries, both ways,
    without a copy. A Client implements it through one of the two subclasses below, where its memory
    allows; the namespace tests ``isinstance(client, HostInterop)`` / ``CudaInterop``."""

    @abstractmethod
    def adopt(self, obj) -> "Tensor":
        """A tensor over the memory of another library's array ``obj``, in its own layout, without a copy
        (the memory stays its owner's: no allocator accounts for it). ValueError when ``obj``'s memory is
        not this device's or its strides are not whole elements; TypeError when it exposes no memory."""

    @abstractmethod
    def dlpack(self, t: "Tensor", *, stream=None, max_version=None, copy=None):
        """A DLPack capsule of ``t``'s memory (a copy of it with ``copy=True``), ordered before the
        consumer's ``stream`` where the device has streams."""


class HostInterop(Interop):
    """Interop of a device whose memory the host reads directly (CPU): NumPy views, no transfers."""

    @abstractmethod
    def host_view(self, t: "Tensor") -> np.ndarray:
        """The NumPy view of ``t`` over its own memory (the host read of ``t``, without a copy)."""


class CudaInterop(Interop):
    """Interop of a CUDA device: ``__cuda_array_interface__`` besides DLPack."""

    @abstractmethod
    def cuda_array_interface(self, t: "Tensor") -> dict:
        """``__cuda_array_interface__`` (v3) of ``t``, its ``stream`` the stream a consumer synchronises with."""


class PeerCopy(ABC):
    """Optional part of the Client interface: copies from this device's memory to another device of the same
    backend without going through the host (``to_device`` between two GPUs)."""

    @abstractmethod
    def copy_to_peer(self, src: "Tensor", dst: "Tensor", peer: "Client") -> None:
        """Copy the C-contiguous ``src`` (this device's) into the C-contiguous ``dst`` of the same shape and
        dtype on ``peer``'s device (a client of this backend, not this one), device to device; ordered after
        the work both devices already have and before the work either gets next."""


#: how many clients have been lost in this process: while 0, the namespace skips the per-tensor check_live
lost_count = 0


def entry_point(errors: tuple[type[BaseException], ...]):
    """Decorator of a Client entry point: DeviceLostError before any work once the device is lost, and in
    place of a backend error of type ``errors`` that ``Client.raise_if_lost`` finds means a lost device."""

    def decorate(method):
        @functools.wraps(method)
        def entry(self, *args, **kwargs):
            if self.lost is not None:
                raise renewed(self.lost)
            try:
                return method(self, *args, **kwargs)
            except errors as e:
                self.raise_if_lost(e)
                raise

        return entry

    return decorate


def renewed(err: DeviceLostError) -> DeviceLostError:
    """A fresh copy of ``err`` to raise (raising one instance again and again would grow its traceback)."""
    return DeviceLostError(err.device, err.reason, err.recoverable)


def check_live(tensors: Sequence) -> None:
    """DeviceLostError if one of ``tensors`` (non-tensors are skipped) is in the memory of a lost device."""
    for t in tensors:
        buf = getattr(t, "_buf", None)
        owner = buf.owner if buf is not None else None
        if owner is not None and owner.lost is not None:
            raise renewed(owner.lost)


class Runtime(ABC):
    """One backend: its devices and a Client per device."""

    name: str

    @abstractmethod
    def device_count(self) -> int:
        """How many devices of this backend exist (0: the backend is absent)."""

    @abstractmethod
    def create_client(self, device: "Device") -> Client:
        """The Client of ``device`` (one of this backend's, its index below device_count()); called once per
        device, on first use."""

    def default_index(self) -> int:
        """The device a bare kind name ('cuda', 'webgpu') means."""
        return 0
