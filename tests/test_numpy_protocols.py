"""NumPy's protocols on numr's objects: dtypes that are NumPy's own dtype objects (as NumPy, dask, xarray and
pandas want them), and NumPy dtypes, scalar types and names accepted wherever numr takes a dtype."""

import pathlib
import pickle
import re

import numpy as np
import pytest

import numr_array as xp

from .helpers import missing_dtype
from .strategies import ALL, DEVICE, to_np

NAMES = [d.name for d in ALL]


# --- numr dtypes are NumPy dtypes ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL, ids=NAMES)
def test_numpy_takes_a_numr_dtype(dtype):
    ref = np.dtype(dtype.name)
    # NumPy's own canonical dtype object: isinstance(dtype, np.dtype) holds (xarray and pandas test it)
    assert isinstance(dtype, np.dtype) and dtype is ref and np.dtype(dtype) is dtype
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
    # NumPy's comparison: None is NumPy's default dtype (np.dtype(None) is float64), so float64 == None
    assert dtype != "no such dtype" and dtype != 3 and (dtype == None) is (ref == np.float64)  # noqa: E711
    # hashed as NumPy's dtypes: one key for both
    assert {dtype: 1}[dtype] == 1 and {ref: 1}[dtype] == 1 and {dtype: 1}[np.dtype(dtype.name)] == 1
    back = pickle.loads(pickle.dumps(dtype))  # (a new NumPy dtype object: equal, as in NumPy)
    assert back == dtype and hash(back) == hash(dtype) and xp.result_type(back) is dtype


def test_python_types_compare_as_numpy_compares_them():
    assert xp.float64 == float and xp.int64 == int and xp.bool == bool and xp.complex128 == complex
    assert xp.float32 != float and xp.int32 != int


def test_a_tensors_dtype_for_numpy():
    t = xp.ones((2, 3), dtype=xp.float32, device=DEVICE)
    assert np.dtype(t.dtype) == np.float32 and t.dtype == "float32" and t.dtype == np.float32
    assert t.dtype.kind == "f" and t.dtype.itemsize == 4 and np.issubdtype(t.dtype, np.floating)


def test_no_kind_is_compared_with_the_standards_kind_names():
    """DType.kind is NumPy's letter; comparing it with "real floating" and the like is always false (the
    standard's names are isdtype's), so no source of the package does that (a kind in a variable included),
    and no test does it with a dtype's ``.kind`` (where it would silently select no dtype)."""
    names = r'"(bool|signed integer|unsigned integer|integral|real floating|complex floating|numeric)"'
    package = pathlib.Path(xp.__file__).parent
    tests = pathlib.Path(__file__).parent
    hits = []
    for root, pattern in ((package, rf"kind\s*(==|!=|in|not in)\s*\(?{names}"),
                          (tests, rf"\.kind\s*(==|!=|in|not in)\s*\(?{names}")):
        hits += [f"{p}:{i}" for p in root.rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(pattern, line)]
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


# --- NEP 13 and NEP 18: NumPy's functions and ufuncs on tensors run numr's --------------------------------

A = np.array([[0.5, -1.25, 2.0], [3.5, 0.25, -0.75]], np.float32)
ON_CPU = DEVICE == "cpu"


def _t(a=A) -> xp.Tensor:
    return xp.asarray(a, device=DEVICE)


