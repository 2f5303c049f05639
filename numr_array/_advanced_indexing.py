"""Integer-array and boolean-mask indexing (gather and scatter kernels), ``take`` and ``take_along_axis``.

Semantics are NumPy's "vectorized" indexing, of which the standard's integer-array indexing is a subset:
ints and index arrays in a key broadcast together to one shape, which replaces the indexed axes in place
when they are adjacent in the key and goes first otherwise; a boolean mask of M dimensions stands for its
``nonzero()`` (an index array of the mask's count of true elements).

Bounds of index arrays: outside a capture, a small kernel finds each index array's range and the host
checks it (IndexError before anything is gathered or written). Inside ``capture()`` that read is
impossible (and the values may change between replays), so the check is skipped: the standard leaves
out-of-bounds behaviour unspecified, and the kernels clip indices into the axis, so no replay can touch
memory outside the array. A boolean mask's count decides the shape of ``x[mask]``, so reading x[mask]
raises CaptureError inside a capture (``x[mask] = value`` does not need the count when ``value`` does not
depend on it: ``_indexing`` makes that an element-wise masked write, which captures like any other launch).
"""

from __future__ import annotations

from . import _capture
from . import _dtypes as dt
from ._checks import broadcast_shape, broadcast_to_shape, check_axis, check_same_device, check_tensor
from ._launch import launch, new_tensor
from ._transfer import to_numpy
from ._info import default_dtypes_of
from ._tensor import Tensor
from .kernels import K

__all__ = ["take", "take_along_axis"]


def _capturing(dev) -> bool:
    state = _capture.current()
    return state is not None and state.device is dev


def _check_bounds(indices: list[tuple[Tensor, int, int]], func: str) -> None:
    """IndexError for an index array (with its axis's size and number) holding an index outside the axis."""
    for a, n, axis in indices:
        if a.size == 0:
            continue
        if n == 0:
            raise IndexError(f"{func}: cannot index axis {axis} of size 0 with a non-empty index array")
        if _capturing(a._dev):
            continue  # see the module docstring: unchecked in a capture, clipped by the kernels
        r = new_tensor(a._dev, (2,), a._dtype)
        launch(a._dev, K.index_range, (a,), (r,))
        lo, hi = (int(v) for v in to_numpy(r, func))
        if lo < -n or hi >= n:
            raise IndexError(f"{func}: index {lo if lo < -n else hi} is out of bounds for axis {axis} with size {n}")


def _mask_count(mask: Tensor, func: str) -> int:
    """The number of true elements of ``mask``, read by the host (CaptureError inside a capture)."""
    _capture.check_host_read(mask._dev, f"boolean-mask indexing ({func})")
    if mask.size == 0:
        return 0
    c = new_tensor(mask._dev, (), default_dtypes_of(mask._dev)["default_integral"])  # int32 without int64
    launch(mask._dev, K.mask_count, (mask,), (c,))
    return int(to_numpy(c, func))


def _plan(x: Tensor, entries: list, func: str) -> tuple[tuple[int, ...], list[Tensor], dict]:
    """(the shape of ``x[entries]``, the index arrays, the gather/scatter launch's params), validated.

    ``entries`` come from ``_indexing.parse_key`` and hold at least one index array.
    """
    key: list = []
    arrays: list[Tensor] = []
    where: list[tuple[int, int | None]] = []  # (position in key, axis size; None for a mask)
    bounds: list[tuple[Tensor, int, int]] = []
    basic: list[tuple[int, int]] = []  # (position in key, size) of each result axis made by a slice or None
    advanced: list[int] = []  # positions of the ints and arrays, which broadcast together
    shapes: list[tuple[int, ...]] = []
    dim = 0
    for pos, e in enumerate(entries):
        if e is None:
            key.append(None)
            basic.append((pos, 1))
        elif isinstance(e, slice):
            key.append(e)
            basic.append((pos, len(range(*e.indices(x._shape[dim])))))
            dim += 1
        elif type(e) is int:
            key.append(e)
            advanced.append(pos)
            shapes.append(())
            dim += 1
        else:
            key.append(None)  # replaced by the array in the kernel
            advanced.append(pos)
            arrays.append(e)
            if e._dtype is dt.bool_:
                shapes.append((_mask_count(e, func),))
                where.append((pos, None))
                dim += e.ndim
            else:
                shapes.append(e._shape)
                where.append((pos, x._shape[dim]))
                bounds.append((e, x._shape[dim], dim))
                dim += 1
    try:
        joint = broadcast_shape(shapes, func)
    except ValueError:
        raise IndexError(f"{func}: index arrays of shapes {', '.join(map(str, shapes))} cannot be broadcast "
                         "together") from None
    first = advanced[0]
    if advanced == list(range(first, first + len(advanced))):
        shape = [n for p, n in basic if p < first] + list(joint) + [n for p, n in basic if p > first]
    else:  # advanced indices apart from each other: their axes go first (NumPy's rule)
        shape = list(joint) + [n for _, n in basic]
    _check_bounds(bounds, func)
    return tuple(shape), arrays, {"key": tuple(key), "arrays": tuple(where)}


