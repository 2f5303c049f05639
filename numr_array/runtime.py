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
  become a :class:`Graph` that :meth:`Graph.replay` re-runs on the same buffers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

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


class Allocator(ABC):
    """Device memory with byte accounting and a freeze switch.

    Guarantees: ``allocate`` returns a Buffer of at least ``nbytes`` (MemoryError naming the size when
    the device has no room); while frozen, ``allocate`` raises AllocatorFrozenError so no buffer can
    come from the pool behind a capture's back (``allocate_unfrozen`` is the arena's way in).
    """

    def __init__(self) -> None:
        self._in_use = 0
        self._peak = 0
        self._count = 0
        self._frozen = False

    @abstractmethod
    def _raw_allocate(self, nbytes: int) -> Any:
        """Return a backend handle for ``nbytes`` bytes; MemoryError when the device has no room."""

    @abstractmethod
    def _raw_free(self, handle: Any, nbytes: int) -> None:
        """Give the memory behind ``handle`` back to the device or its pool."""

    def allocate(self, nbytes: int) -> Buffer:
        return self.track(self._raw_allocate(nbytes), nbytes)

    def track(self, handle: Any, nbytes: int) -> Buffer:
        """Account for memory a backend obtained itself (in a shape it can use directly) as a Buffer."""
        if self._frozen:
            raise AllocatorFrozenError(f"allocate({nbytes}): the allocator is frozen while a graph is captured")
        in_use = self._in_use = self._in_use + nbytes
        self._count += 1
        if in_use > self._peak:
            self._peak = in_use
        return Buffer(handle, nbytes, self)

    def allocate_unfrozen(self, nbytes: int) -> Buffer:
        return self._track(self._raw_allocate(nbytes), nbytes)

    def _track(self, handle: Any, nbytes: int) -> Buffer:
        self._in_use += nbytes
        self._count += 1
        if self._in_use > self._peak:
            self._peak = self._in_use
        return Buffer(handle, nbytes, self)

    def deallocate(self, buffer: Buffer) -> None:
        """Return ``buffer``'s memory; called when the Buffer's last reference goes."""
        buffer.owner = None
        self._in_use -= buffer.nbytes
        self._count -= 1
        self._raw_free(buffer.handle, buffer.nbytes)

    def freeze(self) -> None:
        self._frozen = True

    def unfreeze(self) -> None:
        self._frozen = False

    @property
    def is_frozen(self) -> bool:
        return self._frozen

    def stats(self) -> AllocatorStats:
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
    """Operations on one device: memory, copies, kernel launches, synchronisation and capture."""

    device: "Device"
    allocator: Allocator
    #: the active capture's arena while this device is being captured, else None
    arena: Any = None

    def alloc(self, nbytes: int) -> Buffer:
        """A buffer for a result: from the capture arena while capturing, else from the allocator."""
        arena = self.arena
        if arena is not None:
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
        """Start recording every launch on this device."""

    @abstractmethod
    def end_capture(self) -> Graph:
        """Stop recording and return the graph of the launches since begin_capture."""

    @abstractmethod
    def abort_capture(self) -> None:
        """Stop recording and discard what was recorded; the device stays usable."""

    def supports_dtype(self, dtype) -> bool:
        return True


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
