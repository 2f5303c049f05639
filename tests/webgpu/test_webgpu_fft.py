"""The fft extension on the WebGPU device against NumPy: power-of-two lengths in one pass and in several
(Stockham), every other length (Bluestein), all transforms over dtypes, axes, n/s, norms and strided,
reversed and offset views, batches split across storage bindings, NaN isolation between rows, capture
and replay, and no host readback inside any of the kernels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import fft
from numr_array._dtypes import from_numpy
from numr_array.backends import get_runtime
from numr_array.backends.webgpu import k_fft

from ..strategies import to_np
from .helpers import call_without_readback as no_readback

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
HAVE = xp.__array_namespace_info__().dtypes(device=DEV)
FLOAT = [d for d in (xp.float32, xp.float64, xp.complex64, xp.complex128) if d.name in HAVE]
REAL = [d for d in FLOAT if d.kind == "f"]
COMPLEX = [d for d in FLOAT if d.kind == "c"]
SINGLE = (xp.float32, xp.complex64)
NORMS = ["backward", "ortho", "forward"]


def client():
    return xp.asarray(0, device=DEV)._dev.client


def close(got, want: np.ndarray, n: int) -> None:
    """``got`` (a tensor) equals ``want`` to the FFT tolerance of an n-point transform, relative to the
    largest magnitude: 1e-4 log2(n) in single precision, 1e-11 in double."""
    g = to_np(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    single = g.dtype in (np.float32, np.complex64)
    tol = (1e-4 * max(1.0, math.log2(max(n, 2)))) if single else 1e-11
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    err = float(np.abs(g.astype(np.complex128) - want).max(initial=0.0)) / scale
    assert err <= tol, (err, tol)


def signal(rng, shape, dtype) -> np.ndarray:
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@st.composite
def views(draw, a: np.ndarray):
    """A device tensor holding a's values: contiguous, strided, reversed, or at an offset in a larger one."""
    kind = draw(st.sampled_from(["contiguous", "strided", "reversed", "offset", "transposed"]))
    if kind == "strided":
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        return xp.asarray(big, device=DEV)[..., ::2]
    if kind == "reversed":
        return xp.flip(xp.asarray(a[..., ::-1].copy(), device=DEV), axis=-1)
    if kind == "offset":
        big = np.zeros((a.shape[0] + 1,) + a.shape[1:], a.dtype)
        big[1:] = a
        return xp.asarray(big, device=DEV)[1:]
    if kind == "transposed":
        return xp.permute_dims(xp.asarray(np.ascontiguousarray(a.T), device=DEV), tuple(range(a.ndim))[::-1])
    return xp.asarray(a, device=DEV)


# lengths: powers of two in one pass (up to a workgroup's points) and several, and others (Bluestein,
# including primes and lengths whose convolution needs several passes)
LENGTHS = [1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 31, 64, 97, 128, 360, 512, 1024, 1031, 2048, 4096, 8192, 2053]


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(dtype, n):
    rng = np.random.default_rng(n)
    a = signal(rng, (2, n), dtype)
    x = xp.asarray(a, device=DEV)
    for name in ("fft", "ifft"):
        r = no_readback(getattr(fft, name), x)
        assert r.dtype == dtype
        close(r, getattr(np.fft, name)(a.astype(np.complex128)), n)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("n", [256, 1024, 96, 1])
def test_many_passes(monkeypatch, dtype, n):
    """With 64 points per workgroup, 256 and 1024 points take three and four global passes (the
    ping-pong through a scratch buffer, radices 8 and 4, odd and even pass counts) and 96 points a
    Bluestein convolution of 256 in three."""
    monkeypatch.setattr(k_fft, "_MAX_LOCAL", 64)
    monkeypatch.setattr(k_fft, "_tables", type(k_fft._tables)())  # tables for the other plan
    rng = np.random.default_rng(n)
    a = signal(rng, (3, n), dtype)
    x = xp.asarray(a, device=DEV)
    close(no_readback(fft.fft, x, norm="ortho"), np.fft.fft(a.astype(np.complex128), norm="ortho"), n)
    xt = xp.asarray(a.T.copy(), device=DEV)  # along axis 0: through the row copies
    close(no_readback(fft.ifft, xt, axis=0), np.fft.ifft(a.T.astype(np.complex128), axis=0), n)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@settings(max_examples=15)
