"""array-api-extra (every exported function) and einops' array API entry points on numr tensors, each
compared with the same call on NumPy arrays."""

import contextlib
import warnings

import array_api_extra as xpx
import numpy as np
import pytest
from einops import array_api as ea

import numr_array as xp

from ..helpers import defaults, device_data, needs_dtype
from .helpers import assert_tensor_on, host

_rng = np.random.default_rng(0)
A = _rng.standard_normal((3, 4))
C = A + 1j * _rng.standard_normal((3, 4))
V = _rng.standard_normal(7)
IDX = np.asarray([3, 1, 2, 3, 5, 1, 0])
WITH_NAN = np.where(A > 0.8, np.nan, A)


def _stack(arrays, ns):
    return ns.stack(list(arrays))


def _device(asarray):
    """The device that ``asarray`` puts arrays on ("cpu" for NumPy), for the functions that take device=."""
    return asarray(np.zeros(0)).device


# name -> f(ns, asarray): the same call written once for NumPy and once for numr_array
CASES = {
    "angle": lambda ns, a: xpx.angle(a(C), xp=ns),
    "apply_where": lambda ns, a: xpx.apply_where(a(A) > 0, (a(A),), ns.sqrt, fill_value=-1.0, xp=ns),
    "apply_where-two-branches": lambda ns, a: xpx.apply_where(a(A) > 0, (a(A), a(A)), lambda x, y: x * y,
                                                              lambda x, y: x - y, xp=ns),
    "argpartition": lambda ns, a: ns.sort(ns.take(a(V), xpx.argpartition(a(V), 3, xp=ns)[:3])),
    "atleast_nd": lambda ns, a: xpx.atleast_nd(a(V), ndim=3, xp=ns),
    "cov": lambda ns, a: xpx.cov(a(A), xp=ns),
    "create_diagonal": lambda ns, a: xpx.create_diagonal(a(V), offset=-2, xp=ns),
    "create_diagonal-batched": lambda ns, a: xpx.create_diagonal(a(A), xp=ns),
    "deg2rad": lambda ns, a: xpx.deg2rad(a(A), xp=ns),
    "rad2deg": lambda ns, a: xpx.rad2deg(a(A), xp=ns),
    "diag_indices": lambda ns, a: _stack(xpx.diag_indices(4, ndim=3, device=_device(a), xp=ns), ns),
    "isclose": lambda ns, a: xpx.isclose(a(A), a(A + 1e-9 * (A > 0)), rtol=0.0, atol=1e-10, xp=ns),
    "isclose-nan": lambda ns, a: xpx.isclose(a(WITH_NAN), a(WITH_NAN), equal_nan=True, xp=ns),
    "isin": lambda ns, a: xpx.isin(a(IDX), a(np.asarray([1, 5])), invert=True, xp=ns),
    "kron": lambda ns, a: xpx.kron(a(A[:2, :2]), a(A[:2, :3]), xp=ns),
    "nan_to_num": lambda ns, a: xpx.nan_to_num(a(WITH_NAN), fill_value=-3.0, xp=ns),
    "nanmax": lambda ns, a: xpx.nanmax(a(WITH_NAN), axis=1, xp=ns),
    "nanmin": lambda ns, a: xpx.nanmin(a(WITH_NAN), axis=0, xp=ns),
    "nanmean": lambda ns, a: xpx.nanmean(a(WITH_NAN), axis=1, xp=ns),
    "nansum": lambda ns, a: xpx.nansum(a(WITH_NAN), xp=ns),
    "nunique": lambda ns, a: xpx.nunique(a(IDX), xp=ns),
    "one_hot": lambda ns, a: xpx.one_hot(a(IDX), 6, xp=ns),
    "pad": lambda ns, a: xpx.pad(a(A), 2, constant_values=1.5, xp=ns),
    "pad-per-axis": lambda ns, a: xpx.pad(a(A), ((1, 0), (0, 2)), xp=ns),
    "partition": lambda ns, a: ns.sort(xpx.partition(a(V), 3, xp=ns)[:3]),
    "searchsorted": lambda ns, a: xpx.searchsorted(a(np.sort(V)), a(A), side="right", xp=ns),
    "setdiff1d": lambda ns, a: xpx.setdiff1d(a(IDX), a(np.asarray([1, 2])), xp=ns),
    "sinc": lambda ns, a: xpx.sinc(a(A), xp=ns),
    "tril_indices": lambda ns, a: _stack(xpx.tril_indices(4, offset=-1, device=_device(a), xp=ns), ns),
    "triu_indices": lambda ns, a: _stack(xpx.triu_indices(4, offset=1, m=5, device=_device(a), xp=ns), ns),
    "union1d": lambda ns, a: xpx.union1d(a(IDX), a(np.asarray([7, 1])), xp=ns),
    "unravel_index": lambda ns, a: _stack(xpx.unravel_index(a(np.asarray([0, 5, 11])), (3, 4), xp=ns), ns),
    "lazy_apply": lambda ns, a: xpx.lazy_apply(lambda t: t * 2 + 1, a(A), xp=ns),
    "expand_dims": lambda ns, a: xpx.expand_dims(a(V), axis=(0, 2), xp=ns),
    "at-set": lambda ns, a: xpx.at(a(A), (0, slice(None))).set(7.0, copy=True),
    "at-add": lambda ns, a: xpx.at(a(A))[:, 1].add(1.0, copy=True),
    "at-subtract": lambda ns, a: xpx.at(a(A))[2].subtract(2.0, copy=True),
    "at-multiply-mask": lambda ns, a: xpx.at(a(A))[a(A) > 0].multiply(2.0, copy=True),
    "at-divide": lambda ns, a: xpx.at(a(A))[1:].divide(4.0, copy=True),
    "at-power": lambda ns, a: xpx.at(a(np.abs(A)))[2].power(2.0, copy=True),
    # min and max make a Python scalar y into an array on the default device (xp.asarray(y), no device=),
    # so y is given as an array on the device under test
    "at-min": lambda ns, a: xpx.at(a(A))[1].min(a(np.asarray(0.0)), copy=True),
    "at-max": lambda ns, a: xpx.at(a(A))[1].max(a(np.asarray(0.0)), copy=True),
    "at-index-array": lambda ns, a: xpx.at(a(V))[a(np.asarray([0, 2, 4]))].add(10.0, copy=True),
}
# array-api-extra casts to a 64-bit dtype itself here (cov to float64, searchsorted's result to int64)
NEEDS = {"cov": xp.float64, "searchsorted": xp.int64}
DEPRECATED = {"expand_dims"}  # in the standard since 2025.12; array-api-extra warns and delegates to it


