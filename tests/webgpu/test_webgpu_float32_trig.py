"""float32 sin, cos and tan on a WebGPU adapter with float64: FreeBSD msun's float32 algorithms in float64
(_libm's ``_F32``) against NumPy's float64 functions rounded to float32, over random float32 values of every
exponent (huge arguments through the exact reduction), values next to multiples of pi/2, subnormals, signed
zeros, infinities and NaN; and a captured chain of them replaying eager's bits."""

from __future__ import annotations


import numpy as np
import pytest

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array.backends import get_runtime

from ..strategies import to_np
from .helpers import missing, record_sources

pytestmark = [pytest.mark.webgpu, pytest.mark.filterwarnings("ignore::RuntimeWarning")]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

DEV = "webgpu:0"
NO_F64 = missing("shader-f64", "shader-int64")
pytestmark.append(pytest.mark.skipif(bool(NO_F64), reason=f"{NO_F64} (float32 trigonometry is then the builtins')"))

#: |x| from which the float32 reduction is the exact one (2^28 * pi/2 rounded up to a float32)
BIG = np.float32(np.uint32(0x4DC90FDB).view(np.float32))
#: (max error in ulps, least fraction correctly rounded): FreeBSD's sinf and cosf measure 0.501 ulp and
#: 99.97% correctly rounded, tanf 0.8 ulp and 86% (NumPy's own float32 functions: 1.43 ulp for sin and cos,
#: 3.5 for tan)
BOUNDS = {"sin": (0.502, 0.9995), "cos": (0.502, 0.9995), "tan": (0.80, 0.85)}


def samples() -> np.ndarray:
    """float32 values of every kind, both signs."""
    rng = np.random.default_rng(15)
    parts = []
    # random bits over exponent ranges: tiny (< 2^-12, where sin x rounds to x), up to pi/4, the medium
    # reduction, and beyond it up to the largest finite float32
    for lo, hi, n in ((np.float32(1e-45), np.float32(2.0 ** -12), 4000), (np.float32(2.0 ** -12), np.float32(1), 20000),
                      (np.float32(1), BIG, 60000), (BIG, np.finfo(np.float32).max, 60000)):
        b = rng.integers(np.array(lo).view(np.uint32), np.array(hi).view(np.uint32), n, endpoint=True, dtype=np.int64)
        parts.append(b.astype(np.uint32).view(np.float32))
    # next to multiples of pi/2 (up to 2^40 of them): the nearest float32 and its 4 neighbours each way
    k = np.concatenate([np.arange(1, 2000), np.unique(np.exp(rng.uniform(np.log(2000), np.log(2.0 ** 40), 4000)).round())])
    near = (k * (np.pi / 2)).astype(np.float32).view(np.int32)
    parts.append((near[:, None] + np.arange(-4, 5)).ravel().view(np.float32))
    # the bounds of the reductions' and the kernels' ranges
    parts.append(np.array([0x4DC90FDB, 0x4DC90FDA, 0x3F490FDA, 0x3F490FDB, 0x39800000, 0x397FFFFF], np.uint32).view(np.float32))
    # 16367173 * 2^72, the float32 nearest a multiple of pi/2 relative to its size (1.6e-9 from it: Muller,
    # Elementary Functions, ch. 11), zeros, subnormals, the extremes, infinity and NaN
    parts.append(np.array([np.ldexp(16367173.0, 72), 0.0, np.inf, np.nan, 1e-45, 1.1754942e-38, 1.1754944e-38,
                           3.4028235e38, np.pi / 2, np.pi, 1.0, 0.5], np.float32))
    x = np.concatenate(parts)
    return np.concatenate([x, -x])


def ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in ulps of the float32 nearest ``exact`` (a float64 value); 0 where both are NaN."""
    sp = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    d = np.abs(got.astype(np.float64) - exact) / sp
    return np.where(np.isnan(got) & np.isnan(exact), 0.0, d)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_trigonometry_within_an_ulp(name):
    x = samples()
    got = to_np(getattr(ew, name)(xp.asarray(x, device=DEV)))
    exact = getattr(np, name)(x.astype(np.float64))
    assert got.dtype == np.float32
    assert np.array_equal(np.isnan(got), np.isnan(exact)), x[np.isnan(got) != np.isnan(exact)]
    e = ulps(got, exact)
    max_ulp, least_cr = BOUNDS[name]
    worst = np.argmax(e)
    assert e.max() <= max_ulp, (name, x[worst], got[worst], exact[worst], e.max())
    assert (got == exact.astype(np.float32)).mean() >= least_cr
    huge = np.abs(x) >= BIG
    assert huge.sum() > 100000 and e[huge].max() <= max_ulp  # the exact reduction's range on its own
    # zeros and subnormals: sin and tan are x itself (its sign and bits), cos is 1
    small = (np.abs(x) < np.float32(2.0 ** -12)) | (x == 0)
    want = np.ones_like(x[small]) if name == "cos" else x[small]
    np.testing.assert_array_equal(got[small].view(np.uint32), want.view(np.uint32))


def test_float32_trigonometry_leaves_out_the_float64_libm(monkeypatch):
    """A float32 sin, cos or tan shader carries the float32 kernels, not the float64 functions (fdlibm's
    sin_f64 and its rempio2 with three-part pi/2), which a fused chain would inline at every step."""
    client = xp._device.parse_device(DEV).client
    sources = record_sources(monkeypatch, client)  # every shader built (and seen) anew
    x = xp.asarray(np.linspace(-3, 3, 64, dtype=np.float32), device=DEV)
    for f in (ew.sin, ew.cos, ew.tan):
        f(x)
    src = "\n".join(sources.values())
    for fn in ("sin_f32", "cos_f32", "tan_f32", "rempio2f_f32", "rempio2fbig_f32"):
        assert f"fn {fn}(" in src, fn
    for fn in ("sin_f64", "cos_f64", "tan_f64", "rempio2_f64", "ksin_f64", "narrow_f32"):
        assert f"fn {fn}(" not in src, fn


def test_captured_float32_trigonometry_replays_eager_bits():
    """A captured chain of sin, cos, tan and products by a scalar (fused into one shader) gives eager's bits
    over the values of every kind, huge arguments and subnormals among them; so does the issue's 100-step
    chain of sin and multiply-by-a-scalar."""
    x = samples()

    def run(t):
        for f in (ew.sin, ew.cos, ew.tan):
            t = ew.multiply(f(t), 1.5)
        return ew.add(ew.tan(ew.cos(ew.sin(t))), ew.sin(ew.multiply(t, 3.0e35)))

    def sin_chain(t):
        for _ in range(100):
            t = ew.multiply(ew.sin(t), 1.5)
        return t

    for fn, a in ((run, x), (sin_chain, np.linspace(-3, 3, 1024, dtype=np.float32))):
        d = xp.asarray(a, device=DEV)
        with xp.capture(device=DEV) as g:
            r = fn(d)
        fused = len(g._graph.steps)
        g.replay()
        eager = fn(d)
        assert fused < (5 if fn is run else 10), fused  # the chain fused (not one step per launch)
        np.testing.assert_array_equal(to_np(r).view(np.uint32), to_np(eager).view(np.uint32))


def test_the_sin_chain_benchmark_checks_itself(capsys):
    """benchmarks/webgpu_sin_chain.py (the H200 command): its accuracy and replay checks pass here, and it
    times the replay."""
    from benchmarks import webgpu_sin_chain

    webgpu_sin_chain.main(["--repeats", "3", "--n", "20000"])
    out = capsys.readouterr().out
    assert "FAIL" not in out, out
    assert out.count("PASS") == 4 and "sin chain replay: numr webgpu:0" in out, out