@given(data=st.data())
def test_one_dimensional(name, data):
    real_in = name in ("rfft", "ihfft")
    dtype = data.draw(st.sampled_from(REAL if real_in else FLOAT), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9), label="shape")
    a = signal(np.random.default_rng(data.draw(st.integers(0, 99), label="seed")), shape, dtype)
    x = data.draw(views(a), label="x")
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    m = a.shape[axis]
    n = data.draw(st.integers(1, 2 * m + 3), label="n")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    r = no_readback(getattr(fft, name), x, n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(a.astype(np.float64 if real_in else np.complex128), n=n, axis=axis, norm=norm)
    single = dtype in SINGLE
    if name in ("irfft", "hfft"):
        assert r.dtype == (xp.float32 if single else xp.float64)
    else:
        assert r.dtype == (xp.complex64 if single else xp.complex128)
    close(r, want, n)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@settings(max_examples=12)
@given(data=st.data())
def test_n_dimensional(name, data):
    real_in = name == "rfftn"
    dtype = data.draw(st.sampled_from(REAL if real_in else FLOAT), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=7), label="shape")
    a = signal(np.random.default_rng(data.draw(st.integers(0, 99), label="seed")), shape, dtype)
    x = data.draw(views(a), label="x")
    axes = data.draw(st.permutations(range(a.ndim)).flatmap(
        lambda p: st.integers(1, a.ndim).map(lambda k: list(p[:k]))), label="axes")
    s = [data.draw(st.integers(1, 2 * a.shape[ax] + 1), label="s") for ax in axes]
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    r = no_readback(getattr(fft, name), x, s=s, axes=axes, norm=norm)
    want = getattr(np.fft, name)(a.astype(np.float64 if real_in else np.complex128), s=s, axes=axes, norm=norm)
    close(r, want, math.prod(s))


def test_real_transforms_round_trip_long():
    rng = np.random.default_rng(5)
    for n in (4096, 3001):
        a = rng.standard_normal((2, n)).astype(REAL[-1])  # float64, or float32 without shader-f64
        x = xp.asarray(a, device=DEV)
        spec = fft.rfft(x)
        close(spec, np.fft.rfft(a), n)
        close(fft.irfft(spec, n=n), a, n)
        close(fft.hfft(spec, n=n), np.fft.hfft(np.fft.rfft(a), n=n), n)


def test_size_one_empty_and_padding():
    for dtype in COMPLEX:
        one = xp.asarray(np.array([[2 - 1j], [3j]], dtype), device=DEV)
        close(fft.fft(one), np.array([[2 - 1j], [3j]]), 1)
        close(fft.ifft(one, norm="forward"), np.array([[2 - 1j], [3j]]), 1)
        close(fft.fft(one, n=5), np.fft.fft(np.array([[2 - 1j], [3j]]), n=5), 5)
        empty = xp.zeros((0,), dtype=dtype, device=DEV)
        close(fft.fft(empty, n=8), np.zeros(8), 8)
        close(fft.ifft(empty, n=6), np.zeros(6), 6)
        assert fft.fft(xp.zeros((0, 4), dtype=dtype, device=DEV)).shape == (0, 4)
    close(fft.irfft(xp.asarray([5.0 + 1j], device=DEV), n=1), np.array([5.0]), 1)
    close(fft.hfft(xp.asarray([5.0 + 1j, 2j], device=DEV), n=2), np.fft.hfft([5.0 + 1j, 2j], n=2), 2)


@pytest.mark.parametrize("n", [16, 12])
def test_nan_stays_in_its_row(n):
    """A NaN spreads over its own row's transform and nowhere else (rows are independent)."""
    a = np.ones((3, n), np.complex64)
    a[1, 2] = np.nan
    r = to_np(fft.fft(xp.asarray(a, device=DEV)))
    assert np.isnan(r[1]).all()
    assert not np.isnan(r[0]).any() and not np.isnan(r[2]).any()
    close(fft.fft(xp.asarray(a[::2], device=DEV)), np.fft.fft(a[::2].astype(np.complex128)), n)


