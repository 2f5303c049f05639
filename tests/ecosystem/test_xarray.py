"""xarray over numr tensors and over dask arrays of numr chunks: ``.where``, ``fillna``, Dataset reductions,
``groupby`` and ``.chunk()`` keep the data in tensors on the device and give xarray-over-NumPy's results.

xarray tests ``isinstance(dtype, np.dtype)`` (its fill values for ``where`` and ``fillna``) and passes its
NumPy fill scalars to the namespace's ``result_type`` and ``where``: what these tests exercise."""

import numpy as np
import pytest

import numr_array as xp
from tests.helpers import DEVICE

from .helpers import assert_tensor_on, host

xr = pytest.importorskip("xarray", reason="xarray is not installed (the test extra)")
da = pytest.importorskip("dask.array", reason="dask is not installed (the [distributed] extra)")

DTYPE = xp.__array_namespace_info__().default_dtypes(device=DEVICE)["real floating"]
TOL = {"rtol": 1e-5, "atol": 1e-5} if DTYPE == xp.float32 else {"rtol": 1e-12, "atol": 1e-12}
DATA = (np.arange(48, dtype=np.float64).reshape(6, 8) / 7 - 3).astype(DTYPE)
COORDS = {"x": np.arange(6), "y": np.arange(8) * 10, "label": ("x", ["a", "b", "a", "c", "b", "a"])}


def dataset(wrap) -> "xr.Dataset":
    """Two variables (one with NaNs, one integer-valued) over the same dims, their data made by ``wrap``."""
    with_nan = np.where(DATA > 1, np.nan, DATA).astype(DTYPE)
    return xr.Dataset({"a": (("x", "y"), wrap(DATA)), "b": (("x", "y"), wrap(with_nan))}, coords=COORDS)


DEVICE_UNDER_TEST = xp.asarray(0, device=DEVICE).device


@pytest.fixture(autouse=True)
def default_device_is_the_data_device(monkeypatch):
    """xarray makes its fill values (``where(c, 0)``, ``fillna(0)``) with ``xp.asarray(value)``, without
    ``device=``: they land on numr's default device, which a user sets to the device of their data with
    ``NUMR_DEVICE`` (docs/distributed.md), as a CuPy user sets the current device. The same here."""
    monkeypatch.setattr(xp._device, "_default", DEVICE_UNDER_TEST)


WRAPS = {
    "numr": lambda a: xp.asarray(a, device=DEVICE),
    "dask-numr": lambda a: da.from_array(xp.asarray(a, device=DEVICE), chunks=(3, 4)),
}

# (name, the expression on a Dataset: a DataArray or Dataset)
CASES = [
    ("where", lambda ds: ds.a.where(ds.a > 0.5)),
    ("where_other", lambda ds: ds.a.where(ds.a > 0.5, -2.0)),
    ("where_dataset", lambda ds: ds.where(ds.a < 0)),
    ("fillna", lambda ds: ds.b.fillna(-1.0)),
    ("fillna_dataset", lambda ds: ds.fillna(0.0)),
    ("where_fillna", lambda ds: ds.a.where(ds.a > 0).fillna(7.0)),
    ("isnull_count", lambda ds: ds.b.isnull().sum("y")),
    ("isnull_any", lambda ds: ds.b.isnull().any("x")),
    ("dataset_mean", lambda ds: ds.mean()),
    ("dataset_mean_dim", lambda ds: ds.mean("x")),
    ("dataset_sum_dim", lambda ds: ds.sum("y")),
    ("dataset_std", lambda ds: ds.std("y")),
    ("dataset_max", lambda ds: ds.max("x")),
    ("dataset_min_noskip", lambda ds: ds.min("y", skipna=False)),
    ("dataset_count", lambda ds: ds.count("y")),
    ("groupby_mean", lambda ds: ds.a.groupby("label").mean()),
    ("groupby_sum", lambda ds: ds.b.groupby("label").sum()),
    ("groupby_dataset", lambda ds: ds.groupby("label").max()),
    ("groupby_arith", lambda ds: ds.a.groupby("label") - ds.a.groupby("label").mean()),
    ("chunk", lambda ds: ds.a.chunk({"x": 2}) * 2),
    ("chunk_mean", lambda ds: ds.chunk({"x": 2, "y": 3}).mean("y")),
    ("chunk_where", lambda ds: (lambda c: c.a.where(c.b < 0))(ds.chunk({"y": 4}))),
    ("chunk_groupby", lambda ds: ds.a.chunk({"y": 4}).groupby(ds.label).mean()),
]


