"""Searching, sorting and set kernels: argmax, argmin, count_nonzero, nonzero, searchsorted, sort,
argsort, unique_sort / unique_gather and isin."""

from __future__ import annotations


def kernels(m) -> dict:
    def arg_extremum(f):
        def kernel(ins, outs, p):
            axes = p["axis"]
            o = outs[0]
            # one axis, or all of them (the flattened array); the output's shape already has keepdims
            r = f(ins[0], axis=axes[0] if len(axes) == 1 else None)
            m.copyto(o, m.reshape(r, o.shape), casting="unsafe")
        return kernel

    def count_nonzero(ins, outs, p):
        o = outs[0]
        m.sum(ins[0] != 0, axis=p["axis"], keepdims=p["keepdims"], dtype=o.dtype, out=o)

    def nonzero(ins, outs, p):
        for o, idx in zip(outs, m.nonzero(ins[0])):
            m.copyto(o, idx, casting="unsafe")

    def searchsorted(ins, outs, p):
        x1, x2, sorter = ins
        m.copyto(outs[0], m.searchsorted(x1, x2, side=p["side"], sorter=sorter), casting="unsafe")

    in_place_views = m.__name__ == "numpy"  # NumPy sorts a strided view in place; CuPy's sort takes none
    radix = m.__name__ != "numpy"  # CuPy: radix sorts, which order floats by their bits (see nan_last)

    def sort(ins, outs, p):
        x = ins[0]
        axis = p["axis"]
        o = outs[0]
        if radix and x.dtype.kind == "f" and x.ndim:
            # NaNs last whatever their sign, each NaN's bits kept: x taken in the order of its NaN-last key
            m.copyto(o, m.take_along_axis(x, order(x, axis, p["descending"]), axis))
            return
        # kind=None is NumPy's fastest sort (CuPy's only sort is stable). A stable sort of values differs
        # from it only in the order of equal elements that can be told apart: none in integers and bools,
        # signed zeros and NaNs in floats; without them, NumPy's fast sort gives the stable sort's bits.
        kind = "stable" if p["stable"] and not _indistinct_equals(x) else None
        if p["descending"] and in_place_views:
            # x copied into the result and its reversed view sorted ascending there (equal elements keep
            # their order): no second result-sized array
            m.copyto(o, x)
            m.flip(o, axis).sort(axis=axis, kind=kind)
        elif p["descending"]:
            # sorting the reversed array ascending and reversing back keeps equal elements in order
            m.copyto(o, m.flip(m.sort(m.flip(x, axis), axis=axis, kind=kind), axis))
        elif o.flags.c_contiguous:
            # sorted in place in the output (which sort(x) would have copied x into): no temporary of x's size
            m.copyto(o, x)
            o.sort(axis=axis, kind=kind)
        else:
            m.copyto(o, m.sort(x, axis=axis, kind=kind))

    def _indistinct_equals(x) -> bool:
        """Whether NumPy sorts ``x`` to the same bits stably or not (equal elements are identical)."""
        if m.__name__ != "numpy" or x.dtype.kind in "biu":
            return m.__name__ == "numpy"
        if x.dtype.kind == "c":
            return False
        # (two reductions, no temporary: min propagates a NaN; all is False at any zero, signed or not,
        # which keeps the stable sort. Both are vectorised, unlike sum and count_nonzero: 0.13 ms against
        # 0.46 ms on 800k float32)
        return not m.isnan(m.min(x)) and bool(m.all(x))

    def nan_last(x):
        """The sort key of x: on CuPy, a float x with every NaN replaced by the one positive NaN. CuPy's
        radix sorts order floats by their bits, which puts -NaN before -inf (and NaNs by payload); NumPy and
        the standard put every NaN last, in their order. (CuPy's abs keeps a float64 NaN's sign.)"""
        return m.where(m.isnan(x), x.dtype.type("nan"), x) if radix and x.dtype.kind == "f" else x

    def order(x, axis: int, descending: bool, kind=None):
        """The permutation that sorts x along axis, equal elements in their order (stably) where kind is
        "stable" (CuPy's sorts always are)."""
        key = nan_last(x)
        if not descending:
            return m.argsort(key, axis=axis, kind=kind)
        # the indices of the reversed array, reversed and mapped back to x's positions
        r = m.flip(m.argsort(m.flip(key, axis), axis=axis, kind=kind), axis)
        return m.subtract(x.shape[axis] - 1, r)

    def argsort(ins, outs, p):
        m.copyto(outs[0], order(ins[0], p["axis"], p["descending"], "stable" if p["stable"] else None),
                 casting="unsafe")

    def unique_sort(ins, outs, p):
        # outs: the permutation that sorts the flattened x (stably, so that a run's first element is its
        # first occurrence), where each run of equal values starts in that order, and the number of runs.
        # NaN != NaN, so each NaN starts its own run. Adding 0 turns -0.0 into +0.0 so that signed zeros
        # make one run even for sorts that order them by their bits (radix sorts on GPUs).
        perm, starts, count = outs
        keys = m.reshape(ins[0], (-1,))
        if keys.dtype.kind in "fc":
            keys = nan_last(keys + keys.dtype.type(0))
        perm_ = m.argsort(keys, kind="stable")
        m.copyto(perm, perm_, casting="unsafe")
        ordered = keys[perm_]
        starts[0] = True
        m.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
        m.sum(starts, dtype=count.dtype, out=count)

    def unique_gather(ins, outs, p):
        x, perm, starts = ins
        run_starts = m.nonzero(starts)[0]
        first = m.take(perm, run_starts)  # the first occurrence in x of each unique value
        values, *extras = outs
        m.take(m.reshape(x, (-1,)), first, out=values)
        for name, o in zip(p["want"], extras):
            if name == "indices":
                m.copyto(o, first, casting="unsafe")
            elif name == "counts":
                m.subtract(run_starts[1:], run_starts[:-1], out=o[:-1], casting="unsafe")
                o[-1] = starts.shape[0] - run_starts[-1]
            else:  # inverse_indices: the run number of each sorted element, scattered back to x's order
                inverse = m.empty(perm.shape, o.dtype)
                inverse[perm] = m.cumsum(starts, dtype=o.dtype) - 1
                m.copyto(o, m.reshape(inverse, o.shape))

    def isin(ins, outs, p):
        # both in their promoted dtype first: CuPy found int32 0 in uint32 [2147483648]
        x1, x2 = ins
        dtype = m.result_type(x1.dtype, x2.dtype)
        m.copyto(outs[0], m.isin(x1.astype(dtype, copy=False), x2.astype(dtype, copy=False), invert=p["invert"]))

    return {
        "argmax": arg_extremum(m.argmax), "argmin": arg_extremum(m.argmin), "count_nonzero": count_nonzero,
        "nonzero": nonzero, "searchsorted": searchsorted, "sort": sort, "argsort": argsort,
        "unique_sort": unique_sort, "unique_gather": unique_gather, "isin": isin,
    }
