"""Graph capture: ``with numr_array.capture() as g:`` records a block of launches; ``g.replay()`` re-runs them.

While a block is captured on a device:

* every launch on that device runs once and is recorded by the device's Client (a CUDA graph on CUDA, a
  list of prebound launches on CPU and WebGPU);
* the device allocator is frozen and every buffer allocated in the block comes from the graph's
  :class:`Arena`, which lives as long as the graph;
* every buffer from outside the block that a launch reads or writes is held by the graph (``g.inputs``,
  ``g.outputs``), so no address baked into the graph can be freed while it can replay;
* anything that needs the host to read device data raises :class:`CaptureError`, which aborts the
  capture: the graph is discarded, the allocator unfrozen and the device left usable.

Threads: a capture belongs to the thread that entered the block. Only that thread's calls are
recorded, tracked and checked; a thread may capture one device at a time, and a second thread's capture
of the same device waits for the first to end. Other threads keep working meanwhile: on CPU alongside
the capture, while on CUDA and WebGPU, where the capture records the device's one stream or queue,
their calls on the captured device wait until the block ends (so a capturing thread must not wait
inside its block for another thread's work on the same device). Other devices are untouched: calls on
them, the capturing thread's own included, run eagerly, unrecorded and untracked (host reads of their data
too), and another thread may capture one of them meanwhile; ``to_device`` is refused only to or from the
captured device.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Callable

from . import errors
from .errors import CaptureError, abort_active, check_host_read  # noqa: F401  (re-exported to the namespace)
from .runtime import Allocator, Buffer, Client, Graph, renewed

if TYPE_CHECKING:
    from ._device import Device
    from ._tensor import Tensor


class ArenaBuffer(Buffer):
    """What a tensor of the block holds: one of the arena's blocks of memory, shared, not owned.

    Its ``owner`` is the arena's :class:`_Recycler`: when its last reference goes inside the block, the
    block is filed for reuse by a later allocation of the same block. It holds the block itself, so a
    tensor still referenced after the graph is gone keeps its memory.
    """

    __slots__ = ("block", "constant", "reused")

    def __init__(self, block: Buffer, nbytes: int, owner: "_Recycler", reused: bool):
        super().__init__(block.handle, nbytes, owner)  # (the bytes asked for, as an allocator's Buffer has)
        self.block = block
        self.constant = False
        self.reused = reused  # the block served an earlier tensor of the block

    def mark_constant(self) -> None:
        # an upload is not recorded: its bytes must stay in the block for every replay, so the block never
        # serves another allocation, and one that served an earlier tensor (whose launches a replay reruns,
        # writing it) is swapped for a block of its own. Uploads go to fresh tensors, before any launch
        # has used their memory (from_numpy, a backend's table), which makes the swap safe.
        self.constant = True
        if self.reused and self.owner is not None:
            self.owner.renew(self)


class _Recycler:
    """The owner of the buffers an arena hands out, and its free blocks by size while the block runs.

    Kept apart from the :class:`Arena` (which the graph holds): a tensor that outlives its graph holds
    this object and its own block, not the arena's other blocks.
    """

    def __init__(self, allocator: Allocator):
        self._allocator = allocator
        self.ids: set[int] = set()  # id() of each live buffer handed out (a dead one's id may recur)
        self.free: dict[int, list[Buffer]] | None = {}  # nbytes -> free blocks; None once the block ended
        #: id() of a block -> how often it was handed out or filed for reuse: a change since a launch stored
        #: into the block means the tensor it stored for has died (a backend holding that launch back may
        #: then leave the store out)
        self.events: dict[int, int] = {}
        self.new_block: Callable[[int], Buffer] | None = None  # the arena's, while the block runs

    @property
    def lost(self):
        """The allocator's DeviceLostError once the device is lost (``runtime.check_live`` reads it)."""
        return self._allocator.lost

    def hand_out(self, block: Buffer, nbytes: int, reused: bool) -> ArenaBuffer:
        buf = ArenaBuffer(block, nbytes, self, reused)
        self.ids.add(id(buf))
        self.events[id(block)] = self.events.get(id(block), 0) + 1
        return buf

    def deallocate(self, buffer: ArenaBuffer) -> None:
        """File ``buffer``'s block for reuse; called when the last reference to ``buffer`` goes, in any thread."""
        buffer.owner = None
        self.ids.discard(id(buffer))
        free = self.free
        if free is not None and not buffer.constant and not buffer.exported:  # (a consumer may hold the pointer)
            block = buffer.block
            self.events[id(block)] = self.events.get(id(block), 0) + 1  # (a lost race only keeps a store)
            free.setdefault(block.nbytes, []).append(block)  # (setdefault and append are atomic)

    def renew(self, buffer: ArenaBuffer) -> None:
        """Move ``buffer`` (not used by any launch yet) to a block no other tensor of the block has used."""
        new_block, free = self.new_block, self.free
        if new_block is None or free is None:  # the block has ended: nothing is reused any more
            return
        old = buffer.block
        buffer.block = block = new_block(old.nbytes)
        buffer.handle = block.handle
        buffer.reused = False
        free.setdefault(old.nbytes, []).append(old)


