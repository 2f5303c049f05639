"""NumPy habits: the NumPy 2.x top-level names that NumPy users and array-API code commonly reach for and
the standard lacks or renames, each an alias of a standard function or a thin composition of standard
functions (no kernels of its own).

Two groups here (docs/numpy-differences.md lists each name and what differs from NumPy):

- NumPy's spellings of standard functions (``arccos`` for ``acos``, ``concatenate`` for ``concat``, ...);
- NumPy functions the standard lacks (``ravel``, ``dot``, ``isclose``, ``split``, ...).

The standard's own names with NumPy's habits (axis given positionally, ``ddof``, ``dtype`` for
mean/std/var, ``decimals``, ``where(condition)``, ``diff(x, n)``, ``linspace`` with 0-D bounds; ``divide``
of integers, ``logical_*`` of numbers) are not here: each is the one standard function in its family
module, with a signature that is a superset of the standard's. A call written against the standard means
the same as there; only calls the standard leaves undefined gain NumPy's meaning.

Arguments are numr_array arrays (and Python scalars where the standard function underneath takes them):
nested lists and NumPy arrays go through :func:`array` or ``asarray`` first, so that moving data to a
device is always explicit.
"""

from __future__ import annotations

import builtins
import itertools
import math
import operator
from collections.abc import Sequence

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from . import _searching as _se
from . import _statistical as _st
from . import linalg as _la
from ._creation import asarray, eye, zeros
from ._data_type_functions import astype
from ._checks import check_axis, check_tensor
from ._info import default_dtypes_of
from ._linear_algebra_functions import matmul, tensordot
from ._tensor import Tensor
from ._utility import all as _all

__all__ = [
    # NumPy's names for standard functions
    "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "conjugate",
    "invert", "left_shift", "right_shift", "mod", "power", "true_divide", "concatenate", "transpose",
    "amax", "amin", "ndarray",
    # NumPy functions the standard lacks
    "array", "copy", "ravel", "swapaxes", "hstack", "vstack", "atleast_1d", "atleast_2d", "atleast_3d",
    "split", "ndim", "shape", "size", "identity", "diag", "trace", "dot", "inner", "outer", "cumsum",
    "cumprod", "isclose", "allclose", "array_equal", "deg2rad", "rad2deg", "degrees", "radians", "around",
    "nansum", "nanmean",
]

Axis = int | tuple[int, ...] | None

# --- NumPy's names for standard functions: the same function objects, so they cost nothing extra --------
absolute = _ew.abs
arccos = _ew.acos
arccosh = _ew.acosh
arcsin = _ew.asin
arcsinh = _ew.asinh
arctan = _ew.atan
arctan2 = _ew.atan2
arctanh = _ew.atanh
conjugate = _ew.conj
invert = _ew.bitwise_invert
left_shift = _ew.bitwise_left_shift
right_shift = _ew.bitwise_right_shift
mod = _ew.remainder
power = _ew.pow
true_divide = _ew.divide
around = _ew.round
#: the array class, for ``isinstance(x, np.ndarray)`` checks
ndarray = Tensor


def concatenate(arrays: Sequence[Tensor], axis: int | None = 0) -> Tensor:
    """NumPy's ``concatenate``: :func:`concat` with ``axis`` also given positionally."""
    return _mn.concat(arrays, axis=axis)


