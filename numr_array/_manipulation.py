"""Manipulation functions of the standard (and meshgrid).

View functions (broadcast_*, expand_dims, flip, moveaxis, permute_dims, matrix_transpose, squeeze,
unstack, meshgrid, and reshape where the strides allow) return tensors over the input's buffer; writing
through one writes the input. The others allocate their result and fill it with "copy" launches into
views of it (concat, stack, tile, repeat by an int), or with one kernel (roll, repeat by an array).
"""

from __future__ import annotations

import operator

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._creation import MAX_SIZE, normalize_shape
from ._checks import (broadcast_shape as _broadcast, broadcast_to_shape, check_axis, check_axes, check_same_device,
                      check_tensor, promote_on)
from ._launch import launch, make_view, new_tensor
from ._transfer import to_numpy
from ._tensor import Tensor, contiguous_strides, _size
from .kernels import CHECK_LAUNCHES, K

#: the compiled call of a cached concat plan (numr_array/_speedups.c), or None
_speedups = _rt.speedups

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
           "permute_dims", "matrix_transpose", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
           "meshgrid"]


def _tensors(arrays, func: str) -> list[Tensor]:
    """A non-empty list or tuple of tensors on one device."""
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{func}: arrays must be a list or tuple of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"{func}: needs at least one array")
    for a in arrays:
        if type(a) is not Tensor:  # (the checks below name the offending one)
            for i, a in enumerate(arrays):
                check_tensor(a, func, f"arrays[{i}]")
    check_same_device(func, *arrays)
    return list(arrays)


def _result_dtype(arrays: list[Tensor], func: str) -> dt.DType:
    dtype = arrays[0]._dtype
    for a in arrays[1:]:
        if a._dtype is not dtype:
            dtype = promote_on(a._dev, dtype, a._dtype, func)
    return dtype


