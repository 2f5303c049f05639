"""The compiled CPU call (numr_array/_speedups.c): built, taken for a cached signature, and indistinguishable
from the Python path it hands everything else to (results, errors, accounting, NumPy's error state)."""

from __future__ import annotations

import os
import sys
import threading
import warnings

import numpy as np
import pytest

import numr_array as xp
from numr_array import _elementwise, _manipulation, runtime

pytestmark = [
    pytest.mark.skipif(os.environ.get("NUMR_SPEEDUPS") == "0", reason="NUMR_SPEEDUPS=0: the Python path"),
    # scripts/test.sh builds it (installing a compiler where it can) and, in CI, fails when it cannot
    pytest.mark.skipif(runtime.speedups is None and os.environ.get("CI", "") in ("", "0", "false"),
                       reason="numr_array._speedups is not compiled here (no C compiler or Python headers)"),
]


@pytest.fixture(autouse=True)
def unchecked_launches(monkeypatch):
    """Plans made as outside the suite: tests/conftest.py checks every launch against the contract, and
    checked launches never take the compiled call (no plan then has a native part)."""
    import numr_array.backends.cpu as cpu
    for module in (cpu, _elementwise, _manipulation):
        monkeypatch.setattr(module, "CHECK_LAUNCHES", False)
    _elementwise.forget_plans()
    _manipulation._CONCAT_PLANS.clear()
    yield
    _elementwise.forget_plans()
    _manipulation._CONCAT_PLANS.clear()


def _python_calls(fn) -> list[str]:
    """The names of the Python functions ``fn()`` calls (its own frame aside)."""
    names: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names[1:]


def _f32(*values):
    return xp.asarray(np.array(values, np.float32), device="cpu")


def test_the_extension_is_built():
    # pip install . and pip install -e . compile it; scripts/test.sh makes sure of it in CI
    assert runtime.speedups is not None
    assert _elementwise._c_binary is runtime.speedups.binary
    assert issubclass(runtime.Buffer, runtime.speedups.BufferBase)


def test_a_repeated_call_runs_no_python_path():
    x, y = _f32(1, 2, 3), _f32(4, 5, 6)
    for call in (lambda: xp.add(x, y), lambda: x * 2.0, lambda: 2.0 * x, lambda: xp.sqrt(x), lambda: x[1:],
                 lambda: xp.concat([x, y])):
        call()  # the first call of a signature makes its plan (Python)
        assert not {"_binary_py", "_unary_py", "_concat", "getitem"} & set(_python_calls(call))


def test_results_match_the_python_path_bit_for_bit():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    x = xp.asarray(a)
    t = xp.asarray(a.T.copy()).T  # a transposed (F-ordered) operand: NumPy would allocate F order
    for _ in range(2):  # the second round runs in C
        for got, want in ((x + x, a + a), (x * 0.1, a * np.float32(0.1)), (0.1 - x, np.float32(0.1) - a),
                          (x + t, a + a), (x[:, :1] + x, a[:, :1] + a), (xp.exp(x), np.exp(a)),
                          (x < 0.5, a < np.float32(0.5)), (x ** 2, np.square(a))):
            g = np.asarray(got)
            assert g.dtype == want.dtype and g.flags.c_contiguous and got.strides == (5, 1)[:got.ndim]
            np.testing.assert_array_equal(g, want)


def test_zero_d_results_are_arrays():
    s = xp.asarray(np.float64(2.0))
    for _ in range(2):
        r = s + s
        assert r.shape == () and float(r) == 4.0


def test_errors_of_a_cached_signature_are_the_python_paths():
    x8 = xp.asarray(np.array([1, 2], np.int8))
    x8 + 1
    with pytest.raises(OverflowError, match="add: the Python int 1000 does not fit in int8"):
        x8 + 1000
    x, y = _f32(1, 2), _f32(3, 4)
    wrong = xp.zeros(2, dtype=xp.int32)
    xp.add(x, y)
    with pytest.raises(TypeError, match="out has dtype int32"):
        xp.add(x, y, out=wrong)
    assert np.asarray(wrong).tolist() == [0, 0]
    with pytest.raises(TypeError, match="x1, x2 must be a numr_array array"):
        xp.add(1, 2)


