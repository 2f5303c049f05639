"""NumPy's index helpers and the sorting and set functions the standard lacks: ``argwhere``,
``flatnonzero``, ``unravel_index``, ``ravel_multi_index``, ``indices``, ``ix_``, the triangle and diagonal
index sets, ``lexsort``, ``partition``/``argpartition`` (a full sort: its result is a valid partition),
``sort_complex``, ``unique`` with NumPy's flags and the 1-D set operations (``intersect1d``, ``union1d``,
``setdiff1d``, ``setxor1d``), composed of sorting, searching and gathers on the device. Results whose
length depends on the data read that length on the host, as ``nonzero`` does."""

from __future__ import annotations

from collections.abc import Sequence

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from ._advanced_indexing import take
from ._checks import check_axis, check_same_device, check_tensor
from ._creation import arange, asarray, full_like, ones, tril, triu
from ._data_type_functions import astype
from ._np_common import default_int, index_mode, integer
from ._numpy_compat import ravel
from ._searching import nonzero, searchsorted, where
from ._set_functions import unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import argsort, sort
from ._tensor import Tensor

__all__ = [
    "argwhere", "flatnonzero", "unravel_index", "ravel_multi_index", "indices", "ix_", "diag_indices",
    "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
    "mask_indices", "lexsort", "partition", "argpartition", "sort_complex", "unique", "intersect1d",
    "union1d", "setdiff1d", "setxor1d",
]


def argwhere(a: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row per element (N, a.ndim)."""
    check_tensor(a, "argwhere", "a")
    if a.ndim == 0:  # NumPy: (1, 0) when a is non-zero, else (0, 0)
        return _mn.reshape(nonzero(_mn.reshape(a, (1,)))[0], (-1, 1))[:, :0]
    return _mn.stack(nonzero(a), axis=1)


def flatnonzero(a: Tensor) -> Tensor:
    """The indices of the non-zero elements of the flattened ``a``."""
    return nonzero(ravel(check_tensor(a, "flatnonzero", "a")))[0]


def _shape_arg(shape, func: str, name: str = "shape") -> tuple[int, ...]:
    dims = (shape,) if not isinstance(shape, (list, tuple)) else tuple(shape)
    dims = tuple(integer(d, func, name) for d in dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"{func}: {name} must be non-negative, got {dims}")
    return dims


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in an array of ``shape`` of the flat (C order) ``indices``; indices outside the
    array are not detected (NumPy raises ValueError, which would need a host read)."""
    check_tensor(indices, "unravel_index", "indices")
    if indices._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"unravel_index: indices must be integers, got {indices._dtype.name}")
    dims = _shape_arg(shape, "unravel_index")
    out = []
    rest = indices
    for d in reversed(dims):
        out.append(_ew.remainder(rest, d) if d else rest)
        rest = _ew.floor_divide(rest, d) if d else rest
    return tuple(astype(o, default_int(indices._dev)) for o in reversed(out))


def ravel_multi_index(multi_index: Sequence[Tensor], dims: Sequence[int], mode: str = "raise") -> Tensor:
    """The flat (C order) indices of the coordinate arrays ``multi_index`` in an array of shape ``dims``;
    ``mode`` 'wrap' or 'clip' per coordinate ('raise': out-of-range coordinates are not detected)."""
    dims = _shape_arg(dims, "ravel_multi_index", "dims")
    coords = [check_tensor(c, "ravel_multi_index", "multi_index") for c in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(coords)} coordinate arrays for {len(dims)} dimensions")
    modes = [mode] * len(dims) if isinstance(mode, str) else list(mode)
    flat = None
    for c, d, m in zip(coords, dims, modes):
        c = astype(index_mode(c, d, m, "ravel_multi_index"), default_int(c._dev))
        flat = c if flat is None else _ew.add(_ew.multiply(flat, d), c)
    return flat


