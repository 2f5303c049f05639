"""Element-wise functions and casts on the WebGPU device against the CPU backend and NumPy.

Every row of the element-wise table on every dtype the adapter supports, with special values, on
contiguous and strided operands; broadcasting, Python scalars and ``out=`` through hypothesis; the
float64 transcendentals (WGSL from f64 arithmetic) to a few ulp of NumPy over their whole ranges; the
floor semantics of integer division; every cast.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array._elementwise import OPS
from numr_array.backends import get_runtime

from ..strategies import to_np
from ..test_elementwise import row_checks
from ..helpers import flush, flushes_in, flushes_subnormals
from .helpers import missing, needs_libm

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
INFO = xp.__array_namespace_info__()
DTYPES = list(INFO.dtypes(device=DEV).values())
APPROX = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p", "log2",
          "log10", "sin", "sinh", "tan", "tanh", "pow", "atan2", "hypot", "logaddexp", "divide", "reciprocal",
          "sqrt"}
APPROX_COMPLEX = APPROX | {"multiply", "square", "sign", "abs"}
NO_F64 = missing("shader-f64", "shader-int64")


#: whether the adapter flushes float32 subnormals (NVIDIA's Vulkan driver does; lavapipe does not)
FTZ32 = flushes_subnormals(DEV)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of ``want`` (0 where both are NaN or equal)."""
    got = got.astype(np.float64)
    w = want.astype(np.float64)
    same = (got == w) | (np.isnan(got) & np.isnan(w))
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    d = np.abs(got - w) / np.where(spacing > 0, spacing, 1)
    return np.where(same, 0.0, np.where(np.isfinite(d), d, np.inf))


