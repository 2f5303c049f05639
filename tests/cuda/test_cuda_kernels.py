"""CUDA's own kernels (backends/cuda/_kernels.py: reductions, arg-reductions and where as one kernel each), its
matrix products through cuBLAS's transpose flags and gemv (_blas.py), contiguous copies as one memcpy and small
uploads as kernel arguments (_direct_elementwise.py), and CudaClient.bind: results against NumPy, and that
the transposed and strided operands reach cuBLAS without a copy."""

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
client = xp._device.parse_device(DEV).client
rng = np.random.default_rng(7)
TOL = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}


def put(a: np.ndarray):
    return xp.asarray(a, device=DEV)


def layouts(shape, dtype):
    """(name, NumPy array, the same on the device) of one logical matrix in several memory layouts."""
    rows, cols = shape
    base = rng.standard_normal((2 * max(shape) + 1,) * 2)
    if np.dtype(dtype).kind == "c":
        base = base + 1j * rng.standard_normal(base.shape)
    base = base.astype(dtype)
    b = put(base)
    yield "contiguous", base[:rows, :cols].copy(), put(base[:rows, :cols].copy())
    t = np.ascontiguousarray(base[:cols, :rows])
    yield "transposed", t.T, put(t).T
    yield "padded rows", base[:rows, :cols], b[:rows, :cols]
    yield "row step", base[:2 * rows:2, :cols], b[:2 * rows:2, :cols]
    yield "column step", base[:rows, :2 * cols:2], b[:rows, :2 * cols:2]
    yield "reversed rows", base[:rows, :cols][::-1], b[:rows, :cols][::-1]


def vectors(n, dtype):
    base = rng.standard_normal(2 * n + 1).astype(dtype)
    yield "contiguous", base[:n].copy(), put(base[:n].copy())
    yield "step", base[:2 * n:2], put(base)[:2 * n:2]
    yield "reversed", base[:n][::-1], put(base)[:n][::-1]


class Calls:
    """Counts the client's cuBLAS calls and fails on any CuPy copy while it is active."""

    def __init__(self, monkeypatch):
        self.gemm = self.gemv = 0
        blas = client.blas()
        gemm, gemv = blas.gemm, blas.gemv

        def count_gemm(*a):
            self.gemm += 1
            gemm(*a)

        def count_gemv(*a):
            self.gemv += 1
            gemv(*a)

        def no_copy(*a, **k):
            raise AssertionError("a matmul operand was copied")
        monkeypatch.setattr(blas, "gemm", count_gemm)
        monkeypatch.setattr(blas, "gemv", count_gemv)
        monkeypatch.setattr(cupy, "ascontiguousarray", no_copy)


