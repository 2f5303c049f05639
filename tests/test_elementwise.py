"""Every element-wise function against NumPy, driven by the table ``numr_array.kernels.OPS``.

For each row: every accepted dtype (and promotable pairs of them) on 0-D, empty, broadcast, strided and
reversed operands; Python scalars on either side by the standard's scalar rules; ``out=``; and a
TypeError for every dtype the row rejects. A row added to the table is tested here automatically (and
fails until it has a NumPy reference in ``REFERENCE``). Results are compared in the standard's terms:
the result dtype comes from the standard's promotion (not NumPy's), and NumPy's answer is corrected
where the standard decides otherwise. The standard's special cases are checked value by value below.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array.kernels import OPS
from .helpers import flushed_reference, flushes_in, flushes_subnormals, missing, needs_dtype, needs_libm, supported_promotion
from .strategies import ALL, DEVICE, np_arrays, shapes, supported, to_np, views

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

UNARY = [op for op in OPS if op.arity == 1]
BINARY = [op for op in OPS if op.arity == 2]
ids = [op.name for op in OPS]


# --- the standard's semantics, independent of the implementation ----------------------------------

def _floor_divide(a, b):
    r = np.floor_divide(a, b)
    if r.dtype.kind == "f":
        # the standard prefers floor(a / b) where an infinity is involved (NumPy and Python give NaN, -1)
        r = np.where(np.isinf(a) | np.isinf(b), np.floor(a / b), r)
    return r


def _round(a):
    return a.copy() if a.dtype.kind in "biu" else np.round(a)  # NumPy rounds half to even, per part


def _complex_expm1(a):
    # exp(z) - 1 in double precision; non-finite inputs are left to the special-case tests
    return (np.exp(a.astype(np.complex128)) - 1).astype(a.dtype)


def _log1p(a):
    """NumPy's log1p, with the finite log|1 + z| where |1 + z| overflows and z is finite (NumPy's is inf; numr
    gives the finite value, as C99 Annex G allows: docs/numpy-differences.md)."""
    r = np.log1p(a)
    if a.dtype.kind != "c":
        return r
    x, y = np.abs(np.real(a) + 1), np.abs(np.imag(a))
    big = np.isposinf(np.real(r)) & np.isfinite(x) & np.isfinite(y)
    hi, lo = np.maximum(x[big], y[big]), np.minimum(x[big], y[big])
    r = np.array(r)
    r.real[big] = np.log(hi) + 0.5 * np.log1p((lo / hi) ** 2)
    return r


def _sign(a):
    """NumPy's sign, with complex z / |z| from parts scaled by a power of two where |z| overflows or is
    subnormal (NumPy's complex64 sign(2.4e38 + 2.4e38j) is 1j, its complex128 sign(5e-324 + 5e-324j) 1 + 1j)."""
    r = np.array(np.sign(a))
    if a.dtype.kind != "c":
        return r
    big = np.maximum(np.abs(a.real), np.abs(a.imag))
    fix = np.isfinite(big) & (big > 0)
    e = np.frexp(big[fix])[1]
    re, im = np.ldexp(a.real[fix], -e), np.ldexp(a.imag[fix], -e)
    h = np.hypot(re, im)
    r.real[fix], r.imag[fix] = re / h, im / h
    return r


REFERENCE = {
    "abs": np.abs, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh, "exp": np.exp,
    "expm1": lambda a: _complex_expm1(a) if a.dtype.kind == "c" else np.expm1(a),
    "log": np.log, "log1p": _log1p, "log2": np.log2, "log10": np.log10, "sin": np.sin, "sinh": np.sinh,
    "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh, "bitwise_invert": np.invert,
    "ceil": np.ceil, "floor": np.floor, "trunc": np.trunc, "conj": np.conj, "imag": np.imag, "real": np.real,
    "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan, "logical_not": np.logical_not,
    "negative": np.negative, "positive": np.positive, "reciprocal": lambda a: np.divide(a.dtype.type(1), a),
    "round": _round, "sign": _sign, "signbit": np.signbit, "square": np.square,
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide, "pow": np.power,
    "floor_divide": _floor_divide, "remainder": np.remainder, "maximum": np.maximum, "minimum": np.minimum,
    "atan2": np.arctan2, "copysign": np.copysign, "hypot": np.hypot, "logaddexp": np.logaddexp,
    "nextafter": np.nextafter, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_left_shift": np.left_shift, "bitwise_right_shift": np.right_shift,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "less": np.less, "less_equal": np.less_equal,
    "clip": lambda a, lo, hi: a if lo is None and hi is None else np.clip(a, lo, hi),
}

# results computed by a library approximation (compared with a tolerance; the rest must match exactly)
APPROXIMATE = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
               "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "pow", "atan2", "hypot",
               "logaddexp", "divide", "reciprocal"}
# complex results of these are approximations too (complex products, quotients and moduli)
APPROXIMATE_COMPLEX = {"multiply", "square", "sign", "abs"}
# complex cases where NumPy's answer for non-finite input is not the standard's (see the special cases),
# or where the standard leaves it to the implementation (pow: "as if exp(x2 * log(x1))", which libraries
# follow to different degrees for zero bases and overflowing results): compared for finite operands and
# results only
FINITE_COMPLEX_ONLY = {"expm1", "tanh", "pow"}


def standard_result_dtype(op, dtype):
    """The row's result dtype for the (promoted) input dtype, by the standard's wording."""
    if op.result == "bool":
        return xp.bool
    if op.result == "real":
        return {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype)
    return dtype


def promotable(d1, d2) -> bool:
    """Whether the standard's promotion table has an entry for d1 with d2."""
    cat = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "f"}
    if cat[d1.kind] != cat[d2.kind]:
        return False
    return {d1, d2} != {xp.int64, xp.uint64} and not (
        xp.uint64 in (d1, d2) and "i" in (d1.kind, d2.kind))


def promoted(d1, d2):
    # for pairs in the standard's table NumPy's dtype (not value) promotion agrees with it
    r = np.result_type(d1, d2)
    return next(d for d in ALL if d == r)


def accepted(op):
    return supported([d for d in ALL if d.kind in op.kinds])


