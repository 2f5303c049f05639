"""NumPy's array-manipulation functions the standard lacks: splitting and stacking (``array_split``,
``hsplit``, ``column_stack``, ``dstack``, ``block``, ...), flips and rotations, ``delete``/``insert``/
``append``, ``resize``, selection (``choose``, ``compress``, ``extract``, ``select``, ``piecewise``) and
the in-place writers (``put``, ``place``, ``putmask``, ``copyto``, ``fill_diagonal``, ``put_along_axis``).

Each is composed of views, ``concat``, gathers and scatters, so it runs on every device. Where the result's
shape depends on the data (a boolean ``compress``/``extract``/``delete`` mask), the count is read on the
host, as boolean indexing does."""

from __future__ import annotations

import builtins
import itertools
import math
from collections.abc import Callable, Sequence

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from ._checks import check_axis, check_same_device, check_tensor
from ._creation import asarray, full, zeros
from ._data_type_functions import astype
from ._np_common import default_int, index_mode, index_range, integer
from ._numpy_compat import atleast_2d, atleast_3d, ravel, split
from ._searching import nonzero, where
from ._tensor import Tensor

__all__ = [
    "array_split", "hsplit", "vsplit", "dsplit", "column_stack", "row_stack", "dstack", "fliplr", "flipud",
    "rot90", "delete", "insert", "append", "resize", "rollaxis", "block", "diagflat", "diagonal",
    "trim_zeros", "ediff1d", "apply_along_axis", "apply_over_axes", "choose", "compress", "extract",
    "select", "piecewise", "put", "place", "putmask", "copyto", "fill_diagonal", "put_along_axis",
    "array_equiv", "asanyarray", "ascontiguousarray", "asarray_chkfinite", "require", "pad",
]


def _list(arrays, func: str) -> list[Tensor]:
    if isinstance(arrays, Tensor) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{func}: takes a list or tuple of arrays, got {type(arrays).__name__}")
    return [check_tensor(a, func, "arrays") for a in arrays]


