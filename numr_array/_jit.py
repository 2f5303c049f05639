"""``@numr_array.jit``: capture a function once per input signature, replay it on later calls.

The first call with a given signature (each array argument's shape, dtype and device; every other argument's
type and value) copies the array arguments into buffers of its own (the graph's inputs), runs the function
inside ``capture()`` on them, and keeps the graph. Later calls with that signature copy the new arguments into
those buffers, replay the graph, and return copies of the outputs.

An argument the second call passes again (the same memory at the same offset and strides: a training set,
a matrix) is then read in place: the second call captures the function once more with those arguments as
they are, and later calls that pass them again copy only the others (the copy of a 200k x 64 float32 X was
40 µs of a jitted logistic regression's 950 on an H200). The jit holds them weakly; a call that passes other
memory for one of them captures again with copies of every argument, for good.

Outputs are returned as fresh arrays (one copy per output array per call), not as the graph's own buffers:
PyTorch's CUDA graphs and tinygrad's TinyJit hand back the static output buffers, which the next replay
overwrites, so a result kept across calls (``w = step(w)`` in a loop, a list of losses) silently changes.
The copy costs one small launch per output, which a replay of a whole step does not notice.

A call that cannot be captured (a host read such as ``float(x)`` or ``bool(x)``, a data-dependent shape, a
library call the device refuses inside a capture, arguments on several devices, an unhashable non-array
argument) warns once with the reason and runs eagerly, and so does every later call with that signature.
An exception of any other kind propagates and nothing is cached, so the next call tries again. Called
inside a ``capture()`` block, the function runs as it is, recorded into that block's graph.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from typing import Any, Callable

from . import _capture
from ._capture import CaptureError
from ._launch import launch, new_tensor
from ._tensor import Tensor
from .kernels import K

__all__ = ["jit", "JitFunction", "JitFallbackWarning"]


class JitFallbackWarning(UserWarning):
    """A jitted function runs eagerly for a signature: the reason is the message."""


_EAGER = object()  # the cache entry of a signature that runs eagerly


def _flatten(obj: Any, leaves: list) -> Any:
    """``obj`` with each Tensor replaced by its index in ``leaves`` (appended), as a hashable skeleton;
    TypeError for a non-array leaf that is not hashable."""
    if type(obj) is Tensor:
        leaves.append(obj)
        return (_ARRAY, obj._shape, obj._dtype, obj._dev)
    if isinstance(obj, (tuple, list)):
        return (type(obj), tuple(_flatten(x, leaves) for x in obj))
    if isinstance(obj, dict):
        return (dict, tuple((k, _flatten(v, leaves)) for k, v in obj.items()))
    hash(obj)
    return (type(obj), obj)  # (the type too: 1, 1.0 and True are equal but mean different dtypes)


class _ArrayLeaf:
    def __repr__(self) -> str:
        return "<array>"


_ARRAY = _ArrayLeaf()


def _rebuild(obj: Any, arrays: list, pos: list) -> Any:
    """``obj`` with each Tensor replaced by the next element of ``arrays``."""
    if type(obj) is Tensor:
        pos[0] += 1
        return arrays[pos[0] - 1]
    if isinstance(obj, (tuple, list)):
        items = [_rebuild(x, arrays, pos) for x in obj]
        return type(obj)(items) if type(obj) in (tuple, list) else type(obj)(*items)
    if isinstance(obj, dict):
        return {k: _rebuild(v, arrays, pos) for k, v in obj.items()}
    return obj


def _copy_into(src: Tensor, dst: Tensor) -> None:
    if dst.size:
        launch(dst._dev, K.copy, (src,), (dst,))


def _fresh_copy(t: Tensor) -> Tensor:
    out = new_tensor(t._dev, t._shape, t._dtype)
    _copy_into(t, out)
    return out


def _place(t: Tensor) -> tuple:
    """Where ``t`` is: a weak reference to its memory, its offset and strides."""
    return weakref.ref(t._buf), t._offset, t._strides


def _at(t: Tensor, place: tuple) -> bool:
    ref, offset, strides = place
    return ref() is t._buf and t._offset == offset and t._strides == strides


class _Entry:
    """One captured signature: the graph, its input buffers, the output skeleton, which arguments the
    function writes (copied back after each replay, as the eager call would have written them), and which
    arguments the graph reads in place (``bound``: index -> where the argument is)."""

    def __init__(self, graph, statics: list[Tensor], result: Any, outputs: list[Tensor],
                 written: list[int], bound: dict[int, tuple]):
        self.graph = graph
        self.statics = statics
        self.result = result
        self.outputs = outputs
        self.written = written
        self.bound = bound
        self.first: list[tuple] | None = None  # where the first call's arguments were, until the second call
        self.lock = threading.Lock()  # one call at a time fills the input buffers, replays and copies out


class JitFunction:
    """A function captured once per input signature and replayed (see the module's docstring)."""

    def __init__(self, fn: Callable):
        self.fn = fn
        self._cache: dict = {}
        self._lock = threading.Lock()
        self._capturing: dict = {}  # key -> the Lock a first call holds while it captures
        functools.update_wrapper(self, fn)

    def __reduce__(self):
        # (the function, by reference as pickle takes functions; not the graphs, which hold device memory: a
        # copy in another process captures afresh)
        return jit, (self.fn,)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    @property
    def signatures(self) -> int:
        """How many signatures have been seen (captured or eager)."""
        return len(self._cache)

    def __call__(self, *args, **kwargs):
        if _capture.current() is not None:  # inside a capture() block: its launches belong to that graph
            return self.fn(*args, **kwargs)
        arrays: list[Tensor] = []
        try:
            key = _flatten((args, kwargs), arrays)
        except TypeError as e:
            self._warn(f"an argument is neither an array nor hashable ({e}); this call runs eagerly", 3)
            return self.fn(*args, **kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._first_call(key, args, kwargs, arrays)
            if type(entry) is tuple:  # this call ran (captured or eagerly): its result
                return entry[0]
        if entry is _EAGER:
            return self.fn(*args, **kwargs)
        return self._replay(entry, args, kwargs, arrays)

    def _first_call(self, key, args, kwargs, arrays: list[Tensor]):
        with self._lock:
            gate = self._capturing.setdefault(key, threading.Lock())
        with gate:  # a second thread with the same new signature waits for this capture, then replays
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            try:
                return self._capture(key, args, kwargs, arrays)
            finally:
                with self._lock:
                    self._capturing.pop(key, None)

    def _capture(self, key, args, kwargs, arrays: list[Tensor]) -> tuple:
        devices = {t._dev for t in arrays}
        if len(devices) > 1:
            why = f"its array arguments are on several devices ({', '.join(sorted(map(str, devices)))})"
            return self._go_eager(key, why, args, kwargs)
        device = devices.pop() if devices else None
        statics: list = [None] * len(arrays)
        try:
            entry = self._record(device, args, kwargs, arrays, statics, set())
        except CaptureError as e:
            # the function runs again, eagerly, on the caller's arrays (the attempt ran on copies of them)
            return self._go_eager(key, f"it cannot be captured ({e})", args, kwargs)
        entry.first = [_place(t) for t in arrays]
        ret = self._finish_call(entry, arrays)
        with self._lock:
            self._cache[key] = entry
        return (ret,)

    def _record(self, device, args, kwargs, arrays: list[Tensor], statics: list, bind: set[int]) -> _Entry:
        """Capture the function on the arguments in ``bind`` as they are and on copies of the others (into
        ``statics``, made where missing): the capture runs the call. CaptureError where it cannot be captured."""
        for k, t in enumerate(arrays):
            if k not in bind:
                if statics[k] is None:
                    statics[k] = new_tensor(t._dev, t._shape, t._dtype)
                _copy_into(t, statics[k])
        ins = [t if k in bind else s for k, (t, s) in enumerate(zip(arrays, statics))]
        s_args, s_kwargs = _rebuild((args, kwargs), ins, [0])
        with _capture.capture(device) as g:
            result = self.fn(*s_args, **s_kwargs)
        outputs: list[Tensor] = []
        skeleton = _output_skeleton(result, outputs)
        written_ids = {id(t._buf) for t in g.outputs}
        # (an argument read in place is written in place: nothing to copy back)
        written = [k for k, s in enumerate(statics) if k not in bind and id(s._buf) in written_ids]
        return _Entry(g, statics, skeleton, outputs, written, {k: _place(arrays[k]) for k in bind})

    @staticmethod
    def _finish_call(entry: _Entry, arrays: list[Tensor]) -> Any:
        """After the graph ran: the caller's arrays given what the call wrote into copies of them, and the
        call's result made of fresh copies of the graph's outputs."""
        for k in entry.written:
            _copy_into(entry.statics[k], arrays[k])
        return _rebuild(entry.result, [_fresh_copy(t) for t in entry.outputs], [0])

    def _go_eager(self, key, why: str, args, kwargs) -> tuple:
        self._warn(why + "; this signature runs eagerly from now on", 6)
        with self._lock:
            self._cache[key] = _EAGER
        return (self.fn(*args, **kwargs),)

    def _warn(self, why: str, stacklevel: int) -> None:
        """Warn with ``stacklevel`` counted from here (the caller of the jitted function)."""
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        warnings.warn(f"jit: {name}: {why}", JitFallbackWarning, stacklevel=stacklevel)

    def _replay(self, entry: _Entry, args, kwargs, arrays: list[Tensor]) -> Any:
        with entry.lock:
            bind = None
            if entry.first is not None:  # the second call: read in place what it passes again
                bind = {k for k, (t, place) in enumerate(zip(arrays, entry.first)) if _at(t, place)}
                entry.first = None
            elif entry.bound and not all(_at(arrays[k], place) for k, place in entry.bound.items()):
                bind = set()  # other memory for an argument read in place: copies of every argument from now
            if bind is not None and (bind or entry.bound):
                try:
                    fresh = self._record(arrays[0]._dev, args, kwargs, arrays, entry.statics, bind)
                except CaptureError:  # (the signature was captured once: this capture ran nothing)
                    if entry.bound:  # no graph reads copies of every argument: this call runs eagerly
                        return self.fn(*args, **kwargs)
                else:  # the new graph replaces the old (its memory goes, and the copies of what it reads in place)
                    entry.graph, entry.result, entry.outputs = fresh.graph, fresh.result, fresh.outputs
                    entry.written, entry.bound = fresh.written, fresh.bound
                    for k in entry.bound:
                        entry.statics[k] = None
                    return self._finish_call(entry, arrays)
            for k, (t, s) in enumerate(zip(arrays, entry.statics)):
                if t is not s and k not in entry.bound:
                    _copy_into(t, s)
            entry.graph.replay()
            return self._finish_call(entry, arrays)


def _output_skeleton(result: Any, outputs: list[Tensor]) -> Any:
    """``result`` as returned, its arrays collected into ``outputs`` (rebuilt from copies on each call)."""
    if type(result) is Tensor:
        outputs.append(result)
        return result
    if isinstance(result, (tuple, list)):
        return type(result)([_output_skeleton(x, outputs) for x in result]) if type(result) in (tuple, list) \
            else type(result)(*[_output_skeleton(x, outputs) for x in result])
    if isinstance(result, dict):
        return {k: _output_skeleton(v, outputs) for k, v in result.items()}
    return result


def jit(fn: Callable | None = None) -> JitFunction | Callable[[Callable], JitFunction]:
    """Capture ``fn`` on its first call for each input signature and replay the graph on later calls.

    Usable as ``@jit`` or ``@jit()``. See docs/capture.md ("jit") for what is frozen and what is returned.
    """
    if fn is None:
        return jit
    if not callable(fn):
        raise TypeError(f"jit: expected a function, got {type(fn).__name__}")
    return JitFunction(fn)
