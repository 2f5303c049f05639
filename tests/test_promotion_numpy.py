"""Promotion where the standard leaves the result to the implementation follows NumPy 2 (NEP 50).

The standard's own table is tested by the official suite and tests/test_dtypes.py; these tests cover the
pairs it does not define (mixed kinds, int64 with uint64) and Python scalars of a higher kind than the
array, against NumPy's answer for the same operands, and check that ``can_cast`` keeps the standard's table.
"""

import numpy as np
import pytest

import numr_array as xp
from tests.helpers import DEVICE, needs_dtype

DTYPES = [xp.bool, xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64,
          xp.float32, xp.float64, xp.complex64, xp.complex128]


@pytest.mark.parametrize("a", DTYPES, ids=str)
@pytest.mark.parametrize("b", DTYPES, ids=str)
def test_result_type_is_numpys(a, b):
    assert np.dtype(xp.result_type(a, b)) == np.promote_types(np.dtype(a), np.dtype(b))


NUMERIC = [d for d in DTYPES if d is not xp.bool]


@pytest.mark.parametrize("a", NUMERIC, ids=str)
@pytest.mark.parametrize("b", NUMERIC, ids=str)
def test_mixed_arrays_compute_as_numpy(a, b):
    want = np.promote_types(np.dtype(a), np.dtype(b))
    needs_dtype(a, b, xp.result_type(a, b))
    x = np.array([1, 2, 3], dtype=np.dtype(a))
    y = np.array([3, 1, 2], dtype=np.dtype(b))
    got = xp.multiply(xp.asarray(x, device=DEVICE), xp.asarray(y, device=DEVICE))
    assert np.dtype(got.dtype) == want
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), np.multiply(x, y))
    eq = xp.equal(xp.asarray(x, device=DEVICE), xp.asarray(y, device=DEVICE))
    np.testing.assert_array_equal(np.asarray(eq.to_device("cpu")), np.equal(x, y))


@pytest.mark.parametrize("a", NUMERIC, ids=str)
@pytest.mark.parametrize("scalar", [True, 2, 1.5, 1 + 2j], ids=repr)
def test_python_scalars_promote_as_numpy(a, scalar):
    x = np.array([1, 2, 3], dtype=np.dtype(a))
    want = np.add(x, scalar)
    needs_dtype(a, xp.result_type(a, scalar))
    got = xp.add(xp.asarray(x, device=DEVICE), scalar)
    assert np.dtype(got.dtype) == want.dtype, (a, scalar)
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), want)
    assert np.dtype(xp.result_type(a, scalar)) == want.dtype


@pytest.mark.parametrize("scalar", [2, 1.5, 1 + 2j], ids=repr)
def test_bool_arrays_with_numbers_promote_as_numpy(scalar):
    x = np.array([True, False])
    want = np.add(x, scalar)
    needs_dtype(xp.result_type(xp.bool, scalar))
    got = xp.add(xp.asarray(x, device=DEVICE), scalar)
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), want)
    assert np.dtype(got.dtype) == want.dtype


def test_bool_arithmetic_stays_refused():
    # NumPy's True + True is a logical or; the standard's add takes numbers, and so does numr's
    b = xp.asarray([True, False], device=DEVICE)
    with pytest.raises(TypeError, match="add"):
        xp.add(b, b)
    with pytest.raises(TypeError, match="add"):
        xp.add(b, True)


def test_can_cast_keeps_the_standards_table():
    # NumPy can cast int8 to float32 safely; the standard's can_cast follows only its own table
    assert not xp.can_cast(xp.int8, xp.float32)
    assert not xp.can_cast(xp.int64, xp.float64)
    assert xp.can_cast(xp.int8, xp.int16)
