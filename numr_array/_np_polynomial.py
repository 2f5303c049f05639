"""NumPy's polynomial, signal and calculus functions: ``polyval``, ``polyfit``, ``roots``, ``poly`` and
the coefficient arithmetic; ``convolve``/``correlate``, ``interp``, ``gradient``, ``trapezoid``; and the
products ``einsum``, ``kron``, ``vdot``, ``matvec``, ``vecmat`` and NumPy's ``cross``. Each is composed of
element-wise functions, gathers and ``matmul``/``tensordot`` on the device."""

from __future__ import annotations

import string
from collections.abc import Sequence

import numpy as np

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _manipulation as _mn
from . import _statistical as _st
from . import linalg as _la
from ._checks import check_axis, check_same_device, check_tensor
from ._creation import arange, asarray, full_like, zeros
from ._data_type_functions import astype
from ._launch import make_view
from ._linear_algebra_functions import matmul
from ._np_creation import vander
from ._np_common import default_float, floating, gather_along, integer
from ._numpy_compat import ravel
from ._searching import searchsorted, where
from ._tensor import Tensor

__all__ = [
    "polyval", "polyfit", "polyder", "polyint", "polyadd", "polysub", "polymul", "polydiv", "poly", "roots",
    "convolve", "correlate", "interp", "gradient", "trapezoid", "einsum", "einsum_path", "kron", "vdot",
    "matvec", "vecmat", "cross",
]


def _vector(p, func: str, name: str = "p") -> Tensor:
    check_tensor(p, func, name)
    if p.ndim != 1:
        raise ValueError(f"{func}: {name} must be 1-D, got shape {p.shape}")
    return p


def polyval(p: Tensor, x: Tensor | float) -> Tensor:
    """The polynomial with coefficients ``p`` (highest degree first) at ``x``, by Horner's rule."""
    _vector(p, "polyval")
    if not isinstance(x, Tensor):
        x = asarray(x, dtype=p._dtype, device=p._dev)
    y = full_like(x, 0)  # NumPy's start: so an infinite x gives 0 * inf = NaN, as there
    for i in range(p.shape[0]):
        y = _ew.add(_ew.multiply(y, x), p[i])
    return y


def polyfit(x: Tensor, y: Tensor, deg: int, rcond: float | None = None, full: bool = False,
            w: Tensor | None = None, cov: bool = False):
    """The least-squares polynomial of degree ``deg`` through (x, y) (y may be 2-D: one fit per column),
    highest degree first; with ``full``, also (residuals, rank, singular values, rcond)."""
    _vector(x, "polyfit", "x")
    check_tensor(y, "polyfit", "y")
    deg = integer(deg, "polyfit", "deg")
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(f"polyfit: expected y 1-D or 2-D with {x.shape[0]} rows, got shape {y.shape}")
    if cov:
        raise NotImplementedError("polyfit: cov=True is not supported")
    x, y = floating(x, "polyfit"), floating(y, "polyfit")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x._dtype.np).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        _vector(w, "polyfit", "w")
        lhs = _ew.multiply(lhs, _mn.reshape(w, (-1, 1)))
        rhs = _ew.multiply(rhs, w if rhs.ndim == 1 else _mn.reshape(w, (-1, 1)))
    scale = _ew.sqrt(_st.sum(_ew.multiply(lhs, lhs), axis=0))
    lhs = _ew.divide(lhs, scale)
    c, resids, rank, s = _la.lstsq(lhs, rhs, rcond=rcond)
    c = _ew.divide(c, scale if c.ndim == 1 else _mn.reshape(scale, (-1, 1)))
    return (c, resids, rank, s, rcond) if full else c


def polyder(p: Tensor, m: int = 1) -> Tensor:
    """The coefficients of the ``m``-th derivative."""
    _vector(p, "polyder")
    m = integer(m, "polyder", "m")
    if m < 0:
        raise ValueError(f"polyder: order of derivative must be positive, got {m}")
    for _ in range(m):
        n = max(p.shape[0] - 1, 0)
        p = _ew.multiply(p[:n], arange(n, 0, -1, dtype=p._dtype, device=p._dev))  # a constant's: empty
    return p