def _same_tensor(got, want) -> None:
    """``got`` is a tensor on the device under test with exactly numr's own result ``want``."""
    assert type(got) is xp.Tensor and got.device == xp.asarray(want).device, type(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(to_np(got), to_np(want))


@pytest.mark.parametrize("ufunc, args, numr", [
    (np.sin, (A,), xp.sin), (np.exp, (A,), xp.exp), (np.negative, (A,), xp.negative),
    (np.absolute, (A,), xp.abs), (np.rint, (A,), xp.round), (np.sqrt, (np.abs(A),), xp.sqrt),
    (np.add, (A, A), xp.add), (np.multiply, (A, 2.0), xp.multiply), (np.maximum, (A, A[::-1]), xp.maximum),
    (np.arctan2, (A, A[::-1]), xp.atan2), (np.power, (np.abs(A), 2), xp.pow), (np.less, (A, 0.5), xp.less),
    (np.logical_and, (A > 0, A < 3), xp.logical_and), (np.floor_divide, (A, 0.5), xp.floor_divide),
], ids=lambda v: getattr(v, "__name__", ""))
def test_ufuncs_run_numrs_function(ufunc, args, numr):
    targs = [_t(a) if isinstance(a, np.ndarray) else a for a in args]
    _same_tensor(ufunc(*targs), numr(*targs))


def test_scipy_special_ufuncs_that_are_numpys_run_numr():
    special = pytest.importorskip("scipy.special")
    t = _t(np.abs(A))
    _same_tensor(special.expm1(t), xp.expm1(t))
    _same_tensor(special.log1p(t), xp.log1p(t))


def test_numpy_functions_run_numrs_function():
    t = _t()
    cases = [
        (np.sum(t, axis=0), xp.sum(t, axis=0)), (np.sum(t, 1), xp.sum(t, axis=1)),
        (np.sum(t, axis=(0, 1), keepdims=True), xp.sum(t, axis=(0, 1), keepdims=True)),
        (np.mean(t), xp.mean(t)), (np.std(t, ddof=1), xp.std(t, correction=1)), (np.var(t, 0), xp.var(t, axis=0)),
        (np.max(t, axis=1), xp.max(t, axis=1)), (np.argmax(t, axis=0), xp.argmax(t, axis=0)),
        (np.concatenate([t, t]), xp.concat([t, t])), (np.concatenate((t, t), 1), xp.concat([t, t], axis=1)),
        (np.stack([t, t], axis=1), xp.stack([t, t], axis=1)), (np.reshape(t, (3, 2)), xp.reshape(t, (3, 2))),
        (np.transpose(t), xp.permute_dims(t, (1, 0))), (np.where(t > 0, t, 0.0), xp.where(t > 0, t, 0.0)),
        (np.clip(t, -1, 1), xp.clip(t, -1, 1)), (np.cumsum(t, axis=1), xp.cumulative_sum(t, axis=1)),
        (np.sort(t, axis=0), xp.sort(t, axis=0)), (np.take(t, xp.asarray([1, 0], device=DEVICE), axis=1),
                                                   xp.take(t, xp.asarray([1, 0], device=DEVICE), axis=1)),
        (np.matmul(t, t.T), xp.matmul(t, t.T)), (np.round(t, 1), xp.round(t, 1)),
    ]
    for got, want in cases:
        _same_tensor(got, want)
    # NumPy's defaults given explicitly are what numr computes
    _same_tensor(np.reshape(t, (3, 2), order="C"), xp.reshape(t, (3, 2)))
    # order="C" where NumPy's default is another (K): numr's results are row-major (dask asks for it)
    _same_tensor(np.zeros_like(t, order="C"), xp.zeros_like(t))
    _same_tensor(np.full_like(t, 2.0, order="C", shape=1), xp.full((1,), 2.0, dtype=t.dtype, device=DEVICE))
    _same_tensor(np.sum(t, axis=0, keepdims=False), xp.sum(t, axis=0))
    _same_tensor(np.add(t, t, casting="same_kind", where=True), xp.add(t, t))
    _same_tensor(np.argsort(t, kind="stable"), xp.argsort(t))  # (numr sorts stably: every kind is met)
    _same_tensor(np.sort(t, axis=0, kind="mergesort"), xp.sort(t, axis=0))
    assert np.ndim(t) == 2 and np.shape(t) == (2, 3) and np.size(t) == 6


def test_ufunc_methods():
    t = _t()
    _same_tensor(np.add.reduce(t), xp.sum(t, axis=0))
    _same_tensor(np.add.reduce(t, axis=None), xp.sum(t))
    _same_tensor(np.multiply.reduce(t, axis=1, keepdims=True), xp.prod(t, axis=1, keepdims=True))
    _same_tensor(np.maximum.reduce(t, axis=1), xp.max(t, axis=1))
    _same_tensor(np.logical_or.reduce(t > 3, axis=0), xp.any(t > 3, axis=0))
    _same_tensor(np.add.accumulate(t), xp.cumulative_sum(t, axis=0))
    _same_tensor(np.multiply.accumulate(t, axis=1), xp.cumulative_prod(t, axis=1))
    _same_tensor(np.subtract.outer(t[0], t[1]), xp.subtract(xp.reshape(t[0], (3, 1)), t[1]))
    with pytest.raises(TypeError, match="numpy.add.reduce: .*initial"):
        np.add.reduce(t, initial=1.0)


def test_out_and_dtype():
    t = _t()
    o = xp.zeros((2, 3), dtype=xp.float32, device=DEVICE)
    assert np.add(t, 1.0, out=o) is o
    np.testing.assert_array_equal(to_np(o), A + 1)
    s = xp.zeros(3, dtype=xp.float32, device=DEVICE)
    assert np.sum(t, axis=0, out=s) is s and np.add.reduce(t, out=s) is s
    np.testing.assert_array_equal(to_np(s), to_np(xp.sum(t, axis=0)))
    i = xp.asarray([1, 2, 3], dtype=xp.int32, device=DEVICE)
    _same_tensor(np.add(i, i, dtype=np.float32), xp.add(xp.astype(i, xp.float32), xp.astype(i, xp.float32)))
    with pytest.raises(TypeError, match="numpy.add: out"):
        np.add(t, 1.0, out=(np.zeros((2, 3), np.float32),))
    q = xp.zeros((3, 3), dtype=xp.int32, device=DEVICE)
    with pytest.raises(TypeError, match="numpy.multiply.outer: out has dtype int32"):
        np.multiply.outer(t[0], t[1], out=q)  # (float32 does not go into int32)
    with pytest.raises(ValueError, match="numpy.multiply.outer: out has shape"):
        np.multiply.outer(t[0], t[1], out=o)
    np.testing.assert_array_equal(to_np(q), 0)  # a failing call leaves out untouched
    w = xp.zeros((3, 3), dtype=xp.float32, device=DEVICE)
    assert np.multiply.outer(t[0], t[1], out=w) is w
    np.testing.assert_array_equal(to_np(w), np.multiply.outer(A[0], A[1]))


@pytest.mark.parametrize("call, arg", [
    (lambda t: np.sin(t, where=t > 0), "where"), (lambda t: np.sum(t, where=t > 0), "where"),
    (lambda t: np.sum(t, initial=1.0), "initial"), (lambda t: np.reshape(t, (3, 2), order="F"), "order"),
    (lambda t: np.zeros_like(t, order="F"), "order"),
    (lambda t: np.add(t, t, casting="unsafe"), "casting"), (lambda t: np.concatenate([t, t], dtype=np.float64), "dtype"),
])
def test_arguments_numr_lacks_are_type_errors_naming_them(call, arg):
    with pytest.raises(TypeError, match=rf"numpy\.\w+: numr_array does not support {arg}="):
        call(_t())


def test_numpy_subclasses_defer_to_theirs():
    """A masked array beside a tensor is not taken as a plain array (its mask would be lost)."""
    m = np.ma.masked_array(A, mask=A > 1)
    with pytest.raises(TypeError):
        np.concatenate([_t(), m])


def test_numpy_scalars_are_python_scalars():
    t = _t()
    for r in (np.float64(2) * t, t * np.float32(2), np.multiply(t, np.array(2.0))):
        _same_tensor(r, t * 2.0)


def test_numpy_arrays_beside_tensors():
    """Beside CPU tensors a NumPy array is a CPU tensor; beside another device's, a TypeError (as in CuPy)."""
    t = _t()
    calls = [lambda: t + np.ones(3, np.float32), lambda: np.ones(3, np.float32) + t,
             lambda: np.add(np.ones(3, np.float32), t), lambda: np.concatenate([t, A])]
    for call in calls:
        if ON_CPU:
            assert type(call()) is xp.Tensor
        else:
            with pytest.raises(TypeError, match="NumPy array cannot be combined"):
                call()
    if ON_CPU:
        _same_tensor(t + np.ones(3, np.float32), t + xp.ones(3, dtype=xp.float32))
        with pytest.raises(TypeError, match="numpy.add: .*float16"):
            np.add(t, np.ones(3, np.float16))


def test_what_numr_lacks_runs_on_the_host_view_on_cpu_only():
    t = _t()
    calls = {"numpy.add.at": lambda: np.add.at(t, [0], 1.0),
             "numpy.fmod": lambda: np.fmod.reduceat(t, [0, 1], axis=1)}
    special = pytest.importorskip("scipy.special")
    calls["the ufunc erfcinv"] = lambda: special.erfcinv(xp.abs(t) / 4)
    if not ON_CPU:
        for name, call in calls.items():
            with pytest.raises(TypeError, match=rf"{re.escape(name)}.*implicit conversion of {DEVICE}"):
                call()
        return
    _same_tensor(np.fmod.reduceat(t, [0, 1], axis=1), xp.asarray(np.fmod.reduceat(A, [0, 1], axis=1)))
    np.testing.assert_allclose(to_np(special.erfcinv(xp.abs(t) / 4)), special.erfcinv(np.abs(A) / 4), rtol=1e-6)
    assert type(special.erfcinv(xp.abs(t) / 4)) is xp.Tensor
    np.add.at(t, [0], 1.0)  # in place, on the tensor's memory
    np.testing.assert_array_equal(to_np(t), A + [[1], [0]])
    q = np.quantile(t, [0.25, 0.75])
    assert type(q) is xp.Tensor and q.shape == (2,)
    h = np.histogram(t, bins=3)  # a tuple of arrays
    assert type(h) is tuple and all(type(a) is xp.Tensor for a in h)
    _same_tensor(h[0], xp.asarray(np.histogram(A, bins=3)[0]))
    assert np.shares_memory(t, t[0]) is True  # (a Python bool stays one)


def test_like_makes_the_tensor_on_the_like_device():
    t = _t()
    for r in (np.asarray([1.5, 2.5], like=t), np.array([1.5, 2.5], like=t), np.asarray(A[0], like=t)):
        assert type(r) is xp.Tensor and r.device == t.device
    assert np.empty(3, dtype=np.float32, like=t).shape == (3,)
    _same_tensor(np.zeros((2, 2), dtype=np.float32, like=t), xp.zeros((2, 2), dtype=xp.float32, device=DEVICE))
    _same_tensor(np.arange(4, like=t), xp.arange(4, device=DEVICE))


def test_numpy_calls_inside_a_capture():
    t = _t()
    o = xp.zeros((2, 3), dtype=xp.float32, device=DEVICE)
    with xp.capture(t.device) as g:
        np.multiply(np.sin(t), 2.0, out=o)
    t[...] = xp.asarray(A[::-1].copy(), device=DEVICE)
    g.replay()
    np.testing.assert_allclose(to_np(o), 2 * np.sin(A[::-1]), rtol=1e-6)
    with pytest.raises(xp.CaptureError if ON_CPU else TypeError, match="numpy.add.at"):
        with xp.capture(t.device):
            np.add.at(t, [0], 1.0)  # (numr has none: NumPy's own on the host view, a host read refused here)


def test_array_on_other_devices_points_to_the_explicit_copy():
    t = _t()
    if ON_CPU:  # the tensor's memory itself, without a copy
        np.asarray(t)[0, 0] = 9
        assert to_np(t)[0, 0] == 9
        return
    with pytest.raises(TypeError, match=r"implicit conversion .*to_device\('cpu'\)"):
        np.asarray(t)
