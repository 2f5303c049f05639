"""CUDA's own kernels for a few declared names, in place of the shared NumPy-API ones (array_module_kernels).

Bound to CuPy, the shared kernels of these names cost several kernels and a temporary each: CuPy's sum, max and
min go through CUB's device-wide reduction, which reduces into a scratch array and then copies it into ``out``;
argmin and argmax needed three more reductions and a ``where`` to find the first NaN; ``where`` was two
copies; ``count_nonzero`` summed a temporary boolean array. Here each is one kernel of CuPy's reduction (or
element-wise) machinery writing straight into ``out``, along any axes and for any layout (and ``vecdot`` of two
vectors one gemv into the 0-D result, where the shared kernel made a 1 x 1 product and copied it; fft, ifft,
rfft and irfft along the last axis written by cuFFT into ``out``, where the shared kernels copied a result;
``sort`` of a few long rows as one 1-D sort each; complex ``prod`` and ``cumulative_prod`` CuPy's, then each
result its tree made infinite or NaN folded again in NumPy's order, ``_FOLDS``), with the kernel
arguments deciding the types: a reduction accumulates in the output's dtype (what the namespace chose: the
standard's accumulation rules), and Python-scalar operands of ``where`` are kernel arguments, not arrays.

The reductions are made with ``cupy._core.create_reduction_func``, the constructor of CuPy's own reductions
(sum, argmin, ...; public in ``cupy._core`` since CuPy 9), so they take CuPy's block sizes and its CUB
block-reduction path where that applies; they differ from CuPy's only in their reduce expressions. A reduction
over the leading axes of a C-contiguous array (``sum(X, axis=0)`` of a tall X, and prod, max, min, mean, var,
std, count_nonzero, argmax, argmin) is numr's column kernel instead (``_columns``): CuPy's reads such an array
with strided loads from a few blocks, 45-200x slower than PyTorch.
"""

from __future__ import annotations

import math

import numpy as np
from cupy._core._scalar import get_typename
from cupy.cuda import cufft
from cupy.fft import _fft as cupy_fft

from ..array_module_kernels import fft as shared_fft, linalg as shared_linalg, reductions as shared_reductions, \
    searching as shared_searching
from ._columns import ColumnReductions
from ._direct_elementwise import _CTYPE
from ._fft import CufftLauncher

#: every dtype numr has, as NumPy type characters: one op per input dtype, so no operand is ever cast
_CHARS = "?bBhHiIlLqQfdFD"

#: complex products: each result (each line of running products, by its last) that CuPy's tree (scan) made
#: infinite or NaN is folded again in NumPy's order, with the multiplication unfused (WebGPU's cmul): a complex
#: product with an infinity or a NaN depends on the order (NumPy: prod([1, inf]) is inf + nan j, prod([inf, 1])
#: nan + nan j). prod folds x's n rows of r from 1; cumprod each of them from its first element, storing each
#: running product. (An infinite or NaN part stays so through later products, so the last tells.)
_FOLDS = r"""
#include <cupy/complex.cuh>
typedef {T} T;
typedef {A} A;
typedef {O} O;
__device__ A numr_cmul(const A& a, const A& b) {{
    return A({S}sub_rn({S}mul_rn(a.real(), b.real()), {S}mul_rn(a.imag(), b.imag())),
             {S}add_rn({S}mul_rn(a.real(), b.imag()), {S}mul_rn(a.imag(), b.real())));
}}
__device__ bool numr_finite(const O& z) {{ return isfinite(z.real()) && isfinite(z.imag()); }}
extern "C" __global__ void numr_prod_fold(const T* x, O* o, long long n, long long r) {{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || numr_finite(o[i])) return;
    A a = A(1, 0);
    for (long long j = 0; j < r; j++) a = numr_cmul(a, A(x[i * r + j]));
    o[i] = O(a);
}}
extern "C" __global__ void numr_cumprod_fold(const T* x, O* o, long long n, long long r) {{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || numr_finite(o[i * r + r - 1])) return;
    A a = A(x[i * r]);
    o[i * r] = O(a);
    for (long long j = 1; j < r; j++) {{
        a = numr_cmul(a, A(x[i * r + j]));
        o[i * r + j] = O(a);
    }}
}}
"""

#: sort: at most this many rows of at least this length are sorted one by one (1-D sorts)
SORT_ROWS_MAX, SORT_ROW_MIN = 64, 1 << 15

