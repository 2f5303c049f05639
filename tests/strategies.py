"""Hypothesis strategies shared by the test modules: dtypes, shapes, and arrays built from NumPy data,
optionally as non-contiguous views, on the device under test."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from .helpers import DEVICE, dtypes

BOOL = [xp.bool]
SIGNED = [xp.int8, xp.int16, xp.int32, xp.int64]
UNSIGNED = [xp.uint8, xp.uint16, xp.uint32, xp.uint64]
INTEGER = SIGNED + UNSIGNED
REAL_FLOAT = [xp.float32, xp.float64]
COMPLEX = [xp.complex64, xp.complex128]
FLOAT = REAL_FLOAT + COMPLEX
REAL_NUMERIC = INTEGER + REAL_FLOAT
NUMERIC = INTEGER + FLOAT
ALL = BOOL + NUMERIC


def supported(wanted):
    """The dtypes of ``wanted`` that the device under test supports."""
    have = dtypes(DEVICE)
    return [d for d in wanted if d in have]


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def np_arrays(dtype, shape, elements=None):
    """NumPy arrays of a numr dtype; floats include NaN, inf and signed zeros unless ``elements`` says otherwise."""
    return hnp.arrays(dtype, shape, elements=elements)


@st.composite
def views(draw, np_array):
    """A tensor holding ``np_array``'s values: contiguous, or a strided/reversed view of a larger tensor."""
    a = np_array
    kind = draw(st.sampled_from(["contiguous", "strided", "reversed"])) if a.ndim else "contiguous"
    if kind == "contiguous":
        return xp.asarray(a, device=DEVICE)
    if kind == "strided":
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        return xp.asarray(big, device=DEVICE)[..., ::2]
    return xp.asarray(a[..., ::-1].copy(), device=DEVICE)[..., ::-1]


@st.composite
def laid_out(draw, a: np.ndarray):
    """A tensor holding ``a``: contiguous, transposed (a copy of its transpose viewed back; with 2 or more
    dimensions), every other element of a wider tensor along the last axis, or reversed (a reversed copy
    viewed back)."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "strided", "reversed"]))
    if kind == "transposed" and a.ndim >= 2:
        return xp.matrix_transpose(xp.asarray(np.swapaxes(a, -1, -2).copy(), device=DEVICE))
    if kind == "strided" and a.ndim:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return xp.asarray(big, device=DEVICE)[..., ::2]
    if kind == "reversed":
        return xp.flip(xp.asarray(np.flip(a).copy(), device=DEVICE))
    return xp.asarray(a, device=DEVICE)


@st.composite
def tensors(draw, dtypes, shape=None, elements=None):
    """(tensor, the same values as a NumPy array) for a dtype drawn from ``dtypes``."""
    dtype = draw(st.sampled_from(supported(dtypes)))
    shape = draw(shapes()) if shape is None else shape
    a = draw(np_arrays(dtype, shape, elements))
    return draw(views(a)), a


def to_np(t) -> np.ndarray:
    """A tensor's values as a NumPy array (through the host, from any device)."""
    return np.asarray(t.to_device("cpu"))
