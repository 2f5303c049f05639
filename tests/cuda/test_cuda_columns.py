"""Column and row reductions (backends/cuda/_columns.py): sum, prod, max, min, mean, var, std, count_nonzero,
argmax and argmin over the leading (and over the trailing) axes of a C-contiguous array, against NumPy for tall,
short, narrow and wide shapes in float32, float64, int32 and bool; keepdims; the leading two (trailing two) axes
of a 3-D array; the same bits when captured as eager; and that those calls run the column (row) kernel (other
axes and layouts keep the table's kernels)."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)

from numr_array.backends.cuda import _columns  # noqa: E402

DEV = "cuda:0"
#: n x m: every pair but 200k x 1000 (800 MB of float32 would only slow the suite down)
SHAPES = [(n, m) for n in (1, 7, 1000, 200_000) for m in (1, 3, 8, 16, 33, 1000) if n * m <= 8_000_000]
DTYPES = [np.float32, np.float64, np.int32, np.bool_]
#: sums and means: within this many of the dtype's units per term magnitude of the exact (float64) sum
SUM_TOL = {np.float32: 2e-6, np.float64: 1e-14}
#: var and std (two passes in the dtype), and prod (float32 accumulates in float64; float64 multiplies up to
#: 200k factors, each rounded by 1.1e-16), relative to the float64 value
MOMENT_RTOL = {np.float32: 1e-5, np.float64: 1e-12}
PROD_RTOL = {np.float32: 2e-6, np.float64: 1e-10}


def put(a):
    return xp.asarray(a, device=DEV)


def data(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype == np.int32:
        return rng.integers(-3, 4, shape).astype(np.int32)
    a = rng.standard_normal(shape).astype(dtype)
    if a.shape[0] > 2:  # NaN in one column: it propagates, and argmax/argmin find its first row
        a[a.shape[0] // 2, 0] = a[a.shape[0] - 1, 0] = np.nan
    return a


def ops_of(dtype):
    if dtype == np.bool_:  # (bools are counted: sum and prod in the default integer)
        return ["sum", "prod", "count_nonzero"]
    ops = ["sum", "prod", "max", "min", "count_nonzero", "argmax", "argmin"]
    return ops + ["mean", "var", "std"] if dtype in (np.float32, np.float64) else ops


def check(name, a, x, axis):
    """xp.<name>(x, axis) against NumPy's result on ``a`` (float64 for floating sums, products and moments);
    with keepdims, the same bits in the kept shape."""
    f = getattr(xp, name)
    dtype = a.dtype.type
    got = to_np(f(x, axis=axis))
    exact = getattr(np, name)(a, axis=axis)
    assert got.shape == np.shape(exact), (name, got.shape, np.shape(exact))
    if name in ("sum", "prod") and dtype == np.bool_:
        exact = exact.astype(np.int64)  # (numr counts bools in the default integer, as NumPy does)
    assert got.dtype == exact.dtype, (name, got.dtype, exact.dtype)
    kept = to_np(f(x, axis=axis, keepdims=True))
    axes = (axis,) if isinstance(axis, int) else axis
    assert kept.shape == tuple(1 if i in axes else d for i, d in enumerate(a.shape)), (name, kept.shape)
    assert kept.tobytes() == got.tobytes(), name
    if dtype not in SUM_TOL or name in ("max", "min", "argmax", "argmin", "count_nonzero"):
        np.testing.assert_array_equal(got, exact, err_msg=name)
        return
    wide = a.astype(np.float64)
    want = getattr(np, name)(wide, axis=axis)
    if name in ("sum", "mean"):
        scale = np.sum(np.abs(wide), axis=axis)
        if name == "mean":
            scale = scale / (a.size // max(np.size(want), 1))
        bad = ~(np.abs(got - want) <= SUM_TOL[dtype] * scale) & ~(np.isnan(got) & np.isnan(want))
        assert not bad.any(), (name, got[bad][:4], want[bad][:4])
    else:
        rtol = PROD_RTOL[dtype] if name == "prod" else MOMENT_RTOL[dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, err_msg=name)


@pytest.fixture
def launches(monkeypatch):
    """The column kernel launches made while the test runs."""
    made = []
    launch = _columns.ColumnReductions._launch

    def counting(self, *args):
        made.append(args)
        launch(self, *args)

    monkeypatch.setattr(_columns.ColumnReductions, "_launch", counting)
    return made


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m", SHAPES)
def test_column_reductions_against_numpy(n, m, dtype, launches):
    rng = np.random.default_rng(n * 1000 + m)
    a = data(rng, (n, m), dtype)
    if dtype in (np.float32, np.float64):
        b = (1 + 0.002 * rng.standard_normal((n, m))).astype(dtype)  # products of 200k factors near 1
    else:
        b = a
    x, y = put(a), put(b)
    for name in ops_of(dtype):
        before = len(launches)
        if name == "prod":
            check(name, b, y, 0)
        else:
            check(name, a, x, 0)
        assert len(launches) > before, f"{name} of {n} x {m} {np.dtype(dtype).name} did not run the column kernel"


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("shape", [(40, 30, 7), (3, 500, 33), (20_000, 2, 16)])
def test_leading_axes_of_a_3d_array(shape, dtype, launches):
    rng = np.random.default_rng(sum(shape))
    a = data(rng, shape, dtype)
    x = put(a)
    for name in ops_of(dtype):
        for axis in (0, (0, 1), (1, 0)) if name not in ("argmax", "argmin") else (0,):
            check(name, a, x, axis)
    assert launches


def test_var_and_std_with_a_correction_and_a_mean_far_from_zero():
    rng = np.random.default_rng(3)
    a = (1000 + rng.standard_normal((200_000, 8))).astype(np.float32)  # two passes: no cancellation
    x = put(a)
    wide = a.astype(np.float64)
    for correction in (0, 1, 2.5):
        np.testing.assert_allclose(to_np(xp.var(x, axis=0, correction=correction)),
                                   np.var(wide, axis=0, ddof=correction), rtol=1e-5)
        np.testing.assert_allclose(to_np(xp.std(x, axis=0, correction=correction)),
                                   np.std(wide, axis=0, ddof=correction), rtol=1e-5)


def test_other_axes_and_layouts_keep_the_tables_kernels(launches):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 20, 6)).astype(np.float32)
    x = put(a)
    cases = [(x, a, 1), (x, a, None),  # neither the leading axes nor the trailing ones (not all of them)
             (xp.permute_dims(x, (1, 0, 2)), a.transpose(1, 0, 2), 0),  # not C-contiguous
             (x[::2], a[::2], 0)]
    for t, v, axis in cases:
        np.testing.assert_allclose(to_np(xp.sum(t, axis=axis)), v.astype(np.float64).sum(axis=axis),
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(to_np(xp.std(t, axis=axis)), v.astype(np.float64).std(axis=axis), rtol=1e-4)
    z = (a[:, 0, 0] + 1j * a[:, 0, 1]).astype(np.complex64).reshape(300, 1)
    np.testing.assert_allclose(to_np(xp.sum(put(z), axis=0)), z.astype(np.complex128).sum(axis=0), rtol=1e-4)
    assert not launches


def test_reduction_into_a_strided_out_keeps_the_tables_kernel(launches):
    a = np.random.default_rng(6).standard_normal((1000, 4)).astype(np.float32)
    holder = xp.zeros((4, 3), dtype=xp.float32, device=DEV)
    xp.max(put(a), axis=0, out=holder[:, 1])
    want = np.zeros((4, 3), np.float32)
    want[:, 1] = a.max(axis=0)
    np.testing.assert_array_equal(to_np(holder), want)
    assert not launches


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape,dtype", [((200_000, 16), np.float32), ((1 << 20, 8), np.float32),
                                         ((1000, 33), np.float64), ((7, 3), np.int32), ((5000, 1), np.float32)])
def test_captured_column_reductions_give_the_eager_bits(shape, dtype, seed, launches):
    a = data(np.random.default_rng(seed), shape, dtype)
    x = put(a)
    for name in ops_of(dtype):
        f = getattr(xp, name)
        eager = to_np(f(x, axis=0))
        with xp.capture(DEV) as g:
            r = f(x, axis=0)
        g.replay()
        assert to_np(r).tobytes() == eager.tobytes(), name
    assert launches


#: n rows of m: short rows (a few lanes each), a warp's, longer ones (7 and 1000 of those: CuPy's reduction)
ROW_SHAPES = [(n, m) for n in (1, 7, 1000, 100_000) for m in (1, 3, 16, 32, 33, 1000, 3000) if n * m <= 8_000_000]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m", ROW_SHAPES)
def test_row_reductions_against_numpy(n, m, dtype, launches):
    rng = np.random.default_rng(n * 1000 + m + 1)
    a = data(rng, (n, m), dtype)
    b = (1 + 0.002 * rng.standard_normal((n, m))).astype(dtype) if dtype in (np.float32, np.float64) else a
    x, y = put(a), put(b)
    taken = _columns.rows_shape(n, m) is not None
    assert taken == (m <= 32 or n == 100_000), (n, m)  # (7 or 1000 long rows: too few blocks)
    for name in ops_of(dtype):
        before = len(launches)
        check(name, b if name == "prod" else a, y if name == "prod" else x, 1)
        assert (len(launches) > before) == taken, f"{name} of {n} x {m}: row kernel {len(launches) > before}"


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_trailing_axes_of_a_3d_array(dtype, launches):
    # the k-means distances: sum over the last axis of 200 x 16 x 32; and over the last two
    rng = np.random.default_rng(9)
    a = data(rng, (2000, 16, 32), dtype)
    b = (1 + 0.002 * rng.standard_normal(a.shape)).astype(dtype) if dtype == np.float32 else a  # (no underflow)
    x, y = put(a), put(b)
    for name in ops_of(dtype):
        for axis in (2, (1, 2), (2, 1)) if name not in ("argmax", "argmin") else (2,):
            check(name, b if name == "prod" else a, y if name == "prod" else x, axis)
    assert launches


@pytest.mark.parametrize("shape,axis", [((200_000, 16), 1), ((2000, 16, 32), -1), ((4000, 1024), -1),
                                        ((2000, 3000), 1), ((5000, 7, 5), (1, 2)), ((3000, 3), 1)])
def test_captured_row_reductions_give_the_eager_bits(shape, axis, launches):
    a = data(np.random.default_rng(len(shape)), shape, np.float32)
    x = put(a)
    for name in ops_of(np.float32):
        if name in ("argmax", "argmin") and not isinstance(axis, int):
            continue
        f = getattr(xp, name)
        eager = to_np(f(x, axis=axis))
        with xp.capture(DEV) as g:
            r = f(x, axis=axis)
        g.replay()
        assert to_np(r).tobytes() == eager.tobytes(), name
    assert launches


def test_row_launch_shapes():
    for n in (1, 7, 1000, 4096, 200_000, 10 ** 8):
        for m in (1, 2, 3, 5, 16, 32, 33, 128, 1000, 10 ** 6):
            shape = _columns.rows_shape(n, m)
            if shape is None:
                assert m > _columns._SHORT_ROW and n < 10_000
                continue
            bx, by, blocks = shape
            assert bx * by == _columns.THREADS and 1 <= bx <= 32 and bx & (bx - 1) == 0
            assert 1 <= blocks <= _columns._MAX_ROW_BLOCKS and (blocks == _columns._MAX_ROW_BLOCKS or blocks * by >= n)
            assert bx == 1 or (bx // 2) * _columns._PER_LANE < m  # about _PER_LANE elements per lane


def test_launch_shapes_cover_every_row_once():
    for n in (1, 2, 7, 255, 256, 4097, 200_000, 1 << 20, 10 ** 8):
        for m in (1, 3, 8, 16, 33, 1000, 10 ** 6):
            bx, by, gx, g, rows = _columns.launch_shape(n, m)
            assert bx * by == _columns.THREADS and bx >= min(m, 32) and gx * bx >= m
            assert (g - 1) * rows < n <= g * rows and g <= 65535
