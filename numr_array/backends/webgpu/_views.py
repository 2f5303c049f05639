"""Views of tensors as kernels bind and address them: the window of a buffer a view touches, how it is
bound, whether two views overlap, and the merging of dimensions contiguous in every operand (one
``collapse`` for the map template, reductions and contractions alike)."""

from __future__ import annotations

import math

from typing import TYPE_CHECKING

from ..._tensor import Tensor, contiguous_strides

if TYPE_CHECKING:
    from ._client import WebGPUClient


def element_span(offset: int, strides, dims) -> tuple[int, int]:
    """The lowest and highest element index that a view of ``dims`` with ``strides`` from ``offset`` reaches
    (just ``offset`` for an empty view, which reaches nothing)."""
    lo = hi = offset
    if 0 in dims:
        return lo, hi
    for s, n in zip(strides, dims):
        if s > 0:
            hi += s * (n - 1)
        else:
            lo += s * (n - 1)
    return lo, hi


def window(client: WebGPUClient, t: Tensor) -> tuple[int, int, int]:
    """(byte offset, byte size, element offset in the window) of the span of ``t``."""
    isz = t._dtype.itemsize
    lo, hi = element_span(t._offset, t._strides, t._shape)
    b0 = lo * isz
    b0 -= b0 % client.storage_align
    return b0, max(16, ((hi + 1) * isz - b0 + 3) & ~3), t._offset - b0 // isz


def view_words(v: tuple, dims: tuple) -> tuple[int, int]:
    """The 32-bit words [lo, hi) of its buffer that view ``v`` reaches over ``dims`` (whole words: packed
    8- and 16-bit elements of one word are not told apart)."""
    lo, hi = element_span(v[1], v[2], dims)
    isz = v[3].itemsize
    return lo * isz >> 2, ((hi + 1) * isz + 3) >> 2


def whole_words(t: Tensor) -> tuple[int, int, int]:
    """(memory serial, first word, end word) of the 32-bit words wholly inside the C-contiguous ``t``'s
    elements: what a kernel that writes every element of ``t`` and reads none writes whole (a dispatch's
    ``whole``, for the fusion pass's dead-store analysis)."""
    isz = t._dtype.itemsize
    return t._buf.handle.serial, (t._offset * isz + 3) >> 2, (t._offset + math.prod(t._shape)) * isz >> 2


def bind_whole(client: WebGPUClient, t: Tensor) -> tuple[tuple, int]:
    """(binds, element offset in the window) of ``t``'s whole window, for kernels that address it
    freely; MemoryError where the window exceeds the adapter's largest storage binding."""
    b0, size, first = window(client, t)
    if size > client.max_binding:
        raise MemoryError(f"{client.device}: an indexed operand of {size} bytes exceeds the adapter's largest "
                          f"storage binding ({client.max_binding} bytes)")
    return (t._buf.handle, b0, size), first


def collapse(shape, strides) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge the dimensions of ``shape`` that are contiguous in every one of the stride sequences ``strides``
    and drop length-1 ones (at least one dimension is kept): (dims, the strides of each over them)."""
    cs = contiguous_strides(tuple(shape))
    if all(st == cs for st in strides):
        n = 1
        for s in shape:
            n *= s
        return (n,), [(1,)] * len(strides)
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in strides]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(o[-1] == st[d] * size for o, st in zip(out, strides)):
            dims[-1] *= size
            for o, st in zip(out, strides):
                o[-1] = st[d]
            continue
        dims.append(size)
        for o, st in zip(out, strides):
            o.append(st[d])
    if not dims:
        return (1,), [(0,)] * len(strides)
    return tuple(dims), [tuple(o) for o in out]


def overlap(a: Tensor, b: Tensor) -> bool:
    def span(t):
        lo, hi = element_span(t._offset, t._strides, t._shape)
        return lo * t._dtype.itemsize, (hi + 1) * t._dtype.itemsize
    a0, a1 = span(a)
    b0, b1 = span(b)
    return a0 < b1 and b0 < a1