def assert_same(got: np.ndarray, want: np.ndarray, approx: bool, max_ulp: float = 4, rtol: float | None = None):
    """Dtype, shape, NaN positions and infinities exactly; finite values exactly or, where ``approx``,
    within ``max_ulp`` (real) or ``rtol`` (complex)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
        return
    parts = (np.real, np.imag) if want.dtype.kind == "c" else (lambda v: v,)
    if want.dtype.kind == "c" and approx:
        finite = np.isfinite(got) & np.isfinite(want)
        for p in parts:
            g, w = p(got), p(want)
            assert np.array_equal(np.isnan(g) & ~finite, np.isnan(w) & ~finite), (got, want)
            nf = ~finite & ~np.isnan(w)
            np.testing.assert_array_equal(g[nf], w[nf])
        tol = rtol if rtol is not None else (1e-5 if want.dtype == np.complex64 else 1e-12)
        np.testing.assert_allclose(got[finite], want[finite], rtol=tol, atol=tol)
        return
    for p in parts:
        g, w = p(got), p(want)
        assert np.array_equal(np.isnan(g), np.isnan(w)), (got, want)
        if approx:
            e = ulps(g, w)
            assert e.max(initial=0) <= max_ulp, (g[e > max_ulp], w[e > max_ulp])
        else:
            np.testing.assert_array_equal(g, w)
            assert np.array_equal(np.signbit(g) | np.isnan(g), np.signbit(w) | np.isnan(w)), (got, want)


def values(dtype, n: int, rng) -> np.ndarray:
    """n values of ``dtype`` with the special ones first (NaN, infinities, signed zeros, extremes)."""
    if dtype == xp.bool:
        return rng.integers(0, 2, n).astype(bool)
    if dtype.kind in ("i", "u"):
        info = np.iinfo(dtype)
        special = np.array([0, 1, info.max, info.min, info.max - 1, 2, 3, 7], dtype=dtype)
        small = rng.integers(max(info.min, -40), min(info.max, 40), n // 2, endpoint=True).astype(dtype)
        big = rng.integers(info.min, info.max, n - n // 2 - len(special), endpoint=True, dtype=dtype)
        return np.concatenate([special, small, big])
    real = dtype if dtype.kind == "f" else np.dtype(dtype).type(0).real.dtype
    fi = np.finfo(real)
    sub = -fi.smallest_subnormal if not (FTZ32 and real == np.float32) else -3.0
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, fi.max, fi.tiny, sub, 2.5, -3.5],
                       dtype=real)
    mags = 10.0 ** rng.uniform(-6, 6, n - len(special))
    body = (rng.choice([-1, 1], n - len(special)) * mags).astype(real)
    r = np.concatenate([special, body])
    if dtype.kind == "c":
        return (r + 1j * np.roll(r, 5)).astype(dtype)
    return r


def operands(op, dtype, rng, n=48):
    if op.name == "pow" and dtype.kind == "c":
        # finite moderate values: NumPy's (glibc's) special values of cpow and its float32 rounding of
        # huge exponents are not matched
        return [(rng.uniform(-3, 3, n) + 1j * rng.uniform(-3, 3, n)).astype(dtype) for _ in range(2)]
    arrays = [values(dtype, n, rng) for _ in range(op.arity)]
    for a in arrays[1:]:
        rng.shuffle(a)
    return arrays


def on(a, dev=DEV):
    return xp.asarray(a, device=dev)


def strided(a, dev=DEV):
    """``a`` (1-D, even length) as a reversed, stepped 2-D view of a larger tensor on ``dev``."""
    big = np.zeros(a.size * 2, a.dtype)
    big[::-2] = a
    t = xp.asarray(big.reshape(-1, 4), device=dev)[::-1, ::-2]
    return t, to_np(t)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_every_op_every_dtype_matches_cpu(op):
    """Each row on each supported dtype it accepts: special and random values, contiguous and strided."""
    needs_libm(op.name)
    rng = np.random.default_rng(sum(map(ord, op.name)))
    f = getattr(ew, op.name)
    for dtype in DTYPES:
        if dtype.kind not in op.kinds:
            with pytest.raises(TypeError):  # (divide and logical_* take these with NumPy's meaning)
                row_checks(op)(*[on(np.zeros(2, dtype))] * op.arity)
            continue
        arrays = operands(op, dtype, rng)
        for make in (on, strided):
            if make is on:
                gpu = [on(a) for a in arrays]
                host = arrays
            else:
                pairs = [strided(a) for a in arrays]
                gpu = [p[0] for p in pairs]
                host = [p[1] for p in pairs]
            got = to_np(f(*gpu))
            flushing = flushes_in(op.name, dtype, FTZ32, NO_F64 is None)
            if flushing:  # the driver reads float32 subnormal operands as zeros, and flushes results
                host = [flush(h) for h in host]
            want = to_np(f(*[xp.asarray(h) for h in host]))
            if flushing:
                got, want = flush(got), flush(want)
            if op.name == "asinh" and dtype.kind == "c":
                # the standard: asinh(NaN + inf j) is "+-infinity + NaN j (sign of the real component is
                # unspecified)"; NumPy takes it from the NaN's sign bit, which NVIDIA's driver does not keep
                free = np.isnan(host[0].real) & np.isinf(host[0].imag)
                got, want = got.copy(), want.copy()
                got.real[free], want.real[free] = np.abs(got.real[free]), np.abs(want.real[free])
            approx = op.name in (APPROX_COMPLEX if dtype.kind == "c" else APPROX)
            assert_same(got, want, approx)


def test_float32_pow_special_values():
    """C99's special values of pow in float32 on every adapter (without shader-f64 they are handled by hand
    around the WGSL builtins, whose log2(0) is finite on Mesa's OpenGL: pow(0, -1) gave 0)."""
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5],
                 np.float32)
    x, y = (a.ravel() for a in np.meshgrid(v, v))
    got = to_np(ew.pow(on(x), on(y)))
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
    rest = ~exact & ~np.isnan(want)
    np.testing.assert_allclose(got[rest], want[rest], rtol=1e-6)


