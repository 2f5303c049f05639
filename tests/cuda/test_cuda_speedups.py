"""CUDA's element-wise calls in C (numr_array/_speedups.c, ``device_call``): a cached plan whose operands the
direct kernels take is launched from C through cuLaunchKernel, with no Python frame; its results, ``out=``,
scalars, accounting and errors are the Python path's, and everything the C launch cannot take (another
stream current, the client's lock held by another thread, a capture, a scalar NumPy converts differently)
goes to the Python path."""

import threading
import time

import numpy as np
import pytest

import numr_array as xp
from numr_array import _elementwise, _manipulation, runtime
from numr_array.backends import get_runtime

from ..helpers import python_calls
from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)
if runtime.speedups is None:
    pytest.skip("numr_array._speedups is not compiled", allow_module_level=True)

import cupy  # noqa: E402

from numr_array.backends.cuda import _client as cuda_client  # noqa: E402

DEV = "cuda:0"
client = xp._device.parse_device(DEV).client


@pytest.fixture(autouse=True)
def unchecked_launches(monkeypatch):
    """Plans made as outside the suite (tests/conftest.py checks every launch, and checked launches never take
    the compiled call)."""
    for module in (cuda_client, _elementwise, _manipulation):
        monkeypatch.setattr(module, "CHECK_LAUNCHES", False)
    _elementwise.forget_plans()
    _manipulation._CONCAT_PLANS.clear()
    yield
    _elementwise.forget_plans()
    _manipulation._CONCAT_PLANS.clear()


def put(a) -> xp.Tensor:
    return xp.asarray(np.asarray(a), device=DEV)


def data(dtype, n=1000, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-1000, 1000, n).astype(dtype)
    return (rng.standard_normal(n) * 10).astype(dtype)


def test_the_driver_entry_point_is_found():
    assert cuda_client._launch_kernel_address()
    d = np.dtype(np.float32)
    assert client.direct_launch("add", [d, d], d, (1000,), (((1000,), (1,)), ((1000,), (1,)))) is not None


CALLS = {  # (m: the namespace, numr_array or NumPy)
    "add": lambda m, x, y, z: m.add(x, y),
    "operator -": lambda m, x, y, z: x - y,
    "scalar second": lambda m, x, y, z: x * 2.5,
    "scalar first": lambda m, x, y, z: 2.5 / x,
    "int scalar": lambda m, x, y, z: x + 3,
    "compare": lambda m, x, y, z: x < y,
    "0-D second": lambda m, x, y, z: x * z,
    "0-D first": lambda m, x, y, z: z - x,
    "unary": lambda m, x, y, z: m.exp(x),
    "negative": lambda m, x, y, z: -x,
    "power": lambda m, x, y, z: x ** 2,
    "broadcast rows": lambda m, x, y, z: m.reshape(x, (40, 25)) - m.reshape(y, (40, 25))[:1, :],
    "broadcast columns": lambda m, x, y, z: m.reshape(x, (40, 25)) / m.reshape(y, (40, 25))[:, 3:4],
    "transposed": lambda m, x, y, z: m.reshape(x, (40, 25)).T * m.reshape(y, (25, 40)),
    "outer": lambda m, x, y, z: x[:40, None] < y[None, :25],
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_repeated_call_launches_from_c_with_the_python_paths_result(name, dtype):
    call = CALLS[name]
    a, b = data(dtype), data(dtype, seed=1)
    x, y, z = put(a), put(b), put(np.asarray(1.5, dtype))
    first = to_np(call(xp, x, y, z))  # the Python path: makes the plan
    calls = python_calls(lambda: call(xp, x, y, z))
    assert not {"_binary_py", "_unary_py", "try_binary", "try_unary"} & set(calls), calls
    again = call(xp, x, y, z)
    assert again.dtype == first.dtype and again.shape == first.shape
    np.testing.assert_array_equal(to_np(again), first)  # the same kernel, so the same bits
    expected = call(np, a, b, np.asarray(1.5, dtype))
    np.testing.assert_allclose(to_np(again), expected, rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.uint8, np.bool_])
def test_every_direct_dtype_in_c(dtype):
    a = data(dtype) if dtype is not np.bool_ else data(np.int8) > 0
    b = data(dtype, seed=1) if dtype is not np.bool_ else data(np.int8, seed=1) > 0
    x, y = put(a), put(b)
    op = xp.logical_xor if dtype is np.bool_ else xp.multiply
    op(x, y)
    calls = python_calls(lambda: op(x, y))
    assert "_binary_py" not in calls
    np.testing.assert_array_equal(to_np(op(x, y)), np.logical_xor(a, b) if dtype is np.bool_ else a * b)


def test_float32_scalars_round_as_numpys():
    a = data(np.float32)
    x = put(a)
    x + 0.1
    for v in (0.1, 1e-45, 3.4e38, -2.0**-149, 16777217, -(2**53)):
        np.testing.assert_array_equal(to_np(x + v), a + np.float32(v))


