"""The compiled call's direct device launch (numr_array/_speedups.c, ``device_call``), on any machine: a plan
laid out as a GPU client's (CudaClient.direct_launch) whose "driver" is a ctypes callback standing for
cuLaunchKernel and whose "device memory" is host memory, so the argument words, scalar conversions, ``out=``,
dead temporaries, accounting and every fall-back to the Python path are checked without a GPU (on CUDA,
tests/cuda/test_cuda_speedups.py runs the real launch)."""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np
import pytest

import numr_array as xp
from numr_array import _dtypes, runtime
from numr_array._tensor import Tensor

pytestmark = [
    pytest.mark.skipif(os.environ.get("NUMR_SPEEDUPS") == "0", reason="NUMR_SPEEDUPS=0: the Python path"),
    pytest.mark.skipif(runtime.speedups is None and os.environ.get("CI", "") in ("", "0", "false"),
                       reason="numr_array._speedups is not compiled here (no C compiler or Python headers)"),
]
sp = runtime.speedups

FORMS = {"u": 0, "tt": 1, "ts": 2, "st": 3, "tp": 4, "pt": 5}
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class Memory:
    """Host memory standing for a device allocation: ``ptr`` as a CuPy memory pointer has it."""

    def __init__(self, nbytes: int):
        self.array = np.zeros(max(nbytes, 1), np.uint8)
        self.ptr = self.array.ctypes.data


