"""NumPy's ndarray methods and properties on Tensor (numr_array/_tensor_methods.py), with NumPy's
signatures, on the device under test: each against NumPy's method on the same data; __format__, item,
tolist; the messages that point a NumPy user to the numr way."""

import numpy as np
import pytest

import numr_array as xp

from .helpers import device_data
from .strategies import DEVICE, to_np

A = np.array([[3.5, -1.25, 2.0], [0.5, 6.0, -4.0]], np.float32)
I = np.array([[3, 1, 2], [6, 5, 4]], np.int32)
ON_CPU = DEVICE == "cpu"


def _t(a=A) -> xp.Tensor:
    return xp.asarray(a, device=DEVICE)


def _same(got, want, exact=True) -> None:
    """``got`` is a tensor on the device under test holding NumPy's ``want`` (in the dtype the device holds
    it in: int64 indices as int32 on an adapter without shader-int64)."""
    assert type(got) is xp.Tensor and got.device == xp.asarray(0, device=DEVICE).device
    want = device_data(np.asarray(want))
    g = to_np(got)
    assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
    if exact:
        np.testing.assert_array_equal(g, want)
    else:
        np.testing.assert_allclose(g, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda a: a.sum(), lambda a: a.sum(0), lambda a: a.sum(axis=1, keepdims=True), lambda a: a.prod(axis=0),
    lambda a: a.min(), lambda a: a.max(1), lambda a: a.max(axis=0, keepdims=True),
    lambda a: a.argmin(), lambda a: a.argmax(axis=1), lambda a: a.argmax(axis=0, keepdims=True),
    lambda a: (a > 0).all(), lambda a: (a > 0).any(axis=1), lambda a: (a > 0).all(0, keepdims=True),
    lambda a: a.cumsum(), lambda a: a.cumsum(axis=1), lambda a: a.cumprod(axis=0),
    lambda a: a.reshape(3, 2), lambda a: a.reshape((3, 2)), lambda a: a.reshape(-1), lambda a: a.reshape([6, 1]),
    lambda a: a.reshape(3, 2, order="C"), lambda a: a.astype(np.int32), lambda a: a.astype("float32", copy=False),
    lambda a: a.copy(), lambda a: a.ravel(), lambda a: a.flatten(), lambda a: a.transpose(),
    lambda a: a.transpose(1, 0), lambda a: a.transpose((1, 0)), lambda a: a.swapaxes(0, 1),
    lambda a: a[None].squeeze(), lambda a: a[None].squeeze(0), lambda a: a.clip(-1, 2), lambda a: a.clip(max=1),
    lambda a: a.round(), lambda a: a.round(1), lambda a: a.argsort(), lambda a: a.argsort(axis=0),
    lambda a: a.dot(a.T), lambda a: a[0].dot(a[1]), lambda a: a.conj(), lambda a: a.conjugate(),
    lambda a: a.real, lambda a: a.imag, lambda a: a.repeat(2), lambda a: a.repeat(2, axis=0),
    lambda a: a.take([2, 0], axis=1), lambda a: a.take([[0, 5]]), lambda a: a.take(1),
    lambda a: a.diagonal(), lambda a: a.diagonal(1), lambda a: a.T.diagonal(-1),
    lambda a: a.trace(), lambda a: a.trace(1), lambda a: a.T,
], ids=range(55))
def test_methods_match_numpys(call):
    _same(call(_t()), call(A))


@pytest.mark.parametrize("call", [
    lambda a: a.mean(), lambda a: a.mean(axis=0), lambda a: a.mean(1, keepdims=True), lambda a: a.std(),
    lambda a: a.std(axis=1, ddof=1), lambda a: a.var(0), lambda a: a.var(ddof=1, keepdims=True),
], ids=range(7))
def test_statistics_match_numpys(call):
    _same(call(_t()), call(A), exact=False)


def test_integer_methods():
    t = _t(I)
    _same(t.max(axis=0), I.max(axis=0))
    _same(t.argsort(axis=1), I.argsort(axis=1))
    s = xp.sort(t[0])
    _same(s.searchsorted(2), np.sort(I[0]).searchsorted(2))
    _same(s.searchsorted([2, 9], side="right"), np.sort(I[0]).searchsorted([2, 9], side="right"))
    _same(t.nonzero()[1], I.nonzero()[1])
    assert t.nbytes == I.nbytes and t.itemsize == I.itemsize and t.size == I.size