def transpose(a: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    """NumPy's ``transpose``: :func:`permute_dims`, reversing all axes when ``axes`` is None."""
    check_tensor(a, "transpose", "a")
    return _mn.permute_dims(a, tuple(range(a.ndim - 1, -1, -1)) if axes is None else tuple(axes))


def amax(a: Tensor, axis: Axis = None, out: Tensor | None = None, keepdims: bool = False) -> Tensor:
    """NumPy's alias of :func:`max`."""
    return _st.max(a, axis=axis, keepdims=keepdims, out=out)


def amin(a: Tensor, axis: Axis = None, out: Tensor | None = None, keepdims: bool = False) -> Tensor:
    """NumPy's alias of :func:`min`."""
    return _st.min(a, axis=axis, keepdims=keepdims, out=out)


# --- NumPy functions the standard lacks ----------------------------------------------------------------
def array(obj: object, dtype: dt.DType | None = None, *, copy: bool | None = True, device=None) -> Tensor:
    """NumPy's ``array``: :func:`asarray` that copies by default (``copy=None`` shares where it can)."""
    return asarray(obj, dtype=dtype, device=device, copy=copy)


def copy(a: Tensor) -> Tensor:
    """A new array holding a copy of ``a``."""
    check_tensor(a, "copy", "a")
    return asarray(a, copy=True)


def ravel(a: Tensor) -> Tensor:
    """``a`` flattened in C order: a view where the strides allow, else a copy (as NumPy's ``ravel``)."""
    check_tensor(a, "ravel", "a")
    return _mn.reshape(a, (-1,))


def swapaxes(a: Tensor, axis1: int, axis2: int) -> Tensor:
    """A view of ``a`` with axes ``axis1`` and ``axis2`` interchanged."""
    check_tensor(a, "swapaxes", "a")
    i, j = check_axis(axis1, a.ndim, "swapaxes"), check_axis(axis2, a.ndim, "swapaxes")
    axes = list(range(a.ndim))
    axes[i], axes[j] = j, i
    return _mn.permute_dims(a, tuple(axes))


def _at_least(arys: tuple, ndim: int, func: str):
    out = []
    for a in arys:
        check_tensor(a, func, "arys")
        if a.ndim < ndim:
            # NumPy's placement: 0-D -> (1, ..., 1); 1-D (N,) -> (1, N) or (1, N, 1); 2-D (M, N) -> (M, N, 1)
            shape = {0: (1,) * ndim, 1: (1, a.size, 1)[:ndim] if ndim > 1 else a.shape,
                     2: a.shape + (1,)}[a.ndim]
            a = _mn.reshape(a, shape)
        out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each array viewed with at least one dimension (a tuple when given several, as in NumPy 2)."""
    return _at_least(arys, 1, "atleast_1d")


def atleast_2d(*arys: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each array viewed with at least two dimensions: 1-D (N,) becomes (1, N)."""
    return _at_least(arys, 2, "atleast_2d")


def atleast_3d(*arys: Tensor) -> Tensor | tuple[Tensor, ...]:
    """Each array viewed with at least three dimensions: (N,) becomes (1, N, 1) and (M, N) (M, N, 1)."""
    return _at_least(arys, 3, "atleast_3d")


def _as_list(arrays, func: str) -> list[Tensor]:
    if isinstance(arrays, Tensor) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{func}: takes a list or tuple of arrays, got {type(arrays).__name__}")
    return list(arrays)


def hstack(tup: Sequence[Tensor]) -> Tensor:
    """Arrays joined column-wise: along axis 0 for 1-D arrays, else axis 1 (0-D ones count as 1-D)."""
    arrays = [atleast_1d(a) for a in _as_list(tup, "hstack")]
    return _mn.concat(arrays, axis=0 if arrays and arrays[0].ndim == 1 else 1)


def vstack(tup: Sequence[Tensor]) -> Tensor:
    """Arrays joined row-wise: along axis 0 after making each at least 2-D ((N,) becomes (1, N))."""
    return _mn.concat([atleast_2d(a) for a in _as_list(tup, "vstack")], axis=0)


def split(ary: Tensor, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """Views of ``ary`` split along ``axis``: into N equal parts (ValueError when N does not divide the
    axis) or at the given indices."""
    check_tensor(ary, "split", "ary")
    axis = check_axis(axis, ary.ndim, "split")
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [operator.index(i) for i in indices_or_sections]
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"split: {sections} sections do not divide axis {axis} of size {n} equally")
        bounds = [n // sections * k for k in range(1, sections)]
    lead = (slice(None),) * axis
    edges = [0, *bounds, n]
    return [ary[lead + (slice(a, builtins.max(a, b)),)] for a, b in itertools.pairwise(edges)]


def ndim(a: Tensor) -> int:
    """The number of dimensions of ``a``."""
    return check_tensor(a, "ndim", "a").ndim


def shape(a: Tensor) -> tuple[int, ...]:
    """The shape of ``a``."""
    return check_tensor(a, "shape", "a").shape


def size(a: Tensor, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis`` when given)."""
    check_tensor(a, "size", "a")
    return a.size if axis is None else a.shape[check_axis(axis, a.ndim, "size")]


def identity(n: int, dtype: dt.DType | None = None, *, device=None) -> Tensor:
    """The n x n identity matrix (:func:`eye` with one size)."""
    return eye(n, dtype=dtype, device=device)


def diag(v: Tensor, k: int = 0) -> Tensor:
    """The ``k``-th diagonal of a 2-D ``v``; or, for a 1-D ``v``, a square matrix with v on that diagonal."""
    check_tensor(v, "diag", "v")
    k = operator.index(k)
    if v.ndim == 2:
        return _la.diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError(f"diag: v must be 1-D or 2-D, got shape {v.shape}")
    n = v.shape[0] + abs(k)
    padded = _mn.concat([v, zeros((abs(k),), dtype=v.dtype, device=v.device)])
    # entry (i, i + k) is v[i]: it follows the row above the main diagonal, the column below it
    values = _mn.expand_dims(padded, axis=1 if k >= 0 else 0)
    return _se.where(eye(n, k=k, dtype=dt.bool_, device=v.device), values,
                     zeros((n, n), dtype=v.dtype, device=v.device))


def trace(a: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: dt.DType | None = None) -> Tensor:
    """The sum along the ``offset`` diagonal of the matrices in axes (axis1, axis2): NumPy's axes default
    (the first two), unlike ``linalg.trace`` (the last two)."""
    check_tensor(a, "trace", "a")
    if a.ndim < 2:
        raise ValueError(f"trace: a must have at least two dimensions, got shape {a.shape}")
    i, j = check_axis(axis1, a.ndim, "trace"), check_axis(axis2, a.ndim, "trace")
    if i == j:
        raise ValueError(f"trace: axis1 and axis2 must differ, got {axis1} and {axis2}")
    rest = tuple(d for d in range(a.ndim) if d not in (i, j))
    return _la.trace(_mn.permute_dims(a, rest + (i, j)), offset=offset, dtype=dtype)


def _operands(a, b, func: str) -> tuple[Tensor, Tensor]:
    check_tensor(a, func, "a")
    check_tensor(b, func, "b")
    return a, b


def dot(a: Tensor, b: Tensor) -> Tensor:
    """NumPy's ``dot``: a product for 0-D operands, :func:`matmul` for 1-D and 2-D ones, and otherwise a
    sum over the last axis of ``a`` and the second-to-last of ``b``. Complex values are not conjugated."""
    a, b = _operands(a, b, "dot")
    if a.ndim == 0 or b.ndim == 0:
        return _ew.multiply(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [builtins.max(b.ndim - 2, 0)]))


def inner(a: Tensor, b: Tensor) -> Tensor:
    """The sum of products over the last axes of ``a`` and ``b`` (no conjugation, unlike vecdot)."""
    a, b = _operands(a, b, "inner")
    if a.ndim == 0 or b.ndim == 0:
        return _ew.multiply(a, b)
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of ``a`` and ``b``, flattened first (``linalg.outer`` takes 1-D arrays only)."""
    a, b = _operands(a, b, "outer")
    return _la.outer(ravel(a), ravel(b))


def _cumulative(func, name: str, a, axis, dtype) -> Tensor:
    check_tensor(a, name, "a")
    if axis is None:
        a, axis = ravel(a), 0
    return func(a, axis=axis, dtype=dtype)


def cumsum(a: Tensor, axis: int | None = None, dtype: dt.DType | None = None) -> Tensor:
    """Running sums along ``axis``, of the flattened array when axis is None (:func:`cumulative_sum`)."""
    return _cumulative(_st.cumulative_sum, "cumsum", a, axis, dtype)


def cumprod(a: Tensor, axis: int | None = None, dtype: dt.DType | None = None) -> Tensor:
    """Running products along ``axis``, of the flattened array when axis is None (:func:`cumulative_prod`)."""
    return _cumulative(_st.cumulative_prod, "cumprod", a, axis, dtype)


def _float_pair(a, b, func: str) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` as floating-point arrays of their promoted dtype on one device (ints become the
    default float, as NumPy does for comparisons with a tolerance)."""
    ref = a if isinstance(a, Tensor) else b
    if not isinstance(ref, Tensor):
        raise TypeError(f"{func}: at least one of a, b must be a numr_array array")
    arrays = [x for x in (a, b) if isinstance(x, Tensor)]
    dtype = arrays[0]._dtype if len(arrays) == 1 else dt.promote(a._dtype, b._dtype, func)
    if dtype.kind not in dt.FLOAT_KINDS:
        dtype = default_dtypes_of(ref.device)["default_float"]
    return tuple(asarray(x, dtype=dtype, device=ref.device) for x in (a, b))


def isclose(a: Tensor | float, b: Tensor | float, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Element-wise ``|a - b| <= atol + rtol * |b|`` (not symmetric, as in NumPy); infinities are close only
    to themselves, and NaNs to each other only with ``equal_nan``."""
    a, b = _float_pair(a, b, "isclose")
    close = _ew.less_equal(_ew.abs(_ew.subtract(a, b)), _ew.add(_ew.multiply(_ew.abs(b), rtol), atol))
    finite = _ew.logical_and(_ew.isfinite(a), _ew.isfinite(b))
    out = _se.where(finite, close, _ew.equal(a, b))
    if equal_nan:
        out = _ew.logical_or(out, _ew.logical_and(_ew.isnan(a), _ew.isnan(b)))
    return out


def allclose(a: Tensor | float, b: Tensor | float, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether :func:`isclose` holds everywhere (a Python bool: it reads the result on the host)."""
    return builtins.bool(_all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1: Tensor, a2: Tensor, equal_nan: bool = False) -> bool:
    """Whether both arrays have one shape and equal elements (NaNs equal each other with ``equal_nan``)."""
    check_tensor(a1, "array_equal", "a1")
    check_tensor(a2, "array_equal", "a2")
    if a1.shape != a2.shape:
        return False
    same = _ew.equal(a1, a2)
    if equal_nan and a1.dtype.kind in dt.FLOAT_KINDS and a2.dtype.kind in dt.FLOAT_KINDS:
        same = _ew.logical_or(same, _ew.logical_and(_ew.isnan(a1), _ew.isnan(a2)))
    return builtins.bool(_all(same))


_DEG = math.pi / 180.0


def deg2rad(x: Tensor, /) -> Tensor:
    """Degrees to radians, for floating-point arrays."""
    return _ew.multiply(x, _DEG)


def rad2deg(x: Tensor, /) -> Tensor:
    """Radians to degrees, for floating-point arrays."""
    return _ew.multiply(x, 1.0 / _DEG)


radians = deg2rad
degrees = rad2deg


def _without_nan(a: Tensor, func: str) -> Tensor:
    check_tensor(a, func, "a")
    return _se.where(_ew.isnan(a), 0, a) if a.dtype.kind in dt.FLOAT_KINDS else a


def nansum(a: Tensor, axis: Axis = None, dtype: dt.DType | None = None, out: Tensor | None = None,
           keepdims: bool = False) -> Tensor:
    """:func:`sum` that counts NaNs as zero."""
    return _st.sum(_without_nan(a, "nansum"), axis=axis, dtype=dtype, keepdims=keepdims, out=out)


def nanmean(a: Tensor, axis: Axis = None, dtype: dt.DType | None = None, out: Tensor | None = None,
            keepdims: bool = False) -> Tensor:
    """:func:`mean` of the elements that are not NaN (NaN where there are none)."""
    a = _st.in_dtype(a, dtype, "nanmean")
    check_tensor(a, "nanmean", "a")
    if a.dtype.kind not in dt.FLOAT_KINDS:
        return _st.mean(a, axis=axis, keepdims=keepdims, out=out)
    total = _st.sum(_without_nan(a, "nanmean"), axis=axis, keepdims=keepdims)
    count = _st.sum(astype(_ew.logical_not(_ew.isnan(a)), dt.real_of(a._dtype)), axis=axis, keepdims=keepdims)
    return _ew.divide(total, count, out=out)
