"""Reduction kernels: sum, prod, max, min, mean, var, std, all, any, the cumulative sums and products,
and diff.

``params["axis"]`` is the tuple of normalised axes to reduce and ``params["keepdims"]`` whether the
output keeps them as length-1 axes; the output is already shaped accordingly. Reductions that have no
value over zero elements (max, min) or whose value there is NaN (mean, var, std) never reach a kernel
with an empty reduction: the namespace raises or fills NaN instead.
"""

from __future__ import annotations


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

    def moment(f):
        def kernel(ins, outs, p):
            f(ins[0], axis=p["axis"], keepdims=p["keepdims"], ddof=p["correction"], out=outs[0])
        return kernel

    def cumulative(f):
        def kernel(ins, outs, p):
            o = outs[0]
            f(ins[0], axis=p["axis"], dtype=o.dtype, out=o)
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
        "var": moment(m.var), "std": moment(m.std),
        "cumulative_sum": cumulative(m.cumsum), "cumulative_prod": cumulative(m.cumprod),
        "diff": diff,
    }
