"""What the tests of the NumPy-function families (tests/test_np_*.py) share: arrays on the device under
test from NumPy data, and comparisons against NumPy with the dtype's tolerance."""

import numpy as np

import numr_array as xp

from .helpers import DEVICE, device_data
from .strategies import to_np

RNG = np.random.default_rng(16)


def on_device(a) -> xp.Tensor:
    """NumPy data on the device under test (float64 as the device's float where it lacks float64)."""
    return xp.asarray(device_data(np.asarray(a)), device=DEVICE)


def host(a) -> np.ndarray:
    """The NumPy data the device holds for ``a`` (what the reference is computed from)."""
    return device_data(np.asarray(a))


SINGLE = (np.dtype(np.float32), np.dtype(np.complex64))


def rtol_of(dtype) -> float:
    return 2e-5 if np.dtype(dtype) in SINGLE else 1e-11


def same(got, ref, exact: bool = False, rtol: float | None = None, atol: float = 0.0) -> None:
    """``got`` (an array on the device) equals NumPy's ``ref``: shape, values within the dtype's tolerance
    (exactly for integers, booleans or ``exact``), NaNs where NumPy has them. A tolerance given for float64
    results is widened to single precision's where the device computes in float32 (no shader-f64)."""
    ref = np.asarray(ref)
    g = to_np(got) if isinstance(got, xp.Tensor) else np.asarray(got)
    assert g.shape == ref.shape, (g.shape, ref.shape)
    if exact or ref.dtype.kind in "biu" or g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, ref)
    else:
        tol = rtol_of(g.dtype) if rtol is None else max(rtol, rtol_of(g.dtype)) if g.dtype in SINGLE else rtol
        scale = float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0)) if ref.size else 0.0
        floor = float(np.finfo(g.dtype).eps) * scale if g.dtype in SINGLE else 0.0  # a sum's rounding near 0
        np.testing.assert_allclose(g, ref, rtol=tol, atol=max(atol or tol * scale * 1e-3, floor), equal_nan=True)


def float_data(shape, dtype=np.float64, nans: bool = False) -> np.ndarray:
    a = RNG.standard_normal(shape).astype(dtype) * 10
    if nans and a.size:
        a.ravel()[RNG.choice(a.size, max(1, a.size // 5), replace=False)] = np.nan
    return a
