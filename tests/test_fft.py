"""The fft extension: differential tests against numpy.fft on the device under test (n/s/axis/axes/norm,
float32 and complex64 precision kept, non-contiguous views), round trips, the frequency helpers,
graph capture, and the errors the functions raise."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array import fft

from .helpers import defaults
from .strategies import ALL, DEVICE, FLOAT, REAL_FLOAT, supported, to_np, views

DEFAULTS = defaults(DEVICE)
FLOAT_DEFAULT, COMPLEX_DEFAULT = DEFAULTS["real floating"], DEFAULTS["complex floating"]

SINGLE = (xp.float32, xp.complex64)
NORMS = ["backward", "ortho", "forward"]
COMPLEX_OF = {xp.float32: xp.complex64, xp.float64: xp.complex128, xp.complex64: xp.complex64,
              xp.complex128: xp.complex128}
REAL_OF = {xp.float32: xp.float32, xp.float64: xp.float64, xp.complex64: xp.float32, xp.complex128: xp.float64}


def elements(dtype):
    width = 32 if dtype in SINGLE else 64
    real = st.floats(-10, 10, width=width)
    return st.builds(complex, real, real) if dtype.kind == "c" else real


@st.composite
def signals(draw, dtypes, min_dims=1, max_dims=3, max_side=6):
    """(tensor, array) with bounded values: contiguous or a strided/reversed view."""
    dtype = draw(st.sampled_from(supported(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side))
    a = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    return draw(views(a)), a


def check(t, expected, dtype, points: int = 1):
    """``t`` is a tensor of ``dtype`` with ``expected``'s shape and values (a sum of ``points`` terms of
    magnitude 10 each)."""
    assert type(t) is xp.Tensor
    assert t.dtype == dtype, (t.dtype, dtype)
    assert t.shape == expected.shape, (t.shape, expected.shape)
    rtol = 1e-4 if dtype in SINGLE else 1e-10
    np.testing.assert_allclose(to_np(t), expected, rtol=rtol, atol=rtol * 10 * max(1, points))


# (function, real-valued input only, result is complex, the axis is a Hermitian half on input)
ONE_DIM = {"fft": (False, True, False), "ifft": (False, True, False), "rfft": (True, True, False),
           "ihfft": (True, True, False), "irfft": (False, False, True), "hfft": (False, False, True)}


@pytest.mark.parametrize("name", list(ONE_DIM))
@given(data=st.data())
def test_one_dimensional(name, data):
    real_in, complex_out, half_in = ONE_DIM[name]
    x, a = data.draw(signals(REAL_FLOAT if real_in else FLOAT), label="x")
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    m = a.shape[axis]
    n = data.draw(st.none() | st.integers(1, 2 * m + 2), label="n")
    if half_in and n is None and m == 1:
        n = 1  # the default 2*(m-1) would be 0 points
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    kwargs = {k: v for k, v in (("n", n), ("axis", axis), ("norm", norm)) if v is not None}
    r = getattr(fft, name)(x, **({} if kwargs == {"axis": -1, "norm": "backward"} else kwargs))
    expected = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
    dtype = COMPLEX_OF[x.dtype] if complex_out else REAL_OF[x.dtype]
    check(r, expected, dtype, n or m)


def some_axes(ndim: int):
    """``axes=``: None, or a non-empty list of distinct axes in any order."""
    return st.none() | st.permutations(range(ndim)).flatmap(lambda p: st.integers(1, ndim).map(lambda k: list(p[:k])))


# (function, real-valued input only); irfftn has its own test below
N_DIM = {"fftn": False, "ifftn": False, "rfftn": True}


@pytest.mark.parametrize("name", list(N_DIM))
@given(data=st.data())
def test_n_dimensional(name, data):
    real_in = N_DIM[name]
    x, a = data.draw(signals(REAL_FLOAT if real_in else FLOAT), label="x")
    axes = data.draw(some_axes(a.ndim), label="axes")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    s = None
    if axes is not None and data.draw(st.booleans(), label="with s"):
        s = [data.draw(st.integers(1, 2 * a.shape[ax] + 1), label="s") for ax in axes]
    r = getattr(fft, name)(x, s=s, axes=axes, norm=norm)
    expected = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
    check(r, expected, COMPLEX_OF[x.dtype], math.prod(expected.shape))


@given(data=st.data())
def test_irfftn(data):
    """irfftn of spectra of real signals. A complex-to-real transform assumes a Hermitian spectrum, and
    libraries differ on inputs that are not (pocketfft keeps what cuFFT's n-D transform drops), so the
    inputs are rfftn of a real signal: the result is that signal, as NumPy finds too."""
    dtype = data.draw(st.sampled_from(supported(REAL_FLOAT)), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6), label="shape")
    signal = data.draw(hnp.arrays(dtype, shape, elements=elements(dtype)), label="signal")
    axes = data.draw(some_axes(signal.ndim), label="axes")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    resolved = list(range(signal.ndim)) if axes is None else axes
    spectrum = np.fft.rfftn(signal, axes=resolved, norm=norm).astype(COMPLEX_OF[dtype])
    x = data.draw(views(spectrum), label="x")
    s = [signal.shape[ax] for ax in resolved]
    # s=None needs an even last length: the default 2*(M-1) is even
    default = axes is None and s[-1] % 2 == 0 and data.draw(st.booleans(), label="default s")
    r = fft.irfftn(x, axes=axes, norm=norm) if default else fft.irfftn(x, s=s, axes=resolved, norm=norm)
    check(r, signal, dtype, signal.size)
    check(r, np.fft.irfftn(spectrum, s=s, axes=resolved, norm=norm), dtype, signal.size)


def test_minus_one_in_s_is_the_default_size():
    a = np.arange(12.0).reshape(3, 4).astype(COMPLEX_DEFAULT)
    x = xp.asarray(a, device=DEVICE)
    check(fft.fftn(x, s=(-1, 6), axes=(0, 1)), np.fft.fftn(a, s=(3, 6), axes=(0, 1)), COMPLEX_DEFAULT, 18)
    check(fft.irfftn(x, s=(2, -1), axes=(0, 1)), np.fft.irfftn(a, s=(2, 6), axes=(0, 1)), FLOAT_DEFAULT, 12)
    check(fft.rfftn(xp.asarray(a.real, device=DEVICE), s=(-1, -1), axes=(1, 0)),
          np.fft.rfftn(a.real, axes=(1, 0)), COMPLEX_DEFAULT, 12)


def test_complex_transforms_of_an_empty_set_of_axes_copy():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    r = fft.fftn(xp.asarray(a, device=DEVICE), axes=())
    check(r, a.astype(np.complex64), xp.complex64)


def test_empty_batches_and_zero_padding():
    x = xp.zeros((0, 4), dtype=xp.complex64, device=DEVICE)
    assert fft.fft(x).shape == (0, 4) and fft.fft(x).dtype == xp.complex64
    assert fft.rfft(xp.zeros((3, 0, 8), device=DEVICE), n=5, axis=-1).shape == (3, 0, 3)
    padded = fft.fft(xp.zeros((0,), dtype=COMPLEX_DEFAULT, device=DEVICE), n=4)
    np.testing.assert_array_equal(to_np(padded), np.zeros(4))


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
                                  "fftn", "ifftn", "rfftn", "irfftn"])
def test_an_empty_axis_padded_to_n_points_transforms_to_zeros(name):
    """An empty axis zero-padded to n (or s) points is all zeros, and so is its transform on every device
    (NumPy's irfft/irfftn returned uninitialised memory here, different on every call)."""
    dtype = xp.float32 if name in ("rfft", "ihfft", "rfftn") else xp.complex64
    for shape in ((0,), (0, 2), (2, 0)):
        x = xp.zeros(shape, dtype=dtype, device=DEVICE)
        axis = shape.index(0)
        for _ in range(3):
            if not name.endswith("n"):
                r = getattr(fft, name)(x, n=5, axis=axis)
                length = 3 if name in ("rfft", "ihfft") else 5
                expected_shape = shape[:axis] + (length,) + shape[axis + 1:]
            else:
                axes = tuple(range(len(shape)))
                sizes = (3,) * len(shape)
                r = getattr(fft, name)(x, s=sizes, axes=axes)
                expected_shape = sizes[:-1] + (2,) if name == "rfftn" else sizes
            assert r.shape == expected_shape, (shape, r.shape)
            np.testing.assert_array_equal(to_np(r), np.zeros(expected_shape))
    # without n, an empty axis gives no points to transform (NumPy's ValueError)
    with pytest.raises(ValueError, match=name):
        getattr(fft, name)(xp.zeros((0,), dtype=dtype, device=DEVICE))


@given(signals(FLOAT), st.sampled_from(NORMS))
def test_round_trips(xa, norm):
    x, a = xa
    back = fft.ifftn(fft.fftn(x, norm=norm), norm=norm)
    check(back, a.astype(COMPLEX_OF[x.dtype]), COMPLEX_OF[x.dtype], a.size)
    back = fft.ifft(fft.fft(x, norm=norm, axis=0), norm=norm, axis=0)
    check(back, a.astype(COMPLEX_OF[x.dtype]), COMPLEX_OF[x.dtype], a.shape[0])
    if x.dtype.kind == "f":
        n = a.shape[-1]
        check(fft.irfft(fft.rfft(x, norm=norm), n=n, norm=norm), a, x.dtype, n)


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@given(data=st.data())
def test_shifts(name, data):
    dtype = data.draw(st.sampled_from(supported(ALL)), label="dtype")
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5), label="shape")
    a = data.draw(hnp.arrays(dtype, shape), label="a")
    x = xp.asarray(a, device=DEVICE) if a.size == 0 else data.draw(views(a), label="x")
    ndim = a.ndim
    axes = data.draw(st.none() | (st.integers(-ndim, ndim - 1) if ndim else st.none())
                     | st.permutations(range(ndim)).flatmap(lambda p: st.integers(0, ndim).map(lambda k: list(p[:k]))),
                     label="axes")
    r = getattr(fft, name)(x, axes=axes) if axes is not None or data.draw(st.booleans()) else getattr(fft, name)(x)
    # NumPy cannot shift a 0-D array (np.roll with no axes): nothing to shift is x itself
    expected = a if ndim == 0 or axes == [] else getattr(np.fft, name)(a, axes=axes)
    assert r.dtype == dtype and r.shape == a.shape
    np.testing.assert_array_equal(to_np(r), expected)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@given(n=st.integers(1, 40), d=st.floats(0.05, 20) | st.integers(1, 5) | st.floats(-5, -0.1),
       dtype=st.none() | st.sampled_from(supported(REAL_FLOAT)))