def indices(dimensions: Sequence[int], dtype: dt.DType | None = None, sparse: bool = False, *,
            device=None) -> Tensor | tuple[Tensor, ...]:
    """The grid of indices of an array of ``dimensions``: stacked, of shape
    ``(len(dimensions), *dimensions)``, or with ``sparse``
    a tuple of broadcastable ranges."""
    dims = _shape_arg(tuple(dimensions), "indices", "dimensions")
    from ._device import resolve_device
    dev = resolve_device(device, "indices")
    dtype = dtype or default_int(dev)
    grids = []
    for i, d in enumerate(dims):
        r = _mn.reshape(arange(d, dtype=dtype, device=dev), tuple(d if j == i else 1 for j in range(len(dims))))
        grids.append(r if sparse else _mn.broadcast_to(r, dims))
    if sparse:
        return tuple(grids)
    return _mn.stack(grids) if grids else asarray([], dtype=dtype, device=dev)


def ix_(*args: Tensor) -> tuple[Tensor, ...]:
    """Open-mesh index arrays from 1-D integer (or boolean: their non-zero positions) arrays, for
    ``a[ix_(rows, cols)]``."""
    out = []
    n = len(args)
    for k, a in enumerate(args):
        check_tensor(a, "ix_", "args")
        if a.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1 dimensional, got shape {a.shape}")
        if a._dtype is dt.bool_:
            a = nonzero(a)[0]
        out.append(_mn.reshape(a, tuple(-1 if j == k else 1 for j in range(n))))
    return tuple(out)


def diag_indices(n: int, ndim: int = 2, *, device=None) -> tuple[Tensor, ...]:
    """The indices of the main diagonal of an (n, ..., n) array of ``ndim`` dimensions."""
    n = integer(n, "diag_indices", "n")
    from ._device import resolve_device
    dev = resolve_device(device, "diag_indices")
    idx = arange(n, dtype=default_int(dev), device=dev)
    return (idx,) * integer(ndim, "diag_indices", "ndim")


def diag_indices_from(arr: Tensor) -> tuple[Tensor, ...]:
    """:func:`diag_indices` of ``arr`` (at least 2-D, all sides equal)."""
    check_tensor(arr, "diag_indices_from", "arr")
    if arr.ndim < 2:
        raise ValueError("diag_indices_from: input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal length, got {arr.shape}")
    return diag_indices(arr.shape[0], arr.ndim, device=arr.device)


def _triangle(n: int, k: int, m: int | None, upper: bool, func: str, device) -> tuple[Tensor, Tensor]:
    n = integer(n, func, "n")
    m = n if m is None else integer(m, func, "m")
    k = integer(k, func, "k")
    from ._device import resolve_device
    dev = resolve_device(device, func)
    mask = ones((n, m), dtype=dt.int8, device=dev)
    mask = triu(mask, k=k) if upper else tril(mask, k=k)
    return nonzero(mask)


def tril_indices(n: int, k: int = 0, m: int | None = None, *, device=None) -> tuple[Tensor, Tensor]:
    """The (row, column) indices of the lower triangle (at and below the ``k``-th diagonal) of an (n, m)
    array."""
    return _triangle(n, k, m, False, "tril_indices", device)


def triu_indices(n: int, k: int = 0, m: int | None = None, *, device=None) -> tuple[Tensor, Tensor]:
    """The (row, column) indices of the upper triangle (at and above the ``k``-th diagonal)."""
    return _triangle(n, k, m, True, "triu_indices", device)


def tril_indices_from(arr: Tensor, k: int = 0) -> tuple[Tensor, Tensor]:
    """:func:`tril_indices` of the 2-D ``arr``'s shape."""
    if check_tensor(arr, "tril_indices_from", "arr").ndim != 2:
        raise ValueError(f"tril_indices_from: input array must be 2-d, got shape {arr.shape}")
    return _triangle(arr.shape[0], k, arr.shape[1], False, "tril_indices_from", arr.device)


def triu_indices_from(arr: Tensor, k: int = 0) -> tuple[Tensor, Tensor]:
    """:func:`triu_indices` of the 2-D ``arr``'s shape."""
    if check_tensor(arr, "triu_indices_from", "arr").ndim != 2:
        raise ValueError(f"triu_indices_from: input array must be 2-d, got shape {arr.shape}")
    return _triangle(arr.shape[0], k, arr.shape[1], True, "triu_indices_from", arr.device)


def mask_indices(n: int, mask_func, k: int = 0, *, device=None) -> tuple[Tensor, Tensor]:
    """The indices where ``mask_func(ones((n, n)), k)`` (e.g. :func:`triu`) is non-zero."""
    n = integer(n, "mask_indices", "n")
    from ._device import resolve_device
    m = ones((n, n), dtype=dt.int8, device=resolve_device(device, "mask_indices"))
    try:
        r = mask_func(m, k)
    except TypeError:
        r = mask_func(m, k=k)
    return nonzero(r)


