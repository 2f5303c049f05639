"""CUDA's direct element-wise launches (backends/cuda/_direct_elementwise.py) against NumPy, for every operator, dtype
and operand form they take, and the cases that must go to CuPy instead; and the CuPy results numr
replaces (complex abs, log, log1p and tan, argmin/argmax with NaNs, isin across signed and unsigned dtypes)."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)


DEV = "cuda:0"
client = xp._device.parse_device(DEV).client

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]
ARITH = ["add", "subtract", "multiply"]
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
BITWISE = ["bitwise_and", "bitwise_or", "bitwise_xor"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


def accepts(op: str, name: str) -> bool:
    if op in LOGICAL:
        return name == "bool"
    if op in BITWISE:
        return not name.startswith("float")
    if op == "divide":
        return name.startswith("float")
    if op in ARITH or op in COMPARE[2:]:
        return name != "bool"
    return True


def values(name: str, n: int, seed: int) -> np.ndarray:
    """Values of ``name`` that include its extremes (so that integer arithmetic wraps), NaN, inf, -0.0."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(name)
    if dtype.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        a[:3] = [info.min, info.max, 0]
        return a
    a = rng.standard_normal(n).astype(dtype) * 100
    a[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    return a


def direct_keys() -> set:
    return set(client._direct._functions)


@pytest.mark.parametrize("op", ARITH + ["divide"] + COMPARE + BITWISE + LOGICAL)
def test_direct_binary_matches_numpy(op):
    f = getattr(xp, op)
    ref = getattr(np, {"divide": "true_divide"}.get(op, op))
    for name in DTYPES:
        if not accepts(op, name):
            continue
        a, b = values(name, 37, 1), values(name, 37, 2)
        b[5:9] = a[5:9]  # some equal pairs for the comparisons
        with np.errstate(all="ignore"):
            want = ref(a, b)
            want_s = ref(a, b[7])
            want_r = ref(a[6], b)
        x, y = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
        np.testing.assert_array_equal(to_np(f(x, y)), want, strict=True, err_msg=f"{op} {name}")
        s, r = b[7].item(), a[6].item()  # Python scalars
        np.testing.assert_array_equal(to_np(f(x, s)), want_s, strict=True, err_msg=f"{op} {name} scalar")
        np.testing.assert_array_equal(to_np(f(r, y)), want_r, strict=True, err_msg=f"{op} {name} scalar first")
        o = xp.empty(want.shape, dtype=xp.bool if want.dtype == bool else x.dtype, device=DEV)
        assert f(x, y, out=o) is o
        np.testing.assert_array_equal(to_np(o), want, strict=True)
        # all three operand forms went through the direct kernels (not CuPy's ufunc)
        dtype = np.dtype(name)
        assert {(op, dtype, form) for form in ("tt", "ts", "st")} <= direct_keys()


@pytest.mark.parametrize("n", [1, 15, 16, 17, 1000, (1 << 22) + 5])
@pytest.mark.parametrize("offset", [0, 1, 3])
def test_vector_and_element_paths_of_every_size_and_alignment(n, offset):
    # 16 bytes per thread where every address is aligned (offset 0), element by element where one is not and
    # for the tail: the same values either way, for 1-, 4- and 8-byte types and a bool result
    for name in ("uint8", "int16", "float32", "float64"):
        m = n + offset
        a, b = values(name, max(m, 8), 3)[:m], values(name, max(m, 8), 4)[:m]
        x, y = xp.asarray(a, device=DEV)[offset:], xp.asarray(b, device=DEV)[offset:]
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(to_np(xp.add(x, y)), a[offset:] + b[offset:], strict=True)
            np.testing.assert_array_equal(to_np(x < y), a[offset:] < b[offset:], strict=True)
            np.testing.assert_array_equal(to_np(xp.multiply(x, 3)), a[offset:] * a.dtype.type(3), strict=True)
        if name.startswith("float"):
            np.testing.assert_allclose(to_np(xp.sqrt(xp.abs(x))), np.sqrt(np.abs(a[offset:])), rtol=1e-6)
    assert n < 1 << 22 or ("add", np.dtype(np.float32), "tt") in direct_keys()  # large ones are direct too


#: (x1, x2) as views of two flat arrays A and B, made alike by NumPy and numr (m: the namespace)
STRIDED = {
    "kmeans' distances": lambda m, A, B: (m.reshape(A[:12800], (200, 1, 64))[:, :, :32],
                                          m.reshape(B, (1, 16, 32))),
    "a row": lambda m, A, B: (m.reshape(A, (800, 64)), m.reshape(B, (8, 64))[2:3, :]),
    "a column": lambda m, A, B: (m.reshape(A, (800, 64)), m.reshape(A, (800, 64))[:, 5:6]),
    "a transpose": lambda m, A, B: (m.reshape(A, (64, 800)).T, m.reshape(A, (800, 64))),
    "reversed and stepped": lambda m, A, B: (m.reshape(A, (4, 8, 25, 64))[:, ::-1, :, ::2],
                                             m.reshape(B[:25], (25, 1))),
}


@pytest.mark.parametrize("case", sorted(STRIDED))
@pytest.mark.parametrize("op,name", [("subtract", "float32"), ("multiply", "float64"), ("less", "float32"),
                                     ("bitwise_xor", "int16"), ("add", "uint8"), ("pow", "float32"),
                                     ("pow", "float64")])
def test_strided_and_broadcast_operands_are_one_direct_kernel(case, op, name):
    A, B = values(name, 51200, 5), values(name, 512, 6)
    p, q = STRIDED[case](np, A, B)
    x, y = STRIDED[case](xp, xp.asarray(A, device=DEV), xp.asarray(B, device=DEV))
    with np.errstate(all="ignore"):
        want = getattr(np, {"pow": "power"}.get(op, op))(p, q)
    got = to_np(getattr(xp, op)(x, y))
    if op == "pow":  # CUDA's powf/pow (CuPy's, whose bits the kernel keeps) and NumPy's differ by an ulp at times
        np.testing.assert_allclose(got, want, rtol=4e-7 if name == "float32" else 1e-15,
                                   atol=np.finfo(name).tiny, strict=True)  # (subnormal results: a few ulps)
    else:
        np.testing.assert_array_equal(got, want, strict=True, err_msg=f"{op} {name} {case}")
    assert (op, np.dtype(name), "bc") in direct_keys()  # one kernel of ours, not CuPy's


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_a_power_of_two_is_numpys_square(name):
    # NumPy computes x ** 2 as x * x (exactly); CUDA's powf(x, 2) may be an ulp off
    a = values(name, 100_003, 9)
    x = xp.asarray(a, device=DEV)
    want = a * a
    for got in (x ** 2, x ** 2.0, xp.pow(x, xp.asarray(np.full(a.shape, 2, name), device=DEV))):
        np.testing.assert_array_equal(to_np(got), want, strict=True)


@pytest.mark.parametrize("n", [4096, (1 << 20) + 3])
def test_an_out_partly_over_an_operand_gets_numpys_answer(n):
    # y[1:] = y[:-1] + 100 reads what it writes: NumPy (and CuPy) compute from a copy of the operand; the
    # direct kernels refuse it, eager and (from C) when the call repeats
    a = np.arange(n, dtype=np.float32)
    want = a.copy()
    want[1:] = a[:-1] + np.float32(100)
    for _ in range(3):
        y = xp.asarray(a, device=DEV)
        assert xp.add(y[:-1], 100.0, out=y[1:]) is not None
        np.testing.assert_array_equal(to_np(y), want)
        z = xp.asarray(a, device=DEV)
        xp.multiply(z[:-1], z[1:], out=z[1:])
        want2 = a.copy()
        want2[1:] = a[:-1] * a[1:]
        np.testing.assert_array_equal(to_np(z), want2)


def test_direct_in_place_and_offset_views():
    a = np.arange(20, dtype=np.float32)
    x = xp.asarray(a, device=DEV)
    view = x[4:12]  # contiguous, with an offset: launched directly at its own address
    r = xp.add(view, view)
    np.testing.assert_array_equal(to_np(r), a[4:12] * 2)
    xp.multiply(view, 3.0, out=view)  # in place: each element reads its own value before writing it
    want = a.copy()
    want[4:12] *= 3
    np.testing.assert_array_equal(to_np(x), want)


def test_operands_the_direct_kernels_do_not_take_go_to_cupy():
    """Broadcasting, strided views, mixed dtypes and complex arrays give NumPy's answers (through CuPy's
    kernels)."""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = xp.asarray(a, device=DEV)
    np.testing.assert_array_equal(to_np(xp.add(x, xp.asarray(a[0], device=DEV))), a + a[0])
    np.testing.assert_array_equal(to_np(xp.subtract(x[:, ::2], x[:, 1::2])), a[:, ::2] - a[:, 1::2])
    d = np.arange(24, dtype=np.float64).reshape(4, 6) / 7
    np.testing.assert_array_equal(to_np(xp.multiply(x, xp.asarray(d, device=DEV))), a * d)
    c = (np.arange(6) + 1j * np.arange(6)).astype(np.complex64)
    np.testing.assert_array_equal(to_np(xp.add(xp.asarray(c, device=DEV), 1.5)), c + np.complex64(1.5))


def test_complex_abs_near_the_largest_float():
    big = np.finfo(np.float64).max
    z = np.array([1 + 1j * big, big + 0j, 3 + 4j, complex(np.inf, np.nan), complex(np.nan, 1)])
    got = to_np(xp.abs(xp.asarray(z, device=DEV)))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, np.abs(z))


