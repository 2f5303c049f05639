"""NumPy's element-wise mathematical functions the standard lacks (``fmod``, ``cbrt``, ``gcd``, ``frexp``,
``nan_to_num``, ...), each a composition of the standard's element-wise functions, so each runs on every
device and inside capture. Arguments are numr arrays (Python scalars where the function underneath takes
them). docs/numpy-differences.md lists what differs from NumPy."""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes as dt
from . import _elementwise as _ew
from . import _statistical as _st
from ._creation import full_like
from ._data_type_functions import astype
from ._np_common import floating, integer, tensor
from ._searching import where
from ._tensor import Tensor
from ._utility import all as _all

__all__ = [
    "fmod", "cbrt", "exp2", "gcd", "lcm", "sinc", "fabs", "float_power", "heaviside", "i0", "ldexp", "frexp",
    "modf", "divmod", "rint", "fix", "isneginf", "isposinf", "isreal", "iscomplex", "isrealobj",
    "iscomplexobj", "isscalar", "nan_to_num", "angle", "bitwise_not", "bitwise_count", "fmax", "fmin",
    "logaddexp2", "spacing", "real_if_close", "unwrap", "ptp", "packbits", "unpackbits",
]

Scalar = int | float


def _real(x, func: str, name: str = "x") -> Tensor:
    tensor(x, func, name)
    if x._dtype.kind not in dt.INTEGER_KINDS + ("f",):
        raise TypeError(f"{func}: {name} must have a real numeric dtype, got {x._dtype.name}")
    return x


def _integer(x, func: str, name: str) -> Tensor:
    tensor(x, func, name)
    if x._dtype.kind not in dt.INTEGER_KINDS:
        raise TypeError(f"{func}: {name} must have an integer dtype, got {x._dtype.name}")
    return x


def _float(x, func: str) -> Tensor:
    """A real array as floating point (integers in the default float, as NumPy's float loops)."""
    return floating(_real(x, func), func)