def polyint(p: Tensor, m: int = 1, k=None) -> Tensor:
    """The coefficients of the ``m``-th antiderivative, with integration constants ``k`` (0 by default)."""
    _vector(p, "polyint")
    m = integer(m, "polyint", "m")
    if m < 0:
        raise ValueError(f"polyint: order of integral must be positive, got {m}")
    ks = [0.0] * m if k is None else ([k] * m if not isinstance(k, (list, tuple)) else list(k))
    if len(ks) != m:
        raise ValueError(f"polyint: k must be a scalar or a rank-1 array of length {m}")
    p = floating(p, "polyint")
    for c in ks:
        n = p.shape[0]
        q = _ew.divide(p, astype(arange(n, 0, -1, device=p._dev), p._dtype))
        p = _mn.concat([q, asarray([c], dtype=p._dtype, device=p._dev)])
    return p


def _pad_front(p: Tensor, n: int) -> Tensor:
    return p if p.shape[0] >= n else _mn.concat([zeros(n - p.shape[0], dtype=p._dtype, device=p._dev), p])


def polyadd(a1: Tensor, a2: Tensor) -> Tensor:
    """The coefficients of the sum."""
    _vector(a1, "polyadd", "a1"), _vector(a2, "polyadd", "a2")
    n = max(a1.shape[0], a2.shape[0])
    return _ew.add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1: Tensor, a2: Tensor) -> Tensor:
    """The coefficients of the difference."""
    _vector(a1, "polysub", "a1"), _vector(a2, "polysub", "a2")
    n = max(a1.shape[0], a2.shape[0])
    return _ew.subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1: Tensor, a2: Tensor) -> Tensor:
    """The coefficients of the product (:func:`convolve`)."""
    return convolve(_vector(a1, "polymul", "a1"), _vector(a2, "polymul", "a2"))


