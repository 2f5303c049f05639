"""Reduction kernels: sum, prod, max, min, mean, var, std, all, any, the cumulative sums and products,
and diff.

``params["axis"]`` is the tuple of normalised axes to reduce and ``params["keepdims"]`` whether the
output keeps them as length-1 axes; the output is already shaped accordingly. Reductions that have no
value over zero elements (max, min) or whose value there is NaN (mean, var, std) never reach a kernel
with an empty reduction: the namespace raises or fills NaN instead.
"""

from __future__ import annotations

import math

import numpy as np


def _as_ufunc(kernel, ufunc):
    """Mark ``kernel`` as the array module's ``ufunc.reduce`` (sum, prod, max, min; mean as a sum divided
    by the count, numpy.mean's own steps): where the client runs it so, numr_array._speedups repeats a
    cached call of it in C (CpuClient.reduce_launch says how)."""
    kernel.reduce_ufunc = ufunc
    return kernel


def kernels(m) -> dict:
    def reduction(f, accumulate: bool = False):
        def kernel(ins, outs, p):
            o = outs[0]
            if accumulate:  # the output dtype is the accumulator's (the standard's dtype= rules)
                f(ins[0], axis=p["axis"], keepdims=p["keepdims"], dtype=o.dtype, out=o)
            else:
                f(ins[0], axis=p["axis"], keepdims=p["keepdims"], out=o)
        return kernel

    def prod(ins, outs, p):
        o = outs[0]
        if p["acc"] == o.dtype:
            m.prod(ins[0], axis=p["axis"], keepdims=p["keepdims"], dtype=o.dtype, out=o)
        else:  # accumulated wider (the namespace's choice), then rounded once to o's dtype
            m.copyto(o, m.prod(ins[0], axis=p["axis"], keepdims=p["keepdims"], dtype=p["acc"].np))

    def extremum(f):
        def kernel(ins, outs, p):
            # through a temporary, not out=: CuPy 14's min with out= (cub-accelerated) fails on dtype checks
            m.copyto(outs[0], f(ins[0], axis=p["axis"], keepdims=p["keepdims"]))
        return kernel

    numpy = m.__name__ == "numpy"

    def moment(f, root: bool):
        def kernel(ins, outs, p):
            x, o = ins[0], outs[0]
            rows = _outer_rows(x, p["axis"]) if numpy else None
            if rows is None:
                f(x, axis=p["axis"], keepdims=p["keepdims"], ddof=p["correction"], out=o)
                return
            v = _row_variance(rows, p["correction"])
            m.copyto(o, m.reshape(m.sqrt(v) if root else v, o.shape), casting="same_kind")
        return kernel

    def cumulative(f, ufunc):
        def kernel(ins, outs, p):
            x, o = ins[0], outs[0]
            if numpy and _few_steps(x, o, p["axis"]):
                _accumulate_by_steps(ufunc, x, o, p["axis"])
            else:
                f(x, axis=p["axis"], dtype=o.dtype, out=o)
        return kernel

    def diff(ins, outs, p):
        x, before, after = ins
        o = outs[0]
        axis = p["axis"]
        parts = [a for a in (before, x, after) if a is not None]
        if len(parts) > 1:
            x = m.concatenate(parts, axis=axis, dtype=o.dtype)
        m.copyto(o, m.diff(x, n=p["n"], axis=axis))

    return {
        "sum": _as_ufunc(reduction(m.sum, True), m.add), "prod": _as_ufunc(prod, m.multiply),
        "max": _as_ufunc(extremum(m.max), m.maximum), "min": _as_ufunc(extremum(m.min), m.minimum),
        "mean": _as_ufunc(reduction(m.mean), m.add),
        "all": reduction(m.all), "any": reduction(m.any),
        "var": moment(m.var, False), "std": moment(m.std, True),
        "cumulative_sum": cumulative(m.cumsum, m.add), "cumulative_prod": cumulative(m.cumprod, m.multiply),
        "diff": diff,
    }