def test_frequencies(name, n, d, dtype):
    r = getattr(fft, name)(n, d=d, dtype=dtype, device=DEVICE)
    expected = getattr(np.fft, name)(n, d)
    default = xp.__array_namespace_info__().default_dtypes(device=DEVICE)["real floating"]
    want = default if dtype is None else dtype
    assert r.device == xp._device.parse_device(DEVICE)
    check(r, expected.astype(want), want)


def test_frequency_defaults():
    r = fft.fftfreq(4)
    np.testing.assert_array_equal(to_np(r), [0.0, 0.25, -0.5, -0.25])
    np.testing.assert_array_equal(to_np(fft.rfftfreq(5, d=0.5)), [0.0, 0.4, 0.8])


def test_fft_replays_in_a_capture():
    a = np.arange(8.0).astype(COMPLEX_DEFAULT)
    x = xp.asarray(a, device=DEVICE)
    with xp.capture(DEVICE) as g:
        spectrum = fft.fft(x, norm="ortho")
        shifted = fft.fftshift(x)
        real = fft.irfft(x, n=6)
        freqs = fft.fftfreq(8, d=0.5, device=DEVICE)
    xp.multiply(x, 3.0, out=x)
    g.replay()
    check(spectrum, np.fft.fft(3 * a, norm="ortho"), COMPLEX_DEFAULT, 8)
    check(shifted, np.fft.fftshift(3 * a), COMPLEX_DEFAULT)
    check(real, np.fft.irfft(3 * a, n=6), FLOAT_DEFAULT, 8)
    check(freqs, np.fft.fftfreq(8, 0.5), FLOAT_DEFAULT)


