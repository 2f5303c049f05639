"""from_dlpack: zero-copy import of CPU data from NumPy and other DLPack producers (any layout), copies
when asked or needed, our own arrays, and the errors the standard names."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp

from .helpers import device_data
from .strategies import ALL, DEVICE, supported, to_np

CPU = xp._device.parse_device("cpu")


class Producer:
    """A foreign DLPack producer: another library's array over a NumPy array's memory, claiming to live
    on ``device_type`` (1: CPU, 2: CUDA, ...) and exporting host memory when asked for dl_device=(1, 0)."""

    def __init__(self, a, device_type=1):
        self.a = a
        self.device_type = device_type

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (self.device_type, 0)


@st.composite
def host_arrays(draw):
    """A NumPy array of any standard dtype: contiguous, strided, reversed, transposed, 0-D or empty."""
    dtype = draw(st.sampled_from(supported(ALL)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    a = draw(hnp.arrays(dtype, shape))
    layout = draw(st.sampled_from(["contiguous", "strided", "reversed", "transposed"]))
    if a.ndim == 0 or layout == "contiguous":
        return a
    if layout == "strided":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    if layout == "reversed":
        return a[::-1].copy()[::-1]
    return np.ascontiguousarray(a.T).T


@given(host_arrays(), st.sampled_from([None, True, False]), st.booleans())
def test_numpy_arrays(a, copy, wrapped):
    source = Producer(a) if wrapped else a
    t = xp.from_dlpack(source, copy=copy) if copy is not None else xp.from_dlpack(source)
    assert type(t) is xp.Tensor
    assert t.device == CPU and t.dtype == xp._dtypes.from_numpy(a.dtype) and t.shape == a.shape
    np.testing.assert_array_equal(to_np(t), a)
    if a.size:
        assert np.shares_memory(np.asarray(t), a) == (not copy)


def test_shared_memory_sees_writes_both_ways():
    a = np.arange(12.0).reshape(3, 4)[::-1, 1::2]
    t = xp.from_dlpack(a)
    assert t.strides == (-4, 2)
    a[0, 0] = 100.0
    assert float(t[0, 0]) == 100.0
    before = a.copy()
    xp.multiply(t, 2.0, out=t)
    np.testing.assert_array_equal(a, 2 * before)
    c = xp.from_dlpack(a, copy=True)
    a[0, 0] = -1.0
    assert float(c[0, 0]) == 200.0


def test_the_result_outlives_the_source():
    a = np.arange(5, dtype=np.int32)
    t = xp.from_dlpack(a[::2])
    del a
    np.testing.assert_array_equal(to_np(t), [0, 2, 4])


def test_our_own_arrays():
    x = xp.asarray(device_data(np.arange(6.0).reshape(2, 3)), device=DEVICE)
    view = xp.from_dlpack(x)
    assert view is not x and view.device == x.device and view.shape == x.shape
    xp.multiply(x, 2.0, out=x)
    np.testing.assert_array_equal(to_np(view), to_np(x))
    for kwargs in ({"copy": True}, {"copy": True, "device": x.device}):
        c = xp.from_dlpack(x, **kwargs)
        xp.multiply(x, 2.0, out=x)
        np.testing.assert_array_equal(to_np(c) * 2, to_np(x))
    assert xp.from_dlpack(x, device=x.device, copy=False).shape == x.shape


def test_device_argument():
    a = np.arange(4.0)
    t = xp.from_dlpack(a, device="cpu", copy=False)
    assert t.device == CPU and np.shares_memory(np.asarray(t), a)
    t = xp.from_dlpack(a, device=CPU, copy=True)
    assert not np.shares_memory(np.asarray(t), a)


def test_device_memory_comes_to_the_host_by_a_copy():
    a = np.arange(4.0)
    gpu = Producer(a, device_type=2)  # data on a (claimed) CUDA device, exported to the host on request
    t = xp.from_dlpack(gpu, device="cpu")
    np.testing.assert_array_equal(to_np(t), a)
    assert not np.shares_memory(np.asarray(t), a)
    with pytest.raises(ValueError, match="copy=False") as info:
        xp.from_dlpack(gpu, device="cpu", copy=False)
    assert isinstance(info.value, BufferError)  # the standard names both


def test_errors():
    for bad in ([1, 2, 3], 3):  # TypeError (was AttributeError) naming the function and the type
        with pytest.raises(TypeError, match=f"from_dlpack: {type(bad).__name__}"):
            xp.from_dlpack(bad)
    with pytest.raises(ValueError, match="copy"):
        xp.from_dlpack(np.arange(3), copy="yes")
    with pytest.raises(BufferError, match="device type 4"):
        xp.from_dlpack(Producer(np.arange(3), device_type=4))
    with pytest.raises(BufferError, match="float16"):
        xp.from_dlpack(np.arange(3, dtype=np.float16))
    with pytest.raises(ValueError, match="from_dlpack"):
        xp.from_dlpack(np.arange(3), device="tpu")
    if "cuda" not in {d.kind for d in xp.__array_namespace_info__().devices()}:
        with pytest.raises(BufferError, match="not available"):
            xp.from_dlpack(Producer(np.arange(3), device_type=2))


def test_read_only_source():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = xp.from_dlpack(a)
    np.testing.assert_array_equal(to_np(t), a)
    np.testing.assert_array_equal(to_np(xp.add(t, 1.0)), a + 1)


def test_dlpack_stream_values_the_standard_refuses():
    """The standard: only stream=None on the CPU and devices without streams; on CUDA an int >= -1, but not
    0 (ambiguous). A refused value is a ValueError (was NumPy's RuntimeError), a non-int a TypeError."""
    x = xp.asarray([1.0, 2.0], device=DEVICE)
    host = xp.asarray([1.0, 2.0], device="cpu")
    for stream in (0, 1, -1):
        with pytest.raises(ValueError, match=f"__dlpack__: only stream=None .* stream={stream}"):
            host.__dlpack__(stream=stream)
        # a host copy from any device: the consumer reads on the CPU, so only None there too
        with pytest.raises(ValueError, match="__dlpack__: only stream=None"):
            x.__dlpack__(stream=stream, dl_device=(1, 0))
    for stream in ("0", 1.0, True):
        with pytest.raises(TypeError, match="__dlpack__: stream must be an int"):
            x.__dlpack__(stream=stream)
    np.testing.assert_array_equal(np.from_dlpack(host), [1.0, 2.0])
    if DEVICE.startswith("cuda"):
        for stream in (0, -2):
            with pytest.raises(ValueError, match=f"stream={stream} is not a valid CUDA stream"):
                x.__dlpack__(stream=stream)
        x.__dlpack__(stream=1)  # the legacy default stream