def _close(dtype) -> dict:
    """Tolerances of a result of NumPy ``dtype`` (a few ulps)."""
    single = dtype in (np.float32, np.complex64)
    return {"rtol": 1e-5 if single else 1e-12, "atol": 1e-6 if single else 1e-14}


@pytest.mark.parametrize("name", list(CASES))
def test_array_api_extra(name, device):
    """On a device without float64 (or int64), both runs take the data in the dtypes the device has: these
    calls are about array-api-extra's use of the namespace, not about float64."""
    case = CASES[name]
    if name in NEEDS:
        needs_dtype(NEEDS[name], device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ref = case(np, lambda v: np.array(device_data(np.asarray(v), device)))
    with pytest.warns(DeprecationWarning) if name in DEPRECATED else contextlib.nullcontext():
        got = case(xp, lambda v: xp.asarray(device_data(np.asarray(v), device), device=device))
    assert_tensor_on(got, device)
    want = device_data(np.asarray(ref), device)  # (a float64 result of NumPy's own defaults: the device's)
    np.testing.assert_allclose(host(got), want, equal_nan=True, **_close(want.dtype))
    assert host(got).dtype == want.dtype


def test_every_export_is_covered():
    """Each public function of array-api-extra has a case above (a new release's additions show up here)."""
    exported = {n for n in xpx.__all__ if not n.startswith("_") and callable(getattr(xpx, n))}
    covered = {name.split("-")[0] for name in CASES} | {"broadcast_shapes", "default_dtype"}
    assert exported <= covered, f"untested array-api-extra functions: {sorted(exported - covered)}"


def test_broadcast_shapes_and_default_dtype(device):
    with pytest.warns(DeprecationWarning):
        assert xpx.broadcast_shapes((3, 1), (1, 4), ()) == (3, 4)
    assert xpx.default_dtype(xp, device=device) is xp.__array_namespace_info__().default_dtypes(
        device=device)["real floating"]
    assert xpx.default_dtype(xp, "integral", device=device) is defaults(device)["integral"]


def test_at_updates_in_place_without_copy(device):
    """``at(x)[...].set(v)`` (copy=None) writes into a writeable numr tensor, as into a NumPy array."""
    x = xp.asarray(device_data(A, device), device=device)
    y = xpx.at(x)[0, 0].set(42.0)
    assert y is x and float(x[0, 0]) == 42.0
    z = xpx.at(x)[1, 1].set(-1.0, copy=True)
    assert float(z[1, 1]) == -1.0 and float(x[1, 1]) == device_data(A, device)[1, 1]


def test_testing_helpers(device):
    """array_api_extra.testing's assertions, which SciPy and scikit-learn use on any namespace's arrays."""
    if device.kind != "cpu":
        pytest.skip("array_api_extra.testing compares arrays of namespaces it does not know through NumPy")
    from array_api_extra import testing
    x = xp.asarray(A, device=device)
    testing.assert_equal(x, xp.asarray(A, device=device))
    testing.assert_close(x, x + 1e-12)
    testing.assert_less(x, x + 1.0)
    with pytest.raises(AssertionError):
        testing.assert_close(x, x + 1.0)
    with pytest.raises(AssertionError):
        testing.assert_equal(x, xp.astype(x, xp.float32))


EINOPS = {
    "rearrange": (ea.rearrange, ("b h w -> (b w) h",), {}),
    "rearrange-split": (ea.rearrange, ("b (h2 h) w -> b h2 h w",), {"h2": 1}),
    "reduce-mean": (ea.reduce, ("b h w -> b w", "mean"), {}),
    "reduce-max": (ea.reduce, ("b h w -> b", "max"), {}),
    "reduce-sum": (ea.reduce, ("b h w -> h 1", "sum"), {}),
    "reduce-prod": (ea.reduce, ("b h w -> w", "prod"), {}),
    "reduce-pool": (ea.reduce, ("b h (w w2) -> b h w", "min"), {"w2": 2}),
    "repeat": (ea.repeat, ("b h w -> b h w c",), {"c": 3}),
    "repeat-tile": (ea.repeat, ("b h w -> (r b) h w",), {"r": 2}),
}


@pytest.mark.parametrize("name", list(EINOPS))
def test_einops(name, device):
    fn, args, kwargs = EINOPS[name]
    a = device_data(np.arange(24.0).reshape(2, 3, 4) / 7, device)
    got = fn(xp.asarray(a, device=device), *args, **kwargs)
    assert_tensor_on(got, device)
    np.testing.assert_allclose(host(got), fn(a, *args, **kwargs), rtol=_close(a.dtype)["rtol"])


def test_einops_pack_unpack(device):
    a, b = xp.ones((2, 3, 4), device=device), xp.zeros((2, 3), device=device)
    packed, shapes = ea.pack([a, b], "b h *")
    assert_tensor_on(packed, device)
    assert packed.shape == (2, 3, 5) and shapes == [(4,), ()]
    back = ea.unpack(packed, shapes, "b h *")
    assert [t.shape for t in back] == [(2, 3, 4), (2, 3)]
    np.testing.assert_array_equal(host(back[0]), np.ones((2, 3, 4)))
