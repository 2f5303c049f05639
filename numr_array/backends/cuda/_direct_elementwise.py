"""Direct launches of simple element-wise kernels on contiguous operands, and their fusion in a capture.

On an 8-element array a CuPy ufunc call costs several microseconds of Python and Cython (dtype
resolution, broadcasting, argument packing) around a kernel that runs for two; on a large one, CuPy's
kernel (an element per thread, scalar loads) moves memory at about half the rate of one that loads 16 bytes
per thread (4M float32: 23 us an add against 13.5, PyTorch's 13.4, on an H200). For the element-wise
functions whose meaning is one C operator (arithmetic, comparisons, bitwise and logical ops), and the
common unary functions of float32 and float64 (``UNARY``), on operands that already have one dtype and one
contiguous layout, this module launches a kernel of its own (``_kernel``: 16-byte vector loads and stores
where the addresses allow) through ``cuLaunchKernel`` with the arguments packed into a preallocated buffer;
numr_array._speedups launches the same kernel for a cached plan (``native_part``). Everything else goes to
CuPy. The same launcher sums a small dense array with one block of one kernel (``try_sum``), copies between
dense tensors of one dtype with one ``cudaMemcpyAsync`` (``try_copy``), and writes a host upload of a few
bytes with a kernel whose arguments carry them (``store``), none of which makes a CuPy view.

Inside a capture, element-wise ops of real operands (these, the math functions, maximum/minimum, clip, where,
casts; any size) are not launched one by one: consecutive ones are recorded as a ``FusedRun`` and become a
single kernel node of the CUDA graph, which a replay runs at the cost of one launch instead of one per op.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable

import cupy
import numpy as np
from cupy.cuda import driver, runtime

from ..._tensor import Tensor, contiguous_strides
from ._cupy_module import _HYPOT
from . import _matvec

#: kernel compilation (DEBUG): one record per kernel compiled, none per launch
log = logging.getLogger(__name__)

BLOCK = 256

#: kernel name -> C expression of a and b
BINARY = {
    "add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b",
    "equal": "a == b", "not_equal": "a != b", "less": "a < b", "less_equal": "a <= b",
    "greater": "a > b", "greater_equal": "a >= b",
    "bitwise_and": "a & b", "bitwise_or": "a | b", "bitwise_xor": "a ^ b",
    "logical_and": "a && b", "logical_or": "a || b", "logical_xor": "a != b",
}
#: kernel name -> C expression of a, for float32 and float64 operands: the expressions CuPy's ufuncs use (the
#: same CUDA math functions, so a direct result has the bits of CuPy's, which a capture records)
UNARY = {
    "negative": "-a", "abs": "fabs(a)", "square": "a * a", "sqrt": "sqrt(a)", "exp": "exp(a)",
    "expm1": "expm1(a)", "log": "log(a)", "log1p": "log1p(a)", "sin": "sin(a)", "cos": "cos(a)",
    "tanh": "tanh(a)",
}
_BOOL_RESULT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
#: binary kernels launched directly for float32 and float64 operands only (their integer meaning is CuPy's)
FLOAT_BINARY = frozenset(["pow"])
#: every binary kernel the direct launcher may take
BINARY_OPS = frozenset(BINARY) | FLOAT_BINARY

#: NumPy dtype name -> C type (complex goes to CuPy: it needs CuPy's complex headers)
_CTYPE = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long long",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "unsigned long long", "float32": "float", "float64": "double",
}

#: the dtypes launched directly (np.dtype keys: ``np.dtype.name`` is a slow Python property)
_DIRECT_DTYPES = frozenset(np.dtype(name) for name in _CTYPE)
#: complex operands of the binary kernels COMPLEX_BINARY, in the forms of two arrays (no scalar word holds a
#: complex128): CuPy's complex types, whose operators CuPy's ufuncs use (the spectra product of an FFT
#: convolution took CuPy's kernel 32 µs for 2^19 complex64 on an H200, PyTorch's 6.7)
_COMPLEX_CTYPE = {np.dtype(np.complex64): "complex<float>", np.dtype(np.complex128): "complex<double>"}
COMPLEX_BINARY = frozenset(["add", "subtract", "multiply"])
_ARRAY_FORMS = frozenset(["tt", "tp", "pt", "bc"])
_UNARY_DTYPES = frozenset((np.dtype(np.float32), np.dtype(np.float64)))

# operand forms: the kinds of (a, b): both arrays; an array with a scalar second, a scalar first; an array
# with one element broadcast (a 0-D array beside a vector, read through its pointer) second, first
_FORMS = {"tt": ("array", "array"), "ts": ("array", "scalar"), "st": ("scalar", "array"),
          "tp": ("array", "element"), "pt": ("element", "array")}

#: bytes each thread reads from an array operand: one 16-byte vector load where the addresses allow it
VECTOR_BYTES = 16


def elements_per_thread(itemsize: int) -> int:
    return VECTOR_BYTES // itemsize


def blocks(n: int, itemsize: int) -> int:
    """The grid of a direct element-wise kernel over ``n`` elements of ``itemsize`` bytes (BLOCK threads each)."""
    per_block = BLOCK * elements_per_thread(itemsize)
    return (n + per_block - 1) // per_block


def _operand(kind: str, name: str) -> tuple[str, str, str, str, str]:
    """(parameter, element i, element j of the vector, its vector load, its alignment test) of an operand."""
    if kind == "scalar":
        return f"T {name}_", f"{name}_", f"{name}_", "", ""
    if kind == "element":
        return f"const T* {name}_", f"{name}_[0]", f"{name}_[0]", "", ""
    return (f"const T* {name}_", f"{name}_[i]", f"{name}v.v[j]", f"TV {name}v = *(const TV*)({name}_ + s); ",
            f"(unsigned long long){name}_ % sizeof(TV) == 0")


def _kernel(ctype: str, rtype: str, operands: list[tuple[str, str, str, str, str]], expression: str) -> str:
    """An element-wise kernel: each thread computes ``16 / sizeof(T)`` consecutive elements, with 16-byte vector
    loads and a vector store where every array's address is aligned to them (one test, the same for all
    threads), else element by element (the same expression per element, so the same bits either way)."""
    names = "ab"[:len(operands)]
    params = ", ".join(op[0] for op in operands)
    aligned = " && ".join([op[4] for op in operands if op[4]] + ["(unsigned long long)o % sizeof(RV) == 0"])
    loads = "".join(op[3] for op in operands)
    one = " ".join(f"T {x} = {op[1]};" for x, op in zip(names, operands))
    lane = " ".join(f"T {x} = {op[2]};" for x, op in zip(names, operands))
    return (f"typedef {ctype} T;\ntypedef {rtype} R;\n"
            "#define V (16 / sizeof(T))\n"
            "struct __align__(16) TV { T v[V]; };\n"
            "struct __align__(sizeof(R) * V) RV { R v[V]; };\n"
            f"extern \"C\" __global__ void k({params}, R* o, long long n) {{\n"
            "  long long s = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * V;\n"
            "  if (s >= n) return;\n"
            f"  if (s + V <= n && {aligned}) {{\n"
            f"    {loads}RV r;\n"
            f"#pragma unroll\n    for (int j = 0; j < V; ++j) {{ {lane} r.v[j] = (R)({expression}); }}\n"
            "    *(RV*)(o + s) = r;\n"
            "  } else {\n"
            f"    for (long long i = s; i < n && i < s + V; ++i) {{ {one} o[i] = (R)({expression}); }}\n"
            "  }\n"
            "}\n")


def _binary_expression(op: str, ctype: str) -> str:
    if op == "pow":  # an exponent of 2: NumPy's square (exact, and memory-bound); else CuPy's powf/pow
        return "(b == 2.0f ? a * a : powf(a, b))" if ctype == "float" else "(b == 2.0 ? a * a : pow(a, b))"
    return BINARY[op]


def _source(op: str, ctype: str, rtype: str, form: str) -> str:
    if form == "bc":
        return _strided_source(op, ctype, rtype)
    ka, kb = _FORMS[form]
    return _kernel(ctype, rtype, [_operand(ka, "a"), _operand(kb, "b")], _binary_expression(op, ctype))


#: the most axes a strided launch takes (after merging the axes its operands allow)
STRIDED_AXES = 4


def _strided_source(op: str, ctype: str, rtype: str) -> str:
    """Two operands of any element strides (0 along broadcast axes) over the result's shape, merged to
    STRIDED_AXES axes (``strided_layout``, passed by value): each thread writes ``16 / sizeof(T)`` consecutive
    elements of the C-contiguous result, with one vector store where they lie in one innermost row."""
    expression = _binary_expression(op, ctype)
    return (f"typedef {ctype} T;\ntypedef {rtype} R;\n"
            "#define V (16 / sizeof(T))\n"
            "struct __align__(sizeof(R) * V) RV { R v[V]; };\n"
            "struct Layout { unsigned int d[4]; long long sa[4]; long long sb[4]; };\n"
            "__device__ __forceinline__ void at(const Layout& l, unsigned int i, long long& oa, long long& ob) {\n"
            "  unsigned int i3 = i % l.d[3]; i /= l.d[3];\n"
            "  unsigned int i2 = i % l.d[2]; i /= l.d[2];\n"
            "  unsigned int i1 = i % l.d[1], i0 = i / l.d[1];\n"
            "  oa = i0 * l.sa[0] + i1 * l.sa[1] + i2 * l.sa[2] + i3 * l.sa[3];\n"
            "  ob = i0 * l.sb[0] + i1 * l.sb[1] + i2 * l.sb[2] + i3 * l.sb[3];\n"
            "}\n"
            "extern \"C\" __global__ void k(const T* a_, const T* b_, R* o, long long n, Layout l) {\n"
            "  long long s = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * V;\n"
            "  if (s >= n) return;\n"
            "  long long oa, ob;\n"
            "  at(l, (unsigned int)s, oa, ob);\n"
            "  if (s + V <= n && (unsigned int)s % l.d[3] + V <= l.d[3] && (unsigned long long)o % sizeof(RV) == 0) {\n"
            "    RV r;\n"
            "#pragma unroll\n"
            f"    for (int j = 0; j < V; ++j) {{ T a = a_[oa + j * l.sa[3]]; T b = b_[ob + j * l.sb[3]]; "
            f"r.v[j] = (R)({expression}); }}\n"
            "    *(RV*)(o + s) = r;\n"
            "  } else {\n"
            "    for (long long i = s; i < n && i < s + V; ++i) {\n"
            f"      at(l, (unsigned int)i, oa, ob); T a = a_[oa]; T b = b_[ob]; o[i] = (R)({expression});\n"
            "    }\n"
            "  }\n"
            "}\n")


def strided_layout(shape: tuple, sa: tuple, sb: tuple) -> bytes | None:
    """The ``Layout`` argument of a strided launch over the C-contiguous result of ``shape`` for operands of
    element strides ``sa``, ``sb`` along its axes (0 where broadcast): the axes of length 1 dropped, each
    merged with the one outside it where both operands step through them as one, padded to STRIDED_AXES;
    None where more axes remain or 32-bit coordinates do not reach every element."""
    dims, xa, xb = [], [], []
    n = 1
    for d, x, y in zip(shape, sa, sb):
        n *= d
        if d == 1:
            continue
        if dims and xa[-1] == x * d and xb[-1] == y * d:
            dims[-1] *= d
            xa[-1], xb[-1] = x, y
        else:
            dims.append(d)
            xa.append(x)
            xb.append(y)
    if len(dims) > STRIDED_AXES or n >= 1 << 31:
        return None
    pad = STRIDED_AXES - len(dims)
    return (np.array([1] * pad + dims, np.uint32).tobytes() + np.array([0] * pad + xa, np.int64).tobytes()
            + np.array([0] * pad + xb, np.int64).tobytes())


def _unary_source(op: str, ctype: str) -> str:
    return _kernel(ctype, ctype, [_operand("array", "a")], UNARY[op])


#: the largest host upload written by a kernel whose arguments carry the bytes (``DirectLauncher.store``)
STORE_MAX = 16

# one thread writes the n (<= STORE_MAX) bytes of w0, w1 (little-endian, as on the host) to d
_STORE_SOURCE = r"""
extern "C" __global__ void k(unsigned char* d, unsigned long long w0, unsigned long long w1, long long n) {
  for (int i = 0; i < n; ++i) d[i] = (unsigned char)((i < 8 ? w0 >> (8 * i) : w1 >> (8 * (i - 8))) & 0xff);
}
"""


#: the largest sum over all of a contiguous array done by one block of ``_sum_source`` (beyond it CuPy's
#: reduction, whose launch cost no longer matters)
SMALL_SUM = 1 << 14


def _one_block_source(params: str, otype: str, term: str) -> str:
    """A kernel of one block of BLOCK threads: each sums ``term`` (of index i) over a strided share of 0..n-1
    in ``otype``, then a fixed tree in shared memory; thread 0 writes the sum to ``o``."""
    return (f"typedef {otype} O;\n"
            f"extern \"C\" __global__ void k({params}, O* o, long long n) {{\n"
            f"  __shared__ O s[{BLOCK}];\n"
            "  O acc = 0;\n"
            f"  for (long long i = threadIdx.x; i < n; i += {BLOCK}) acc += {term};\n"
            "  s[threadIdx.x] = acc;\n"
            "  __syncthreads();\n"
            f"  for (int w = {BLOCK} / 2; w > 0; w >>= 1) {{\n"
            "    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];\n"
            "    __syncthreads();\n"
            "  }\n"
            "  if (threadIdx.x == 0) *o = s[0];\n"
            "}\n")


def _sum_source(ctype: str, otype: str) -> str:
    """The sum of x in the output's type."""
    return f"typedef {ctype} T;\n" + _one_block_source("const T* x", otype, "(O)x[i]")