class Arena:
    """Scratch memory for the intermediates of one captured graph.

    Its blocks bypass the frozen allocator and are kept until the arena itself goes, after the graph
    that bakes their addresses in. A block whose tensor dies inside the block serves a later allocation
    of the block: replay runs the launches in the same order, so a launch that reads the memory as the
    old tensor runs before the one that writes it as the new one. (Fusion passes that merge launches must
    see a shared block as one buffer: the handle, not the Buffer, is the memory.) A block a host upload
    wrote (a constant of the graph) is never reused.
    """

    #: a free block may serve a request down to 1/REUSE_SLACK of its size when none of the exact size is free
    REUSE_SLACK = 2

    def __init__(self, allocator: Allocator):
        self._allocator = allocator
        self.thread = threading.get_ident()  # the capturing thread, the only one the arena serves
        self._buffers: list[Buffer] = []  # every block, allocator-owned: held for as long as the graph
        self._recycler = _Recycler(allocator)
        self._recycler.new_block = self._new_block
        self.ids = self._recycler.ids
        self.nbytes = 0
        self.unheld: list[Buffer] = []

    def allocate(self, nbytes: int) -> ArenaBuffer:
        block = self._reuse(nbytes)
        if block is not None:
            return self._recycler.hand_out(block, nbytes, True)
        return self._recycler.hand_out(self._new_block(nbytes), nbytes, False)

    def _new_block(self, nbytes: int) -> Buffer:
        block = self._allocator.allocate_unfrozen(nbytes)
        self._buffers.append(block)
        self.nbytes += nbytes
        return block

    def _reuse(self, nbytes: int) -> Buffer | None:
        free = self._recycler.free
        if not free:
            return None
        exact = free.get(nbytes)
        if exact:
            return exact.pop()
        fits = [size for size, blocks in list(free.items()) if blocks and nbytes <= size <= nbytes * self.REUSE_SLACK]
        return free[min(fits)].pop() if fits else None

    def close(self) -> None:
        """The block has ended: nothing more is allocated, so freed blocks are no longer filed for reuse (and
        the buffers handed out, which may outlive the graph, no longer reach the arena)."""
        free = self._recycler.free
        #: the blocks no tensor holds as the block ends: nothing can read them after a replay, so a backend
        #: may drop stores into them that no later launch of the graph reads
        self.unheld = [b for blocks in free.values() for b in blocks] if free else []
        self._recycler.free = None
        self._recycler.new_block = None


class _State:
    """What the namespace layer consults on every launch while a capture is active."""

    __slots__ = ("device", "arena", "arena_ids", "inputs", "outputs", "seen_in", "seen_out", "launches",
                 "elsewhere")

    def __init__(self, device: "Device", arena: Arena):
        self.device = device
        self.launches = 0  # on the capture's device: recorded
        self.elsewhere: set = set()  # the other devices the block launched on (eagerly: not recorded)
        self.arena = arena
        self.arena_ids = arena.ids
        self.inputs: list["Tensor"] = []
        self.outputs: list["Tensor"] = []
        self.seen_in: set[int] = set()
        self.seen_out: set[int] = set()

    def track(self, inputs, outputs) -> None:
        """Hold every outside tensor a launch reads (inputs) or writes (outputs)."""
        arena_ids = self.arena_ids
        for t in inputs:
            buf = getattr(t, "_buf", None)
            if buf is not None and id(buf) not in arena_ids and id(buf) not in self.seen_in:
                self.seen_in.add(id(buf))
                self.inputs.append(t)
        for t in outputs:
            buf = t._buf
            if id(buf) not in arena_ids and id(buf) not in self.seen_out:
                self.seen_out.add(id(buf))
                self.outputs.append(t)


class _Local(threading.local):
    """The calling thread's capture in progress (None when none)."""

    state: _State | None = None


local = _Local()
#: how many captures are in progress in all threads: while 0, a launch need not look at ``local``
capturing = 0
_capturing_lock = threading.Lock()


def current() -> _State | None:
    """The calling thread's capture in progress, or None."""
    return local.state if capturing else None


