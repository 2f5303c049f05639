"""Reductions over the leading axes of a C-contiguous array: ``sum(X, axis=0)`` of a tall X, and the same for
prod, max, min, mean, var, std, count_nonzero, argmax and argmin; and over the trailing axes (``k_rows``, the
end of this docstring).

CuPy's reduction took about 1 ms for ``sum(X, axis=0)`` of a 200k x 16 float32 X on an H200, where PyTorch takes
24 µs (and 9 ms against 46 µs for ``std`` of 1M x 8). Here the threads of a block lie across consecutive columns
(a warp reads whole rows: coalesced loads), and the blocks split the rows:

* block (bx, by) threads, bx the next power of two >= m (at most 32), by = 256 / bx; grid.x = ceil(m / bx)
  column groups, grid.y = G row chunks of ``rows`` rows each;
* thread (tx, ty) of block (i, j) folds column c = i * bx + tx over rows j * rows + ty, + by, ... of its chunk,
  in the accumulation type, then the by partial values of each column are folded in a fixed tree in shared memory;
* with G = 1 that value is finalised into the result (``k_whole``); otherwise each block writes it to a
  partials buffer [G, m] of accumulators (``k_part``), and a second launch of the same code reading
  accumulators, its G rows in one chunk, folds them and finalises (``k_combine``). The three kernels of an op
  and dtypes are one module, compiled once.

The launch shape depends only on (n, m), so a result's bits depend only on the data: eager and captured calls
run the same launches (no atomics). Accumulation follows the table's kernels: sum, mean and count_nonzero in the
result's dtype (mean then divides by the count), prod in ``p["acc"]`` (float64 for float32), max and min in the
input's dtype with NaN propagating, argmax and argmin as (value, row) pairs where the first NaN, then the first
of equal values, wins; var and std take two passes (the mean, then the sum of squared deviations divided by
n - correction, and its square root for std). Complex dtypes, other axes and other layouts stay with the table's
kernels.

Over the trailing axes (n rows of m consecutive elements; ``sum(D, axis=-1)`` of a 200k x 16 x 32 k-means
distance array took CuPy's reduction 700 µs on an H200, a fifth of the memory's rate), ``k_rows`` gives each row
bx lanes of a warp (a power of two, about m / 4, at most 32), which stride along it (the lanes read consecutive
memory) and then fold their values in a fixed xor tree of warp shuffles: one launch, whose blocks stride over
the rows. Where that would make few blocks of long rows, CuPy's reduction.
"""

from __future__ import annotations

import logging
import math
import threading

import cupy
import numpy as np
from cupy.cuda import driver

from ._direct_elementwise import _CTYPE

#: kernel compilation (DEBUG): one record per kernel compiled
log = logging.getLogger(__name__)

THREADS = 256
#: G is chosen so that about this many blocks run (several per SM of a large GPU: an H200 has 132)...
TARGET_BLOCKS = 1024
#: ... but each thread still folds at least this many rows of its chunk
MIN_ROWS_PER_THREAD = 16
_MAX_GRID_Y = 65535

#: the ops that pair values with their row -> whether the larger value wins
_ARG = {"argmax": True, "argmin": False}

_PRELUDE = r"""
typedef {T} T;
{adecl}
typedef {O} O;
__device__ __forceinline__ A numr_init() {{ {init} }}
__device__ __forceinline__ A numr_comb(const A& a, const A& b) {{ {comb} }}
__device__ __forceinline__ A numr_map(T v, long long r, long long c, const A* aux) {{ {map} }}
__device__ __forceinline__ O numr_fin(const A& a, double scale) {{ {fin} }}
"""

