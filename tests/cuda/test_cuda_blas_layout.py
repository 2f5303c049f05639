"""The cuBLAS arguments backends/cuda/_blas.py derives for products of at most 2-D operands (transpose flags,
leading dimensions, gemv increments), checked without a GPU: a NumPy model of column-major gemm/gemv runs on
the operands' own memory, addressed as cuBLAS would address it. Runs everywhere (needs no CuPy)."""

import ctypes
import itertools

import numpy as np
import pytest

from numr_array.backends.cuda import _blas


class Device:
    """A NumPy view posing as a CuPy array: what _blas reads of one (``data.ptr``, shape, strides, ...)."""

    def __init__(self, v: np.ndarray):
        self.v = v
        self.data = type("Pointer", (), {"ptr": v.ctypes.data})()

    def __getattr__(self, name):
        return getattr(self.v, name)


def at(ptr: int, shape, strides, dtype) -> np.ndarray:
    """The memory at ``ptr`` as an array of ``shape`` and element ``strides`` (all >= 0)."""
    item = np.dtype(dtype).itemsize
    span = item * (1 + sum((n - 1) * s for n, s in zip(shape, strides)))
    raw = np.frombuffer((ctypes.c_char * span).from_address(ptr), dtype)
    return np.lib.stride_tricks.as_strided(raw, shape, tuple(s * item for s in strides))


def op(x: np.ndarray, t: int) -> np.ndarray:
    return x if t == _blas._OP_N else x.T


class ModelBlas:
    """Column-major cuBLAS semantics (BLAS's): a matrix is (rows, cols, leading dimension) at an address."""

    def __init__(self):
        self.calls = []

    def gemm(self, ta, tb, m, n, k, a, lda, sa, b, ldb, sb, c, ldc, sc, batch, dtype):
        item = np.dtype(dtype).itemsize
        for i in range(batch):  # matrix i at element offsets i * sa, i * sb, i * sc
            A = at(a + i * sa * item, (m, k) if ta == _blas._OP_N else (k, m), (1, lda), dtype)
            B = at(b + i * sb * item, (k, n) if tb == _blas._OP_N else (n, k), (1, ldb), dtype)
            assert lda >= A.shape[0] and ldb >= B.shape[0] and ldc >= m
            at(c + i * sc * item, (m, n), (1, ldc), dtype)[...] = op(A, ta) @ op(B, tb)
        self.calls.append("gemm")

    def gemv(self, trans, m, n, a, lda, x, incx, y, incy, dtype):
        assert lda >= max(1, m) and incx > 0 and incy > 0
        lx, ly = (n, m) if trans == _blas._OP_N else (m, n)
        A = at(a, (m, n), (1, lda), dtype)
        at(y, (ly,), (incy,), dtype)[...] = op(A, trans) @ at(x, (lx,), (incx,), dtype)
        self.calls.append("gemv")


rng = np.random.default_rng(3)


def layouts(shape):
    """One logical operand in several memory layouts (NumPy views of a larger array)."""
    base = rng.standard_normal((2 * max(shape) + 1,) * len(shape))
    yield "contiguous", base[tuple(slice(0, s) for s in shape)].copy()
    if len(shape) == 2:
        rows, cols = shape
        yield "transposed", np.ascontiguousarray(base[:cols, :rows]).T
        yield "padded rows", base[:rows, :cols]
        yield "row step", base[:2 * rows:2, :cols]
        yield "column step", base[:rows, :2 * cols:2]
        yield "reversed", base[:rows, :cols][::-1]
    else:
        yield "step", base[:2 * shape[0]:2]
        yield "reversed", base[:shape[0]][::-1]


def outs(shape):
    yield "contiguous", np.full(shape, np.nan)
    yield "step", np.full(tuple(2 * s for s in shape), np.nan)[tuple(slice(None, None, 2) for _ in shape)]