def array_split(ary: Tensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """Views of ``ary`` split along ``axis`` into N nearly equal parts (the first ``len % N`` one longer),
    or at the given indices."""
    check_tensor(ary, "array_split", "ary")
    if isinstance(indices_or_sections, (list, tuple)):
        return split(ary, indices_or_sections, axis)
    sections = integer(indices_or_sections, "array_split", "indices_or_sections")
    if sections <= 0:
        raise ValueError(f"array_split: number of sections must be larger than 0, got {sections}")
    n = ary.shape[check_axis(axis, ary.ndim, "array_split")]
    each, extra = divmod(n, sections)
    bounds = list(itertools.accumulate([each + 1] * extra + [each] * (sections - extra)))[:-1]
    return split(ary, bounds, axis)


def _split_along(ary, indices_or_sections, axis: int, min_ndim: int, func: str) -> list[Tensor]:
    check_tensor(ary, func, "ary")
    if ary.ndim < min_ndim:
        raise ValueError(f"{func}: only works on arrays of {min_ndim} or more dimensions, got {ary.ndim}")
    return split(ary, indices_or_sections, axis)


def hsplit(ary: Tensor, indices_or_sections: int | Sequence[int]) -> list[Tensor]:
    """:func:`split` along axis 1 (axis 0 for 1-D arrays)."""
    return _split_along(ary, indices_or_sections, 1 if getattr(ary, "ndim", 0) > 1 else 0, 1, "hsplit")


def vsplit(ary: Tensor, indices_or_sections: int | Sequence[int]) -> list[Tensor]:
    """:func:`split` along axis 0 of an array of at least 2 dimensions."""
    return _split_along(ary, indices_or_sections, 0, 2, "vsplit")


def dsplit(ary: Tensor, indices_or_sections: int | Sequence[int]) -> list[Tensor]:
    """:func:`split` along axis 2 of an array of at least 3 dimensions."""
    return _split_along(ary, indices_or_sections, 2, 3, "dsplit")


def column_stack(tup: Sequence[Tensor]) -> Tensor:
    """1-D arrays as columns of a 2-D array (2-D arrays joined as they are)."""
    arrays = _list(tup, "column_stack")
    return _mn.concat([_mn.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays], axis=1)


def row_stack(tup: Sequence[Tensor]) -> Tensor:
    """NumPy's old name of ``vstack``: arrays joined row-wise."""
    return _mn.concat([atleast_2d(a) for a in _list(tup, "row_stack")], axis=0)


def dstack(tup: Sequence[Tensor]) -> Tensor:
    """Arrays joined along the third axis, after making each at least 3-D."""
    return _mn.concat([atleast_3d(a) for a in _list(tup, "dstack")], axis=2)


def fliplr(m: Tensor) -> Tensor:
    """A view with the columns (axis 1) reversed."""
    if check_tensor(m, "fliplr", "m").ndim < 2:
        raise ValueError(f"fliplr: m must be at least 2-D, got shape {m.shape}")
    return _mn.flip(m, axis=1)


def flipud(m: Tensor) -> Tensor:
    """A view with the rows (axis 0) reversed."""
    if check_tensor(m, "flipud", "m").ndim < 1:
        raise ValueError("flipud: m must be at least 1-D")
    return _mn.flip(m, axis=0)


def rot90(m: Tensor, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Tensor:
    """A view of ``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second)."""
    check_tensor(m, "rot90", "m")
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be two axes, got {axes!r}")
    a0, a1 = (check_axis(a, m.ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: axes must be different, got {axes!r}")
    k = integer(k, "rot90", "k") % 4
    if k == 0:
        return m
    if k == 2:
        return _mn.flip(m, axis=(a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _mn.permute_dims(_mn.flip(m, axis=a1), tuple(perm))
    return _mn.flip(_mn.permute_dims(m, tuple(perm)), axis=a1)


def _positions(obj, n: int, func: str, dev) -> Tensor | slice | int:
    """``obj`` of delete/insert: an int, a slice, or an integer array (a sequence of ints too)."""
    if isinstance(obj, slice):
        return obj
    if isinstance(obj, Tensor):
        check_same_device(func, obj)
        return obj
    if isinstance(obj, (list, tuple)):
        return asarray([integer(v, func, "obj") for v in obj], dtype=default_int(dev), device=dev)
    return integer(obj, func, "obj")


def delete(arr: Tensor, obj: int | slice | Sequence[int] | Tensor, axis: int | None = None) -> Tensor:
    """``arr`` without the entries at ``obj`` (an index, a slice, indices, or a boolean mask) along
    ``axis`` (of the flattened array when None). Index arrays are read on the host: the result's length
    depends on how many distinct indices they hold."""
    check_tensor(arr, "delete", "arr")
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = check_axis(axis, arr.ndim, "delete")
    n = arr.shape[axis]
    pos = _positions(obj, n, "delete", arr._dev)
    keep = full(n, True, dtype=dt.bool_, device=arr._dev)
    if isinstance(pos, int):
        if not -n <= pos < n:
            raise IndexError(f"delete: index {pos} is out of bounds for axis {axis} with size {n}")
        keep[pos] = False
    elif isinstance(pos, slice):
        keep[pos] = False
    elif pos._dtype is dt.bool_:
        if pos._shape != (n,):
            raise ValueError(f"delete: a boolean mask must have the axis's length {n}, got shape {pos._shape}")
        keep = _ew.logical_not(pos)
    else:
        if pos._dtype.kind not in dt.INTEGER_KINDS:
            raise IndexError(f"delete: indices must be integers, got {pos._dtype.name}")
        if pos.size:
            keep[ravel(pos)] = False
    idx = nonzero(keep)[0]
    return _take(arr, idx, axis)


def _take(arr: Tensor, idx: Tensor, axis: int) -> Tensor:
    key = (slice(None),) * axis + (idx,)
    return arr[key]


def insert(arr: Tensor, obj: int | slice | Sequence[int] | Tensor, values, axis: int | None = None) -> Tensor:
    """``arr`` with ``values`` inserted before the index or indices ``obj`` along ``axis`` (of the
    flattened array when None), with NumPy's broadcasting of ``values`` in each case."""
    check_tensor(arr, "insert", "arr")
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = check_axis(axis, arr.ndim, "insert")
    n = arr.shape[axis]
    dev = arr._dev
    v = values if isinstance(values, Tensor) else asarray(values, device=dev)
    v = astype(v, arr._dtype)
    v = _mn.reshape(v, (1,) * (arr.ndim - v.ndim) + v.shape)  # NumPy's ndmin
    if isinstance(obj, slice):
        obj = list(range(*obj.indices(n)))
    lead = (slice(None),) * axis
    if isinstance(obj, (list, tuple, Tensor)):
        idx = _positions(obj, n, "insert", dev)
        if idx.ndim > 1:
            raise ValueError(f"insert: index array must be 0-D or 1-D, got shape {idx.shape}")
        if idx.size != 1:
            return _insert_each(arr, idx, v, axis)
        # one index in a sequence or array: a block insert, without the 0-D case's moveaxis (NumPy)
        block_at, move = int(ravel(idx)[0]), False
    else:
        block_at, move = integer(obj, "insert", "obj"), True
    if not -n <= block_at <= n:
        raise IndexError(f"insert: index {block_at} is out of bounds for axis {axis} with size {n}")
    i = block_at + n if block_at < 0 else block_at
    if move:
        v = _mn.moveaxis(v, 0, axis)
    shape = arr.shape[:axis] + (v.shape[axis],) + arr.shape[axis + 1:]
    return _mn.concat([arr[lead + (slice(0, i),)], _mn.broadcast_to(v, shape), arr[lead + (slice(i, None),)]],
                      axis=axis)


def _insert_each(arr: Tensor, idx: Tensor, v: Tensor, axis: int) -> Tensor:
    """``arr`` with one slice of ``v`` inserted before each of the indices ``idx`` along ``axis``."""
    n, dev = arr.shape[axis], arr._dev
    lead = (slice(None),) * axis
    k = idx.shape[0]
    idx = astype(where(_ew.less(idx, 0), _ew.add(idx, n), idx), default_int(dev))
    # a new value moves up by its rank among the new indices (stable); an old element by the number of
    # new indices at or before it: both on the device, nothing read on the host
    from ._searching import searchsorted
    from ._sorting import argsort, sort
    rank = zeros(k, dtype=default_int(dev), device=dev)
    rank[argsort(idx, stable=True)] = _arange_index(k, dev)
    new_pos = _ew.add(idx, rank)
    old = _arange_index(n, dev)
    old_pos = _ew.add(old, searchsorted(sort(idx), old, side="right"))
    out = zeros(arr.shape[:axis] + (n + k,) + arr.shape[axis + 1:], dtype=arr._dtype, device=dev)
    out[lead + (old_pos,)] = arr
    out[lead + (new_pos,)] = _mn.broadcast_to(v, arr.shape[:axis] + (k,) + arr.shape[axis + 1:])
    return out


def _arange_index(n: int, dev) -> Tensor:
    from ._creation import arange
    return arange(n, dtype=default_int(dev), device=dev)


def append(arr: Tensor, values: Tensor, axis: int | None = None) -> Tensor:
    """``values`` appended to ``arr`` along ``axis`` (both flattened when None)."""
    check_tensor(arr, "append", "arr")
    check_tensor(values, "append", "values")
    if axis is None:
        return _mn.concat([ravel(arr), ravel(values)], axis=0)
    return _mn.concat([arr, values], axis=axis)


def resize(a: Tensor, new_shape: int | Sequence[int]) -> Tensor:
    """A new array of ``new_shape`` filled with ``a``'s elements repeated in C order."""
    check_tensor(a, "resize", "a")
    shape = (integer(new_shape, "resize", "new_shape"),) if not isinstance(new_shape, (list, tuple)) else \
        tuple(integer(s, "resize", "new_shape") for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {shape}")
    total = math.prod(shape)
    flat = ravel(a)
    if total == 0 or a.size == 0:
        return zeros(shape, dtype=a._dtype, device=a._dev)
    reps = -(-total // a.size)
    return _mn.reshape(_mn.tile(flat, (reps,))[:total], shape)


def rollaxis(a: Tensor, axis: int, start: int = 0) -> Tensor:
    """NumPy's old ``rollaxis``: a view with ``axis`` moved to before ``start``."""
    check_tensor(a, "rollaxis", "a")
    axis = check_axis(axis, a.ndim, "rollaxis")
    start = integer(start, "rollaxis", "start")
    if not -a.ndim <= start <= a.ndim:
        raise IndexError(f"rollaxis: start {start} is out of bounds for an array of {a.ndim} dimensions")
    start %= a.ndim + 1
    if axis < start:
        start -= 1
    return a if axis == start else _mn.moveaxis(a, axis, start)


def block(arrays) -> Tensor:
    """An array assembled from nested lists of blocks: the innermost lists join along the last axis, the
    next ones along the second-to-last, and so on."""
    def depth(x) -> int:
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)

    def ndim_of(x) -> int:
        return builtins.max(ndim_of(y) for y in x) if isinstance(x, list) else check_tensor(x, "block", "arrays").ndim

    if isinstance(arrays, tuple):
        raise TypeError("block: arrays must be nested lists, not tuples")
    d = depth(arrays)
    nd = builtins.max(d, ndim_of(arrays))

    def build(x, level: int) -> Tensor:
        if not isinstance(x, list):
            t = check_tensor(x, "block", "arrays")
            return _mn.reshape(t, (1,) * (nd - t.ndim) + t.shape)
        if not x:
            raise ValueError("block: lists cannot be empty")
        return _mn.concat([build(y, level + 1) for y in x], axis=-(d - level))

    return build(arrays, 0)


def diagflat(v: Tensor, k: int = 0) -> Tensor:
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    from ._numpy_compat import diag
    return diag(ravel(check_tensor(v, "diagflat", "v")), k)


def diagonal(a: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """A view of the ``offset`` diagonal of the ``axis1``/``axis2`` planes, as the last axis (NumPy's
    default axes are the first two; ``linalg.diagonal`` uses the last two)."""
    from . import linalg
    check_tensor(a, "diagonal", "a")
    if a.ndim < 2:
        raise ValueError(f"diagonal: a must be at least 2-D, got shape {a.shape}")
    i, j = check_axis(axis1, a.ndim, "diagonal"), check_axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same, got {axis1}, {axis2}")
    rest = [d for d in range(a.ndim) if d not in (i, j)]
    return linalg.diagonal(_mn.permute_dims(a, tuple(rest) + (i, j)), offset=integer(offset, "diagonal", "offset"))


def trim_zeros(filt: Tensor, trim: str = "fb", axis=None) -> Tensor:
    """A view of the 1-D ``filt`` without its leading ('f') and/or trailing ('b') zeros; where they end is
    read on the host."""
    check_tensor(filt, "trim_zeros", "filt")
    if filt.ndim != 1:
        raise ValueError(f"trim_zeros: filt must be 1-D, got shape {filt.shape}")
    trim = trim.lower()
    if not set(trim) <= {"f", "b"}:
        raise ValueError(f"trim_zeros: trim must be a combination of 'f' and 'b', got {trim!r}")
    nz = nonzero(filt)[0]
    if nz.shape[0] == 0:
        return filt[0:0]
    from ._transfer import to_numpy
    first, last = (int(v) for v in to_numpy(_mn.stack([nz[0], nz[-1]]), "trim_zeros"))
    return filt[(first if "f" in trim else 0):(last + 1 if "b" in trim else filt.shape[0])]


def ediff1d(ary: Tensor, to_end=None, to_begin=None) -> Tensor:
    """The differences of consecutive elements of the flattened ``ary``, with ``to_begin``/``to_end``
    (arrays or scalars) around them."""
    a = ravel(check_tensor(ary, "ediff1d", "ary"))
    parts = [_ew.subtract(a[1:], a[:-1])]
    for where_, v in ((0, to_begin), (1, to_end)):
        if v is not None:
            v = ravel(v) if isinstance(v, Tensor) else _mn.reshape(asarray(v, dtype=a._dtype, device=a._dev), (-1,))
            parts.insert(0 if where_ == 0 else len(parts), astype(v, parts[0]._dtype))
    return _mn.concat(parts)


def apply_along_axis(func1d: Callable, axis: int, arr: Tensor, *args, **kwargs) -> Tensor:
    """``func1d`` applied to each 1-D slice of ``arr`` along ``axis`` (a Python loop over the slices, each
    call on the device); the results replace that axis."""
    check_tensor(arr, "apply_along_axis", "arr")
    axis = check_axis(axis, arr.ndim, "apply_along_axis")
    moved = _mn.moveaxis(arr, axis, -1)
    batch = moved.shape[:-1]
    if 0 in batch:
        raise ValueError("apply_along_axis: cannot apply to an array with an empty outer axis")
    outs = []
    for idx in itertools.product(*(range(n) for n in batch)):
        r = func1d(moved[idx], *args, **kwargs)
        outs.append(r if isinstance(r, Tensor) else asarray(r, device=arr._dev))
    res = _mn.reshape(_mn.stack(outs), batch + outs[0].shape)
    nd = outs[0].ndim
    # the result's axes replace the slice axis
    order = list(range(axis)) + list(range(len(batch), len(batch) + nd)) + list(range(axis, len(batch)))
    return _mn.permute_dims(res, tuple(order))


def apply_over_axes(func: Callable, a: Tensor, axes: int | Sequence[int]) -> Tensor:
    """``func(a, axis)`` applied over each of ``axes`` in turn, keeping the reduced axes as size 1."""
    check_tensor(a, "apply_over_axes", "a")
    for ax in ([axes] if isinstance(axes, int) else list(axes)):
        ax = check_axis(ax, a.ndim, "apply_over_axes")
        r = func(a, ax)
        if r.ndim == a.ndim - 1:
            r = _mn.expand_dims(r, axis=ax)
        elif r.ndim != a.ndim:
            raise ValueError("apply_over_axes: function is not returning an array of the correct shape")
        a = r
    return a


def choose(a: Tensor, choices: Sequence[Tensor], out: Tensor | None = None, mode: str = "raise") -> Tensor:
    """``choices[a[i]][i]`` for each element (all broadcast together). ``mode``: 'raise' (an index out of
    range is an IndexError, read on the host), 'wrap' or 'clip'."""
    check_tensor(a, "choose", "a")
    if a._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"choose: a must be an integer array, got {a._dtype.name}")
    choices = _list(choices, "choose")
    n = len(choices)
    a = index_mode(a, n, mode, "choose")
    if mode == "raise" and a.size:
        lo, hi = index_range(a, "choose")
        if lo < 0 or hi >= n:
            raise ValueError(f"choose: invalid entry {lo if lo < 0 else hi} in choice array (of {n} choices)")
    r = choices[-1]
    for k in range(n - 2, -1, -1):
        r = where(_ew.equal(a, k), choices[k], r)
    r = _mn.broadcast_to(r, _mn.broadcast_shapes(r.shape, a.shape)) if r.shape != a.shape else r
    return r if out is None else _ew.positive(r, out=out)


def compress(condition: Tensor, a: Tensor, axis: int | None = None) -> Tensor:
    """The slices of ``a`` along ``axis`` (of the flattened array when None) where the 1-D boolean
    ``condition`` is true (a shorter condition leaves out the rest)."""
    check_tensor(condition, "compress", "condition")
    check_tensor(a, "compress", "a")
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {condition.shape}")
    if axis is None:
        a, axis = ravel(a), 0
    axis = check_axis(axis, a.ndim, "compress")
    n = a.shape[axis]
    if condition.shape[0] > n:
        raise IndexError(f"compress: condition of length {condition.shape[0]} is longer than axis {axis} ({n})")
    cond = astype(condition, dt.bool_) if condition._dtype is not dt.bool_ else condition
    return _take(a, nonzero(cond)[0], axis)


def extract(condition: Tensor, arr: Tensor) -> Tensor:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is true (non-zero)."""
    check_tensor(condition, "extract", "condition")
    check_tensor(arr, "extract", "arr")
    cond = ravel(condition)
    return ravel(arr)[nonzero(cond)[0]]


def select(condlist: Sequence[Tensor], choicelist: Sequence[Tensor], default=0) -> Tensor:
    """For each element, the value of the first choice whose condition holds, else ``default``."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: list of cases must be same length as list of conditions "
                         f"({len(condlist)} and {len(choicelist)})")
    if not condlist:
        raise ValueError("select: select with an empty condition list is not possible")
    for c in condlist:
        if check_tensor(c, "select", "condlist")._dtype is not dt.bool_:
            raise TypeError(f"select: invalid entry in condlist: should be boolean ndarray, got {c._dtype.name}")
    if not any(isinstance(c, Tensor) for c in choicelist):
        raise TypeError("select: at least one choice must be an array")
    r = default
    for c, v in zip(reversed(condlist), reversed(choicelist)):
        r = where(c, v, r)
    return r if isinstance(r, Tensor) else asarray(r, device=condlist[0]._dev)


def piecewise(x: Tensor, condlist, funclist, *args, **kw) -> Tensor:
    """``funclist[i](x)`` (or the constant ``funclist[i]``) where ``condlist[i]`` holds; with one more
    function than conditions, that one where none holds; elsewhere 0. Functions are applied to the whole
    array and the results selected (NumPy applies them to the selected elements only)."""
    check_tensor(x, "piecewise", "x")
    if isinstance(condlist, Tensor):  # one condition shaped like x, or a stack of them
        conds = [condlist] if condlist.ndim == x.ndim else [condlist[i] for i in range(condlist.shape[0])]
    else:
        conds = list(condlist)
    funcs = list(funclist) if isinstance(funclist, (list, tuple)) else [funclist]
    if len(funcs) == len(conds) + 1:
        from functools import reduce
        none = _ew.logical_not(reduce(_ew.logical_or, conds))
        conds.append(none)
    elif len(funcs) != len(conds):
        raise ValueError(f"piecewise: with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} "
                         f"functions are expected, got {len(funcs)}")
    out = zeros(x.shape, dtype=x._dtype, device=x._dev)
    for c, f in zip(conds, funcs):
        v = f(x, *args, **kw) if callable(f) else f
        if isinstance(v, Tensor):
            v = astype(v, x._dtype)
        out = where(check_tensor(c, "piecewise", "condlist"), v, out)
    return out


def put(a: Tensor, ind: Tensor | Sequence[int] | int, v, mode: str = "raise") -> None:
    """``a.flat[ind] = v`` in place (``v`` repeated to the number of indices); ``a`` must be contiguous.
    ``mode``: 'raise', 'wrap' or 'clip'."""
    flat = _flat_view(a, "put")
    n = flat.shape[0]
    ind = ind if isinstance(ind, Tensor) else asarray(ind, dtype=default_int(a._dev), device=a._dev)
    ind = ravel(ind)
    ind = index_mode(ind, n, mode, "put")
    k = ind.shape[0]
    if k == 0:
        return
    if mode == "raise":  # NumPy's IndexError, before anything is written: the index range is read on the host
        lo, hi = index_range(ind, "put")
        if lo < -n or hi >= n:
            raise IndexError(f"put: index {lo if lo < -n else hi} is out of bounds for size {n}")
    v = v if isinstance(v, Tensor) else asarray(v, device=a._dev)
    v = ravel(astype(v, a._dtype))
    if v.shape[0] != k:
        v = resize(v, k)
    flat[ind] = v


def _flat_view(a: Tensor, func: str) -> Tensor:
    check_tensor(a, func, "a")
    flat = _mn.reshape(a, (-1,))
    if flat._buf is not a._buf:
        raise ValueError(f"{func}: a must be contiguous to be written through its flat view")
    return flat


def place(arr: Tensor, mask: Tensor, vals) -> None:
    """Write ``vals`` (repeated as needed) into the elements of ``arr`` where ``mask`` is true, in place."""
    flat = _flat_view(arr, "place")
    check_tensor(mask, "place", "mask")
    if mask.size != arr.size:
        raise ValueError(f"place: mask and data must be the same size, got {mask.size} and {arr.size}")
    idx = nonzero(ravel(mask))[0]
    k = idx.shape[0]
    if k == 0:
        return
    v = vals if isinstance(vals, Tensor) else asarray(vals, device=arr._dev)
    if v.size == 0:
        raise ValueError("place: cannot insert from an empty array")
    flat[idx] = resize(astype(ravel(v), arr._dtype), k)


def putmask(a: Tensor, mask: Tensor, values) -> None:
    """``a[i] = values[i]`` where ``mask[i]`` (``values`` repeated to a's size), in place."""
    check_tensor(a, "putmask", "a")
    check_tensor(mask, "putmask", "mask")
    if mask.shape != a.shape:
        raise ValueError(f"putmask: mask and data must be the same size, got {mask.shape} and {a.shape}")
    v = values if isinstance(values, Tensor) else asarray(values, device=a._dev)
    v = _mn.reshape(resize(astype(ravel(v), a._dtype), a.size), a.shape) if v.shape != a.shape else astype(v, a._dtype)
    a[...] = where(mask, v, a)


def copyto(dst: Tensor, src, casting: str = "same_kind", where=True) -> None:
    """Copy ``src`` (broadcast) into ``dst`` in place, where ``where`` holds."""
    check_tensor(dst, "copyto", "dst")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(f"copyto: casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe', "
                         f"got {casting!r}")
    s = src if isinstance(src, Tensor) else asarray(src, device=dst._dev)
    if casting != "unsafe" and s._dtype is not dst._dtype:
        from ._data_type_functions import can_cast
        if casting in ("no", "equiv") or (casting == "safe" and not can_cast(s._dtype, dst._dtype)) or (
                casting == "same_kind" and _KIND_ORDER[s._dtype.kind] > _KIND_ORDER[dst._dtype.kind]):
            raise TypeError(f"copyto: cannot cast {s._dtype.name} to {dst._dtype.name} with casting={casting!r}")
    s = _mn.broadcast_to(astype(s, dst._dtype), dst.shape)
    if where is True:
        dst[...] = s
    else:
        dst[...] = _where(where, s, dst)


_where = where
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def fill_diagonal(a: Tensor, val, wrap: bool = False) -> None:
    """Write ``val`` (repeated as needed) on the main diagonal of ``a`` (at least 2-D, all axes equal
    beyond 2-D), in place; ``wrap`` continues the diagonal of a tall matrix every n+1 rows."""
    flat = _flat_view(a, "fill_diagonal")
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {a.shape}")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else builtins.min(a.shape[1] * a.shape[1], a.size)
    else:
        if len(set(a.shape)) != 1:
            raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length, got {a.shape}")
        step = 1 + sum(math.prod(a.shape[:k]) for k in range(1, a.ndim))
        end = a.size
    view = flat[0:end:step]
    if view.shape[0] == 0:
        return
    v = val if isinstance(val, Tensor) else asarray(val, device=a._dev)
    view[...] = resize(astype(ravel(v), a._dtype), view.shape[0]) if v.ndim else astype(v, a._dtype)


def put_along_axis(arr: Tensor, indices: Tensor, values, axis: int | None) -> None:
    """``arr`` at ``indices`` along ``axis`` set to ``values``, in place (the other axes broadcast)."""
    check_tensor(arr, "put_along_axis", "arr")
    check_tensor(indices, "put_along_axis", "indices")
    if axis is None:
        put(arr, indices, values)
        return
    axis = check_axis(axis, arr.ndim, "put_along_axis")
    if indices.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices must have as many dimensions as arr ({arr.ndim}), "
                         f"got shape {indices.shape}")
    from ._creation import arange
    shape = _mn.broadcast_shapes(tuple(1 if i == axis else n for i, n in enumerate(arr.shape)), indices.shape)
    key = []
    for d in range(arr.ndim):
        if d == axis:
            key.append(_mn.broadcast_to(indices, shape))
        else:
            r = arange(shape[d], dtype=default_int(arr._dev), device=arr._dev)
            key.append(_mn.broadcast_to(_mn.reshape(r, tuple(-1 if j == d else 1 for j in range(arr.ndim))), shape))
    v = values if isinstance(values, Tensor) else asarray(values, device=arr._dev)
    arr[tuple(key)] = _mn.broadcast_to(astype(v, arr._dtype), shape)


def array_equiv(a1: Tensor, a2: Tensor) -> bool:
    """Whether the arrays broadcast together and are equal everywhere (read on the host)."""
    check_tensor(a1, "array_equiv", "a1")
    check_tensor(a2, "array_equiv", "a2")
    try:
        _mn.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    from ._utility import all as _all
    return builtins.bool(_all(_ew.equal(a1, a2)))


def asanyarray(a, dtype: dt.DType | None = None, *, device=None, copy: bool | None = None) -> Tensor:
    """:func:`asarray` (numr has one array class)."""
    return asarray(a, dtype=dtype, device=device, copy=copy)


def ascontiguousarray(a, dtype: dt.DType | None = None, *, device=None) -> Tensor:
    """``a`` as a C-contiguous array of at least one dimension (``a`` itself when it already is one)."""
    t = asarray(a, dtype=dtype, device=device)
    if t.ndim == 0:
        t = _mn.reshape(t, (1,))
    from ._tensor import contiguous_strides
    if t._strides != contiguous_strides(t.shape):
        t = asarray(t, copy=True)
    return t


def asarray_chkfinite(a, dtype: dt.DType | None = None, *, device=None) -> Tensor:
    """:func:`asarray`, with a ValueError when the array holds an infinity or NaN (read on the host)."""
    t = asarray(a, dtype=dtype, device=device)
    if t._dtype.kind in dt.FLOAT_KINDS:
        from ._utility import all as _all
        if not builtins.bool(_all(_ew.isfinite(t))):
            raise ValueError("asarray_chkfinite: array must not contain infs or NaNs")
    return t


def require(a, dtype: dt.DType | None = None, requirements: str | Sequence[str] | None = None, *,
            device=None) -> Tensor:
    """``a`` as an array of ``dtype`` meeting ``requirements`` ('C'/'C_CONTIGUOUS', 'A', 'W', 'O', 'E';
    'F' is refused: numr arrays are C-ordered)."""
    reqs = {r.upper() for r in ([requirements] if isinstance(requirements, str) else requirements or [])}
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "A": "A", "ALIGNED": "A", "W": "W",
             "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E", "F": "F",
             "F_CONTIGUOUS": "F", "FORTRAN": "F"}
    bad = [r for r in reqs if r not in names]
    if bad:
        raise KeyError(f"require: unknown requirement {bad[0]!r}")
    reqs = {names[r] for r in reqs}
    if "F" in reqs:
        raise ValueError("require: Fortran-ordered arrays are not supported (numr arrays are C-ordered)")
    t = asarray(a, dtype=dtype, device=device)
    if "O" in reqs:
        t = asarray(t, copy=True)
    elif "C" in reqs:
        from ._tensor import contiguous_strides
        if t._strides != contiguous_strides(t.shape):
            t = asarray(t, copy=True)
    return t


def _pad_widths(pad_width, ndim: int, func: str, name: str = "pad_width") -> list[tuple]:
    """NumPy's pad_width (and constant_values) forms: n, (n,), (before, after), or one pair per axis."""
    def ints(v):
        return [integer(x, func, name) if name == "pad_width" else _number(x, func, name) for x in v]
    if isinstance(pad_width, (list, tuple)):
        flat = list(pad_width)
        if flat and isinstance(flat[0], (list, tuple)):
            pairs = [tuple(ints(p)) for p in flat]
            if len(pairs) == 1:
                pairs = pairs * ndim
        else:
            v = ints(flat)
            pairs = [(v[0], v[0])] * ndim if len(v) == 1 else [tuple(v)] * ndim if len(v) == 2 else None
    else:
        n = integer(pad_width, func, name) if name == "pad_width" else _number(pad_width, func, name)
        pairs = [(n, n)] * ndim
    if pairs is None or len(pairs) != ndim or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{func}: {name} {pad_width!r} does not fit an array of {ndim} dimensions")
    if name == "pad_width" and any(v < 0 for p in pairs for v in p):
        raise ValueError(f"{func}: index can't contain negative values, got {pad_width!r}")
    return pairs


def _number(v, func: str, name: str):
    if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
        raise TypeError(f"{func}: {name} must hold Python numbers, got {v!r}")
    return v


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad(array: Tensor, pad_width, mode: str = "constant", *, constant_values=0) -> Tensor:
    """``array`` padded along each axis by (before, after) elements: ``mode`` 'constant' (the
    ``constant_values``), 'edge', 'reflect', 'symmetric' or 'wrap', as in NumPy. Each axis is one
    ``concat`` of views (and of gathers of reflected indices), on the device."""
    check_tensor(array, "pad", "array")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    pairs = _pad_widths(pad_width, array.ndim, "pad")
    consts = _pad_widths(constant_values, array.ndim, "pad", "constant_values")
    out = array
    for ax, (before, after) in enumerate(pairs):
        if before == 0 and after == 0:
            continue
        n = out.shape[ax]
        if mode != "constant" and n == 0:
            raise ValueError(f"pad: can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        lead = (slice(None),) * ax
        if mode == "constant":
            def block(k: int, v) -> Tensor:
                shape = out.shape[:ax] + (k,) + out.shape[ax + 1:]
                return full(shape, v, dtype=out._dtype, device=out._dev)
            parts = [block(before, consts[ax][0]), out, block(after, consts[ax][1])]
        elif max(before, after) < n:
            # the padding is one slice of the axis (reversed for reflect/symmetric): concat views
            def part(a: int, b: int, flipped: bool) -> Tensor:
                v = out[lead + (slice(a, b),)]
                return _mn.flip(v, axis=ax) if flipped else v
            mirror = mode in ("reflect", "symmetric")
            shift = 1 if mode == "reflect" else 0
            if mode == "edge":
                def side(k: int, at: int) -> Tensor:
                    shape = out.shape[:ax] + (k,) + out.shape[ax + 1:]
                    return _mn.broadcast_to(out[lead + (slice(at, at + 1),)], shape)
                head, tail = side(before, 0), side(after, n - 1)
            elif mirror:
                head, tail = part(shift, shift + before, True), part(n - shift - after, n - shift, True)
            else:  # wrap
                head, tail = part(n - before, n, False), part(0, after, False)
            parts = [head, out, tail]
        else:
            # wider than the axis: NumPy's repeated reflections, as one gather of computed indices
            idx = _pad_indices(n, before, after, mode)
            parts = [out[lead + (asarray(idx, dtype=default_int(out._dev), device=out._dev),)]]
        out = _mn.concat(parts, axis=ax)
    return out


def _pad_indices(n: int, before: int, after: int, mode: str) -> list[int]:
    """The source index along the axis of each element of the padded axis (host arithmetic on the
    shape: no data)."""
    def source(i: int) -> int:
        if 0 <= i < n:
            return i
        if mode == "edge":
            return 0 if i < 0 else n - 1
        if mode == "wrap":
            return i % n
        if mode == "reflect":
            if n == 1:
                return 0
            period = 2 * (n - 1)
            j = i % period
            return j if j < n else period - j
        period = 2 * n  # symmetric
        j = i % period
        return j if j < n else period - 1 - j
    return [source(i) for i in range(-before, n + after)]