def test_real_and_imag_of_real_and_bool_tensors():
    """As in NumPy: a real or bool tensor's real part is itself (NumPy's is a view), its imaginary part
    zeros of its dtype; xarray reads both of every array it wraps, bool ones (any, isnull) included."""
    for a in (A, I, A > 1):
        t = _t(a)
        assert t.real is t
        _same(t.imag, a.imag)
    c = _t(np.array([1 + 2j, -3j], np.complex64))
    _same(c.real, np.array([1, 0], np.float32))
    _same(c.imag, np.array([2, -3], np.float32))


def test_in_place_sort_and_fill():
    t = _t()
    assert t.sort() is None
    _same(t, np.sort(A))
    t.sort(axis=0, kind="stable")
    _same(t, np.sort(np.sort(A), axis=0))
    t.fill(2.5)
    _same(t, np.full_like(A, 2.5))


def test_out_arguments():
    t = _t()
    o = xp.zeros(3, dtype=xp.float32, device=DEVICE)
    assert t.sum(axis=0, out=o) is o
    _same(o, A.sum(axis=0))
    c = xp.zeros((2, 3), dtype=xp.float32, device=DEVICE)
    assert t.cumsum(axis=1, out=c) is c
    _same(c, A.cumsum(axis=1))
    with pytest.raises(ValueError, match="cumsum"):
        t.cumsum(axis=1, out=o)


def test_item_tolist_tobytes_and_format():
    t = _t()
    assert t[0, 0].item() == 3.5 and type(t[0, 0].item()) is float
    assert t.item(4) == A.item(4) and t.item(-1) == A.item(-1) and t.item((1, 2)) == A.item((1, 2))
    assert t.item(1, 0) == A.item(1, 0) and xp.ones((1, 1), device=DEVICE).item() == 1.0
    assert t.tolist() == A.tolist() and _t(I).tolist() == I.tolist() and type(_t(I).tolist()[0][0]) is int
    assert t.tobytes() == A.tobytes() and t.T.tobytes() == A.T.tobytes()
    assert f"{t[0, 0]:.3f}" == "3.500" and f"{_t(I)[1, 2]:>4d}" == "   4" and format(t[0, 1], "e") == format(-1.25, "e")
    assert f"{t}" == str(t)
    assert [to_np(row).tolist() for row in t] == A.tolist()
    with pytest.raises(ValueError, match="item"):
        t.item()
    with pytest.raises(IndexError, match="item"):
        t.item(6)
    with pytest.raises(TypeError, match="__format__"):
        f"{t:.3f}"


def test_numpy_method_gives_the_memory_on_cpu_and_a_hint_elsewhere():
    t = _t()
    if ON_CPU:
        a = t.numpy()
        assert type(a) is np.ndarray
        a[0, 0] = 9
        assert t[0, 0].item() == 9
    else:
        with pytest.raises(TypeError, match=r"Tensor.numpy: .*to_device\('cpu'\)\.numpy\(\)"):
            t.numpy()


def test_arguments_numr_lacks_are_type_errors():
    t = _t()
    for call, arg in [(lambda: t.reshape(3, 2, order="F"), "order"), (lambda: t.astype(xp.int32, casting="safe"), "casting"),
                      (lambda: t.sort(order="x"), "order"), (lambda: t.take([0], mode="wrap"), "mode"),
                      (lambda: t.copy(order="F"), "order")]:
        with pytest.raises(TypeError, match=f"does not support {arg}="):
            call()


def test_attribute_errors_point_to_the_numr_way():
    t = _t()
    for name, hint in [("get", r"to_device\('cpu'\)"), ("flat", "reshape"), ("view", "view"), ("cuda", "to_device")]:
        with pytest.raises(AttributeError, match=hint):
            getattr(t, name)
    with pytest.raises(AttributeError, match="no attribute 'nosuchthing'$"):
        _ = t.nosuchthing
    assert not hasattr(t, "nosuchthing") and not hasattr(t, "get") and not hasattr(t, "flat")
    if not DEVICE.startswith("cuda"):  # the standard attributes' own messages stay
        with pytest.raises(AttributeError, match="not in CUDA memory"):
            _ = t.__cuda_array_interface__


def test_the_standard_attributes_stay():
    t = _t()
    assert t.__array_namespace__() is xp and t.mT.shape == (3, 2) and t.T.shape == (3, 2)
    with pytest.raises(ValueError, match="T"):
        _ = t[None].T  # the standard's T is for matrices