def test_all_14_functions():
    names = {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
             "rfftfreq", "fftshift", "ifftshift"}
    numpy_extras = {"fft2", "ifft2", "rfft2", "irfft2"}  # NumPy's (tests/test_np_polynomial.py)
    assert set(fft.__all__) == names | numpy_extras
    assert all(callable(getattr(fft, n)) for n in names)


# --- errors --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(ONE_DIM) + list(N_DIM))
def test_integer_and_bool_input_is_rejected(name):
    for value in ([1, 2, 3, 4], [True, False]):
        with pytest.raises(TypeError, match=name):
            getattr(fft, name)(xp.asarray(value, device=DEVICE))


@pytest.mark.parametrize("name", ["rfft", "ihfft", "rfftn"])
def test_complex_input_to_real_transforms_is_rejected(name):
    with pytest.raises(TypeError, match=name):
        getattr(fft, name)(xp.asarray([1j, 2.0], device=DEVICE))


def test_argument_errors():
    x = xp.asarray([[1j, 2, 3], [4, 5, 6]], device=DEVICE)
    with pytest.raises(ValueError, match="fft: n"):
        fft.fft(x, n=0)
    with pytest.raises(TypeError, match="fft: n"):
        fft.fft(x, n=2.0)
    with pytest.raises(ValueError, match="norm"):
        fft.fft(x, norm="none")
    with pytest.raises(ValueError, match="norm"):
        fft.fftn(x, norm=None)
    with pytest.raises(IndexError, match="ifft"):
        fft.ifft(x, axis=2)
    with pytest.raises(IndexError, match="fft"):
        fft.fft(xp.asarray(1j, device=DEVICE))
    with pytest.raises(ValueError, match="irfft"):
        fft.irfft(xp.asarray([[1j], [2j]], device=DEVICE))  # 2*(1-1) = 0 points
    with pytest.raises(ValueError, match="hfft"):
        fft.hfft(xp.asarray([1j], device=DEVICE))
    with pytest.raises(ValueError, match="fftn: s"):
        fft.fftn(x, s=(2, 2))
    with pytest.raises(ValueError, match="fftn"):
        fft.fftn(x, s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="fftn"):
        fft.fftn(x, s=(0, 2), axes=(0, 1))
    with pytest.raises(ValueError, match="repeated"):
        fft.ifftn(x, axes=(0, -2))
    with pytest.raises(ValueError, match="rfftn"):
        fft.rfftn(xp.ones((2, 2), device=DEVICE), axes=())
    with pytest.raises(TypeError, match="axes"):
        fft.fftn(x, axes=1)
    with pytest.raises(ValueError, match="repeated"):
        fft.fftshift(x, axes=(1, 1))
    with pytest.raises(IndexError, match="ifftshift"):
        fft.ifftshift(x, axes=3)
    for name in ("fftfreq", "rfftfreq"):
        with pytest.raises(ValueError, match=name):
            getattr(fft, name)(0)
        with pytest.raises(ValueError, match=name):
            getattr(fft, name)(4, d=0.0)
        with pytest.raises(TypeError, match=name):
            getattr(fft, name)(4.0)
        with pytest.raises(TypeError, match=name):
            getattr(fft, name)(4, dtype=COMPLEX_DEFAULT)
        with pytest.raises(TypeError, match=name):
            getattr(fft, name)(4, dtype=DEFAULTS["integral"])
    with pytest.raises(TypeError, match="fft"):
        fft.fft(np.ones(4, np.complex128))
