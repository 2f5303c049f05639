"""NumPy's creation functions (numr_array/_np_creation.py) and file, settings and dtype utilities
(numr_array/_np_io.py) against NumPy on the device under test."""

import numpy as np
import pytest

import numr_array as xp

from .helpers import DEVICE
from .np_helpers import host, on_device, same


def test_spaces():
    same(xp.logspace(0, 3, 7, device=DEVICE), host(np.logspace(0, 3, 7)))
    same(xp.logspace(1, 2, 4, base=2.0, endpoint=False, device=DEVICE),
         host(np.logspace(1, 2, 4, base=2.0, endpoint=False)))
    same(xp.geomspace(1, 1000, 4, device=DEVICE), host(np.geomspace(1, 1000, 4)))
    same(xp.geomspace(-2, -512, 5, device=DEVICE), host(np.geomspace(-2, -512, 5)))
    with pytest.raises(ValueError, match="geomspace: geometric sequence cannot include zero"):
        xp.geomspace(0, 1)


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tri_vander(k):
    same(xp.tri(3, 5, k, device=DEVICE), host(np.tri(3, 5, k)))
    x = np.array([1.0, 2.0, -3.0, 0.5])
    same(xp.vander(on_device(x)), np.vander(host(x)))
    same(xp.vander(on_device(x), 3, increasing=True), np.vander(host(x), 3, increasing=True))


@pytest.mark.parametrize("M", [0, 1, 2, 7, 12])
def test_windows(M):
    eps = float(np.finfo(host(np.zeros(1)).dtype).eps)  # the windows' terms are of size 1
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        same(getattr(xp, name)(M, device=DEVICE), host(getattr(np, name)(M)), atol=4 * eps)
    same(xp.kaiser(M, 8.6, device=DEVICE), host(np.kaiser(M, 8.6)), rtol=1e-6 if DEVICE != "cpu" else None)


def test_from_functions():
    def f(i, j):
        return i * 10 + j

    same(xp.fromfunction(f, (3, 4), device=DEVICE), host(np.fromfunction(f, (3, 4))))
    same(xp.fromiter(iter(range(5)), xp.int32, device=DEVICE), np.arange(5, dtype=np.int32))
    same(xp.frombuffer(np.arange(4, dtype=np.int16).tobytes(), xp.int16, device=DEVICE), np.arange(4, dtype=np.int16))
    same(xp.fromstring("1 2 3", xp.int32, sep=" ", device=DEVICE), np.array([1, 2, 3], dtype=np.int32))


def test_save_load(tmp_path):
    a, b = on_device(np.arange(6.0).reshape(2, 3)), on_device(np.arange(4))
    xp.save(tmp_path / "a.npy", a)
    same(xp.load(tmp_path / "a.npy", device=DEVICE), host(np.arange(6.0).reshape(2, 3)))
    xp.savez(tmp_path / "z.npz", a, b=b)
    xp.savez_compressed(tmp_path / "c.npz", b=b)
    with xp.load(tmp_path / "z.npz", device=DEVICE) as z:
        assert sorted(z.files) == ["arr_0", "b"]
        same(z["arr_0"], host(np.arange(6.0).reshape(2, 3))), same(z["b"], host(np.arange(4)))
        assert z["b"].device == b.device
    same(xp.load(tmp_path / "c.npz", device=DEVICE)["b"], host(np.arange(4)))
    xp.savetxt(tmp_path / "a.txt", a)
    dtype = host(np.zeros(1)).dtype  # float32 where the device has no float64
    same(xp.loadtxt(tmp_path / "a.txt", dtype=dtype, device=DEVICE), np.loadtxt(tmp_path / "a.txt", dtype=dtype))
    same(xp.genfromtxt(tmp_path / "a.txt", dtype=dtype, device=DEVICE), np.genfromtxt(tmp_path / "a.txt", dtype=dtype))
    host(np.arange(3, dtype=np.int32)).tofile(tmp_path / "raw.bin")
    same(xp.fromfile(tmp_path / "raw.bin", dtype=xp.int32, device=DEVICE), np.arange(3, dtype=np.int32))


def test_error_state_and_print_options():
    old = xp.geterr()
    with xp.errstate(divide="ignore", invalid="raise"):
        assert xp.geterr()["divide"] == "ignore" and xp.geterr()["invalid"] == "raise"
    assert xp.geterr() == old
    prev = xp.seterr(all="ignore")
    assert set(xp.geterr().values()) == {"ignore"}
    xp.seterr(**prev)
    with pytest.raises(ValueError, match="seterr: divide must be one of"):
        xp.seterr(divide="shout")
    assert xp.seterrcall(print) is None and xp.geterrcall() is print
    xp.seterrcall(None)
    with xp.printoptions(precision=2):
        assert xp.get_printoptions()["precision"] == 2
        assert "3.14" in repr(on_device(np.array([3.14159]))) and "3.141" not in repr(on_device(np.array([3.14159])))
    t = on_device(np.array([1.5, 2.0]))
    assert xp.array2string(t) == np.array2string(host(np.array([1.5, 2.0])))
    assert xp.array_str(t) == np.array_str(host(np.array([1.5, 2.0])))
    assert xp.array_repr(t) == repr(t)


def test_dtype_utilities():
    assert xp.promote_types(xp.int8, xp.uint8) == xp.int16
    assert xp.promote_types(xp.int64, xp.float32) == xp.float64
    assert xp.issubdtype(xp.float32, np.floating) and not xp.issubdtype(xp.int8, np.floating)
    assert xp.min_scalar_type(300) == xp.uint16
    assert xp.common_type(on_device(np.ones(2, dtype=np.float32))) == xp.float32
    assert xp.mintypecode("fd") == "d" and xp.typename("d") == "double precision"
    assert xp.base_repr(10, 3) == "101" and xp.binary_repr(5) == "101"
    assert xp.iterable([1]) and not xp.iterable(1)
    a = on_device(np.arange(10))
    assert xp.shares_memory(a[::2], a[2:5]) and not xp.shares_memory(a[::2], a[1::2])
    assert xp.may_share_memory(a[::2], a[1::2]) and not xp.may_share_memory(a, on_device(np.arange(10)))
    with pytest.raises(TypeError, match="shares_memory"):
        xp.shares_memory(a, np.arange(3))