_KERNEL = r"""
extern "C" __global__ void {NAME}(const {IN}* x, {OUT}* out, const A* aux, long long n, long long m,
                                  long long rows, double scale) {{
  __shared__ A sh[{THREADS}];
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  const long long c = (long long)blockIdx.x * bx + tx;
  const long long r0 = (long long)blockIdx.y * rows;
  const long long r1 = r0 + rows < n ? r0 + rows : n;
  A acc = numr_init();
  if (c < m) {{
#pragma unroll 4
    for (long long r = r0 + ty; r < r1; r += by) acc = numr_comb(acc, {ELEMENT});  // (loads ahead of the adds)
  }}
  sh[ty * bx + tx] = acc;
  __syncthreads();
  for (int s = by >> 1; s > 0; s >>= 1) {{
    if (ty < s) sh[ty * bx + tx] = numr_comb(sh[ty * bx + tx], sh[(ty + s) * bx + tx]);
    __syncthreads();
  }}
  if (ty == 0 && c < m) out[(long long)blockIdx.y * m + c] = {RESULT};
}}
"""

#: the kernels of one module: name -> (reads the input, not accumulators; writes the result, not accumulators)
PASSES = {"k_whole": (True, True), "k_part": (True, False), "k_combine": (False, True)}

#: warp shuffles of an accumulator (a pick's two fields apart), for the trailing-axes kernels (format: shfl)
_ROWS_HELPERS = r"""
template <typename V> __device__ __forceinline__ V numr_shfl1(V v, int w) {{ return __shfl_xor_sync(0xffffffffu, v, w); }}
__device__ __forceinline__ bool numr_shfl1(bool v, int w) {{ return __shfl_xor_sync(0xffffffffu, (int)v, w); }}
__device__ __forceinline__ signed char numr_shfl1(signed char v, int w) {{ return __shfl_xor_sync(0xffffffffu, (int)v, w); }}
__device__ __forceinline__ unsigned char numr_shfl1(unsigned char v, int w) {{ return __shfl_xor_sync(0xffffffffu, (int)v, w); }}
__device__ __forceinline__ short numr_shfl1(short v, int w) {{ return __shfl_xor_sync(0xffffffffu, (int)v, w); }}
__device__ __forceinline__ unsigned short numr_shfl1(unsigned short v, int w) {{ return __shfl_xor_sync(0xffffffffu, (int)v, w); }}
__device__ __forceinline__ A numr_shfl(const A& a, int w) {{ {shfl} }}
"""
#: the trailing-axes kernel of a module: bx lanes of a warp fold a row (striding along it, then an xor tree of
#: shuffles), 32 / bx rows per warp, by rows per block; the blocks stride over the rows
_ROWS_KERNEL = r"""extern "C" __global__ void k_rows(const T* x, O* out, const A* aux, long long n, long long m, long long unused,
                                  double scale) {
  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;
  for (long long base = (long long)blockIdx.x * by; base < n; base += (long long)gridDim.x * by) {
    const long long r = base + ty;
    A acc = numr_init();
    if (r < n) {
      const T* p = x + r * m;
#pragma unroll 4
      for (long long c = tx; c < m; c += bx) acc = numr_comb(acc, numr_map(p[c], c, r, aux));
    }
    for (int w = bx >> 1; w > 0; w >>= 1) acc = numr_comb(acc, numr_shfl(acc, w));  // (every lane of the warp)
    if (tx == 0 && r < n) out[r] = numr_fin(acc, scale);
  }
}
"""
#: lanes per row: about this many elements each (up to a warp's 32 lanes per row)
_PER_LANE = 4
#: the trailing-axes kernel is used when its rows make at least this many blocks (an H200 has 132 SMs), or
#: when the rows are at most _SHORT_ROW long (CuPy's reduction gives short rows one thread each, its slowest case)
_MIN_ROW_BLOCKS = 128
_SHORT_ROW = 32
#: the most blocks a launch of it makes (they stride over the rows)
_MAX_ROW_BLOCKS = 4096