_PREAMBLE = r"""
template <typename T>
struct numr_pick {  // a value and its index along the reduced axes; index -1: nothing yet (the identity)
    T value;
    IndexT index;
    __device__ numr_pick() : index(-1) { }
    __device__ numr_pick(T v, IndexT i) : value(v), index(i) { }
};

// (not v != v: that is no test under fast-math options); the reductions using it take real types only
template <typename T> __device__ bool numr_isnan(const T& v) { return false; }
__device__ bool numr_isnan(const float& v) { return isnan(v); }
__device__ bool numr_isnan(const double& v) { return isnan(v); }

// NaN wins (the first NaN: NumPy's answer); of equal values, the first index
template <typename T, bool LARGEST>
__device__ numr_pick<T> numr_arg(const numr_pick<T>& a, const numr_pick<T>& b) {
    if (a.index == -1) return b;
    if (b.index == -1) return a;
    bool an = numr_isnan(a.value), bn = numr_isnan(b.value);
    if (an || bn) {
        if (an && bn) return a.index < b.index ? a : b;
        return an ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    return (LARGEST ? a.value > b.value : a.value < b.value) ? a : b;
}

// max/min: NaN propagates (of equal values either: as in CuPy's max, only a zero's sign could tell)
template <typename T, bool LARGEST>
__device__ numr_pick<T> numr_extreme(const numr_pick<T>& a, const numr_pick<T>& b) {
    if (a.index == -1) return b;
    if (b.index == -1) return a;
    if (numr_isnan(a.value)) return a;
    if (numr_isnan(b.value)) return b;
    return (LARGEST ? b.value > a.value : b.value < a.value) ? b : a;
}
"""


