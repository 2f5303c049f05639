"""NumPy's protocols on numr's objects: dtypes that NumPy (and dask, xarray) take as NumPy dtypes, and
NumPy dtypes, scalar types and names accepted wherever numr takes a dtype."""

import pathlib
import pickle
import re

import numpy as np
import pytest

import numr_array as xp

from .helpers import missing_dtype
from .strategies import ALL, DEVICE, to_np

NAMES = [d.name for d in ALL]


# --- numr dtypes as NumPy dtypes ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL, ids=NAMES)
def test_numpy_takes_a_numr_dtype(dtype):
    ref = np.dtype(dtype.name)
    assert np.dtype(dtype) == ref and np.dtype(dtype) is dtype.dtype
    assert (dtype.kind, dtype.itemsize, dtype.char, dtype.str, dtype.type, dtype.name) == (
        ref.kind, ref.itemsize, ref.char, ref.str, ref.type, ref.name)
    assert dtype.names is None and dtype.byteorder == ref.byteorder
    assert np.zeros(2, dtype=dtype).dtype == ref
    assert np.result_type(dtype, dtype) == ref
    assert np.issubdtype(dtype, np.number) is np.issubdtype(ref, np.number)
    assert np.issubdtype(dtype, np.floating) is (ref.kind == "f")
    assert np.can_cast(dtype, np.complex128)


@pytest.mark.parametrize("dtype", ALL, ids=NAMES)
def test_a_numr_dtype_equals_its_numpy_forms(dtype):
    ref = np.dtype(dtype.name)
    for form in (ref, ref.type, dtype.name, ref.str, ref.char):
        assert dtype == form and form == dtype and not dtype != form, form
    for other in ALL:
        if other is not dtype:
            assert dtype != other and dtype != np.dtype(other.name) and dtype != other.name
    assert dtype != "no such dtype" and dtype != 3 and dtype != None  # noqa: E711
    # hashed by identity, as NumPy's scalar types are (np.float32 == ref, with another hash); np.dtype(d) is
    # the key beside NumPy dtypes
    assert {dtype: 1}[dtype] == 1 and {ref: 1}[np.dtype(dtype)] == 1
    assert pickle.loads(pickle.dumps(dtype)) is dtype


def test_python_types_compare_as_numpy_compares_them():
    assert xp.float64 == float and xp.int64 == int and xp.bool == bool and xp.complex128 == complex
    assert xp.float32 != float and xp.int32 != int


def test_a_tensors_dtype_for_numpy():
    t = xp.ones((2, 3), dtype=xp.float32, device=DEVICE)
    assert np.dtype(t.dtype) == np.float32 and t.dtype == "float32" and t.dtype == np.float32
    assert t.dtype.kind == "f" and t.dtype.itemsize == 4 and np.issubdtype(t.dtype, np.floating)


def test_no_kind_is_compared_with_the_standards_kind_names():
    """DType.kind is NumPy's letter; comparing it with "real floating" and the like is always false (the
    standard's names are isdtype's), so no source of the package does that."""
    names = r'"(bool|signed integer|unsigned integer|integral|real floating|complex floating|numeric)"'
    pattern = re.compile(rf"kind\s*(==|!=|in|not in)\s*\(?{names}")
    root = pathlib.Path(xp.__file__).parent
    hits = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits


# --- NumPy dtypes where numr takes a dtype ---------------------------------------------------------------

FORMS = [xp.float32, np.float32, np.dtype("float32"), "float32", "f4"]


@pytest.mark.parametrize("form", FORMS, ids=repr)
def test_functions_take_numpy_dtypes_and_names(form):
    x = xp.asarray([1, 2, 3], dtype=xp.int32, device=DEVICE)
    for t in (xp.zeros(3, dtype=form, device=DEVICE), xp.ones((3,), dtype=form, device=DEVICE),
              xp.empty(3, dtype=form, device=DEVICE), xp.full(3, 2, dtype=form, device=DEVICE),
              xp.arange(3, dtype=form, device=DEVICE), xp.linspace(0, 1, 3, dtype=form, device=DEVICE),
              xp.eye(3, dtype=form, device=DEVICE), xp.asarray([1, 2], dtype=form, device=DEVICE),
              xp.zeros_like(x, dtype=form), xp.full_like(x, 1, dtype=form), xp.astype(x, form),
              xp.sum(x, dtype=form), xp.mean(x, dtype=form),
              xp.cumulative_sum(x, dtype=form)):
        assert t.dtype is xp.float32
    np.testing.assert_array_equal(to_np(xp.astype(x, form)), np.array([1, 2, 3], np.float32))
    assert xp.result_type(form, xp.complex64) is xp.complex64 and xp.result_type(form) is xp.float32
    assert xp.result_type(xp.ones(1, dtype=form, device=DEVICE), form, 1.5) is xp.float32
    assert xp.can_cast(form, np.complex64) and xp.isdtype(form, "real floating")
    assert xp.finfo(form).dtype is xp.float32


@pytest.mark.skipif(missing_dtype(xp.float64, xp.int64) is not None, reason=str(missing_dtype(xp.float64, xp.int64)))
def test_python_types_as_dtypes_are_numpys():
    """As in NumPy and CuPy: float is float64, int is int64, complex is complex128, whatever the device's
    default dtypes."""
    assert xp.zeros(2, dtype=float, device=DEVICE).dtype is xp.float64
    assert xp.zeros(2, dtype=int, device=DEVICE).dtype is xp.int64
    assert xp.zeros(2, dtype=bool, device=DEVICE).dtype is xp.bool
    assert xp.result_type(float, xp.float32) is xp.float64


@pytest.mark.parametrize("bad", [np.float16, "float16", "U3", object, np.dtype(">f4"), "no such dtype", 3, [1]],
                         ids=repr)
def test_unsupported_dtypes_name_the_function_and_value(bad):
    x = xp.ones(2, device=DEVICE)
    calls = [("zeros", lambda: xp.zeros(2, dtype=bad, device=DEVICE)),
             ("asarray", lambda: xp.asarray([1], dtype=bad, device=DEVICE)),
             ("astype", lambda: xp.astype(x, bad)), ("sum", lambda: xp.sum(x, dtype=bad)),
             ("can_cast", lambda: xp.can_cast(xp.int8, bad)), ("isdtype", lambda: xp.isdtype(bad, "bool"))]
    if type(bad) is not int:  # (an int is a Python scalar to result_type)
        calls.append(("result_type", lambda: xp.result_type(xp.float32, bad)))
    for name, call in calls:
        with pytest.raises(TypeError, match=rf"{name}: .*{re.escape(str(bad))[:6]}"):
            call()