def _dot_source(ctype: str) -> str:
    """The sum of the products of a and b."""
    return f"typedef {ctype} T;\n" + _one_block_source("const T* a, const T* b", ctype, "a[i] * b[i]")


class _Args(threading.local):
    """Per-thread argument slots for cuLaunchKernel: four 8-byte values and the array of their addresses."""

    def __init__(self):
        self.words = np.zeros(4, np.uint64)
        self.addresses = np.array([self.words.ctypes.data + 8 * k for k in range(4)], np.uint64)
        self.params = self.addresses.ctypes.data
        self.scalar_views: dict = {}

    def with_layout(self, layout: bytes) -> int:
        """The parameters of a strided launch: the four words and ``layout`` (kept until the next one)."""
        self.layout = np.frombuffer(layout, np.uint8).copy()
        self.five = np.array([*self.addresses, self.layout.ctypes.data], np.uint64)
        return self.five.ctypes.data

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
        self._sms = 0  # the GPU's multiprocessors (read on first use)

    def _compiled(self, key: tuple, source, options: tuple = ()) -> int:
        """The CUfunction of kernel ``k`` of the source ``source()`` makes, compiled once per ``key``."""
        f = self._functions.get(key)
        if f is None:
            k = cupy.RawKernel(source(), "k", options=options)
            self._kernels.append(k)
            f = self._functions[key] = k.kernel.ptr
        return f

    def _function(self, op: str, npdtype: np.dtype, form: str) -> int:
        """The CUfunction of ``op`` on ``npdtype`` operands of ``form`` ("u" for a unary op), compiled once."""
        def source() -> str:
            log.debug("cuda: compiling the direct kernel %s of %s (%s operands)", op, npdtype.name, form)
            complex_type = _COMPLEX_CTYPE.get(npdtype)
            if complex_type is not None:  # (CuPy's complex type and operators: CuPy's ufunc's bits)
                return _HEADERS + _source(op, complex_type, complex_type, form)
            ctype = _CTYPE[npdtype.name]
            if form == "u":
                return _unary_source(op, ctype)
            return _source(op, ctype, "bool" if op in _BOOL_RESULT else ctype, form)
        return self._compiled((op, npdtype, form), source)

    def native_part(self, op: str, dtypes, result: np.dtype, form: str, n: int) -> tuple[int, int, int] | None:
        """(CUfunction, blocks, threads) of the direct kernel that ``try_binary``/``try_unary`` launch for
        operands of NumPy ``dtypes`` (arrays', and a scalar's) in ``form`` (see _FORMS; "u": one array) with
        an ``n``-element result of ``result``; None where they would refuse such operands. numr_array._speedups
        launches it for a call whose plan has it, with the same argument words."""
        if n <= 0:
            return None
        npdtype = dtypes[0]
        if form == "r":  # sum of all n elements of one dense array: try_sum's kernel
            f = self._sum_function(npdtype, result) if op == "sum" and n <= SMALL_SUM else None
            return None if f is None else (f, 1, BLOCK)
        if form == "u":
            if op not in UNARY or npdtype not in _UNARY_DTYPES or result != npdtype:
                return None
        elif not _binary_ok(op, npdtype, form) or dtypes[1] != npdtype or \
                result != (np.dtype(np.bool_) if op in _BOOL_RESULT else npdtype):
            return None
        return self._function(op, npdtype, form), blocks(n, npdtype.itemsize), BLOCK

    def try_binary(self, op: str, ins, outs) -> bool:
        """Launch ``op`` on (x1, x2) into outs[0] if every operand qualifies; False (nothing done) otherwise."""
        plan = binary_plan(op, ins, outs)
        if plan is None:
            return False
        npdtype, form, n = plan[:3]
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
        params = args.params if form != "bc" else args.with_layout(plan[3])
        driver.launchKernel(f, blocks(n, npdtype.itemsize), 1, 1, BLOCK, 1, 1, 0, self._stream, params, 0)
        return True

    def try_unary(self, op: str, ins, outs) -> bool:
        """Launch the unary ``op`` on ins[0] into outs[0] if both are float32 or float64 of one contiguous shape
        with at least one element; False (nothing done) otherwise."""
        x, o = ins[0], outs[0]
        if type(x) is not Tensor or _aliased(ins, o):
            return False
        npdtype = x._dtype.np
        if npdtype not in _UNARY_DTYPES or o._dtype.np is not npdtype:
            return False
        dense = _dense_result(o)
        if dense is None:
            return False
        n, strides = dense
        if x._strides != strides or x._shape != o._shape:
            return False
        f = self._function(op, npdtype, "u")
        args = self._args
        words = args.words
        words[0] = address(x)
        words[1] = address(o)
        words[2] = n
        driver.launchKernel(f, blocks(n, npdtype.itemsize), 1, 1, BLOCK, 1, 1, 0, self._stream, args.params, 0)
        return True

    def divide_at(self, ptr: int, n: int, npdtype: np.dtype, divisor: float) -> None:
        """Divide the ``n`` elements of ``npdtype`` (float32 or float64) at device address ``ptr`` in place by
        ``divisor`` cast to ``npdtype``: the "ts" divide kernel, whose thread reads its elements before
        writing them."""
        args = self._args
        words = args.words
        words[0] = ptr
        args.scalar_slot(npdtype)[8 // npdtype.itemsize] = divisor
        words[2] = ptr
        words[3] = n
        driver.launchKernel(self._function("divide", npdtype, "ts"), blocks(n, npdtype.itemsize), 1, 1, BLOCK, 1, 1,
                            0, self._stream, args.params, 0)

    def try_copy(self, src, dst: Tensor) -> bool:
        """Copy ``src`` into ``dst`` with one cudaMemcpyAsync when both are dense in C order with one dtype and
        shape and do not overlap; False (nothing done) otherwise. No CuPy view of either is made."""
        if type(src) is not Tensor or src._dtype is not dst._dtype or src._shape != dst._shape:
            return False
        shape = dst._shape
        if not (_dense(shape, src._strides) and _dense(shape, dst._strides)):
            return False
        n = dst._dtype.itemsize
        for d in shape:
            n *= d
        if n == 0:
            return False
        s, d = address(src), address(dst)
        if s < d + n and d < s + n:
            return False
        runtime.memcpyAsync(d, s, n, runtime.memcpyDeviceToDevice, self._stream)
        return True

    def store_function(self) -> int:
        """The CUfunction of ``store``'s kernel (compiled once): d, w0, w1, n; one thread writes n bytes."""
        return self._compiled(("store",), lambda: _STORE_SOURCE)

    def store(self, ptr: int, host: np.ndarray) -> None:
        """Write the bytes of the C-contiguous ``host`` (at most STORE_MAX) to device address ``ptr`` with a
        kernel that gets them as arguments: no staging of pageable memory, and the bytes are taken at the call."""
        f = self.store_function()
        args = self._args
        words = args.words
        w = int.from_bytes(host.tobytes(), "little")
        words[0] = ptr
        words[1] = w & 0xFFFF_FFFF_FFFF_FFFF
        words[2] = w >> 64
        words[3] = host.nbytes
        driver.launchKernel(f, 1, 1, 1, 1, 1, 1, 0, self._stream, args.params, 0)

    def try_sum(self, x, o: Tensor, axes: tuple) -> bool:
        """The sum of all of ``x`` (a dense tensor of at most SMALL_SUM elements) into ``o`` by one kernel of one
        block; False (nothing done) otherwise. ``small_sum`` takes the same cases (and gives the same bits)."""
        if type(x) is not Tensor or len(axes) != len(x._shape):
            return False
        n = 1
        for d in x._shape:
            n *= d
        if n == 0 or n > SMALL_SUM or not _dense(x._shape, x._strides):
            return False
        return self.sum_at(address(x), address(o), n, x._dtype.np, o._dtype.np)

    def small_sum(self, x, o) -> bool:
        """``try_sum`` for CuPy arrays (the table's sum kernel: in a capture, or with another stream current)."""
        n = x.size
        if n == 0 or n > SMALL_SUM or not x.flags.c_contiguous:
            return False
        return self.sum_at(x.data.ptr, o.data.ptr, n, x.dtype, o.dtype)

    def dot_function(self, npdtype: np.dtype, n: int) -> int | None:
        """The CUfunction of the one-block dot product of two dense float32 or float64 vectors of ``n`` elements
        (one launch of BLOCK threads: a words a, b, o, n), compiled once; None for other dtypes and sizes.
        cuBLAS's gemv of one output takes two kernels for it, the second (split-K's reduction) 8 µs on an H200."""
        if npdtype not in _UNARY_DTYPES or not 0 < n <= SMALL_SUM:
            return None
        return self._compiled(("dot", npdtype), lambda: _dot_source(_CTYPE[npdtype.name]))

    def try_dot(self, ins, outs) -> bool:
        """matmul of two dense vectors of one float dtype into its 0-D result by ``dot_function``'s kernel;
        False (nothing done) otherwise."""
        a, b = ins
        o = outs[0]
        if type(a) is not Tensor or type(b) is not Tensor or len(a._shape) != 1 or a._shape != b._shape \
                or a._strides != (1,) or b._strides != (1,) or a._dtype is not b._dtype or o._dtype is not a._dtype:
            return False
        f = self.dot_function(a._dtype.np, a._shape[0])
        if f is None:
            return False
        args = self._args
        words = args.words
        words[0] = address(a)
        words[1] = address(b)
        words[2] = address(o)
        words[3] = a._shape[0]
        driver.launchKernel(f, 1, 1, 1, BLOCK, 1, 1, 0, self._stream, args.params, 0)
        return True

    def matvec_blocks(self, n: int, d: int) -> int:
        """The grid of a pass over ``n`` rows of a thin matrix of ``d`` columns (``_matvec.grid`` on this GPU)."""
        if not self._sms:
            self._sms = runtime.deviceGetAttribute(runtime.cudaDevAttrMultiProcessorCount, runtime.getDevice())
        return _matvec.grid(n, d, self._sms)

    def matvec_function(self, kind: str, npdtype: np.dtype, d: int) -> int:
        """The CUfunction of the eager pass ``kind`` ("rows": X @ w, "cols": X.T @ v; ``_matvec.form``) over an
        n x ``d`` matrix of ``npdtype`` (words a, b, o, n), compiled once, with the options of a fused run's
        kernel (which repeats its code)."""
        return self._compiled(("matvec", kind, npdtype, d),
                              lambda: _matvec.eager_source(kind, npdtype, d, ""), _FUSED_OPTIONS)

    def try_matvec(self, ins, outs) -> bool:
        """matmul of a thin C-contiguous matrix (or its transpose) and a dense vector into a dense result by
        ``matvec_function``'s kernel; False (nothing done) for other operands, or a result over an operand."""
        a, b = ins
        o = outs[0]
        planned = _matvec.tensor_form(a, b, o)
        if planned is None or o._strides != (1,):
            return False
        kind, n, d = planned
        start = address(o)
        end = start + o._shape[0] * o._dtype.itemsize
        if any(start < e and s < end for s, e in (_tensor_span(a), _tensor_span(b))):
            return False
        f = self.matvec_function(kind, a._dtype.np, d)
        args = self._args
        words = args.words
        words[0] = address(a)
        words[1] = address(b)
        words[2] = start
        words[3] = n
        driver.launchKernel(f, self.matvec_blocks(n, d), 1, 1, _matvec.THREADS, 1, 1, 0, self._stream, args.params, 0)
        return True

    def _sum_function(self, xdtype: np.dtype, odtype: np.dtype) -> int | None:
        """The CUfunction of the one-block sum of ``xdtype`` into ``odtype`` (compiled once), or None for
        dtypes it does not take."""
        if xdtype not in _DIRECT_DTYPES or odtype not in _DIRECT_DTYPES or odtype.kind == "b":
            return None
        return self._compiled(("sum", xdtype, odtype), lambda: _sum_source(_CTYPE[xdtype.name], _CTYPE[odtype.name]))

    def sum_at(self, x: int, o: int, n: int, xdtype: np.dtype, odtype: np.dtype) -> bool:
        f = self._sum_function(xdtype, odtype)
        if f is None:
            return False
        args = self._args
        words = args.words
        words[0] = x
        words[1] = o
        words[2] = n
        driver.launchKernel(f, 1, 1, 1, BLOCK, 1, 1, 0, self._stream, args.params, 0)
        return True

    def launch_run(self, run: "FusedRun", dead: frozenset = frozenset()) -> None:
        """One kernel doing every step of ``run`` (compiled once per run structure), storing no result at the
        pointers in ``dead``; a run ended by a reduction is the reduction's kernel, with its launch shape."""
        source, key, words = run.kernel(dead)
        f = self._fused.get(key)
        if f is None:
            # CuPy's options for its ufunc kernels (FMA contraction on, as in each eager kernel): the steps
            # are kept apart by FusedRun's opaque values, not by compiler options
            log.debug("cuda: compiling a fused kernel of %d steps over %d elements", len(run.steps), run.n)
            k = cupy.RawKernel(source, "k", options=_FUSED_OPTIONS)
            self._kernels.append(k)
            f = self._fused[key] = k.kernel.ptr
        addresses = np.arange(len(words), dtype=np.uint64) * 8 + words.ctypes.data
        if run.matrix is not None:
            driver.launchKernel(f, self.matvec_blocks(run.n, run.matrix[2]), 1, 1, _matvec.THREADS, 1, 1, 0, self._stream,
                                addresses.ctypes.data, 0)
            return
        if run.reduction is not None:
            bx, by, blocks = run.reduction[6]
            driver.launchKernel(f, blocks, 1, 1, bx, by, 1, 0, self._stream, addresses.ctypes.data, 0)
            return
        n = run.n
        driver.launchKernel(f, (n + BLOCK - 1) // BLOCK, 1, 1, BLOCK, 1, 1, 0, self._stream,
                            addresses.ctypes.data, 0)


def address(t: Tensor) -> int:
    return t._buf.handle.ptr + t._offset * t._dtype.itemsize


def _dense(shape, strides) -> bool:
    """Whether a view of ``shape`` and element ``strides`` covers one block in C order (length-1 axes'
    strides do not matter)."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _dense_result(o: Tensor) -> tuple[int, tuple[int, ...]] | None:
    """(element count, C-contiguous strides) of a result the direct kernels can write: contiguous, with at
    least one element; else None."""
    n = 1
    for d in o._shape:
        n *= d
    if n == 0:
        return None
    strides = contiguous_strides(o._shape)
    return (n, strides) if o._strides == strides else None


def qualify(op: str, ins, outs):
    """(dtype, operand form, element count) when ``op`` on ``ins`` into ``outs[0]`` can run as a direct
    kernel (one dtype, one contiguous shape, at least one element), else None."""
    o = outs[0]
    shape = o._shape
    dense = _dense_result(o)
    if dense is None:
        return None
    n, strides = dense
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
    if not _binary_ok(op, npdtype, form):
        return None
    if op not in _BOOL_RESULT and o._dtype.np is not npdtype:
        return None
    return npdtype, form, n


def binary_plan(op: str, ins, outs):
    """The plan (``qualify``'s, or the broadcast-element or strided form's) on which ``try_binary`` launches
    ``op``, or None where it would leave the op to CuPy (an operand aliasing out, a layout none takes)."""
    if _aliased(ins, outs[0]):
        return None
    return qualify(op, ins, outs) or _qualify_broadcast_element(op, ins, outs) or _qualify_strided(op, ins, outs)


def _aliased(ins, o: Tensor) -> bool:
    """Whether an operand is another view of the result's memory (not the result itself): an element would then
    read what another element (or, V to a thread, an earlier one of its own) wrote; CuPy's kernel copies it."""
    for x in ins:
        if type(x) is Tensor and x._buf is o._buf and (x._offset != o._offset or x._shape != o._shape
                                                       or x._strides != o._strides or x._dtype is not o._dtype):
            return True
    return False


def _binary_ok(op: str, npdtype: np.dtype, form: str) -> bool:
    """Whether the direct kernels compute ``op`` on operands of ``npdtype`` in ``form``."""
    if form not in _FORMS and form != "bc":
        return False
    if npdtype in _COMPLEX_CTYPE:
        return op in COMPLEX_BINARY and form in _ARRAY_FORMS
    if op in FLOAT_BINARY:
        return npdtype in _UNARY_DTYPES
    return op in BINARY and npdtype in _DIRECT_DTYPES


def _qualify_strided(op: str, ins, outs):
    """(dtype, "bc", element count, layout) when both operands of ``op`` are arrays of one dtype with the
    result's shape (broadcast views: strides 0) in any layout ``strided_layout`` takes, into a dense result."""
    x1, x2 = ins
    if type(x1) is not Tensor or type(x2) is not Tensor:
        return None
    o = outs[0]
    npdtype = x1._dtype.np
    if x2._dtype.np is not npdtype or not _binary_ok(op, npdtype, "bc"):
        return None
    if op not in _BOOL_RESULT and o._dtype.np is not npdtype:
        return None
    shape = o._shape
    dense = _dense_result(o)
    if x1._shape != shape or x2._shape != shape or dense is None:
        return None
    layout = strided_layout(shape, x1._strides, x2._strides)
    return None if layout is None else (npdtype, "bc", dense[0], layout)


def _qualify_broadcast_element(op: str, ins, outs):
    """(dtype, "tp" or "pt", element count) when one operand of ``op`` is one element broadcast (all strides 0)
    and the other is as ``qualify`` takes it (eager launches only: a FusedRun reads every operand per element)."""
    x1, x2 = ins
    if type(x1) is not Tensor or type(x2) is not Tensor:
        return None
    o = outs[0]
    shape = o._shape
    npdtype = x1._dtype.np
    if x2._dtype.np is not npdtype or not _binary_ok(op, npdtype, "tp") or x1._shape != shape or x2._shape != shape:
        return None
    if op not in _BOOL_RESULT and o._dtype.np is not npdtype:
        return None
    dense = _dense_result(o)
    if dense is None:
        return None
    n, strides = dense
    if x1._strides == strides and not any(x2._strides):
        return npdtype, "tp", n
    if x2._strides == strides and not any(x1._strides):
        return npdtype, "pt", n
    return None


class FusedRun:
    """Element-wise ops recorded inside a capture, to become one kernel in the graph instead of one each.

    Every op of a run over n elements has contiguous operands of n elements, views of its result's shape read
    at their strides (a broadcast, a transpose), or operands of one element (a scalar held in a tensor, read by
    every thread: an "element" operand), so element i of each result depends only on element i of its
    operands, and one thread can do all the steps for its i in program order. An op whose result has one
    element (``rs / pAp`` in an iterative solver) is a step of a run over any count: every thread computes it,
    thread 0 stores it, and a later step reads it from the thread's own register. That holds only if no thread
    reads memory another thread writes within the run: ``add`` refuses two operands that overlap at different
    addresses (``x[4:12]`` read after ``x[0:8]`` is written), an element or a view read of memory the run
    writes, a result over memory an earlier step read through a view, and a one-element result over memory an
    earlier step read from memory; the caller then starts a new run.

    A reduction over the trailing axes of the run's last result (``sum(d ** 2, axis=-1)``) may end the run
    (``add_reduction``): the kernel is then the reduction's own (``_columns.k_rows``: the same lanes, fold and
    bits) with each element computed by the run's steps instead of loaded. Results no tensor holds when the
    run is launched (``kernel``'s ``dead``: the arena has filed their blocks for reuse) are not stored.

    Each step is the C expression its eager kernel evaluates (``FUSED``), on operands of the same C types,
    compiled with CuPy's options and headers; its result passes through ``_opaque`` before a later step
    reads it, so that the compiler optimises each step as in its own kernel and never across steps."""

    MAX_STEPS = 64

    def __init__(self):
        self.n = 0
        # (expr, operands, out, out dtype, one element); an operand: (kind, value, dtype) or None, where kind
        # is "p" (element i), "e" (element 0 of a one-element tensor) or "s" (a scalar); or ("v", pointer,
        # dtype, shape, strides): a view, element i of ``shape`` at ``strides``
        self.steps: list = []
        # (op, out pointer, out dtype, rows, m, accumulator, launch shape, scale, kernel source maker)
        self.reduction: tuple | None = None
        # a pass over the rows of a thin matrix (``_matvec``): its pointer, dtype and columns; the vector whose
        # dot product with each row is step 0's result (the head)
        self.matrix: tuple[int, np.dtype, int] | None = None
        self.head: int | None = None
        # steps over the tail's d results, run by the pass's last block once every row is summed (the first:
        # the tail's result itself), and the extents they read or write: pointer -> (end, element read)
        self.after: list = []
        self._after_extent: dict[int, tuple[int, bool]] = {}
        self._extent: dict[int, tuple[int, int]] = {}  # pointer -> (end, itemsize)
        self._written: dict[int, tuple[bool, np.dtype]] = {}  # pointer -> (by a one-element step, dtype)
        self._element_reads: set[int] = set()  # pointers that element operands read from memory
        self._view_reads: list[tuple[int, int]] = []  # (start, end) of the memory views read
        self._racy = False  # a one-element step wrote memory read before: the run must stay one thread

    @property
    def tail(self) -> int | None:
        """The pointer the rows scaled by the last row step's result are summed into (``add_tail``), or None."""
        return self.after[0][2] if self.after else None

    def add(self, op: str, ins, outs) -> bool:
        """Record ``op`` if it qualifies and fits this run; False (nothing recorded) otherwise."""
        if self.tail is not None:
            return self._add_after(op, ins, outs)
        if self.reduction is not None:
            return False
        plan = _plan(op, ins, outs)
        if plan is None:
            return False
        expr, operands, n = plan
        one = n == 1
        if one and self.matrix is not None:  # (a pass's rows are warps: no thread 0 of the run's elements)
            return False
        if self.steps:
            if len(self.steps) >= self.MAX_STEPS or not one and self.n not in (1, n):
                return False
            if not one and self.n == 1 and self._racy:  # threads beyond 0 would read what thread 0 writes
                return False
        spans = []
        views = []
        for x in operands:
            if x is None or x[0] == "s":
                continue
            if x[0] == "v":
                views.append(_view_span(x))
                continue
            spans.append((x[1], x[1] + (1 if x[0] == "e" else n) * x[2].itemsize, x[2].itemsize))
        o = outs[0]
        o_start, item = address(o), o._dtype.itemsize
        o_end = o_start + n * item
        for start, end, _ in spans:  # an operand partly under the result: thread i would read what i - 1 wrote
            if start < o_end and o_start < end and (start, end) != (o_start, o_end):
                return False
        for start, end in (*views, *self._view_reads):  # a view's elements are other threads'
            if start < o_end and o_start < end:
                return False
        for start, end in views:
            for other in self._written:
                if start < self._extent[other][0] and other < end:
                    return False
        spans.append((o_start, o_end, item))
        for start, end, item in spans:
            known = self._extent.get(start)
            if known is not None and known == (end, item):
                continue
            for other, (oend, _) in self._extent.items():
                if start < oend and other < end:
                    return False
        reads = set()
        for x in operands:
            if x is not None and x[0] == "e":
                w = self._written.get(x[1])
                if w is None:
                    reads.add(x[1])
                elif not w[0] or w[1] != x[2]:  # another thread's element, or thread 0's store read from memory
                    return False
        racy = self._racy
        if one and (o_start in self._element_reads or o_start in reads):
            if self.n > 1:
                return False
            racy = True
        for start, end, item in spans:
            self._extent[start] = (end, item)
        self._element_reads |= reads
        self._view_reads += views
        self._written[o_start] = (one, o._dtype.np)
        self._racy = racy
        self.n = max(self.n, n)
        self.steps.append((expr, operands, o_start, o._dtype.np, one))
        return True

    def add_head(self, x, w, o) -> bool:
        """Start this (empty) run with ``o = x @ w`` of a thin C-contiguous matrix and a dense vector
        (``_matvec.form`` "rows"); False (nothing recorded) for other operands or a result over an operand."""
        planned = _matvec.tensor_form(x, w, o)
        if self.steps or planned is None or planned[0] != "rows" or o._strides != (1,):
            return False
        _, n, d = planned
        start = address(o)
        end = start + n * o._dtype.itemsize
        spans = [_tensor_span(x), _tensor_span(w)]
        if any(s < end and start < e for s, e in spans):
            return False
        self.matrix = (address(x), x._dtype.np, d)
        self.head = address(w)
        self._view_reads += spans  # every warp reads w, and each row is its warp's lanes'
        self._extent[start] = (end, o._dtype.itemsize)
        self._written[start] = (False, o._dtype.np)
        self.n = n
        self.steps.append((_HEAD, (), start, o._dtype.np, False))
        return True

    def add_tail(self, xt, r, o) -> bool:
        """End the run with ``o = xt @ r``, xt the transposed view of a thin C-contiguous matrix (the head's, if
        the run has one) and r the last step's result (``_matvec.form`` "cols"); False (nothing recorded)
        otherwise, or where the matrix is memory the run writes or the result memory it reads or writes."""
        planned = _matvec.tensor_form(xt, r, o)
        if not self.steps or self.reduction is not None or self.tail is not None or planned is None or \
                planned[0] != "cols" or o._strides != (1,) or any(st[4] for st in self.steps):
            return False
        _, n, d = planned
        last = self.steps[-1]
        if n != self.n or address(r) != last[2] or r._dtype.np != last[3]:
            return False
        matrix = (address(xt), xt._dtype.np, d)
        if self.matrix is not None and self.matrix != matrix:
            return False
        span = _tensor_span(xt)
        start = address(o)
        end = start + d * o._dtype.itemsize
        for s, e in self._extent.items():
            if span[0] < e[0] and s < span[1] or start < e[0] and s < end:
                return False
        if any(start < e and s < end for s, e in self._view_reads) or start < span[1] and span[0] < end:
            return False
        self.matrix = matrix
        self.after.append((_TAIL, (), start, o._dtype.np, False))
        self._after_extent[start] = (end, False)
        return True

    def _add_after(self, op: str, ins, outs) -> bool:
        """Record ``op`` over the tail's d results as a step of the pass's last block (thread c: element c), which
        runs once every block has summed its rows: it may read and write what the rows read (X, w), not what
        the row steps write (their stores are other blocks', and this block's cache may hold old lines), nor
        another thread's element of what an earlier step of this phase writes."""
        plan = _plan(op, ins, outs)
        if plan is None or len(self.after) >= self.MAX_STEPS:
            return False
        expr, operands, n = plan
        if n != self.matrix[2]:
            return False
        o = outs[0]
        o_start = address(o)
        spans = [(o_start, o_start + n * o._dtype.itemsize, False)]
        for x in operands:
            if x is None or x[0] == "s":
                continue
            if x[0] == "v":
                return False
            spans.append((x[1], x[1] + (1 if x[0] == "e" else n) * x[2].itemsize, x[0] == "e"))
        for start, end, element in spans:
            if any(start < e and s < end for s, (e, _) in self._extent.items() if s in self._written):
                return False
            for s, (e, read_element) in self._after_extent.items():
                if start < e and s < end and ((s, e) != (start, end) or element or read_element):
                    return False
        for start, end, element in spans:
            self._after_extent[start] = (end, element or self._after_extent.get(start, (0, False))[1])
        self.after.append((expr, operands, o_start, o._dtype.np, False))
        return True

    def add_reduction(self, op: str, x, o, rows: int, m: int, acc: np.dtype, launch: tuple, scale: float,
                      source: Callable) -> bool:
        """End the run with ``op`` of ``x`` (its last result, C-contiguous) over rows of ``m`` trailing elements
        into the C-contiguous ``o``, as ``_columns.rows_plan`` plans it (accumulator, launch shape), its kernel
        made by ``source`` (``_columns.fused_rows_source`` for op and dtypes, from the headers on); False
        (nothing recorded) where x is not that result or a step has one element."""
        if not self.steps or self.reduction is not None or self.matrix is not None or type(x) is not Tensor:
            return False
        last = self.steps[-1]
        if address(x) != last[2] or x._dtype.np != last[3] or rows * m != self.n or any(st[4] for st in self.steps):
            return False
        if x._strides != contiguous_strides(x._shape) or o._strides != contiguous_strides(o._shape):
            return False
        start = address(o)
        end = start + rows * o._dtype.itemsize
        if any(s < end and start < e for s, (e, _) in self._extent.items()) or \
                any(s < end and start < e for s, e in self._view_reads):
            return False
        self.reduction = (op, start, o._dtype.np, rows, m, acc, launch, scale, source)
        return True

    def stored_pointers(self) -> list[int]:
        """The addresses the run's steps store to (``kernel`` leaves out those it is told are dead)."""
        return [step[2] for step in self.steps + self.after]

    def store_end(self, ptr: int) -> int:
        """The end of the memory the run's steps store to at ``ptr``."""
        return (self._extent.get(ptr) or self._after_extent[ptr])[0]

    def reads(self) -> list[tuple[int, int]]:
        """(start, end) of the memory the run may read: its steps' operands but those an earlier step wrote
        (read from its register, as ``kernel`` does), views, the pass's matrix and vector, and all the last
        block's memory."""
        spans, written = [], {}
        for _, operands, out, odtype, _ in self.steps:
            spans += [(x[1], x[1] + (1 if x[0] == "e" else self.n) * x[2].itemsize) for x in operands
                      if x is not None and x[0] in ("p", "e") and (x[1] not in written or written[x[1]] != x[2])]
            written[out] = odtype
        return spans + [(s, e) for s, (e, _) in list(self._after_extent.items())] + self._view_reads

    def kernel(self, dead: frozenset = frozenset()) -> tuple[str, tuple, np.ndarray]:
        """The run's CUDA source, its structure (the compiled-kernel cache key) and its argument words. The
        results at the pointers in ``dead`` are computed but not stored (unless a later step reads the memory:
        a view of another dtype)."""
        if dead:
            last_dtype: dict[int, np.dtype] = {}
            reloaded = set()
            for _, operands, out, odtype, _ in self.steps + self.after:
                for x in operands:
                    if x is not None and x[0] != "s" and x[1] in last_dtype and last_dtype[x[1]] != x[2]:
                        reloaded.add(x[1])
                last_dtype[out] = odtype
            dead = dead - reloaded
        params: list[str] = []
        words: list = []  # pointers (int) and scalars (NumPy scalars), one 8-byte slot each
        slot_of: dict[int, int] = {}
        held: dict[int, tuple] = {}  # pointer -> (C type, dtype, step) of the value last stored there
        body: list[tuple[int, str, str]] = []  # per step: its number, its code, its opaque register
        key: list = []

        def pointer(ptr: int) -> int:
            k = slot_of.get(ptr)
            if k is None:
                k = slot_of[ptr] = len(words)
                words.append(ptr)
                params.append(f"char* p{k}")
            return k

        used: set[int] = set()  # the steps whose results a later step reads from their register
        preloads: dict[tuple[int, str], int] = {}  # a pass's operands read a row ahead: (slot, C type) -> number
        m = self.reduction[4] if self.reduction is not None else 0
        row_code: list[str] = []  # a reduction's per-row parts of view offsets (computed once per row)

        def view_index(shape: tuple, strides: tuple) -> str:
            # in a reduction over rows of m: the offset of row r_ once per row, plus that of column c_
            for q in range(len(shape) + 1):
                if m and math.prod(shape[q:]) == m:
                    base = f"vb{len(row_code)}"
                    row_code.append(f"      const long long {base} = {_view_offset(shape[:q], strides[:q], 'r_')};\n")
                    return f"{base} + {_view_offset(shape[q:], strides[q:], 'c_')}"
            return _view_offset(shape, strides)

        def read(x) -> str:
            kind, v, npdtype = x[:3]
            if kind == "s":
                k = len(words)
                words.append(v)
                params.append(f"{_CTYPE[npdtype.name]} p{k}")
                key.append(("s", k, npdtype))
                return f"p{k}"
            reg = held.get(v)
            if kind != "v" and reg is not None and reg[1] == npdtype:  # this thread's own value: no reload
                key.append(("r", reg[2]))
                used.add(reg[2])
                return f"r{reg[2]}"
            k = pointer(v)
            key.append((kind, k, npdtype) + x[3:])
            ctype = _CTYPE[npdtype.name]
            if kind == "p" and reg is None and self.matrix is not None and not phase_after:
                # memory no earlier step wrote: a pass loads element i with the row, a row ahead (only this
                # group writes element i of a run's result, after reading it)
                return f"pv{preloads.setdefault((k, ctype), len(preloads))}"
            index = "0" if kind == "e" else view_index(x[3], x[4]) if kind == "v" else "i"
            return f"(({ctype}*)p{k})[{index}]"

        phase_after = False
        row_body, after_body = body, []
        row_guard = "if (gl_ == 0) " if self.matrix is not None else ""  # (a pass: a group of lanes per element)
        for j, (expr, operands, out, odtype, one) in enumerate(self.steps + self.after):
            if j == len(self.steps):  # the last block's steps, per column: registers of their own
                phase_after = True
                held = {}
                body = after_body
            guard = "" if phase_after else row_guard
            decls = []
            for name, x in zip("abc", operands):
                if x is not None:
                    decls.append(f"{_CTYPE[x[2].name]} {name} = {read(x)}; ")
            r = _CTYPE[odtype.name]
            k = pointer(out)
            stored = out not in dead
            key.append((expr, odtype, k, one, stored))
            if expr is _HEAD:  # the row's dot product, which the pass computed
                code = f"s{j} = h;"
            elif expr is _TAIL:  # the column's sum over the rows, which the pass computed
                code = f"s{j} = t;"
            elif expr in _STATEMENT_BODIES:  # statements (an ElementwiseKernel's body over T a, T b -> T q)
                code = f"typedef {_CTYPE[operands[0][2].name]} T; {''.join(decls)}T q; {expr} s{j} = ({r})(q);"
            else:
                code = f"{''.join(decls)}s{j} = ({r})({expr});"
            store = "" if not stored else \
                f"if (i == 0) (({r}*)p{k})[0] = s{j};" if one else f"{guard}(({r}*)p{k})[i] = s{j};"
            body.append((j, f"  {r} s{j};\n  {{ {code} }}\n  {store}\n",
                         f"  {r} r{j} = {_opaque(r, f's{j}')};\n"))
            held[out] = (r, odtype, j)
        if self.matrix is not None:
            matrix, mdtype, d = self.matrix
            x, w, o = (None if ptr is None else f"p{pointer(ptr)}" for ptr in (matrix, self.head, self.tail))
            key.append(("pass", mdtype, d, x, w, o))
        params += ["int z", "long long n"]
        steps = "".join(code + (opaque if j in used else "") for j, code, opaque in row_body)
        if self.matrix is not None:
            last = self.steps[-1]
            after = "".join(code + (opaque if j in used else "") for j, code, opaque in after_body) or None
            source = _matvec.pass_source(mdtype, d, _HEADERS, ", ".join(params), x, w=w, steps=steps,
                                         value=None if o is None else _opaque(_CTYPE[last[3].name], f"s{len(self.steps) - 1}"),
                                         out=o, preload=tuple((ct, f"(({ct}*)p{k})") for k, ct in preloads),
                                         after=after)
        elif self.reduction is None:
            source = (_HEADERS + f"extern \"C\" __global__ void k({', '.join(params)}) {{\n"
                      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                      "  if (i >= n) return;\n" + steps + "}\n")
        else:
            op, _, od, rows, m, acc, launch, scale, make = self.reduction
            key.append(("reduce", op, od, acc, m, launch))
            last = self.steps[-1]
            # (opaque: the fold's add must not contract with the last step's product into an FMA)
            source = make(_HEADERS, ", ".join(params), "".join(row_code), steps,
                          _opaque(_CTYPE[last[3].name], f"s{len(self.steps) - 1}"), m, launch[0])
        packed = np.zeros(len(words) + 2 + (4 if self.reduction else 0), np.uint64)
        for k, v in enumerate(words):
            if isinstance(v, int):
                packed[k] = v
            else:
                packed.view(v.dtype)[8 // v.dtype.itemsize * k] = v
        packed[len(words)] = 0  # z
        packed[len(words) + 1] = self.n
        if self.reduction is not None:
            out, rows, m, scale = self.reduction[1], self.reduction[3], self.reduction[4], self.reduction[7]
            packed[len(words) + 2:len(words) + 5] = (out, rows, m)
            packed.view(np.float64)[len(words) + 5] = scale
        return source, tuple(key), packed


def _tensor_span(t: Tensor) -> tuple[int, int]:
    """(start, end) of the memory tensor ``t`` reads, at its strides."""
    return _view_span(("v", address(t), t._dtype.np, t._shape, t._strides))


def _view_span(x) -> tuple[int, int]:
    """(start, end) of the memory a view operand ("v", pointer, dtype, shape, strides) reads."""
    _, ptr, dtype, shape, strides = x
    lo = hi = 0
    for d, st in zip(shape, strides):
        if st < 0:
            lo += st * (d - 1)
        else:
            hi += st * (d - 1)
    return ptr + lo * dtype.itemsize, ptr + (hi + 1) * dtype.itemsize


def _view_offset(shape: tuple, strides: tuple, var: str = "i") -> str:
    """The C expression of the element offset, in a view of ``strides``, of element ``var`` of C-ordered ``shape``
    (unsigned 32-bit divisions where the shape allows: a 64-bit one costs a GPU tens of instructions)."""
    total = math.prod(shape)
    small = total < 1 << 31
    i, suffix = (f"(unsigned int){var}", "u") if small else (var, "LL")
    terms = []
    inner = 1
    for d, st in zip(reversed(shape), reversed(strides)):
        if d > 1 and st:
            index = f"({i} / {inner}{suffix})" if inner > 1 else i
            if inner * d < total:
                index = f"({index} % {d}{suffix})"
            terms.append(f"(long long){index} * {st}LL")
        inner *= d
    return " + ".join(terms) or "0"


def _plan(op: str, ins, outs):
    """(C expression, operands, element count) when ``op`` on ``ins`` into ``outs[0]`` can be a step of a
    fused run: real operands of one dtype (a bool condition for where; the result's dtype may differ for
    comparisons and casts) in one contiguous shape or of one element, scalars of that dtype; else None."""
    o = outs[0]
    shape = o._shape
    n = math.prod(shape)
    if n == 0 or n > 1 and o._strides != contiguous_strides(shape):
        return None
    strides = o._strides
    ins = tuple(ins)
    dtype = None
    operands: list = []
    for k, x in enumerate(ins):
        if x is None:
            operands.append(None)
            continue
        if type(x) is Tensor:
            if n > 1 and x._shape == shape and x._strides == strides:
                kind = "p"
            elif not any(x._strides) or math.prod(x._shape) == 1:  # one element (broadcast: strides 0)
                kind = "e"
            elif x._shape == shape and len(shape) <= _VIEW_AXES:  # a view: read at its strides
                kind = "v"
            else:
                return None
            xd = x._dtype.np
        elif isinstance(x, np.generic):
            xd = x.dtype
        else:
            return None
        if op == "where" and k == 0:
            if xd != np.bool_:
                return None
        elif dtype is None:
            dtype = xd
        elif xd != dtype:
            return None
        operands.append(((kind, address(x), xd) if kind != "v" else ("v", address(x), xd, shape, x._strides))
                        if type(x) is Tensor else ("s", x, xd))
    if dtype is None or dtype not in _DIRECT_DTYPES or o._dtype.np not in _DIRECT_DTYPES:
        return None
    if not any(type(x) is Tensor for x in ins):
        return None
    od = o._dtype.np
    if op in _BOOL_OPS:
        if od != np.bool_:
            return None
    elif op != "copy" and od != dtype:
        return None
    if op == "pow" and binary_plan(op, ins, outs) is None:
        return None  # (eager runs CuPy's power there, another expression)
    expr = _expression(op, dtype, operands)
    if expr is None:
        return None
    return expr, operands, n


#: element-wise kernels of real operands that a capture fuses: name -> the per-element C expression of the
#: operands a, b, c that its eager kernel on CUDA evaluates for operands of one dtype (CuPy's ufunc loop, or
#: numr's replacement in _cupy_module); the expressions that depend on the dtype are in _expression
_MATH1 = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
          "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
          "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
          "sqrt": "sqrt"}
_MATH2 = {"atan2": "atan2", "copysign": "copysign", "nextafter": "nextafter"}
_TESTS = {"isnan": "isnan(a)", "isinf": "isinf(a)", "isfinite": "isfinite(a)", "signbit": "signbit(a)"}
#: floor, ceil, trunc, round: CuPy's floor, ceil, trunc, rint on floats; numr copies integers and bools
_ROUNDING = {"floor": "floor(a)", "ceil": "ceil(a)", "trunc": "trunc(a)", "round": "rint(a)"}
FUSED = {
    **BINARY,
    **{op: f"{fn}(a)" for op, fn in _MATH1.items()},
    **{op: f"{fn}(a, b)" for op, fn in _MATH2.items()},
    **_TESTS, **_ROUNDING,
    "negative": "-a", "square": "a * a", "logical_not": "!a",
    "where": "a ? b : c",  # (condition, x1, x2)
    "copy": "a",  # astype: C++'s conversion, as CuPy's copy kernel stores its value into the result's type
}
_FLOAT_ONLY = frozenset([*_MATH1, *_MATH2, *_TESTS, "divide", "hypot", "pow"])
#: the most axes of a strided operand of a fused run (its offset is computed per element from the flat index)
_VIEW_AXES = 6
_BOOL_ONLY = frozenset(["logical_not"])
#: the ops whose result is bool whatever their operands
_BOOL_OPS = _BOOL_RESULT | frozenset([*_TESTS, "logical_not"])
_NO_BOOL = frozenset(["negative", "square", "maximum", "minimum", "clip", "subtract"])
#: statements setting q (numr's hypot on CuPy: _cupy_module._HYPOT, an ElementwiseKernel of T a, T b -> T q)
_STATEMENTS = {"hypot": _HYPOT}
_STATEMENT_BODIES = frozenset(_STATEMENTS.values())


def _max(x: str, y: str, T: str, floating: bool, cupy_nan: bool) -> str:
    """maximum as eager computes it: numr's for floats (NumPy's choice of equal operands and NaN), CuPy's where
    clip calls it with casting= (CuPy's canonical NaN) and for integers."""
    if not floating:
        return f"max({x}, {y})"
    if cupy_nan:
        return f"((isnan({x}) | isnan({y})) ? {T}(__int_as_float(0x7fffffff)) : {T}(max({x}, {y})))"
    return f"(({x} > {y} || isnan({x})) ? {x} : {y})"


def _min(x: str, y: str, T: str, floating: bool, cupy_nan: bool) -> str:
    if not floating:
        return f"min({x}, {y})"
    if cupy_nan:
        return f"((isnan({x}) | isnan({y})) ? {T}(__int_as_float(0x7fffffff)) : {T}(min({x}, {y})))"
    return f"(({x} < {y} || isnan({x})) ? {x} : {y})"


#: the kernel names a capture may fuse (_expression decides per dtype)
FUSABLE = frozenset([*FUSED, "abs", "maximum", "minimum", "clip", "hypot", "pow"])


def _expression(op: str, dtype: np.dtype, operands: list) -> str | None:
    """The C expression (or, for _STATEMENTS, statements setting q) of ``op`` over operand names a, b, c
    for operands of ``dtype``, or None when the op has no fused form for it."""
    floating = dtype.kind == "f"
    if op in _FLOAT_ONLY and not floating:
        return None
    if dtype.kind == "b" and op in _NO_BOOL or dtype.kind != "b" and op in _BOOL_ONLY:
        return None
    T = _CTYPE[dtype.name]
    if op in _ROUNDING and not floating:
        return "a"
    if op in _STATEMENTS:
        return _STATEMENTS[op]
    if op == "pow":  # the direct kernel's (eager takes pow of floats there: _plan checks it would)
        if operands[1][0] == "s" and operands[1][1] == 2:  # its branch for a scalar 2, without powf's code
            return "a * a"
        return _binary_expression(op, T)
    if op == "abs":  # CuPy's absolute
        if dtype.kind in "bu":
            return "a"
        return {"float32": "fabsf(a)", "float64": "fabs(a)"}.get(dtype.name, "(a > 0 ? a : -a)")
    if op == "maximum":
        return _max("a", "b", T, floating, False)
    if op == "minimum":
        return _min("a", "b", T, floating, False)
    if op == "clip":
        # numr's clip on CuPy (array_module_kernels/elementwise.py): maximum(x, lo) into a temporary (numr's),
        # then minimum(t, hi, casting=) (CuPy's); a single bound is CuPy's maximum or minimum with casting=
        lo, hi = operands[1] is not None, operands[2] is not None
        if lo and hi:
            return _min(f"(({T})({_max('a', 'b', T, floating, False)}))", "c", T, floating, True)
        if lo:
            return _max("a", "b", T, floating, True)
        if hi:
            return _min("a", "c", T, floating, True)
        return "a"
    return FUSED.get(op)


def _opaque(ctype: str, v: str) -> str:
    """``v`` ORed with the kernel parameter ``z`` (always 0): the same bits, but nothing the compiler can see
    through, so that no two ops are rewritten as one expression (an FMA of one op's product and the next
    op's sum, a float-to-int-to-float round trip folded into a truncation)."""
    if ctype == "float":
        return f"__int_as_float(__float_as_int({v}) | z)"
    if ctype == "double":
        return f"__longlong_as_double(__double_as_longlong({v}) | (long long)z)"
    if ctype == "bool":
        return f"((bool)((int){v} | z))"
    return f"(({ctype})({v} | ({ctype})z))"


#: the expression of a run's first step when the run starts with a thin matrix times a vector (``add_head``)
_HEAD = "numr_head"
#: the expression of the first step of a pass's last block, the column's sum (``add_tail``)
_TAIL = "numr_tail"
#: the compiler options of a fused run's kernel (and of the eager kernels whose code it repeats)
_FUSED_OPTIONS = ("--std=c++17",)
#: CuPy's kernel headers, so that a fused kernel is compiled in the environment of CuPy's ufunc kernels
_HEADERS = "".join(f"#include <{h}>\n" for h in ("cupy/complex.cuh", "cupy/carray.cuh", "cupy/math_constants.h"))