class FakeDevice:
    """What the kernels, the allocator and the stream of one fake GPU are."""

    def __init__(self, status: int = 0):
        self.launches: list[tuple] = []
        self.status = status
        self.stream = object()
        self.current = self.stream
        self.lock = threading.RLock()
        self.allocator = runtime.Allocator()
        self.dev = xp._device.parse_device("cpu")  # any Device: the plan key holds its client, the result its device
        self.launch = LAUNCH(self._launch)

    def _launch(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        words = [ctypes.c_uint64.from_address(params[k]).value for k in range(4)]
        self.launches.append((function, gx, bx, stream, words))
        self.fifth = params[4]  # the strided form's layout argument (NULL for the others)
        return self.status

    def native(self, dtype: np.dtype, rdtype: np.dtype, form: str, n: int, function: int = 7,
               input_strides: tuple = (1,)) -> tuple:
        kind = ord(dtype.kind) if dtype.kind == "f" or (dtype.kind == "i" and dtype.itemsize in (4, 8)) else 0
        return (ctypes.cast(self.launch, ctypes.c_void_p).value, function, (n + 255) // 256, 256, n, FORMS[form],
                dtype.itemsize, rdtype.itemsize, kind, (input_strides,) * (1 if form in "ur" else 2), None, 0xABC,
                self.stream, lambda: self.current, Memory,
                self.allocator, self.lock, n * rdtype.itemsize, None, {}, rdtype)

    def tensor(self, a: np.ndarray, offset: int = 0) -> Tensor:
        mem = Memory(a.nbytes + offset * a.itemsize)
        mem.array[offset * a.itemsize:offset * a.itemsize + a.nbytes] = a.reshape(-1).view(np.uint8)
        strides = tuple(s // a.itemsize for s in a.strides)
        return Tensor(runtime.Buffer(mem, a.nbytes, None), _dtypes.from_numpy(a.dtype), a.shape, strides, offset,
                      self.dev, None)

    def plans(self, key: tuple, rdtype: np.dtype, shape: tuple, native: tuple, elide=False) -> dict:
        d = _dtypes.from_numpy(rdtype)
        strides = tuple(int(np.prod(shape[k + 1:])) for k in range(len(shape)))
        return {key: (d, shape, strides, None, self.dev, None, None, False, elide, native)}


def address(t: Tensor) -> int:
    return t._buf.handle.ptr + t._offset * t._dtype.itemsize


def bits(value, dtype) -> int:
    b = np.zeros(8, np.uint8)
    b[:np.dtype(dtype).itemsize] = np.array([value], dtype).view(np.uint8)
    return int(b.view(np.uint64)[0])


def key2(x, y) -> tuple:
    return (x._dtype, y._dtype, x._shape, y._shape, x._dev._client, y._dev._client)


def test_two_arrays_launch_with_their_addresses_and_a_new_result():
    f = FakeDevice()
    x, y = f.tensor(np.arange(300, dtype=np.float32)), f.tensor(np.ones(300, np.float32), offset=5)
    plans = f.plans(key2(x, y), np.float32, (300,), f.native(np.dtype(np.float32), np.dtype(np.float32), "tt", 300))
    before = f.allocator.stats().bytes_in_use
    r = sp.binary(None, plans, x, y, None, 1)
    assert type(r) is Tensor and r.shape == (300,) and r._dtype is _dtypes.float32 and r._view is None
    assert f.allocator.stats().bytes_in_use == before + 1200
    function, blocks, threads, stream, words = f.launches[-1]
    assert (function, blocks, threads, stream) == (7, 2, 256, 0xABC)
    assert words == [address(x), address(y), address(r), 300]
    del r
    assert f.allocator.stats().bytes_in_use == before


@pytest.mark.parametrize("dtype,value", [(np.float32, 0.1), (np.float32, 3), (np.float64, 0.1), (np.float64, -7),
                                         (np.int32, -5), (np.int64, 2**62)])
def test_scalars_become_words_of_the_plans_dtype(dtype, value):
    f = FakeDevice()
    d = np.dtype(dtype)
    x = f.tensor(np.zeros(10, dtype))
    for reflected in (False, True):
        form = "st" if reflected else "ts"
        key = (type(value), x._dtype, x._shape, x._dev._client) if reflected else \
            (x._dtype, type(value), x._shape, x._dev._client)
        plans = f.plans(key, d, (10,), f.native(d, d, form, 10))
        r = sp.binary(None, plans, value, x, None, 1) if reflected else sp.binary(None, plans, x, value, None, 1)
        assert type(r) is Tensor
        words = f.launches[-1][-1]
        assert words[1 if not reflected else 0] == bits(d.type(value), d)
        assert words[0 if not reflected else 1] == address(x)


@pytest.mark.parametrize("dtype,value", [(np.int32, 2**31), (np.int64, 2**64), (np.float32, 1e39),
                                         (np.float32, 2**53 + 1), (np.int32, 1.5)])
def test_scalars_c_does_not_convert_go_to_the_python_path(dtype, value):
    f = FakeDevice()
    d = np.dtype(dtype)
    x = f.tensor(np.zeros(10, dtype))
    plans = f.plans((x._dtype, type(value), x._shape, x._dev._client), d, (10,), f.native(d, d, "ts", 10))
    assert sp.binary(None, plans, x, value, None, 1) is NotImplemented
    assert f.launches == []


def test_unary_and_one_element_forms():
    f = FakeDevice()
    x = f.tensor(np.arange(10, dtype=np.float64))
    plans = f.plans((x._dtype, x._shape, x._dev._client), np.float64, (10,),
                    f.native(np.dtype(np.float64), np.dtype(np.float64), "u", 10))
    r = sp.unary(None, plans, x, None, 1)
    assert f.launches[-1][-1][:3] == [address(x), address(r), 10]
    z = f.tensor(np.array(2.0))
    plans = f.plans(key2(z, x), np.float64, (10,), f.native(np.dtype(np.float64), np.dtype(np.float64), "pt", 10))
    r = sp.binary(None, plans, z, x, None, 1)
    assert f.launches[-1][-1] == [address(z), address(x), address(r), 10]


def test_comparisons_write_a_bool_result():
    f = FakeDevice()
    x, y = f.tensor(np.zeros(10, np.float64)), f.tensor(np.zeros(10, np.float64))
    plans = f.plans(key2(x, y), np.bool_, (10,), f.native(np.dtype(np.float64), np.dtype(np.bool_), "tt", 10))
    before = f.allocator.stats().bytes_in_use
    r = sp.binary(None, plans, x, y, None, 1)
    assert r._dtype is _dtypes.bool_ and f.allocator.stats().bytes_in_use == before + 10


def test_an_accepted_out_is_written_and_returned():
    f = FakeDevice()
    x, y = f.tensor(np.zeros(10, np.float32)), f.tensor(np.zeros(10, np.float32))
    o = f.tensor(np.zeros(12, np.float32), offset=2)
    o = Tensor(o._buf, o._dtype, (10,), (1,), 2, f.dev, None)
    native = f.native(np.dtype(np.float32), np.dtype(np.float32), "tt", 10)
    plans = f.plans(key2(x, y), np.float32, (10,), native)
    assert sp.binary(None, plans, x, y, o, 1) is NotImplemented  # not accepted yet: the Python path's to check
    native[-2][o._dtype, o._shape, o._strides] = None
    before = f.allocator.stats().bytes_in_use
    assert sp.binary(None, plans, x, y, o, 1) is o
    assert f.launches[-1][-1] == [address(x), address(y), address(o), 10]
    assert f.allocator.stats().bytes_in_use == before
    # an operand that is another view of out's memory: the Python path (which copies it first)
    shifted = Tensor(o._buf, o._dtype, (10,), (1,), 1, f.dev, None)
    launched = len(f.launches)
    assert sp.binary(None, plans, shifted, y, o, 1) is NotImplemented and len(f.launches) == launched
    same = Tensor(o._buf, o._dtype, (10,), (1,), 2, f.dev, None)  # out itself, seen through another tensor
    assert sp.binary(None, plans, same, y, o, 1) is o


def test_what_c_cannot_take_goes_to_the_python_path_untouched():
    f = FakeDevice()
    x, y = f.tensor(np.zeros((4, 5), np.float32)), f.tensor(np.zeros((4, 5), np.float32))
    plans = f.plans(key2(x, y), np.float32, (4, 5),
                    f.native(np.dtype(np.float32), np.dtype(np.float32), "tt", 20, input_strides=(5, 1)))
    before = f.allocator.stats().bytes_in_use
    # an operand of the key's shape but not C-contiguous
    t = Tensor(y._buf, y._dtype, (4, 5), (1, 4), 0, f.dev, None)
    assert sp.binary(None, plans, x, t, None, 1) is NotImplemented
    f.current = object()  # another stream current
    assert sp.binary(None, plans, x, y, None, 1) is NotImplemented
    f.current = f.stream
    held = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: (f.lock.acquire(), held[0].set(), held[1].wait(5), f.lock.release()))
    thread.start()
    held[0].wait(5)
    assert sp.binary(None, plans, x, y, None, 1) is NotImplemented  # the lock is another thread's
    held[1].set()
    thread.join()
    assert f.launches == [] and f.allocator.stats().bytes_in_use == before
    f.status = 1  # a failed launch: nothing kept, the Python path makes it again (and raises)
    assert sp.binary(None, plans, x, y, None, 1) is NotImplemented
    assert len(f.launches) == 1 and f.allocator.stats().bytes_in_use == before
    f.status = 0
    assert type(sp.binary(None, plans, x, y, None, 1)) is Tensor


def test_a_dead_temporary_takes_the_result():
    from numr_array import _elementwise
    f = FakeDevice()
    n = 1 << 17
    x = f.tensor(np.zeros(n, np.float32))
    x._buf.owner = f.allocator  # an allocator's buffer, never exported: a temporary the result may go into
    native = f.native(np.dtype(np.float32), np.dtype(np.float32), "ts", n)
    plans = f.plans((x._dtype, float, x._shape, x._dev._client), np.float32, (n,), native, elide=True)
    # held 1: the caller's one reference (``x`` here) besides the call's own argument
    r = sp.binary(None, plans, x, 2.0, None, 1)
    if _elementwise.ELIDE and _elementwise._calibrate_compiled():
        assert r._buf is x._buf and f.launches[-1][-1][:3] == [address(x), bits(2.0, np.float32), address(x)]
    else:  # C cannot tell a dead temporary on this interpreter: the Python path decides
        assert r is NotImplemented
    y = f.tensor(np.zeros(n, np.float32))
    y._buf.owner = f.allocator
    keep = [y]  # held elsewhere: never taken
    r = sp.binary(None, plans, y, 2.0, None, 1)
    assert r._buf is not y._buf and keep


def test_a_sum_of_all_elements_launches_one_block():
    f = FakeDevice()
    x = f.tensor(np.zeros((30, 40), np.float32))
    native = f.native(np.dtype(np.float32), np.dtype(np.float32), "u", 1200, input_strides=(40, 1))
    native = native[:5] + (6,) + native[6:]  # form R
    plans = {(x._dtype, x._shape, x._dev._client, None, False):
             (_dtypes.float32, (), (), None, f.dev, None, None, False, False, native[:-4] + (4, None, {}, np.float32))}
    r = sp.reduce(plans, x, None, False, None, None)
    assert type(r) is Tensor and r.shape == () and f.launches[-1][-1][:3] == [address(x), address(r), 1200]
    t = Tensor(x._buf, x._dtype, (30, 40), (1, 30), 0, f.dev, None)  # the key's shape, not C-contiguous
    assert sp.reduce(plans, t, None, False, None, None) is NotImplemented
    assert sp.reduce(plans, x, None, True, None, None) is NotImplemented  # another key


VP, I, LL = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
GEMV = ctypes.CFUNCTYPE(I, VP, I, I, I, VP, VP, I, VP, I, VP, VP, I)
GEMM = ctypes.CFUNCTYPE(I, VP, I, I, I, I, I, VP, VP, I, I, VP, I, I, VP, VP, I, I, I, I)
GEMM_BATCHED = ctypes.CFUNCTYPE(I, VP, I, I, I, I, I, VP, VP, I, I, LL, VP, I, I, LL, VP, VP, I, I, LL, I, I, I)


@pytest.mark.parametrize("batch", [1, 3])
def test_matrix_products_call_cublas_with_the_planned_arguments(batch):
    f = FakeDevice()
    calls = []
    gemv = GEMV(lambda *a: calls.append(("gemv",) + a) or 0)
    gemm = GEMM(lambda *a: calls.append(("gemm",) + a) or 0)
    batched = GEMM_BATCHED(lambda *a: calls.append(("batched",) + a) or 0)
    x = f.tensor(np.zeros((6, 4), np.float32))
    v = f.tensor(np.zeros(4, np.float32))
    addr = lambda fn: ctypes.cast(fn, ctypes.c_void_p).value  # noqa: E731
    base = f.native(np.dtype(np.float32), np.dtype(np.float32), "tt", 6)
    # gemv: routine, handle, trans, m, n, lda, incx, incy, alpha, beta, matrix operand
    native = base[:5] + (7,) + base[6:9] + (((4, 1), (1,)), (addr(gemv), 0x77, 1, 4, 6, 4, 1, 1, 0xA, 0xB, 0)) + \
        base[11:]
    plans = f.plans(key2(x, v), np.float32, (6,), native)
    r = sp.binary(None, plans, x, v, None, 1)
    assert calls[-1] == ("gemv", 0x77, 1, 4, 6, 0xA, address(x), 4, address(v), 1, 0xB, address(r), 1)
    # gemm: routine, handle, ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch, type, compute, algo, alpha, beta,
    # first operand
    routine = addr(gemm if batch == 1 else batched)
    y = f.tensor(np.zeros((4, 5), np.float32))
    args = (routine, 0x77, 0, 1, 5, 6, 4, 5, 4, 5, 20, 0, 30, batch, 0, 68, -1, 0xA, 0xB, 1)
    native = base[:5] + (8,) + base[6:9] + (((4, 1), (5, 1)), args) + base[11:]
    plans = f.plans(key2(x, y), np.float32, (6, 5), native)
    r = sp.binary(None, plans, x, y, None, 1)
    if batch == 1:
        assert calls[-1] == ("gemm", 0x77, 0, 1, 5, 6, 4, 0xA, address(y), 0, 5, address(x), 0, 4, 0xB, address(r),
                             0, 5, 68, -1)
    else:
        assert calls[-1] == ("batched", 0x77, 0, 1, 5, 6, 4, 0xA, address(y), 0, 5, 20, address(x), 0, 4, 0, 0xB,
                             address(r), 0, 5, 30, 3, 68, -1)
    t = Tensor(x._buf, x._dtype, (6, 4), (1, 6), 0, f.dev, None)  # the key's shape, another layout
    assert sp.binary(None, plans, t, y, None, 1) is NotImplemented


def test_strided_operands_pass_their_layout_as_a_fifth_argument():
    f = FakeDevice()
    x = f.tensor(np.zeros((4, 6), np.float32))
    t = Tensor(x._buf, x._dtype, (6, 4), (1, 6), 0, f.dev, None)  # a transposed view
    y = f.tensor(np.zeros(4, np.float32))  # broadcast along the rows
    layout = bytes(range(80))
    base = f.native(np.dtype(np.float32), np.dtype(np.float32), "tt", 24)
    native = base[:5] + (9,) + base[6:9] + (((1, 6), (1,)), layout) + base[11:]  # form BC
    plans = f.plans(key2(t, y), np.float32, (6, 4), native)
    r = sp.binary(None, plans, t, y, None, 1)
    assert f.launches[-1][-1] == [address(t), address(y), address(r), 24]
    assert ctypes.string_at(f.fifth, 80) == layout
    x2 = f.tensor(np.zeros((6, 4), np.float32))  # the key's shape in another layout: not as planned
    assert sp.binary(None, plans, x2, y, None, 1) is NotImplemented
    f.launches.clear()
    native = base[:5] + (9,) + base[6:9] + (((1, 6), (1,)), None) + base[11:]  # no layout: nothing launched
    plans = f.plans(key2(t, y), np.float32, (6, 4), native)
    assert sp.binary(None, plans, t, y, None, 1) is NotImplemented and f.launches == []


MEMCPY = ctypes.CFUNCTYPE(I, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, VP)


def test_a_concat_is_one_device_copy_per_array_into_the_new_result():
    f = FakeDevice()
    copies = []
    memcpy = MEMCPY(lambda dst, src, n, stream: copies.append((dst, src, n, stream)) or 0)
    a, b, c = (f.tensor(np.zeros(k, np.float32)) for k in (1, 5, 1))
    empty = f.tensor(np.zeros(0, np.float32))
    pieces = ((0, 4, (1,), 4), (4, 20, (1,), 4), None, (24, 4, (1,), 4))
    plan = (_dtypes.float32, (7,), (1,), f.dev, f.allocator, 28, ctypes.cast(memcpy, ctypes.c_void_p).value, 0xABC,
            f.stream, lambda: f.current, Memory, f.lock, pieces)
    arrays = [a, b, empty, c]
    key = (0, f.dev._client) + tuple(v for t in arrays for v in (t._dtype, t._shape))
    fallback = lambda arrays, axis: "python"  # noqa: E731
    r = sp.concat(arrays, 0, {key: plan}, fallback)
    o = address(r)
    assert r.shape == (7,) and copies == [(o, address(a), 4, 0xABC), (o + 4, address(b), 20, 0xABC),
                                          (o + 24, address(c), 4, 0xABC)]
    f.current = object()  # another stream current: the Python path
    assert sp.concat(arrays, 0, {key: plan}, fallback) == "python"


@pytest.mark.parametrize("value,dtype,kind,want", [(1.5, np.float64, "f", np.float64(1.5)),
                                                   (0.1, np.float32, "f", np.float32(0.1)),
                                                   (-7, np.int64, "i", np.int64(-7)), (2**31 - 1, np.int32, "i", None),
                                                   (True, np.bool_, "b", np.bool_(True))])
def test_asarray_of_a_scalar_is_one_store_launch(value, dtype, kind, want):
    f = FakeDevice()
    d = _dtypes.from_numpy(np.dtype(dtype))
    plan = (None, "fake:0", f.dev, f.allocator, d, d.itemsize, ord(kind), ctypes.cast(f.launch, ctypes.c_void_p).value,
            55, 0xABC, f.stream, lambda: f.current, Memory, f.lock)
    plans = {(type(value), None, str, "fake:0"): plan}
    r = sp.asarray(plans, value, None, "fake:0", None)
    assert type(r) is Tensor and r.shape == () and r._dtype is d and r._buf.nbytes == d.itemsize
    function, blocks, threads, stream, words = f.launches[-1]
    want = np.dtype(dtype).type(value) if want is None else want
    assert (function, blocks, threads, stream) == (55, 1, 1, 0xABC)
    assert words == [address(r), bits(want, dtype), 0, d.itemsize]
    if kind == "i":  # out of the dtype's range: the Python path, which raises
        big = 2**31 if dtype is np.int32 else 2**63
        assert sp.asarray({(int, None, str, "fake:0"): plan}, big, None, "fake:0", None) is NotImplemented