def rejected(op):
    return supported([d for d in ALL if d.kind not in op.kinds])


def constrain(name: str, pos: int, a: np.ndarray, rdtype) -> np.ndarray:
    """Operand values where the standard leaves the result unspecified are replaced by defined ones."""
    if a.dtype.kind in "iu" and rdtype.kind in ("i", "u"):
        if name in ("floor_divide", "remainder") and pos == 1:
            return np.where(a == 0, a.dtype.type(1), a)  # integer division by zero
        if name == "pow" and pos == 1:
            return a % a.dtype.type(16)  # negative integer exponents
        if name in ("bitwise_left_shift", "bitwise_right_shift") and pos == 1:
            return a % a.dtype.type(min(rdtype.itemsize * 8, np.iinfo(a.dtype).max))  # shifts beyond the width
    return a


def reference(op, arrays, rdtype):
    """NumPy's answer with every operand first made an array of the promoted dtype ``rdtype``."""
    with np.errstate(all="ignore"):
        args = [None if a is None else np.asarray(a).astype(rdtype) for a in arrays]
        r = REFERENCE[op.name](*args)
    return np.asarray(r).astype(standard_result_dtype(op, rdtype))


def _tolerance(dtype) -> float:
    return 1e-5 if dtype in (np.float32, np.complex64) else 1e-12


def assert_matches(res, ref, approximate: bool, where=None):
    """res (NumPy) equals ref: dtype and shape; NaN where NaN; infinities and signed zeros exactly where
    ``approximate`` is False, else finite values within a relative tolerance."""
    assert res.dtype == ref.dtype, (res.dtype, ref.dtype)
    assert res.shape == ref.shape, (res.shape, ref.shape)
    if where is not None:
        res, ref = res[where], ref[where]
    if ref.dtype.kind in "fc" and approximate:
        tol = _tolerance(ref.dtype)
        parts = (np.real, np.imag) if ref.dtype.kind == "c" else (lambda v: v,)
        finite = np.isfinite(ref) & np.isfinite(res)
        for part in parts:
            r, e = part(res), part(ref)
            assert np.array_equal(np.isnan(r) & ~finite, np.isnan(e) & ~finite), (res, ref)
            nf = ~finite & ~np.isnan(e)
            np.testing.assert_array_equal(r[nf], e[nf])
        np.testing.assert_allclose(res[finite], ref[finite], rtol=tol, atol=tol)
    elif ref.dtype.kind in "fc":
        for part in ((np.real, np.imag) if ref.dtype.kind == "c" else (lambda v: v,)):
            r, e = part(res), part(ref)
            np.testing.assert_array_equal(r, e)
            assert np.array_equal(np.signbit(r) | np.isnan(r), np.signbit(e) | np.isnan(e)), (res, ref)
    else:
        np.testing.assert_array_equal(res, ref)


def check(op, res, arrays, rdtype):
    assert type(res) is xp.Tensor
    assert res.dtype == standard_result_dtype(op, rdtype)
    assert res.device == xp._device.parse_device(DEVICE)
    # an adapter that flushes float32 subnormals (docs/devices.md) reads them as zeros and may return
    # subnormal results as zeros: its documented semantics are checked, exactly, on that footing
    flushing = flushes_in(op.name, rdtype, flushes_subnormals(), missing("shader-f64", "shader-int64") is None)
    ref, as_compared = flushed_reference(lambda ops: reference(op, ops, rdtype), arrays, flushing)
    got = as_compared(to_np(res))
    approximate = op.name in APPROXIMATE or (rdtype.kind == "c" and op.name in APPROXIMATE_COMPLEX)
    where = None
    if op.name in FINITE_COMPLEX_ONLY and rdtype.kind == "c":
        operands = [np.broadcast_to(np.asarray(a).astype(rdtype), ref.shape) for a in arrays]
        where = np.isfinite(ref) & (operands[0] != 0)
        for a in operands:
            where &= np.isfinite(a)
    if op.name == "pow" and rdtype.kind == "c":
        # x1**x2 = exp(x2*log(x1)): an error of one ulp in log|x1| becomes |x2*log|x1|| ulps in the result's
        # phase, so a complex64 reference computed in complex64 (NumPy's cpowf) is itself off by more than
        # any fixed tolerance there; compare where the problem is well conditioned
        base, expo = (np.broadcast_to(np.asarray(a).astype(np.complex128), ref.shape) for a in arrays)
        with np.errstate(all="ignore"):
            # |x2 * log(x1)| with the complex log: its angle counts too ((0 + 1j)**882 is -1 exactly; NumPy's
            # complex64 loop rotates by 882 * pi/2 in float32, numr in complex128, a few ulps from -1)
            conditioned = np.abs(expo * np.log(base)) < 16
        where = conditioned if where is None else where & conditioned
    assert_matches(got, ref, approximate, where)


# --- strategies ---------------------------------------------------------------------------------

@st.composite
def operand(draw, op, pos, dtype, shape, rdtype):
    """(tensor, its values): any view of constrained values of ``dtype`` and ``shape``."""
    a = constrain(op.name, pos, draw(np_arrays(dtype, shape)), rdtype)
    return draw(views(a)), a


@st.composite
def dtype_pairs(draw, op):
    d1 = draw(st.sampled_from(accepted(op)))
    d2 = draw(st.sampled_from([d for d in accepted(op) if promotable(d1, d)]))
    return d1, d2


