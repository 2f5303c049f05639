"""Data types and data type functions: the standard's promotion table (written out here from the standard,
not derived from the implementation), can_cast, result_type with Python scalars, finfo, iinfo, isdtype
and astype."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import numr_array as xp
from .helpers import defaults, missing_dtype, needs_dtype
from .strategies import ALL, DEVICE, np_arrays, shapes, supported, to_np, views

DEFAULTS = defaults(DEVICE)
CODES = {"b": xp.bool, "i1": xp.int8, "i2": xp.int16, "i4": xp.int32, "i8": xp.int64, "u1": xp.uint8,
         "u2": xp.uint16, "u4": xp.uint32, "u8": xp.uint64, "f4": xp.float32, "f8": xp.float64,
         "c8": xp.complex64, "c16": xp.complex128}

# The standard's type promotion tables (2025.12, "Type Promotion Rules") in one grid; "-" is no entry
# (mixed kinds, and int64-or-smaller signed with uint64, have no promotion).
TABLE = """
      b   i1  i2  i4  i8  u1  u2  u4  u8  f4  f8  c8  c16
b     b   -   -   -   -   -   -   -   -   -   -   -   -
i1    -   i1  i2  i4  i8  i2  i4  i8  -   -   -   -   -
i2    -   i2  i2  i4  i8  i2  i4  i8  -   -   -   -   -
i4    -   i4  i4  i4  i8  i4  i4  i8  -   -   -   -   -
i8    -   i8  i8  i8  i8  i8  i8  i8  -   -   -   -   -
u1    -   i2  i2  i4  i8  u1  u2  u4  u8  -   -   -   -
u2    -   i4  i4  i4  i8  u2  u2  u4  u8  -   -   -   -
u4    -   i8  i8  i8  i8  u4  u4  u4  u8  -   -   -   -
u8    -   -   -   -   -   u8  u8  u8  u8  -   -   -   -
f4    -   -   -   -   -   -   -   -   -   f4  f8  c8  c16
f8    -   -   -   -   -   -   -   -   -   f8  f8  c16 c16
c8    -   -   -   -   -   -   -   -   -   c8  c16 c8  c16
c16   -   -   -   -   -   -   -   -   -   c16 c16 c16 c16
"""


def _table():
    rows = [line.split() for line in TABLE.strip().splitlines()]
    cols = rows[0]
    out = {}
    for row in rows[1:]:
        for col, entry in zip(cols, row[1:]):
            out[CODES[row[0]], CODES[col]] = None if entry == "-" else CODES[entry]
    return out


PROMOTION = _table()
PAIRS = [(a, b) for a in ALL for b in ALL]
pair_ids = [f"{a.name}-{b.name}" for a, b in PAIRS]

KINDS = {xp.bool: "bool", xp.int8: "signed integer", xp.int16: "signed integer", xp.int32: "signed integer",
         xp.int64: "signed integer", xp.uint8: "unsigned integer", xp.uint16: "unsigned integer",
         xp.uint32: "unsigned integer", xp.uint64: "unsigned integer", xp.float32: "real floating",
         xp.float64: "real floating", xp.complex64: "complex floating", xp.complex128: "complex floating"}


def test_table_is_complete_and_symmetric():
    assert len(PROMOTION) == 13 * 13
    for (a, b), r in PROMOTION.items():
        assert PROMOTION[b, a] is r
        assert PROMOTION[a, a] is a


def test_the_namespace_has_the_13_dtypes():
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
             "float64", "complex64", "complex128"]
    assert [getattr(xp, n) for n in names] == list(ALL)
    for d in ALL:
        assert d == d and hash(d) == hash(d)
        # NumPy's own dtype objects (xarray and pandas test isinstance(dtype, np.dtype)), as CuPy's are
        assert isinstance(d, np.dtype) and isinstance(d, xp.DType) and np.dtype(d) is d
        # unpickled, NumPy makes a new dtype object: equal, same hash, and numr takes it as the same dtype
        back = pickle.loads(pickle.dumps(d))
        assert back == d and hash(back) == hash(d)
        assert xp.empty((1,), dtype=back).dtype is d and xp.result_type(back) is d
        assert d.name in repr(d)
    assert len({d for d in ALL}) == 13
    assert xp.float32 != xp.float64 and xp.int8 != xp.uint8


@pytest.mark.parametrize("a, b", PAIRS, ids=pair_ids)
def test_promotion_table(a, b):
    expected = PROMOTION[a, b]
    if expected is None:  # the standard leaves it to the implementation: NumPy's (NEP 50) result
        assert np.dtype(xp.result_type(a, b)) == np.promote_types(np.dtype(a), np.dtype(b))
    else:
        assert xp.result_type(a, b) is expected
    # can_cast(a, b): the standard's promotion takes a to b (its own table only)
    assert xp.can_cast(a, b) is (expected is b)


@pytest.mark.parametrize("a, b", PAIRS, ids=pair_ids)
def test_promotion_in_arithmetic(a, b):
    """The table holds for arrays too (0-D included): add for numbers, equal for everything."""
    needs_dtype(a, b)
    x1 = xp.zeros((2,), dtype=a, device=DEVICE)
    x2 = xp.zeros((), dtype=b, device=DEVICE)
    expected = PROMOTION[a, b]
    if expected is None:  # the standard leaves it to the implementation: NumPy's result
        expected = xp._dtypes.from_numpy(np.promote_types(np.dtype(a), np.dtype(b)))
    if missing_dtype(expected) and expected not in (a, b):
        # (int8 with uint32 promote to int64: a device without it refuses, naming the function)
        for f in (xp.equal, xp.add):
            with pytest.raises(TypeError, match=f.__name__):
                f(x1, x2)
        needs_dtype(expected)
    assert xp.equal(x1, x2).dtype == xp.bool
    if a != xp.bool:
        assert xp.add(x1, x2).dtype == expected
        assert (x2 + x1).dtype == expected


def test_result_type_many_arguments_and_arrays():
    assert xp.result_type(xp.int8, xp.uint8, xp.int16) is xp.int16
    assert xp.result_type(xp.uint8, xp.int8, xp.uint16) is xp.int32
    assert xp.result_type(xp.float32, xp.complex64, xp.float64) is xp.complex128
    assert xp.result_type(xp.int32) is xp.int32
    x = xp.ones((2,), dtype=xp.uint16, device=DEVICE)
    assert xp.result_type(x, xp.int8) is xp.int32
    assert xp.result_type(x, x) is xp.uint16
    # mixed kinds and int64 with uint64, which the standard leaves open, promote as in NumPy
    assert xp.result_type(xp.int8, xp.float32) is xp.float32
    assert xp.result_type(xp.int32, xp.float32) is xp.float64
    assert xp.result_type(xp.int64, xp.uint64) is xp.float64
    assert xp.result_type(xp.int8, "float32") is xp.float32
    # NumPy's scalars and arrays, and other arrays with a dtype (dask's), count with their dtype (NEP 50), as
    # in NumPy: xarray passes its fill values so
    assert xp.result_type(xp.float32, np.float64(np.nan)) is xp.float64
    assert xp.result_type(np.int16(1), np.zeros(2, np.uint8)) is xp.int16
    assert xp.result_type(x, np.float32(1)) is xp.float32
    with pytest.raises(TypeError, match="result_type.*float16"):
        xp.result_type(np.float16)
    with pytest.raises(TypeError, match="result_type.*float16"):
        xp.result_type(np.float16(1))
    with pytest.raises(TypeError, match="result_type"):
        xp.result_type([1, 2])
    with pytest.raises(ValueError, match="result_type"):
        xp.result_type()


@pytest.mark.parametrize("dtype", ALL, ids=[d.name for d in ALL])
def test_result_type_with_python_scalars(dtype):
    """The standard's scalar rules: bool with bool; int with numbers; float with floating; complex with
    complex, and with real floating-point giving the complex dtype of its precision."""
    kind = KINDS[dtype]
    cases = [(True, kind == "bool"), (1, kind != "bool"), (1.5, "floating" in kind), (1j, "floating" in kind)]
    for scalar, allowed in cases:
        if allowed:
            expected = dtype
            if type(scalar) is complex and kind == "real floating":
                expected = {xp.float32: xp.complex64, xp.float64: xp.complex128}[dtype]
            assert xp.result_type(dtype, scalar) is expected
            assert xp.result_type(scalar, dtype) is expected
        else:
            # the standard leaves these unspecified; numr_array gives NumPy 2's (NEP 50) result
            want = np.add(np.ones(1, dtype=np.dtype(dtype)), scalar).dtype
            assert np.dtype(xp.result_type(dtype, scalar)) == want
            assert np.dtype(xp.result_type(scalar, dtype)) == want
    with pytest.raises(ValueError, match="result_type"):
        xp.result_type(1, 2.0)
    assert xp.result_type(xp.float32, 1, 1.0, 1j) is xp.complex64
    assert xp.result_type(xp.int8, xp.uint8, 300) is xp.int16


def test_can_cast_arrays_and_errors():
    x = xp.ones((2,), dtype=xp.int16, device=DEVICE)
    assert xp.can_cast(x, xp.int32) and not xp.can_cast(x, xp.int8) and not xp.can_cast(x, xp.float64)
    assert xp.can_cast(xp.int8, "int16") and xp.can_cast(np.int8, xp.int16) and not xp.can_cast("f8", np.float32)
    with pytest.raises(TypeError, match="can_cast.*float16"):
        xp.can_cast(xp.int8, "float16")
    with pytest.raises(TypeError, match="can_cast"):
        xp.can_cast(np.float16, xp.int16)


# --- finfo, iinfo, isdtype ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.complex64, xp.complex128],
                         ids=["float32", "float64", "complex64", "complex128"])
def test_finfo(dtype):
    real = {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype)
    ref = np.finfo(real)
    for arg in (dtype, xp.zeros((1,), dtype=dtype, device=DEVICE)) if dtype in supported([dtype]) else (dtype,):
        fi = xp.finfo(arg)
        assert fi.bits == ref.bits and type(fi.bits) is int
        for name in ("eps", "max", "min", "smallest_normal"):
            value = getattr(fi, name)
            assert type(value) is float, name
            assert value == float(getattr(ref, name)), name
        assert fi.dtype is real
    assert xp.finfo(xp.float32).eps == 2.0 ** -23 and xp.finfo(xp.float64).eps == 2.0 ** -52
    assert xp.finfo(xp.float32).min == -xp.finfo(xp.float32).max


@pytest.mark.parametrize("dtype", [d for d in ALL if "integer" in KINDS[d]], ids=lambda d: d.name)
def test_iinfo(dtype):
    ref = np.iinfo(dtype)
    for arg in (dtype, xp.zeros((1,), dtype=dtype, device=DEVICE)) if dtype in supported([dtype]) else (dtype,):
        ii = xp.iinfo(arg)
        assert (ii.bits, ii.min, ii.max) == (ref.bits, int(ref.min), int(ref.max))
        assert type(ii.min) is int and type(ii.max) is int
        assert ii.dtype is dtype
    signed = KINDS[dtype] == "signed integer"
    assert xp.iinfo(dtype).min == (-(2 ** (dtype.itemsize * 8 - 1)) if signed else 0)


def test_finfo_iinfo_errors():
    for d in ALL:
        if "floating" not in KINDS[d]:
            with pytest.raises(TypeError, match="finfo"):
                xp.finfo(d)
        if "integer" not in KINDS[d]:
            with pytest.raises(TypeError, match="iinfo"):
                xp.iinfo(d)
    assert xp.finfo(float) == xp.finfo(xp.float64) and xp.iinfo(np.int8) == xp.iinfo("int8") == xp.iinfo(xp.int8)
    with pytest.raises(TypeError, match="finfo.*float16"):
        xp.finfo(np.float16)
    with pytest.raises(TypeError, match="iinfo"):
        xp.iinfo("U3")


GROUPS = {
    "bool": {"bool"}, "signed integer": {"signed integer"}, "unsigned integer": {"unsigned integer"},
    "integral": {"signed integer", "unsigned integer"}, "real floating": {"real floating"},
    "complex floating": {"complex floating"},
    "numeric": {"signed integer", "unsigned integer", "real floating", "complex floating"},
}


@pytest.mark.parametrize("dtype", ALL, ids=[d.name for d in ALL])
def test_isdtype(dtype):
    for kind, members in GROUPS.items():
        assert xp.isdtype(dtype, kind) is (KINDS[dtype] in members), kind
    for other in ALL:
        assert xp.isdtype(dtype, other) is (other is dtype)
    assert xp.isdtype(dtype, ("bool", "numeric"))
    assert xp.isdtype(dtype, (xp.int8, dtype))
    assert xp.isdtype(dtype, ()) is False
    assert xp.isdtype(dtype, ("real floating", xp.complex64)) is (
        KINDS[dtype] == "real floating" or dtype is xp.complex64)


def test_isdtype_errors():
    with pytest.raises(ValueError, match="isdtype"):
        xp.isdtype(xp.int8, "integer")
    with pytest.raises(TypeError, match="isdtype"):
        xp.isdtype(xp.int8, 3)
    with pytest.raises(ValueError, match="isdtype"):
        xp.isdtype(xp.int8, "int8")  # a kind is one of the standard's kind names, not a dtype name
    with pytest.raises(TypeError, match="isdtype"):
        xp.isdtype(np.float16, "real floating")
    with pytest.raises(TypeError, match="isdtype"):
        xp.isdtype(xp.ones(1, device=DEVICE), "real floating")


def test_info_dtypes_are_the_namespace_dtypes():
    info = xp.__array_namespace_info__()
    d = info.dtypes(device=DEVICE)
    assert all(getattr(xp, name) is dtype for name, dtype in d.items())
    assert set(info.dtypes(device=DEVICE, kind="integral").values()) <= {
        x for x in ALL if "integer" in KINDS[x]}
    assert set(info.dtypes(device=DEVICE, kind=("bool", "complex floating")).values()) <= {
        xp.bool, xp.complex64, xp.complex128}


# --- astype -------------------------------------------------------------------------------------

# complex to a real dtype is not allowed (take real() or imag() first); complex to bool is
ALLOWED_CASTS = [(a, b) for a, b in PAIRS
                 if not (KINDS[a] == "complex floating" and KINDS[b] in ("real floating", "signed integer",
                                                                       "unsigned integer"))]


def _cast_reference(a: np.ndarray, to) -> np.ndarray:
    with np.errstate(all="ignore"):
        return a.astype(to)


@given(st.sampled_from(ALLOWED_CASTS), shapes(max_dims=3), st.data())
def test_astype(pair, shape, data):
    src, dst = pair
    assume(src in supported([src]) and dst in supported([dst]))
    a = data.draw(np_arrays(src, shape), label="a")
    if "integer" in KINDS[dst] and KINDS[src] == "real floating":
        # NaN, infinities and values beyond the range cast to integers as the implementation likes
        signed = KINDS[dst] == "signed integer"
        bits = dst.itemsize * 8
        lo, hi = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if signed else (0.0, 2.0 ** bits)
        with np.errstate(invalid="ignore"):
            a = np.where(np.isfinite(a) & (a > lo - 1) & (a < hi), a, 0).astype(src)
    x = data.draw(views(a), label="x")
    r = xp.astype(x, dst)
    assert r.dtype is dst and r.shape == a.shape and r.device == x.device
    # integers wrap to narrower integers (as in C and NumPy); floats round to the nearest
    np.testing.assert_array_equal(to_np(r), _cast_reference(a, dst))
    np.testing.assert_array_equal(to_np(x), a)  # the source is untouched


def test_astype_bool_semantics():
    x = xp.asarray([0.0, -0.0, 2.5, float("nan"), float("inf")], device=DEVICE)
    np.testing.assert_array_equal(to_np(xp.astype(x, xp.bool)), [False, False, True, True, True])
    z = xp.asarray([0j, 1j, complex(0, -0.0), 1 + 0j], device=DEVICE)
    np.testing.assert_array_equal(to_np(xp.astype(z, xp.bool)), [False, True, False, True])
    b = xp.asarray([True, False], device=DEVICE)
    for d in supported(ALL):
        np.testing.assert_array_equal(to_np(xp.astype(b, d)), np.array([1, 0]).astype(d))


def test_astype_copy_semantics():
    x = xp.asarray([1, 2, 3], dtype=xp.int32, device=DEVICE)
    assert xp.astype(x, xp.int32, copy=False) is x
    y = xp.astype(x, xp.int32)
    assert y is not x
    y[0] = 100
    assert int(x[0]) == 1
    z = xp.astype(x, xp.int32, copy=True)
    assert z is not x and z.dtype is xp.int32
    w = xp.astype(x, xp.int16, copy=False)  # a dtype change copies whatever copy says
    assert w is not x and w.dtype is xp.int16
    assert xp.astype(x, xp.int32, device=DEVICE, copy=False) is x
    v = xp.astype(x, DEFAULTS["real floating"], device=DEVICE)
    assert v.device == x.device
    np.testing.assert_array_equal(to_np(v), [1.0, 2.0, 3.0])


def test_astype_errors():
    z = xp.asarray([1 + 1j], device=DEVICE)
    for d in ALL:
        if KINDS[d] not in ("complex floating", "bool"):
            with pytest.raises(TypeError, match="astype"):
                xp.astype(z, d)
    with pytest.raises(TypeError, match="astype.*float16"):
        xp.astype(xp.asarray([1], device=DEVICE), "float16")
    with pytest.raises(TypeError, match="astype"):
        xp.astype([1, 2], xp.float64)
    with pytest.raises(ValueError):
        xp.astype(xp.asarray([1], device=DEVICE), xp.float64, device="nosuchdevice")