#: the layouts cuBLAS reads through its transpose flag and leading dimension (one unit stride); "column step"
#: and "reversed rows" are not among them and take the general path (a contiguous copy first)
BLAS_LAYOUTS = {"contiguous", "transposed", "padded rows", "row step"}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("M,K,N", [(5, 7, 3), (1, 6, 4), (6, 1, 5), (4, 6, 1)])
def test_matmul_of_any_layout(dtype, M, K, N):
    for na, a, ta in layouts((M, K), dtype):
        for nb, b, tb in layouts((K, N), dtype):
            np.testing.assert_allclose(to_np(ta @ tb), a @ b, rtol=TOL[dtype], atol=TOL[dtype] * K,
                                       err_msg=f"{na} @ {nb}")


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_transposed_and_strided_matrices_reach_gemm_without_a_copy(dtype, monkeypatch):
    M, K, N = 9, 13, 11
    cases = [(na, a, ta, nb, b, tb) for na, a, ta in layouts((M, K), dtype) if na in BLAS_LAYOUTS
             for nb, b, tb in layouts((K, N), dtype) if nb in BLAS_LAYOUTS]
    calls = Calls(monkeypatch)
    for na, a, ta, nb, b, tb in cases:
        np.testing.assert_allclose(to_np(ta @ tb), a @ b, rtol=TOL[dtype], atol=TOL[dtype] * K,
                                   err_msg=f"{na} @ {nb}")
    assert calls.gemm == len(cases) and calls.gemv == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_matrix_vector_products_are_one_gemv_or_pass_without_a_copy(dtype, monkeypatch):
    M, K = 37, 23
    mats = [(na, a, ta) for na, a, ta in layouts((M, K), dtype) if na in BLAS_LAYOUTS]
    right = [(nv, v, tv) for nv, v, tv in vectors(K, dtype) if nv != "reversed"]
    left = [(nv, v, tv) for nv, v, tv in vectors(M, dtype) if nv != "reversed"]
    calls = Calls(monkeypatch)
    for name, a, ta in mats:
        for vname, v, tv in right:
            np.testing.assert_allclose(to_np(ta @ tv), a @ v, rtol=TOL[dtype], atol=TOL[dtype] * K,
                                       err_msg=f"{name} @ {vname}")
        for vname, v, tv in left:
            np.testing.assert_allclose(to_np(tv @ ta), v @ a, rtol=TOL[dtype], atol=TOL[dtype] * M,
                                       err_msg=f"{vname} @ {name}")
    # of real dtypes, the contiguous matrix and the transposed one (a contiguous matrix's transpose) times the
    # contiguous vector are _matvec's pass (test_cuda_matvec); every other product one gemv
    passes = 2 if np.dtype(dtype).kind == "f" else 0
    assert calls.gemv == len(mats) * (len(right) + len(left)) - passes and calls.gemm == 0


def test_matrix_vector_products_of_other_layouts():
    M, K = 8, 5
    for name, a, ta in layouts((M, K), np.float64):
        for vname, v, tv in vectors(K, np.float64):
            np.testing.assert_allclose(to_np(ta @ tv), a @ v, rtol=1e-12, err_msg=f"{name} @ {vname}")
        for vname, v, tv in vectors(M, np.float64):
            np.testing.assert_allclose(to_np(tv @ ta), v @ a, rtol=1e-12, err_msg=f"{vname} @ {name}")


