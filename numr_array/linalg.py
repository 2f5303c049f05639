"""The ``linalg`` extension of the array API standard (2025.12): the 25 functions, batched over leading
dimensions, with the standard's result namedtuples.

Every function validates (dtype, shape, arguments), computes the result shapes and dtypes and broadcasts
its operands before the one kernel launch, so a call that fails on its arguments touches nothing. A
matrix the computation cannot handle (singular for inv/solve/matrix_power with n < 0, not positive-definite
for cholesky, no convergence) raises :class:`LinAlgError`, a ValueError, naming the function: the standard
leaves this unspecified, and an exception is more useful than a result full of NaNs.
"""

from __future__ import annotations

import math
import operator
from typing import Literal, NamedTuple

import numpy as np

from . import _dtypes as dt
from . import _elementwise as ew
from ._checks import broadcast_shape, broadcast_to_shape, check_axes, check_tensor
from ._creation import full
from ._data_type_functions import astype
from ._launch import launch, make_view, new_tensor
from ._elementwise import multiply
from ._info import default_dtypes_of
from ._linear_algebra_functions import matmul, negative_axis, numeric_pair, tensordot, vecdot
from ._manipulation import matrix_transpose, reshape
from ._searching import where
from ._statistical import _accumulation_dtype as accumulation_dtype, max as _max, min as _min, reduction, sum as _sum
from ._tensor import Tensor
from .kernels import K, Kernel

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "eig", "eigvals", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet",
    "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]


class LinAlgError(np.linalg.LinAlgError):
    """A matrix the computation cannot handle (singular, not positive-definite, no convergence), on CPU
    and CUDA; WebGPU returns non-finite values instead (docs/devices.md). A subclass of NumPy's class, which
    is a ValueError, so code catching either of those also catches it."""


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


# --- shared checks and launching ---------------------------------------------------------------------

def _matrices(x, func: str, square: bool = False, name: str = "x") -> Tensor:
    """``x`` validated as a floating-point matrix or stack of matrices (square ones if ``square``)."""
    check_tensor(x, func, name)
    if x._dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"{func}: {name} must have a floating-point dtype, got {x._dtype.name}")
    if x.ndim < 2:
        raise ValueError(f"{func}: {name} must be a matrix or a stack of matrices (at least 2-D), got shape {x._shape}")
    if square and x._shape[-1] != x._shape[-2]:
        raise ValueError(f"{func}: {name} must be a square matrix or a stack of them, got shape {x._shape}")
    return x


def _run(func: str, kernel: Kernel, inputs: tuple, outputs: tuple[Tensor, ...], params: dict | None = None,
         trouble: str = "the computation failed") -> None:
    """Launch ``kernel`` unless every output is empty; the backend's LinAlgError (NumPy's class: NumPy and
    CuPy both raise it) becomes numr's, naming ``func``."""
    if not any(o.size for o in outputs):
        return
    try:
        launch(outputs[0]._dev, kernel, inputs, outputs, params)
    except np.linalg.LinAlgError as e:
        raise LinAlgError(f"{func}: {trouble} ({e})") from None


def _rtol(rtol, x: Tensor, func: str) -> tuple[Tensor | None, float | None, tuple[int, ...]]:
    """``rtol=`` of matrix_rank/pinv as (array operand, Python value, batch shape of the result)."""
    batch = x._shape[:-2]
    if rtol is None:
        # the standard's default: max(M, N) * eps of x's real dtype
        return None, max(x._shape[-2:]) * float(np.finfo(dt.real_of(x._dtype).np).eps), batch
    if type(rtol) is Tensor:
        if rtol._dtype.kind != "f":
            raise TypeError(f"{func}: rtol must have a real floating-point dtype, got {rtol._dtype.name}")
        if rtol._dev is not x._dev:
            raise ValueError(f"{func}: rtol is on {rtol._dev} but x is on {x._dev}")
        batch = broadcast_shape((batch, rtol._shape), func)
        return broadcast_to_shape(rtol, batch), None, batch
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TypeError(f"{func}: rtol must be a float, an array or None, got {rtol!r}")
    if not rtol >= 0:
        raise ValueError(f"{func}: rtol must be non-negative, got {rtol}")
    return None, float(rtol), batch