def gather(x: Tensor, entries: list, func: str) -> Tensor:
    """``x[entries]`` for parsed entries holding an index array: a new tensor."""
    shape, arrays, params = _plan(x, entries, func)
    out = new_tensor(x._dev, shape, x._dtype)
    if out.size:
        launch(x._dev, K.gather, (x, *arrays), (out,), params)
    return out


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target``."""
    try:
        return broadcast_shape((shape, target), "") == target
    except ValueError:
        return False


def scatter(x: Tensor, entries: list, value, func: str) -> None:
    """``x[entries] = value`` for parsed entries holding an index array; value already checked by
    ``_indexing.setitem_value`` (a tensor, or a NumPy scalar of x's dtype)."""
    shape, arrays, params = _plan(x, entries, func)
    if type(value) is Tensor:
        if not broadcasts_to(value._shape, shape):
            raise ValueError(f"{func}: value of shape {value._shape} does not broadcast to the indexed shape {shape}")
        value = broadcast_to_shape(value, shape)
    if all(shape):
        launch(x._dev, K.scatter, (value, *arrays), (x,), {**params, "shape": shape})


def _index_tensor(x, indices, func: str) -> None:
    check_tensor(x, func)
    check_tensor(indices, func, "indices")
    check_same_device(func, x, indices)
    if indices._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{func}: indices must have an integer dtype, got {indices._dtype.name}")


def take(x: Tensor, indices: Tensor | int, /, *, axis: int | None = None) -> Tensor:
    """The elements of x at the 1-D integer ``indices`` along ``axis`` (optional only for 1-D x). As in
    NumPy (and Cubed's use of it), a Python int index takes one position and drops the axis."""
    if type(indices) is int:
        check_tensor(x, "take")
        if x.ndim == 0:
            raise ValueError("take: x must have at least one dimension")
        if axis is None and x.ndim != 1:
            raise ValueError(f"take: axis is required for an array of {x.ndim} dimensions")
        axis = check_axis(0 if axis is None else axis, x.ndim, "take")
        n = x._shape[axis]
        if not -n <= indices < n:
            raise IndexError(f"take: index {indices} is out of bounds for axis {axis} of size {n}")
        return x[(slice(None),) * axis + (indices,)]
    _index_tensor(x, indices, "take")
    if indices.ndim != 1:
        raise ValueError(f"take: indices must be 1-D, got shape {indices._shape}")
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take: axis is required for an array of {x.ndim} dimensions")
        axis = 0
    axis = check_axis(axis, x.ndim, "take")
    entries = [slice(None)] * x.ndim
    entries[axis] = indices
    return gather(x, entries, "take")


def take_along_axis(x: Tensor, indices: Tensor, /, *, axis: int = -1) -> Tensor:
    """The elements of x at ``indices`` along ``axis``; the other axes of x and indices broadcast."""
    _index_tensor(x, indices, "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices must have as many dimensions as x ({x.ndim}), "
                         f"got shape {indices._shape}")
    axis = check_axis(axis, x.ndim, "take_along_axis")
    return gather_along(x, indices, axis, "take_along_axis", checked=True)


def gather_along(x: Tensor, indices: Tensor, axis: int, func: str, checked: bool) -> Tensor:
    """take_along_axis's gather of checked arguments (``indices`` with x's dimensions, ``axis`` normalized);
    ``checked``: the indices' bounds are read on the host first (IndexError); callers whose indices are in
    bounds by construction (clipped: quantiles, ...) skip that host read, so they can run inside a capture."""
    n = x._shape[axis]
    others = broadcast_shape((x._shape[:axis] + (1,) + x._shape[axis + 1:],
                              indices._shape[:axis] + (1,) + indices._shape[axis + 1:]), func)
    shape = others[:axis] + (indices._shape[axis],) + others[axis + 1:]
    if checked:
        _check_bounds([(indices, n, axis)], func)
    out = new_tensor(x._dev, shape, x._dtype)
    if out.size:
        launch(x._dev, K.take_along_axis,
               (broadcast_to_shape(x, others[:axis] + (n,) + others[axis + 1:]), broadcast_to_shape(indices, shape)),
               (out,), {"n": n, "axis": axis})
    return out