def _isnan(dtype: np.dtype, v: str) -> str:
    """A C test of ``v`` (of ``dtype``) for NaN from its bits (no math header needed, and no fast-math option
    can fold it away)."""
    if dtype == np.float32:
        return f"((__float_as_uint({v}) & 0x7fffffffu) > 0x7f800000u)"
    if dtype == np.float64:
        return f"((__double_as_longlong({v}) & 0x7fffffffffffffffLL) > 0x7ff0000000000000LL)"
    return "false"


def _extreme(dtype: np.dtype, largest: bool) -> str:
    """The C literal of the identity of max (``largest``: the lowest value) or min over ``dtype``."""
    if dtype == np.float32:
        return "__int_as_float((int)0xff800000u)" if largest else "__int_as_float(0x7f800000)"
    if dtype == np.float64:
        return ("__longlong_as_double((long long)0xfff0000000000000ULL)" if largest
                else "__longlong_as_double(0x7ff0000000000000LL)")
    info = np.iinfo(dtype)
    if largest:
        return f"({info.min + 1}LL - 1)" if info.min else "0"
    return f"{info.max}ULL" if dtype.kind == "u" else f"{info.max}LL"


def _parts(op: str, t: np.dtype, a: np.dtype | None) -> dict:
    """The accumulator's declaration and the init, combine, map and finalise bodies of ``op`` (C)."""
    if op in _ARG:
        nan_a, nan_b = _isnan(t, "a.v"), _isnan(t, "b.v")
        better = "a.v > b.v" if _ARG[op] else "a.v < b.v"
        return {
            "adecl": "struct numr_pick { T v; long long i; };\ntypedef numr_pick A;",
            "init": "A p; p.v = (T)0; p.i = -1; return p;",
            # the first NaN wins, then the larger (smaller) value, then of equal values the first row
            "comb": ("if (a.i == -1) return b; if (b.i == -1) return a; "
                     f"bool an = {nan_a}, bn = {nan_b}; "
                     "if (an || bn) { if (an && bn) return a.i < b.i ? a : b; return an ? a : b; } "
                     "if (a.v == b.v) return a.i < b.i ? a : b; "
                     f"return ({better}) ? a : b;"),
            "map": "A p; p.v = v; p.i = r; return p;",
            "fin": "return (O)a.i;",
        }
    parts = {"adecl": f"typedef {_CTYPE[a.name]} A;", "map": "return (A)v;", "fin": "return (O)a;"}
    if op in ("sum", "mean", "count_nonzero", "var", "std"):
        parts.update(init="return (A)0;", comb="return a + b;")
    elif op == "prod":
        parts.update(init="return (A)1;", comb="return a * b;")
    else:  # max, min: NaN propagates (the first one met); of equal values the earlier one
        largest = op == "max"
        cmp = "a >= b" if largest else "a <= b"
        parts.update(init=f"return {_extreme(a, largest)};", comb=f"return ({_isnan(a, 'a')} || {cmp}) ? a : b;")
    if op == "count_nonzero":
        parts["map"] = "return (A)(v != (T)0);"
    elif op in ("var", "std"):  # aux: the column means
        parts["map"] = "A d = (A)v - aux[c]; return d * d;"
    if op in ("mean", "var"):
        parts["fin"] = "return (O)(a / (A)scale);"
    elif op == "std":
        parts["fin"] = "return (O)sqrt(a / (A)scale);"
    return parts


def source(op: str, t: np.dtype, a: np.dtype | None, o: np.dtype) -> str:
    """The CUDA source of ``op``'s kernels (PASSES): ``k_whole`` reduces rows to results (G = 1), ``k_part`` row
    chunks to accumulators, ``k_combine`` accumulators to results."""
    kernels = [_KERNEL.format(NAME=name, THREADS=THREADS, IN="T" if first else "A", OUT="O" if final else "A",
                              ELEMENT="numr_map(x[r * m + c], r, c, aux)" if first else "x[r * m + c]",
                              RESULT="numr_fin(sh[tx], scale)" if final else "sh[tx]")
               for name, (first, final) in PASSES.items()]
    parts = _parts(op, t, a)
    shfl = ("A p; p.v = numr_shfl1(a.v, w); p.i = numr_shfl1(a.i, w); return p;" if op in _ARG
            else "return numr_shfl1(a, w);")
    return (_PRELUDE.format(T=_CTYPE[t.name], O=_CTYPE[o.name], **parts) + "".join(kernels)
            + _ROWS_HELPERS.format(shfl=shfl) + _ROWS_KERNEL)