def python_scalars(dtype):
    """Python scalars the standard lets beside an array of ``dtype``."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in ("i", "u"):
        info = np.iinfo(dtype)
        return st.integers(int(info.min), int(info.max))
    ints = st.integers(-(2 ** 53), 2 ** 53)
    width = 32 if dtype in (xp.float32, xp.complex64) else 64
    floats = st.floats(width=width)
    complexes = st.complex_numbers(width=2 * width)
    # a Python complex beside a real floating-point array promotes it to complex
    return st.one_of(ints, floats, complexes)


def scalar_result_dtype(dtype, value):
    if type(value) is complex and dtype.kind == "f":
        return {xp.float32: xp.complex64, xp.float64: xp.complex128}[dtype]
    return dtype


# --- the table itself ----------------------------------------------------------------------------

def test_every_row_has_a_function_and_a_reference():
    for op in OPS:
        assert callable(getattr(xp, op.name)), op.name
        assert op.name in REFERENCE, f"add a NumPy reference for {op.name} to REFERENCE"
        assert op.arity in (1, 2) or op.name == "clip", f"add a differential test for {op.name}"
        assert accepted(op), op.name
    assert len(OPS) == len({op.name for op in OPS})


# --- differential tests -------------------------------------------------------------------------

@pytest.mark.parametrize("op", UNARY, ids=[op.name for op in UNARY])
@given(data=st.data())
def test_unary(op, data):
    needs_libm(op.name)
    dtype = data.draw(st.sampled_from(accepted(op)), label="dtype")
    x, a = data.draw(operand(op, 0, dtype, shapes(), dtype), label="x")
    res = getattr(xp, op.name)(x)
    assert res.shape == a.shape
    check(op, res, [a], dtype)
    np.testing.assert_array_equal(to_np(x), a)  # the input is untouched


@pytest.mark.parametrize("op", BINARY, ids=[op.name for op in BINARY])
@given(data=st.data())
def test_binary(op, data):
    if op.name != "pow":  # (float32 pow's special values are numr's; its integer powers are exact)
        needs_libm(op.name)
    d1, d2 = data.draw(dtype_pairs(op), label="dtypes")
    rdtype = promoted(d1, d2)
    (s1, s2), shape = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
                                label="shapes")
    x1, a1 = data.draw(operand(op, 0, d1, s1, rdtype), label="x1")
    x2, a2 = data.draw(operand(op, 1, d2, s2, rdtype), label="x2")
    if not supported_promotion(d1, d2):  # (int8 with uint32 promote to int64: a device without it refuses)
        with pytest.raises(TypeError, match=op.name):
            getattr(xp, op.name)(x1, x2)
        return
    res = getattr(xp, op.name)(x1, x2)
    assert res.shape == shape
    check(op, res, [np.broadcast_to(a1, shape), np.broadcast_to(a2, shape)], rdtype)


@pytest.mark.parametrize("op", BINARY, ids=[op.name for op in BINARY])
@given(data=st.data())
def test_binary_python_scalar(op, data):
    if op.name != "pow":
        needs_libm(op.name)
    dtype = data.draw(st.sampled_from(accepted(op)), label="dtype")
    value = data.draw(python_scalars(dtype), label="scalar")
    rdtype = scalar_result_dtype(dtype, value)
    scalar_first = data.draw(st.booleans(), label="scalar_first")
    pos = 0 if scalar_first else 1
    x, a = data.draw(operand(op, 1 - pos, dtype, shapes(max_dims=3), rdtype), label="x")
    if rdtype.kind in ("i", "u"):
        # the scalar gets the same constraints as an array operand in its place
        value = int(constrain(op.name, pos, np.asarray(value, rdtype), rdtype).item())
    f = getattr(xp, op.name)
    if rdtype.kind not in op.kinds:
        with pytest.raises(TypeError, match=op.name):
            f(value, x) if scalar_first else f(x, value)
        return
    res = f(value, x) if scalar_first else f(x, value)
    assert res.shape == a.shape
    s = np.asarray(value, rdtype)  # the standard: the scalar becomes a 0-D array of the promoted dtype
    check(op, res, [s, a] if scalar_first else [a, s], rdtype)


@given(data=st.data())
def test_clip(data):
    op = next(o for o in OPS if o.name == "clip")
    dtype = data.draw(st.sampled_from(accepted(op)), label="dtype")
    x, a = data.draw(operand(op, 0, dtype, shapes(), dtype), label="x")
    kind = data.draw(st.sampled_from(["none", "scalar", "array"]), label="bounds")
    lo = hi = x_lo = x_hi = None
    if kind == "scalar":
        if dtype.kind == "f":
            vals = st.one_of(st.integers(-100, 100), st.floats(width=32 if dtype == xp.float32 else 64))
        else:
            info = np.iinfo(dtype)
            vals = st.integers(int(info.min), int(info.max))
        pair = sorted([data.draw(vals), data.draw(vals)])
        which = data.draw(st.sampled_from(["both", "min", "max"]))
        lo = pair[0] if which != "max" else None
        hi = pair[1] if which != "min" else None
        x_lo, x_hi = lo, hi
    elif kind == "array":
        # bounds broadcast with x, possibly to a larger shape than x's
        bound_shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, base_shape=a.shape, max_dims=3,
                                                         min_side=0, max_side=3)
        (_, shape), _ = data.draw(bound_shapes, label="bound shape")
        b1, b2 = data.draw(np_arrays(dtype, shape)), data.draw(np_arrays(dtype, shape))
        with np.errstate(invalid="ignore"):
            x_lo, x_hi = np.fmin(b1, b2), np.fmax(b1, b2)  # min <= max (else unspecified)
        which = data.draw(st.sampled_from(["both", "min", "max"]))
        x_lo = x_lo if which != "max" else None
        x_hi = x_hi if which != "min" else None
        lo = None if x_lo is None else data.draw(views(x_lo))
        hi = None if x_hi is None else data.draw(views(x_hi))
    res = xp.clip(x, lo, hi)
    ref_lo = None if x_lo is None else np.asarray(x_lo, dtype)
    ref_hi = None if x_hi is None else np.asarray(x_hi, dtype)
    with np.errstate(all="ignore"):
        ref = a.copy() if ref_lo is None and ref_hi is None else np.clip(a, ref_lo, ref_hi)
    assert res.shape == ref.shape and res.dtype == dtype
    got, ref = to_np(res), np.asarray(ref, dtype)
    if dtype.kind == "f":
        # a zero of x clipped at a zero bound: the standard leaves the order of signed zeros to the
        # implementation (NumPy's own scalar and SIMD loops pick differently), so either sign is right
        tie = np.zeros(ref.shape, bool)
        for b in (ref_lo, ref_hi):
            if b is not None:
                tie |= np.broadcast_to((a == 0) & (b == 0), ref.shape)
        got, ref = np.where(tie, np.abs(got), got), np.where(tie, np.abs(ref), ref)
    assert_matches(got, ref, approximate=False)


def test_clip_integer_bounds_beyond_the_dtype():
    # a bound outside x's range bounds nothing on that side (the standard leaves this unspecified)
    x = xp.asarray([-128, 0, 127], dtype=xp.int8, device=DEVICE)
    np.testing.assert_array_equal(to_np(xp.clip(x, -1000, 1000)), [-128, 0, 127])
    np.testing.assert_array_equal(to_np(xp.clip(x, 1, 1000)), [1, 1, 127])
    np.testing.assert_array_equal(to_np(xp.clip(xp.asarray([0, 5], dtype=xp.uint8, device=DEVICE), -3, 3)), [0, 3])


def test_clip_nan():
    x = xp.asarray([math.nan, 1.0, 5.0], device=DEVICE)
    r = to_np(xp.clip(x, 0.0, 2.0))
    assert math.isnan(r[0]) and r[1] == 1.0 and r[2] == 2.0
    r = to_np(xp.clip(xp.asarray([1.0, 1.0], device=DEVICE), xp.asarray([math.nan, 0.0], device=DEVICE), 3.0))
    assert math.isnan(r[0]) and r[1] == 1.0
    r = to_np(xp.clip(xp.asarray([1.0, 1.0], device=DEVICE), None, xp.asarray([math.nan, 0.0], device=DEVICE)))
    assert math.isnan(r[0]) and r[1] == 0.0


# --- rejected dtypes ----------------------------------------------------------------------------

#: rows whose function also takes, with NumPy's meaning, dtypes the row's kernel does not
#: (docs/numpy-differences.md; tests/test_numpy_compat.py checks those results): the function converts such
#: operands first, then runs the row's own checks, those of ``_unary``/``_binary``
NUMPY_EXTENDED = {"divide", "logical_and", "logical_or", "logical_xor", "logical_not"}


def row_checks(op):
    """The row's function, or for a NumPy-extended row the row's own checks and launch."""
    if op.name not in NUMPY_EXTENDED:
        return getattr(ew, op.name)
    if op.arity == 1:
        return lambda x, out=None: ew._unary_py(op, ew._plans(op.name), x, out, 1)
    return lambda x1, x2, out=None: ew._binary_py(op, ew._plans(op.name), x1, x2, out, 1)


@pytest.mark.parametrize("op", OPS, ids=ids)
def test_rejected_dtypes_raise_type_error(op):
    f = row_checks(op)
    for dtype in rejected(op):
        x = xp.ones((2,), dtype=dtype, device=DEVICE)
        args = [x] * op.arity
        with pytest.raises(TypeError, match=op.name):
            f(*args)
        if op.arity == 2:
            scalar = {"b": True, "i": 1, "u": 1, "f": 1.0, "c": 1j}[dtype.kind]
            with pytest.raises(TypeError, match=op.name):
                f(x, scalar)
            with pytest.raises(TypeError, match=op.name):
                f(scalar, x)
            good = xp.ones((2,), dtype=accepted(op)[0], device=DEVICE)
            # (beside an accepted dtype, a rejected one is taken where the two promote to an accepted
            # kind, as NumPy takes int8 + bool: tests/test_promotion_numpy.py)
            if xp.result_type(good.dtype, dtype).kind not in op.kinds:
                with pytest.raises(TypeError, match=op.name):
                    f(good, x)
                with pytest.raises(TypeError, match=op.name):
                    f(x, good)


# --- out= ---------------------------------------------------------------------------------------

def _args_for(op, dtype, shape):
    """Arguments of dtype ``dtype`` that are valid for ``op`` (no unspecified values)."""
    a = np.arange(1, math.prod(shape) + 1).reshape(shape) % 5 + 1
    if dtype.kind == "b":
        a = a % 2 == 0
    if op.name in ("acos", "asin", "atanh"):
        a = a / 10
    arrays = [np.asarray(a, dtype)] * max(op.arity, 1)
    if op.name == "clip":
        return [xp.asarray(arrays[0], device=DEVICE), 2, 4], arrays[:1] + [2, 4]
    return [xp.asarray(v, device=DEVICE) for v in arrays], arrays


@pytest.mark.parametrize("op", OPS, ids=ids)
def test_out(op):
    if op.name != "pow":
        needs_libm(op.name)
    f = getattr(xp, op.name)
    for dtype in accepted(op):
        args, arrays = _args_for(op, dtype, (2, 3))
        rdtype = standard_result_dtype(op, dtype)
        # into a new array: the result (NumPy's, for every accepted dtype) is written into out and returned
        out = xp.zeros((2, 3), dtype=rdtype, device=DEVICE)
        r = f(*args, out=out)
        assert r is out
        check(op, out, arrays, dtype)
        expected = to_np(f(*args))
        # into a strided view: only the view's elements change
        base = xp.zeros((2, 6), dtype=rdtype, device=DEVICE)
        view = base[:, ::2]
        assert f(*args, out=view) is view
        b = to_np(base)
        assert_matches(b[:, ::2].copy(), expected, approximate=False)
        assert not b[:, 1::2].any()
        # out aliasing the input (where the result has the input's dtype)
        if rdtype == dtype:
            args2, _ = _args_for(op, dtype, (2, 3))
            x = args2[0]
            assert f(*args2[:1], *args2[1:], out=x) is x
            assert_matches(to_np(x), expected, approximate=False)
            if op.arity == 2:
                args3, _ = _args_for(op, dtype, (2, 3))
                y = args3[1]
                assert f(args3[0], y, out=y) is y
                assert_matches(to_np(y), expected, approximate=False)


@pytest.mark.parametrize("op", OPS, ids=ids)
def test_out_errors_leave_out_untouched(op):
    f = getattr(xp, op.name)
    dtype = accepted(op)[0]
    rdtype = standard_result_dtype(op, dtype)
    args, _ = _args_for(op, dtype, (2, 3))
    wrong_dtype = next(d for d in supported(ALL) if d != rdtype)
    cases = [
        (xp.full((3, 2), 7, dtype=rdtype, device=DEVICE) if rdtype != xp.bool else
         xp.full((3, 2), True, device=DEVICE), ValueError),
        (xp.full((2, 3, 1), True, device=DEVICE) if rdtype == xp.bool else
         xp.full((2, 3, 1), 7, dtype=rdtype, device=DEVICE), ValueError),
        (xp.full((2, 3), True, device=DEVICE) if wrong_dtype == xp.bool else
         xp.full((2, 3), 7, dtype=wrong_dtype, device=DEVICE), TypeError),
    ]
    for out, exc in cases:
        before = to_np(out).copy()
        with pytest.raises(exc, match=op.name):
            f(*args, out=out)
        np.testing.assert_array_equal(to_np(out), before)
    with pytest.raises(TypeError, match=op.name):
        f(*args, out=np.zeros((2, 3), rdtype))
    # broadcasting never reaches into out: a smaller out than the broadcast shape is an error
    if op.arity == 2:
        x1 = xp.ones((1, 3), dtype=dtype, device=DEVICE)
        x2 = xp.ones((2, 1), dtype=dtype, device=DEVICE)
        small = xp.zeros((1, 3), dtype=rdtype, device=DEVICE)
        with pytest.raises(ValueError, match=op.name):
            f(x1, x2, out=small)
        assert not to_np(small).any()


# --- the standard's special cases -----------------------------------------------------------------

inf, nan = math.inf, math.nan
PI = math.pi

# (function, operands, expected); float results compare bit for bit in sign, NaN is NaN
SPECIAL = [
    # floor_divide: the standard's floor(x1 / x2) where an infinity is involved
    ("floor_divide", (inf, 2.0), inf), ("floor_divide", (inf, -2.0), -inf), ("floor_divide", (-inf, 2.0), -inf),
    ("floor_divide", (-inf, -2.0), inf), ("floor_divide", (1.0, -inf), -0.0), ("floor_divide", (-1.0, inf), -0.0),
    ("floor_divide", (1.0, inf), 0.0), ("floor_divide", (-1.0, -inf), 0.0), ("floor_divide", (inf, inf), nan),
    ("floor_divide", (0.0, 0.0), nan), ("floor_divide", (-0.0, 1.0), -0.0), ("floor_divide", (0.0, -1.0), -0.0),
    ("floor_divide", (-0.0, -1.0), 0.0), ("floor_divide", (1.0, 0.0), inf), ("floor_divide", (1.0, -0.0), -inf),
    ("floor_divide", (-1.0, 0.0), -inf), ("floor_divide", (nan, 1.0), nan), ("floor_divide", (7.0, 2.0), 3.0),
    ("floor_divide", (-7.0, 2.0), -4.0), ("floor_divide", (7.0, -2.0), -4.0),
    # remainder: the sign of the divisor, Python's % for infinite divisors
    ("remainder", (-0.0, 1.0), 0.0), ("remainder", (0.0, -1.0), -0.0), ("remainder", (-0.0, -1.0), -0.0),
    ("remainder", (1.0, 0.0), nan), ("remainder", (inf, 2.0), nan), ("remainder", (inf, inf), nan),
    ("remainder", (1.0, inf), 1.0), ("remainder", (1.0, -inf), -inf), ("remainder", (-1.0, inf), inf),
    ("remainder", (-1.0, -inf), -1.0), ("remainder", (-7.0, 2.0), 1.0), ("remainder", (7.0, -2.0), -1.0),
    ("remainder", (nan, 1.0), nan),
    # pow
    ("pow", (nan, 0.0), 1.0), ("pow", (nan, -0.0), 1.0), ("pow", (1.0, nan), 1.0), ("pow", (2.0, nan), nan),
    ("pow", (nan, 1.0), nan), ("pow", (2.0, inf), inf), ("pow", (2.0, -inf), 0.0), ("pow", (-1.0, inf), 1.0),
    ("pow", (-1.0, -inf), 1.0), ("pow", (0.5, inf), 0.0), ("pow", (0.5, -inf), inf), ("pow", (inf, 2.0), inf),
    ("pow", (inf, -2.0), 0.0), ("pow", (-inf, 3.0), -inf), ("pow", (-inf, 2.0), inf), ("pow", (-inf, -3.0), -0.0),
    ("pow", (-inf, -2.0), 0.0), ("pow", (0.0, 2.0), 0.0), ("pow", (0.0, -2.0), inf), ("pow", (-0.0, 3.0), -0.0),
    ("pow", (-0.0, 2.0), 0.0), ("pow", (-0.0, -3.0), -inf), ("pow", (-0.0, -2.0), inf), ("pow", (-2.0, 0.5), nan),
    # atan2 (approximations of pi multiples are compared to within the dtype's precision)
    ("atan2", (nan, 1.0), nan), ("atan2", (1.0, 0.0), PI / 2), ("atan2", (1.0, -0.0), PI / 2),
    ("atan2", (0.0, 1.0), 0.0), ("atan2", (0.0, 0.0), 0.0), ("atan2", (0.0, -0.0), PI), ("atan2", (0.0, -1.0), PI),
    ("atan2", (-0.0, 1.0), -0.0), ("atan2", (-0.0, 0.0), -0.0), ("atan2", (-0.0, -0.0), -PI),
    ("atan2", (-0.0, -1.0), -PI), ("atan2", (-1.0, 0.0), -PI / 2), ("atan2", (1.0, inf), 0.0),
    ("atan2", (1.0, -inf), PI), ("atan2", (-1.0, inf), -0.0), ("atan2", (-1.0, -inf), -PI),
    ("atan2", (inf, 1.0), PI / 2), ("atan2", (-inf, 1.0), -PI / 2), ("atan2", (inf, inf), PI / 4),
    ("atan2", (inf, -inf), 3 * PI / 4), ("atan2", (-inf, inf), -PI / 4), ("atan2", (-inf, -inf), -3 * PI / 4),
    # copysign, including the sign of NaN
    ("copysign", (2.0, -0.0), -2.0), ("copysign", (-2.0, 0.0), 2.0), ("copysign", (inf, -1.0), -inf),
    ("copysign", (1.0, -nan), -1.0), ("copysign", (-1.0, nan), 1.0),
    # divide
    ("divide", (0.0, 0.0), nan), ("divide", (inf, -inf), nan), ("divide", (-0.0, 2.0), -0.0),
    ("divide", (0.0, -2.0), -0.0), ("divide", (1.0, -0.0), -inf), ("divide", (-1.0, -0.0), inf),
    ("divide", (1.0, -inf), -0.0), ("divide", (-inf, 2.0), -inf),
    # maximum / minimum propagate NaN from either side
    ("maximum", (nan, 1.0), nan), ("maximum", (1.0, nan), nan), ("minimum", (nan, 1.0), nan),
    ("minimum", (1.0, nan), nan), ("maximum", (-inf, 1.0), 1.0), ("minimum", (inf, 1.0), 1.0),
    # hypot, logaddexp, nextafter
    ("hypot", (inf, nan), inf), ("hypot", (nan, -inf), inf), ("hypot", (nan, 1.0), nan), ("hypot", (-0.0, -3.0), 3.0),
    ("logaddexp", (inf, 1.0), inf), ("logaddexp", (1.0, inf), inf), ("logaddexp", (nan, inf), nan),
    ("logaddexp", (-inf, -inf), -inf),
    ("nextafter", (nan, 1.0), nan), ("nextafter", (-0.0, 0.0), 0.0), ("nextafter", (0.0, -0.0), -0.0),
    # rounding keeps signed zeros and rounds half to even
    ("round", (0.5,), 0.0), ("round", (1.5,), 2.0), ("round", (2.5,), 2.0), ("round", (-0.5,), -0.0),
    ("round", (-2.5,), -2.0), ("round", (-0.0,), -0.0), ("round", (inf,), inf), ("round", (nan,), nan),
    ("ceil", (-0.5,), -0.0), ("ceil", (-0.0,), -0.0), ("floor", (0.5,), 0.0), ("floor", (-0.0,), -0.0),
    ("trunc", (-0.5,), -0.0), ("trunc", (-inf,), -inf), ("ceil", (nan,), nan),
    # sign, abs, sqrt, signbit, expm1, reciprocal, square
    ("sign", (-0.0,), 0.0), ("sign", (0.0,), 0.0), ("sign", (-3.0,), -1.0), ("sign", (inf,), 1.0),
    ("sign", (nan,), nan), ("abs", (-0.0,), 0.0), ("abs", (-inf,), inf), ("abs", (nan,), nan),
    ("sqrt", (-0.0,), -0.0), ("sqrt", (-1.0,), nan), ("sqrt", (inf,), inf),
    ("signbit", (-0.0,), True), ("signbit", (0.0,), False), ("signbit", (-nan,), True), ("signbit", (nan,), False),
    ("signbit", (-inf,), True), ("expm1", (-inf,), -1.0), ("expm1", (-0.0,), -0.0), ("reciprocal", (-0.0,), -inf),
    ("reciprocal", (inf,), 0.0), ("square", (-0.0,), 0.0), ("tanh", (-0.0,), -0.0), ("tanh", (inf,), 1.0),
    ("log", (0.0,), -inf), ("log", (-1.0,), nan), ("log1p", (-1.0,), -inf), ("exp", (-inf,), 0.0),
    ("isinf", (-inf,), True), ("isfinite", (nan,), False), ("isnan", (-nan,), True),
    ("equal", (0.0, -0.0), True), ("equal", (nan, nan), False), ("not_equal", (nan, nan), True),
    ("less", (nan, 1.0), False), ("greater_equal", (inf, inf), True),
]

C = complex
COMPLEX_SPECIAL = [
    # sign of complex: z / |z|, 0 for 0, NaN + NaN j with a NaN part
    ("sign", (C(0.0, 0.0),), C(0.0, 0.0)), ("sign", (C(-0.0, -0.0),), C(0.0, 0.0)),
    ("sign", (C(3.0, 4.0),), C(0.6, 0.8)), ("sign", (C(nan, 0.0),), C(nan, nan)),
    ("sign", (C(0.0, nan),), C(nan, nan)), ("sign", (C(-2.0, 0.0),), C(-1.0, 0.0)),
    # round rounds each part half to even
    ("round", (C(2.5, -0.5),), C(2.0, -0.0)), ("round", (C(1.5, nan),), C(2.0, nan)),
    # abs
    ("abs", (C(inf, nan),), inf), ("abs", (C(nan, -inf),), inf), ("abs", (C(-0.0, -3.0),), 3.0),
    ("abs", (C(nan, 1.0),), nan),
    # expm1 (the array module's own complex expm1 misses these)
    ("expm1", (C(0.0, 0.0),), C(0.0, 0.0)), ("expm1", (C(-0.0, 0.0),), C(0.0, 0.0)),
    ("expm1", (C(inf, 0.0),), C(inf, 0.0)),
    ("expm1", (C(1.0, inf),), C(nan, nan)), ("expm1", (C(1.0, nan),), C(nan, nan)),
    ("expm1", (C(-inf, inf),), C(-1.0, 0.0)), ("expm1", (C(-inf, nan),), C(-1.0, 0.0)),
    ("expm1", (C(inf, nan),), C(inf, nan)), ("expm1", (C(nan, 0.0),), C(nan, 0.0)),
    ("expm1", (C(nan, 1.0),), C(nan, nan)), ("expm1", (C(-inf, 1.0),), C(-1.0, 0.0 * math.sin(1.0))),
    # tanh: tanh(+inf + bj) = 1 + 0j for b > 0 (the zero takes b's sign), odd and conjugate-symmetric
    ("tanh", (C(inf, 2.0),), C(1.0, 0.0)), ("tanh", (C(inf, -2.0),), C(1.0, -0.0)),
    ("tanh", (C(-inf, 2.0),), C(-1.0, 0.0)), ("tanh", (C(-inf, -2.0),), C(-1.0, -0.0)),
    ("tanh", (C(0.0, 0.0),), C(0.0, 0.0)), ("tanh", (C(nan, 0.0),), C(nan, 0.0)),
    ("tanh", (C(nan, 1.0),), C(nan, nan)),
    # sqrt
    ("sqrt", (C(0.0, 0.0),), C(0.0, 0.0)), ("sqrt", (C(nan, inf),), C(inf, inf)),
    ("sqrt", (C(-inf, 1.0),), C(0.0, inf)), ("sqrt", (C(inf, 1.0),), C(inf, 0.0)),
    # equality of complex numbers: both parts, NaN never equal
    ("equal", (C(1.0, nan), C(1.0, nan)), False), ("equal", (C(-0.0, 0.0), C(0.0, -0.0)), True),
]


def _same(res, expected, approximate: bool, single: bool) -> bool:
    """A special case's result: the expected (double) value within a few ulps of the result's precision
    where ``approximate`` (``single``: float32 or complex64)."""
    if isinstance(expected, bool):
        return res == expected
    if math.isnan(expected):
        return math.isnan(res)
    if approximate and math.isfinite(expected) and expected not in (0.0,):
        return math.isclose(res, expected, rel_tol=1e-6 if single else 1e-12)
    return res == expected and math.copysign(1, res) == math.copysign(1, expected)


def _special_id(case):
    name, args, expected = case
    return f"{name}{args}->{expected}"


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", SPECIAL, ids=[_special_id(c) for c in SPECIAL])
def test_special_case(case, dtype):
    name, args, expected = case
    needs_dtype(dtype)
    if name != "pow":
        needs_libm(name)
    arrays = [xp.asarray(np.asarray([v] * 3, dtype), device=DEVICE) for v in args]
    res = to_np(getattr(xp, name)(*arrays))
    for v in res:
        assert _same(v.item(), expected, True, dtype == xp.float32), f"{name}{args} = {v}, expected {expected}"
    if len(args) == 2:  # the same with a Python scalar on the right
        res = to_np(getattr(xp, name)(arrays[0], args[1]))
        assert _same(res[0].item(), expected, True, dtype == xp.float32), (
            f"{name}({args[0]}, scalar {args[1]}) = {res[0]}")


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128], ids=["complex64", "complex128"])
@pytest.mark.parametrize("case", COMPLEX_SPECIAL, ids=[_special_id(c) for c in COMPLEX_SPECIAL])
def test_complex_special_case(case, dtype):
    name, args, expected = case
    needs_dtype(dtype)
    arrays = [xp.asarray(np.asarray([v] * 2, dtype), device=DEVICE) for v in args]
    res = to_np(getattr(xp, name)(*arrays))[0].item()
    if isinstance(expected, complex):
        single = dtype == xp.complex64
        ok = _same(res.real, expected.real, True, single) and _same(res.imag, expected.imag, True, single)
    else:
        ok = _same(res, expected, True, dtype == xp.complex64)
    assert ok, f"{name}{args} = {res}, expected {expected}"


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128], ids=["complex64", "complex128"])
def test_complex_log1p_of_a_huge_argument_is_finite(dtype):
    """log1p(z) = log|1 + z| + i arg(1 + z) is finite for every finite z: where |1 + z| overflows (NumPy's
    log1p gives inf there), it is the log of the larger part plus that of the rest (cuda:0 gave
    709.78 + 0.785j for 1.27e308 + 1.27e308j, NumPy on that machine inf; the CPU and WebGPU gave inf for
    1.7e308 + 1e308j)."""
    needs_dtype(dtype)
    big = 1e308 if dtype == xp.complex128 else 2e38
    z = np.array([1.7 * big + big * 1j, -1.7 * big + 1.7 * big * 1j, 1.27 * big + 1.27 * big * 1j], dtype)
    got = to_np(xp.log1p(xp.asarray(z, device=DEVICE)))
    want = np.array([cmath.log(1 + complex(v)) for v in z])  # exact 1 + z at this size; cmath scales |.|
    assert np.isfinite(got).all(), got
    np.testing.assert_allclose(got, want, rtol=_tolerance(dtype))


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128], ids=["complex64", "complex128"])
def test_complex_sign_of_huge_and_subnormal_values(dtype):
    """z / |z| where |z| overflows or is subnormal (a random seed found complex64 2.4e38 + 2.4e38j, where
    NumPy's sign, and numr's on the CPU, gave 1j; complex128 5e-324 + 5e-324j gave 1 + 1j)."""
    needs_dtype(dtype)
    info = np.finfo(dtype)
    big, tiny = float(info.max) * 0.7, float(info.smallest_subnormal)
    z = np.array([complex(big, big), complex(tiny, tiny), complex(-3 * tiny, 4 * tiny), complex(big, -big / 2)],
                 dtype)
    got = to_np(xp.sign(xp.asarray(z, device=DEVICE)))
    r = 2 ** -0.5
    want = np.array([complex(r, r), complex(r, r), complex(-0.6, 0.8), complex(2 / 5 ** 0.5, -1 / 5 ** 0.5)])
    if flushes_subnormals() and dtype == xp.complex64 and missing("shader-f64", "shader-int64") is not None:
        want[1:3] = 0  # (complex64 sign in float32 arithmetic reads subnormal parts as zeros there)
    np.testing.assert_allclose(got, want, rtol=_tolerance(dtype), atol=0)


def test_remainder_has_the_sign_of_the_divisor_and_matches_python():
    vals = [-7.5, -3.0, -0.5, 0.5, 2.0, 5.25]
    a = xp.asarray([[x for _ in vals] for x in vals], device=DEVICE)
    b = xp.asarray([vals for _ in vals], device=DEVICE)
    r = to_np(xp.remainder(a, b))
    fd = to_np(xp.floor_divide(a, b))
    for i, x in enumerate(vals):
        for j, y in enumerate(vals):
            assert r[i, j] == x % y and fd[i, j] == x // y


def test_integer_floor_divide_and_remainder_follow_python():
    vals = [-128, -7, -1, 1, 3, 7, 127]
    a = xp.asarray([[x for _ in vals] for x in vals], dtype=xp.int16, device=DEVICE)
    b = xp.asarray([vals for _ in vals], dtype=xp.int16, device=DEVICE)
    q, r = to_np(a // b), to_np(a % b)
    for i, x in enumerate(vals):
        for j, y in enumerate(vals):
            assert (q[i, j], r[i, j]) == (x // y, x % y)


def test_integer_pow_with_negative_exponents_does_not_raise():
    # unspecified by the standard; numr_array gives the truncated quotient (NumPy would raise)
    x = xp.asarray([2, 1, -1, -1, 5], dtype=xp.int16, device=DEVICE)
    e = xp.asarray([-1, -3, -3, -2, 2], dtype=xp.int8, device=DEVICE)
    r = xp.pow(x, e)
    assert r.dtype == xp.int16
    np.testing.assert_array_equal(to_np(r), [0, 1, -1, 1, 25])
    np.testing.assert_array_equal(to_np(x ** -1), [0, 1, -1, -1, 0])
    np.testing.assert_array_equal(to_np(2 ** xp.asarray([-1, 0, 3], device=DEVICE)), [0, 1, 8])


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128], ids=["complex64", "complex128"])
def test_complex_log_of_subnormal_parts(dtype):
    """log|z| where |z| is subnormal: the modulus keeps few significant bits there, so it must be formed
    scaled (CUDA gave log(4.2e-45 + 4.2e-45j) = -101.89 + 0.785j in complex64, NumPy -101.83 + 0.785j)."""
    needs_dtype(dtype)
    if dtype == xp.complex64:
        needs_libm("atan2")  # the angle is float32 atan2: the driver's builtin without float64
    tiny = float(np.finfo(dtype).smallest_subnormal)
    parts = [(3, 3), (1, 0), (0, -1), (-5, 7), (1, 2 ** 20), (2 ** 40, 3), (-2 ** 51, 2 ** 51)]
    a = np.array([complex(r * tiny, i * tiny) for r, i in parts], dtype)
    res = to_np(xp.log(xp.asarray(a, device=DEVICE)))
    with np.errstate(all="ignore"):
        ref = np.log(a.astype(np.complex128)).astype(dtype)  # rounded once from a wider result
    np.testing.assert_allclose(res.real, ref.real, rtol=_tolerance(dtype), atol=0)
    np.testing.assert_allclose(res.imag, ref.imag, rtol=_tolerance(dtype), atol=0)


def test_flushed_reference_models_a_flushing_device():
    """The reference for a device that flushes float32 subnormals (tests/helpers.py): NumPy on operands
    with their subnormals flushed, results' subnormals counted as zeros; unchanged where nothing flushes
    (a fake flag: CPU and lavapipe keep subnormals)."""
    from .helpers import flush, flushed_reference
    rem = lambda ops: np.remainder(*ops)
    a, b = np.float32([0.0, 3.0, -2e-45]), np.float32([1e-45, 2e-40, 1.0])
    with np.errstate(all="ignore"):
        ref, compared = flushed_reference(rem, [a, b], True)
        np.testing.assert_array_equal(ref, np.float32([np.nan, np.nan, 0.0]))  # remainder(0, 0) is NaN
        assert np.signbit(ref[2]) == np.signbit(np.remainder(np.float32(-0.0), np.float32(1)))
        ref, compared = flushed_reference(rem, [a, b], False)
        np.testing.assert_array_equal(ref, np.remainder(a, b))
    assert compared(a) is a
    want = np.complex64([1j, np.inf])
    want.imag[1] = -0.0  # (inf - 0j in Python arithmetic has a +0 imaginary part)
    np.testing.assert_array_equal(flush(np.complex64([1e-45 + 1j, complex(np.inf, -2e-42)])).view(np.uint32),
                                  want.view(np.uint32))
    np.testing.assert_array_equal(flush(np.float64([1e-310])), np.float64([1e-310]))


def test_flushing_applies_to_the_float32_arithmetic_the_device_does():
    from .helpers import flushes_in
    assert flushes_in("add", xp.float32, True, True) and flushes_in("multiply", xp.complex64, True, True)
    assert not flushes_in("maximum", xp.float32, True, False)  # compared and chosen on the bits
    assert not flushes_in("atan2", xp.float64, True, True)  # float32 subnormals widened from the bits (H200 soak)
    assert not flushes_in("divide", xp.float32, True, True)  # through float64, from the bits
    assert flushes_in("divide", xp.float32, True, False)  # without float64: the driver's division
    assert not flushes_in("log", xp.complex64, True, True)
    assert not flushes_in("add", xp.float32, False, True)
    # the H200 soak's cases: sign works on the bits; complex64 log2/log10 read their operands as bits
    assert not flushes_in("sign", xp.float32, True, True) and flushes_in("sign", xp.complex64, True, False)
    assert flushes_in("log2", xp.complex64, True, True) == "results" == flushes_in("log10", xp.complex64, True, True)
    assert flushes_in("divide", xp.complex64, True, True) == "either"


def test_flushed_reference_modes_for_operands_kept_and_either_answer():
    """"results": subnormal operands kept, results' subnormals counted as zeros; "either": a part that is
    the exact answer counts as the flushed one (H200: (0 + inf j) / (1 + 1e-40j) gave the exact inf + inf j,
    the flushed operands give NaN + inf j)."""
    from .helpers import flushed_reference
    log2 = lambda ops: np.log2(ops[0])
    z = np.complex64([1e-40j, 2 + 1e-40j])
    with np.errstate(all="ignore"):
        ref, compared = flushed_reference(log2, [z], "results")
    assert np.isfinite(ref).all()  # (a flushed operand 0 + 0j would give -inf)
    assert compared(np.complex64([1e-41]))[0] == 0
    div = lambda ops: ops[0] / ops[1]
    a, b = np.complex64([complex(0, np.inf)] * 2), np.complex64([1 + 1e-40j, 2 + 1j])
    with np.errstate(all="ignore"):
        ref, compared = flushed_reference(div, [a, b], "either")
        exact = div([a, b])
    assert np.isnan(ref.real[0]) and ref.imag[0] == np.inf  # the flushed model
    assert np.isposinf(exact.real[0])
    got = compared(exact)
    np.testing.assert_array_equal(got.view(np.uint32), ref.view(np.uint32))  # the exact answer is accepted
    wrong = exact.copy()
    wrong.imag[0] = 5.0
    assert compared(wrong).imag[0] == 5.0  # (a third value is not: it stays, to fail the comparison)