def test_batches_split_across_bindings(monkeypatch):
    """With storage bindings of 4 KiB, the rows of a pass go in several launches; a row larger than a
    binding raises MemoryError."""
    c = client()
    monkeypatch.setattr(c, "max_binding", 4096)
    rng = np.random.default_rng(3)
    for dtype in COMPLEX:
        a = signal(rng, (9, 64), dtype)
        x = xp.asarray(a, device=DEV)
        close(fft.fft(x), np.fft.fft(a.astype(np.complex128)), 64)
        close(fft.ifft(x[:, :60], axis=-1), np.fft.ifft(a[:, :60].astype(np.complex128)), 60)
        with pytest.raises(MemoryError):
            fft.fft(xp.asarray(signal(rng, (1024,), dtype), device=DEV))


def test_capture_replays_on_new_data():
    rng = np.random.default_rng(4)
    dtype = COMPLEX[-1]
    a = signal(rng, (2, 8192), dtype)
    b = signal(rng, (3, 6), dtype)
    x, y = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
    with xp.capture(DEV) as g:
        f1 = fft.fft(x)
        f2 = fft.irfftn(y, s=(3, 9), axes=(0, 1), norm="ortho")
        f3 = fft.ifftshift(y, axes=(1,))
        f4 = fft.rfftfreq(9, d=0.25, device=DEV)
    a2, b2 = signal(rng, a.shape, dtype), signal(rng, b.shape, dtype)
    x[...] = xp.asarray(a2, device=DEV)
    y[...] = xp.asarray(b2, device=DEV)
    g.replay()
    close(f1, np.fft.fft(a2.astype(np.complex128)), 8192)
    close(f2, np.fft.irfftn(b2.astype(np.complex128), s=(3, 9), axes=(0, 1), norm="ortho"), 27)
    np.testing.assert_array_equal(to_np(f3), np.fft.ifftshift(b2, axes=(1,)))
    np.testing.assert_array_equal(to_np(f4), np.fft.rfftfreq(9, 0.25).astype(f4.dtype))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(name):
    rng = np.random.default_rng(6)
    for dtype in (xp.bool, xp.int8, xp.uint16, xp.float32, COMPLEX[-1]):
        a = (rng.standard_normal((5, 4, 3)) * 10).astype(dtype)
        x = xp.flip(xp.asarray(a[::-1].copy(), device=DEV), axis=0)
        for axes in (None, 0, (2, 0), (-1,)):
            r = no_readback(getattr(fft, name), x, axes=axes)
            np.testing.assert_array_equal(to_np(r), getattr(np.fft, name)(a, axes=axes))


@pytest.mark.parametrize("n", [1, 2, 7, 10, 33])
def test_frequencies(n):
    # computed in float64 and rounded once where the adapter has it; in float32 (two roundings) otherwise
    rtol = 1e-7 if xp.float64 in REAL else 2 * float(np.finfo(np.float32).eps)
    for dtype in REAL:
        for d in (1.0, 0.3, -2.5):
            r = no_readback(fft.fftfreq, n, d=d, dtype=dtype, device=DEV)
            np.testing.assert_allclose(to_np(r), np.fft.fftfreq(n, d).astype(dtype), rtol=rtol, atol=0)
            r = no_readback(fft.rfftfreq, n, d=d, dtype=dtype, device=DEV)
            np.testing.assert_allclose(to_np(r), np.fft.rfftfreq(n, d).astype(dtype), rtol=rtol, atol=0)


def test_table_cache_keeps_the_most_recent_tables(monkeypatch):
    monkeypatch.setattr(k_fft, "TABLES_KEPT", 4)
    rng = np.random.default_rng(7)
    lengths = [11, 13, 17, 19, 23, 11]  # the first length's tables are evicted, then made again
    for n in lengths:
        a = signal(rng, (n,), xp.complex64)
        close(fft.fft(xp.asarray(a, device=DEV)), np.fft.fft(a.astype(np.complex128)), n)
    assert len(k_fft._tables[client()]) <= 4


def test_zero_padding_and_hermitian_extension_are_one_launch(monkeypatch):
    """rfft of a zero-padded real input of 1024 points is one pass (reading the real rows as pairs, zeros
    past their end) and the untangling; irfft of a half spectrum one pass (tangling the half spectrum with
    its conjugated mirror and zeros as it reads it, writing the real outputs)."""
    c = client()
    rng = np.random.default_rng(21)
    a = rng.standard_normal(1000).astype(np.float32)
    x = xp.asarray(a, device=DEV)
    spec = fft.rfft(x, n=1024)
    fft.irfft(spec, n=1024)
    calls = []
    real = c.dispatch
    monkeypatch.setattr(c, "dispatch", lambda *args, **kw: (calls.append(1), real(*args, **kw))[1])
    spec = fft.rfft(x, n=1024)
    assert len(calls) == 2
    calls.clear()
    back = fft.irfft(spec, n=1024)
    assert len(calls) == 1
    want = np.fft.rfft(a.astype(np.float64), n=1024)
    np.testing.assert_allclose(to_np(spec), want, rtol=0, atol=1e-4 * np.abs(want).max())
    np.testing.assert_allclose(to_np(back)[:1000], a, rtol=0, atol=1e-5)
    np.testing.assert_array_less(np.abs(to_np(back)[1000:]), 1e-5)