def test_int_scalars_out_of_range_raise_as_without_c():
    x = put(data(np.int32))
    x + 1
    with pytest.raises(OverflowError):
        x + 2**40
    y = put(data(np.int64))
    y + 1
    with pytest.raises(OverflowError):
        y + 2**70
    np.testing.assert_array_equal(to_np(y + -(2**62)), data(np.int64) + np.int64(-(2**62)))


def test_out_and_offset_views():
    a, b = data(np.float32), data(np.float32, seed=1)
    x, y = put(a), put(b)
    o = put(np.zeros(1000, np.float32))
    xp.add(x, y, out=o)
    assert "_binary_py" not in python_calls(lambda: xp.add(x, y, out=o))
    assert xp.add(x, y, out=o) is o
    np.testing.assert_array_equal(to_np(o), a + b)
    big = put(np.arange(2000, dtype=np.float32))
    v = big[500:1500]  # an offset view: same signature as x
    np.testing.assert_array_equal(to_np(xp.add(v, y)), np.arange(500, 1500, dtype=np.float32) + b)
    np.testing.assert_array_equal(to_np(xp.add(big[::2], y)), np.arange(0, 2000, 2, dtype=np.float32) + b)


def test_accounting_of_c_results():
    x = put(data(np.float32))
    x * 2.0
    before = xp.memory_stats(DEV)["bytes_in_use"]
    r = x * 2.0
    assert xp.memory_stats(DEV)["bytes_in_use"] == before + 4000
    del r
    assert xp.memory_stats(DEV)["bytes_in_use"] == before


def test_dead_temporaries_are_reused_in_c():
    n = 1 << 17  # 512 KiB of float32: above the elision's threshold
    a, b = data(np.float32, n), data(np.float32, n, seed=1)
    x, y = put(a), put(b)
    f = lambda: ((x + y) * 2.0 - y) * 0.5  # noqa: E731
    f()
    np.testing.assert_allclose(to_np(f()), ((a + b) * np.float32(2) - b) * np.float32(0.5), rtol=1e-6)
    xp.reset_peak_memory_stats(DEV)
    base = xp.memory_stats(DEV)["bytes_in_use"]
    r = f()
    assert xp.memory_stats(DEV)["peak_bytes_in_use"] - base == 4 * n  # one buffer for the whole chain
    del r


def test_another_current_stream_goes_to_the_python_path():
    a, b = data(np.float32), data(np.float32, seed=1)
    x, y = put(a), put(b)
    x + y
    with cupy.cuda.Stream(non_blocking=True):
        assert "_binary_py" in python_calls(lambda: x + y)
        r = x + y
    np.testing.assert_array_equal(to_np(r), a + b)


def test_a_lock_held_by_another_thread_is_waited_for():
    a, b = data(np.float32), data(np.float32, seed=1)
    x, y = put(a), put(b)
    x + y
    held, go = threading.Event(), threading.Event()

    def holder():
        with client._lock:
            held.set()
            go.wait(5)
            time.sleep(0.05)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    go.set()
    r = x + y  # the C call cannot take the lock: the Python path waits for it
    t.join()
    np.testing.assert_array_equal(to_np(r), a + b)


