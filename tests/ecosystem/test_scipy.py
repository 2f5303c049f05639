"""SciPy with ``SCIPY_ARRAY_API=1``: functions of scipy.special, scipy.stats, scipy.fft and scipy.signal
that advertise array API support take numr tensors and return numr tensors on the same device, with the
values of the NumPy run."""

import numpy as np
import pytest

import numr_array as xp

from ..helpers import device_data, needs_dtype
from .helpers import assert_tensor_on, host

pytestmark = pytest.mark.usefixtures("scipy_array_api")

_rng = np.random.default_rng(0)
U = _rng.uniform(0.1, 0.9, 24)          # in (0, 1): probabilities, betainc's x, ...
V = _rng.uniform(0.5, 3.0, 24)          # positive
N = _rng.standard_normal(24)
M = _rng.standard_normal((4, 6))
G = [_rng.standard_normal(12) + shift for shift in (0.0, 0.3, 0.8)]   # samples for the k-sample tests


def _supported_on(module, name: str, device) -> None:
    """Skip where SciPy itself says the function runs on the CPU only (its array API capabilities table):
    on other devices it would need an implicit transfer, which numr_array refuses."""
    if device.kind == "cpu":
        return
    from scipy._lib._array_api import xp_capabilities_table
    caps = xp_capabilities_table.get(getattr(module, name.split("-")[0]), {})
    if caps.get("cpu_only"):
        pytest.skip(f"SciPy supports {module.__name__}.{name} on the CPU only (except for {caps['exceptions']})")


# where SciPy makes an intermediate array without device=, so that it lands on the default device (SciPy
# 1.17/1.18: rankdata and kruskal in _rankdata, chisquare in _power_divergence, freqz_zpk in
# npp_polyvalfromroots); with the default device set to the device under test (NUMR_DEVICE) they work
_DEFAULT_DEVICE_ONLY = {"rankdata", "kruskal", "chisquare", "freqz_zpk"}


def _on_default_device(name: str, device) -> None:
    if name in _DEFAULT_DEVICE_ONLY and device != xp.__array_namespace_info__().default_device():
        pytest.skip(f"SciPy's {name} puts an intermediate array on the default device; set NUMR_DEVICE={device}")


# SciPy 1.17 computes these through NumPy (np.asarray of the arguments) for an array namespace it
# does not know, numr_array's among them: on a device other than the CPU they raise numr_array's TypeError
# for an implicit copy to the host. Expected per function, so that another function doing so fails, and
# one of these that starts to work on the device is noticed (remove it here).
_THROUGH_NUMPY = {"erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit", "gammaln", "psi", "i0",
                  "i0e", "i1e", "entr", "xlog1py", "gammainc", "gammaincc", "zeta", "chdtr", "normaltest",
                  "jarque_bera", "bartlett"}


def _run(fn, args, device, fields=None, name=None):
    """fn on NumPy arguments and on the same values as numr tensors; the numr results, checked to be
    tensors on ``device`` with the NumPy run's values (or, for a function ``name`` in _THROUGH_NUMPY on
    a device other than the CPU, the TypeError that refuses the implicit copy to the host)."""
    # (on a device without float64, both runs take float32 data: these calls are about SciPy's use of the
    # namespace; SciPy keeps float32 in float32)
    args = [device_data(a, device) if isinstance(a, np.ndarray) else a for a in args]
    ref = fn(*args)
    tensors = [xp.asarray(a, device=device) if isinstance(a, np.ndarray) else a for a in args]
    if name in _THROUGH_NUMPY and device.kind != "cpu":
        with pytest.raises(TypeError, match="implicit conversion"):
            fn(*tensors)
        return
    got = fn(*tensors)
    if fields is not None:
        ref, got = [getattr(ref, f) for f in fields], [getattr(got, f) for f in fields]
    elif isinstance(ref, tuple):
        ref, got = list(ref), list(got)
    else:
        ref, got = [ref], [got]
    assert len(got) == len(ref)
    for r, g in zip(ref, got):
        assert_tensor_on(g, device)
        r = np.asarray(r)
        single = r.dtype in (np.float32, np.complex64)
        np.testing.assert_allclose(host(g), r, rtol=1e-5 if single else 1e-10, atol=1e-6 if single else 1e-12,
                                   equal_nan=True)