def test_complex_log_and_log1p_near_the_largest_float():
    big = np.finfo(np.float64).max
    z = np.array([1j * big, 1 + 1j * big, big + 0j, -big + 1j])
    for f, ref in ((xp.log, np.log), (xp.log1p, np.log1p)):
        got = to_np(f(xp.asarray(z, device=DEV)))
        assert np.all(np.isfinite(got)), (f.__name__, got)
        np.testing.assert_allclose(got, ref(z), rtol=1e-14)


def test_complex_tan_special_values():
    z = np.array([complex(np.inf, 0.0), complex(-np.inf, 0.0), complex(np.nan, 0.0), 0.5 + 0.25j], np.complex64)
    got = to_np(xp.tan(xp.asarray(z, device=DEV)))
    with np.errstate(all="ignore"):
        want = np.tan(z)
    assert np.array_equal(np.isnan(got.real), np.isnan(want.real))
    assert np.array_equal(np.isnan(got.imag), np.isnan(want.imag))
    np.testing.assert_allclose(got[3], want[3], rtol=1e-6)
    assert got[0].imag == 0


@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_argmin_argmax_pick_the_first_nan(name):
    a = np.array([[0.0, np.nan, np.nan, 1.0], [2.0, 1.0, 3.0, np.nan], [5.0, 4.0, 4.0, 0.5]], np.float32)
    f, ref = getattr(xp, name), getattr(np, name)
    x = xp.asarray(a, device=DEV)
    assert int(to_np(f(x))) == ref(a)
    np.testing.assert_array_equal(to_np(f(x, axis=1)), ref(a, axis=1))
    np.testing.assert_array_equal(to_np(f(x, axis=0)), ref(a, axis=0))
    np.testing.assert_array_equal(to_np(f(xp.asarray(a[0, :3], device=DEV))), ref(a[0, :3]))


def test_isin_compares_in_the_promoted_dtype():
    x1 = xp.asarray(np.array([0, -5, 7], np.int32), device=DEV)
    x2 = xp.asarray(np.array([2147483648, 7], np.uint32), device=DEV)
    np.testing.assert_array_equal(to_np(xp.isin(x1, x2)), [False, False, True])
    np.testing.assert_array_equal(to_np(xp.isin(x1, x2, invert=True)), [True, True, False])