def launch_shape(n: int, m: int) -> tuple[int, int, int, int, int]:
    """(bx, by, grid.x, G, rows) for n rows of m columns (n >= 1): a function of (n, m) alone."""
    bx = min(32, 1 << (m - 1).bit_length())
    by = THREADS // bx
    gx = -(-m // bx)
    g = max(1, min(-(-n // (by * MIN_ROWS_PER_THREAD)), TARGET_BLOCKS // gx, _MAX_GRID_Y))
    rows = -(-n // g)
    return bx, by, gx, -(-n // rows), rows


def columns(x, o, axes) -> tuple[int, int] | None:
    """(n, m) when reducing the CuPy array ``x`` over ``axes`` into ``o`` is a column reduction: the axes are
    the leading ones (not all of them), x and o are C-contiguous and not empty; else None."""
    k = len(axes)
    if not 0 < k < x.ndim or set(axes) != set(range(k)) or not x.flags.c_contiguous or not o.flags.c_contiguous:
        return None
    n = 1
    for d in x.shape[:k]:
        n *= d
    m = x.size // n if n else 0
    if n == 0 or m == 0 or o.size != m:
        return None
    return n, m


def trailing_rows(shape: tuple, axes, size: int) -> tuple[int, int] | None:
    """(n, m) when reducing an array of ``shape`` over ``axes`` into ``size`` results folds n rows of m
    consecutive elements of a C-contiguous layout: the axes are the trailing ones (not all of them), and
    nothing is empty; else None."""
    ndim, k = len(shape), len(axes)
    if not 0 < k < ndim or set(axes) != set(range(ndim - k, ndim)):
        return None
    m = math.prod(shape[ndim - k:])
    n = math.prod(shape) // m if m else 0
    if n == 0 or m == 0 or size != n:
        return None
    return n, m


def rows(x, o, axes) -> tuple[int, int] | None:
    """``trailing_rows`` of the CuPy arrays ``x`` and ``o``, where both are C-contiguous; else None."""
    if not x.flags.c_contiguous or not o.flags.c_contiguous:
        return None
    return trailing_rows(x.shape, axes, o.size)


def rows_shape(n: int, m: int) -> tuple[int, int, int] | None:
    """(bx, by, blocks) of the trailing-axes kernel for n rows of m elements, or None where it would not fill
    the GPU (few long rows: CuPy's reduction splits them across blocks). A function of (n, m) alone; a row's
    bits depend on m alone (bx lanes per row, whatever the grid)."""
    bx = min(32, 1 << (-(-m // _PER_LANE) - 1).bit_length())
    by = THREADS // bx
    blocks = -(-n // by)
    if blocks < _MIN_ROW_BLOCKS and m > _SHORT_ROW:
        return None
    return bx, by, min(blocks, _MAX_ROW_BLOCKS)


#: the trailing-axes reductions a capture may fuse with the element-wise run that makes their operand
FUSED_ROW_OPS = frozenset(["sum", "mean", "max", "min"])


def rows_plan(op: str, t: np.dtype, od: np.dtype, n: int, m: int) -> tuple | None:
    """(accumulator dtype, (bx, by, blocks)) of ``op`` folding n rows of m elements of dtype ``t`` into ``od``
    with ``k_rows``, exactly where ``ColumnReductions.reduce`` runs it for such rows (no var or std); else None."""
    shape = rows_shape(n, m)
    if shape is None or op not in FUSED_ROW_OPS or t.name not in _CTYPE or od.name not in _CTYPE or t.kind == "b":
        return None
    if op in ("max", "min"):
        return (t, shape) if od == t else None
    return od, shape


def fused_rows_source(op: str, t: np.dtype, a: np.dtype, od: np.dtype, headers: str, params: str, row: str,
                      element: str, value: str, m: int, bx: int) -> str:
    """A ``k_rows`` kernel (named k) for rows of ``m`` elements folded by ``bx`` lanes, whose elements are
    computed, not loaded: ``element`` is code that, for the flat index ``i`` of the operand (row r_ * m_ + c_),
    sets ``value`` (of dtype ``t``), after ``row``, code run once per row r_; ``params`` are its kernel
    parameters, before (out_, rows_, m_, scale_). The fold is k_rows' own (each lane its columns in increasing
    order, then the tree), so a row's bits are eager's; m and bx are constants here, so that a lane's loads of
    a row are issued together."""
    fold = ("        const long long i = r_ * m_ + c_;\n" + element
            + f"        acc = numr_comb(acc, numr_map({value}, c_, r_, (const A*)0));\n")
    whole, rest = divmod(m, bx)
    tail = (f"      if (tx < {rest}) {{\n        const long long c_ = tx + {whole * bx}LL;\n{fold}      }}\n"
            if rest else "")
    parts = _parts(op, t, a)
    return (headers + _PRELUDE.format(T=_CTYPE[t.name], O=_CTYPE[od.name], **parts)
            + _ROWS_HELPERS.format(shfl="return numr_shfl1(a, w);")
            + f"extern \"C\" __global__ void k({params}, O* out_, long long rows_, long long m_, double scale_) {{\n"
            "  const int tx = threadIdx.x, ty = threadIdx.y, bx = blockDim.x, by = blockDim.y;\n"
            "  for (long long base = (long long)blockIdx.x * by; base < rows_; base += (long long)gridDim.x * by) {\n"
            "    const long long r_ = base + ty;\n"
            "    A acc = numr_init();\n"
            "    if (r_ < rows_) {\n"
            f"{row}"
            "#pragma unroll 4\n"
            f"      for (int k_ = 0; k_ < {whole}; ++k_) {{\n"
            f"        const long long c_ = tx + k_ * {bx}LL;\n"
            f"{fold}"
            "      }\n"
            f"{tail}"
            "    }\n"
            "    for (int w = bx >> 1; w > 0; w >>= 1) acc = numr_comb(acc, numr_shfl(acc, w));\n"
            "    if (tx == 0 && r_ < rows_) out_[r_] = numr_fin(acc, scale_);\n"
            "  }\n"
            "}\n")


class ColumnReductions:
    """The column-reduction kernels of one GPU, compiled on first use per op and dtypes (one module each), and
    their trailing-axes counterpart (``k_rows``: ``sum(D, axis=-1)`` of a k-means distance array, the softmax's
    ``max`` along the last axis), which CuPy's reduction runs at a fraction of the memory's rate."""

    def __init__(self):
        self._functions: dict = {}  # (op, input, accumulator, result dtypes) -> {kernel name: CUfunction}
        self._kernels: list = []  # the RawModules and RawKernels whose functions are in use (kept loaded)
        self._args = _Args()

    def reduce(self, op: str, x, o, axes, acc: np.dtype | None = None, correction: float = 0.0) -> bool:
        """``op`` of the CuPy array ``x`` over ``axes`` into ``o`` (on the current stream) if it is a column
        reduction of real dtypes; False (nothing done) otherwise. ``acc``: prod's accumulation dtype."""
        shape = columns(x, o, axes)
        along = None
        if shape is None:
            shape = rows(x, o, axes)
            along = shape and rows_shape(*shape)
            if along is None:
                return False
        t, od = x.dtype, o.dtype
        if t.name not in _CTYPE or od.name not in _CTYPE or (t.kind == "b" and op != "count_nonzero"):
            return False  # (the namespace takes bool arrays to count_nonzero, and to sum and prod as integers)
        if op in _ARG:
            a = None
        elif op in ("max", "min"):
            if od != t:
                return False
            a = t
        elif op == "prod":
            a = np.dtype(acc) if acc is not None else od
            if a.name not in _CTYPE:
                return False
        else:
            a = od
        n, m = shape
        run = self._run if along is None else lambda *args: self._run_rows(along, *args)
        count = float(n if along is None else m)  # the elements folded into each result
        if op in ("var", "std"):
            if not (t == od and t.kind == "f"):
                return False
            means = cupy.empty(m if along is None else n, t)
            run("mean", x, means, n, m, t, t, t, None, count)
            run(op, x, o, n, m, t, t, t, means, count - correction)
        else:
            run(op, x, o, n, m, t, a, od, None, count)
        return True

    def _run_rows(self, shape, op, x, o, n, m, t, a, od, aux, scale) -> None:
        bx, by, blocks = shape
        f = self._functions.get((op, t, a, od))
        if f is None:
            f = self._compile(op, t, a, od)
        aux_ptr = aux.data.ptr if aux is not None else 0
        self._launch(f["k_rows"], x.data.ptr, o.data.ptr, aux_ptr, n, m, 0, scale, (blocks, 1, bx, by))

    def _run(self, op, x, o, n, m, t, a, od, aux, scale) -> None:
        bx, by, gx, g, rows = launch_shape(n, m)
        f = self._functions.get((op, t, a, od))
        if f is None:
            f = self._compile(op, t, a, od)
        aux_ptr = aux.data.ptr if aux is not None else 0
        if g == 1:
            self._launch(f["k_whole"], x.data.ptr, o.data.ptr, aux_ptr, n, m, rows, scale, (gx, 1, bx, by))
            return
        size = 16 if a is None else a.itemsize  # (numr_pick: a value of at most 8 bytes and a long long)
        partials = cupy.empty(g * m * size, np.uint8)  # (freed when this returns: the stream orders its reuse)
        self._launch(f["k_part"], x.data.ptr, partials.data.ptr, aux_ptr, n, m, rows, scale, (gx, g, bx, by))
        self._launch(f["k_combine"], partials.data.ptr, o.data.ptr, aux_ptr, g, m, g, scale, (gx, 1, bx, by))

    def _compile(self, op, t, a, od) -> dict[str, int]:
        log.debug("cuda: compiling the column reduction %s of %s", op, t.name)
        module = cupy.RawModule(code=source(op, t, a, od))
        kernels = {name: module.get_function(name) for name in (*PASSES, "k_rows")}  # (RawKernels: compiled once)
        self._kernels.append((module, kernels))
        f = self._functions[(op, t, a, od)] = {name: k.kernel.ptr for name, k in kernels.items()}
        return f

    def _launch(self, f: int, x: int, out: int, aux: int, n: int, m: int, rows: int, scale: float, shape) -> None:
        gx, gy, bx, by = shape
        args = self._args
        words = args.words
        words[:6] = (x, out, aux, n, m, rows)
        args.scale[6] = scale
        driver.launchKernel(f, gx, gy, 1, bx, by, 1, 0, cupy.cuda.get_current_stream().ptr, args.params, 0)


class _Args(threading.local):
    """Per-thread argument slots for cuLaunchKernel (read at the launch): the kernel's seven 8-byte arguments
    and the array of their addresses."""

    def __init__(self):
        self.words = np.zeros(7, np.uint64)
        self.scale = self.words.view(np.float64)
        self.addresses = np.array([self.words.ctypes.data + 8 * k for k in range(7)], np.uint64)
        self.params = self.addresses.ctypes.data
