"""Results and launches: a call's result tensor (a new one, from the capture arena while capturing, or
``out=`` checked), views over a tensor's buffer, and ``launch``, which runs a declared kernel on a device
(with the capture bookkeeping). Argument checks come first, from ``_checks.py``.
"""

from __future__ import annotations

import dis
import os
import sys
from typing import Sequence

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from .runtime import Buffer
from ._checks import check_out
from ._device import Device
from ._tensor import _STRIDES, Tensor, _size, contiguous_strides
from .kernels import CHECK_LAUNCHES, Kernel, check_launch

__all__ = ["make_view", "new_tensor", "result", "launch", "reusable", "ELIDE", "ELIDE_MIN_BYTES"]


def make_view(x: Tensor, shape: tuple[int, ...], strides: tuple[int, ...], offset: int, key=None) -> Tensor:
    """A view of ``x``'s buffer. An empty view gets offset 0: its offset is never read, and one past the end
    of the buffer (``x[..., ::-1]`` of shape (0, 3)) is rejected by backends that check it (NumPy's ndarray).

    ``key``: a basic index (a tuple of ints, slices and None, ending in Ellipsis) that gives this view of
    ``x``. Where ``x`` has a NumPy view (CPU), the new tensor's is that view indexed with ``key`` (NumPy
    indexes as numr does): a fraction of the cost of making one from the buffer with NumPy's ndarray
    constructor, which its first launch would otherwise do."""
    v = x._view
    return Tensor(x._buf, x._dtype, shape, strides, 0 if 0 in shape else offset, x._dev,
                  v[key] if key is not None and type(v) is np.ndarray else None)


def new_tensor(dev: Device, shape: tuple[int, ...], dtype: dt.DType) -> Tensor:
    """A new C-contiguous tensor (uninitialised): from the capture arena while capturing."""
    buf, view = (dev._client or dev.client).alloc_tensor(shape, dtype)
    return Tensor(buf, dtype, shape, contiguous_strides(shape), 0, dev, view)


def result(out, shape: tuple[int, ...], dtype: dt.DType, dev: Device, func: str) -> Tensor:
    """The tensor a call writes its result into: ``out`` validated, or a new one."""
    if out is None:
        buf, view = (dev._client or dev.client).alloc_tensor(shape, dtype)
        return Tensor(buf, dtype, shape, _STRIDES.get(shape) or contiguous_strides(shape), 0, dev, view)
    return check_out(out, shape, dtype, dev, func)


# --- temporary elision ---------------------------------------------------------------------------------
# An element-wise result may be written into an operand that is a dead temporary, as NumPy does, instead of
# a new buffer: in ``(X - C) ** 2`` the square goes into the difference, which nothing can read any more.
# Whether an operand is dead is read from reference counts: the call chain (the namespace function's frame,
# or for an operator the interpreter's stack slot, the Tensor method's frame and the operator function's)
# holds a known number of references to a temporary, and a tensor someone else can reach has one more.
# CPython moves a temporary from the caller's stack into the callee's frame (a named variable is copied,
# one reference more), and C code calling a Python function makes the frame's reference in addition to its
# own, so a namespace call from anywhere is told apart. The one ambiguity, C code that holds a borrowed
# reference while it calls an operator's slot, is met in ``from_interpreter``.

#: operands smaller than this are never reused (NumPy's NPY_MIN_ELIDE_BYTES): the saving is the larger
#: arrays', and small calls keep their cost (the decision is in the call's plan, made once per signature)
ELIDE_MIN_BYTES = 1 << 18
_refcount = sys.getrefcount


def reusable(t: Tensor, held: int) -> bool:
    """Whether an element-wise result may be written into the operand ``t`` (which has the result's shape,
    dtype and device: the caller's plan compared them) instead of a new buffer: ``t`` is a dead temporary.

    ``held``: the references to ``t`` that the call chain holds outside this function. Then: no one else
    holds ``t``; ``t`` is the only tensor of its Buffer (no view, no graph's input or output shares it) and
    covers all of it (offset 0, C-contiguous); the Buffer is an allocator's (not a capture arena's, whose
    blocks a graph bakes in, nor memory adopted from another library) and was never exported (a NumPy view,
    DLPack, __cuda_array_interface__). A compiled call path must make the same checks (docs/architecture.md,
    "Temporary elision")."""
    if _refcount(t) != held + 2:  # (+ this frame's parameter and getrefcount's argument)
        return False
    buf = t._buf
    return (type(buf) is Buffer and _refcount(buf) == 3 and buf.owner is not None and not buf.exported
            and t._offset == 0 and buf.nbytes == t._dtype.itemsize * _size(t._shape)
            and t._strides == contiguous_strides(t._shape))


_OPERATOR_OPCODES = frozenset(dis.opmap[name] for name in ("BINARY_OP", "UNARY_NEGATIVE", "UNARY_INVERT",
                                                            "UNARY_POSITIVE") if name in dis.opmap)


