"""NumPy's functions that need no host read run inside a capture block and replay on new data (the
proof that they compute on the device: a host read inside a capture is a CaptureError); those whose
result shape depends on the data refuse, naming themselves."""

import numpy as np
import pytest

import numr_array as xp

from .helpers import DEVICE
from .np_helpers import RNG, host, on_device, same

CAPTURABLE = {
    "median": (lambda x: xp.median(x, axis=1), lambda a: np.median(a, axis=1)),
    "nanquantile": (lambda x: xp.nanquantile(x, [0.25, 0.5], axis=0), lambda a: np.nanquantile(a, [0.25, 0.5], axis=0)),
    "percentile": (lambda x: xp.percentile(x, 90.0), lambda a: np.percentile(a, 90.0)),
    "nanmax": (lambda x: xp.nanmax(x, axis=0), lambda a: np.nanmax(a, axis=0)),
    "nanstd": (lambda x: xp.nanstd(x, axis=1), lambda a: np.nanstd(a, axis=1)),
    "average": (lambda x: xp.average(x, axis=0), lambda a: np.average(a, axis=0)),
    "cov": (lambda x: xp.cov(x), lambda a: np.cov(a)),
    "corrcoef": (lambda x: xp.corrcoef(x), lambda a: np.corrcoef(a)),
    "histogram": (lambda x: xp.histogram(x, 5, range=(-20.0, 20.0))[0],
                  lambda a: np.histogram(a, 5, range=(-20.0, 20.0))[0]),
    "histogram_bin_edges": (lambda x: xp.histogram_bin_edges(x, 4, range=(0.0, 1.0)),
                            lambda a: np.histogram_bin_edges(a, 4, range=(0.0, 1.0))),
    "einsum": (lambda x: xp.einsum("ij,kj->ik", x, x), lambda a: np.einsum("ij,kj->ik", a, a)),
    "kron": (lambda x: xp.kron(x, x), lambda a: np.kron(a, a)),
    "pad": (lambda x: xp.pad(x, ((1, 2), (3, 0)), "reflect"), lambda a: np.pad(a, ((1, 2), (3, 0)), "reflect")),
    "convolve": (lambda x: xp.convolve(x[0], x[1], "same"), lambda a: np.convolve(a[0], a[1], "same")),
    "interp": (lambda x: xp.interp(x[1], xp.sort(x[0]), x[2]), lambda a: np.interp(a[1], np.sort(a[0]), a[2])),
    "gradient": (lambda x: xp.gradient(x, axis=1), lambda a: np.gradient(a, axis=1)),
    "trapezoid": (lambda x: xp.trapezoid(x), lambda a: np.trapezoid(a)),
    "polyval": (lambda x: xp.polyval(x[0], x[1]), lambda a: np.polyval(a[0], a[1])),
    "cbrt": (lambda x: xp.cbrt(x), lambda a: np.cbrt(a)),
    "i0": (lambda x: xp.i0(x), lambda a: np.i0(a)),
    "nan_to_num": (lambda x: xp.nan_to_num(x / 0.0), lambda a: np.nan_to_num(a / 0.0)),
    "rot90": (lambda x: xp.rot90(x) + 0, lambda a: np.rot90(a)),
    "unwrap": (lambda x: xp.unwrap(x), lambda a: np.unwrap(a)),
    "insert": (lambda x: xp.insert(x, [2, 0, 2], 5.0, axis=1), lambda a: np.insert(a, [2, 0, 2], 5.0, axis=1)),
    "correlate": (lambda x: xp.correlate(x[0, :2], x[1], "same"), lambda a: np.correlate(a[0, :2], a[1], "same")),
}


def _data():
    a = RNG.standard_normal((3, 6)) * 10
    a[a == 0] = 1.0
    return a


@pytest.mark.parametrize("name", sorted(CAPTURABLE))
def test_replays_on_new_data(name):
    f, ref = CAPTURABLE[name]
    first = _data()
    x = on_device(first)
    with xp.capture(device=DEVICE) as g:
        out = f(x)
    with np.errstate(all="ignore"):
        same(out, ref(host(first)), rtol=1e-5 if host(first).dtype == np.float32 else 1e-9)
        second = _data()
        x[...] = on_device(second)
        g.replay()
        same(out, ref(host(second)), rtol=1e-5 if host(first).dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("call", [
    lambda x: xp.bincount(xp.astype(x[0] > 0, xp.int32)),
    lambda x: xp.histogram(x),
    lambda x: xp.unique(x),
    lambda x: xp.argwhere(x),
    lambda x: xp.nanargmax(x),
])
def test_data_dependent_shapes_refuse(call):
    x = on_device(_data())
    with pytest.raises(xp.CaptureError):
        with xp.capture(device=DEVICE):
            call(x)