@pytest.mark.parametrize("M,K,N", [(3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (1, 1, 1), (6, 2, 7)])
@pytest.mark.parametrize("form", ["matrix @ matrix", "matrix @ vector", "vector @ matrix"])
def test_every_layout_cublas_is_given_computes_the_product(M, K, N, form):
    sa = (K,) if form == "vector @ matrix" else (M, K)
    sb = (K,) if form == "matrix @ vector" else (K, N)
    taken = 0
    for (na, a), (nb, b) in itertools.product(layouts(sa), layouts(sb)):
        want = a @ b
        for no, o in outs(want.shape):
            blas = ModelBlas()
            if _blas._product_2d(blas, Device(a), Device(b), Device(o)):
                assert blas.calls == ["gemm" if len(sa) == len(sb) == 2 else "gemv"]
                np.testing.assert_allclose(o, want, rtol=1e-12, atol=1e-12, err_msg=f"{na} @ {nb} into {no}")
                taken += 1
            else:
                assert blas.calls == [] and np.isnan(o).all()
    assert taken


@pytest.mark.parametrize("name,a,b", [
    ("transposed matrix @ vector", np.zeros((64, 5)).T, np.zeros(64)),
    ("matrix @ strided vector", np.zeros((5, 64)), np.zeros(128)[::2]),
    ("vector @ transposed matrix", np.zeros(7), np.zeros((9, 7)).T),
    ("transposed @ transposed", np.zeros((4, 6)).T, np.zeros((3, 4)).T),
    ("row-strided @ padded", np.zeros((12, 4))[::2], np.zeros((4, 9))[:, :5]),
])
def test_layouts_with_a_unit_stride_take_one_cublas_call(name, a, b):
    o = np.full((a @ b).shape, np.nan)
    assert _blas._product_2d(ModelBlas(), Device(a), Device(b), Device(o)), name


def test_an_out_that_overlaps_an_operand_is_refused():
    a = rng.standard_normal((4, 4))
    v = rng.standard_normal(4)
    assert not _blas._product_2d(ModelBlas(), Device(a), Device(v), Device(v))
    assert not _blas._product_2d(ModelBlas(), Device(a), Device(a), Device(a))


def test_a_dot_product_is_one_gemv_of_a_one_row_matrix():
    """matmul_into's form of two vectors: ``a[None, :]`` times ``b`` into the 0-D result seen as (1,)."""
    taken = 0
    for (na, a), (nb, b) in itertools.product(layouts((9,)), layouts((9,))):
        o = np.full((), np.nan)
        blas = ModelBlas()
        if _blas._product_2d(blas, Device(a[None, :]), Device(b), Device(o.reshape(1))):
            assert blas.calls == ["gemv"]
            np.testing.assert_allclose(o, a @ b, rtol=1e-12, err_msg=f"{na} . {nb}")
            taken += 1
    assert taken == 4  # contiguous and step, each way; a reversed vector has no BLAS form


@pytest.mark.parametrize("sa,sb", [((5, 3), (3,)), ((3,), (3, 4)), ((5, 3), (3, 4)), ((3,), (3,)),
                                   ((2, 5, 3), (2, 3, 4)), ((2, 5, 3), (3, 4)), ((5, 3), (2, 3, 4)),
                                   ((2, 5, 3), (3,)), ((3,), (2, 3, 4)), ((1, 5, 3), (2, 3, 4))])
@pytest.mark.parametrize("ta,tb", list(itertools.product([False, True], repeat=2)))
def test_the_plan_of_a_new_result_computes_the_product(sa, sb, ta, tb):
    # plan_product: what the compiled call runs for a cached matmul plan (CudaClient.product_launch), into a
    # new C-contiguous result: one cuBLAS call, batched where the batch axes allow it, or none
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    if ta and a.ndim >= 2:
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    if tb and b.ndim >= 2:
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2)).swapaxes(-1, -2)
    want = a @ b
    plan = _blas.plan_product(a.shape, [s // 8 for s in a.strides], b.shape, [s // 8 for s in b.strides],
                              want.shape)
    assert plan is not None
    out = np.full(want.shape, np.nan)
    blas = ModelBlas()
    _blas.run_plan(blas, plan, (a.ctypes.data, b.ctypes.data), out.ctypes.data, out.dtype)
    assert len(blas.calls) == 1
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


def test_no_plan_where_cublas_cannot_read_a_layout():
    a = np.zeros((4, 6))[:, ::2]  # no unit stride
    assert _blas.plan_product(a.shape, [6, 2], (3, 2), [2, 1], (4, 2)) is None
    assert _blas.plan_product((4, 0), [0, 1], (0, 2), [2, 1], (4, 2)) is None  # nothing contracted
    # a batch broadcast along one axis but not the other: no one batch stride (the general path copies)
    assert _blas.plan_product((2, 1, 5, 3), [15, 15, 3, 1], (2, 3, 4), [12, 4, 1], (2, 2, 5, 4)) is None
