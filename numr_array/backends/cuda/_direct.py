"""Direct launches of simple element-wise kernels on small contiguous operands.

On an 8-element array a CuPy ufunc call costs several microseconds of Python and Cython (dtype
resolution, broadcasting, argument packing) around a kernel that runs for two. For the element-wise
functions whose meaning is one C operator (arithmetic, comparisons, bitwise and logical ops) on operands
that already have one dtype and one contiguous layout, this module launches a kernel of its own through
``cuLaunchKernel`` with the arguments packed into a preallocated buffer. Everything else, and every array
larger than ``SMALL`` elements (where the launch cost no longer matters), goes to CuPy.
"""

from __future__ import annotations

import threading

import cupy
import numpy as np
from cupy.cuda import driver

from ..._tensor import Tensor, contiguous_strides

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


def _source(op: str, ctype: str, rtype: str, form: str) -> str:
    pa, pb, ea, eb = _FORMS[form]
    return (f"typedef {ctype} T;\n"
            f"extern \"C\" __global__ void k({pa}, {pb}, {rtype}* o, long long n) {{\n"
            "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
            f"  if (i < n) {{ T a = {ea}; T b = {eb}; o[i] = ({rtype})({BINARY[op]}); }}\n"
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
        self._kernels: list = []  # the RawKernels whose functions are in use (their modules must stay loaded)
        self._args = _Args()

    def _function(self, op: str, npdtype: np.dtype, form: str) -> int:
        key = (op, npdtype, form)
        f = self._functions.get(key)
        if f is None:
            ctype = _CTYPE[npdtype.name]
            rtype = "bool" if op in _BOOL_RESULT else ctype
            k = cupy.RawKernel(_source(op, ctype, rtype, form), "k")
            self._kernels.append(k)
            f = self._functions[key] = k.kernel.ptr
        return f

    def try_binary(self, op: str, ins, outs) -> bool:
        """Launch ``op`` on (x1, x2) into outs[0] if every operand qualifies; False (nothing done) otherwise."""
        o = outs[0]
        shape = o._shape
        n = 1
        for d in shape:
            n *= d
        if n > SMALL or n == 0:
            return False
        strides = contiguous_strides(shape)
        if o._strides != strides:
            return False
        x1, x2 = ins
        t1, t2 = type(x1) is Tensor, type(x2) is Tensor
        if t1:
            npdtype = x1._dtype.np
            if x1._strides != strides or x1._shape != shape:
                return False
            if t2:
                if x2._dtype.np is not npdtype or x2._strides != strides or x2._shape != shape:
                    return False
                form = "tt"
            else:
                if x2.dtype != npdtype:
                    return False
                form = "ts"
        elif t2:
            npdtype = x2._dtype.np
            if x2._strides != strides or x2._shape != shape or x1.dtype != npdtype:
                return False
            form = "st"
        else:
            return False
        if npdtype not in _DIRECT_DTYPES:
            return False
        if op not in _BOOL_RESULT and o._dtype.np is not npdtype:
            return False
        args = self._args
        words = args.words
        for k, x in enumerate((x1, x2)):
            if type(x) is Tensor:
                words[k] = x._buf.handle.ptr + x._offset * x._dtype.itemsize
            else:
                args.scalar_slot(npdtype)[8 // npdtype.itemsize * k] = x
        words[2] = o._buf.handle.ptr + o._offset * o._dtype.itemsize
        words[3] = n
        f = self._function(op, npdtype, form)
        driver.launchKernel(f, (n + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0, self._stream, args.params, 0)
        return True
