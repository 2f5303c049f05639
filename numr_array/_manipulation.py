"""Manipulation functions (zero-copy views where strides allow)."""

from __future__ import annotations

from ._dispatch import check_axis, check_tensor, make_view
from ._tensor import Tensor

__all__ = ["permute_dims", "matrix_transpose"]


def permute_dims(x, /, axes: tuple[int, ...]) -> Tensor:
    """A view of x with its axes reordered."""
    check_tensor(x, "permute_dims")
    axes = tuple(check_axis(a, x.ndim, "permute_dims") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} dimensions")
    return make_view(x, tuple(x._shape[a] for a in axes), tuple(x._strides[a] for a in axes), x._offset)


def matrix_transpose(x, /) -> Tensor:
    """A view of x with its last two axes swapped."""
    check_tensor(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {x.shape}")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return permute_dims(x, axes)