def kernels(m, direct, pool) -> dict:
    """The CUDA kernels replacing the shared ones of the same names, over ``m`` (CuPy as _cupy_module gives it:
    capturable matrix products); ``direct``: the client's DirectLauncher, whose one-block sum of a small array
    the sum kernel uses as the client's eager path does (so that a captured sum gives the eager bits), and whose
    divide normalises transforms; ``pool``: the memory pool cuFFT plans' work areas come from."""
    reduction = m._core.create_reduction_func
    shared_vecdot = shared_linalg.kernels(m)["vecdot"]
    shared_transforms = shared_fft.kernels(m)
    shared_sort = shared_searching.kernels(m)["sort"]
    shared_reduce = shared_reductions.kernels(m)
    columns = ColumnReductions()
    ffts = CufftLauncher(direct, pool)

    def make(name: str, routine: tuple, identity=None, sort_axes: bool = True):
        return reduction(name, tuple(f"{c}->{c}" for c in _CHARS), routine, identity, _PREAMBLE, sort_axes)

    # accumulated in the output's dtype (type_out0_raw is out's when out is given, as it always is here)
    k_sum = make("numr_sum", ("in0", "a + b", "out0 = a", "type_out0_raw"), "0")
    # "mean" in the name: CuPy's CUB path then rewrites the count for its segments, as for its own mean
    k_mean = make("numr_mean", ("in0", "a + b", "out0 = a / _type_reduce(_in_ind.size() / _out_ind.size())",
                                "type_out0_raw"), "0")
    k_count = make("numr_count_nonzero", ("in0 != type_in0_raw(0)", "a + b", "out0 = a", "type_out0_raw"), "0")
    pick = "numr_pick<type_in0_raw>"
    k_max = make("numr_max", (f"{pick}(in0, 0)", "numr_extreme<type_in0_raw, true>(a, b)", "out0 = a.value", pick))
    k_min = make("numr_min", (f"{pick}(in0, 0)", "numr_extreme<type_in0_raw, false>(a, b)", "out0 = a.value", pick))
    # _J is the index in the C-order flattening of the reduced axes, which must therefore keep their order
    k_argmax = make("numr_argmax", (f"{pick}(in0, _J)", "numr_arg<type_in0_raw, true>(a, b)", "out0 = a.index",
                                    pick), sort_axes=False)
    k_argmin = make("numr_argmin", (f"{pick}(in0, _J)", "numr_arg<type_in0_raw, false>(a, b)", "out0 = a.index",
                                    pick), sort_axes=False)
    # where's kernel per dtype signature, with concrete types: CuPy takes Python and NumPy scalars as weak,
    # so a scalar operand would bind no type placeholder; it is passed in the result's dtype
    where_kernels: dict[tuple[str, str, str, str], object] = {}

    def k_where(c, a, b, o):
        key = (c.dtype.name, *(v.dtype.name if isinstance(v, m.ndarray) else o.dtype.name for v in (a, b)),
               o.dtype.name)
        k = where_kernels.get(key)
        if k is None:
            ct = get_typename(o.dtype)
            k = where_kernels[key] = m.ElementwiseKernel(f"{key[0]} c, {key[1]} a, {key[2]} b", f"{key[3]} o",
                                                         f"o = c ? ({ct})a : ({ct})b", "numr_where")
        k(c, a, b, o)

    # each tries the column kernel first (leading axes of a C-contiguous array), then CuPy's reduction
    def reduce(f, name: str):
        def kernel(ins, outs, p):
            if not columns.reduce(name, ins[0], outs[0], p["axis"]):
                f(ins[0], axis=p["axis"], out=outs[0], keepdims=p["keepdims"])
        return kernel

    def arg(f, name: str):
        def kernel(ins, outs, p):
            # one axis, or all of them (the flattened array); the output's shape already has keepdims
            axes = p["axis"]
            if not columns.reduce(name, ins[0], outs[0], axes):
                f(ins[0], axis=axes[0] if len(axes) == 1 else None, out=outs[0], keepdims=p["keepdims"])
        return kernel

    def sum_(ins, outs, p):
        x, o = ins[0], outs[0]
        axes = p["axis"]
        if not (len(axes) == x.ndim and direct.small_sum(x, o)) and not columns.reduce("sum", x, o, axes):
            k_sum(x, axis=axes, out=o, keepdims=p["keepdims"])

    folds: dict = {}  # (kernel, input, accumulator, output dtypes) -> _FOLDS' RawKernel

    def apart(x, o):
        """x, or where o's memory overlaps it a copy: the folds read x after o is written."""
        return x.copy() if m.may_share_memory(x, o) else x

    def fold(name: str, x, axes: tuple, acc: np.dtype, o) -> None:
        """_FOLDS' ``name`` over x's rows along ``axes`` (moved last, in order) into o's (C order; through a
        C-contiguous copy of o where o is not one)."""
        key = (name, x.dtype, acc, o.dtype)
        k = folds.get(key)
        if k is None:
            ctype = lambda d: get_typename(d) if d.kind == "c" else _CTYPE[d.name]  # noqa: E731
            source = _FOLDS.format(T=ctype(x.dtype), A=ctype(acc), O=ctype(o.dtype),
                                   S="__d" if acc == np.complex128 else "__f")
            k = folds[key] = m.RawKernel(source, name)
        rows = m.ascontiguousarray(m.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim))))
        dest = o if o.flags.c_contiguous else m.ascontiguousarray(o)
        r = math.prod(x.shape[a] for a in axes)
        n = x.size // r
        k((-(-n // 128),), (128,), (rows, dest, np.int64(n), np.int64(r)))
        if dest is not o:
            m.copyto(o, dest)

    def prod(ins, outs, p):
        x, o = ins[0], outs[0]
        acc = p["acc"].np
        again = o.dtype.kind == "c" and o.size and x.size
        if again:
            x = apart(x, o)
        if not columns.reduce("prod", x, o, p["axis"], acc=acc):
            shared_reduce["prod"]((x,), outs, p)
        if again:  # (the results that are not finite, in NumPy's order)
            fold("numr_prod_fold", x, tuple(p["axis"]), acc, o)

    def cumulative_prod(ins, outs, p):
        x, o = ins[0], outs[0]
        again = o.dtype.kind == "c" and o.size
        if again:
            x = apart(x, o)
        shared_reduce["cumulative_prod"]((x,), outs, p)
        if again:  # (the lines whose last running product is not finite, in NumPy's order)
            axis = p["axis"]
            fold("numr_cumprod_fold", x, (axis,), o.dtype, m.moveaxis(o, axis, -1))

    def moment(name: str):
        shared = shared_reduce[name]

        def kernel(ins, outs, p):
            if not columns.reduce(name, ins[0], outs[0], p["axis"], correction=p["correction"]):
                shared(ins, outs, p)
        return kernel

    def vecdot(ins, outs, p):
        # two vectors of the result's dtype: one product (gemv) straight into the 0-D result
        a, b = ins
        o = outs[0]
        if a.ndim == 1 and b.ndim == 1 and a.dtype == b.dtype == o.dtype and o.dtype.kind in "fc":
            m.matmul(m.conj(a) if a.dtype.kind == "c" else a, b, out=o)
        else:
            shared_vecdot(ins, outs, p)

    def transform(name: str, direction: int, value_type: str):
        """A 1-D transform along the last axis written by cuFFT straight into a C-contiguous ``out``: by
        ``CufftLauncher`` for C-contiguous input of the transform's own dtype, else by cupy.fft's own steps (whose
        last takes an ``out``; the shared kernel copied cupy.fft's result into it)."""
        shared = shared_transforms[name]

        def kernel(ins, outs, p):
            x, o = ins[0], outs[0]
            if p["axis"] != x.ndim - 1 or not o.flags.c_contiguous:
                return shared(ins, outs, p)
            if ffts.try_transform(x, o, p["n"], direction, value_type, p["norm"]):
                return
            a = cupy_fft._convert_dtype(x, value_type)
            # the dtype cuFFT makes: a's real counterpart (C2R), a's own (C2C) or its complex one (R2C)
            made = np.dtype(a.dtype.char.lower()) if value_type == "C2R" else a.dtype if value_type == "C2C" \
                else np.result_type(a.dtype, np.complex64)
            if made != o.dtype:
                return shared(ins, outs, p)
            n = p["n"]
            a = cupy_fft._cook_shape(a, (n,), (x.ndim - 1,), value_type)
            cupy_fft._exec_fft(a, direction, value_type, p["norm"], x.ndim - 1, False,
                               out_size=n if value_type == "C2R" else None, out=o)
        return kernel

    def sort(ins, outs, p):
        # CuPy's sorts are all stable (equal values keep their order, as NumPy's stable sort); ndarray.sort takes
        # no kind before CuPy 14. Its radix sort orders floats by their bits (-NaN before -inf): floats are taken
        # in the order of a key whose NaNs are the one positive NaN (shared_sort's nan_last), so NaNs go last.
        x, o = ins[0], outs[0]
        axis = p["axis"]
        if p["descending"] or x.ndim == 0 or not o.flags.c_contiguous:
            return shared_sort(ins, outs, p)
        n = x.shape[axis]
        rows = x.size // n if n else 0
        if x.ndim < 2 or x.dtype.kind not in "iuf" or not 0 < rows <= SORT_ROWS_MAX or n < SORT_ROW_MIN:
            if x.dtype.kind == "f":
                return shared_sort(ins, outs, p)
            m.copyto(o, x)  # sorted in place in the output: no temporary of x's size
            o.sort(axis=axis)
            return
        # a few long rows (sort(X, axis=0) of a tall X): one 1-D sort of each, in a contiguous copy; CuPy sorts
        # a stack of rows as one keyed sort, several passes with an int64 key per element
        last = axis == x.ndim - 1
        if last and x.dtype.kind != "f":
            m.copyto(o, x)
            work = o
        else:
            work = m.ascontiguousarray(m.moveaxis(x, axis, -1))
        flat = work.reshape(rows, n)
        if x.dtype.kind == "f":
            done = o if last else m.empty_like(work)
            sorted_rows = done.reshape(rows, n)
            for r in range(rows):
                row = flat[r]
                m.take(row, m.argsort(m.where(m.isnan(row), row.dtype.type("nan"), row)), out=sorted_rows[r])
            work = done
        else:
            for r in range(rows):
                flat[r].sort()
        if not last:
            m.copyto(o, m.moveaxis(work, -1, axis))

    def where(ins, outs, p):
        k_where(*ins, outs[0])

    return {"sum": sum_, "prod": prod, "cumulative_prod": cumulative_prod, "mean": reduce(k_mean, "mean"),
            "count_nonzero": reduce(k_count, "count_nonzero"), "max": reduce(k_max, "max"),
            "min": reduce(k_min, "min"), "var": moment("var"), "std": moment("std"),
            "argmax": arg(k_argmax, "argmax"), "argmin": arg(k_argmin, "argmin"),
            "where": where, "vecdot": vecdot, "sort": sort,
            "fft": transform("fft", cufft.CUFFT_FORWARD, "C2C"), "ifft": transform("ifft", cufft.CUFFT_INVERSE, "C2C"),
            "rfft": transform("rfft", cufft.CUFFT_FORWARD, "R2C"),
            "irfft": transform("irfft", cufft.CUFFT_INVERSE, "C2R")}
