"""The CUDA backend against NumPy and against the CPU backend: element-wise, creation, reductions, matmul,
indexing, errors, copies, streams, the memory pool (release threshold, out-of-memory)."""

import gc

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

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

FLOATS = [xp.float32, xp.float64]
NUMERIC = [xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64] + FLOATS + [
    xp.complex64, xp.complex128]


def on(a, device=DEV):
    return xp.asarray(a, device=device)


def same(t, expected, rtol=None, atol=None):
    """``t`` (a CUDA tensor) holds ``expected``: shape, dtype and values (NaN equal to NaN); within
    ``rtol`` and ``atol`` (which defaults to ``rtol``) where a tolerance is given."""
    expected = np.asarray(expected)
    assert t.device == dev
    assert t.shape == expected.shape
    assert t.dtype == expected.dtype
    got = to_np(t)
    if rtol is None:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol if atol is None else atol, equal_nan=True)


def close(dtype) -> float:
    """A relative tolerance of a few ulps of NumPy float or complex ``dtype`` (float64 near 1e-12)."""
    return 1e-6 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


@st.composite
def cuda_arrays(draw, dtypes, shape=None, elements=None):
    """(CUDA tensor, its values as NumPy): contiguous, strided or reversed."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)) if shape is None else shape
    if elements is None and dtype.kind == "f":
        elements = st.floats(-100, 100, width=32 if dtype is xp.float32 else 64)
    if elements is None and dtype.kind == "c":  # (NumPy's sign of a huge or tiny z is off)
        elements = st.complex_numbers(max_magnitude=1e6, allow_subnormal=False,
                                      width=64 if dtype is xp.complex64 else 128)
    a = draw(hnp.arrays(dtype, shape, elements=elements))
    kind = draw(st.sampled_from(["contiguous", "strided", "reversed"])) if a.ndim and a.size else "contiguous"
    if kind == "contiguous":
        return on(a), a
    if kind == "strided":
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        return on(big)[..., ::2], a
    return on(a[..., ::-1].copy())[..., ::-1], a


def test_device_is_listed_and_default_dtypes_are_64_bit():
    assert dev in xp.__array_namespace_info__().devices()
    d = xp.__array_namespace_info__().default_dtypes(device=DEV)
    assert d["real floating"] == xp.float64 and d["integral"] == xp.int64


def test_raw_handle_gives_the_non_blocking_compute_stream():
    h = client.raw_handle
    assert h.device.id == 0
    assert h.stream.is_non_blocking and h.copy_stream.is_non_blocking
    assert h.stream.ptr != h.copy_stream.ptr


def test_kernels_run_on_the_compute_stream():
    seen = []
    client.kernels["_probe"] = lambda ins, outs, p: seen.append(cupy.cuda.get_current_stream().ptr)
    try:
        x = on(np.ones(3))
        client.launch("_probe", (x,), (x,), {})
    finally:
        del client.kernels["_probe"]
    assert seen == [client.stream.ptr]


# --- element-wise ---------------------------------------------------------------------------------------
UNARY = {"abs": np.abs, "negative": np.negative, "square": np.square, "sign": np.sign}
UNARY_FLOAT = {"sqrt": np.sqrt, "exp": np.exp, "sin": np.sin, "log1p": np.log1p, "floor": np.floor,
               "round": np.round, "isnan": np.isnan, "signbit": np.signbit}


@given(cuda_arrays(NUMERIC), st.sampled_from(sorted(UNARY)))
def test_unary_numeric_matches_numpy(xa, name):
    x, a = xa
    with np.errstate(all="ignore"):
        expected = UNARY[name](a)
    if name == "abs" and a.dtype.kind == "c":
        expected = expected.astype(a.real.dtype)
    got = getattr(xp, name)(x)
    if a.dtype.kind not in "fc":
        same(got, expected)
    elif name == "square" and a.dtype.kind == "c":
        # the real part a*a - b*b cancels: its error is absolute, a few ulps of |z|**2 (elementwise)
        g = to_np(got)
        assert g.dtype == expected.dtype and g.shape == expected.shape
        bound = close(a.dtype) * np.abs(expected) + 4 * np.finfo(a.dtype).eps * np.abs(a) ** 2
        assert np.all(np.abs(g - expected) <= bound), (a, g, expected)
    else:
        same(got, expected, rtol=close(a.dtype))


@given(cuda_arrays(FLOATS), st.sampled_from(sorted(UNARY_FLOAT)))
def test_unary_float_matches_numpy(xa, name):
    x, a = xa
    with np.errstate(all="ignore"):
        expected = UNARY_FLOAT[name](a)
    rtol = 1e-5 if a.dtype == np.float32 else 1e-12
    same(getattr(xp, name)(x), expected, rtol=rtol if expected.dtype.kind == "f" else None)


BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
          "less": np.less, "equal": np.equal}


@given(st.data(), st.sampled_from([xp.int8, xp.int32, xp.uint16, xp.int64, xp.float32, xp.float64]),
       st.sampled_from(sorted(BINARY)))
def test_binary_with_broadcasting_matches_numpy(data, dtype, name):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    other = data.draw(hnp.broadcastable_shapes(shape, min_dims=0, max_dims=3, min_side=0))
    x, a = data.draw(cuda_arrays([dtype], shape))
    y, b = data.draw(cuda_arrays([dtype], other))
    with np.errstate(all="ignore"):
        expected = BINARY[name](a, b)
    same(getattr(xp, name)(x, y), expected)


@given(st.data(), st.sampled_from([xp.int8, xp.int32, xp.int64, xp.uint8, xp.float64]))
def test_floor_divide_and_remainder_match_cpu(data, dtype):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    x, a = data.draw(cuda_arrays([dtype], shape))
    y, b = data.draw(cuda_arrays([dtype], shape))
    for name in ("floor_divide", "remainder"):
        with np.errstate(all="ignore"):
            expected = to_np(getattr(xp, name)(on(a, "cpu"), on(b, "cpu")))
        same(getattr(xp, name)(x, y), expected)


def same_complex(t, expected):
    """Part by part, so that inf + NaN j and NaN + NaN j differ (assert_array_equal calls both NaN)."""
    same(xp.real(t), np.real(expected))
    same(xp.imag(t), np.imag(expected))


def test_complex_division_reciprocal_and_sign_follow_numpy():
    inf, nan = np.inf, np.nan
    z = np.array([1 + 0j, 1j, 0j, complex(inf, 1), complex(1, nan), 3 + 4j, 1 + 1j])
    w = np.array([0j, 0j, 0j, 2 + 0j, 1 + 1j, 1e-300 + 1e300j, complex(0, -0.0)])
    with np.errstate(all="ignore"):
        same_complex(xp.divide(on(z), on(w)), z / w)
        same_complex(xp.reciprocal(on(w)), 1 / w)
        same_complex(xp.divide(on(z.astype(np.complex64)), 2.0), z.astype(np.complex64) / np.float32(2))
    s = np.array([complex(0, inf), 1 + 1.7e308j, complex(inf, inf), complex(inf, nan), 0j, 3 + 4j, complex(nan, 1)])
    with np.errstate(all="ignore"):
        same_complex(xp.sign(on(s)), np.sign(s))


def test_complex_logs_and_linspace_follow_numpy():
    z = np.array([complex(-2, -0.0), complex(-2, 0.0), 1e-3 + 1e-3j, complex(-1, 0)])
    with np.errstate(all="ignore"):
        same_complex(xp.log1p(on(z)), np.log1p(z))
    # C99's clog: an infinite part gives +inf + i arg(z), also with a NaN in the other part
    inf, nan = np.inf, np.nan
    s = np.array([complex(inf, nan), complex(nan, -inf), complex(-inf, 1), complex(-inf, inf), complex(1, -inf),
                  0j, complex(-0.0, 0.0), complex(nan, 1)])
    for dtype in (np.complex64, np.complex128):
        with np.errstate(all="ignore"):
            same_complex(xp.log(on(s.astype(dtype))), np.log(s.astype(dtype)))
            big = np.array([1 + 1.7976931348623157e308j, -1e308 - 1e308j, 3e-320 + 4e-320j]).astype(dtype)
            np.testing.assert_allclose(to_np(xp.log(on(big))), np.log(big), rtol=1e-6 if dtype == np.complex64 else 1e-15)
            for name in ("log2", "log10"):  # parts that scaling by 1/ln(base) leaves exact
                exact = s[[0, 1, 5]].astype(dtype)
                same_complex(getattr(xp, name)(on(exact)), getattr(np, name)(exact))
    same(xp.linspace(1 + 2j, 3 - 1j, 4, device=DEV), np.linspace(1 + 2j, 3 - 1j, 4), rtol=1e-15)
    same(xp.linspace(0, 2 + 1j, 3, endpoint=False, dtype=xp.complex64, device=DEV),
         np.linspace(0, 2 + 1j, 3, endpoint=False, dtype=np.complex64), rtol=1e-7)


def test_complex_tanh_acosh_special_values_follow_c99():
    inf, nan = np.inf, np.nan
    for dtype in (np.complex64, np.complex128):
        z = np.array([complex(0.0, inf), complex(-0.0, nan), complex(0.0, nan), 1 + 2j], dtype)
        got = to_np(xp.tanh(on(z)))
        assert np.array_equal(np.signbit(got.real[:3]), [False, True, False]) and (got.real[:3] == 0).all()
        assert np.isnan(got.imag[:3]).all()
        np.testing.assert_allclose(got[3], np.tanh(z[3]), rtol=close(dtype))
        got = to_np(xp.acosh(on(z[1:3])))
        assert np.isnan(got.real).all() and np.allclose(np.abs(got.imag), np.pi / 2)


def test_repeat_with_counts_keeps_signed_zeros():
    a = np.array([[0.0, -0.0, 1.5], [-0.0, 0.0, 2.0]], np.float32)
    for axis in (None, 0, 1):
        counts = [2, 1] if axis == 0 else [1, 3, 2] if axis == 1 else [1, 2, 1, 3, 1, 2]
        want = np.repeat(a, counts, axis)
        got = to_np(xp.repeat(on(a), on(np.array(counts)), axis=axis))
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_fft_with_axes_in_any_order_matches_numpy(name):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
    a = z.real if name == "rfftn" else z
    f = getattr(xp.fft, name)
    for s, axes in (((5, 3), (1, 0)), ((4, 6, 2), (2, 0, 1)), ((3, 8), (0, 2))):
        want = getattr(np.fft, name)(a, s=s, axes=axes)
        got = to_np(f(on(a), s=s, axes=axes))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_hypot_and_full_of_negative_zero_follow_numpy():
    big = np.finfo(np.float64).max
    a = np.array([1.0, big, 3.0, np.inf, np.nan, 0.0])
    b = np.array([big, big / 2, 4.0, np.nan, np.inf, 0.0])
    np.testing.assert_allclose(to_np(xp.hypot(on(a), on(b))), np.hypot(a, b), rtol=1e-15)
    same(xp.hypot(on(a[:1]), float(big)), np.hypot(a[:1], big))
    for dtype in (xp.float32, xp.float64, xp.complex64, xp.complex128):
        for v in (-0.0, complex(0.0, -0.0)):
            if isinstance(v, complex) and dtype.kind != "c":
                continue
            got, want = to_np(xp.full((3,), v, dtype=dtype, device=DEV)), np.full((3,), v, dtype)
            # CuPy fills zeros with a memset: the signs must survive it
            assert np.array_equal(np.signbit(np.real(got)), np.signbit(np.real(want)))
            assert np.array_equal(np.signbit(np.imag(got)), np.signbit(np.imag(want)))


def test_minimum_maximum_signed_zeros_and_nan_follow_numpy():
    a = np.array([0.0, -0.0, np.nan, 1.0, -0.0, 2.0], np.float32)
    b = np.array([-0.0, 0.0, 1.0, np.nan, -0.0, 1.0], np.float32)
    for name in ("minimum", "maximum"):
        r, e = getattr(xp, name)(on(a), on(b)), getattr(np, name)(a, b)
        same(r, e)
        assert np.array_equal(np.signbit(to_np(r)), np.signbit(e))


def test_python_scalars_and_out():
    x = on(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = xp.empty((2, 3), dtype=xp.float32, device=DEV)
    r = xp.multiply(x, 2.5, out=out)
    assert r is out
    same(out, np.arange(6, dtype=np.float32).reshape(2, 3) * np.float32(2.5))
    x += 1
    same(x, np.arange(6, dtype=np.float32).reshape(2, 3) + 1)


def test_errors_are_the_cpu_errors():
    for device in ("cpu", DEV):
        x = xp.ones((2, 3), device=device)
        with pytest.raises(TypeError):
            xp.bitwise_and(x, x)
        with pytest.raises(ValueError):
            xp.add(x, xp.ones((4,), device=device))
        with pytest.raises(TypeError):
            xp.add(x, xp.ones((2, 3), dtype=xp.float32, device=device), out=xp.empty((2, 3), dtype=xp.int8, device=device))
    with pytest.raises(ValueError):
        xp.add(xp.ones(3, device=DEV), xp.ones(3, device="cpu"))


def test_float32_subnormals_survive_as_on_cpu():
    # CuPy alone would flush them (it compiles with -ftz=true); the CUDA runtime compiles with -ftz=false
    assert client.keeps_float32_subnormals
    a = np.array([1e-45, -3e-39], np.float32)
    same(on(a) + 0.0, a)
    same(xp.log(on(np.array([-1e-45], np.float32))), np.array([np.nan], np.float32))
    same(xp.sqrt(on(np.array([1e-40], np.float32))), np.sqrt(np.array([1e-40], np.float32)), rtol=1e-6)


def test_float64_subnormals_survive():
    a = np.array([5e-324, -1e-310])
    same(on(a) * 1.0, a)


def test_implicit_numpy_conversion_raises_type_error():
    with pytest.raises(TypeError):
        np.asarray(xp.ones(3, device=DEV))


# --- creation -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, expected", [
    (lambda: xp.zeros((2, 3), device=DEV), np.zeros((2, 3))),
    (lambda: xp.ones((0, 4), dtype=xp.int8, device=DEV), np.ones((0, 4), np.int8)),
    (lambda: xp.full((), 7, dtype=xp.int64, device=DEV), np.full((), 7, np.int64)),
    (lambda: xp.full((3,), 1 + 2j, device=DEV), np.full((3,), 1 + 2j)),
    (lambda: xp.arange(2, 11, 3, device=DEV), np.arange(2, 11, 3)),
    (lambda: xp.arange(0.0, 1.0, 0.25, dtype=xp.float32, device=DEV), np.arange(0.0, 1.0, 0.25, dtype=np.float32)),
    (lambda: xp.linspace(0, 1, 5, device=DEV), np.linspace(0, 1, 5)),
    (lambda: xp.eye(3, 4, k=1, dtype=xp.int32, device=DEV), np.eye(3, 4, k=1, dtype=np.int32)),
    (lambda: xp.tril(xp.ones((3, 3), device=DEV), k=-1), np.tril(np.ones((3, 3)), -1)),
    (lambda: xp.triu(xp.ones((2, 3, 3), device=DEV)), np.triu(np.ones((2, 3, 3)))),
])
def test_creation_matches_numpy(make, expected):
    same(make(), expected)


@given(cuda_arrays(NUMERIC + [xp.bool]))
def test_round_trip_through_the_host(xa):
    x, a = xa
    same(x, a)
    same(xp.asarray(x, copy=True), a)
    assert np.array_equal(to_np(x.to_device("cpu").to_device(DEV)), a)


# --- reductions -----------------------------------------------------------------------------------------
@given(cuda_arrays([xp.int32, xp.int64, xp.float32, xp.float64]), st.sampled_from(["sum", "prod", "max", "min"]),
       st.data())
def test_reductions_match_cpu(xa, name, data):
    x, a = xa
    axis = data.draw(st.none() | st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1)) if a.ndim else None
    if name in ("max", "min") and (a.size == 0 if axis is None else a.shape[axis] == 0):
        with pytest.raises(ValueError):
            getattr(xp, name)(x, axis=axis)
        return
    expected = getattr(xp, name)(on(a, "cpu"), axis=axis)
    got = getattr(xp, name)(x, axis=axis)
    if a.dtype.kind != "f":
        same(got, to_np(expected))
    elif a.dtype == np.float32:
        same(got, to_np(expected), rtol=1e-4)
    else:  # a sum in another order is off by up to n ulps of the sum of the magnitudes
        atol = a.size * float(np.finfo(a.dtype).eps) * float(np.sum(np.abs(a)))
        same(got, to_np(expected), rtol=1e-12, atol=max(atol, 1e-12))


def test_mean_std_var():
    a = np.random.default_rng(0).standard_normal((4, 5))
    x = on(a)
    same(xp.mean(x, axis=1), a.mean(axis=1), rtol=1e-12)
    same(xp.std(x, axis=0, correction=1), a.std(axis=0, ddof=1), rtol=1e-12)
    same(xp.var(x), a.var(), rtol=1e-12)


def test_sum_over_large_array():
    a = np.arange(1 << 20, dtype=np.float64)
    assert float(xp.sum(on(a))) == a.sum()


# --- matmul ---------------------------------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 1, 3, 4), (5, 4, 2)), ((1, 4), (4, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
                 ((3, 0, 2), (2, 4)), ((1, 1), (1, 1)), ((4, 1, 3), (1, 3, 2))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.complex64, xp.complex128, xp.int32, xp.int64])
def test_matmul_matches_numpy(shapes, dtype):
    rng = np.random.default_rng(1)
    s1, s2 = shapes
    a = (rng.standard_normal(s1) * 4).astype(dtype)
    b = (rng.standard_normal(s2) * 4).astype(dtype)
    if dtype.kind == "c":
        a = a + 1j * (rng.standard_normal(s1)).astype(dtype)
    rtol = {xp.float32: 1e-4, xp.complex64: 1e-4}.get(dtype, 1e-12 if dtype.kind != "i" else None)
    same(xp.matmul(on(a), on(b)), np.matmul(a, b), rtol=rtol)


@pytest.mark.parametrize("layout", ["transposed", "strided", "reversed", "broadcast-batch", "mixed-dtype"])
def test_matmul_of_views(layout):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 6, 5))
    b = rng.standard_normal((3, 5, 4))
    x, y = on(a), on(b)
    if layout == "transposed":
        x, a = xp.matrix_transpose(on(a.swapaxes(-1, -2).copy())), a
        y, b = xp.matrix_transpose(on(b.swapaxes(-1, -2).copy())), b
    elif layout == "strided":
        x, a = x[:, ::2, ::2], a[:, ::2, ::2]
        y, b = y[:, ::2, :], b[:, ::2, :]
    elif layout == "reversed":
        x, a = x[:, ::-1, ::-1], a[:, ::-1, ::-1]
    elif layout == "broadcast-batch":
        y, b = y[:1], b[:1]
    else:
        y, b = xp.astype(y, xp.float32), b.astype(np.float32)
    same(xp.matmul(x, y), np.matmul(a, b), rtol=1e-12)  # (float64 results: mixed-dtype promotes)


def test_matmul_out_strided_and_aliasing():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 4))
    x = on(a)
    big = xp.zeros((4, 8), device=DEV)
    xp.matmul(x, x, out=big[:, ::2])
    same(big[:, ::2], a @ a, rtol=1e-12)
    same(big[:, 1::2], np.zeros((4, 4)))
    xp.matmul(x, x, out=x)  # the result overwrites an operand: computed before it is written
    same(x, a @ a, rtol=1e-12)


def test_float_matmul_runs_through_our_cublas_handle():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((256, 512)).astype(np.float32)
    b = rng.standard_normal((512, 128)).astype(np.float32)
    r = xp.matmul(on(a), on(b))
    np.testing.assert_allclose(to_np(r), a @ b, rtol=1e-3, atol=1e-3)
    assert client._blas is not None  # the product went through our own handle


def test_tensordot_vecdot_match_numpy():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 4, 5))
    b = rng.standard_normal((4, 5, 2))
    same(xp.tensordot(on(a), on(b), axes=2), np.tensordot(a, b, axes=2), rtol=1e-12)
    same(xp.tensordot(on(a), on(b), axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])), rtol=1e-12)
    c = rng.standard_normal((3, 4, 5)) + 1j * rng.standard_normal((3, 4, 5))
    same(xp.vecdot(on(c), on(c[::-1])), np.vecdot(c, c[::-1]), rtol=1e-12)


def test_linalg_errors_match_cpu():
    singular = np.ones((3, 3))
    for device in ("cpu", DEV):
        with pytest.raises(np.linalg.LinAlgError):
            xp.linalg.inv(on(singular, device))
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    same(xp.linalg.inv(on(a)), np.linalg.inv(a), rtol=1e-12)
    same(xp.linalg.det(on(singular)), np.linalg.det(singular), rtol=1e-12)


# --- indexing -------------------------------------------------------------------------------------------
def test_basic_indexing_and_setitem_match_numpy():
    a = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    x = on(a)
    for key in [(1,), (slice(None), 2), (Ellipsis, slice(None, None, -2)), (slice(1, None), None, 3), (-1, -1, -1)]:
        same(x[key], a[key])
    b = a.copy()
    x[0, :, ::2] = 7
    b[0, :, ::2] = 7
    x[1] = on(np.full((4, 5), -1, np.int32))
    b[1] = -1
    same(x, b)


def test_integer_array_and_boolean_mask_indexing():
    a = np.arange(12.0).reshape(3, 4)
    x = on(a)
    same(x[on(np.array([2, 0]))], a[np.array([2, 0])])
    same(x[x > 5.0], a[a > 5.0])
    same(xp.take(x, on(np.array([3, 1])), axis=1), np.take(a, [3, 1], axis=1))


# --- copies, events, memory -----------------------------------------------------------------------------
def test_copies_through_the_client():
    a = np.arange(10, dtype=np.int16)
    t = on(a)
    out = np.empty(4, np.int16)
    client.copy_from_device(t._buf, 2 * 2, out)
    assert np.array_equal(out, a[2:6])
    client.copy_to_device(np.array([-5], np.int16), t._buf, 18)
    expected = a.copy()
    expected[9] = -5
    same(t, expected)


def test_out_of_memory_raises_memory_error_naming_the_size_and_recovers():
    gc.collect()  # the out-of-memory path collects garbage itself: start without any
    before = client.allocator.stats()
    nbytes = 1 << 46  # 64 TiB
    with pytest.raises(MemoryError, match=str(nbytes)):
        xp.empty((nbytes,), dtype=xp.uint8, device=DEV)
    assert client.allocator.stats() == before
    same(xp.ones(3, device=DEV) + 1, np.full(3, 2.0))


def test_pool_keeps_at_most_the_release_threshold_after_synchronize():
    pool = client.pool
    old = client.release_threshold, client.release_delay
    client.release_threshold, client.release_delay = 1 << 20, 0.0
    try:
        t = xp.empty((64 << 20,), dtype=xp.uint8, device=DEV)
        del t
        assert pool.free_bytes() >= 64 << 20  # cached until a synchronisation
        client.synchronize()
        assert pool.free_bytes() <= 1 << 20
    finally:
        client.release_threshold, client.release_delay = old


def test_pool_release_waits_for_the_delay():
    old = client.release_threshold, client.release_delay
    client.release_threshold, client.release_delay = 1 << 20, 3600.0
    try:
        t = xp.empty((64 << 20,), dtype=xp.uint8, device=DEV)
        del t
        client.synchronize()
        assert client.pool.free_bytes() >= 64 << 20  # a hot loop keeps its blocks
        client.release_delay = 0.0
        client.synchronize()
        assert client.pool.free_bytes() <= 1 << 20
    finally:
        client.release_threshold, client.release_delay = old


def test_release_threshold_comes_from_the_environment(monkeypatch):
    from numr_array.backends.cuda._client import release_threshold_bytes
    monkeypatch.delenv("NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB", raising=False)
    assert release_threshold_bytes() == 512 << 20
    monkeypatch.setenv("NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB", "64")
    assert release_threshold_bytes() == 64 << 20
    monkeypatch.setenv("NUMR_CUDA_POOL_RELEASE_THRESHOLD_MB", "lots")
    with pytest.raises(ValueError):
        release_threshold_bytes()


def test_allocator_accounts_cuda_bytes():
    before = client.allocator.stats()
    t = xp.empty((1000,), dtype=xp.float64, device=DEV)
    assert client.allocator.stats().bytes_in_use == before.bytes_in_use + 8000
    del t
    assert client.allocator.stats().bytes_in_use == before.bytes_in_use