def fmod(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """The C remainder, with the sign of ``x1`` (``remainder`` takes x2's). Floating point: the remainder
    of the magnitudes (exact) with x1's sign; integers: ``remainder`` moved by x2 where the signs differ
    (exact too, and without ``|x1|``, which overflows for the most negative integer)."""
    _real(x1, "fmod", "x1")
    if isinstance(x2, Tensor):
        _real(x2, "fmod", "x2")
    if x1._dtype.kind == "f" or (isinstance(x2, Tensor) and x2._dtype.kind == "f") \
            or isinstance(x2, float):
        r = _ew.remainder(_ew.abs(x1), _ew.abs(x2) if isinstance(x2, Tensor) else abs(x2))
        return _ew.copysign(r, astype(x1, r._dtype, copy=False))
    r = _ew.remainder(x1, x2)
    differ = _ew.logical_and(_ew.not_equal(r, 0), _ew.not_equal(_ew.less(r, 0), _ew.less(x1, 0)))
    return where(differ, _ew.subtract(r, x2), r)


def cbrt(x: Tensor, /) -> Tensor:
    """The real cube root (negative for negative x): ``|x| ** (1/3)`` with x's sign, refined by a Newton
    step so that exact cubes give their exact roots."""
    x = _float(x, "cbrt")
    a = _ew.abs(x)
    y = _ew.pow(a, 1.0 / 3.0)
    y2 = _ew.multiply(y, y)
    step = _ew.divide(_ew.subtract(_ew.multiply(y2, y), a), _ew.multiply(y2, 3.0))
    # the step is defined where y is finite and non-zero (not at 0, inf or NaN)
    y = where(_ew.logical_and(_ew.isfinite(step), _ew.greater(y, 0)), _ew.subtract(y, step), y)
    return _ew.copysign(y, x)


def exp2(x: Tensor, /) -> Tensor:
    """``2 ** x``."""
    x = floating(tensor(x, "exp2"), "exp2")
    return _ew.pow(2.0, x)


def _euclid_steps(dtype: dt.DType) -> int:
    """Euclid's algorithm ends within 1.44 log2(max) + 2 steps (Lamé): a fixed count keeps gcd capturable."""
    return int(1.45 * dtype.bits) + 3


def _integer_pair(x1, x2, func: str) -> tuple[Tensor, Tensor]:
    """``|x1|`` and ``|x2|`` broadcast together in their promoted integer dtype."""
    _integer(x1, func, "x1")
    if isinstance(x2, Tensor):
        _integer(x2, func, "x2")
    elif type(x2) is not int:
        raise TypeError(f"{func}: x2 must be an integer array or a Python int, got {type(x2).__name__}")
    zero = _ew.multiply(_ew.add(x1, x2), 0)  # the promoted dtype and broadcast shape
    return _ew.add(_ew.abs(x1), zero), _ew.add(zero, _ew.abs(x2) if isinstance(x2, Tensor) else abs(x2))


def gcd(x1: Tensor, x2: Tensor | int, /) -> Tensor:
    """The greatest common divisor of ``|x1|`` and ``|x2|`` (integer arrays); gcd(0, 0) = 0."""
    a, b = _integer_pair(x1, x2, "gcd")
    for _ in range(_euclid_steps(a._dtype)):
        nonzero = _ew.not_equal(b, 0)
        a, b = where(nonzero, b, a), where(nonzero, _ew.remainder(a, where(nonzero, b, 1)), 0)
    return a


def lcm(x1: Tensor, x2: Tensor | int, /) -> Tensor:
    """The least common multiple of ``|x1|`` and ``|x2|``; 0 where either is 0."""
    a, b = _integer_pair(x1, x2, "lcm")
    g = gcd(a, b)
    return _ew.multiply(_ew.floor_divide(a, where(_ew.equal(g, 0), 1, g)), b)


def sinc(x: Tensor, /) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = floating(tensor(x, "sinc"), "sinc")
    y = _ew.multiply(where(_ew.equal(x, 0), 1.0e-20, x), math.pi)
    return _ew.divide(_ew.sin(y), y)


def fabs(x: Tensor, /) -> Tensor:
    """The absolute value as a floating-point array (complex arrays are refused, as in NumPy)."""
    return _ew.abs(_float(x, "fabs"))


def float_power(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """``x1 ** x2`` computed in float64 (complex128 for complex operands)."""
    tensor(x1, "float_power", "x1")
    kinds = {x1._dtype.kind, x2._dtype.kind if isinstance(x2, Tensor) else type(x2).__name__}
    wide = dt.complex128 if kinds & {"c", "complex"} else dt.float64
    if not x1._dev.client.supports_dtype(wide):
        raise TypeError(f"float_power: computes in {wide.name}, which device {x1._dev} does not support")
    return _ew.pow(astype(x1, wide), astype(x2, wide) if isinstance(x2, Tensor) else x2)


def heaviside(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """0 where x1 < 0, 1 where x1 > 0, ``x2`` where x1 == 0, NaN where x1 is NaN."""
    x1 = _float(x1, "heaviside")
    x2 = astype(x2, x1._dtype) if isinstance(x2, Tensor) else float(x2)
    step = where(_ew.equal(x1, 0), x2, where(_ew.isnan(x1), x1, 1.0))
    return where(_ew.less(x1, 0), 0.0, step)


# Cephes' Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) above, as NumPy's
# i0 uses them
_I0_A = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
    -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
    -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
    -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
    -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761,
)
_I0_B = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088,
)


def _chebyshev(x: Tensor, coefficients: tuple[float, ...]) -> Tensor:
    """Clenshaw's sum of a Chebyshev series, in NumPy's (Cephes') order of operations."""
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = _ew.add(_ew.subtract(_ew.multiply(x, b1), b2), c)
    return _ew.multiply(_ew.subtract(b0, b2), 0.5)


def i0(x: Tensor, /) -> Tensor:
    """The modified Bessel function of the first kind, order 0 (NumPy's Chebyshev series)."""
    a = _ew.abs(_float(x, "i0"))
    small = _ew.multiply(_ew.exp(a), _chebyshev(_ew.subtract(_ew.divide(a, 2.0), 2.0), _I0_A))
    big_a = where(_ew.greater(a, 8.0), a, 8.0)  # keeps 32 / a finite where the series is not used
    big = _ew.divide(_ew.multiply(_ew.exp(big_a), _chebyshev(_ew.subtract(_ew.divide(32.0, big_a), 2.0), _I0_B)),
                     _ew.sqrt(big_a))
    return where(_ew.less_equal(a, 8.0), small, big)


#: the exponents whose powers of two _power_of_two looks up: beyond them float64's 2**e is 0 or inf
_POW2_LO, _POW2_HI = -1100, 1100


def _power_of_two(e: Tensor, dtype: dt.DType) -> Tensor:
    """2 ** e for integer exponents, exactly: a gather from a table of the powers of two (made on the host,
    where they are exact), since a device's pow(2.0, e) need not be (CUDA's is an ulp off for some e)."""
    from ._advanced_indexing import take
    from ._creation import asarray
    from ._manipulation import reshape

    with np.errstate(over="ignore"):  # (beyond the dtype's range, the powers are inf, as 2 ** e is)
        table = np.ldexp(1.0, np.arange(_POW2_LO, _POW2_HI + 1)).astype(dtype.np)
    table = asarray(table, device=e.device)
    index = _ew.subtract(astype(_ew.clip(e, _POW2_LO, _POW2_HI), dt.int32), _POW2_LO)
    return reshape(take(table, reshape(index, (-1,)), axis=0), e.shape)


def ldexp(x1: Tensor, x2: Tensor | int, /) -> Tensor:
    """``x1 * 2 ** x2`` for integer ``x2``, scaling in two halves so that neither factor overflows or
    underflows before the product does."""
    x1 = _float(x1, "ldexp")
    if isinstance(x2, Tensor):
        _integer(x2, "ldexp", "x2")
    else:
        x2 = integer(x2, "ldexp", "x2")
    half = _ew.floor_divide(x2, 2)
    rest = _ew.subtract(x2, half)
    half = half if isinstance(half, Tensor) else _ew.add(_ew.multiply(x1, 0), half)
    rest = rest if isinstance(rest, Tensor) else _ew.add(_ew.multiply(x1, 0), rest)
    return _ew.multiply(_ew.multiply(x1, _power_of_two(half, x1._dtype)), _power_of_two(rest, x1._dtype))


def frexp(x: Tensor, /) -> tuple[Tensor, Tensor]:
    """(mantissa, exponent) with ``x = mantissa * 2 ** exponent`` and ``0.5 <= |mantissa| < 1`` (0, inf and NaN
    give themselves and exponent 0); the exponent is int32, as NumPy's."""
    x = _float(x, "frexp")
    finite = _ew.logical_and(_ew.isfinite(x), _ew.not_equal(x, 0))
    a = where(finite, _ew.abs(x), 1.0)
    e = astype(_ew.add(_ew.floor(_ew.log2(a)), 1.0), dt.int32)
    m = ldexp(a, _ew.negative(e))
    # log2 rounds near powers of two: move the mantissa into [0.5, 1)
    hi = _ew.greater_equal(m, 1.0)
    lo = _ew.less(m, 0.5)
    e = where(hi, _ew.add(e, 1), where(lo, _ew.subtract(e, 1), e))
    m = where(hi, _ew.multiply(m, 0.5), where(lo, _ew.multiply(m, 2.0), m))
    return where(finite, _ew.copysign(m, x), x), where(finite, e, 0)


def modf(x: Tensor, /) -> tuple[Tensor, Tensor]:
    """(fractional part, integral part), both with x's sign; infinities have fractional part ±0."""
    x = _float(x, "modf")
    whole = _ew.trunc(x)
    frac = where(_ew.isinf(x), _ew.copysign(0.0, x), _ew.copysign(_ew.subtract(x, whole), x))
    return frac, whole


def divmod(x1: Tensor, x2: Tensor | Scalar, /) -> tuple[Tensor, Tensor]:
    """(``floor_divide(x1, x2)``, ``remainder(x1, x2)``)."""
    _real(x1, "divmod", "x1")
    return _ew.floor_divide(x1, x2), _ew.remainder(x1, x2)


def rint(x: Tensor, /) -> Tensor:
    """Round to the nearest integer, halves to even (:func:`round`)."""
    return _ew.round(tensor(x, "rint"))


def fix(x: Tensor, /) -> Tensor:
    """Round towards zero (:func:`trunc`); integer arrays are returned as they are."""
    return _ew.trunc(_real(x, "fix"))


def isneginf(x: Tensor, /) -> Tensor:
    """Where ``x`` is -inf."""
    return _ew.logical_and(_ew.isinf(_real(x, "isneginf")), _ew.signbit(x) if x._dtype.kind == "f"
                           else _ew.less(x, 0))


def isposinf(x: Tensor, /) -> Tensor:
    """Where ``x`` is +inf."""
    return _ew.logical_and(_ew.isinf(_real(x, "isposinf")), _ew.greater(x, 0))


def isreal(x: Tensor, /) -> Tensor:
    """Where the imaginary part is zero (everywhere for real arrays)."""
    tensor(x, "isreal", "x")
    if x._dtype.kind == "c":
        return _ew.equal(_ew.imag(x), 0)
    return full_like(x, True, dtype=dt.bool_)


def iscomplex(x: Tensor, /) -> Tensor:
    """Where the imaginary part is not zero (nowhere for real arrays)."""
    return _ew.logical_not(isreal(tensor(x, "iscomplex", "x")))


def isrealobj(x: Tensor, /) -> bool:
    """Whether ``x`` has a real (non-complex) dtype."""
    return tensor(x, "isrealobj", "x")._dtype.kind != "c"


def iscomplexobj(x: Tensor, /) -> bool:
    """Whether ``x`` has a complex dtype."""
    return tensor(x, "iscomplexobj", "x")._dtype.kind == "c"


def isscalar(element: object, /) -> bool:
    """Whether ``element`` is a scalar: a Python or NumPy number, bool, str or bytes (arrays, 0-D ones
    included, are not)."""
    return isinstance(element, (bool, int, float, complex, str, bytes, np.generic))


def nan_to_num(x: Tensor, /, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf``/``neginf`` (default: the dtype's
    largest and most negative finite values); real and imaginary parts separately. Always a new array
    (``copy=False`` cannot write in place: numr functions do not mutate their arguments)."""
    tensor(x, "nan_to_num", "x")
    if x._dtype.kind == "c":
        re, im = nan_to_num(_ew.real(x), nan=nan, posinf=posinf, neginf=neginf), \
            nan_to_num(_ew.imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return _ew.add(astype(re, x._dtype), _ew.multiply(astype(im, x._dtype), 1j))
    if x._dtype.kind != "f":
        return astype(x, x._dtype, copy=True)
    big = float(np.finfo(x._dtype.np).max)
    out = where(_ew.isnan(x), float(nan), x)
    out = where(isposinf(x), big if posinf is None else float(posinf), out)
    return where(isneginf(x), -big if neginf is None else float(neginf), out)


def angle(z: Tensor, deg: bool = False) -> Tensor:
    """The argument of each complex number (of a real number: 0 or pi), in radians or degrees."""
    tensor(z, "angle", "z")
    z = floating(z, "angle")
    if z._dtype.kind == "c":
        a = _ew.atan2(_ew.imag(z), _ew.real(z))
    else:
        a = _ew.atan2(full_like(z, 0.0), z)  # +0 imaginary parts: pi for negative numbers
    return _ew.multiply(a, 180.0 / math.pi) if deg else a


bitwise_not = _ew.bitwise_invert


_SWAR = {8: (0x55, 0x33, 0x0F), 16: (0x5555, 0x3333, 0x0F0F), 32: (0x55555555, 0x33333333, 0x0F0F0F0F),
         64: (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F)}


def bitwise_count(x: Tensor, /) -> Tensor:
    """The number of 1 bits in ``|x|`` (uint8), by the parallel bit count of the magnitude's bits."""
    _integer(x, "bitwise_count", "x")
    bits = x._dtype.bits
    unsigned = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}[bits]
    v = astype(_ew.abs(x) if x._dtype.kind == "i" else x, unsigned)
    m1, m2, m4 = _SWAR[bits]
    v = _ew.subtract(v, _ew.bitwise_and(_ew.bitwise_right_shift(v, 1), m1))
    v = _ew.add(_ew.bitwise_and(v, m2), _ew.bitwise_and(_ew.bitwise_right_shift(v, 2), m2))
    v = _ew.bitwise_and(_ew.add(v, _ew.bitwise_right_shift(v, 4)), m4)
    shift = 8
    while shift < bits:  # add the byte counts together
        v = _ew.add(v, _ew.bitwise_right_shift(v, shift))
        shift *= 2
    return astype(_ew.bitwise_and(v, 0xFF), dt.uint8)


def _ignoring_nan(extremum, x1: Tensor, x2: Tensor | Scalar, func: str) -> Tensor:
    """``extremum`` (maximum or minimum) of x1 and x2 where the other operand of a NaN wins (NaN only where
    both are NaN)."""
    _real(x1, func, "x1")
    m = extremum(x1, x2)
    if m._dtype.kind != "f":
        return m
    return where(_ew.isnan(x1), _as(x2, m), where(_ew.isnan(_as(x2, m)), x1, m))


def fmax(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """The element-wise maximum, ignoring NaNs (NaN only where both are NaN)."""
    return _ignoring_nan(_ew.maximum, x1, x2, "fmax")


def fmin(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """The element-wise minimum, ignoring NaNs (NaN only where both are NaN)."""
    return _ignoring_nan(_ew.minimum, x1, x2, "fmin")


def _as(v, like: Tensor) -> Tensor:
    """``v`` (an array or a Python scalar) as an array of like's dtype, broadcast to like's shape."""
    from . import _manipulation as _mn
    from ._creation import full_like as _full_like
    if not isinstance(v, Tensor):
        return _full_like(like, v)
    return _mn.broadcast_to(astype(v, like._dtype, copy=False), like._shape)


def logaddexp2(x1: Tensor, x2: Tensor | Scalar, /) -> Tensor:
    """``log2(2 ** x1 + 2 ** x2)`` without overflow."""
    _real(x1, "logaddexp2", "x1")
    ln2 = math.log(2.0)
    return _ew.divide(_ew.logaddexp(_ew.multiply(_float(x1, "logaddexp2"), ln2), _ew.multiply(x2, ln2)), ln2)


def spacing(x: Tensor, /) -> Tensor:
    """The distance from ``x`` to the next representable number away from zero, negative for negative x
    (NaN for infinities; positive for -0.0, as NumPy's)."""
    x = _float(x, "spacing")
    a = _ew.abs(x)
    d = _ew.subtract(_ew.nextafter(a, math.inf), a)
    return where(_ew.less(x, 0), _ew.negative(d), d)


def real_if_close(a: Tensor, tol: float = 100) -> Tensor:
    """The real part of a complex array whose imaginary parts are all within ``tol`` machine epsilons of
    zero (``tol`` > 1), or that many absolute units (``tol`` <= 1); else ``a``. Whether they are is read on
    the host: the result's dtype depends on it, as in NumPy."""
    tensor(a, "real_if_close")
    if a._dtype.kind != "c":
        return a
    if tol > 1:
        tol = float(np.finfo(dt.real_of(a._dtype).np).eps) * tol
    return _ew.real(a) if bool(_all(_ew.less(_ew.abs(_ew.imag(a)), tol))) else a


def unwrap(p: Tensor, discont: float | None = None, axis: int = -1, *, period: float = 2 * math.pi) -> Tensor:
    """``p`` with jumps larger than ``max(discont, period / 2)`` along ``axis`` replaced by their
    ``period``-complement (NumPy's algorithm)."""
    from . import _manipulation as _mn
    from ._utility import diff
    p = _float(p, "unwrap")
    half = period / 2
    discont = half if discont is None else discont
    d = diff(p, axis=axis)
    dd = _ew.subtract(_ew.remainder(_ew.add(d, half), period), half)
    dd = where(_ew.logical_and(_ew.equal(dd, -half), _ew.greater(d, 0)), half, dd)
    correction = _ew.subtract(dd, d)
    correction = where(_ew.less(_ew.abs(d), discont), 0.0, correction)
    ax = axis % p.ndim
    head = p[(slice(None),) * ax + (slice(0, 1),)]
    tail = _ew.add(p[(slice(None),) * ax + (slice(1, None),)], _st.cumulative_sum(correction, axis=ax))
    return _mn.concat([head, tail], axis=ax)


def ptp(a: Tensor, axis: int | tuple[int, ...] | None = None, out: Tensor | None = None,
        keepdims: bool = False) -> Tensor:
    """The range ``max - min`` over ``axis``."""
    _real(a, "ptp", "a")
    return _ew.subtract(_st.max(a, axis=axis, keepdims=keepdims), _st.min(a, axis=axis, keepdims=keepdims),
                        out=out)


def _bit_weights(dev, bitorder: str, func: str) -> Tensor:
    """The shift of each of 8 bits in a byte: most significant first ('big') or last ('little')."""
    from ._creation import arange
    if bitorder not in ("big", "little"):
        raise ValueError(f"{func}: bitorder must be 'big' or 'little', got {bitorder!r}")
    shifts = arange(8, dtype=dt.uint8, device=dev)
    return _ew.subtract(7, shifts) if bitorder == "big" else shifts


def packbits(a: Tensor, /, axis: int | None = None, bitorder: str = "big") -> Tensor:
    """The elements of the boolean or integer ``a`` (non-zero as 1) packed 8 to a uint8 along ``axis`` (of
    the flattened array when None), the last byte zero-padded."""
    from . import _manipulation as _mn
    from ._np_common import last_axis
    tensor(a, "packbits", "a")
    if a._dtype.kind not in dt.INTEGER_KINDS and a._dtype is not dt.bool_:
        raise TypeError(f"packbits: a must be of integer or boolean type, got {a._dtype.name}")
    moved = last_axis(a, axis, "packbits")
    n = moved.shape[-1]
    bits = astype(_ew.not_equal(moved, 0) if a._dtype is not dt.bool_ else moved, dt.uint8)
    if n % 8:
        from ._creation import zeros
        bits = _mn.concat([bits, zeros(bits.shape[:-1] + (8 - n % 8,), dtype=dt.uint8, device=a._dev)], axis=-1)
    groups = _mn.reshape(bits, bits.shape[:-1] + (-1, 8))
    packed = astype(_st.sum(_ew.bitwise_left_shift(groups, _bit_weights(a._dev, bitorder, "packbits")), axis=-1),
                    dt.uint8)
    return packed if axis is None else _mn.moveaxis(packed, -1, axis)


def unpackbits(a: Tensor, /, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Tensor:
    """The bits of the uint8 array ``a`` as a uint8 array of 0s and 1s, 8 per byte along ``axis`` (of
    the flattened array when None); ``count`` keeps that many (negative: drops that many from the end)."""
    from . import _manipulation as _mn
    from ._np_common import last_axis
    tensor(a, "unpackbits", "a")
    if a._dtype is not dt.uint8:
        raise TypeError(f"unpackbits: expected an input array of unsigned byte data type, got {a._dtype.name}")
    moved = last_axis(a, axis, "unpackbits")
    bits = _ew.bitwise_and(_ew.bitwise_right_shift(_mn.expand_dims(moved, axis=-1),
                                                   _bit_weights(a._dev, bitorder, "unpackbits")), 1)
    bits = _mn.reshape(bits, moved.shape[:-1] + (-1,))
    if count is not None:
        count = integer(count, "unpackbits", "count")
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep > total:
            from ._creation import zeros
            bits = _mn.concat([bits, zeros(bits.shape[:-1] + (keep - total,), dtype=dt.uint8, device=a._dev)], axis=-1)
        else:
            bits = bits[..., :keep]
    return bits if axis is None else _mn.moveaxis(bits, -1, axis)
