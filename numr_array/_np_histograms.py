"""NumPy's counting functions: ``bincount``, ``digitize``, ``histogram`` (and its bin edges),
``histogram2d`` and ``histogramdd``.

Counting is composed of sorting and searching, which every device has: the bin index of each element is
sorted, and ``searchsorted`` of the bin numbers in it gives where each bin's run starts, so the counts are
differences of those positions (weighted counts: differences of the running sum of the sorted weights).
What is read on the host is what NumPy's result shape or errors depend on: ``bincount``'s largest value
and smallest (negative values are a ValueError), ``digitize``'s monotonic direction, ``histogram``'s data
range when ``range`` is not given (it must be finite)."""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from . import _statistical as _st
from ._advanced_indexing import take
from ._checks import check_same_device, check_tensor
from ._creation import arange, asarray, zeros
from ._data_type_functions import astype
from ._np_common import default_float, default_int, integer
from ._searching import searchsorted, where
from ._sorting import argsort, sort
from ._tensor import Tensor
from ._transfer import to_numpy
from ._utility import all as _all

__all__ = ["bincount", "digitize", "histogram", "histogram_bin_edges", "histogram2d", "histogramdd"]


def _counts(bins: Tensor, n: int, weights: Tensor | None) -> Tensor:
    """How many of the integer ``bins`` (each in [0, n]; n is dropped) fall in each of 0..n-1, or the sum
    of their ``weights``."""
    dev = bins._dev
    flat = _mn.reshape(bins, (-1,))
    edges = arange(n + 1, dtype=flat._dtype, device=dev)
    if weights is None:
        return astype(_mn_diff(searchsorted(sort(flat), edges)), default_int(dev))
    order = argsort(flat)
    w = take(_mn.reshape(weights, (-1,)), order)
    running = _st.cumulative_sum(w, include_initial=True)
    return _mn_diff(take(running, searchsorted(take(flat, order), edges)))


def _mn_diff(a: Tensor) -> Tensor:
    return _ew.subtract(a[1:], a[:-1])