def from_interpreter(depth: int) -> bool:
    """Whether the operator method below the Python frame ``depth`` frames above the caller was called by
    the interpreter itself on an operand of that frame's stack, as NumPy's elision checks: the frame is
    executing an operator instruction, and between it and this call's evaluation loop the C stack holds
    only the interpreter's own code (``_C_STACK``). C code such as a NumPy object array's loop (``objarr +
    1.0``), ``operator.add`` or Cython may call the method on a reference it only borrows, which the count
    cannot tell from a stack slot."""
    try:
        frame = sys._getframe(depth + 1)  # (0 is this function's frame)
    except ValueError:  # no Python frame there: C code with no Python caller applied the operator
        return False
    return frame.f_code.co_code[frame.f_lasti] in _OPERATOR_OPCODES and _C_STACK is not None and _C_STACK()


def _c_stack_check():
    """``check()``: whether the C stack, from the evaluation loop running the caller's Python frames to the
    next evaluation loop out, runs only in the interpreter's own library (glibc's backtrace and dladdr, as
    NumPy's check_callers). None where they or the evaluation loop's symbol cannot be found: then no
    operator's operand is elided."""
    import ctypes

    class DlInfo(ctypes.Structure):
        _fields_ = [("fname", ctypes.c_void_p), ("fbase", ctypes.c_void_p), ("sname", ctypes.c_void_p),
                    ("saddr", ctypes.c_void_p)]

    try:
        libc = ctypes.CDLL(None)
        backtrace, dladdr = libc.backtrace, libc.dladdr
        loop = ctypes.cast(ctypes.pythonapi._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    except (AttributeError, OSError):
        return None
    backtrace.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    backtrace.restype = ctypes.c_int
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    dladdr.restype = ctypes.c_int
    info = DlInfo()
    if not dladdr(loop, ctypes.byref(info)) or info.saddr != loop:
        return None
    libpython = info.fbase
    size = 32  # (the user's frame lies within about 12 C frames of ours when only the interpreter is between)
    known: dict[int, tuple[int, bool]] = {}  # return address -> (its object's base, whether it is the loop)

    def check() -> bool:
        frames = (ctypes.c_void_p * size)()
        n = backtrace(frames, size)
        loops = 0
        for address in frames[:n]:
            where = known.get(address)
            if where is None:  # (dladdr scans a symbol table: done once per return address)
                found = DlInfo()
                if not dladdr(address, ctypes.byref(found)):
                    return False
                if len(known) >= 4096:
                    known.clear()
                where = known[address] = (found.fbase, found.saddr == loop)
            if where[1]:
                loops += 1
                if loops == 2:  # the user's frame, reached through the interpreter's code alone
                    return True
            elif loops == 1 and where[0] != libpython:
                return False  # foreign C code between the user's operator and ours
        return False

    check()  # (the first backtrace loads the unwinder)
    return check


# the compiled form where built (numr_array/_speedups.c: a tenth of the ctypes form's cost, which an operator
# on an array large enough to be elided pays per call), else the ctypes form
_C_STACK = getattr(_rt.speedups, "c_stack_check", None) or _c_stack_check()


def _calibrate() -> bool:
    """Whether this interpreter counts references as ``reusable`` expects: a temporary passed down a chain
    of frames is held once per frame (or stack slot), a named one once more. Checked on probe objects
    through chains shaped as the namespace's (a function call, and an operator method); elision is off
    where they disagree (another interpreter, a free-threaded build) or where NUMR_ELIDE=0."""
    if os.environ.get("NUMR_ELIDE", "1") == "0" or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return False

    def probe(x, held):  # reusable's count
        return _refcount(x) - held - 2

    def inner(x, held):  # _binary's frame
        return probe(x, held + 1)

    def function(x, /, *, out=None):  # a namespace function
        return inner(x, 1)

    def operator_function(x, y):  # the operator function of a namespace function
        return inner(x, 3)

    class Probe:
        __slots__ = ()

        def __add__(self, other):  # a Tensor operator method
            return operator_function(self, other)

        def __neg__(self):
            return operator_function(self, None)

    named = Probe()
    return (function(Probe()) == 0 and function(named) == 1 and function(Probe(), out=None) == 0
            and Probe() + 1 == 0 and named + 1 == 1 and -Probe() == 0 and -named == 1)


#: whether element-wise calls write into dead temporaries (numr_array._elementwise)
ELIDE = _calibrate()

_NO_PARAMS: dict = {}


def launch(dev: Device, kernel: Kernel, inputs: Sequence, outputs: Sequence[Tensor],
           params: dict | None = None) -> None:
    """Run the declared ``kernel`` (numr_array/kernels.py) on ``dev``; while ``dev`` is captured, the graph
    holds the outside tensors it touches. DeviceLostError, before any work, when a tensor was made on a
    client that has since been lost."""
    if _rt.lost_count:
        _rt.check_live(inputs)
        _rt.check_live(outputs)
    if _capture.capturing:
        state = _capture.local.state
        if state is not None:
            if state.device is dev:
                state.launches += 1
                state.track(inputs, outputs)
            else:
                state.elsewhere.add(dev)
    (dev._client or dev.client).launch(kernel.name, inputs, outputs, _NO_PARAMS if params is None else params)


if CHECK_LAUNCHES:  # chosen once at import, so that an unchecked launch costs nothing extra
    _launch_unchecked = launch

    def launch(dev: Device, kernel: Kernel, inputs: Sequence, outputs: Sequence[Tensor],
               params: dict | None = None) -> None:
        check_launch(kernel, inputs, outputs, _NO_PARAMS if params is None else params)
        _launch_unchecked(dev, kernel, inputs, outputs, params)
