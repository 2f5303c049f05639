"""Direct launches of simple element-wise kernels on small contiguous operands, and their fusion in a capture.

On an 8-element array a CuPy ufunc call costs several microseconds of Python and Cython (dtype
resolution, broadcasting, argument packing) around a kernel that runs for two. For the element-wise
functions whose meaning is one C operator (arithmetic, comparisons, bitwise and logical ops) on operands
that already have one dtype and one contiguous layout, this module launches a kernel of its own through
``cuLaunchKernel`` with the arguments packed into a preallocated buffer. Everything else, and every array
larger than ``SMALL`` elements (where the launch cost no longer matters), goes to CuPy.

Inside a capture the same ops are not launched one by one: consecutive ones are recorded as a
``FusedRun`` and become a single kernel node of the CUDA graph, which a replay runs at the cost of one
launch instead of one per op.
"""

from __future__ import annotations

import logging
import threading

import cupy
import numpy as np
from cupy.cuda import driver

from ..._tensor import Tensor, contiguous_strides

#: kernel compilation (DEBUG): one record per kernel compiled, none per launch
log = logging.getLogger(__name__)

#: the largest element count launched directly; beyond it the kernel's own time dominates the call
SMALL = 1 << 20
BLOCK = 256

#: kernel name -> C expression of a and b
BINARY = {
    "add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b",
    "equal": "a == b", "not_equal": "a != b", "less": "a < b", "less_equal": "a <= b",
    "greater": "a > b", "greater_equal": "a >= b",
    "bitwise_and": "a & b", "bitwise_or": "a | b", "bitwise_xor": "a ^ b",
    "logical_and": "a && b", "logical_or": "a || b", "logical_xor": "a != b",
}
_BOOL_RESULT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}

#: NumPy dtype name -> C type (complex goes to CuPy: it needs CuPy's complex headers)
_CTYPE = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long long", "float32": "float", "float64": "double",
}

#: the dtypes launched directly (np.dtype keys: ``np.dtype.name`` is a slow Python property)
_DIRECT_DTYPES = frozenset(np.dtype(name) for name in _CTYPE)

# operand forms: both arrays, array with a scalar second, a scalar first with an array
_FORMS = {"tt": ("const T* a_", "const T* b_", "a_[i]", "b_[i]"),
          "ts": ("const T* a_", "T b_", "a_[i]", "b_"),
          "st": ("T a_", "const T* b_", "a_", "b_[i]")}


def _step(op: str, ctype: str, rtype: str, ea: str, eb: str, target: str) -> str:
    """C statements setting ``target`` to ``op`` of the operand expressions ``ea`` and ``eb``."""
    return f"{{ {ctype} a = {ea}; {ctype} b = {eb}; {target} = ({rtype})({BINARY[op]}); }}"


def _source(op: str, ctype: str, rtype: str, form: str) -> str:
    pa, pb, ea, eb = _FORMS[form]
    return (f"typedef {ctype} T;\n"
            f"extern \"C\" __global__ void k({pa}, {pb}, {rtype}* o, long long n) {{\n"
            "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            f"  if (i < n) {_step(op, 'T', rtype, ea, eb, 'o[i]')}\n"
            "}\n")


class _Args(threading.local):
    """Per-thread argument slots for cuLaunchKernel: four 8-byte values and the array of their addresses."""

    def __init__(self):
        self.words = np.zeros(4, np.uint64)
        self.addresses = np.array([self.words.ctypes.data + 8 * k for k in range(4)], np.uint64)
        self.params = self.addresses.ctypes.data
        self.scalar_views: dict = {}

    def scalar_slot(self, npdtype):
        """A view of ``words`` in ``npdtype``: element ``8 // itemsize * k`` is the start of slot k."""
        v = self.scalar_views.get(npdtype)
        if v is None:
            v = self.scalar_views[npdtype] = self.words.view(npdtype)
        return v


