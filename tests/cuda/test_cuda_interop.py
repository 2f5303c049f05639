"""Zero-copy exchange of CUDA memory with CuPy (and PyTorch where installed): DLPack both ways,
``__cuda_array_interface__``, and adopting another library's array as a tensor."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)

import cupy  # noqa: E402

DEV = "cuda:0"
dev = xp._device.parse_device(DEV)
client = dev.client


def test_dlpack_export_to_cupy_shares_memory():
    t = xp.asarray(np.arange(6.0).reshape(2, 3), device=DEV)
    assert t.__dlpack_device__() == (2, 0)
    c = cupy.from_dlpack(t)
    assert c.data.ptr == t._buf.handle.ptr
    c[0, 0] = 42.0
    assert to_np(t)[0, 0] == 42.0


def test_dlpack_export_of_a_strided_view_and_copy():
    t = xp.asarray(np.arange(12.0).reshape(3, 4), device=DEV)[::-1, 1::2]
    c = cupy.from_dlpack(t)
    assert np.array_equal(cupy.asnumpy(c), np.arange(12.0).reshape(3, 4)[::-1, 1::2])
    copied = cupy.from_dlpack(client.dlpack(t, copy=True))
    copied[...] = 0
    assert to_np(t)[0, 0] == 9.0


def test_dlpack_orders_the_consumer_stream_after_our_work():
    x = xp.asarray(np.ones((2048, 2048), np.float32), device=DEV)
    y = x
    for _ in range(10):
        y = y @ x / 2048.0
    other = cupy.cuda.Stream(non_blocking=True)
    with other:
        c = cupy.from_dlpack(y)  # other must wait for the products on numr's stream
        s = float(c.sum())
    assert s == 2048.0 * 2048.0


def test_cuda_array_interface_describes_the_memory_and_stream():
    t = xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4), device=DEV)[:, 1:3]
    cai = client.cuda_array_interface(t)
    assert cai["shape"] == (3, 2) and cai["typestr"] == "<i4" and cai["version"] >= 2
    assert cai["data"][0] == t._buf.handle.ptr + 4
    assert cai["strides"] == (16, 4)
    assert cai.get("stream") in (None, client.stream.ptr)

    class Holder:
        __cuda_array_interface__ = cai

    c = cupy.asarray(Holder())
    assert np.array_equal(cupy.asnumpy(c), np.arange(12).reshape(3, 4)[:, 1:3])


def test_tensor_exposes_cuda_array_interface():
    t = xp.asarray(np.arange(4.0), device=DEV)
    cai = t.__cuda_array_interface__
    assert cai["data"][0] == t._buf.handle.ptr and cai["shape"] == (4,)


@pytest.mark.parametrize("layout", ["contiguous", "reversed", "strided-2d"])
def test_adopt_wraps_a_cupy_array_without_copying(layout):
    base = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)
    c = {"contiguous": base, "reversed": base[::-1, ::-1], "strided-2d": base[1:, ::3]}[layout]
    t = client.adopt(c)
    assert t.device == dev and t.dtype == xp.float32 and t.shape == c.shape
    assert np.array_equal(to_np(t), cupy.asnumpy(c))
    with client.stream:  # the write on numr's stream, ordered before numr's read whatever stream is current
        c[...] = -1
    assert np.array_equal(to_np(t), np.full(c.shape, -1.0, np.float32))
    r = xp.sum(t * 2.0)  # usable as any tensor
    assert float(r) == -2.0 * c.size


def test_adopt_refuses_host_memory():
    with pytest.raises(ValueError):
        client.adopt(np.arange(3.0))


def test_from_dlpack_of_cupy_is_zero_copy():
    c = cupy.arange(5, dtype=cupy.int64)
    t = xp.from_dlpack(c)
    assert t.device == dev
    c[0] = 99
    assert to_np(t)[0] == 99


def test_torch_exchange_without_copies():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    t = xp.asarray(np.arange(6.0), device=DEV)
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t._buf.handle.ptr
    tt[1] = 7.0
    assert to_np(t)[1] == 7.0
    back = client.adopt(torch.arange(3, dtype=torch.float32, device="cuda"))
    assert np.array_equal(to_np(back), [0, 1, 2])


def test_cupy_code_on_this_thread_is_ordered_with_numr():
    # numr's compute stream is current for CuPy on the thread that made the client (and again after any
    # `with stream:` block of CuPy's, at numr's next call), so interleaved CuPy work needs no synchronisation
    t = xp.asarray(np.zeros(1 << 20, np.float32), device=DEV)
    other = cupy.cuda.Stream(non_blocking=True)
    with other:
        pass
    y = t + 1.0
    assert cupy.cuda.get_current_stream() is client.stream
    c = cupy.from_dlpack(y)
    assert float(c.sum()) == float(1 << 20)