def test_transposed_matrix_times_vector_of_the_workload():
    X = rng.standard_normal((20_000, 64)).astype(np.float32)
    v = rng.standard_normal(20_000).astype(np.float32)
    w = rng.standard_normal(64).astype(np.float32)
    tX, tv, tw = put(X), put(v), put(w)
    ref = X.astype(np.float64)
    np.testing.assert_allclose(to_np(tX.T @ tv), ref.T @ v, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(to_np(tX @ tw), ref @ w, rtol=1e-4, atol=1e-4)


def test_matmul_with_reversed_operands_and_into_out_that_aliases_an_operand():
    a = rng.standard_normal((6, 6))
    ta = put(a)
    np.testing.assert_allclose(to_np(ta[::-1] @ ta[:, ::-1]), a[::-1] @ a[:, ::-1], rtol=1e-12)
    v = rng.standard_normal(6)
    tv = put(v)
    xp.matmul(ta, tv, out=tv)  # out is an operand: computed aside, then copied
    np.testing.assert_allclose(to_np(tv), a @ v, rtol=1e-12)


def test_batched_matmul_with_a_transposed_operand_is_one_strided_batched_gemm(monkeypatch):
    q = rng.standard_normal((4, 16, 8)).astype(np.float32)
    k = rng.standard_normal((4, 16, 8)).astype(np.float32)
    tq, tk = put(q), put(k)
    calls = Calls(monkeypatch)
    got = to_np(tq @ xp.matrix_transpose(tk))
    np.testing.assert_allclose(got, q @ k.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    assert calls.gemm == 1


# --- reductions -------------------------------------------------------------------------------------

def data(shape, dtype):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 7, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_arg_reductions_along_each_axis(name, dtype):
    a = data((5, 6, 7), dtype)
    if np.dtype(dtype).kind in "iu":
        a[1, 2, :] = a[1, 2, 0]  # ties: the first index wins
    f, ref = getattr(xp, name), getattr(np, name)
    x = put(a)
    assert int(to_np(f(x))) == ref(a)
    for axis in range(a.ndim):
        np.testing.assert_array_equal(to_np(f(x, axis=axis)), ref(a, axis=axis))
        np.testing.assert_array_equal(to_np(f(x, axis=axis, keepdims=True)), ref(a, axis=axis, keepdims=True))
    t = xp.permute_dims(put(a), (2, 0, 1))
    at = a.transpose(2, 0, 1)
    assert int(to_np(f(t))) == ref(at)  # the flattened index of a non-contiguous array: C order of the view
    for axis in range(3):
        np.testing.assert_array_equal(to_np(f(t, axis=axis)), ref(at, axis=axis))
    s = put(a)[:, ::2, ::-1]
    np.testing.assert_array_equal(to_np(f(s, axis=1)), ref(a[:, ::2, ::-1], axis=1))
    assert int(to_np(f(s))) == ref(a[:, ::2, ::-1])


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_arg_reductions_pick_the_first_nan_in_long_rows(name):
    a = rng.standard_normal((3, 5000)).astype(np.float32)
    a[0, [4000, 17, 2500]] = np.nan
    a[2, 4999] = np.nan
    f, ref = getattr(xp, name), getattr(np, name)
    x = put(a)
    np.testing.assert_array_equal(to_np(f(x, axis=1)), ref(a, axis=1))
    np.testing.assert_array_equal(to_np(f(x.T, axis=0)), ref(a.T, axis=0))
    assert int(to_np(f(x))) == ref(a) == 17


def test_argmin_of_the_workload_shape():
    D = rng.standard_normal((200_000, 16)).astype(np.float32)
    np.testing.assert_array_equal(to_np(xp.argmin(put(D), axis=1)), np.argmin(D, axis=1))


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "count_nonzero"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint16, np.complex64, np.bool_])
def test_reductions_along_axes(name, dtype):
    kind = np.dtype(dtype).kind
    if (name == "mean" and kind not in "fc") or (name in ("max", "min") and kind in "cb") \
            or (name == "sum" and kind == "b"):
        pytest.skip(f"{name} does not take {np.dtype(dtype).name}")
    a = data((6, 5, 40), dtype)
    f, ref = getattr(xp, name), getattr(np, name)
    tol = 1e-12 if kind in "iub" or dtype in (np.float64, np.complex128) else 1e-5
    views = [(a, put(a)), (a[:, ::-2, 3:], put(a)[:, ::-2, 3:]), (a.transpose(2, 0, 1), xp.permute_dims(put(a), (2, 0, 1)))]
    for v, x in views:
        for axis in (None, 0, 1, 2, (0, 2), (1, 2), ()):
            if axis == () and name == "count_nonzero":
                continue
            for keepdims in (False, True):
                want = ref(v, axis=axis, keepdims=keepdims)
                got = to_np(f(x, axis=axis, keepdims=keepdims))
                assert got.shape == np.shape(want), (axis, keepdims)
                if name == "sum" and kind in "iu":
                    assert got.dtype == np.dtype(np.int64 if kind == "i" else np.uint64)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 40, err_msg=f"{name} {axis} {keepdims}")


def test_reductions_write_into_a_strided_out():
    a = rng.standard_normal((8, 30)).astype(np.float32)
    holder = xp.zeros((8, 3), dtype=xp.float32, device=DEV)
    out = holder[:, 1]
    xp.max(put(a), axis=1, out=out)
    want = np.zeros((8, 3), np.float32)
    want[:, 1] = a.max(axis=1)
    np.testing.assert_array_equal(to_np(holder), want)
    xp.sum(put(a), axis=1, out=out)
    np.testing.assert_allclose(to_np(holder)[:, 1], a.sum(axis=1), rtol=1e-5)
    assert not to_np(holder)[:, [0, 2]].any()