def bincount(x: Tensor, /, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How many times each value 0, 1, ..., max(x) occurs in the non-negative 1-D integer array ``x`` (at
    least ``minlength`` bins), or the sum of ``weights`` (float64, or the default float) at each value.
    The largest and smallest values are read on the host: the result's length depends on them."""
    check_tensor(x, "bincount", "x")
    if x._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"bincount: x must have an integer dtype, got {x._dtype.name}")
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {x._shape}")
    minlength = integer(minlength, "bincount", "minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if weights is not None:
        check_tensor(weights, "bincount", "weights")
        check_same_device("bincount", x, weights)
        if weights._shape != x._shape:
            raise ValueError(f"bincount: weights (shape {weights._shape}) must be shaped like x ({x._shape})")
        if weights._dtype.kind == "c":
            raise TypeError(f"bincount: weights must be real, got {weights._dtype.name}")
        weights = astype(weights, default_float(x._dev))
    n = minlength
    if x.size:
        lo, hi = (int(v) for v in to_numpy(_mn.stack([_st.min(x), _st.max(x)]), "bincount"))
        if lo < 0:
            raise ValueError(f"bincount: x must be non-negative, found {lo}")
        n = max(n, hi + 1)
    if not x.size:
        return zeros(n, dtype=default_int(x._dev) if weights is None else default_float(x._dev), device=x._dev)
    return _counts(x, n, weights)


def digitize(x: Tensor, bins: Tensor, right: bool = False) -> Tensor:
    """The index of the bin of ``bins`` (1-D, monotonic) each element of ``x`` falls in: ``i`` with
    ``bins[i-1] <= x < bins[i]`` for increasing bins (``<`` and ``<=`` swapped with ``right``). Whether
    bins increase or decrease is read on the host (ValueError when neither)."""
    check_tensor(x, "digitize", "x")
    check_tensor(bins, "digitize", "bins")
    check_same_device("digitize", x, bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {bins._shape}")
    if x._dtype.kind == "c" or bins._dtype.kind == "c":
        raise TypeError("digitize: x and bins must be real")
    increasing = True
    if bins.size > 1:
        d = _mn_diff(bins)
        inc, dec = (bool(v) for v in to_numpy(_mn.stack([_all(_ew.greater_equal(d, 0)),
                                                         _all(_ew.less_equal(d, 0))]), "digitize"))
        if not (inc or dec):
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
        increasing = inc
    side = "left" if right else "right"
    x, bins = _comparable(x, bins)
    if increasing:
        return searchsorted(bins, x, side=side)
    return _ew.subtract(bins.size, searchsorted(_mn.flip(bins), x, side=side))


def _edges_of(a: Tensor, bins, range_, func: str) -> Tensor:
    """The bin edges of ``histogram``: ``bins`` itself when an array, else ``bins`` equal bins over
    ``range_`` (the data's min and max when None, which must be finite: read on the host)."""
    if isinstance(bins, Tensor):
        check_same_device(func, a, bins)
        if bins.ndim != 1 or bins.size < 2:
            raise ValueError(f"{func}: bins must be 1-D with at least two edges, got shape {bins._shape}")
        return bins
    if isinstance(bins, str):
        raise ValueError(f"{func}: bin estimators such as {bins!r} are not supported; give a number of bins "
                         "or the edges")
    nbins = integer(bins, func, "bins")
    if nbins < 1:
        raise ValueError(f"{func}: bins must be positive, got {nbins}")
    fdt = a._dtype if a._dtype.kind == "f" else default_float(a._dev)
    if range_ is None:
        if a.size:
            lo, hi = _st.min(a), _st.max(a)
            host = to_numpy(_mn.stack([lo, hi]), func)
            if not all(math.isfinite(v) for v in host.tolist()):
                raise ValueError(f"{func}: autodetected range of [{host[0]}, {host[1]}] is not finite")
            lo, hi = astype(lo, fdt), astype(hi, fdt)
        else:
            lo, hi = asarray(0.0, dtype=fdt, device=a._dev), asarray(1.0, dtype=fdt, device=a._dev)
    else:
        if not (isinstance(range_, Sequence) and len(range_) == 2):
            raise TypeError(f"{func}: range must be a (min, max) pair, got {range_!r}")
        first, last = (float(v) for v in range_)
        if first > last:
            raise ValueError(f"{func}: max must be larger than min in range parameter, got {range_!r}")
        if not (math.isfinite(first) and math.isfinite(last)):
            raise ValueError(f"{func}: supplied range of [{first}, {last}] is not finite")
        lo, hi = asarray(first, dtype=fdt, device=a._dev), asarray(last, dtype=fdt, device=a._dev)
    same = _ew.equal(lo, hi)  # NumPy widens an empty range by 0.5 each way
    lo, hi = where(same, _ew.subtract(lo, 0.5), lo), where(same, _ew.add(hi, 0.5), hi)
    # NumPy's linspace: start + i * ((stop - start) / num), the last edge exactly stop
    step = _ew.divide(_ew.subtract(hi, lo), float(nbins))
    edges = _ew.add(_ew.multiply(arange(nbins + 1, dtype=fdt, device=a._dev), step), lo)
    return _mn.concat([edges[:-1], _mn.reshape(hi, (1,))])


def _comparable(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """``x`` and ``y`` in dtypes that compare (integers beside floats: both in the float's dtype, or the
    default float), as NumPy compares them."""
    if (x._dtype.kind == "f") == (y._dtype.kind == "f"):
        try:
            dt.promote(x._dtype, y._dtype, "")
            return x, y
        except TypeError:
            pass
    f = next((t._dtype for t in (x, y) if t._dtype.kind == "f"), default_float(x._dev))
    return astype(x, f, copy=False), astype(y, f, copy=False)


def _bin_index(a: Tensor, edges: Tensor) -> Tensor:
    """The bin of each element of ``a`` in [0, nbins), or nbins for those outside the edges (the last
    bin includes its right edge)."""
    nbins = edges._shape[0] - 1
    a, edges = _comparable(a, edges)
    i = _ew.subtract(searchsorted(edges, a, side="right"), 1)
    i = where(_ew.equal(a, edges[-1]), nbins - 1, i)
    return where(_ew.logical_or(_ew.less(i, 0), _ew.greater_equal(i, nbins)), nbins, i)


def _check_weights(a: Tensor, weights, func: str) -> Tensor | None:
    if weights is None:
        return None
    check_tensor(weights, func, "weights")
    check_same_device(func, a, weights)
    if weights._shape != a._shape:
        raise ValueError(f"{func}: weights (shape {weights._shape}) must be shaped like a ({a._shape})")
    return weights


def histogram(a: Tensor, bins: int | Tensor = 10, range: tuple[float, float] | None = None,
              density: bool | None = None, weights: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """(counts, edges): how many elements of ``a`` (flattened) fall in each of ``bins`` equal bins over
    ``range`` (default: the data's), or in the bins between the given edges; the last bin includes its
    right edge. ``weights`` sums weights instead; ``density`` normalises to a probability density."""
    check_tensor(a, "histogram", "a")
    if a._dtype.kind == "c":
        raise TypeError("histogram: a must be real")
    weights = _check_weights(a, weights, "histogram")
    edges = _edges_of(a, bins, range, "histogram")
    nbins = edges._shape[0] - 1
    counts = _counts(_bin_index(_mn.reshape(a, (-1,)), edges), nbins,
                     None if weights is None else _mn.reshape(weights, (-1,)))
    if density:
        widths = _mn_diff(astype(edges, default_float(a._dev)) if edges._dtype.kind != "f" else edges)
        c = astype(counts, widths._dtype) if counts._dtype is not widths._dtype else counts
        return _ew.divide(_ew.divide(c, widths), _st.sum(c)), edges
    return counts, edges


def histogram_bin_edges(a: Tensor, bins: int | Tensor = 10, range: tuple[float, float] | None = None,
                        weights: Tensor | None = None) -> Tensor:
    """The bin edges :func:`histogram` uses."""
    check_tensor(a, "histogram_bin_edges", "a")
    return _edges_of(a, bins, range, "histogram_bin_edges")


def histogramdd(sample: Tensor, bins: int | Sequence = 10, range: Sequence | None = None,
                density: bool | None = None, weights: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
    """(counts, edges per dimension) of the N points of ``sample`` (N, D) in D-dimensional bins; each
    dimension's ``bins`` and ``range`` as :func:`histogram`'s. The counts are floating-point, as NumPy's."""
    check_tensor(sample, "histogramdd", "sample")
    if sample.ndim == 1:
        sample = _mn.reshape(sample, (-1, 1))
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {sample._shape}")
    n, d = sample._shape
    bins_d = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = list(range) if range is not None else [None] * d
    if len(bins_d) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: bins and range need one entry per dimension ({d})")
    weights = None if weights is None else _mn.reshape(weights, (-1,))
    if weights is not None and weights._shape != (n,):
        raise ValueError(f"histogramdd: weights must have one value per point ({n}), got shape {weights._shape}")
    edges = [_edges_of(sample[:, k], bins_d[k], ranges[k], "histogramdd") for k in builtins.range(d)]
    sizes = [e._shape[0] - 1 for e in edges]
    flat = None
    outside = None
    for k, (e, m) in enumerate(zip(edges, sizes)):
        i = _bin_index(sample[:, k], e)
        out_k = _ew.equal(i, m)
        outside = out_k if outside is None else _ew.logical_or(outside, out_k)
        flat = i if flat is None else _ew.add(_ew.multiply(flat, m), i)
    total = math.prod(sizes)
    flat = where(outside, total, flat)
    counts = _mn.reshape(_counts(flat, total, weights), tuple(sizes))
    if counts._dtype.kind != "f":
        counts = astype(counts, default_float(sample._dev))  # NumPy's counts here are floats
    if density:
        c = _ew.divide(counts, _st.sum(counts))
        for k, e in enumerate(edges):
            w = _mn_diff(e)
            c = _ew.divide(c, _mn.reshape(w, tuple(-1 if j == k else 1 for j in builtins.range(d))))
        counts = c
    return counts, edges


def histogram2d(x: Tensor, y: Tensor, bins: int | Sequence = 10, range: Sequence | None = None,
                density: bool | None = None, weights: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(counts, x edges, y edges) of the points (x[i], y[i]) (:func:`histogramdd` in two dimensions)."""
    check_tensor(x, "histogram2d", "x")
    check_tensor(y, "histogram2d", "y")
    if x._shape != y._shape or x.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-D of one length, got shapes {x._shape} and {y._shape}")
    counts, (ex, ey) = histogramdd(_mn.stack([x, y], axis=1), bins, range, density, weights)
    return counts, ex, ey