def _int(value, func: str, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{func}: {name} must be an int, got {value!r}")
    return operator.index(value)


def _int_tuple(value, func: str, name: str) -> tuple[int, ...]:
    """An int or a tuple of ints, as a tuple."""
    if isinstance(value, tuple):
        return tuple(_int(v, func, name) for v in value)
    return (_int(value, func, name),)


def _copy_into(src: Tensor, dst: Tensor) -> None:
    """Write ``src`` (of dst's shape, or broadcastable to it) into the view ``dst``."""
    if dst.size:
        launch(dst._dev, K.copy, (broadcast_to_shape(src, dst._shape),), (dst,))


# --- broadcasting -------------------------------------------------------------------------------------

def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to; () for no shapes; ValueError when incompatible."""
    shapes = tuple(normalize_shape(s, "broadcast_shapes") for s in shapes)
    return _broadcast(shapes, "broadcast_shapes") if shapes else ()


def broadcast_arrays(*arrays: Tensor) -> tuple[Tensor, ...]:
    """Views of ``arrays`` broadcast to their common shape."""
    if not arrays:
        return ()
    arrays = _tensors(arrays, "broadcast_arrays")
    shape = _broadcast([a._shape for a in arrays], "broadcast_arrays")
    return tuple(broadcast_to_shape(a, shape) for a in arrays)


def broadcast_to(x: Tensor, /, shape: tuple[int, ...]) -> Tensor:
    """A view of ``x`` broadcast to ``shape``; ValueError when x cannot broadcast to it."""
    check_tensor(x, "broadcast_to")
    shape = normalize_shape(shape, "broadcast_to")
    if len(shape) < x.ndim or _broadcast((x._shape, shape), "broadcast_to") != shape:
        raise ValueError(f"broadcast_to: an array of shape {x._shape} cannot be broadcast to {shape}")
    if _size(shape) * x._dtype.np.itemsize > MAX_SIZE:  # a view too, NumPy's and CuPy's, has a byte size
        raise ValueError(f"broadcast_to: {shape} of {x._dtype.name} is larger than an array can be")
    return broadcast_to_shape(x, shape)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D arrays, as broadcast views of them ('xy': Cartesian, 'ij': matrix order)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return ()
    arrays = _tensors(arrays, "meshgrid")
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(f"meshgrid: arrays must be 1-D, arrays[{i}] has shape {a._shape}")
        if a._dtype is not arrays[0]._dtype:
            raise TypeError(f"meshgrid: arrays must share one dtype, got {arrays[0]._dtype.name} and {a._dtype.name}")
    shape = [a._shape[0] for a in arrays]
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
        axes[0], axes[1] = 1, 0
    out = []
    for a, ax in zip(arrays, axes):
        strides = [0] * len(shape)
        strides[ax] = a._strides[0]
        out.append(make_view(a, tuple(shape), tuple(strides), a._offset))
    return tuple(out)


# --- views of the same elements -----------------------------------------------------------------------

def permute_dims(x: Tensor, /, axes: tuple[int, ...]) -> Tensor:
    """A view of x with its axes reordered (negative axes count from the end)."""
    check_tensor(x, "permute_dims")
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"permute_dims: axes must be a tuple of ints, got {axes!r}")
    if len(axes) != x.ndim:
        raise ValueError(f"permute_dims: axes {tuple(axes)} does not name each of the {x.ndim} dimensions once")
    axes = tuple(check_axis(a, x.ndim, "permute_dims") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} dimensions")
    return make_view(x, tuple(x._shape[a] for a in axes), tuple(x._strides[a] for a in axes), x._offset)


def transposed(x: Tensor) -> Tensor:
    """``x.T`` of a 2-D tensor (the caller checks that): permute_dims(x, (1, 0)) without its checks, and its
    NumPy view, where x has one, x's transposed (a fraction of the cost of making one at its first launch)."""
    (n0, n1), (s0, s1) = x._shape, x._strides
    t = make_view(x, (n1, n0), (s1, s0), x._offset)
    v = x._view
    if type(v) is np.ndarray:
        t._view = v.T
    return t


def matrix_transpose(x: Tensor, /) -> Tensor:
    """A view of x with its last two axes swapped."""
    check_tensor(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {x.shape}")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return permute_dims(x, axes)


def moveaxis(x: Tensor, source, destination, /) -> Tensor:
    """A view of x with the axes ``source`` moved to the positions ``destination``."""
    check_tensor(x, "moveaxis")
    src = tuple(check_axis(a, x.ndim, "moveaxis") for a in _int_tuple(source, "moveaxis", "source"))
    dst = tuple(check_axis(a, x.ndim, "moveaxis") for a in _int_tuple(destination, "moveaxis", "destination"))
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} differ in length")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: repeated axis in source {source} or destination {destination}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def expand_dims(x: Tensor, /, axis: int | tuple[int, ...]) -> Tensor:
    """A view of x with a size-1 axis inserted at each position of ``axis`` (positions in the result)."""
    check_tensor(x, "expand_dims")
    axes = _int_tuple(axis, "expand_dims", "axis")
    ndim = x.ndim + len(axes)
    new = sorted(check_axis(a, ndim, "expand_dims") for a in axes)
    if len(set(new)) != len(new):
        raise ValueError(f"expand_dims: axis {axis} names the same position twice")
    shape, strides = list(x._shape), list(x._strides)
    for a in new:
        shape.insert(a, 1)
        strides.insert(a, 0)
    return make_view(x, tuple(shape), tuple(strides), x._offset)


def squeeze(x: Tensor, /, axis: int | tuple[int, ...]) -> Tensor:
    """A view of x without the size-1 axes ``axis``; ValueError for an axis whose size is not 1."""
    check_tensor(x, "squeeze")
    if axis is None:
        raise TypeError("squeeze: axis must be an int or a tuple of ints, not None")
    axes = check_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x._shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x._shape[a]}, not 1 (shape {x._shape})")
    keep = [i for i in range(x.ndim) if i not in axes]
    return make_view(x, tuple(x._shape[i] for i in keep), tuple(x._strides[i] for i in keep), x._offset)


