"""NumPy's element-wise math (numr_array/_np_math.py) against NumPy on the device under test."""

import warnings

import numpy as np
import pytest

import numr_array as xp

from .helpers import needs_dtype, needs_libm
from .np_helpers import RNG, float_data, host, on_device, same

FLOATS = [np.float32, np.float64]
SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 8.0, -27.0, 1e-3, 123.456, np.inf, -np.inf, np.nan])


def _needs(dtype):
    needs_dtype(xp._dtypes.from_numpy(np.dtype(dtype)))


def _ref(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["cbrt", "exp2", "sinc", "fabs", "rint", "fix", "i0", "spacing", "isneginf",
                                  "isposinf", "isreal", "iscomplex"])
def test_unary_against_numpy(name, dtype):
    _needs(dtype)
    if name in ("exp2", "sinc", "i0", "cbrt"):
        needs_libm("exp" if name != "sinc" else "sin")
    a = np.concatenate([SPECIALS, float_data(20)]).astype(dtype)
    if name == "i0":
        a = a[np.isfinite(a)]
    got = getattr(xp, name)(on_device(a))
    ref = _ref(getattr(np, name), host(a))
    rtol = {"i0": 1e-5 if dtype == np.float32 else 1e-13, "cbrt": 1e-6 if dtype == np.float32 else 1e-15,
            "sinc": 1e-5 if dtype == np.float32 else 1e-13}.get(name)
    same(got, ref, rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["fmod", "heaviside", "fmax", "fmin", "logaddexp2", "float_power"])
def test_binary_against_numpy(name, dtype):
    _needs(dtype)
    if name in ("logaddexp2", "float_power"):
        needs_libm("logaddexp")
        needs_dtype(xp.float64)
    a = np.concatenate([SPECIALS, float_data(12)]).astype(dtype)
    b = np.roll(a, 3)
    got = getattr(xp, name)(on_device(a), on_device(b))
    same(got, _ref(getattr(np, name), host(a), host(b)), rtol=1e-5 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
def test_integer_functions(dtype):
    _needs(dtype)
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -1000), min(info.max, 1000), 40, endpoint=True).astype(dtype)
    b = RNG.integers(max(info.min, -60), min(info.max, 60), 40, endpoint=True).astype(dtype)
    a[:3], b[:3] = 0, [0, 5, 0]
    ta, tb = on_device(a), on_device(b)
    same(xp.gcd(ta, tb), np.gcd(a, b))
    small_a, small_b = (a % 100).astype(dtype), (b % 100).astype(dtype)
    same(xp.lcm(on_device(small_a), on_device(small_b)), np.lcm(small_a, small_b))
    same(xp.fmod(ta, tb), _ref(np.fmod, a, b))
    same(xp.bitwise_count(ta), np.bitwise_count(a))
    q, r = xp.divmod(ta, tb)
    qn, rn = _ref(np.divmod, a, b)
    same(q, qn), same(r, rn)
    same(xp.bitwise_not(ta), np.bitwise_not(a))


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp_ldexp_modf(dtype):
    _needs(dtype)
    needs_libm("log2")
    a = np.concatenate([SPECIALS, float_data(20), [2.0 ** 30, 2.0 ** -30, 0.75, 1.0 - 2.0 ** -20]]).astype(dtype)
    m, e = xp.frexp(on_device(a))
    mn, en = np.frexp(host(a))
    same(m, mn, exact=True), same(e, en)
    same(xp.ldexp(m, e), np.ldexp(mn, en), exact=True)
    f, w = xp.modf(on_device(a))
    fn, wn = np.modf(host(a))
    same(f, fn), same(w, wn, exact=True)


def test_nan_to_num_and_angle():
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0])
    same(xp.nan_to_num(on_device(a)), np.nan_to_num(host(a)))
    same(xp.nan_to_num(on_device(a), nan=-1.0, posinf=9.0, neginf=-9.0),
         np.nan_to_num(host(a), nan=-1.0, posinf=9.0, neginf=-9.0))
    z = np.array([1 + 1j, -1 + 0j, 0 - 2j, complex(np.nan, np.inf)])
    needs_dtype(xp.complex128)
    same(xp.nan_to_num(on_device(z)), np.nan_to_num(z))
    same(xp.angle(on_device(z[:3]), deg=True), np.angle(z[:3], deg=True))
    same(xp.angle(on_device(a[3:])), np.angle(a[3:]))
    assert xp.iscomplexobj(on_device(z)) and not xp.isrealobj(on_device(z)) and xp.isrealobj(on_device(a))
    assert xp.isscalar(3.0) and xp.isscalar(np.float32(1)) and not xp.isscalar(on_device(a)[0])
    same(xp.real_if_close(on_device(np.array([1 + 1e-15j, 2 + 0j]))), np.real_if_close(np.array([1 + 1e-15j, 2 + 0j])))


def test_unwrap_ptp_packbits():
    p = np.cumsum(RNG.uniform(-4, 4, (3, 20)), axis=1)
    same(xp.unwrap(on_device(p)), np.unwrap(host(p)))
    same(xp.unwrap(on_device(p), axis=0, period=4.0), np.unwrap(host(p), axis=0, period=4.0))
    same(xp.ptp(on_device(p), axis=1), np.ptp(host(p), axis=1))
    bits = RNG.random((3, 13)) > 0.5
    for axis in (None, 0, 1):
        for order in ("big", "little"):
            packed = xp.packbits(on_device(bits), axis=axis, bitorder=order)
            same(packed, np.packbits(bits, axis=axis, bitorder=order))
            same(xp.unpackbits(packed, axis=axis, count=-2, bitorder=order),
                 np.unpackbits(np.packbits(bits, axis=axis, bitorder=order), axis=axis, count=-2, bitorder=order))


@pytest.mark.parametrize("call, error", [
    (lambda: xp.gcd(on_device(np.array([1.5])), 2), TypeError),
    (lambda: xp.fmod([1, 2], 3), TypeError),
    (lambda: xp.ldexp(on_device(np.array([1.0])), 1.5), TypeError),
    (lambda: xp.cbrt(on_device(np.array([1j]))), TypeError),
    (lambda: xp.packbits(on_device(np.array([1.0]))), TypeError),
    (lambda: xp.unpackbits(on_device(np.array([1], dtype=np.int32))), TypeError),
    (lambda: xp.packbits(on_device(np.array([1], dtype=np.uint8)), bitorder="middle"), ValueError),
])
def test_errors_name_the_function(call, error):
    with pytest.raises(error) as info:
        call()
    assert any(n in str(info.value) for n in ("gcd", "fmod", "ldexp", "cbrt", "packbits", "unpackbits"))