@pytest.mark.parametrize("dtype", REAL, ids=lambda d: d.name)
def test_rfft_of_a_power_of_two_is_a_complex_transform_of_half_the_points(dtype, monkeypatch):
    """rfft of n = 2^k >= 4 real points transforms n/2 complex points (even + i odd) and untangles them:
    padded, trimmed, along inner and outer axes of strided views, every norm, n = 4 at the smallest."""
    sizes = []
    real = k_fft._fft_rows
    monkeypatch.setattr(k_fft, "_fft_rows", lambda c, cw, src, dst, n, *a, **k: (sizes.append(n), real(c, cw, src, dst, n, *a, **k))[1])
    rng = np.random.default_rng(22)
    cases = [((1000,), 0, 1024), ((3, 64), 1, None), ((64, 5), 0, 32), ((4, 7, 16), 1, 8), ((2, 300), -1, 256),
             ((8,), 0, 4), ((6,), 0, 4)]
    for (shape, axis, n), norm in zip(cases, NORMS * 3):
        a = signal(rng, shape, dtype)
        for x in (xp.asarray(a, device=DEV), xp.asarray(np.repeat(a, 2, axis=-1), device=DEV)[..., ::2]):
            sizes.clear()
            got = fft.rfft(x, n=n, axis=axis, norm=norm)
            length = n or shape[axis]
            assert sizes and max(sizes) == length // 2
            close(got, np.fft.rfft(a.astype(np.float64), n=n, axis=axis, norm=norm), length)
    a = signal(rng, (16, 8, 32), dtype)
    close(fft.rfftn(xp.asarray(a, device=DEV)), np.fft.rfftn(a.astype(np.float64)), 16 * 8 * 32)
    x = xp.asarray(signal(rng, (3, 100), dtype), device=DEV)
    with xp.capture(DEV) as g:
        r = fft.rfft(x, n=128)
    new = signal(rng, (3, 100), dtype)
    x[...] = xp.asarray(new, device=DEV)
    g.replay()
    close(r, np.fft.rfft(new.astype(np.float64), n=128), 128)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: d.name)
def test_irfft_of_a_power_of_two_is_an_inverse_transform_of_half_the_points(dtype, monkeypatch):
    """irfft to n = 2^k >= 4 points inverts n/2 complex points: trimmed and padded half spectra, inner and
    outer axes, strided views, every norm; the imaginary parts of the zero and Nyquist frequencies drop out
    as in NumPy."""
    sizes = []
    real = k_fft._fft_rows
    monkeypatch.setattr(k_fft, "_fft_rows", lambda c, cw, src, dst, n, *a, **k: (sizes.append(n), real(c, cw, src, dst, n, *a, **k))[1])
    rng = np.random.default_rng(23)
    cases = [((513,), 0, 1024), ((300,), 0, 1024), ((3, 33), 1, 64), ((17, 5), 0, 32), ((4, 5, 16), 1, 8),
             ((2, 300), -1, 256), ((3,), 0, 4), ((2,), 0, 4)]
    for (shape, axis, n), norm in zip(cases, NORMS * 3):
        a = signal(rng, shape, dtype)
        for x in (xp.asarray(a, device=DEV), xp.asarray(np.repeat(a, 2, axis=-1), device=DEV)[..., ::2]):
            sizes.clear()
            got = fft.irfft(x, n=n, axis=axis, norm=norm)
            assert sizes and max(sizes) == n // 2
            close(got, np.fft.irfft(a.astype(np.complex128), n=n, axis=axis, norm=norm), n)
    x = xp.asarray(signal(rng, (3, 65), dtype), device=DEV)
    with xp.capture(DEV) as g:
        r = fft.irfft(x, n=128)
    new = signal(rng, (3, 65), dtype)
    x[...] = xp.asarray(new, device=DEV)
    g.replay()
    close(r, np.fft.irfft(new.astype(np.complex128), n=128), 128)