def _data_vars(obj) -> dict:
    return dict(obj.data_vars) if isinstance(obj, xr.Dataset) else {obj.name: obj}


@pytest.mark.parametrize("kind", list(WRAPS))
@pytest.mark.parametrize("name,expr", CASES, ids=[c[0] for c in CASES])
def test_as_xarray_over_numpy(kind, name, expr):
    got = expr(dataset(WRAPS[kind])).compute(scheduler="threads")
    want = expr(dataset(lambda a: a))
    device = DEVICE_UNDER_TEST
    # (the dimensions as sizes' keys: a Dataset's dims as a mapping is deprecated by xarray)
    assert tuple(got.sizes) == tuple(want.sizes) and got.sizes == want.sizes
    for k in want.coords:
        np.testing.assert_array_equal(np.asarray(got.coords[k].values), np.asarray(want.coords[k].values))
    want_vars = _data_vars(want)
    got_vars = _data_vars(got)
    assert list(got_vars) == list(want_vars)
    for k, w in want_vars.items():
        g = got_vars[k]
        assert_tensor_on(g.data, device)
        assert g.dtype == w.dtype, f"{k}: {g.dtype}, xarray over NumPy gives {w.dtype}"
        np.testing.assert_allclose(host(g.data), w.values, **TOL)


@pytest.mark.parametrize("kind", list(WRAPS))
def test_dropna(kind):
    """``dropna`` selects with a mask that xarray reads on the host: zero-copy on the CPU; on another device
    numr refuses the implicit copy to the host (as CuPy does), saying how to copy."""
    ds = dataset(WRAPS[kind])
    if DEVICE_UNDER_TEST.kind != "cpu":
        with pytest.raises(TypeError, match="implicit conversion of a .* tensor to NumPy"):
            ds.b.dropna("x", how="any").compute(scheduler="threads")
        return
    got = ds.b.dropna("x", how="any").compute(scheduler="threads")
    want = dataset(lambda a: a).b.dropna("x", how="any")
    assert_tensor_on(got.data, DEVICE_UNDER_TEST)
    np.testing.assert_array_equal(got.x.values, want.x.values)
    np.testing.assert_allclose(host(got.data), want.values, **TOL)


def test_chunk_keeps_tensor_chunks():
    """``.chunk()`` of a tensor-backed DataArray is a dask array whose chunks (and meta) are tensors."""
    a = dataset(WRAPS["numr"]).a.chunk({"x": 2})
    assert isinstance(a.data, da.Array) and isinstance(a.data._meta, xp.Tensor)
    assert a.dtype == DTYPE and isinstance(a.dtype, np.dtype)
    assert_tensor_on(a.data.blocks[1, 0].compute(), DEVICE_UNDER_TEST)


@pytest.mark.parametrize("q", [0.3, [0.25, 0.5, 0.9]], ids=["scalar", "list"])
def test_quantile_over_tensors(q):
    """xarray hands ``quantile`` its q as a NumPy array (host numbers, as a list of them is)."""
    got = dataset(WRAPS["numr"]).b.quantile(q, dim="y")
    want = dataset(lambda a: a).b.quantile(q, dim="y")
    assert_tensor_on(got.data, DEVICE_UNDER_TEST)
    assert got.dims == want.dims
    np.testing.assert_allclose(host(got.data), want.values, **TOL)
