"""DLPack exchange on the CPU with NumPy and PyTorch, both ways, without copies where the caller allows:
the consumer sees the producer's memory, so a write on either side shows on the other. (CUDA exchange with
CuPy and PyTorch is in tests/cuda/test_cuda_interop.py.) Arrays are made on the CPU whatever the default
device is."""

import numpy as np
import pytest

import numr_array as xp

CPU = "cpu"
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
          "complex64", "complex128"]


def _np_data(dtype: str, shape=(3, 4)) -> np.ndarray:
    return (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_consumes_numr_without_copy(dtype):
    t = xp.asarray(_np_data(dtype), device=CPU)
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 4)
    np.testing.assert_array_equal(a, _np_data(dtype))
    t[1, 2] = True if dtype == "bool" else 2
    assert a[1, 2] == (True if dtype == "bool" else 2)  # the same memory


@pytest.mark.parametrize("dtype", DTYPES)
def test_numr_consumes_numpy_without_copy(dtype):
    a = _np_data(dtype)
    t = xp.from_dlpack(a, device=CPU)
    assert t.dtype == getattr(xp, dtype) and t.shape == (3, 4) and t.device == "cpu"
    a[0, 0] = 1
    assert np.from_dlpack(t)[0, 0] == 1  # t reads a's memory


@pytest.mark.parametrize("view", ["transposed", "stepped", "sub-block", "offset", "zero-d", "empty"])
def test_views_keep_their_layout(view):
    base = np.arange(24.0).reshape(4, 6)
    t = xp.asarray(base, device=CPU)
    pick = {
        "transposed": lambda z: z.T if isinstance(z, np.ndarray) else xp.permute_dims(z, (1, 0)),
        "stepped": lambda z: z[::2, 1::3],
        "sub-block": lambda z: z[1:, 2:4],
        "offset": lambda z: z[2],
        "zero-d": lambda z: z[1, 1, ...],
        "empty": lambda z: z[:, 6:],
    }[view]
    a = np.from_dlpack(pick(t))
    np.testing.assert_array_equal(a, pick(base))
    if a.size:
        assert np.shares_memory(a, np.from_dlpack(t))
    back = xp.from_dlpack(pick(base), device=CPU)
    np.testing.assert_array_equal(np.from_dlpack(back), pick(base))
    if back.size:
        assert np.shares_memory(np.from_dlpack(back), base)


def test_copy_and_device_arguments():
    a = np.arange(5.0)
    copied = xp.from_dlpack(a, copy=True, device=CPU)
    a[0] = 100.0
    assert float(copied[0]) == 0.0
    shared = xp.from_dlpack(a, copy=False, device=CPU)
    a[1] = -1.0
    assert float(shared[1]) == -1.0
    t = xp.asarray([1.0, 2.0], device=CPU)
    c = np.from_dlpack(t, copy=True)
    assert not np.shares_memory(c, np.from_dlpack(t))
    assert t.__dlpack_device__() == (1, 0)


def test_read_only_numpy_stays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    t = xp.from_dlpack(a, device=CPU)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    with pytest.raises(ValueError):
        t[0] = 5.0
    assert a[0] == 0.0


def test_unsupported_dtype_is_refused():
    with pytest.raises((BufferError, TypeError)):
        xp.from_dlpack(np.ones(3, np.float16), device=CPU)


def test_round_trip_to_another_device(device):
    """NumPy data onto the device under test (a copy when that is not the CPU), and back."""
    a = np.arange(6.0).reshape(2, 3)
    t = xp.from_dlpack(a, device=device)
    assert t.device == device
    np.testing.assert_array_equal(np.asarray(t.to_device("cpu")), a)


# --- PyTorch (CPU): installed in this project's dev environment, optional elsewhere ----------------------

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed (optional: pip install torch)")


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "float32", "float64",
                                   "complex64", "complex128"])
def test_torch_both_ways_without_copy(torch, dtype):
    t = xp.asarray(_np_data(dtype), device=CPU)
    p = torch.from_dlpack(t)
    assert str(p.dtype) == f"torch.{'bool' if dtype == 'bool' else dtype}"
    np.testing.assert_array_equal(p.numpy(), _np_data(dtype))
    assert p.data_ptr() == np.from_dlpack(t).ctypes.data
    q = torch.from_numpy(_np_data(dtype))
    u = xp.from_dlpack(q, device=CPU)
    assert u.dtype == getattr(xp, dtype)
    assert np.from_dlpack(u).ctypes.data == q.data_ptr()


def test_torch_strided_and_writes(torch):
    t = xp.asarray(np.arange(12.0).reshape(3, 4), device=CPU)[:, ::2]
    p = torch.from_dlpack(t)
    assert p.stride() == (4, 2)
    p[0, 0] = 99.0
    assert float(t[0, 0]) == 99.0
    q = torch.arange(12.0).reshape(3, 4).T
    u = xp.from_dlpack(q, device=CPU)
    assert u.shape == (4, 3)
    np.testing.assert_array_equal(np.from_dlpack(u), q.numpy())
    q[0, 0] = -5.0
    assert float(u[0, 0]) == -5.0