@pytest.mark.parametrize("dtype", COMPLEX, ids=lambda d: d.name)
def test_long_transforms_take_two_passes_of_a_memory_sector_per_row(dtype):
    """With 4096 complex64 (or 2048 complex128) points per workgroup, 2^19 and 2^20 points are two global
    passes (workgroups of 32 bytes of consecutive columns: radices up to 1024), fft_conv's transforms; the
    results match NumPy's, and rfft/irfft of 2^20 (a complex transform of 2^19) round-trip."""
    c = client()
    cw = k_fft.wt(from_numpy(dtype))
    if k_fft._local(c, cw) * dtype.itemsize < 32768:
        pytest.skip("the adapter's workgroup memory holds fewer points")
    for n in (1 << 19, 1 << 20):
        radices = k_fft._radices(c, cw, n)
        assert len(radices) == 2 and math.prod(radices) == n, radices
    rng = np.random.default_rng(24)
    a = signal(rng, (1 << 19,), dtype)
    close(fft.fft(xp.asarray(a, device=DEV)), np.fft.fft(a.astype(np.complex128)), 1 << 19)
    r = rng.standard_normal((1 << 20) - 4096).astype(np.float32 if dtype == np.complex64 else np.float64)
    spec = fft.rfft(xp.asarray(r, device=DEV), n=1 << 20)
    close(spec, np.fft.rfft(r.astype(np.float64), n=1 << 20), 1 << 20)
    close(fft.irfft(spec, n=1 << 20)[:r.size], r.astype(np.float64), 1 << 20)


@pytest.mark.parametrize("threads", [1024])
def test_pass_workgroup_sizes(monkeypatch, threads):
    """Passes of another invocation count per workgroup (PASS_THREADS; 4 points per invocation at 1024)
    give the same transforms: one pass, two passes, inverse, batched rows."""
    monkeypatch.setattr(k_fft, "PASS_THREADS", threads)
    rng = np.random.default_rng(threads)
    for n, rows in ((4096, 2), (1 << 13, 3), (1 << 17, 1)):
        a = signal(rng, (rows, n), xp.complex64)
        x = xp.asarray(a, device=DEV)
        close(fft.fft(x), np.fft.fft(a.astype(np.complex128)), n)
        close(fft.ifft(x, norm="ortho"), np.fft.ifft(a.astype(np.complex128), norm="ortho"), n)


@pytest.mark.parametrize("dtype", REAL, ids=lambda d: d.name)
def test_real_rows_are_read_and_written_by_the_passes(monkeypatch, dtype):
    """Contiguous real rows: rfft's first pass reads them as pairs (zeros past their end, the rest of a
    longer row ignored); irfft's first pass tangles the contiguous half spectra and its last pass writes the
    real outputs; with several passes (64 points per workgroup) over batches of rows: no pairing, tangling
    or storing launch, NumPy's results."""
    monkeypatch.setattr(k_fft, "_MAX_LOCAL", 64)
    monkeypatch.setattr(k_fft, "_tables", type(k_fft._tables)())
    c = client()
    names = []
    real = c.dispatch
    monkeypatch.setattr(c, "dispatch", lambda pipe, *a, **k: (names.append(
        next(key[0] for key, p in c._pipelines.items() if p is pipe)), real(pipe, *a, **k))[1])
    rng = np.random.default_rng(25)
    for shape, n in (((3, 1000), 1024), ((2, 1500), 1024), ((4, 256), 256)):
        a = rng.standard_normal(shape).astype(dtype)
        names.clear()
        spec = fft.rfft(xp.asarray(a, device=DEV), n=n)
        assert "rfft_pairs" not in names and names.count("fft_pass") == len(k_fft._radices(c, k_fft.wt(
            from_numpy(np.complex64 if dtype == np.float32 else np.complex128)), n // 2)) > 1
        close(spec, np.fft.rfft(a.astype(np.float64), n=n), n)
        names.clear()
        back = fft.irfft(spec, n=n, norm="forward")
        assert set(names) == {"fft_pass"}
        close(back, np.fft.irfft(np.fft.rfft(a.astype(np.float64), n=n), n=n, norm="forward"), n)