def test_max_and_min_propagate_nan_and_integer_sums_widen():
    a = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]], np.float32)
    x = put(a)
    np.testing.assert_array_equal(to_np(xp.max(x, axis=1)), [np.nan, np.inf])
    np.testing.assert_array_equal(to_np(xp.min(x, axis=0)), [1.0, np.nan, 0.0])
    big = np.full(5000, 2 ** 30, np.int32)
    assert int(to_np(xp.sum(put(big)))) == 5000 * 2 ** 30


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64, np.complex64])
def test_sums_of_small_and_large_arrays(dtype):
    from numr_array.backends.cuda._direct_elementwise import SMALL_SUM
    for n in (1, 8, 257, SMALL_SUM, SMALL_SUM + 1):
        a = data((n,), dtype)
        want = a.sum()  # NumPy's integer sums widen as the standard's do
        # floating sums in another order than NumPy's: compared with the exact (float64 or integer) sum,
        # within a few ulp of the dtype per term magnitude (a sum of signed terms may cancel to near 0)
        eps = {np.float32: 2e-6, np.complex64: 2e-6, np.float64: 1e-14, np.complex128: 1e-14}.get(dtype, 0)
        wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) if eps else a
        for x, ref, part in ((put(a), want, wide), (put(a)[::2], a[::2].sum(), wide[::2]),
                             (xp.reshape(put(a), (1, n)), want, wide)):
            got = to_np(xp.sum(x))
            assert got.dtype == np.asarray(ref).dtype
            np.testing.assert_allclose(got, part.sum(), rtol=0, atol=eps * np.abs(part).sum())
        o = xp.empty((1, 1), dtype=xp.float64, device=DEV) if dtype == np.float64 else None
        if o is not None:
            xp.sum(xp.reshape(put(a), (1, n)), keepdims=True, out=o)
            np.testing.assert_allclose(to_np(o)[0, 0], want, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("shape,dtype", [((3000,), np.float32), ((1,), np.float32), ((257,), np.float64),
                                         ((40, 75), np.float32), ((1 << 14,), np.float32),
                                         (((1 << 14) + 1,), np.float32), ((5, 4000), np.float64)])
def test_a_captured_sum_gives_the_eager_bits(shape, dtype, seed, monkeypatch):
    # data of its own generator: the module's rng made this test's data depend on the tests run before it
    from numr_array.backends.cuda._direct_elementwise import SMALL_SUM
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    x = put(a)
    direct = client._direct
    calls = []
    sum_at = direct.sum_at
    monkeypatch.setattr(direct, "sum_at", lambda *args: (calls.append(args[2:]), sum_at(*args))[1])
    eager = to_np(xp.sum(x))
    # (eagerly the compiled call may launch the same kernel from C, without sum_at: numr_array._speedups)
    assert calls in ([], [(a.size, a.dtype, a.dtype)]) if a.size <= SMALL_SUM else calls == []
    calls.clear()
    with xp.capture(DEV) as g:
        s = xp.sum(x)
    g.replay()
    assert to_np(s).tobytes() == eager.tobytes()
    # a small sum is one block of the direct kernel, with the same count and dtypes
    assert calls == ([(a.size, a.dtype, a.dtype)] if a.size <= SMALL_SUM else [])
    # against the exact sum within a few units of float32/float64 per term magnitude: a sum of signed terms
    # can land near 0, where a relative tolerance (rtol=1e-5 here before) fails for some data
    wide = a.astype(np.float64)
    eps = 2e-6 if dtype == np.float32 else 1e-14
    assert abs(float(eager) - wide.sum()) <= eps * np.abs(wide).sum()


def test_the_cublas_workspace_follows_the_gpu_generation():
    from numr_array.backends.cuda._blas import workspace_bytes
    assert workspace_bytes("90") == workspace_bytes("100") == 32 << 20
    assert workspace_bytes("80") == workspace_bytes("75") == 4 << 20
    assert client.blas()._workspace.mem.size >= workspace_bytes(cupy.cuda.Device(0).compute_capability)


def test_the_cublas_workspace_is_outside_the_pool():
    # as CuPy's own handle's: the pool (memory_stats, CuPy's hooks) counts tensors alone on both sides
    ws = client.blas()._workspace.mem
    assert type(ws) is cupy.cuda.memory.Memory
    before = client.pool.used_bytes()
    a = xp.ones((64, 64), device=DEV)
    b = a @ a  # a product through the handle takes nothing from the pool but its result
    assert client.pool.used_bytes() - before == a.nbytes + b.nbytes


# --- where --------------------------------------------------------------------------------------------

def test_where_broadcasts_casts_and_takes_scalars_as_arguments():
    h = rng.standard_normal((64, 32)).astype(np.float32)
    H = put(h)
    np.testing.assert_array_equal(to_np(xp.where(H > 0, H, 0.01 * H)), np.where(h > 0, h, np.float32(0.01) * h))
    np.testing.assert_array_equal(to_np(xp.where(H > 0, H, 0.0)), np.where(h > 0, h, np.float32(0)))
    np.testing.assert_array_equal(to_np(xp.where(H > 0, -1.5, H)), np.where(h > 0, np.float32(-1.5), h))
    c = rng.random(32) < 0.5
    i = rng.standard_normal((64, 1)).astype(np.float32)
    d = rng.standard_normal(32)
    got = to_np(xp.where(put(c), put(i), put(d)))  # float32 and float64 broadcast to (64, 32): float64
    np.testing.assert_array_equal(got, np.where(c, i, d))
    assert got.dtype == np.float64
    j8, j16 = rng.integers(-5, 5, 32).astype(np.int8), rng.integers(-300, 300, (64, 32)).astype(np.int16)
    np.testing.assert_array_equal(to_np(xp.where(put(c), put(j8), put(j16)[::-1])), np.where(c, j8, j16[::-1]))
    z = (rng.standard_normal(32) + 1j * rng.standard_normal(32)).astype(np.complex64)
    np.testing.assert_array_equal(to_np(xp.where(put(c), put(z), put(h[0]))), np.where(c, z, h[0]))
    o = xp.zeros((64, 32), dtype=xp.float32, device=DEV)
    xp.where(H > 0, H, 2.0, out=o)
    np.testing.assert_array_equal(to_np(o), np.where(h > 0, h, np.float32(2)))


# --- copies, uploads, bind --------------------------------------------------------------------------

def test_concat_of_slices_and_other_copies():
    u = rng.random(10_001).astype(np.float32)
    t = put(u)
    np.testing.assert_array_equal(to_np(xp.concat([t[:1], t[1:-1] * 2.0, t[-1:]])), np.concatenate([u[:1], u[1:-1] * 2, u[-1:]]))
    a = rng.standard_normal((5, 7))
    ta = put(a)
    for axis in (0, 1):
        np.testing.assert_array_equal(to_np(xp.concat([ta, ta[:, ::-1], ta[1:4] if axis == 0 else ta[:, 2:]], axis=axis)),
                                      np.concatenate([a, a[:, ::-1], a[1:4] if axis == 0 else a[:, 2:]], axis=axis))
    np.testing.assert_array_equal(to_np(xp.concat([ta[:, :1], ta[:, 3:4]], axis=None)), np.concatenate([a[:, :1], a[:, 3:4]], axis=None))
    np.testing.assert_array_equal(to_np(xp.stack([ta, ta[::-1]])), np.stack([a, a[::-1]]))


def test_contiguous_copies_are_one_memcpy_and_overlap_is_refused():
    t = put(np.arange(10, dtype=np.float32))
    d = xp.empty(4, dtype=xp.float32, device=DEV)
    direct = client._direct
    assert direct.try_copy(t[2:6], d)
    assert to_np(d).tolist() == [2, 3, 4, 5]
    assert not direct.try_copy(t[0:4], t[2:6])  # overlapping
    assert not direct.try_copy(t[::2][:4], d)  # strided
    assert not direct.try_copy(xp.astype(t[:4], xp.float64), d)  # another dtype


@pytest.mark.parametrize("value,dtype", [(True, xp.bool), (-3, xp.int8), (40000, xp.uint16), (-7, xp.int32),
                                         (2 ** 40 + 3, xp.int64), (2 ** 64 - 2, xp.uint64), (1.5, xp.float32),
                                         (-2.25, xp.float64), (1 - 2j, xp.complex64), (3.5 + 1e300j, xp.complex128)])
def test_small_uploads_written_by_a_kernel(value, dtype):
    x = xp.asarray(value, dtype=dtype, device=DEV)
    np.testing.assert_array_equal(to_np(x), to_np(xp.asarray(value, dtype=dtype)))  # the CPU's bytes


def test_uploads_of_up_to_sixteen_bytes_and_beyond():
    for n in (1, 2, 3, 5, 8, 15, 16, 17, 40):
        a = rng.integers(0, 256, n).astype(np.uint8)
        np.testing.assert_array_equal(to_np(put(a)), a)
    for a in (np.array([1.25, -3.0]), np.array([7, 8, 9], np.int32), np.array([1 + 2j], np.complex128)):
        np.testing.assert_array_equal(to_np(put(a)), a)
    buf = xp.zeros(9, dtype=xp.uint8, device=DEV)
    client.copy_to_device(np.array([1, 2, 3], np.uint8), buf._buf, 5)  # an odd destination address
    assert to_np(buf).tolist() == [0, 0, 0, 0, 0, 1, 2, 3, 0]


def test_bind_runs_direct_ops_and_falls_back_for_the_rest():
    a = rng.standard_normal(8).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    x, y = put(a), put(b)
    o = xp.empty(8, dtype=xp.float32, device=DEV)
    client.bind("add", {"dtype": xp.float32})((x, y), (o,))
    np.testing.assert_array_equal(to_np(o), a + b)
    client.bind("multiply", {"dtype": xp.float32})((x, np.float32(2.0)), (o,))
    np.testing.assert_array_equal(to_np(o), a * np.float32(2))
    client.bind("add", {"dtype": xp.float32})((x[::-1], y), (o,))  # strided: the direct launcher refuses it
    np.testing.assert_array_equal(to_np(o), a[::-1] + b)
    client.bind("exp", {"dtype": xp.float32})((x,), (o,))  # not a direct op
    np.testing.assert_allclose(to_np(o), np.exp(a), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_direct_unary_ops_give_cupys_bits(dtype):
    from numr_array.backends.cuda._direct_elementwise import UNARY
    a = (rng.standard_normal(300) * 3).astype(dtype)
    a[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dtype).tiny / 4, -1.0, 1e-30]
    x = put(a)
    for name in UNARY:
        got = to_np(getattr(xp, name)(x))
        assert (name, np.dtype(dtype), "u") in client._direct._functions, name
        with np.errstate(all="ignore"):
            want = cupy.asnumpy(getattr(cupy, {"abs": "absolute"}.get(name, name))(cupy.asarray(a)))
        np.testing.assert_array_equal(got, want, strict=True, err_msg=name)  # the bits a capture records
        with np.errstate(all="ignore"):
            ref = getattr(np, name)(a)
        np.testing.assert_allclose(got, ref, rtol=4e-6 if dtype == np.float32 else 1e-14, equal_nan=True,
                                   err_msg=name)


def test_binary_ops_with_one_broadcast_element_launch_directly():
    a = rng.standard_normal(1000).astype(np.float32)
    s = np.float32(0.75)
    x, t = put(a), put(np.array(s))
    np.testing.assert_array_equal(to_np(t * x), s * a)
    np.testing.assert_array_equal(to_np(x - t), a - s)
    np.testing.assert_array_equal(to_np(x / put(np.array([s]))), a / s)  # a (1,) array broadcast too
    np.testing.assert_array_equal(to_np(x > t), a > s)
    keys = client._direct._functions
    assert {("multiply", np.dtype(np.float32), "pt"), ("subtract", np.dtype(np.float32), "tp"),
            ("greater", np.dtype(np.float32), "tp")} <= set(keys)
    xs = put(rng.standard_normal((4, 5)))
    np.testing.assert_allclose(to_np(xs + put(np.ones((4, 1)))), to_np(xs) + 1)  # a column: CuPy's way


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_one_dim_transforms_written_into_the_result(norm):
    r = rng.standard_normal((3, 40))
    z = r + 1j * rng.standard_normal((3, 40))
    tol = {np.float32: 2e-5, np.float64: 1e-12, np.complex64: 2e-5, np.complex128: 1e-12}
    for a in (r.astype(np.float32), r, z.astype(np.complex64), z):
        t = put(a)
        scale = np.abs(a).max() * a.shape[-1]
        for n in (None, 40, 57, 25):
            for axis in (-1, 0):
                if a.dtype.kind == "f":
                    got, want = xp.fft.rfft(t, n=n, axis=axis, norm=norm), np.fft.rfft(a, n=n, axis=axis, norm=norm)
                    assert to_np(got).dtype == np.result_type(a.dtype, np.complex64)
                    np.testing.assert_allclose(to_np(got), want, atol=tol[a.dtype.type] * scale)
                    back = xp.fft.irfft(got, n=n, axis=axis, norm=norm)
                    np.testing.assert_allclose(to_np(back), np.fft.irfft(want, n=n, axis=axis, norm=norm),
                                               atol=tol[a.dtype.type] * scale)
                for f, g in ((xp.fft.fft, np.fft.fft), (xp.fft.ifft, np.fft.ifft)):
                    got = to_np(f(t, n=n, axis=axis, norm=norm))
                    assert got.dtype == np.result_type(a.dtype, np.complex64)
                    np.testing.assert_allclose(got, g(a, n=n, axis=axis, norm=norm), atol=tol[a.dtype.type] * scale)


def test_fft_convolution_of_the_workload():
    x = rng.standard_normal(5000).astype(np.float32)
    h = (rng.standard_normal(65) / 65).astype(np.float32)
    n = x.size + h.size - 1
    tx, th = put(x), put(h)
    got = to_np(xp.fft.irfft(xp.fft.rfft(tx, n=n) * xp.fft.rfft(th, n=n), n=n))
    np.testing.assert_allclose(got, np.convolve(x.astype(np.float64), h), atol=1e-5)
    assert to_np(tx).tobytes() == x.tobytes()  # the inputs are left as they were


def test_last_axis_transforms_of_contiguous_arrays_are_cufft_calls_of_their_own(monkeypatch):
    # no cupy.fft step (zero padding by cupy.zeros, its plan cache, its C2R copy, its in-place normalisation)
    cupy_fft = cupy.fft._fft

    def refuse(*args, **kwargs):
        raise AssertionError("cupy.fft's own steps were used")

    monkeypatch.setattr(cupy_fft, "_exec_fft", refuse)
    monkeypatch.setattr(cupy_fft, "_cook_shape", refuse)
    x = rng.standard_normal((2, 3000)).astype(np.float32)
    h = (rng.standard_normal((2, 33)) / 33).astype(np.float32)
    n = 3000 + 33 - 1
    tx, th = put(x), put(h)
    spec = xp.fft.rfft(tx, n=n) * xp.fft.rfft(th, n=n)
    before = to_np(spec)
    got = xp.fft.irfft(spec, n=n)
    assert to_np(spec).tobytes() == before.tobytes()  # cuFFT's C2R overwrote a copy, not the spectrum
    want = np.stack([np.convolve(x[k].astype(np.float64), h[k]) for k in range(2)])
    np.testing.assert_allclose(to_np(got), want, atol=2e-5)
    z = (rng.standard_normal(512) + 1j * rng.standard_normal(512)).astype(np.complex64)
    for norm in ("backward", "ortho", "forward"):
        for f, g, n in ((xp.fft.ifft, np.fft.ifft, 600), (xp.fft.fft, np.fft.fft, 300)):
            want = g(z, n=n, norm=norm)
            np.testing.assert_allclose(to_np(f(put(z), n=n, norm=norm)), want, atol=1e-5 * np.abs(want).max())
    # captured: the padded copies come from the graph's arena; a replay on new data gives eager's bits
    with xp.capture(device=DEV) as g:
        conv = xp.fft.irfft(xp.fft.rfft(tx, n=n) * xp.fft.rfft(th, n=n), n=n)
    tx[...] = put(x[:, ::-1].copy())
    g.replay()
    eager = xp.fft.irfft(xp.fft.rfft(tx, n=n) * xp.fft.rfft(th, n=n), n=n)
    assert to_np(conv).tobytes() == to_np(eager).tobytes()


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_add_subtract_multiply_are_direct_kernels(dtype):
    # two arrays, an array and a broadcast element, and strided operands; CuPy's complex operators, so CuPy's
    # bits (a scalar operand, and other ops, stay CuPy's ufuncs)
    def z(shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    a, b, e = z((5, 301)), z((5, 301)), z(())
    x, y, s = put(a), put(b), put(e)
    before = set(client._direct._functions)
    for name in ("add", "subtract", "multiply"):
        f, g = getattr(xp, name), getattr(cupy, name)
        for got, want in ((f(x, y), g(cupy.asarray(a), cupy.asarray(b))),
                          (f(x, s), g(cupy.asarray(a), cupy.asarray(e))),
                          (f(s, y), g(cupy.asarray(e), cupy.asarray(b))),
                          (f(xp.matrix_transpose(x), y[:, ::-1].T), g(cupy.asarray(a).T, cupy.asarray(b)[:, ::-1].T))):
            assert to_np(got).tobytes() == cupy.asnumpy(want).tobytes(), name
    made = set(client._direct._functions) - before
    d = np.dtype(dtype)
    assert {("multiply", d, "tt"), ("add", d, "pt"), ("subtract", d, "tp"), ("multiply", d, "bc")} <= made | before
    np.testing.assert_allclose(to_np(x * 2j), a * 2j, rtol=1e-6)  # (a scalar: CuPy's ufunc)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_products_of_two_vectors(dtype):
    # up to SMALL_SUM elements one block of the direct launcher's dot kernel (cuBLAS's gemv of one output is a
    # split-K product and a reduction kernel), beyond it cuBLAS; vecdot and matmul give the same bits
    from numr_array.backends.cuda._direct_elementwise import SMALL_SUM
    for n in (1, 7, 2048, SMALL_SUM, SMALL_SUM + 1, 100_000):
        a, b = data((n,), dtype), data((n,), dtype)
        x, y = put(a), put(b)
        got = to_np(xp.vecdot(x, y))
        assert got.dtype == dtype and got.shape == ()
        assert to_np(x @ y).tobytes() == got.tobytes()
        scale = np.abs(a.astype(np.float64) * b).sum()
        assert abs(got - a.astype(np.float64) @ b) <= (1e-6 if dtype == np.float32 else 1e-14) * scale, n
    assert ("dot", np.dtype(dtype)) in client._direct._functions
    x, y = put(data((3000,), dtype)), put(data((3000,), dtype))
    eager = to_np(xp.vecdot(x, y))
    with xp.capture(device=DEV) as g:
        r = xp.vecdot(x, y)
    g.replay()
    assert to_np(r).tobytes() == eager.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_sorting_a_few_long_rows(dtype):
    from numr_array.backends.cuda._kernels import SORT_ROW_MIN
    n = SORT_ROW_MIN + 5
    a = data((n, 3), dtype)
    if np.dtype(dtype).kind == "f":
        a[[5, 77, 9000], [0, 1, 2]] = np.nan
        a[[6, 78, 9001], [0, 1, 2]] = -np.nan  # a radix sort of the bits put -NaN before -inf
        a[100:110, 0] = -0.0
        a[110:120, 0] = 0.0
    x = put(a)
    for axis, v, ref in ((0, x, a), (1, x, a), (-1, x.T, a.T), (0, x.T, a.T), (0, x[:, ::2], a[:, ::2])):
        got = to_np(xp.sort(v, axis=axis))
        np.testing.assert_array_equal(got, np.sort(ref, axis=axis, kind="stable"), strict=True)
        if np.dtype(dtype).kind == "f":  # signed zeros keep their order (a stable sort), as in NumPy
            assert np.array_equal(np.signbit(got), np.signbit(np.sort(ref, axis=axis, kind="stable")))
            np.testing.assert_array_equal(to_np(xp.argsort(v, axis=axis)), np.argsort(ref, axis=axis, kind="stable"))
    np.testing.assert_array_equal(to_np(xp.sort(x, axis=0, descending=True)), np.flip(np.sort(np.flip(a, 0), axis=0, kind="stable"), 0))