def test_threads_sharing_the_device():
    errors = []

    def work(seed):
        try:
            a, b = data(np.float32, 777, seed), data(np.float32, 777, seed + 100)
            x, y = put(a), put(b)
            for k in range(200):
                r = (x + y) * float(k)
            np.testing.assert_array_equal(to_np(r), (a + b) * np.float32(199))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_capture_after_cached_plans_records_them():
    a, b = data(np.float32), data(np.float32, seed=1)
    x, y = put(a), put(b)
    o = put(np.zeros(1000, np.float32))
    xp.add(x * 2.0, y, out=o)
    xp.add(x * 2.0, y, out=o)
    with xp.capture(device=DEV) as g:
        xp.add(x * 2.0, y, out=o)
    o2 = put(np.zeros(1000, np.float32))
    xp.add(x, x, out=o2)  # eager, in C, after the capture
    x[...] = put(b)
    g.replay()
    np.testing.assert_array_equal(to_np(o), b * np.float32(2) + b)
    np.testing.assert_array_equal(to_np(o2), a + a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_a_small_sum_launches_from_c(dtype):
    a = data(dtype, 3000)
    x = put(a)
    first = to_np(xp.sum(x))
    calls = python_calls(lambda: xp.sum(x))
    assert not {"_bound_reduce", "reduction", "try_sum"} & set(calls), calls
    r = xp.sum(x)
    assert r.dtype == first.dtype and r.shape == ()
    np.testing.assert_array_equal(to_np(r), first)
    np.testing.assert_allclose(to_np(r), a.sum(dtype=np.float64), rtol=1e-5)
    transposed = xp.sum(put(a.reshape(30, 100)).T)  # not dense: the Python path (CuPy's reduction)
    np.testing.assert_allclose(to_np(transposed), a.sum(dtype=np.float64), rtol=1e-5)


PRODUCTS = {  # (a's shape, b's shape, transpose a's last two axes, transpose b's)
    "matrix @ vector": ((300, 64), (64,), False, False),
    "transposed matrix @ vector": ((64, 300), (64,), True, False),
    "vector @ matrix": ((64,), (64, 30), False, False),
    "matrix @ matrix": ((50, 64), (64, 30), False, False),
    "transposed operands": ((64, 50), (30, 64), True, True),
    "batched": ((4, 50, 16), (4, 16, 30), False, False),
    "batched, transposed": ((4, 16, 50), (4, 16, 30), True, False),
    "matrix @ batch": ((50, 16), (4, 16, 30), False, False),
    "dot": ((64,), (64,), False, False),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_repeated_product_calls_cublas_from_c(name, dtype):
    sa, sb, ta, tb = PRODUCTS[name]
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    x, y = put(a), put(b)
    if ta:
        x, a = xp.matrix_transpose(x), np.swapaxes(a, -1, -2)
    if tb:
        y, b = xp.matrix_transpose(y), np.swapaxes(b, -1, -2)
    first = to_np(x @ y)
    calls = python_calls(lambda: x @ y)
    assert not {"matmul", "matmul_into", "_product_2d", "launch"} & set(calls), calls
    again = x @ y
    np.testing.assert_array_equal(to_np(again), first)  # the same cuBLAS call
    np.testing.assert_allclose(to_np(again), a @ b, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-4 if dtype == np.float32 else 1e-12)
    if len(sa) == len(sb) == 1:  # vecdot of real vectors is their cached product
        assert not {"matmul", "launch", "numeric_pair"} & set(python_calls(lambda: xp.vecdot(x, y)))
        np.testing.assert_array_equal(to_np(xp.vecdot(x, y)), first)


def test_a_capture_of_cached_products_replays_them():
    rng = np.random.default_rng(6)
    a, w = rng.standard_normal((300, 64)).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    X, v = put(a), put(w)
    o = put(np.zeros(64, np.float32))
    X.T @ (X @ v)
    X.T @ (X @ v)
    with xp.capture(device=DEV) as g:
        xp.multiply(X.T @ (X @ v), 1.0, out=o)
    v[...] = put(2 * w)
    g.replay()
    want = a.T.astype(np.float64) @ (a.astype(np.float64) @ (2 * w.astype(np.float64)))
    np.testing.assert_allclose(to_np(o), want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_a_repeated_concat_is_one_copy_per_array_from_c():
    u = data(np.float32, 4096)
    x = put(u)
    f = lambda: xp.concat([x[:1], x[1:-1] * 0.5, x[-1:]])  # noqa: E731  (heat's)
    first = to_np(f())
    assert "_concat" not in python_calls(f)
    np.testing.assert_array_equal(to_np(f()), first)
    np.testing.assert_array_equal(first, np.concatenate([u[:1], u[1:-1] * np.float32(0.5), u[-1:]]))
    rows = [put(data(np.float64, 6, seed=k).reshape(1, 6)) for k in range(3)]
    g = lambda: xp.concat(rows, axis=1)  # noqa: E731  (one leading axis of length 1: each is one range)
    want = np.concatenate([to_np(r) for r in rows], axis=1)
    np.testing.assert_array_equal(to_np(g()), want)
    assert "_concat" not in python_calls(g)
    np.testing.assert_array_equal(to_np(g()), want)
    t = put(data(np.float32, 24).reshape(4, 6)).T  # not dense: the Python path, whatever the plan
    np.testing.assert_array_equal(to_np(xp.concat([t, t])), np.concatenate([to_np(t), to_np(t)]))


@pytest.mark.parametrize("value,dtype", [(1.5, None), (0.1, xp.float32), (-7, None), (7, xp.int32), (True, None)])
def test_asarray_of_a_scalar_uploads_from_c(value, dtype):
    from numr_array import _creation
    _creation._ASARRAY_PLANS.clear()
    _creation._SCALAR_PLANS.clear()
    first = xp.asarray(value, dtype=dtype, device=DEV)
    calls = python_calls(lambda: xp.asarray(value, dtype=dtype, device=DEV))
    assert "_scalar_by_plan" not in calls and "copy_to_device" not in calls, calls
    r = xp.asarray(value, dtype=dtype, device=DEV)
    assert r.dtype == first.dtype and r.shape == () and r.device == first.device
    assert to_np(r).tobytes() == to_np(first).tobytes()
    if dtype is xp.int32:
        with pytest.raises(OverflowError):  # as without the compiled call (NumPy's error)
            xp.asarray(2**31, dtype=dtype, device=DEV)