def check_not_capturing(what: str) -> None:
    """Raise CaptureError (aborting the capture) for an operation that no capture may contain."""
    if current() is not None:
        abort_active(what)
        raise CaptureError(f"{what}: not allowed inside a capture() block")


class CapturedGraph:
    """A captured block: the backend graph, the outside tensors it reads and writes, and its arena.

    Released in that order (graph, then inputs and outputs, then arena), after numr's CapturedGraph, so
    that no address a graph holds is freed before the graph itself.
    """

    def __init__(self, device: "Device"):
        self.device = device
        self._client: Client | None = None  # the client (generation) the graph was captured on
        self._graph: Graph | None = None
        self._inputs: list["Tensor"] = []
        self._outputs: list["Tensor"] = []
        self._arena: Arena | None = None
        self._failed: str | None = None
        self._capturing = False

    def __reduce__(self):
        raise TypeError(f"a captured graph on {self.device} cannot be pickled or copied: it holds the device's own "
                        "buffers and commands; pickle its outputs, or capture the block again where it will replay")

    @property
    def inputs(self) -> tuple["Tensor", ...]:
        """Tensors from outside the block that the graph reads (held while the graph lives)."""
        return tuple(self._inputs)

    @property
    def outputs(self) -> tuple["Tensor", ...]:
        """Tensors from outside the block that the graph writes (held while the graph lives)."""
        return tuple(self._outputs)

    @property
    def arena_bytes(self) -> int:
        return self._arena.nbytes if self._arena is not None else 0

    def replay(self) -> None:
        """Re-run the recorded launches on the recorded buffers; no validation, promotion or allocation."""
        graph = self._graph
        if graph is None:
            if self._failed:
                raise CaptureError(f"replay: this capture was aborted ({self._failed}); there is nothing to replay")
            raise CaptureError("replay: the capture() block has not finished")
        if self._client.lost is not None:
            raise renewed(self._client.lost)
        # (inside another block it would run now, unrecorded: that graph's replays would miss it)
        check_not_capturing("replay")
        graph.replay()

    def __enter__(self) -> "CapturedGraph":
        global capturing
        if local.state is not None:
            raise CaptureError("capture: nested capture() blocks are not supported")
        client = self._client = self.device.client
        arena = Arena(client.allocator)
        # waits while another thread captures the device; from here it is ours, its allocator frozen for
        # this thread and every allocation of this thread coming from the arena
        client.begin_capture(arena)
        state = _State(self.device, arena)
        self._arena = arena
        self._capturing = True
        with _capturing_lock:
            capturing += 1
        local.state = state
        errors.capturing.capture = (self.device, self._abort)
        return self

    def _finish(self) -> _State:
        global capturing
        state = local.state
        local.state = None
        errors.capturing.capture = None
        with _capturing_lock:
            capturing -= 1
        self._capturing = False
        self._arena.close()  # (the client unfreezes its allocator and drops the arena in end/abort_capture)
        return state

    def _abort(self, why: str) -> None:
        if not self._capturing:
            return
        self._finish()
        self._client.abort_capture()
        self._failed = why
        self._arena = None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if not self._capturing:  # aborted inside the block by a CaptureError
            if exc_type is None:
                raise CaptureError(f"capture: the block was aborted ({self._failed}); no graph was made")
            return False
        if exc_type is not None:
            self._abort(f"{exc_type.__name__} raised inside the block")
            return False
        state = self._finish()
        self._graph = self._client.end_capture()
        self._inputs = state.inputs
        self._outputs = state.outputs
        if not state.launches and state.elsewhere:  # a replay would do nothing: surely not what was meant
            others = ", ".join(sorted(str(d) for d in state.elsewhere))
            warnings.warn(f"capture: the block launched nothing on {self.device}, the device captured, and ran "
                          f"on {others} eagerly, unrecorded: replay() will do nothing. Capture that device: "
                          f"capture(device=...)", RuntimeWarning, stacklevel=2)
        return False

    def __del__(self):
        # graph first: on CUDA its exec may touch the addresses of the tensors and the arena below it
        graph = getattr(self, "_graph", None)
        if graph is not None:
            graph.release()
            self._graph = None

    def __repr__(self) -> str:
        state = "failed" if self._failed else ("capturing" if self._capturing else "ready")
        return (f"<CapturedGraph on {self.device}: {state}, {len(self._inputs)} inputs, "
                f"{len(self._outputs)} outputs, arena {self.arena_bytes} bytes>")


def capture(device=None) -> CapturedGraph:
    """Record the array calls of a ``with`` block on ``device`` (default: the default device) for replay."""
    from ._device import resolve_device
    return CapturedGraph(resolve_device(device, "capture"))