# NumPy reduces over the outer axes of a C-contiguous array a row at a time: one inner-loop call per row of
# the kept elements, each added to a running sum in order (float32 std over 1M rows of 8 is off by 2.4e-4).
# Over blocks of rows instead, the inner loop runs over a whole block and each partial sum adds R / b terms.
_BLOCK = 4096  # elements per block: the partial sums stay in L1
_CHUNK = 1 << 16  # elements of deviations squared at a time: in L2, and no temporary of x's size
_FEW_KEPT = 64  # up to this many kept elements, NumPy's row-at-a-time reduction is the slower (measured)
_MIN_SIZE = 1 << 15  # below this many elements, the extra Python steps cost more than they save


def _outer_rows(x, axes: tuple):
    """``x`` (a NumPy array) as a C-contiguous (R, M) view whose rows are the reduced elements, where the
    blocked variance is faster than NumPy's: float32/float64, reduced axes outermost in memory, 2 <= M <=
    _FEW_KEPT kept elements, at least _MIN_SIZE elements. None otherwise."""
    if x.dtype.char not in "fd" or x.size < _MIN_SIZE or len(axes) == x.ndim:
        return None
    kept = [i for i in range(x.ndim) if i not in axes]
    xt = x.transpose(sorted(axes) + kept)
    cols = math.prod(x.shape[i] for i in kept)
    if not xt.flags.c_contiguous or not 2 <= cols <= _FEW_KEPT:
        return None
    return xt.reshape(-1, cols)


def _row_variance(x, correction):
    """The variance over the rows of the C-contiguous NumPy array ``x`` (R, M), as float64 (M,): two passes
    (the mean, then the squared deviations from it, a chunk of rows at a time), each summed in blocks of b
    rows; the b partial sums and the mean in float64."""
    rows, cols = x.shape
    b = _BLOCK // cols
    acc = np.zeros((b, cols), x.dtype)  # partial sums of row i of every block in acc[i]
    tail = np.zeros(cols)  # the rows after the last whole block

    def add_rows(a):
        whole = a.shape[0] // b * b
        if whole:
            acc[...] += np.add.reduce(a[:whole].reshape(-1, b, cols), axis=0)
        if whole < a.shape[0]:
            tail[...] += np.add.reduce(a[whole:], axis=0, dtype=np.float64)

    def total():
        s = np.add.reduce(acc, axis=0, dtype=np.float64) + tail
        acc[...] = 0
        tail[...] = 0
        return s

    add_rows(x)
    mean = (total() / rows).astype(x.dtype)
    step = max(1, _CHUNK // (b * cols)) * b  # whole blocks per chunk: only the last chunk has a tail
    buf = np.empty((min(step, rows), cols), x.dtype)
    for start in range(0, rows, step):
        part = x[start:start + step]
        d = np.subtract(part, mean, out=buf[:part.shape[0]])
        add_rows(np.multiply(d, d, out=d))
    return total() / (rows - correction)


# NumPy accumulates one lane at a time: along a short axis of many lanes, one inner-loop call per lane of a
# few steps. The same sums in the same order, one step of every lane per call, are 2-30x faster there
# (float32 cumulative_sum along the 8 of 100000 x 8: 3.4 against 0.55 ms) and give NumPy's bits.
_FEW_STEPS = 16  # up to this axis length the steps are faster for every layout measured
_MANY_LANES = 1024  # from this many lanes on, their Python calls cost less than NumPy's per-lane calls


def _few_steps(x, o, axis: int) -> bool:
    """Whether ``_accumulate_by_steps`` is the faster way to accumulate ``x`` into ``o`` along ``axis``:
    a short axis of many lanes, ``o`` of x's dtype and sharing no memory with it (NumPy's own
    accumulation handles overlaps)."""
    steps = x.shape[axis]
    return (2 <= steps <= _FEW_STEPS and x.size // steps >= _MANY_LANES and o.dtype == x.dtype
            and not np.may_share_memory(x, o))


def _accumulate_by_steps(ufunc, x, o, axis: int) -> None:
    """``ufunc.accumulate(x, axis)`` into ``o``: o[0] = x[0], then o[j] = ufunc(o[j - 1], x[j]) along
    ``axis`` (NumPy's order of operations, a step at a time)."""
    xs = np.moveaxis(x, axis, 0)
    ys = np.moveaxis(o, axis, 0)
    np.copyto(ys[0], xs[0])
    for j in range(1, xs.shape[0]):
        ufunc(ys[j - 1], xs[j], out=ys[j])
