"""Set functions: isin and the unique_* family.

Uniqueness is value equality, as the standard asks: every NaN (and every complex value with a NaN part)
is its own unique value with a count of one, while -0.0 and +0.0 are one value (the one occurring first).
Unique values come out in ascending order (NaNs last). Their number depends on the data, so the host
reads it: the unique_* functions cannot run inside a capture.
"""

from __future__ import annotations

from typing import NamedTuple

from . import _capture
from . import _dtypes as dt
from ._checks import check_tensor, promote_on
from ._launch import launch, new_tensor, result
from ._transfer import to_numpy
from ._searching import scalar_tensor
from ._statistical import check_flag, index_dtype
from ._tensor import Tensor
from .kernels import K

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(x, func: str, want: tuple[str, ...]) -> dict[str, Tensor]:
    """values and the ``want``ed extras (indices, inverse_indices, counts) of the unique values of x.

    One kernel sorts the flattened x and marks where each run of equal values starts; the host reads
    how many runs there are, and a second kernel gathers the results into tensors of exactly that size.
    The values are x's own elements at their first occurrences (so -0.0 if it comes before +0.0)."""
    check_tensor(x, func)
    dev = x._dev
    _capture.check_host_read(dev, func)
    idx = index_dtype(dev)
    n = x.size
    if n == 0:
        k = 0
    else:
        perm = new_tensor(dev, (n,), idx)
        starts = new_tensor(dev, (n,), dt.bool_)
        count = new_tensor(dev, (), idx)
        launch(dev, K.unique_sort, (x,), (perm, starts, count))
        k = int(to_numpy(count, func))
    shapes = {"values": (k,), "indices": (k,), "inverse_indices": x._shape, "counts": (k,)}
    res = {name: new_tensor(dev, shapes[name], x._dtype if name == "values" else idx) for name in ("values",) + want}
    if n:
        launch(dev, K.unique_gather, (x, perm, starts), tuple(res.values()), {"want": want})
    return res


def unique_values(x, /) -> Tensor:
    """The unique elements of ``x`` (flattened), in ascending order."""
    return _unique(x, "unique_values", ())["values"]


def unique_counts(x, /) -> UniqueCountsResult:
    """The unique elements of ``x`` (flattened) and how many times each occurs."""
    return UniqueCountsResult(**_unique(x, "unique_counts", ("counts",)))


def unique_inverse(x, /) -> UniqueInverseResult:
    """The unique elements of ``x`` and, shaped like x, the index in them of each element of x."""
    return UniqueInverseResult(**_unique(x, "unique_inverse", ("inverse_indices",)))


def unique_all(x, /) -> UniqueAllResult:
    """The unique elements of ``x``, the flat index of each one's first occurrence, the inverse indices
    (shaped like x) and the counts."""
    return UniqueAllResult(**_unique(x, "unique_all", ("indices", "inverse_indices", "counts")))


def _isin_operand(v, other, name: str) -> Tensor | None:
    """``v`` checked as an operand of isin: an integer array (returned), or a Python int (None)."""
    if type(v) is Tensor:
        if v._dtype.kind not in dt.INTEGER_KINDS:
            raise TypeError(f"isin: {name} must have an integer dtype, got {v._dtype.name}")
        return v
    if type(v) is not int:
        raise TypeError(f"isin: {name} must be an integer array or a Python int, got {type(v).__name__}")
    if type(other) is not Tensor:
        raise TypeError("isin: at least one of x1, x2 must be an array")
    return None


def isin(x1, x2, /, *, invert: bool = False, out=None) -> Tensor:
    """Whether each element of ``x1`` equals some element of ``x2`` (or equals none, with ``invert``).

    Both are integer arrays, or one is a Python int; a result shaped like x1 (0-D for an int x1)."""
    a = _isin_operand(x1, x2, "x1")
    b = _isin_operand(x2, x1, "x2")
    invert = check_flag(invert, "invert", "isin")
    arrays = [t for t in (a, b) if t is not None]
    dev = arrays[0]._dev
    if len(arrays) == 2:
        if b._dev is not dev:
            raise ValueError(f"isin: x2 is on device {b._dev} but x1 is on device {dev}")
        promote_on(dev, a._dtype, b._dtype, "isin")
    dtype = arrays[0]._dtype
    o = result(out, () if a is None else a._shape, dt.bool_, dev, "isin")
    if o.size:
        values = [scalar_tensor(v, dtype, dev, "isin") if t is None else t for t, v in ((a, x1), (b, x2))]
        launch(dev, K.isin, values, (o,), {"invert": invert})
    return o
