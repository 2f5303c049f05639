"""The tiled matrix products, cross, the parallel cumulative scan and argmax/argmin on the WebGPU device,
against the CPU backend: every dtype, tile edges, vec4 and scalar loads, broadcast batches, views,
multi-level scans, NaN/signed zero/ties, and no host readback inside the kernels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import _launch
from numr_array.backends import get_runtime
from numr_array.kernels import K, KERNELS

from ..strategies import to_np
from .helpers import call_without_readback as no_readback

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
from .helpers import DTYPES, FLOAT, INDEX, NUMERIC, REAL, WIDEST, device_dtype  # noqa: E402


def ints(rng, dtype, shape, lo=-3, hi=4):
    if dtype == xp.bool:
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(0 if dtype.kind == "u" else lo, hi, shape).astype(dtype)


def check(got, want, rtol=None, exact=False):
    g, w = to_np(got), np.asarray(want)
    assert g.dtype == device_dtype(w.dtype) and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    if exact or g.dtype.kind not in "fc":
        np.testing.assert_array_equal(g, w)
    else:
        tol = rtol or (2e-5 if g.dtype in (np.float32, np.complex64) else 1e-12)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


# --- matmul, tensordot, vecdot ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_tiled_matmul_every_dtype(dtype):
    """Integers and small-integer floats are exact; bool is 'any product true' (launched directly: the
    namespace takes numeric arrays only); sizes cross the tile edges (both block sizes for a few dtypes:
    each compiles its own shaders)."""
    rng = np.random.default_rng(1)
    shapes = [((2, 17, 33), (1, 33, 20))]
    if dtype in (xp.float32, xp.int8, xp.uint32):
        shapes.append(((130, 70), (70, 129)))
    for s1, s2 in shapes:
        a, b = ints(rng, dtype, s1), ints(rng, dtype, s2)
        x1, x2 = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
        if dtype == xp.bool:
            want = np.matmul(a, b)
            o = xp.empty(want.shape, dtype=xp.bool, device=DEV)
            no_readback(lambda: _launch.launch(o.device, K.matmul, (x1, x2), (o,), {}))
            check(o, want)
        else:
            check(no_readback(lambda: xp.matmul(x1, x2)), np.matmul(a, b), exact=True)


def test_tiled_matmul_wraps_small_integers():
    rng = np.random.default_rng(2)
    a = rng.integers(-128, 128, (40, 300)).astype(np.int8)
    b = rng.integers(-128, 128, (300, 24)).astype(np.int8)
    check(xp.matmul(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)), np.matmul(a, b))


@pytest.mark.parametrize("dtype", FLOAT, ids=lambda d: d.name)
def test_tiled_matmul_views_batches_and_vectors(dtype):
    """Offsets and strides that do and do not allow vec4 loads, transposed and reversed operands,
    broadcast batch axes, 1-D operands and empty contractions."""
    rng = np.random.default_rng(3)
    f = lambda *s: rng.standard_normal(s).astype(dtype)
    cases = [
        (f(160, 144), f(144, 136), lambda x, y: x @ y),                     # vec4 loads where float32
        (f(161, 145), f(145, 137), lambda x, y: x[1:, 1:] @ y[1:, 1:]),     # offsets not multiples of 4
        (f(64, 80), f(96, 64), lambda x, y: x.mT @ y.mT),                    # transposed operands
        (f(70, 90), f(90, 60), lambda x, y: x[::-1, ::2] @ y[::2, ::-1]),   # reversed, strided
        (f(3, 1, 20, 24), f(2, 24, 36), lambda x, y: x @ y),                 # broadcast batch axes
        (f(2, 40, 24), f(24,), lambda x, y: x @ y),                          # 1-D second operand
        (f(24,), f(3, 24, 40), lambda x, y: x @ y),                          # 1-D first operand
        (f(20, 0), f(0, 30), lambda x, y: x @ y),                            # nothing contracted: zeros
    ]
    for a, b, op in cases:
        got = no_readback(lambda: op(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)))
        check(got, to_np(op(xp.asarray(a), xp.asarray(b))), rtol=1e-4 if dtype == xp.float32 else None)


def test_matmul_into_a_view_and_nan_inf():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((48, 40)).astype(np.float32)
    b = rng.standard_normal((40, 56)).astype(np.float32)
    a[3, 5] = np.nan
    b[7, 9] = np.inf
    big = xp.zeros((60, 70), dtype=xp.float32, device=DEV)
    view = big[5:53, 7:63]
    xp.matmul(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV), out=view)
    want = np.zeros((60, 70), np.float32)
    want[5:53, 7:63] = a @ b
    check(big, want, rtol=1e-4)


def test_matmul_out_over_an_input():
    """out= the first operand itself: the operand is read whole before any result is written."""
    rng = np.random.default_rng(11)
    a = rng.integers(-3, 4, (200, 200)).astype(np.float32)  # several workgroups: one writes before another reads
    b = rng.integers(-3, 4, (200, 200)).astype(np.float32)
    x = xp.asarray(a, device=DEV)
    xp.matmul(x, xp.asarray(b, device=DEV), out=x)
    check(x, a @ b, exact=True)
    x = xp.asarray(a, device=DEV)
    xp.matmul(xp.asarray(b, device=DEV), x.mT, out=x)
    check(x, b @ a.T, exact=True)


@pytest.mark.parametrize("dtype", [xp.float32, xp.int32, xp.complex64], ids=lambda d: d.name)
def test_tensordot_through_tiles_and_generic(dtype):
    rng = np.random.default_rng(5)
    a, b = ints(rng, dtype, (6, 20, 5, 4)), ints(rng, dtype, (5, 4, 3, 30))
    x1, x2 = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
    check(xp.tensordot(x1, x2, axes=2), np.tensordot(a, b, axes=2), exact=True)            # merged k: tiled
    check(xp.tensordot(x1, x2, axes=([3, 2], [1, 0])), np.tensordot(a, b, axes=([3, 2], [1, 0])),
          exact=True)                                                                        # unmerged: generic
    c = ints(rng, dtype, (30, 6))
    check(xp.tensordot(x2, xp.asarray(c, device=DEV), axes=1), np.tensordot(b, c, axes=1), exact=True)
    check(xp.vecdot(x1, x1), (np.conj(a) * a).sum(axis=-1, dtype=a.dtype), exact=True)


# --- cross ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: d.name)
def test_cross_matches_cpu(dtype):
    rng = np.random.default_rng(6)
    if dtype.kind in ("f", "c"):
        a = (rng.standard_normal((4, 3, 5)) * 1e3).astype(dtype)
        b = (rng.standard_normal((3, 1)) * 1e-3).astype(dtype)
    else:
        a, b = ints(rng, dtype, (4, 3, 5), -100, 100), ints(rng, dtype, (3, 1), -100, 100)
    for axis, (p, q) in [(-2, (a, b)), (-1, (a[:, :, :3], b.T)), (-3, (a[:3, ::-1], b[:, :1, None]))]:
        got = no_readback(lambda: xp.linalg.cross(xp.asarray(p, device=DEV), xp.asarray(q, device=DEV), axis=axis))
        want = xp.linalg.cross(xp.asarray(p), xp.asarray(q), axis=axis)
        # each product is rounded before the subtraction, as NumPy's: exact for real floats too
        check(got, to_np(want), exact=dtype.kind != "c")


# --- cumulative sums and products ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 2048, 4097, 70001])
def test_scan_lengths_across_blocks(n):
    """Lines of one invocation, one block, several blocks and two levels of block totals."""
    rng = np.random.default_rng(n)
    a = rng.integers(-128, 128, n).astype(np.int8)
    for f, ref in ((xp.cumulative_sum, np.cumsum), (xp.cumulative_prod, np.cumprod)):
        check(no_readback(lambda: f(xp.asarray(a, device=DEV), dtype=xp.int8)), ref(a, dtype=np.int8))  # wraps exactly
    x = rng.standard_normal(n)
    # the sum in blocks is at least as accurate as NumPy's sequential one: compared with the exact sum
    exact = np.cumsum(x.astype(np.float64))
    got = to_np(xp.cumulative_sum(xp.asarray(x.astype(np.float32), device=DEV)))
    assert np.abs(got - exact).max() <= max(1e-5, 2 * np.abs(np.cumsum(x.astype(np.float32)) - exact).max())


@settings(max_examples=25)
@given(st.sampled_from(NUMERIC), hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40),
       st.data())
def test_scan_matches_cpu_on_any_axis(dtype, shape, data):
    rng = np.random.default_rng(7)
    a = ints(rng, dtype, shape, -2, 3)
    axis = data.draw(st.integers(0, len(shape) - 1))
    if data.draw(st.booleans()):
        a = np.flip(a, axis)
    x, c = xp.asarray(a, device=DEV), xp.asarray(a)
    check(no_readback(lambda: xp.cumulative_sum(x, axis=axis)), to_np(xp.cumulative_sum(c, axis=axis)))
    check(xp.cumulative_prod(x[..., :3], axis=axis), to_np(xp.cumulative_prod(c[..., :3], axis=axis)))


def test_scan_long_lines_on_outer_axis_and_in_place():
    rng = np.random.default_rng(8)
    a = rng.integers(-1000, 1000, (5000, 3)).astype(np.int32)
    check(xp.cumulative_sum(xp.asarray(a, device=DEV), axis=0), np.cumsum(a, axis=0))
    x = xp.asarray(a, device=DEV)
    xp.cumulative_sum(x, axis=0, dtype=xp.int32, out=x)  # the same view in and out
    check(x, np.cumsum(a, axis=0, dtype=np.int32))
    x = xp.asarray(a[:, 0].copy(), device=DEV)
    xp.cumulative_sum(x[:-1], dtype=xp.int32, out=x[1:])  # overlapping views: read before written
    want = a[:, 0].copy()
    want[1:] = np.cumsum(a[:-1, 0], dtype=np.int32)
    check(x, want)
    cd = np.complex128 if xp.complex128 in DTYPES else np.complex64
    c = (rng.standard_normal(3000) + 1j * rng.standard_normal(3000)).astype(cd)
    # complex64: 3000 terms summed in another order than NumPy's
    check(xp.cumulative_sum(xp.asarray(c, device=DEV)), np.cumsum(c), rtol=None if cd == np.complex128 else 1e-4)


# --- argmax and argmin --------------------------------------------------------------------------------

@settings(max_examples=30)
@given(st.sampled_from(REAL), hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7), st.data())
def test_argmax_argmin_match_cpu(dtype, shape, data):
    a = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-3, 3) if dtype.kind != "u"
                             else st.integers(0, 3)))
    if dtype.kind == "f":
        specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], dtype)
        mask = data.draw(hnp.arrays(np.int8, shape, elements=st.integers(-6, 4)))
        a = np.where(mask >= 0, specials[np.clip(mask, 0, 4)], a)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keepdims = data.draw(st.booleans())
    x, c = xp.asarray(a, device=DEV), xp.asarray(a)
    for f in (xp.argmax, xp.argmin):
        got = no_readback(lambda: f(x, axis=axis, keepdims=keepdims))
        check(got, to_np(f(c, axis=axis, keepdims=keepdims)))


def test_argmax_argmin_long_reductions_first_occurrence():
    """Long reductions split into parts: the first of equal extrema and the first NaN still win."""
    rng = np.random.default_rng(9)
    a = rng.standard_normal(300001).astype(np.float32)
    a[[12345, 200000]] = 50
    a[[23456, 250000]] = -50
    for f, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
        check(f(xp.asarray(a, device=DEV)), np.asarray(ref(a), INDEX))
    a[[260000, 270000]] = np.nan
    for f in (xp.argmax, xp.argmin):
        check(f(xp.asarray(a, device=DEV)), np.asarray(260000, INDEX))
    b = rng.integers(0, 5, (3, 40000)).astype(np.uint8)[:, ::-1]
    for f, ref in ((xp.argmax, np.argmax), (xp.argmin, np.argmin)):
        check(f(xp.asarray(b, device=DEV), axis=1), ref(b, axis=1).astype(INDEX))
        check(f(xp.asarray(b, device=DEV), axis=0), ref(b, axis=0).astype(INDEX))


@pytest.mark.parametrize("kernel", ["argmax", "argmin"])
def test_arg_kernels_on_bool_and_complex(kernel):
    """The kernels take every dtype (the namespace takes real numbers only): complex lexicographically,
    NaN in either part first, as NumPy."""
    a = np.array([[1 + 2j, 1 + 3j, 0 - 1j, 1 + 3j], [2 + 0j, complex(1, np.nan), 2 + 0j, -5 + 9j]])
    b = np.array([[False, True, True], [False, False, False]])
    for arr in [v for v in (a, a.astype(np.complex64), b) if xp._dtypes.from_numpy(v.dtype) in DTYPES]:
        x = xp.asarray(arr, device=DEV)
        for axis in ((1,), (0, 1)):
            want = getattr(np, kernel)(arr, axis=axis[0] if len(axis) == 1 else None)
            o = xp.empty(np.shape(want), dtype=INDEX, device=DEV)
            _launch.launch(x.device, KERNELS[kernel], (x,), (o,), {"axis": axis, "keepdims": False})
            check(o, np.asarray(want, INDEX))


def test_captured_scan_argmax_matmul_replay_new_data():
    rng = np.random.default_rng(10)
    x = xp.asarray(rng.standard_normal((20, 300)).astype(np.float32), device=DEV)
    y = xp.asarray(rng.standard_normal((300, 24)).astype(np.float32), device=DEV)
    with xp.capture(DEV) as g:
        s = xp.cumulative_sum(x, axis=1)
        i = xp.argmax(x, axis=1)
        p = xp.matmul(x, y)
    new = rng.standard_normal((20, 300)).astype(np.float32)
    x[...] = xp.asarray(new, device=DEV)
    g.replay()
    check(s, np.cumsum(new, axis=1), rtol=1e-4)
    check(i, np.argmax(new, axis=1).astype(INDEX))
    check(p, new @ to_np(y), rtol=1e-4)


def test_contractions_over_empty_axes_are_zeros():
    """Empty operands bind no window beyond their buffer (the official suite found tensordot of a
    (5, 4, 0, 4) int64 and a (0, 4) int8 array failing validation)."""
    for s1, s2, axes in (((5, 4, 0, 4), (0, 4), 2), ((3, 0), (0, 5), 1), ((20, 0), (0, 17), 1)):
        for d1, d2 in ((INDEX, np.int8), (np.float32, WIDEST)):  # int64/float64 where supported
            a, b = np.ones(s1, d1), np.ones(s2, d2)
            got = to_np(xp.tensordot(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV), axes=axes))
            want = np.tensordot(a, b, axes=axes)
            assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", [xp.float32, xp.int8, xp.complex64])
def test_contractions_longer_than_an_invocations_loop(dtype):
    """More terms than one invocation may loop over on lavapipe (65535 iterations) are summed in chunks."""
    n = 70_001
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, (2, n)).astype(dtype)
    b = rng.integers(0, 2, (n, 3)).astype(dtype)
    if dtype == xp.complex64:
        a = a + 1j * a[:, ::-1]
    ga, gb = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
    with np.errstate(over="ignore"):
        want_mm, want_dot = a @ b, np.sum(np.conj(a[0]) * a[1])
    check = np.testing.assert_allclose if dtype.kind == "c" else np.testing.assert_array_equal
    check(to_np(xp.matmul(ga, gb)), want_mm.astype(dtype))
    check(to_np(xp.vecdot(ga[0], ga[1])), np.asarray(want_dot).astype(dtype))


def test_tiled_products_longer_than_an_invocations_loop():
    """A product big enough for the tiled kernel, with k beyond what lavapipe lets one invocation loop over."""
    n = 70_001
    rng = np.random.default_rng(6)
    a = rng.integers(0, 3, (16, n)).astype(np.float32)
    b = rng.integers(0, 3, (n, 16)).astype(np.float32)
    got = to_np(xp.matmul(xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)))
    np.testing.assert_array_equal(got, a.astype(np.float64) @ b.astype(np.float64))