@pytest.mark.parametrize("flushing", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_power_of_two_is_the_routines_own_square(monkeypatch, dtype, flushing):
    """x ** 2 runs the float64 routine's branch for an exponent of 2 alone (its own kernel): bit for bit what
    pow with an array of twos gives, over every kind of float32 bits (subnormals, infinities, NaN), and on an
    adapter that flushes float32 subnormals (NVIDIA's) too."""
    client = xp._device.parse_device(DEV).client
    if not client.has_f64:
        pytest.skip("the adapter lacks shader-f64: pow of float32 is the builtins' (no square of its own)")
    if flushing:
        from numr_array.backends.webgpu._client import WebGPUClient
        monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(dtype)
    a = on(x)
    got, want = to_np(a ** 2), to_np(ew.pow(a, on(np.full(x.shape, 2, dtype))))
    squares = [k[1][0].name for k in client._pipelines if k[0] == "pow" and isinstance(k[1], tuple)
               and k[1][1:] == ("square",)]
    assert dtype in squares
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    real = ~np.isnan(want)
    assert got[real].tobytes() == want[real].tobytes()


@st.composite
def broadcast_pairs(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4))
    a, b = (draw(hnp.arrays(dtype, s)) for s in shapes.input_shapes)
    return dtype, a, b


@given(broadcast_pairs(), st.sampled_from(["add", "multiply", "subtract", "equal", "maximum", "floor_divide",
                                           "remainder", "less", "bitwise_xor", "logical_or"]))
def test_broadcast_and_scalars_match_cpu(case, name):
    dtype, a, b = case
    op = next(o for o in OPS if o.name == name)
    f = getattr(ew, name)
    if dtype.kind not in op.kinds:
        return
    approx = dtype.kind == "c" and name == "multiply"
    assert_same(to_np(f(on(a), on(b))), to_np(f(xp.asarray(a), xp.asarray(b))), approx)
    scalar = b.reshape(-1)[0].item() if b.size else None
    if scalar is not None and dtype.kind != "u":
        assert_same(to_np(f(on(a), scalar)), to_np(f(xp.asarray(a), scalar)), approx)
        assert_same(to_np(f(scalar, on(a))), to_np(f(scalar, xp.asarray(a))), approx)


