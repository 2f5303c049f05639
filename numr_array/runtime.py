"""The Runtime interface every backend implements (after numr's ``Runtime`` trait).

A backend package (``numr_array.backends.<name>``) exposes ``create_runtime() -> Runtime | None``; it
returns None when its library (CuPy, wgpu) is missing or finds no device, and the backend is then simply
absent from ``devices()``. The namespace layer talks to a device only through its :class:`Client`:

* memory: :meth:`Client.alloc` (graph arena while capturing, else the :class:`Allocator`), copies to,
  from and within the device, and :meth:`Client.copy_strided`;
* compute: :meth:`Client.launch` runs one kernel declared in numr_array/kernels.py (the contract: its
  operands and params keys) on tensors whose shapes, dtypes and strides the namespace has already
  validated; a backend never validates, promotes or allocates results itself (an element-wise launch
  carries its compute dtype as ``params["dtype"]``);
* capture: :meth:`Client.begin_capture` / :meth:`Client.end_capture` bracket a block whose launches
  become a :class:`Graph` that :meth:`Graph.replay` re-runs on the same buffers;
* loss: a backend that finds its device lost calls :meth:`Client.mark_lost`; the client, its allocator
  (and so every buffer it made) and its graphs then refuse all work with DeviceLostError, and a
  recoverable device gets a new client (a new generation) when the next array is created on it.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .errors import DeviceLostError

if TYPE_CHECKING:
    from ._device import Device
    from ._tensor import Tensor


class Buffer:
    """One device allocation, reference-counted by Python.

    ``handle`` is the backend's own object (a NumPy byte array on CPU, a CuPy memory pointer on CUDA, a
    wgpu buffer on WebGPU). When the last reference goes, the memory returns to ``owner`` (the allocator,
    or a graph's arena, which keeps it until the graph itself goes).
    """

    __slots__ = ("handle", "nbytes", "owner", "__weakref__")

    def __init__(self, handle: Any, nbytes: int, owner: "Allocator | None"):
        self.handle = handle
        self.nbytes = nbytes
        self.owner = owner

    def __del__(self):
        owner = self.owner
        if owner is not None:
            owner.deallocate(self)


@dataclass(frozen=True)
class AllocatorStats:
    bytes_in_use: int
    peak_bytes: int
    allocations: int


class AllocatorFrozenError(RuntimeError):
    """Raised by an allocation from a frozen allocator: during capture all memory comes from the arena."""


#: the ``Allocator._frozen`` of a lost allocator: no thread's ident, so every thread reaches the lost check
_LOST = -1


class Allocator(ABC):
    """Device memory with byte accounting and a freeze switch.

    Guarantees: ``allocate`` returns a Buffer of at least ``nbytes`` (MemoryError naming the size when
    the device has no room); while frozen, ``allocate`` raises AllocatorFrozenError in the thread that
    froze it (the capturing thread) so no buffer can come from the pool behind a capture's back
    (``allocate_unfrozen`` is the arena's way in); other threads allocate as usual. Once its device is
    lost (``lost`` set) it refuses every thread with DeviceLostError.

    Thread safety: the counters are updated under ``_stats_lock``, since a Buffer is freed by whichever
    thread drops its last reference. That lock is held for a few integer updates only (no call that
    could free a Buffer, which would take it again), so it is a plain Lock.
    """

    #: the DeviceLostError of this allocator's device once it is lost: its memory, and every buffer in it, is gone
    lost: DeviceLostError | None = None

    def __init__(self) -> None:
        self._in_use = 0
        self._peak = 0
        self._count = 0
        self._frozen: int | None = None  # the ident of the thread that froze the allocator
        self._stats_lock = threading.Lock()

    @abstractmethod
    def _raw_allocate(self, nbytes: int) -> Any:
        """Return a backend handle for ``nbytes`` bytes; MemoryError when the device has no room."""

    @abstractmethod
    def _raw_free(self, handle: Any, nbytes: int) -> None:
        """Give the memory behind ``handle`` back to the device or its pool (called from any thread)."""

    def allocate(self, nbytes: int) -> Buffer:
        if self._frozen is not None:
            self._check_frozen(nbytes)
        return self.track(self._raw_allocate(nbytes), nbytes)

    def track(self, handle: Any, nbytes: int) -> Buffer:
        """Account for memory a backend obtained itself (in a shape it can use directly) as a Buffer."""
        if self._frozen is not None:
            self._check_frozen(nbytes)
        # _track's body, inline: this runs once per new result on the CPU's eager path
        lock = self._stats_lock
        lock.acquire()
        try:
            in_use = self._in_use = self._in_use + nbytes
            self._count += 1
            if in_use > self._peak:
                self._peak = in_use
        finally:
            lock.release()
        return Buffer(handle, nbytes, self)

    def _check_frozen(self, nbytes: int) -> None:
        if self.lost is not None:
            raise renewed(self.lost)
        if self._frozen == threading.get_ident():
            raise AllocatorFrozenError(f"allocate({nbytes}): the allocator is frozen while a graph is captured")

    def allocate_unfrozen(self, nbytes: int) -> Buffer:
        if self.lost is not None:
            raise renewed(self.lost)
        return self._track(self._raw_allocate(nbytes), nbytes)

    # (acquire/release rather than ``with``: these run once each per temporary, and ``with`` costs twice as much)
    def _track(self, handle: Any, nbytes: int) -> Buffer:
        lock = self._stats_lock
        lock.acquire()
        try:
            in_use = self._in_use = self._in_use + nbytes
            self._count += 1
            if in_use > self._peak:
                self._peak = in_use
        finally:
            lock.release()
        return Buffer(handle, nbytes, self)

    def _untrack(self, buffer: Buffer) -> None:
        buffer.owner = None
        lock = self._stats_lock
        lock.acquire()
        try:
            self._in_use -= buffer.nbytes
            self._count -= 1
        finally:
            lock.release()

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
        with self._stats_lock:
            return AllocatorStats(self._in_use, self._peak, self._count)


class Event:
    """A point in a device's compute stream; ``synchronize`` waits for it. Trivial where work is synchronous."""

    def synchronize(self) -> None:
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
    #: the active capture's arena while this device is being captured, else None; it serves only the
    #: capturing thread (``arena.thread``)
    arena: Any = None
    #: the DeviceLostError once the device is lost (see mark_lost), else None
    lost: DeviceLostError | None = None
    #: whether a lost device can be replaced by a fresh one in this process (WebGPU: yes; CUDA: no, a sticky
    #: error poisons the process's context; the CPU is never lost)
    recoverable: bool = True

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
    def copy_within_device(self, src: Buffer, src_offset: int, dst: Buffer, dst_offset: int, nbytes: int) -> None:
        """Copy ``nbytes`` bytes between (possibly the same, non-overlapping) device buffers."""

    @abstractmethod
    def copy_strided(self, src: "Tensor", dst: "Tensor") -> None:
        """Write the strided view ``src`` into the C-contiguous tensor ``dst`` of the same shape and dtype."""

    def record_event(self) -> Event:
        """Mark the current point of the compute stream."""
        return Event()

    def copy_from_device_pipelined(self, src: Buffer, src_offset: int, out: np.ndarray, event: Event) -> None:
        """Like copy_from_device, ordered after ``event`` on a copy stream where the backend has one."""
        event.synchronize()
        self.copy_from_device(src, src_offset, out)

    @abstractmethod
    def launch(self, kernel: str, inputs: Sequence["Tensor"], outputs: Sequence["Tensor"], params: dict) -> None:
        """Run the declared kernel named ``kernel`` reading ``inputs`` and writing ``outputs`` with the
        declared ``params``; recorded when a capture is active."""

    @abstractmethod
    def begin_capture(self) -> None:
        """Start recording every launch of the calling thread on this device. Waits while another thread
        captures this device; from here to end_capture/abort_capture (called by the same thread) the
        capture owns the device: a backend whose capture records a queue all threads share (CUDA, WebGPU)
        makes other threads' calls on the device wait until then."""

    @abstractmethod
    def end_capture(self) -> Graph:
        """Stop recording and return the graph of the launches since begin_capture (the device is released
        even when this raises)."""

    @abstractmethod
    def abort_capture(self) -> None:
        """Stop recording and discard what was recorded; the device stays usable and is released."""

    def supports_dtype(self, dtype) -> bool:
        return True


#: how many clients have been lost in this process: while 0, the namespace skips the per-tensor check_live
lost_count = 0


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
    supports_graph_capture: bool = True

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
