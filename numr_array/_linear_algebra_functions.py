"""Linear algebra functions of the main namespace: matmul, tensordot and vecdot (matrix_transpose is a
manipulation view, in _manipulation)."""

from __future__ import annotations

import operator
from typing import Sequence

from . import _dtypes as dt
from ._checks import broadcast_shape, broadcast_to_shape, check_axis, check_same_device, check_tensor, promote_on
from ._elementwise import _c_binary, _native, _plans, _speedups, _store, _tail
from ._launch import launch, new_tensor, result
from ._manipulation import permute_dims
from ._tensor import Tensor
from .kernels import K

__all__ = ["matmul", "tensordot", "vecdot"]


def numeric_pair(x1, x2, func: str):
    """(device, promoted dtype) of two numeric arrays on one device; TypeError/ValueError otherwise."""
    check_tensor(x1, func, "x1")
    check_tensor(x2, func, "x2")
    dev = check_same_device(func, x1, x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if x._dtype.kind not in dt.NUMERIC_KINDS:
            raise TypeError(f"{func}: {name} must have a numeric dtype, got {x._dtype.name}")
    return dev, promote_on(dev, x1._dtype, x2._dtype, func)


def negative_axis(axis, ndim: int, func: str) -> int:
    """A vector axis given from the end, as the standard requires of vecdot and cross: in [-ndim, -1]."""
    if type(axis) is not int:
        if isinstance(axis, (bool, float)) or not hasattr(axis, "__index__"):
            raise TypeError(f"{func}: axis must be an int, got {axis!r}")
        axis = operator.index(axis)
    if axis >= 0:
        raise ValueError(f"{func}: axis must be negative (counted from the last axis), got {axis}")
    if axis < -ndim:
        raise IndexError(f"{func}: axis {axis} is out of bounds for arrays of at least {ndim} dimensions")
    return axis


#: matmul's plans, in the layout of an element-wise plan of two arrays (_elementwise._plan_binary), the
#: parts numr_array._speedups.binary reads: a repeated call of a signature whose operands have the result's
#: dtype runs in C as the kernel's gufunc (CpuClient.ufunc_launch); every other call takes the Python path
_PLANS_MATMUL = _plans("linalg:matmul")


def matmul(x1, x2, /, *, out=None) -> Tensor:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch dimensions."""
    r = _c_binary(K.matmul, _PLANS_MATMUL, x1, x2, out, 1)
    if r is not NotImplemented:
        return r
    check_tensor(x1, "matmul", "x1")
    check_tensor(x2, "matmul", "x2")
    dev = check_same_device("matmul", x1, x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if x._dtype.kind not in dt.NUMERIC_KINDS:
            raise TypeError(f"matmul: {name} must be numeric, got {x._dtype.name}")
        if x.ndim == 0:
            raise ValueError(f"matmul: {name} must have at least one dimension, got a 0-D array")
    dtype = promote_on(x1._dev, x1._dtype, x2._dtype, "matmul")
    s1, s2 = x1._shape, x2._shape
    k1 = s1[-1]
    k2 = s2[0] if len(s2) == 1 else s2[-2]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: x1 {s1} and x2 {s2}")
    batch = broadcast_shape((s1[:-2], s2[:-2]), "matmul")
    shape = batch + (s1[-2:-1] if len(s1) > 1 else ()) + (s2[-1:] if len(s2) > 1 else ())
    o = result(out, shape, dtype, dev, "matmul")
    launch(dev, K.matmul, (x1, x2), (o,))
    if out is None and x1._dtype is dtype and x2._dtype is dtype:
        native = _native(dev._client, K.matmul, (dtype, dtype), dtype, shape)
        launch_of = getattr(dev._client, "product_launch", None) if native is None and _speedups else None
        if launch_of is not None:  # a GPU's cuBLAS call of these layouts
            part = launch_of((dtype.np, dtype.np), dtype.np, (s1, s2), (x1._strides, x2._strides), shape)
            native = None if part is None else part + _tail(dtype, shape)
        if native is not None:  # (no elision: elide 0; the entries only the Python path reads: None)
            _store(_PLANS_MATMUL, (dtype, dtype, s1, s2, dev._client, dev._client),
                   (dtype, shape, o._strides, None, dev, None, None, False, 0, native))
    return o



def _matmul_python(op, plans: dict, x1, x2, out, held: int) -> Tensor:
    """``@`` as the compiled operator slot's Python path (_speedups.c, TensorBase): matmul (nothing elided)."""
    return matmul(x1, x2)


matmul._slot = (K.matmul, _PLANS_MATMUL, _matmul_python)

def _axis_list(seq, ndim: int, func: str, name: str) -> tuple[int, ...]:
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
        raise TypeError(f"tensordot: axes of {name} must be a sequence of ints, got {seq!r}")
    axes = tuple(check_axis(a, ndim, func) for a in seq)
    if len(set(axes)) != len(axes):
        raise ValueError(f"tensordot: repeated axis in the axes of {name}: {tuple(seq)}")
    return axes


def tensordot(x1, x2, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """Contraction of x1 and x2 over ``axes``: the last N axes of x1 with the first N of x2 (an int N), or
    the axes listed for each; the result has x1's free axes, then x2's."""
    dev, dtype = numeric_pair(x1, x2, "tensordot")
    n1, n2 = x1.ndim, x2.ndim
    if isinstance(axes, bool):
        raise TypeError(f"tensordot: axes must be an int or a pair of sequences of ints, got {axes!r}")
    if not isinstance(axes, (tuple, list)):
        try:
            axes = operator.index(axes)
        except TypeError:
            raise TypeError(f"tensordot: axes must be an int or a pair of sequences of ints, got {axes!r}") from None
        if axes < 0:
            raise ValueError(f"tensordot: an int axes must be non-negative, got {axes}")
        if axes > min(n1, n2):
            raise ValueError(f"tensordot: cannot contract {axes} axes of arrays with {n1} and {n2} dimensions")
        a1, a2 = tuple(range(n1 - axes, n1)), tuple(range(axes))
    elif len(axes) == 2:
        a1 = _axis_list(axes[0], n1, "tensordot", "x1")
        a2 = _axis_list(axes[1], n2, "tensordot", "x2")
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes {axes} name {len(a1)} axes of x1 but {len(a2)} of x2")
    else:
        raise ValueError(f"tensordot: axes must be an int or a pair of sequences of ints, got {axes!r}")
    for i, j in zip(a1, a2):
        if x1._shape[i] != x2._shape[j]:
            raise ValueError(f"tensordot: axis {i} of x1 (size {x1._shape[i]}) and axis {j} of x2 "
                             f"(size {x2._shape[j]}) differ; contracted axes are not broadcast")
    shape = (tuple(s for i, s in enumerate(x1._shape) if i not in a1)
             + tuple(s for j, s in enumerate(x2._shape) if j not in a2))
    o = new_tensor(dev, shape, dtype)
    if o.size:
        launch(dev, K.tensordot, (x1, x2), (o,), {"axes1": a1, "axes2": a2})
    return o


def vectors_last(x: Tensor, axis: int, batch: tuple[int, ...]) -> Tensor:
    """A view of ``x`` with its vector axis (negative ``axis``) last and the others broadcast to ``batch``."""
    ndim = len(x._shape)
    ax = ndim + axis
    if ax != ndim - 1:  # (already last: x itself, no view, whose backend view would be made anew)
        x = permute_dims(x, tuple(i for i in range(ndim) if i != ax) + (ax,))
    return broadcast_to_shape(x, batch + (x._shape[-1],))


def _product_of_vectors(x1, x2) -> bool:
    """Whether vecdot of ``x1`` and ``x2`` is their matmul, run as one: two real floating vectors of one dtype on
    a GPU client that calls cuBLAS for matmul from its cached plans (``product_launch``), where the vecdot
    kernel is that same product."""
    return (type(x1) is Tensor and type(x2) is Tensor and len(x1._shape) == 1 and len(x2._shape) == 1
            and x1._dtype is x2._dtype and x1._dtype.kind == "f" and x1._dev is x2._dev
            and hasattr(x1._dev._client, "product_launch"))


def vecdot(x1, x2, /, *, axis: int = -1) -> Tensor:
    """Dot products of the vectors along ``axis`` (negative), conjugating x1; other axes broadcast."""
    if axis == -1 and _product_of_vectors(x1, x2):
        r = _c_binary(K.matmul, _PLANS_MATMUL, x1, x2, None, 1)
        if r is not NotImplemented:
            return r
    dev, dtype = numeric_pair(x1, x2, "vecdot")
    axis = negative_axis(axis, min(x1.ndim, x2.ndim), "vecdot")
    k1, k2 = x1._shape[axis], x2._shape[axis]
    if k1 != k2:
        raise ValueError(f"vecdot: the vectors along axis {axis} differ in size ({k1} and {k2}); "
                         "that axis is not broadcast")
    rest1 = x1._shape[:axis] + x1._shape[axis:][1:]
    rest2 = x2._shape[:axis] + x2._shape[axis:][1:]
    batch = broadcast_shape((rest1, rest2), "vecdot")
    if _product_of_vectors(x1, x2) and x1._shape[0]:
        return matmul(x1, x2)  # (which keeps its plan, for the call above)
    o = new_tensor(dev, batch, dtype)
    if o.size:
        launch(dev, K.vecdot, (vectors_last(x1, axis, batch), vectors_last(x2, axis, batch)), (o,))
    return o