def test_out_is_written_directly_only_where_accepted():
    x, y = _f32(1, 2, 3, 4), _f32(10, 20, 30, 40)
    o = xp.zeros(4, dtype=xp.float32)
    for _ in range(2):
        assert xp.add(x, y, out=o) is o
    assert np.asarray(o).tolist() == [11, 22, 33, 44]
    plan_outs = {k for p in _elementwise._plans("add").values() if p[-1] is not None for k in p[-1][-2]}
    assert (o._dtype, o._shape, o._strides, o._dev) in plan_outs
    z = xp.zeros(8, dtype=xp.float32)
    r = z[::-2]  # a strided out: never accepted, the Python path writes it
    for _ in range(2):
        xp.add(x, y, out=r)
    assert (r._dtype, r._shape, r._strides, r._dev) not in plan_outs
    assert np.asarray(z).tolist() == [0, 44, 0, 33, 0, 22, 0, 11]


def test_accounting_of_c_results():
    base = xp.memory_stats("cpu")
    x = _f32(*range(100))
    y = x + x
    y = y + x  # the first y goes back
    s = xp.memory_stats("cpu")
    assert s["bytes_in_use"] == base["bytes_in_use"] + 800 and s["allocations"] == base["allocations"] + 2
    del x, y
    assert xp.memory_stats("cpu")["bytes_in_use"] == base["bytes_in_use"]


def test_numpy_error_state_is_numr_s_alone():
    x = _f32(-1, 0, 1)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            xp.log(x), x / 0.0
        with pytest.raises(RuntimeWarning):
            np.log(np.array([-1.0]))  # the caller's own NumPy state is untouched
    assert np.geterr() == before


def test_threads_each_get_their_quiet_context():
    x = _f32(-1, 0, 1)
    errors = []

    def work():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                for _ in range(200):
                    xp.log(x) / 0.0
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_slices_match_getitem():
    from numr_array._indexing import basic_view, parse_key
    x = xp.asarray(np.arange(24.0).reshape(4, 6))
    for k in (slice(1, 3), slice(None, None, -1), slice(0, 0), slice(5, 1, -2), slice(-100, 100), slice(2, None, 3)):
        got = x[k]
        want = basic_view(x, parse_key(x, k, "__getitem__")[0])
        assert (got.shape, got.strides, got._offset) == (want.shape, want.strides, want._offset)
        np.testing.assert_array_equal(np.asarray(got), np.arange(24.0).reshape(4, 6)[k])
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="slice bounds must be ints"):
        x[1.5:]


def test_concat_plans():
    a, b = _f32(1, 2), _f32(3)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(xp.concat([a, b, a[:0]])), [1, 2, 3])
    i = xp.asarray(np.array([7], np.float64))
    for _ in range(2):  # mixed dtypes: no plan, the Python path promotes
        r = xp.concat([a, i])
        assert r.dtype == xp.float64 and np.asarray(r).tolist() == [1, 2, 7]
    m = xp.asarray(np.arange(6.0).reshape(2, 3))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(xp.concat([m, m[:, :1]], axis=-1)),
                                      np.concatenate([np.arange(6.0).reshape(2, 3)] * 1 + [[[0.0], [3.0]]], axis=1))
    with pytest.raises(TypeError, match="axis must be an int"):
        xp.concat([m, m], axis=True)  # (True == 1 as a key: C must not take it for axis 1)
    assert any(k[0] == -1 for k in _manipulation._CONCAT_PLANS)


def test_sort_keeps_signed_zeros_and_nans_in_order():
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0, 0.0, -np.nan], np.float64)
    got = np.asarray(xp.sort(xp.asarray(a)))
    want = np.sort(a, kind="stable")
    assert np.array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)
    b = np.random.default_rng(1).standard_normal((1000, 3)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(xp.sort(xp.asarray(b), axis=0)), np.sort(b, axis=0, kind="stable"))


def test_a_buffer_can_be_weakly_referenced():
    import weakref
    x = _f32(1)
    y = x + x
    r = weakref.ref(y._buf)
    del y
    assert r() is None


def test_out_goes_by_keyword():
    # NumPy deprecates a third positional argument of maximum and minimum (their out)
    x = xp.asarray(np.arange(6.0).reshape(2, 3))
    o = xp.zeros((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            xp.maximum(x, 2.0, out=o)
            r = xp.minimum(x, x[:, ::-1])  # (a transposed-order operand: the result by numpy.empty and out=)
            s = xp.maximum(xp.asarray(1.0), xp.asarray(2.0))  # 0-D: numpy.empty and out= too
    assert np.asarray(o).tolist() == [[2, 2, 2], [3, 4, 5]] and float(s) == 2.0
    np.testing.assert_array_equal(np.asarray(r), np.minimum(np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3)[:, ::-1]))