def lexsort(keys: Sequence[Tensor] | Tensor, axis: int = -1) -> Tensor:
    """The indices that sort by the last key, then the one before, ... (stable sorts, first key first)."""
    rows = [keys[i] for i in range(keys.shape[0])] if isinstance(keys, Tensor) else list(keys)
    if not rows:
        raise TypeError("lexsort: need a sequence of keys with len > 0")
    for r in rows:
        check_tensor(r, "lexsort", "keys")
    shape = rows[0].shape
    if any(r.shape != shape for r in rows):
        raise ValueError("lexsort: all keys need to be the same shape")
    axis = check_axis(axis, len(shape), "lexsort")
    order = argsort(rows[0], axis=axis, stable=True)
    for r in rows[1:]:
        from ._advanced_indexing import take_along_axis
        step = argsort(take_along_axis(r, order, axis=axis), axis=axis, stable=True)
        order = take_along_axis(order, step, axis=axis)
    return order


def _kth(kth, n: int, func: str) -> None:
    ks = list(kth) if isinstance(kth, (list, tuple)) else [kth]
    for k in ks:
        k = integer(k, func, "kth")
        if not -n <= k < n:
            raise ValueError(f"{func}: kth(={k}) out of bounds ({n})")


def partition(a: Tensor, kth: int | Sequence[int], axis: int | None = -1, kind: str = "introselect",
              order=None) -> Tensor:
    """A copy of ``a`` with the ``kth`` element in its sorted place, smaller ones before and larger after:
    the full sort along ``axis``, which is such a partition."""
    check_tensor(a, "partition", "a")
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim, "partition")
    _kth(kth, a.shape[axis], "partition")
    return sort(a, axis=axis)


def argpartition(a: Tensor, kth: int | Sequence[int], axis: int | None = -1, kind: str = "introselect",
                 order=None) -> Tensor:
    """Indices that partition ``a`` (those of the stable full sort, which partition it)."""
    check_tensor(a, "argpartition", "a")
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim, "argpartition")
    _kth(kth, a.shape[axis], "argpartition")
    return argsort(a, axis=axis)


def sort_complex(a: Tensor) -> Tensor:
    """``a`` sorted by real part, then imaginary part, as a complex array."""
    check_tensor(a, "sort_complex", "a")
    if a._dtype.kind != "c":
        c = dt.complex128 if a._dtype in (dt.float64, dt.int64, dt.uint64, dt.int32, dt.uint32) else dt.complex64
        if not a._dev.client.supports_dtype(c):
            c = dt.complex64
        a = astype(a, c)
    from ._advanced_indexing import take_along_axis
    re, im = _ew.real(a), _ew.imag(a)
    order = argsort(im, axis=-1, stable=True)
    order = take_along_axis(order, argsort(take_along_axis(re, order, axis=-1), axis=-1, stable=True), axis=-1)
    return take_along_axis(a, order, axis=-1)


def unique(ar: Tensor, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, sorted: bool = True):
    """The sorted unique elements of the flattened ``ar``, with NumPy's optional first indices, inverse
    (shaped like ``ar``, as NumPy 2) and counts; NaNs count as one value (``equal_nan``). ``axis`` other
    than None is not supported."""
    check_tensor(ar, "unique", "ar")
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported; unique works on the flattened array")
    if not (return_index or return_inverse or return_counts):
        values, extras = unique_values(ar), {}
    elif return_index:
        r = unique_all(ar)
        values, extras = r.values, {"index": r.indices, "inverse": r.inverse_indices, "counts": r.counts}
    elif return_inverse:
        r = unique_inverse(ar)
        values, extras = r.values, {"inverse": r.inverse_indices}
        if return_counts:
            extras["counts"] = unique_counts(ar).counts
    else:
        r = unique_counts(ar)
        values, extras = r.values, {"counts": r.counts}
    if equal_nan and ar._dtype.kind in dt.FLOAT_KINDS and values.shape[0]:
        values, extras = _merge_nans(values, extras)
    out = [values] + [extras[k] for k, want in (("index", return_index), ("inverse", return_inverse),
                                                  ("counts", return_counts)) if want]
    return out[0] if len(out) == 1 else tuple(out)