SPECIAL = {
    "erf": (N,), "erfc": (N,), "erfinv": (U,), "ndtr": (N,), "ndtri": (U,), "log_ndtr": (N,),
    "expit": (N,), "logit": (U,), "gammaln": (V,), "psi": (V,), "gamma": (V,), "rgamma": (V,),
    "i0": (N,), "i0e": (N,), "i1e": (N,), "j0": (N,), "y1": (V,), "k0e": (V,), "entr": (U,),
    "xlogy": (V, U), "xlog1py": (V, U), "rel_entr": (U, V), "kl_div": (U, V), "betainc": (V, V[::-1], U),
    "gammainc": (V, V[::-1]), "gammaincc": (V, V[::-1]), "binom": (V + 3, V), "poch": (V, U),
    "zeta": (V + 1,), "boxcox1p": (V, U), "sinc": (N,), "spence": (V,), "stdtr": (V, N), "chdtr": (V, V[::-1]),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special(name, device):
    from scipy import special
    _supported_on(special, name, device)
    _run(getattr(special, name), SPECIAL[name], device, name=name)


@pytest.mark.parametrize("name, kwargs", [("logsumexp", {}), ("logsumexp", {"axis": 1}),
                                          ("softmax", {"axis": 0}), ("log_softmax", {"axis": -1})])
def test_special_reductions(name, kwargs, device):
    from scipy import special
    _supported_on(special, name, device)
    _run(lambda a: getattr(special, name)(a, **kwargs), (M,), device)


STATS = {
    "zscore": (lambda s, a: s.zscore(a, ddof=1), (M,), None),
    "skew": (lambda s, a: s.skew(a, axis=1), (M,), None),
    "kurtosis": (lambda s, a: s.kurtosis(a, fisher=False), (N,), None),
    "moment": (lambda s, a: s.moment(a, order=3), (N,), None),
    "sem": (lambda s, a: s.sem(a), (N,), None),
    "gmean": (lambda s, a: s.gmean(a), (V,), None),
    "hmean": (lambda s, a: s.hmean(a), (V,), None),
    "pmean": (lambda s, a: s.pmean(a, 2.5), (V,), None),
    "variation": (lambda s, a: s.variation(a), (V,), None),
    "entropy": (lambda s, p, q: s.entropy(p, q), (U, U[::-1]), None),
    "tmean": (lambda s, a: s.tmean(a, (-1.0, 1.0)), (N,), None),
    "iqr": (lambda s, a: s.iqr(a), (N,), None),
    "quantile": (lambda s, a, p: s.quantile(a, p), (N, np.asarray([0.1, 0.5, 0.9])), None),
    "median_abs_deviation": (lambda s, a: s.median_abs_deviation(a), (N,), None),
    "rankdata": (lambda s, a: s.rankdata(a), (np.round(N * 2),), None),
    "circmean": (lambda s, a: s.circmean(a), (N,), None),
    "describe": (lambda s, a: s.describe(a), (N,), ("mean", "variance", "skewness", "kurtosis")),
    "ttest_1samp": (lambda s, a: s.ttest_1samp(a, 0.2), (N,), ("statistic", "pvalue")),
    "ttest_ind": (lambda s, a, b: s.ttest_ind(a, b), (G[0], G[1]), ("statistic", "pvalue")),
    "ttest_rel": (lambda s, a, b: s.ttest_rel(a, b), (G[0], G[2]), ("statistic", "pvalue")),
    "pearsonr": (lambda s, a, b: s.pearsonr(a, b), (G[0], G[1]), ("statistic", "pvalue")),
    "f_oneway": (lambda s, a, b, c: s.f_oneway(a, b, c), tuple(G), ("statistic", "pvalue")),
    "kruskal": (lambda s, a, b, c: s.kruskal(a, b, c), tuple(G), ("statistic", "pvalue")),
    "normaltest": (lambda s, a: s.normaltest(a), (N,), ("statistic", "pvalue")),
    "jarque_bera": (lambda s, a: s.jarque_bera(a), (N,), ("statistic", "pvalue")),
    "chisquare": (lambda s, a: s.chisquare(a), (V,), ("statistic", "pvalue")),
    "mannwhitneyu": (lambda s, a, b: s.mannwhitneyu(a, b), (G[0], G[2]), ("statistic", "pvalue")),
    "bartlett": (lambda s, a, b, c: s.bartlett(a, b, c), tuple(G), ("statistic", "pvalue")),
    "levene": (lambda s, a, b, c: s.levene(a, b, c), tuple(G), ("statistic", "pvalue")),
}


# SciPy makes a 64-bit array itself here (quantile's indices as int64, describe's float64 counts)
STATS_NEED = {"iqr": xp.int64, "quantile": xp.int64, "median_abs_deviation": xp.int64, "describe": xp.float64}


@pytest.mark.parametrize("name", list(STATS))
def test_stats(name, device):
    from scipy import stats
    _supported_on(stats, name, device)
    if name in STATS_NEED:
        needs_dtype(STATS_NEED[name], device=device)
    _on_default_device(name, device)
    fn, args, fields = STATS[name]
    _run(lambda *a: fn(stats, *a), args, device, fields, name=name)


FFT = {
    "fft": (lambda f, a: f.fft(a, n=30, norm="ortho"), N),
    "ifft": (lambda f, a: f.ifft(a, axis=0), M),
    "rfft": (lambda f, a: f.rfft(a), N),
    "irfft": (lambda f, a: f.irfft(a, n=10), M),
    "fftn": (lambda f, a: f.fftn(a), M),
    "ifftn": (lambda f, a: f.ifftn(a, s=(4, 4), axes=(0, 1)), M),
    "rfft2": (lambda f, a: f.rfft2(a), M),
    "irfft2": (lambda f, a: f.irfft2(a), M),
    "hfft": (lambda f, a: f.hfft(a), N),
    "ihfft": (lambda f, a: f.ihfft(a), N),
    "dct": (lambda f, a: f.dct(a, type=2, norm="ortho"), N),
    "idct": (lambda f, a: f.idct(a, type=3), M),
    "dst": (lambda f, a: f.dst(a), N),
    "dctn": (lambda f, a: f.dctn(a), M),
    "fftshift": (lambda f, a: f.fftshift(a), M),
    "ifftshift": (lambda f, a: f.ifftshift(a, axes=1), M),
}


@pytest.mark.parametrize("name", list(FFT))
def test_fft(name, device):
    from scipy import fft
    _supported_on(fft, name, device)
    fn, arg = FFT[name]
    _run(lambda a: fn(fft, a), (arg,), device)


_B, _A = np.asarray([0.2, 0.3, 0.2]), np.asarray([1.0, -0.5, 0.25])
SIGNAL = {
    "convolve": (lambda s, a, b: s.convolve(a, b, mode="same"), (N, U[:5])),
    "correlate": (lambda s, a, b: s.correlate(a, b), (N, U[:5])),
    "fftconvolve": (lambda s, a, b: s.fftconvolve(a, b), (M, M[:2, :3])),
    "oaconvolve": (lambda s, a, b: s.oaconvolve(a, b, mode="valid"), (N, U[:5])),
    "hilbert": (lambda s, a: s.hilbert(a), (N,)),
    "detrend": (lambda s, a: s.detrend(a), (M,)),
    "detrend-constant": (lambda s, a: s.detrend(a, type="constant", axis=0), (M,)),
    "resample": (lambda s, a: s.resample(a, 16), (N,)),
    "medfilt": (lambda s, a: s.medfilt(a, 5), (N,)),
    "wiener": (lambda s, a: s.wiener(a, 5), (N,)),
    "upfirdn": (lambda s, h, a: s.upfirdn(h, a, up=2, down=3), (_B, N)),
    "freqz": (lambda s, b, a: s.freqz(b, a, worN=16), (_B, _A)),
    "lfilter_zi": (lambda s, b, a: s.lfilter_zi(b, a), (_B, _A)),
    "zpk2tf": (lambda s, z, p: s.zpk2tf(z, p, 2.0), (U[:3], U[3:6])),
    "bilinear": (lambda s, b, a: s.bilinear(b, a, fs=10.0), (_B, _A)),
    "lp2lp": (lambda s, b, a: s.lp2lp(b, a, wo=2.0), (_B, _A)),
    "lp2hp": (lambda s, b, a: s.lp2hp(b, a, wo=2.0), (_B, _A)),
    "normalize": (lambda s, b, a: s.normalize(b, a), (_B, _A * 2)),
    "deconvolve": (lambda s, a, b: s.deconvolve(a, b), (N, _A)),
    "freqz_zpk": (lambda s, z, p: s.freqz_zpk(z, p, 1.5, worN=8), (U[:2], U[2:4] * 0.5)),
    "vectorstrength": (lambda s, e: s.vectorstrength(e, 0.7), (np.sort(V),)),
}


@pytest.mark.parametrize("name", list(SIGNAL))
def test_signal(name, device):
    from scipy import signal
    _supported_on(signal, name, device)
    _on_default_device(name, device)
    fn, args = SIGNAL[name]
    _run(lambda *a: fn(signal, *a), args, device)


def test_signal_filter_design_roots(device):
    """tf2zpk finds roots through an eigenvalue solver, whose order is its own: compare as sets."""
    from scipy import signal
    _supported_on(signal, "tf2zpk", device)
    b, a = np.asarray([1.0, -0.5, 0.06]), np.asarray([1.0, 0.2, 0.3])
    z, p, k = signal.tf2zpk(b, a)
    zt, pt, kt = signal.tf2zpk(xp.asarray(b, device=device), xp.asarray(a, device=device))
    for r, g in ((z, zt), (p, pt)):
        assert_tensor_on(g, device)
        np.testing.assert_allclose(np.sort_complex(host(g)), np.sort_complex(r), rtol=1e-10, atol=1e-12)
    assert float(kt) == pytest.approx(float(k))


@pytest.mark.parametrize("name", ["lp2bp", "lp2bs"])
def test_signal_writes_numpy_scalars(name, device):
    """lp2bp/lp2bs store NumPy float64 scalars into arrays (``x[i] = np.float64(...)``)."""
    from scipy import signal
    _supported_on(signal, name, device)
    _run(lambda b, a: getattr(signal, name)(b, a, wo=1.5, bw=0.5), (_B, _A), device)


def test_result_device_follows_input(device):
    """SciPy's generic array API code allocates with the inputs' namespace and device."""
    from scipy import fft, special, stats
    x = xp.asarray(device_data(N, device), device=device)
    for result in (stats.zscore(x), special.logsumexp(x, axis=0), fft.rfft(x), stats.skew(x)):
        assert_tensor_on(result, device)
    assert special.logsumexp(x, axis=0).shape == ()
