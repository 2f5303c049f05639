"""Uploads of a scalar's bytes (``asarray`` of a Python scalar, a scalar assigned into an array) on WebGPU:
encoded as a dispatch after the pending work, without submitting it first, and ordered with it; inside a
capture they stay queue writes, constants of the graph."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"


@pytest.fixture
def flushes(monkeypatch):
    """The number of submissions of the pending work."""
    client = xp.asarray(0.0, device=DEV)._dev.client
    calls = []
    real = client.flush
    monkeypatch.setattr(client, "flush", lambda: (calls.append(1), real())[1])
    return calls


@pytest.mark.parametrize("value, dtype", [(1.5, None), (2, None), (True, None), (-3, xp.int8), (7, xp.uint16),
                                          (1.5, xp.float32), (1 - 2j, None), (0.25 + 4j, xp.complex64)])
def test_a_scalar_is_uploaded_without_submitting_the_pending_work(flushes, value, dtype):
    a = xp.asarray(np.arange(4, dtype=np.float32), device=DEV)
    xp.add(a, a)  # pending work
    flushes.clear()
    s = xp.asarray(value, dtype=dtype, device=DEV)
    assert flushes == []
    expect = np.asarray(value, dtype=None if dtype is None else np.dtype(dtype))
    assert to_np(s).dtype == s._dtype.np and to_np(s) == expect.astype(s._dtype.np)


def test_uploads_are_ordered_with_the_work_around_them():
    """Scalars uploaded between launches, into buffers that launches before them read (recycled ones among
    them), hold their values when the work after them reads them."""
    acc = xp.asarray(np.zeros(8, np.float32), device=DEV)
    for k in range(40):
        s = xp.asarray(float(k), device=DEV)
        acc = acc + xp.astype(s, xp.float32)
        del s
    np.testing.assert_array_equal(to_np(acc), np.full(8, sum(range(40)), np.float32))


def test_a_scalar_assigned_into_an_array_keeps_its_neighbours():
    x = xp.asarray(np.arange(10, dtype=np.int8), device=DEV)
    x[3] = 100
    x[9] = -1
    x[4:6] = xp.asarray(np.array([7, 8], np.int8), device=DEV)
    assert to_np(x).tolist() == [0, 1, 2, 100, 7, 8, 6, 7, 8, -1]


def test_a_scalar_made_inside_a_capture_is_a_constant_of_the_graph():
    x = xp.asarray(np.array([1.0, 2.0], np.float32), device=DEV)
    with xp.capture(DEV) as g:
        y = x * xp.asarray(3.0, dtype=xp.float32, device=DEV)
    x[...] = xp.asarray(np.array([5.0, 6.0], np.float32), device=DEV)
    g.replay()
    assert to_np(y).tolist() == [15.0, 18.0]


@pytest.mark.parametrize("value, dtype", [(1.5, None), (2, None), (True, None), (1 - 2j, None), (3, xp.uint8),
                                          (0.5, xp.float32)])
def test_a_repeated_scalar_signature_skips_the_python_path(monkeypatch, value, dtype):
    from numr_array import _creation
    xp.asarray(value, dtype=dtype, device=DEV)  # the plan is made
    calls = []
    real = _creation._host_array
    monkeypatch.setattr(_creation, "_host_array", lambda *a: (calls.append(1), real(*a))[1])
    for v in (value, value * 2):
        s = xp.asarray(v, dtype=dtype, device=DEV)
        assert to_np(s) == np.asarray(v, dtype=None if dtype is None else np.dtype(dtype))
    assert calls == []


def test_a_planned_scalar_signature_raises_what_the_python_path_raises():
    xp.asarray(2, device=DEV)
    xp.asarray(3, dtype=xp.uint8, device=DEV)
    for _ in range(2):
        with pytest.raises(OverflowError, match="asarray: the Python int 1180591620717411303424 does not fit"):
            xp.asarray(2 ** 70, device=DEV)
        with pytest.raises(OverflowError, match="asarray: 300 does not fit in uint8"):
            xp.asarray(300, dtype=xp.uint8, device=DEV)
        with pytest.raises(OverflowError, match="asarray: Python ints beyond int64 need dtype=uint64"):
            xp.asarray(2 ** 63, device=DEV)
        with pytest.raises(ValueError, match="asarray: copy=False"):
            xp.asarray(2, copy=False, device=DEV)
        with pytest.raises(ValueError, match="asarray: copy must be"):
            xp.asarray(2, copy=1, device=DEV)
        with pytest.raises(TypeError, match="asarray: a Python float cannot become a int8 array"):
            xp.asarray(1.5, dtype=xp.int8, device=DEV)


def test_a_planned_scalar_in_the_devices_default_dtypes():
    """Python ints and floats become the device's default dtypes (int32 and float32 on an adapter without
    64-bit types): a planned signature narrows as the Python path does, and an int beyond the default
    integer dtype still raises."""
    info = xp.__array_namespace_info__().default_dtypes(device=xp.asarray(0, device=DEV).device)
    ints, floats = np.dtype(info["integral"]), np.dtype(info["real floating"])
    for _ in range(2):
        assert to_np(xp.asarray(-5, device=DEV)).dtype == ints and to_np(xp.asarray(-5, device=DEV)) == -5
        got = to_np(xp.asarray(0.1, device=DEV))
        assert got.dtype == floats and got == np.asarray(0.1).astype(floats)
        for big in (int(np.iinfo(ints).max) + 1, int(np.iinfo(ints).min) - 1):
            with pytest.raises(OverflowError, match="asarray"):
                xp.asarray(big, device=DEV)