def _merge_nans(values: Tensor, extras: dict) -> tuple[Tensor, dict]:
    """The unique values with their NaNs (sorted last, each its own value) merged into one."""
    nans = nonzero(_ew.isnan(values))[0]
    k = nans.shape[0]
    if k <= 1:
        return values, extras
    first = values.shape[0] - k
    out = {}
    if "index" in extras:
        out["index"] = extras["index"][:first + 1]
    if "counts" in extras:
        from ._statistical import sum as _sum
        c = extras["counts"]
        out["counts"] = _mn.concat([c[:first], _mn.reshape(astype(_sum(c[first:]), c._dtype), (1,))])
    if "inverse" in extras:
        inv = extras["inverse"]
        out["inverse"] = where(_ew.greater(inv, first), first, inv)
    return values[:first + 1], out


def _sorted_unique_1d(a: Tensor, func: str) -> Tensor:
    return unique(ravel(check_tensor(a, func, "ar")))


def _member(a: Tensor, b_sorted: Tensor) -> Tensor:
    """Where the elements of ``a`` are in the sorted 1-D ``b_sorted`` (by ``==``: a NaN is in nothing, as
    in NumPy's set functions)."""
    n = b_sorted.shape[0]
    if n == 0:
        return full_like(a, False, dtype=dt.bool_)
    i = _ew.clip(searchsorted(b_sorted, a), 0, n - 1)
    hit = take(b_sorted, _mn.reshape(i, (-1,)))
    same = _ew.equal(hit, _mn.reshape(a, (-1,)))
    return _mn.reshape(same, a.shape)


def intersect1d(ar1: Tensor, ar2: Tensor, assume_unique: bool = False, return_indices: bool = False):
    """The sorted unique values in both arrays (with ``return_indices``, their first indices in each)."""
    check_same_device("intersect1d", check_tensor(ar1, "intersect1d", "ar1"), check_tensor(ar2, "intersect1d", "ar2"))
    if return_indices:
        u1, i1 = unique(ravel(ar1), return_index=True)
        u2, i2 = unique(ravel(ar2), return_index=True)
        in2 = _member(u1, u2)
        keep = nonzero(in2)[0]
        common = take(u1, keep)
        pos2 = searchsorted(u2, common)
        return common, take(i1, keep), take(i2, pos2)
    u1 = _sorted_unique_1d(ar1, "intersect1d")
    u2 = _sorted_unique_1d(ar2, "intersect1d")
    return take(u1, nonzero(_member(u1, u2))[0])


def union1d(ar1: Tensor, ar2: Tensor) -> Tensor:
    """The sorted unique values in either array."""
    check_tensor(ar1, "union1d", "ar1")
    check_tensor(ar2, "union1d", "ar2")
    return unique(_mn.concat([ravel(ar1), ravel(ar2)]))


def setdiff1d(ar1: Tensor, ar2: Tensor, assume_unique: bool = False) -> Tensor:
    """The sorted unique values of ``ar1`` not in ``ar2`` (``assume_unique``: ar1's values in their order)."""
    check_tensor(ar1, "setdiff1d", "ar1")
    check_tensor(ar2, "setdiff1d", "ar2")
    a = ravel(ar1) if assume_unique else _sorted_unique_1d(ar1, "setdiff1d")
    b = sort(ravel(ar2)) if assume_unique else _sorted_unique_1d(ar2, "setdiff1d")
    return take(a, nonzero(_ew.logical_not(_member(a, b)))[0])


def setxor1d(ar1: Tensor, ar2: Tensor, assume_unique: bool = False) -> Tensor:
    """The sorted unique values in exactly one of the arrays."""
    check_tensor(ar1, "setxor1d", "ar1")
    check_tensor(ar2, "setxor1d", "ar2")
    u1 = _sorted_unique_1d(ar1, "setxor1d")
    u2 = _sorted_unique_1d(ar2, "setxor1d")
    only1 = take(u1, nonzero(_ew.logical_not(_member(u1, u2)))[0])
    only2 = take(u2, nonzero(_ew.logical_not(_member(u2, u1)))[0])
    return sort(_mn.concat([only1, only2]))