class DirectLauncher:
    """The direct kernels of one GPU, compiled on first use per (op, dtype, operand form)."""

    def __init__(self, stream: cupy.cuda.Stream):
        self._stream = stream.ptr
        self._functions: dict = {}
        self._fused: dict = {}  # run structure -> compiled kernel
        self._kernels: list = []  # the RawKernels whose functions are in use (their modules must stay loaded)
        self._args = _Args()

    def _function(self, op: str, npdtype: np.dtype, form: str) -> int:
        key = (op, npdtype, form)
        f = self._functions.get(key)
        if f is None:
            ctype = _CTYPE[npdtype.name]
            rtype = "bool" if op in _BOOL_RESULT else ctype
            log.debug("cuda: compiling the direct kernel %s of %s (%s operands)", op, npdtype.name, form)
            k = cupy.RawKernel(_source(op, ctype, rtype, form), "k")
            self._kernels.append(k)
            f = self._functions[key] = k.kernel.ptr
        return f

    def try_binary(self, op: str, ins, outs) -> bool:
        """Launch ``op`` on (x1, x2) into outs[0] if every operand qualifies; False (nothing done) otherwise."""
        plan = qualify(op, ins, outs)
        if plan is None:
            return False
        npdtype, form, n = plan
        args = self._args
        words = args.words
        for k, x in enumerate(ins):
            if type(x) is Tensor:
                words[k] = address(x)
            else:
                args.scalar_slot(npdtype)[8 // npdtype.itemsize * k] = x
        words[2] = address(outs[0])
        words[3] = n
        f = self._function(op, npdtype, form)
        driver.launchKernel(f, (n + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0, self._stream, args.params, 0)
        return True

    def launch_run(self, run: "FusedRun") -> None:
        """One kernel doing every step of ``run`` (compiled once per run structure)."""
        source, key, words = run.kernel()
        f = self._fused.get(key)
        if f is None:
            # no FMA contraction: a product stored by one step and added by the next rounds twice, as eagerly
            log.debug("cuda: compiling a fused kernel of %d steps over %d elements", len(run.steps), run.n)
            k = cupy.RawKernel(source, "k", options=("--fmad=false",))
            self._kernels.append(k)
            f = self._fused[key] = k.kernel.ptr
        addresses = np.arange(len(words), dtype=np.uint64) * 8 + words.ctypes.data
        n = run.n
        driver.launchKernel(f, (n + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0, self._stream,
                            addresses.ctypes.data, 0)


def address(t: Tensor) -> int:
    return t._buf.handle.ptr + t._offset * t._dtype.itemsize


def qualify(op: str, ins, outs):
    """(dtype, operand form, element count) when ``op`` on ``ins`` into ``outs[0]`` can run as a direct
    kernel (one dtype, one contiguous shape, at most ``SMALL`` elements), else None."""
    o = outs[0]
    shape = o._shape
    n = 1
    for d in shape:
        n *= d
    if n > SMALL or n == 0:
        return None
    strides = contiguous_strides(shape)
    if o._strides != strides:
        return None
    x1, x2 = ins
    t1, t2 = type(x1) is Tensor, type(x2) is Tensor
    if t1:
        npdtype = x1._dtype.np
        if x1._strides != strides or x1._shape != shape:
            return None
        if t2:
            if x2._dtype.np is not npdtype or x2._strides != strides or x2._shape != shape:
                return None
            form = "tt"
        else:
            if x2.dtype != npdtype:
                return None
            form = "ts"
    elif t2:
        npdtype = x2._dtype.np
        if x2._strides != strides or x2._shape != shape or x1.dtype != npdtype:
            return None
        form = "st"
    else:
        return None
    if npdtype not in _DIRECT_DTYPES:
        return None
    if op not in _BOOL_RESULT and o._dtype.np is not npdtype:
        return None
    return npdtype, form, n


class FusedRun:
    """Direct binary ops recorded inside a capture, to become one kernel in the graph instead of one each.

    Every op of a run has the same element count and contiguous operands, so element i of each result
    depends only on element i of its operands, and one thread can do all the steps for its i in program
    order. That holds only if no two operands overlap at different addresses (``x[4:12]`` read after
    ``x[0:8]`` is written): ``add`` refuses such an op, and the caller starts a new run."""

    MAX_STEPS = 64

    def __init__(self):
        self.n = 0
        self.steps: list = []  # (op, dtype, a, b, out): an operand is ("p", pointer) or ("s", NumPy scalar)
        self._extent: dict[int, tuple[int, int]] = {}  # pointer -> (end, itemsize)

    def add(self, op: str, ins, outs) -> bool:
        """Record ``op`` if it qualifies and fits this run; False (nothing recorded) otherwise."""
        plan = qualify(op, ins, outs)
        if plan is None:
            return False
        npdtype, _, n = plan
        if self.steps and (n != self.n or len(self.steps) >= self.MAX_STEPS):
            return False
        tensors = [t for t in (*ins, outs[0]) if type(t) is Tensor]
        spans = []
        for t in tensors:
            start, item = address(t), t._dtype.itemsize
            spans.append((start, start + n * item, item))
        for start, end, item in spans:
            known = self._extent.get(start)
            if known is not None and known == (end, item):
                continue
            for other, (oend, _) in self._extent.items():
                if start < oend and other < end:
                    return False
        for start, end, item in spans:
            self._extent[start] = (end, item)
        self.n = n
        operand = lambda x: ("p", address(x)) if type(x) is Tensor else ("s", x)
        self.steps.append((op, npdtype, operand(ins[0]), operand(ins[1]), address(outs[0]), outs[0]._dtype.np))
        return True

    def kernel(self) -> tuple[str, tuple, np.ndarray]:
        """The run's CUDA source, its structure (the compiled-kernel cache key) and its argument words."""
        params: list[str] = []
        words: list = []  # pointers (int) and scalars (NumPy scalars), one 8-byte slot each
        slot_of: dict[int, int] = {}
        held: dict[int, tuple[str, np.dtype]] = {}  # pointer -> (register, dtype) of the value last stored there
        body: list[str] = []
        key: list = []

        def pointer(ptr: int) -> int:
            k = slot_of.get(ptr)
            if k is None:
                k = slot_of[ptr] = len(words)
                words.append(ptr)
                params.append(f"char* p{k}")
            return k

        def read(x, npdtype) -> str:
            kind, v = x
            if kind == "s":
                k = len(words)
                words.append(v)
                params.append(f"{_CTYPE[npdtype.name]} p{k}")
                key.append(("s", k))
                return f"p{k}"
            reg = held.get(v)
            if reg is not None and reg[1] == npdtype:  # the value this thread stored there: no reload
                key.append(("r", reg[0]))
                return reg[0]
            k = pointer(v)
            key.append(("p", k))
            return f"(({_CTYPE[npdtype.name]}*)p{k})[i]"

        for j, (op, npdtype, a, b, out, odtype) in enumerate(self.steps):
            ea, eb = read(a, npdtype), read(b, npdtype)
            c, r = _CTYPE[npdtype.name], _CTYPE[odtype.name]
            k = pointer(out)
            key.append((op, npdtype, k))
            body.append(f"  {r} r{j};\n  {_step(op, c, r, ea, eb, f'r{j}')}\n  (({r}*)p{k})[i] = r{j};\n")
            held[out] = (f"r{j}", odtype)
        params.append("long long n")
        source = (f"extern \"C\" __global__ void k({', '.join(params)}) {{\n"
                  "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                  "  if (i >= n) return;\n" + "".join(body) + "}\n")
        packed = np.zeros(len(words) + 1, np.uint64)
        for k, v in enumerate(words):
            if isinstance(v, int):
                packed[k] = v
            else:
                packed.view(v.dtype)[8 // v.dtype.itemsize * k] = v
        packed[-1] = self.n
        return source, tuple(key), packed