def _int_arg(value, func: str, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{func}: {name} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{func}: {name} must be an int, got {value!r}") from None


# --- decompositions ----------------------------------------------------------------------------------

def cholesky(x, /, *, upper: bool = False) -> Tensor:
    """The lower (or, with ``upper``, upper) Cholesky factor of each Hermitian positive-definite matrix."""
    _matrices(x, "cholesky", square=True)
    o = new_tensor(x._dev, x._shape, x._dtype)
    _run("cholesky", K.cholesky, (x,), (o,), {"upper": bool(upper)}, "a matrix of x is not positive-definite")
    return o


def eigh(x, /) -> EighResult:
    """Eigenvalues (real, ascending) and orthonormal eigenvectors (columns) of each Hermitian matrix."""
    _matrices(x, "eigh", square=True)
    w = new_tensor(x._dev, x._shape[:-1], dt.real_of(x._dtype))
    v = new_tensor(x._dev, x._shape, x._dtype)
    _run("eigh", K.eigh, (x,), (w, v))
    return EighResult(w, v)


def eigvalsh(x, /) -> Tensor:
    """Eigenvalues (real, ascending) of each Hermitian matrix."""
    _matrices(x, "eigvalsh", square=True)
    w = new_tensor(x._dev, x._shape[:-1], dt.real_of(x._dtype))
    _run("eigvalsh", K.eigvalsh, (x,), (w,))
    return w


def eig(x, /) -> EigResult:
    """Eigenvalues and eigenvectors (columns) of each general square matrix, complex even for real x."""
    _matrices(x, "eig", square=True)
    dtype = dt.complex_of(x._dtype)
    w = new_tensor(x._dev, x._shape[:-1], dtype)
    v = new_tensor(x._dev, x._shape, dtype)
    _run("eig", K.eig, (x,), (w, v))
    return EigResult(w, v)


def eigvals(x, /) -> Tensor:
    """Eigenvalues of each general square matrix, complex even for real x."""
    _matrices(x, "eigvals", square=True)
    w = new_tensor(x._dev, x._shape[:-1], dt.complex_of(x._dtype))
    _run("eigvals", K.eigvals, (x,), (w,))
    return w


def qr(x, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """Q (orthonormal columns) and R (upper triangular) with x = QR, for each matrix; K = min(M, N)."""
    _matrices(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    *batch, m, n = x._shape
    k = m if mode == "complete" else min(m, n)
    q = new_tensor(x._dev, (*batch, m, k), x._dtype)
    r = new_tensor(x._dev, (*batch, k, n), x._dtype)
    _run("qr", K.qr, (x,), (q, r), {"mode": mode})
    return QRResult(q, r)


def svd(x, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S (descending) and Vh with x = U diag(S) Vh, for each matrix."""
    _matrices(x, "svd")
    *batch, m, n = x._shape
    k = min(m, n)
    full = bool(full_matrices)
    u = new_tensor(x._dev, (*batch, m, m if full else k), x._dtype)
    s = new_tensor(x._dev, (*batch, k), dt.real_of(x._dtype))
    vh = new_tensor(x._dev, (*batch, n if full else k, n), x._dtype)
    _run("svd", K.svd, (x,), (u, s, vh), {"full_matrices": full})
    return SVDResult(u, s, vh)


def svdvals(x, /) -> Tensor:
    """The singular values of each matrix, in descending order."""
    _matrices(x, "svdvals")
    s = new_tensor(x._dev, x._shape[:-2] + (min(x._shape[-2:]),), dt.real_of(x._dtype))
    _run("svdvals", K.svdvals, (x,), (s,))
    return s


# --- determinants, inverses, solves --------------------------------------------------------------------

def det(x, /) -> Tensor:
    """The determinant of each square matrix."""
    _matrices(x, "det", square=True)
    o = new_tensor(x._dev, x._shape[:-2], x._dtype)
    _run("det", K.det, (x,), (o,))
    return o


def slogdet(x, /) -> SlogdetResult:
    """sign and log|det| of each square matrix (sign 0 and logabsdet -inf where det is 0)."""
    _matrices(x, "slogdet", square=True)
    sign = new_tensor(x._dev, x._shape[:-2], x._dtype)
    logabsdet = new_tensor(x._dev, x._shape[:-2], dt.real_of(x._dtype))
    _run("slogdet", K.slogdet, (x,), (sign, logabsdet))
    return SlogdetResult(sign, logabsdet)


def inv(x, /) -> Tensor:
    """The inverse of each square matrix; LinAlgError when one is singular."""
    _matrices(x, "inv", square=True)
    o = new_tensor(x._dev, x._shape, x._dtype)
    _run("inv", K.inv, (x,), (o,), trouble="a matrix of x is singular")
    return o


def solve(x1, x2, /) -> Tensor:
    """X with x1 X = x2 for each square x1; x2 is a vector when 1-D, else a stack of (M, K) matrices."""
    _matrices(x1, "solve", square=True, name="x1")
    check_tensor(x2, "solve", "x2")
    if x2._dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"solve: x2 must have a floating-point dtype, got {x2._dtype.name}")
    dev, dtype = numeric_pair(x1, x2, "solve")
    m = x1._shape[-1]
    if x2.ndim == 0 or (x2._shape[-1] if x2.ndim == 1 else x2._shape[-2]) != m:
        raise ValueError(f"solve: x2 of shape {x2._shape} does not match the {m}x{m} matrices of x1")
    if x2.ndim == 1:
        # one vector for every matrix: solve it as an (M, 1) matrix and write the column into the result
        batch = x1._shape[:-2]
        o = new_tensor(dev, batch + (m,), dtype)
        b = make_view(x2, (m, 1), (x2._strides[0], 0), x2._offset)
        o_cols = make_view(o, batch + (m, 1), o._strides + (1,), 0)
    else:
        batch = broadcast_shape((x1._shape[:-2], x2._shape[:-2]), "solve")
        o = o_cols = new_tensor(dev, batch + x2._shape[-2:], dtype)
        b = x2
    a = broadcast_to_shape(x1, batch + (m, m))
    b = broadcast_to_shape(b, batch + b._shape[-2:])
    _run("solve", K.solve, (a, b), (o_cols,), trouble="a matrix of x1 is singular")
    return o


def matrix_power(x, n: int, /) -> Tensor:
    """Each square matrix raised to the integer power n (the inverse's power for n < 0, I for n = 0)."""
    _matrices(x, "matrix_power", square=True)
    n = _int_arg(n, "matrix_power", "n")
    o = new_tensor(x._dev, x._shape, x._dtype)
    _run("matrix_power", K.matrix_power, (x,), (o,), {"n": n}, "a matrix of x is singular")
    return o


def pinv(x, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse (..., N, M) of each matrix; singular values at most rtol times the
    largest count as zero."""
    _matrices(x, "pinv")
    rtol_array, rtol_value, batch = _rtol(rtol, x, "pinv")
    *_, m, n = x._shape
    o = new_tensor(x._dev, batch + (n, m), x._dtype)
    _run("pinv", K.pinv, (broadcast_to_shape(x, batch + (m, n)), rtol_array), (o,), {"rtol": rtol_value})
    return o


def matrix_rank(x, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The number of singular values above rtol times the largest, for each matrix (default integer dtype)."""
    _matrices(x, "matrix_rank")
    rtol_array, rtol_value, batch = _rtol(rtol, x, "matrix_rank")
    o = new_tensor(x._dev, batch, default_dtypes_of(x._dev)["default_integral"])
    _run("matrix_rank", K.matrix_rank, (broadcast_to_shape(x, batch + x._shape[-2:]), rtol_array), (o,),
         {"rtol": rtol_value})
    return o


# --- norms ---------------------------------------------------------------------------------------------

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _real_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def matrix_norm(x, /, *, keepdims: bool = False, ord: int | float | str | None = "fro") -> Tensor:
    """The ``ord`` norm of each matrix: 'fro', 'nuc', 1/-1 (max/min column sum), 2/-2 (max/min singular
    value), inf/-inf (max/min row sum)."""
    _matrices(x, "matrix_norm")
    if ord is None:
        ord = "fro"
    if not (isinstance(ord, str) or _real_number(ord)) or ord not in _MATRIX_ORDS:
        raise ValueError(f"matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf; got {ord!r}")
    *batch, m, n = x._shape
    if not isinstance(ord, str) and {-1: n, -math.inf: m, -2: min(m, n)}.get(ord) == 0:
        # a minimum over no columns, rows or singular values has no value (NumPy raises alike)
        raise ValueError(f"matrix_norm: ord={ord} of a matrix of shape {(m, n)} is a minimum over nothing")
    shape = tuple(batch) + ((1, 1) if keepdims else ())
    o = new_tensor(x._dev, shape, dt.real_of(x._dtype))
    _run("matrix_norm", K.matrix_norm, (x,), (o,), {"ord": ord if isinstance(ord, str) else float(ord)})
    return o


def vector_norm(x, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Tensor:
    """The ``ord`` norm of the vectors along ``axis`` (all axes when None): p-norms for any real p, with
    inf/-inf the max/min magnitude and 0 the count of non-zeros."""
    check_tensor(x, "vector_norm")
    if x._dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"vector_norm: x must have a floating-point dtype, got {x._dtype.name}")
    if not _real_number(ord) or math.isnan(ord):
        raise ValueError(f"vector_norm: ord must be a real number (or inf, -inf), got {ord!r}")
    axes = check_axes(axis, x.ndim, "vector_norm")
    if ord == -math.inf and math.prod(x._shape[a] for a in axes) == 0:
        raise ValueError(f"vector_norm: ord=-inf over the empty axes {axes} of shape {x._shape} "
                         "is a minimum over nothing")
    shape = tuple(1 if i in axes else s for i, s in enumerate(x._shape) if keepdims or i not in axes)
    ord = float(ord)
    if ord not in (0.0, 1.0, 2.0, math.inf, -math.inf):
        return _p_norm(x, axes, shape, ord)
    o = new_tensor(x._dev, shape, dt.real_of(x._dtype))
    _run("vector_norm", K.vector_norm, (x,), (o,), {"axes": axes, "keepdims": bool(keepdims), "ord": ord})
    return o


def _p_norm(x: Tensor, axes: tuple[int, ...], shape: tuple[int, ...], p: float) -> Tensor:
    """sum(|x|**p)**(1/p) over ``axes``, well conditioned for every real p (the direct formula is not when
    |p| is small: (1.25**1e-300)**1e300 is 1.0, not 1.25, as the rounding of the sum is raised to 1/p).

    With M the largest |x| (the smallest for p < 0) and y = |x| / M, every y**p lies in [0, 1] and is 1
    where |x| is M, so sum(|x|**p) = M**p * (1 + D) with D = (count(|x| == M) - 1) + sum(y**p, |x| != M),
    a sum of non-negative terms, and the norm is M * exp(log1p(D) / p), accurate to a few ulps of the
    exponent log1p(D) / p (exactly M where D is 0). M = 0 (p > 0: all zero; p < 0: a zero) gives 0 and
    M = inf gives inf, as the direct formula does; NaN propagates through M."""
    n = math.prod(x._shape[a] for a in axes)
    rdtype = dt.real_of(x._dtype)
    if n == 0:  # the sum over nothing is 0, and 0**(1/p) is 0 for p > 0, inf for p < 0
        return full(shape, 0.0 if p > 0 else math.inf, dtype=rdtype, device=x._dev)
    # |p| within the dtype's normal range, where it is an operand: a smaller one would round to 0, and there
    # the smallest normal number gives the same result (y**p is then 1 for every y but 0 and inf, so that D
    # is 0, giving M, or at least 1, giving exp(log1p(D) / p) = inf or 0 for any such p); a larger one
    # would be inf, and the largest finite one, as p, makes every y**p with y != 1 zero
    info = np.finfo(rdtype.np)
    p = math.copysign(min(max(abs(p), float(info.tiny)), float(info.max)), p)
    a = ew.abs(x)
    m = (_max if p > 0 else _min)(a, axis=axes, keepdims=True)
    one = ew.equal(a, m)  # (not a / M == 1: a GPU's division need not give exactly 1)
    d = ew.add(_sum(where(one, 0.0, ew.pow(ew.divide(a, m), p)), axis=axes, keepdims=True),
               ew.subtract(_sum(astype(one, rdtype), axis=axes, keepdims=True), 1.0))
    e = ew.divide(ew.log1p(d), p)
    # M * exp(e) exactly when |e| is moderate; exp(e + log(M)) where exp(e) alone would overflow or underflow
    r = where(ew.less(ew.abs(e), 64.0), ew.multiply(m, ew.exp(e)), ew.exp(ew.add(e, ew.log(m))))
    r = where(ew.equal(m, 0.0), 0.0, where(ew.equal(m, math.inf), math.inf, r))
    return reshape(r, shape)


# --- products and diagonals ----------------------------------------------------------------------------

def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """Cross products of the 3-vectors along ``axis`` (negative); the other axes broadcast."""
    dev, dtype = numeric_pair(x1, x2, "cross")
    axis = negative_axis(axis, min(x1.ndim, x2.ndim), "cross")
    if x1._shape[axis] != 3 or x2._shape[axis] != 3:
        raise ValueError(f"cross: axis {axis} must have size 3 in both arrays, got shapes {x1._shape} and {x2._shape}")
    shape = broadcast_shape((x1._shape, x2._shape), "cross")
    o = new_tensor(dev, shape, dtype)
    _run("cross", K.cross, (broadcast_to_shape(x1, shape), broadcast_to_shape(x2, shape)), (o,), {"axis": axis})
    return o


def outer(x1, x2, /) -> Tensor:
    """The outer product (N, M) of the vectors x1 (N,) and x2 (M,)."""
    numeric_pair(x1, x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: x1 and x2 must be 1-D, got shapes {x1._shape} and {x2._shape}")
    # x1 as a column times x2 as a row: the element-wise product broadcasts them to (N, M)
    column = make_view(x1, (x1._shape[0], 1), (x1._strides[0], 0), x1._offset)
    row = make_view(x2, (1, x2._shape[0]), (0, x2._strides[0]), x2._offset)
    return multiply(column, row)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """A view of the ``offset`` diagonal of each matrix (above the main one for offset > 0)."""
    return _diagonal(x, offset, "diagonal")


def _diagonal(x, offset, func: str) -> Tensor:
    check_tensor(x, func)
    if x.ndim < 2:
        raise ValueError(f"{func}: x must be a matrix or a stack of matrices (at least 2-D), got shape {x._shape}")
    offset = _int_arg(offset, func, "offset")
    *batch, m, n = x._shape
    *batch_strides, sm, sn = x._strides
    if offset >= 0:
        size, start = max(0, min(m, n - offset)), offset * sn
    else:
        size, start = max(0, min(m + offset, n)), -offset * sm
    return make_view(x, (*batch, size), (*batch_strides, sm + sn), x._offset + start)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of the ``offset`` diagonal of each matrix, with sum's dtype rules (small integers widen)."""
    check_tensor(x, "trace")
    if x._dtype.kind not in dt.NUMERIC_KINDS:
        raise TypeError(f"trace: x must have a numeric dtype, got {x._dtype.name}")
    d = _diagonal(x, offset, "trace")
    return reduction(K.sum, d, (d.ndim - 1,), False, accumulation_dtype(x, dtype, "trace"), None, "trace")


# --- NumPy's linalg functions the standard lacks (compositions of the above) -------------------------
__all__ += ["norm", "cond", "lstsq", "multi_dot"]


def norm(x, ord: int | float | str | None = None, axis: int | tuple[int, int] | None = None,
         keepdims: bool = False) -> Tensor:
    """NumPy's ``linalg.norm``: the 2-norm of the flattened array by default (Frobenius for a matrix),
    a vector norm along one axis, a matrix norm over two."""
    check_tensor(x, "norm")
    if x._dtype.kind not in dt.FLOAT_KINDS:
        from ._data_type_functions import astype
        from ._info import default_dtypes_of
        x = astype(x, default_dtypes_of(x._dev)["default_float"])
    if axis is None and ord is None:
        return vector_norm(x, axis=None, keepdims=keepdims)
    if axis is None:
        if x.ndim == 1:
            axis = 0
        elif x.ndim == 2:
            axis = (0, 1)
        else:
            raise ValueError(f"norm: improper number of dimensions to norm ({x.ndim}) with ord={ord!r}")
    if isinstance(axis, int) or (isinstance(axis, tuple) and len(axis) == 1):
        if isinstance(ord, str):
            raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    if not (isinstance(axis, tuple) and len(axis) == 2):
        raise ValueError(f"norm: axis must be an int or a pair of ints, got {axis!r}")
    from . import _manipulation as _mn
    a0, a1 = (a % x.ndim for a in axis)
    if a0 == a1:
        raise ValueError("norm: duplicate axes given")
    rest = [i for i in range(x.ndim) if i not in (a0, a1)]
    r = matrix_norm(_mn.permute_dims(x, tuple(rest) + (a0, a1)), ord="fro" if ord is None else ord)
    if keepdims:
        r = _mn.reshape(r, tuple(1 if i in (a0, a1) else n for i, n in enumerate(x._shape)))
    return r


def cond(x, p: int | float | str | None = None) -> Tensor:
    """The condition number of each matrix in the ``p`` norm (2: the ratio of the extreme singular values;
    others: ``norm(x) * norm(inv(x))``)."""
    _matrices(x, "cond")
    if p is None or p == 2 or p == -2:
        s = svdvals(x)
        return ew.divide(s[..., 0], s[..., -1]) if p != -2 else ew.divide(s[..., -1], s[..., 0])
    _matrices(x, "cond", square=True)
    return multiply(matrix_norm(x, ord=p), matrix_norm(inv(x), ord=p))


class LstsqResult(NamedTuple):
    x: Tensor
    residuals: Tensor
    rank: Tensor
    s: Tensor


def lstsq(a, b, rcond: float | None = None) -> LstsqResult:
    """The least-squares solution of ``a @ x = b`` (a is (M, N); b (M,) or (M, K)) from the SVD of a,
    singular values below ``rcond`` times the largest cut off (default: machine epsilon times max(M, N)).
    Residuals are the squared 2-norms of ``b - a @ x`` per column when a has full column rank and M > N
    (else empty), as in NumPy; the rank is a 0-D array."""
    from . import _elementwise as _ew
    from . import _manipulation as _mn
    from ._searching import where
    from ._statistical import sum as _sum
    _matrices(a, "lstsq", name="a")
    check_tensor(b, "lstsq")
    if a.ndim != 2 or b.ndim not in (1, 2) or b._shape[0] != a._shape[0]:
        raise ValueError(f"lstsq: a must be (M, N) and b (M,) or (M, K), got {a._shape} and {b._shape}")
    m, n = a._shape
    if rcond is None:
        rcond = float(np.finfo(a._dtype.np).eps) * max(m, n)
    u, s, vh = svd(a, full_matrices=False)
    cut = _ew.multiply(s[..., :1], rcond) if s._shape[0] else s
    keep = _ew.greater(s, cut)
    inv_s = where(keep, _ew.divide(1.0, where(keep, s, 1.0)), 0.0)
    bb = b if b.ndim == 2 else _mn.reshape(b, (-1, 1))
    uh = _mn.matrix_transpose(_ew.conj(u) if u._dtype.kind == "c" else u)
    vv = _mn.matrix_transpose(_ew.conj(vh) if vh._dtype.kind == "c" else vh)
    x = matmul(vv, _ew.multiply(_mn.reshape(_astype_like(inv_s, uh), (-1, 1)), matmul(uh, bb)))
    from ._data_type_functions import astype
    rank = _sum(astype(keep, _index_int(a)))
    r = _ew.subtract(matmul(a, x), bb)
    res = _sum(_ew.real(_ew.multiply(r, _ew.conj(r))) if r._dtype.kind == "c"
               else _ew.multiply(r, r), axis=0)
    # NumPy's residuals are empty unless the rank is full and M > N: whether it is, is read on the host
    if not (m > n and int(rank) == n):
        res = res[:0]
    return LstsqResult(x if b.ndim == 2 else x[:, 0], res, rank, s)


def _astype_like(t: Tensor, like: Tensor) -> Tensor:
    from ._data_type_functions import astype
    return astype(t, like._dtype) if t._dtype is not like._dtype else t


def _index_int(t: Tensor) -> dt.DType:
    from ._info import default_dtypes_of
    return default_dtypes_of(t._dev)["default_integral"]


def multi_dot(arrays, *, out=None) -> Tensor:
    """The product of a chain of matrices (the first may be 1-D, a row; the last 1-D, a column), in the
    order that needs the fewest multiplications."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    from . import _manipulation as _mn
    for t in arrays:
        check_tensor(t, "multi_dot")
    first, last = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first:
        arrays[0] = _mn.reshape(arrays[0], (1, -1))
    if last:
        arrays[-1] = _mn.reshape(arrays[-1], (-1, 1))
    for t in arrays:
        if t.ndim != 2:
            raise ValueError(f"multi_dot: arrays must be 2-D (the ends may be 1-D), got shape {t._shape}")
    dims = [arrays[0]._shape[0]] + [t._shape[1] for t in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s

    def chain(i: int, j: int) -> Tensor:
        return arrays[i] if i == j else matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))

    r = chain(0, k - 1)
    if first and last:
        r = r[0, 0]
    elif first:
        r = r[0]
    elif last:
        r = r[:, 0]
    if out is not None:
        from ._elementwise import positive
        return positive(r, out=out)
    return r