def polydiv(u: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """(quotient, remainder) of the polynomial division; ``v``'s leading coefficient must not be zero (it
    is not read to check)."""
    u, v = floating(_vector(u, "polydiv", "u"), "polydiv"), floating(_vector(v, "polydiv", "v"), "polydiv")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    dtype = dt.promote(u._dtype, v._dtype, "polydiv")
    u, v = astype(u, dtype), astype(v, dtype)
    scale = _ew.divide(1.0, v[0])
    r = u
    qs = []
    for k in range(max(m - n + 1, 0)):
        d = _ew.multiply(scale, r[k])
        qs.append(d)
        r = _mn.concat([r[:k], _ew.subtract(r[k:k + n + 1], _ew.multiply(d, v)), r[k + n + 1:]])
    q = _mn.stack(qs) if qs else zeros(1, dtype=r._dtype, device=r._dev)
    rem = r[max(m - n + 1, 0):] if m >= n else r
    # NumPy strips leading (near-)zeros of the remainder; its length depends on the data: kept full here
    return q, rem


def poly(seq_of_zeros: Tensor) -> Tensor:
    """The coefficients of the monic polynomial with the given roots (of a square matrix: its eigenvalues'
    characteristic polynomial)."""
    check_tensor(seq_of_zeros, "poly", "seq_of_zeros")
    z = seq_of_zeros
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        z = _la.eigvals(z)
    elif z.ndim != 1:
        raise ValueError(f"poly: input must be 1-D or a square 2-D array, got shape {z.shape}")
    z = floating(z, "poly")
    a = asarray([1.0], dtype=z._dtype, device=z._dev)
    for i in range(z.shape[0]):
        factor = _mn.concat([asarray([1.0], dtype=z._dtype, device=z._dev), _mn.reshape(_ew.negative(z[i]), (1,))])
        a = convolve(a, factor)
    if a._dtype.kind == "c":
        # roots in conjugate pairs give a real polynomial: NumPy returns its real part then (read on host)
        from ._np_math import real_if_close
        a = real_if_close(a)
    return a


def roots(p: Tensor) -> Tensor:
    """The roots of the polynomial ``p`` (the eigenvalues of its companion matrix). Leading and trailing
    zeros are found on the host (the number of roots depends on them)."""
    _vector(p, "roots")
    from ._searching import nonzero
    nz = nonzero(p)[0]
    if nz.shape[0] == 0:
        return zeros(0, dtype=floating(p, "roots")._dtype, device=p._dev)
    from ._transfer import to_numpy
    first, last = (int(v) for v in to_numpy(_mn.stack([nz[0], nz[-1]]), "roots"))
    trailing = p.shape[0] - last - 1
    p = floating(p[first:last + 1], "roots")
    n = p.shape[0]
    r = zeros(0, dtype=p._dtype, device=p._dev)
    if n > 1:
        comp = zeros((n - 1, n - 1), dtype=p._dtype, device=p._dev)
        if n > 2:
            comp[1:, :-1] = _la_eye(n - 2, p)
        comp[0, :] = _ew.divide(_ew.negative(p[1:]), p[0])
        r = _la.eigvals(comp)
    if trailing:
        r = _mn.concat([r, zeros(trailing, dtype=r._dtype, device=r._dev)])
    return r


def _la_eye(n: int, like: Tensor) -> Tensor:
    from ._creation import eye
    return eye(n, dtype=like._dtype, device=like._dev)


def _full_convolution(a: Tensor, v: Tensor) -> Tensor:
    """The full discrete convolution of 1-D a (n,) and v (m,): each output a row of a's zero-padded
    window gathered on the device, times the reversed v."""
    n, m = a.shape[0], v.shape[0]
    dev = a._dev
    dtype = dt.promote(a._dtype, v._dtype, "convolve")
    a, v = astype(a, dtype), astype(v, dtype)
    padded = _mn.concat([zeros(m - 1, dtype=dtype, device=dev), a, zeros(m - 1, dtype=dtype, device=dev)])
    total = n + m - 1
    # window k covers padded[k : k + m]: a strided view, no gather needed
    windows = make_view(padded, (total, m), (padded._strides[0], padded._strides[0]), padded._offset)
    return matmul(windows, _mn.flip(v))


def _mode_slice(full: Tensor, n: int, m: int, mode: str, func: str) -> Tensor:
    if mode == "full":
        return full
    if mode == "same":
        size, start = max(n, m), (min(n, m) - 1) // 2
        return full[start:start + size]
    if mode == "valid":
        size = max(n, m) - min(n, m) + 1
        start = min(n, m) - 1
        return full[start:start + size]
    raise ValueError(f"{func}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def convolve(a: Tensor, v: Tensor, mode: str = "full") -> Tensor:
    """The discrete linear convolution of the 1-D arrays ``a`` and ``v`` ('full', 'same' or 'valid')."""
    _vector(a, "convolve", "a"), _vector(v, "convolve", "v")
    check_same_device("convolve", a, v)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("convolve: a and v cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    return _mode_slice(_full_convolution(a, v), a.shape[0], v.shape[0], mode, "convolve")


def correlate(a: Tensor, v: Tensor, mode: str = "valid") -> Tensor:
    """The cross-correlation ``sum_n a[n + k] conj(v[n])`` of the 1-D arrays ('valid', 'same', 'full')."""
    _vector(a, "correlate", "a"), _vector(v, "correlate", "v")
    check_same_device("correlate", a, v)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("correlate: a and v cannot be empty")
    # the full correlation is the convolution of a with reversed conj(v); the shorter one is the kernel
    kernel = _mn.flip(_ew.conj(v) if v._dtype.kind == "c" else v)
    if kernel.shape[0] <= a.shape[0]:
        return _mode_slice(_full_convolution(a, kernel), a.shape[0], v.shape[0], mode, "correlate")
    # NumPy computes this case as correlate(v, a) reversed: its 'same' window is the mirrored one
    full = _mn.flip(_full_convolution(kernel, a))
    return _mn.flip(_mode_slice(full, a.shape[0], v.shape[0], mode, "correlate"))


def interp(x: Tensor, xp: Tensor, fp: Tensor, left: float | None = None, right: float | None = None,
           period: float | None = None) -> Tensor:
    """The piecewise-linear interpolant through (xp, fp) (xp increasing) at ``x``; ``left``/``right``
    outside (default fp[0], fp[-1]); ``period`` for periodic x-coordinates."""
    check_tensor(x, "interp", "x")
    _vector(xp, "interp", "xp"), _vector(fp, "interp", "fp")
    if xp.shape != fp.shape:
        raise ValueError(f"interp: fp and xp are not of the same length ({fp.shape[0]} and {xp.shape[0]})")
    if xp.shape[0] == 0:
        raise ValueError("interp: array of sample points is empty")
    fdt = default_float(x._dev) if fp._dtype.kind != "c" else fp._dtype
    x, xp = astype(floating(x, "interp"), dt.real_of(fdt)), astype(floating(xp, "interp"), dt.real_of(fdt))
    fp = astype(fp, fdt)
    if period is not None:
        if period == 0:
            raise ValueError("interp: period must be a non-zero value")
        period = abs(period)
        left = right = None
        x = _ew.remainder(x, period)
        xp = _ew.remainder(xp, period)
        from ._sorting import argsort
        from ._advanced_indexing import take
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = _mn.concat([_ew.subtract(xp[-1:], period), xp, _ew.add(xp[0:1], period)])
        fp = _mn.concat([fp[-1:], fp, fp[0:1]])
    n = xp.shape[0]
    flat = _mn.reshape(x, (-1,))
    j = _ew.clip(_ew.subtract(searchsorted(xp, flat, side="right"), 1), 0, max(n - 2, 0))
    j1 = _ew.clip(_ew.add(j, 1), 0, n - 1)
    x0, x1 = gather_along(xp, j, 0), gather_along(xp, j1, 0)
    f0, f1 = gather_along(fp, j, 0), gather_along(fp, j1, 0)
    slope = _ew.divide(_ew.subtract(f1, f0), _ew.subtract(x1, x0))
    r = _ew.add(_ew.multiply(slope, _ew.subtract(flat, x0)), f0)
    # NumPy: where that is NaN (an infinite slope times zero), from the other end
    if r._dtype.kind == "f":
        other = _ew.add(_ew.multiply(slope, _ew.subtract(flat, x1)), f1)
        r = where(_ew.logical_and(_ew.isnan(r), _ew.logical_not(_ew.isnan(slope))), other, r)
        r = where(_ew.logical_and(_ew.isnan(r), _ew.equal(f0, f1)), f0, r)
    r = where(_ew.equal(flat, xp[-1]), fp[-1], r) if n > 1 else _ew.add(_ew.multiply(flat, 0), fp[0])
    lv = fp[0] if left is None else left
    rv = fp[-1] if right is None else right
    r = where(_ew.less(flat, xp[0]), lv, r)
    r = where(_ew.greater(flat, xp[-1]), rv, r)
    return _mn.reshape(r, x.shape)


def gradient(f: Tensor, *varargs, axis: int | Sequence[int] | None = None, edge_order: int = 1):
    """The gradient of ``f`` by second-order central differences inside and one-sided differences of
    ``edge_order`` (1 or 2) at the edges, along each of ``axis``; spacings as NumPy's (scalars, or
    coordinate arrays per axis)."""
    check_tensor(f, "gradient", "f")
    axes = tuple(range(f.ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(check_axis(a, f.ndim, "gradient") for a in axes)
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and not isinstance(varargs[0], Tensor):
        dx = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        dx = list(varargs)
    else:
        raise TypeError(f"gradient: invalid number of spacing arguments ({len(varargs)}) for {len(axes)} axes")
    f = floating(f, "gradient")
    out = []
    for ax, d in zip(axes, dx):
        n = f.shape[ax]
        if n < edge_order + 1:
            raise ValueError(f"gradient: shape of the array along axis {ax} must be at least edge_order + 1")
        out.append(_gradient_axis(f, ax, d, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_axis(f: Tensor, ax: int, d, edge_order: int) -> Tensor:
    def sl(a, b):
        return f[(slice(None),) * ax + (slice(a, b),)]

    def bshape(t: Tensor) -> Tensor:
        return _mn.reshape(t, (-1,) + (1,) * (f.ndim - ax - 1))

    n = f.shape[ax]
    if isinstance(d, Tensor):
        if d.ndim == 0:
            d = float(d)
        else:
            if d.shape != (n,):
                raise ValueError(f"gradient: distances must have the axis's length {n}, got shape {d.shape}")
            x = astype(floating(d, "gradient"), f._dtype)
            h = _ew.subtract(x[1:], x[:-1])
    if not isinstance(d, Tensor):
        h = None
        d = float(d)
    if h is None:
        interior = _ew.divide(_ew.subtract(sl(2, None), sl(None, -2)), 2.0 * d)
        if edge_order == 1:
            first = _ew.divide(_ew.subtract(sl(1, 2), sl(0, 1)), d)
            last = _ew.divide(_ew.subtract(sl(-1, None), sl(-2, -1)), d)
        else:
            first = _ew.divide(_ew.add(_ew.add(_ew.multiply(sl(0, 1), -1.5), _ew.multiply(sl(1, 2), 2.0)),
                                       _ew.multiply(sl(2, 3), -0.5)), d)
            last = _ew.divide(_ew.add(_ew.add(_ew.multiply(sl(-3, -2), 0.5), _ew.multiply(sl(-2, -1), -2.0)),
                                      _ew.multiply(sl(-1, None), 1.5)), d)
    else:
        dx1, dx2 = bshape(h[:-1]), bshape(h[1:])
        a = _ew.negative(_ew.divide(dx2, _ew.multiply(dx1, _ew.add(dx1, dx2))))
        b = _ew.divide(_ew.subtract(dx2, dx1), _ew.multiply(dx1, dx2))
        c = _ew.divide(dx1, _ew.multiply(dx2, _ew.add(dx1, dx2)))
        interior = _ew.add(_ew.add(_ew.multiply(a, sl(None, -2)), _ew.multiply(b, sl(1, -1))),
                           _ew.multiply(c, sl(2, None)))
        if edge_order == 1:
            first = _ew.divide(_ew.subtract(sl(1, 2), sl(0, 1)), bshape(h[0:1]))
            last = _ew.divide(_ew.subtract(sl(-1, None), sl(-2, -1)), bshape(h[-1:]))
        else:
            d1, d2 = bshape(h[0:1]), bshape(h[1:2])
            a0 = _ew.negative(_ew.divide(_ew.add(_ew.multiply(d1, 2.0), d2), _ew.multiply(d1, _ew.add(d1, d2))))
            b0 = _ew.divide(_ew.add(d1, d2), _ew.multiply(d1, d2))
            c0 = _ew.negative(_ew.divide(d1, _ew.multiply(d2, _ew.add(d1, d2))))
            first = _ew.add(_ew.add(_ew.multiply(a0, sl(0, 1)), _ew.multiply(b0, sl(1, 2))), _ew.multiply(c0, sl(2, 3)))
            d1, d2 = bshape(h[-2:-1]), bshape(h[-1:])
            a1 = _ew.divide(d2, _ew.multiply(d1, _ew.add(d1, d2)))
            b1 = _ew.negative(_ew.divide(_ew.add(d2, d1), _ew.multiply(d1, d2)))
            c1 = _ew.divide(_ew.add(_ew.multiply(d2, 2.0), d1), _ew.multiply(d2, _ew.add(d1, d2)))
            last = _ew.add(_ew.add(_ew.multiply(a1, sl(-3, -2)), _ew.multiply(b1, sl(-2, -1))),
                           _ew.multiply(c1, sl(-1, None)))
    return _mn.concat([first, interior, last], axis=ax)


def trapezoid(y: Tensor, x: Tensor | None = None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, over sample points ``x`` (1-D, or
    shaped like y) or spacing ``dx``."""
    check_tensor(y, "trapezoid", "y")
    y = floating(y, "trapezoid")
    ax = check_axis(axis, y.ndim, "trapezoid")
    lead = (slice(None),) * ax
    if x is None:
        d = dx
    else:
        check_tensor(x, "trapezoid", "x")
        x = astype(floating(x, "trapezoid"), y._dtype if y._dtype.kind == "f" else dt.real_of(y._dtype))
        if x.ndim == 1:
            d = _mn.reshape(_ew.subtract(x[1:], x[:-1]), (-1,) + (1,) * (y.ndim - ax - 1))
        else:
            d = _ew.subtract(x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)])
    avg = _ew.divide(_ew.add(y[lead + (slice(1, None),)], y[lead + (slice(None, -1),)]), 2.0)
    return _st.sum(_ew.multiply(d, avg), axis=ax)


def _parse_einsum(subscripts: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    """The inputs' and the output's index letters, ellipses replaced by unused (uppercase) letters."""
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
    else:
        ins, out = s, None
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands")
    used = set(s)
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in used]
    ell_n = 0
    for t, op in zip(terms, operands):
        if "..." in t:
            ell_n = max(ell_n, op.ndim - (len(t) - 3))
    ell = "".join(spare[:ell_n])
    fixed = []
    for t, op in zip(terms, operands):
        if "..." in t:
            k = op.ndim - (len(t) - 3)
            t = t.replace("...", ell[ell_n - k:] if k else "")
        if len(t) != op.ndim or not all(c.isalpha() for c in t):
            raise ValueError(f"einsum: subscripts {t!r} do not match an operand of {op.ndim} dimensions")
        fixed.append(t)
    if out is None:
        counts = {}
        for t in fixed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
        if not all(c.isalpha() for c in out) or len(set(out)) != len(out):
            raise ValueError(f"einsum: invalid output subscripts {out!r}")
        letters = set("".join(fixed))
        if not set(out) <= letters:
            extra = sorted(set(out) - letters)[0]
            raise ValueError(f"einsum: output subscript {extra!r} does not appear in the inputs")
    return fixed, out


def _diagonalize(op: Tensor, term: str) -> tuple[Tensor, str]:
    """A view of ``op`` with each repeated letter of ``term`` reduced to its diagonal."""
    while len(set(term)) != len(term):
        c = next(ch for ch in term if term.count(ch) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        if op.shape[i] != op.shape[j]:
            raise ValueError(f"einsum: repeated subscript {c!r} has different sizes {op.shape[i]} and {op.shape[j]}")
        shape = [n for k, n in enumerate(op.shape) if k != j]
        strides = [s for k, s in enumerate(op._strides) if k != j]
        strides[i] = op._strides[i] + op._strides[j]
        op = make_view(op, tuple(shape), tuple(strides), op._offset)
        term = term[:j] + term[j + 1:]
    return op, term


def einsum(subscripts: str, *operands: Tensor, out: Tensor | None = None, dtype: dt.DType | None = None,
           optimize=False) -> Tensor:
    """Einstein summation: ``subscripts`` as NumPy's (explicit '->' output or implicit, '...' broadcast,
    repeated indices for diagonals). Operands are contracted left to right, each pair by one
    ``tensordot`` over the letters no later term needs (``optimize`` is accepted and ignored)."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    if not operands:
        raise ValueError("einsum: at least one operand is needed")
    ops = [check_tensor(o, "einsum", "operands") for o in operands]
    check_same_device("einsum", *ops)
    if dtype is not None:
        ops = [astype(o, dtype) for o in ops]
    terms, output = _parse_einsum(subscripts, ops)
    sizes: dict[str, int] = {}
    for t, o in zip(terms, ops):
        for c, n in zip(t, o.shape):
            if sizes.get(c, n) != n and n != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: size of subscript {c!r} differs between operands ({sizes[c]} and {n})")
            sizes[c] = max(sizes.get(c, n), n)
    pairs = [_diagonalize(o, t) for o, t in zip(ops, terms)]

    def reduce_own(o: Tensor, t: str, keep: set) -> tuple[Tensor, str]:
        drop = tuple(i for i, c in enumerate(t) if c not in keep)
        if drop:
            o = _st.sum(o, axis=drop) if o._dtype is not dt.bool_ else _st.sum(astype(o, dt.int64), axis=drop)
            t = "".join(c for c in t if c not in {t[i] for i in drop})
        return o, t

    acc, at = pairs[0]
    for k in range(1, len(pairs)):
        later = set(output).union(*(set(t) for _, t in pairs[k + 1:]))
        bo, bt = pairs[k]
        acc, at = reduce_own(acc, at, later | set(bt))
        bo, bt = reduce_own(bo, bt, later | set(at))
        shared = [c for c in at if c in bt]
        contract = [c for c in shared if c not in later]
        batch = [c for c in shared if c in later]
        # batch letters (and letters of size 1 in one operand) are broadcast through an element-wise product
        # and summed; otherwise the contracted letters are summed by tensordot
        if batch or any(acc.shape[at.index(c)] != bo.shape[bt.index(c)] for c in contract):
            letters = at + "".join(c for c in bt if c not in at)
            a_view = _expand_to(acc, at, letters, sizes)
            b_view = _expand_to(bo, bt, letters, sizes)
            prod = _ew.multiply(a_view, b_view)
            drop = tuple(i for i, c in enumerate(letters) if c in contract)
            acc = _st.sum(prod, axis=drop) if drop else prod
            at = "".join(c for c in letters if c not in contract)
        else:
            from ._linear_algebra_functions import tensordot
            acc = tensordot(acc, bo, axes=([at.index(c) for c in contract], [bt.index(c) for c in contract]))
            at = "".join(c for c in at if c not in contract) + "".join(c for c in bt if c not in contract)
    acc, at = reduce_own(acc, at, set(output))
    result = _mn.permute_dims(acc, tuple(at.index(c) for c in output)) if at != output else acc
    result = _mn.broadcast_to(result, tuple(sizes[c] for c in output)) if result.shape != tuple(
        sizes[c] for c in output) else result
    return result if out is None else _ew.positive(result, out=out)


def _expand_to(o: Tensor, t: str, letters: str, sizes: dict) -> Tensor:
    """``o`` (letters ``t``) as a view with one axis per letter of ``letters`` (size-1 where absent)."""
    perm = tuple(t.index(c) for c in letters if c in t)
    o = _mn.permute_dims(o, perm) if perm != tuple(range(len(perm))) else o
    return _mn.reshape(o, tuple(o.shape[[c for c in letters if c in t].index(c)] if c in t else 1 for c in letters))


def einsum_path(subscripts: str, *operands: Tensor, optimize="greedy", einsum_call: bool = False):
    """The contraction order :func:`einsum` uses (left to right) and a short report, in NumPy's form."""
    ops = [check_tensor(o, "einsum_path", "operands") for o in operands]
    terms, output = _parse_einsum(subscripts, ops)
    path = ["einsum_path"] + [(0, 1)] * (len(ops) - 1) if len(ops) > 1 else ["einsum_path", (0,)]
    report = (f"  Complete contraction:  {','.join(terms)}->{output}\n"
              f"  Contraction order: left to right, {max(len(ops) - 1, 1)} step(s)")
    return path, report


def kron(a: Tensor, b: Tensor) -> Tensor:
    """The Kronecker product: blocks ``a[i, j, ...] * b``."""
    check_tensor(a, "kron", "a")
    check_tensor(b, "kron", "b")
    nd = max(a.ndim, b.ndim)
    a = _mn.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = _mn.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ai = _mn.reshape(a, tuple(x for n in a.shape for x in (n, 1)))
    bi = _mn.reshape(b, tuple(x for n in b.shape for x in (1, n)))
    return _mn.reshape(_ew.multiply(ai, bi), tuple(m * n for m, n in zip(a.shape, b.shape)))


def vdot(a: Tensor, b: Tensor, /) -> Tensor:
    """The dot product of the flattened arrays, conjugating ``a`` (0-D)."""
    check_tensor(a, "vdot", "a")
    check_tensor(b, "vdot", "b")
    if a.size != b.size:
        raise ValueError(f"vdot: arrays have different sizes ({a.size} and {b.size})")
    a = _ew.conj(ravel(a)) if a._dtype.kind == "c" else ravel(a)
    return _st.sum(_ew.multiply(a, ravel(b)))


def matvec(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Matrix-vector products over the last two axes of ``x1`` and the last of ``x2`` (batched)."""
    check_tensor(x1, "matvec", "x1")
    check_tensor(x2, "matvec", "x2")
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got {x1.shape}, {x2.shape}")
    return matmul(x1, _mn.expand_dims(x2, axis=-1))[..., 0]


def vecmat(x1: Tensor, x2: Tensor, /) -> Tensor:
    """Vector-matrix products ``conj(x1) @ x2`` over the last axis of ``x1`` and last two of ``x2``."""
    check_tensor(x1, "vecmat", "x1")
    check_tensor(x2, "vecmat", "x2")
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got {x1.shape}, {x2.shape}")
    v = _ew.conj(x1) if x1._dtype.kind == "c" else x1
    return matmul(_mn.expand_dims(v, axis=-2), x2)[..., 0, :]


def cross(a: Tensor, b: Tensor, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    """NumPy's cross product of 3-vectors (2-vectors: the z-component, or a 3-vector when one is 3-D),
    along ``axisa``/``axisb``, the result's vectors along ``axisc`` (``axis`` sets all three)."""
    check_tensor(a, "cross", "a")
    check_tensor(b, "cross", "b")
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _mn.moveaxis(a, check_axis(axisa, a.ndim, "cross"), -1)
    b = _mn.moveaxis(b, check_axis(axisb, b.ndim, "cross"), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), "
                         f"got {na} and {nb}")
    if na == 2 and nb == 2:
        return _ew.subtract(_ew.multiply(a[..., 0], b[..., 1]), _ew.multiply(a[..., 1], b[..., 0]))

    def three(v: Tensor) -> Tensor:
        return v if v.shape[-1] == 3 else _mn.concat([v, _ew.multiply(v[..., :1], 0)], axis=-1)

    c = _la.cross(three(a), three(b), axis=-1)
    return _mn.moveaxis(c, -1, check_axis(axisc, c.ndim, "cross"))