def flip(x: Tensor, /, *, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """A view of x with the order of elements reversed along ``axis`` (all axes when None)."""
    check_tensor(x, "flip")
    strides = list(x._strides)
    offset = x._offset
    for a in check_axes(axis, x.ndim, "flip"):
        n = x._shape[a]
        if n:
            offset += (n - 1) * strides[a]
        strides[a] = -strides[a]
    return make_view(x, x._shape, tuple(strides), offset)


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of x along ``axis``, as views."""
    check_tensor(x, "unstack")
    axis = check_axis(axis, x.ndim, "unstack")
    shape = x._shape[:axis] + x._shape[axis + 1:]
    strides = x._strides[:axis] + x._strides[axis + 1:]
    st = x._strides[axis]
    return tuple(make_view(x, shape, strides, x._offset + i * st) for i in range(x._shape[axis]))


# --- reshape ------------------------------------------------------------------------------------------

def _reshape_target(shape, size: int) -> tuple[int, ...]:
    """``shape`` with its -1 (if any) inferred for an array of ``size`` elements."""
    if isinstance(shape, (tuple, list)):
        dims = [_int(d, "reshape", "each shape entry") for d in shape]
    else:
        dims = [_int(shape, "reshape", "shape")]
    if dims.count(-1) > 1:
        raise ValueError(f"reshape: only one dimension can be -1, got {tuple(dims)}")
    if any(d < -1 for d in dims):
        raise ValueError(f"reshape: negative dimension in shape {tuple(dims)}")
    known = _size(tuple(d for d in dims if d != -1))
    if -1 in dims:
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {tuple(dims)}")
        dims[dims.index(-1)] = size // known
    elif known != size:
        raise ValueError(f"reshape: cannot reshape an array of size {size} into shape {tuple(dims)}")
    return tuple(dims)


def _view_strides(x: Tensor, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that present x's elements in C order with ``shape``, or None where that needs a copy.

    NumPy's algorithm: group the axes of both shapes into runs of equal size; each run of old axes must
    be contiguous relative to itself (size-1 axes left out, as their strides do not matter).
    """
    if x.size == 0:
        return contiguous_strides(shape)
    old = [(n, s) for n, s in zip(x._shape, x._strides) if n != 1]
    new = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(old):
        np_, op = shape[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= shape[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new[k - 1] = new[k] * shape[k]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    last = new[ni - 1] if ni else 1
    for k in range(ni, len(shape)):
        new[k] = last
    return tuple(new)


def _contiguous_copy(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A new C-contiguous tensor of ``shape`` holding x's elements in C order."""
    out = new_tensor(x._dev, shape, x._dtype)
    _copy_into(x, make_view(out, x._shape, contiguous_strides(x._shape), 0))
    return out


def reshape(x: Tensor, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Tensor:
    """x's elements (in C order) with ``shape`` (one entry may be -1): a view where the strides allow,
    else a copy; ``copy=True`` always copies, ``copy=False`` raises ValueError where a copy is needed."""
    check_tensor(x, "reshape")
    if copy is not None and type(copy) is not bool:
        raise ValueError(f"reshape: copy must be True, False or None, got {copy!r}")
    shape = _reshape_target(shape, x.size)
    if not copy:
        strides = _view_strides(x, shape)
        if strides is not None:
            return make_view(x, shape, strides, x._offset)
        if copy is False:
            raise ValueError(f"reshape: a view of shape {shape} of this array (shape {x._shape}, strides "
                             f"{x._strides}) is impossible, and copy=False")
    return _contiguous_copy(x, shape)


# --- joining ------------------------------------------------------------------------------------------

#: concat's plans: (axis, client, then each array's dtype and shape) -> what numr_array._speedups.concat
#: needs to repeat the call in C (see _concat_plan); filled by the Python path, the one that validates
_CONCAT_PLANS: dict = {}
_PLANS_MAX = 512


def concat(arrays, /, *, axis: int | None = 0) -> Tensor:
    """The arrays joined along an existing axis (flattened and joined when ``axis`` is None)."""
    if _speedups is not None:
        return _speedups.concat(arrays, axis, _CONCAT_PLANS, _concat)
    return _concat(arrays, axis)


def _concat_plan(arrays: list[Tensor], given: int, axis: int, out: Tensor, places: list) -> None:
    """Keep the plan of a concat (``given``: the axis as the call gave it) whose arrays all have the result's
    dtype, on a client whose results numr_array._speedups can make: a repeated call is then the result's
    allocation and one assignment per array (CpuClient.host_parts), or one device-to-device copy per array
    where each is dense and goes to one range of the result (CudaClient.concat_launch), in C."""
    client = out._dev._client
    if CHECK_LAUNCHES or any(a._dtype is not out._dtype for a in arrays):
        return  # (checked launches: every copy goes through _launch.launch)
    parts = getattr(client, "host_parts", None)
    if parts is not None:
        allocator, native, empty = parts()
        plan = (out._dtype, out._shape, out._strides, out._dev, allocator, out._buf.nbytes, out._dtype.np, empty,
                native, tuple(places))
    else:
        launch = getattr(client, "concat_launch", None)
        if launch is None or _size(out._shape[:axis]) != 1:  # (else an array's place is not one range)
            return
        item = out._dtype.itemsize
        pieces, start = [], 0
        for a in arrays:
            n = _size(a._shape)
            if n and a._strides != contiguous_strides(a._shape):
                return
            pieces.append((start * item, n * item, a._strides, item) if n else None)
            start += n
        part = launch()
        if part is None:
            return
        plan = (out._dtype, out._shape, out._strides, out._dev, client.allocator, out._buf.nbytes) + part + \
            (tuple(pieces),)
    if len(_CONCAT_PLANS) >= _PLANS_MAX:
        _CONCAT_PLANS.clear()
    _CONCAT_PLANS[(given, client) + tuple(v for a in arrays for v in (a._dtype, a._shape))] = plan


def _concat(arrays, axis: int | None) -> Tensor:
    arrays = _tensors(arrays, "concat")
    dtype = _result_dtype(arrays, "concat")
    dev = arrays[0]._dev
    if axis is None:
        out = new_tensor(dev, (sum(a.size for a in arrays),), dtype)
        start = 0
        for a in arrays:
            _copy_into(a, make_view(out, a._shape, contiguous_strides(a._shape), start))
            start += a.size
        return out
    first = arrays[0]._shape
    ndim = len(first)
    given = axis
    if ndim == 0:
        raise ValueError("concat: 0-D arrays cannot be joined along an axis; use axis=None or stack")
    axis = check_axis(axis, ndim, "concat")
    rest = first[:axis] + first[axis + 1:]
    total = 0
    for i, a in enumerate(arrays):
        s = a._shape
        if len(s) != ndim or s[:axis] + s[axis + 1:] != rest:
            raise ValueError(f"concat: arrays[{i}] has shape {s}, which does not match {first} outside axis {axis}")
        total += s[axis]
    out = new_tensor(dev, first[:axis] + (total,) + first[axis + 1:], dtype)
    strides = out._strides
    st = strides[axis]
    start = 0
    lead = (slice(None),) * axis
    places = []
    for a in arrays:
        n = a._shape[axis]
        place = None
        if _size(a._shape):  # (an empty piece copies nothing)
            place = (*lead, slice(start, start + n), Ellipsis)
            launch(dev, K.copy, (a,), (make_view(out, a._shape, strides, start * st, place),))
        places.append(place)
        start += n
    if _speedups is not None and type(given) is int:
        _concat_plan(arrays, given, axis, out, places)
    return out


def stack(arrays, /, axis: int = 0) -> Tensor:
    """The arrays (all of one shape) joined along a new axis at position ``axis`` of the result (``axis``
    also positionally, as NumPy takes it)."""
    arrays = _tensors(arrays, "stack")
    dtype = _result_dtype(arrays, "stack")
    first = arrays[0]
    for i, a in enumerate(arrays):
        if a._shape != first._shape:
            raise ValueError(f"stack: arrays[{i}] has shape {a._shape}, but arrays[0] has {first._shape}")
    axis = check_axis(axis, first.ndim + 1, "stack")
    shape = first._shape[:axis] + (len(arrays),) + first._shape[axis:]
    out = new_tensor(first._dev, shape, dtype)
    strides = out._strides[:axis] + out._strides[axis + 1:]
    for i, a in enumerate(arrays):
        _copy_into(a, make_view(out, a._shape, strides, i * out._strides[axis]))
    return out


# --- repetition and rotation --------------------------------------------------------------------------

def _repeat_each(x: Tensor, r: int, axis: int) -> Tensor:
    """x with each element along ``axis`` repeated ``r`` times: one broadcast copy into a (.., n, r, ..) view."""
    n = x._shape[axis]
    out = new_tensor(x._dev, normalize_shape(x._shape[:axis] + (n * r,) + x._shape[axis + 1:], "repeat"), x._dtype)
    split = x._shape[:axis] + (n, r) + x._shape[axis + 1:]
    src = make_view(x, split, x._strides[:axis + 1] + (0,) + x._strides[axis + 1:], x._offset)
    _copy_into(src, make_view(out, split, contiguous_strides(split), 0))
    return out


def repeat(x: Tensor, repeats: int | Tensor, /, *, axis: int | None = None) -> Tensor:
    """Each element of x repeated ``repeats`` times along ``axis`` (of the flattened x when None).

    ``repeats`` as an array makes the result's shape depend on its values, which the host must read:
    a device synchronisation, and a CaptureError inside ``capture()``.
    """
    check_tensor(x, "repeat")
    if axis is None:
        n = x.size
    else:
        axis = check_axis(axis, x.ndim, "repeat")
        n = x._shape[axis]
    if type(repeats) is not Tensor:
        counts = [_int(repeats, "repeat", "repeats")]
    else:
        check_same_device("repeat", x, repeats)
        if repeats._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"repeat: repeats must be an int or an integer array, got a {repeats._dtype.name} array")
        if repeats._shape not in ((1,), (n,)):
            raise ValueError(f"repeat: repeats of shape {repeats._shape} does not broadcast to ({n},)")
        _capture.check_host_read(x._dev, "repeat with an array of repeats")
        counts = [int(c) for c in to_numpy(repeats, "repeat")]
    if any(c < 0 for c in counts):
        raise ValueError(f"repeat: repeats must be non-negative, got {min(counts)}")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    if len(counts) == 1:
        return _repeat_each(x, counts[0], axis)
    shape = normalize_shape(x._shape[:axis] + (sum(counts),) + x._shape[axis + 1:], "repeat")
    out = new_tensor(x._dev, shape, x._dtype)
    if out.size:
        launch(x._dev, K.repeat, (x,), (out,), {"repeats": tuple(counts), "axis": axis})
    return out


def tile(x: Tensor, repetitions: tuple[int, ...], /) -> Tensor:
    """x repeated ``repetitions[i]`` times along axis i (shapes aligned on the right, padded with 1s)."""
    check_tensor(x, "tile")
    if not isinstance(repetitions, (tuple, list)):
        raise TypeError(f"tile: repetitions must be a tuple of ints, got {repetitions!r}")
    reps = tuple(_int(r, "tile", "repetitions") for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + x._shape
    strides = (0,) * (ndim - x.ndim) + x._strides
    out = new_tensor(x._dev, normalize_shape(tuple(r * n for r, n in zip(reps, shape)), "tile"), x._dtype)
    # out as (r0, n0, r1, n1, ...) and x as (1, n0, 1, n1, ...) broadcast to it: one copy
    split = sum(zip(reps, shape), ())
    src = make_view(x, split, sum(((0, s) for s in strides), ()), x._offset)
    _copy_into(src, make_view(out, split, contiguous_strides(split), 0))
    return out


def roll(x: Tensor, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Tensor:
    """x with its elements shifted by ``shift`` along ``axis`` (of the flattened x when None), wrapping."""
    check_tensor(x, "roll")
    shifts = _int_tuple(shift, "roll", "shift")
    if axis is None:
        if isinstance(shift, tuple):
            raise ValueError(f"roll: shift {shift} is a tuple, so axis must be a tuple of the same length")
        params = {"shift": shifts[0] % x.size if x.size else 0, "axis": None}
        moves = bool(params["shift"])
    else:
        axes = tuple(check_axis(a, x.ndim, "roll") for a in _int_tuple(axis, "roll", "axis"))
        if isinstance(shift, tuple) and len(shifts) != len(axes):
            raise ValueError(f"roll: shift {shift} and axis {axis} differ in length")
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        total = [0] * x.ndim
        for s, a in zip(shifts, axes):
            total[a] += s  # a repeated axis rolls by the sum of its shifts
        moved = tuple(a for a in range(x.ndim) if x._shape[a] and total[a] % x._shape[a])
        params = {"shift": tuple(total[a] % x._shape[a] for a in moved), "axis": moved}
        moves = bool(moved)
    out = new_tensor(x._dev, x._shape, x._dtype)
    if not moves:
        _copy_into(x, out)
    elif out.size:
        launch(x._dev, K.roll, (x,), (out,), params)
    return out