@given(st.sampled_from([d for d in DTYPES if d.kind in ("f", "i")]),
       hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
def test_out_aliasing_an_input(dtype, shape):
    """out= may be an input (in-place operators write into its buffer), also through a strided view."""
    rng = np.random.default_rng(0)
    n = int(np.prod(shape))
    a = rng.permutation(values(dtype, 48, rng))[:n].reshape(shape) if n <= 48 else values(dtype, n, rng).reshape(shape)
    x = on(a)
    y = x[..., ::-1]
    r = ew.add(x, y, out=x)
    assert r is x
    want = xp.asarray(a)
    want = ew.add(want, want[..., ::-1])
    assert_same(to_np(x), to_np(want), False)
    x = on(a)
    x[..., 1:] = x[..., :-1]  # overlapping views of one buffer: NumPy's result, not a race
    b = a.copy()
    b[..., 1:] = b[..., :-1].copy()
    assert_same(to_np(x), b, False)


F64_RANGES = {
    "exp": (-745, 710), "expm1": (-50, 710), "log": (1e-300, 1e300), "log1p": (-0.999, 1e300), "log2": (1e-300, 1e300),
    "log10": (1e-300, 1e300), "sin": (-1e300, 1e300), "cos": (-1e300, 1e300), "tan": (-1e300, 1e300),
    "asin": (-1, 1), "acos": (-1, 1), "atan": (-1e300, 1e300), "sinh": (-710, 710), "cosh": (-710, 710),
    "tanh": (-30, 30), "asinh": (-1e300, 1e300), "acosh": (1, 1e300), "atanh": (-1, 1),
}


@pytest.mark.skipif(xp.float64 not in DTYPES, reason=NO_F64 or "")
@pytest.mark.parametrize("name", sorted(F64_RANGES))
def test_float64_transcendentals_within_a_few_ulp(name):
    """The float64 libm (fdlibm in WGSL; Payne-Hanek for huge trigonometric arguments) against NumPy."""
    lo, hi = F64_RANGES[name]
    rng = np.random.default_rng(1)
    n = 4000
    if lo > 0:
        v = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    else:
        mag = np.exp(rng.uniform(np.log(1e-300), np.log(max(abs(lo), abs(hi))), n))
        v = np.clip(rng.choice([-1.0, 1.0], n) * mag, lo, hi)
    v = np.concatenate([v, rng.uniform(lo, hi, 1000) if hi - lo < 1e10 else v[:0], [0.0, -0.0, lo, hi]])
    got = to_np(getattr(ew, name)(on(v)))
    ref = {"asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh,
           "atanh": np.arctanh}.get(name, getattr(np, name, None))
    want = ref(v)
    e = ulps(got, want)
    assert e.max() <= 3, (name, v[np.argmax(e)], got[np.argmax(e)], want[np.argmax(e)], e.max())


@pytest.mark.skipif(xp.float64 not in DTYPES, reason=NO_F64 or "")
def test_float64_pow_and_atan2():
    rng = np.random.default_rng(2)
    a = np.exp(rng.uniform(-20, 20, 3000))
    b = rng.uniform(-30, 30, 3000)
    # (8 ulp: drivers that contract fdlibm's split products into fused multiply-adds lose a few bits)
    assert ulps(to_np(ew.pow(on(a), on(b))), a ** b).max() <= 8
    neg = -np.floor(rng.uniform(1, 50, 500))
    assert ulps(to_np(ew.pow(on(neg), on(np.floor(b[:500])))), neg ** np.floor(b[:500])).max() <= 8
    y, x = rng.standard_normal(3000) * 1e3, rng.standard_normal(3000)
    assert ulps(to_np(ew.atan2(on(y), on(x))), np.arctan2(y, x)).max() <= 3


def test_integer_division_floors_like_python():
    a = np.array([7, -7, 7, -7, 0, -1, 5, -128], np.int32)
    b = np.array([2, 2, -2, -2, 3, 2, 0, -1], np.int32)
    x, y = on(a), on(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert to_np(ew.floor_divide(x, y)).tolist() == np.floor_divide(a, b).tolist()
        assert to_np(ew.remainder(x, y)).tolist() == np.remainder(a, b).tolist()
    for d in (xp.int8, xp.int16, xp.int64, xp.uint8, xp.uint32):
        if d not in DTYPES:
            continue
        info = np.iinfo(d)
        u = np.array([info.min, info.max, 7, 0, 13], d)
        v = np.array([3, 5, 2, 4, 5], d) if d.kind == "u" else np.array([-3, 5, -2, 4, -5], d)
        assert to_np(ew.floor_divide(on(u), on(v))).tolist() == np.floor_divide(u, v).tolist()
        assert to_np(ew.remainder(on(u), on(v))).tolist() == np.remainder(u, v).tolist()


def test_every_cast_matches_numpy():
    samples = {
        "b": [True, False, True, False], "i": [-128, -7, 0, 127], "u": [0, 1, 200, 255],
        "f": [-3.7, -0.0, 0.5, 100.9], "c": [1 + 2j, -3.5 - 1j, 0j, 2.7 + 0j],
    }
    for src in DTYPES:
        a = np.array(samples[src.kind], dtype=src)
        x = on(a)
        for dst in DTYPES:
            if src.kind == "c" and dst.kind != "c":
                continue
            b = np.abs(a) if src.kind == "f" and dst.kind == "u" else a
            got = to_np(xp.astype(on(b), dst))
            np.testing.assert_array_equal(got, b.astype(dst), err_msg=f"{src} -> {dst}")
        assert to_np(xp.astype(x, src, copy=True)).tolist() == a.tolist()


def _fused(a, b, c, ft):
    """fma(a, b, c) of ``ft`` scalars with one rounding, from exact rational arithmetic (IEEE 754's
    special cases where an operand is not finite)."""
    a, b, c = (ft(v) for v in (a, b, c))
    if not (np.isfinite(a) and np.isfinite(b)):
        with np.errstate(all="ignore"):
            return a * b + c
    if not np.isfinite(c):
        return c
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        with np.errstate(all="ignore"):
            return a * b + c  # the sign of an exact zero: as the sum of the (exact) product and c
    try:
        near = ft(float(exact))
    except OverflowError:
        return ft(np.inf if exact > 0 else -np.inf)
    if ft is np.float64:
        return near
    # float32: float(exact) may round twice; pick the nearest float32 neighbour, ties to even
    with np.errstate(all="ignore"):
        cands = [near, np.nextafter(near, ft(np.inf)), np.nextafter(near, ft(-np.inf))]
    finite = [v for v in cands if np.isfinite(v)]
    if not finite or abs(exact) >= Fraction(float(np.finfo(ft).max)) + Fraction(2.0 ** 103):
        return ft(np.inf if exact > 0 else -np.inf)
    return min(finite, key=lambda v: (abs(Fraction(float(v)) - exact), int(v.view(np.uint32)) & 1))


@pytest.mark.parametrize("ctype", [np.complex64, np.complex128])
def test_complex_multiply_fuses_like_numpys_loop(ctype):
    """NumPy's complex multiply and square compute (fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)); lavapipe's
    fma builtin rounds twice, so the kernels use an exact one. Cases near overflow (one product overflows,
    the fused sum does not), cancellation (the result is a product's rounding error), subnormal
    results and random bit patterns."""
    d = xp.complex128 if ctype is np.complex128 else xp.complex64
    if NO_F64:  # complex128 is not there; complex64's exact fma is computed in float64
        pytest.skip(NO_F64)
    ft = np.float64 if ctype is np.complex128 else np.float32
    ut = np.uint64 if ft is np.float64 else np.uint32
    rng = np.random.default_rng(7)
    fi = np.finfo(ft)
    parts = [rng.integers(0, np.iinfo(ut).max, (4, 120), dtype=ut, endpoint=True).view(ft),
             (rng.standard_normal((4, 120)) * 2.0 ** rng.integers(fi.minexp - 30, fi.minexp + 60, (4, 120))).astype(ft),
             (rng.standard_normal((4, 120)) * 2.0 ** rng.integers(fi.maxexp // 2 - 8, fi.maxexp // 2 + 8, (4, 120))
              ).astype(ft)]
    p = np.concatenate(parts, axis=1)
    p[2:, -40:] = p[1::-1, -40:]  # (a + bi)(b + ai): the real part is ab - ab, a rounding error
    x = (p[0] + 1j * p[1]).astype(ctype)
    y = (p[2] + 1j * p[3]).astype(ctype)
    if ft is np.float64:  # found by the generic tests: imaginary part finite only when fused
        x = np.append(x, [2.57392544e+21 + 5.33532617e+86j, 2.40972104e+18 + 3.13407815e+86j])
        y = np.append(y, [1.6338446530688716e+205 - 6.984247120139772e+286j,
                          1.2344585788247198e+205 + 6.984247120139744e+286j])
    for got, u, v in ((to_np(ew.multiply(on(x), on(y))), x, y), (to_np(ew.square(on(x))), x, x)):
        with np.errstate(all="ignore"):
            for k in range(u.size):
                ar, ai, br, bi = ft(u[k].real), ft(u[k].imag), ft(v[k].real), ft(v[k].imag)
                want = (_fused(ar, br, -(ai * bi), ft), _fused(ar, bi, ai * br, ft))
                if FTZ32 and ft is np.float32 and any(
                        0 < abs(t) < fi.tiny for t in (ar, ai, br, bi, ai * bi, ai * br, *want)):
                    continue  # the driver flushes float32 subnormals (see FTZ32)
                for g, w in zip((got[k].real, got[k].imag), want):
                    assert (np.isnan(g) and np.isnan(w)) or (g == w and np.signbit(g) == np.signbit(w)), (
                        u[k], v[k], got[k], want)


def _hard_float32_pairs(rng, n=20000):
    """float32 pairs whose quotients are near rounding ties or subnormal: random bits, integer-valued
    operands (1.0856384e8 / 7 was off by one on NVIDIA's driver), and subnormal divisors and dividends."""
    bits = lambda k: rng.integers(0, 2 ** 32, k, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ints = lambda k: rng.integers(1, 2 ** 24, k).astype(np.float32)
    tiny = lambda k: (np.float32(2) ** rng.integers(-149, -120, k).astype(np.float32)) * rng.choice(
        np.float32([-1, 1]), k)
    a = np.concatenate([bits(n), ints(n) * np.float32(2) ** rng.integers(-8, 8, n).astype(np.float32), tiny(n),
                        np.float32([1.0856384e8, 161000.0, 0.0, 0.0, 3e-45, 1.0, -2e-45, 1e-45, -1e-45, 0.0]),
                        np.float32([-1e-45, 5.0])])
    b = np.concatenate([bits(n), ints(n) % 97 + 1, ints(n), np.float32([7, 1000, 1e-45, 1.457e-42, 1e-45, 1e-45,
                                                                       1e-45, np.inf, -np.inf, -np.inf]),
                        np.float32([0.0, -1e-45])])
    return a, b


@pytest.mark.parametrize("name", ["divide", "floor_divide", "remainder", "reciprocal"])
def test_float32_division_is_correctly_rounded(name):
    """float32 division where the adapter has float64 is NumPy's to the bit (WGSL allows 2.5 ulp and NVIDIA's
    driver uses it; the float64 quotient rounded once is correctly rounded), subnormals included."""
    if NO_F64:
        pytest.skip(f"{NO_F64} (float32 division is then the driver's, documented as up to 2.5 ulp)")
    a, b = _hard_float32_pairs(np.random.default_rng(84467038))
    args = (a,) if name == "reciprocal" else (a, b)
    got = to_np(getattr(ew, name)(*[on(x) for x in args]))
    with np.errstate(all="ignore"):
        want = getattr(np, name)(*args)
    if name == "floor_divide":  # the standard's floor(a / b) for infinite operands (NumPy gives NaN)
        keep = np.isfinite(a) & np.isfinite(b)
        got, want = got[keep], want[keep]
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (args[0][~same][:5], got[~same][:5], want[~same][:5])


def test_round_with_decimals_matches_numpy_on_float32():
    """round(x, d) is NumPy's x * 10**d, rint, / 10**d step by step (161.0 to 3 places was 161.00002 on
    NVIDIA's driver, its float32 division being off by one ulp)."""
    if NO_F64:
        pytest.skip(f"{NO_F64} (float32 division is then the driver's)")
    x = np.concatenate([np.float32([161.0, 2.675, -0.125]),
                        np.random.default_rng(3).uniform(-1000, 1000, 4000).astype(np.float32)])
    for d in (1, 2, 3, 5):
        got = to_np(xp.round(on(x), d))
        np.testing.assert_array_equal(got.view(np.uint32), np.round(x, d).view(np.uint32))


def test_float32_division_goes_through_float64_only_where_there_is_one():
    from numr_array.backends.webgpu._elementwise_exprs import expr
    from numr_array.backends.webgpu._types import F32
    from numr_array.backends.webgpu._wgsl_helpers import WgslHelpers
    for has_f64 in (True, False):
        lib = WgslHelpers(has_f64)
        e, _ = expr("divide", F32, ["x", "y"], lib)
        src = lib.source()
        assert e == "fdiv_f32(x, y)"
        assert ("narrow_f32(widen_f32(a) / widen_f32(b))" in src) == has_f64
        assert ("return a / b;" in src) == (not has_f64)


def test_moves_keep_float32_subnormals():
    """where, clip, maximum and minimum move float32 bits (NVIDIA's driver flushed a subnormal moved as a
    float), and maximum/minimum compare on the bits: NumPy's tie rule on signed zeros (NVIDIA's and Mesa
    OpenGL's max(0, -0) was +0) and order of subnormals, whether or not the adapter flushes them."""
    s = np.float32([1.293e-42, -1e-45, 1.457e-42, 0.0])
    z = np.float32([0.0, -0.0, 0.0, -0.0])
    for got, want in ((xp.where(on(np.array([True, True, False, False])), on(s), on(z)),
                       np.where([True, True, False, False], s, z)),
                      (xp.clip(on(s), min=on(s)), np.clip(s, s, None)),
                      (xp.maximum(on(z), on(-z)), np.maximum(z, -z)),
                      (xp.minimum(on(-z), on(z)), np.minimum(-z, z))):
        np.testing.assert_array_equal(to_np(got).view(np.uint32), want.view(np.uint32))
    for f in (xp.maximum, xp.minimum):  # compared as integers: subnormals order as NumPy orders them
        for x, y in ((s, z), (z, s), (s, s[::-1].copy())):
            want = getattr(np, f.__name__)(x, y)
            np.testing.assert_array_equal(to_np(f(on(x), on(y))).view(np.uint32), want.view(np.uint32))


def test_subnormal_probe_matches_the_adapter():
    """client.flushes_f32_subnormals is the driver's behaviour: False on lavapipe and Mesa's OpenGL
    adapter (which keep subnormals), and the same answer as an element-wise product by 1 elsewhere."""
    client = xp._device.parse_device(DEV).client
    assert client.flushes_f32_subnormals is FTZ32
    tiny = np.float32([1e-45, -3e-42])
    kept = to_np(ew.multiply(on(tiny), on(np.float32([1, 1]))))
    assert FTZ32 == bool((kept == 0).all())
    if "llvmpipe" in client.adapter.info.get("device", "").lower():
        assert FTZ32 is False


#: float32 values whose float64 widening NVIDIA's f64(f32) got wrong (NaN sign, subnormals) and their
#: neighbours: -NaN, NaNs with payloads (one signalling, which widens quieted), signed zeros, the smallest and largest subnormals, normals, infs
WIDEN_BITS = np.array([0xFFC00000, 0x7FC12345, 0xFF812345, 0x80000000, 0x00000000, 0x00000001, 0x807FFFFF,
                       0x00800000, 0x3F800001, 0xC2F6E979, 0x7F7FFFFF, 0x7F800000, 0xFF800000], np.uint32)


@pytest.mark.skipif(xp.float64 not in DTYPES, reason=NO_F64 or "")
def test_float32_widens_to_float64_bit_for_bit():
    """float32 -> float64 (astype, a mixed float64/float32 copysign, complex64 -> complex128 part by
    part) is built from the float32's bits, so each result matches NumPy's widening bit for bit."""
    from numr_array.backends.webgpu._types import F32, F64, WGSL_TYPES, cast
    from numr_array import _dtypes as dt
    assert cast("v", F32, F64).startswith("bitcast<f64>(")  # not f64(v), which NVIDIA's driver gets wrong
    c64, c128 = WGSL_TYPES[dt.complex64], WGSL_TYPES[dt.complex128]
    assert cast("v", c64, c128).count("bitcast<f64>(") >= 2
    f = WIDEN_BITS.view(np.float32)
    want = f.astype(np.float64)
    np.testing.assert_array_equal(to_np(xp.astype(on(f), xp.float64)).view(np.uint64), want.view(np.uint64))
    ones = np.ones(f.shape, np.float64)
    got = to_np(xp.copysign(on(ones), on(f)))
    np.testing.assert_array_equal(got.view(np.uint64), np.copysign(ones, f).view(np.uint64))
    z = (f + 1j * f[::-1]).astype(np.complex64)
    z.view(np.uint32)[0::2], z.view(np.uint32)[1::2] = WIDEN_BITS, WIDEN_BITS[::-1]
    got = to_np(xp.astype(on(z), xp.complex128))
    np.testing.assert_array_equal(got.view(np.uint64), z.astype(np.complex128).view(np.uint64))
