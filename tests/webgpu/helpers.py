"""What the WebGPU test modules share: random data, operands in several layouts, the check that kernels
read nothing back to the host, and the shaders a test's calls build."""

from __future__ import annotations

import contextlib
import functools
from collections import OrderedDict

import numpy as np

import numr_array as xp
from numr_array.backends import get_runtime

from .. import helpers as shared

DEV = "webgpu:0"

if get_runtime("webgpu") is not None:  # (without an adapter the test modules skip before importing these)
    INFO = xp.__array_namespace_info__()
    DTYPES = list(INFO.dtypes(device=DEV).values())
    NUMERIC = [d for d in DTYPES if d != xp.bool]
    REAL = [d for d in NUMERIC if d.kind != "c"]
    FLOAT = [d for d in REAL if d.kind == "f"]
    #: real and complex floating dtypes (the linear algebra's)
    INEXACT = [d for d in NUMERIC if d.kind in ("f", "c")]
    #: the device's default dtypes: int32 indices and float32 where the adapter lacks shader-int64/f64
    DEFAULTS = INFO.default_dtypes(device=DEV)
    INDEX = DEFAULTS["indexing"]
    #: the widest real floating dtype (float64, or float32 without shader-f64)
    WIDEST = FLOAT[-1]


#: the shared skips of tests/helpers.py, on this package's device
missing = functools.partial(shared.missing, device=DEV)
needs = functools.partial(shared.needs, device=DEV)
needs_dtype = functools.partial(shared.needs_dtype, device=DEV)
device_dtype = functools.partial(shared.device_dtype, device=DEV)
supported_promotion = functools.partial(shared.supported_promotion, device=DEV)
needs_libm = functools.partial(shared.needs_libm, device=DEV)


def on(a):
    """``a`` on the adapter."""
    return xp.asarray(a, device=DEV)


def host(t) -> np.ndarray:
    return np.asarray(t.to_device("cpu"))


def bits(t) -> bytes:
    """The bytes of ``t``'s values in C order (to compare results bit for bit)."""
    return np.ascontiguousarray(host(t)).tobytes()


def to_index(a: np.ndarray) -> np.ndarray:
    """A NumPy index result in the device's index dtype (int32 without shader-int64)."""
    return a.astype(INDEX)


def random(rng, dtype, shape, scale: float = 1.0) -> np.ndarray:
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return (scale * a).astype(dtype)


def on_device(a: np.ndarray, layout: str):
    """``a`` on the device: contiguous, every other column of a wider array, reversed rows and columns
    of a flipped copy, or the transpose of a transposed copy (column-major matrices)."""
    if layout == "strided" and a.ndim and a.size:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return xp.asarray(big, device=DEV)[..., ::2]
    if layout == "reversed" and a.ndim >= 2 and a.size:
        return xp.asarray(a[..., ::-1, ::-1].copy(), device=DEV)[..., ::-1, ::-1]
    if layout == "transposed" and a.ndim >= 2:
        return xp.matrix_transpose(xp.asarray(np.swapaxes(a, -1, -2).copy(), device=DEV))
    return xp.asarray(a, device=DEV)


@contextlib.contextmanager
def no_readback():
    """Asserts that the block reads no device data back to the host."""
    client = xp._device.parse_device(DEV).client
    before = client.readbacks
    yield
    assert client.readbacks == before, "a kernel read device data back to the host"


def call_without_readback(f, *args, **kwargs):
    """``f(*args, **kwargs)``, asserting that it reads no device data back (results are read later)."""
    with no_readback():
        return f(*args, **kwargs)


def record_sources(monkeypatch, client) -> dict:
    """The WGSL source of every shader ``client`` builds from now on, by pipeline key (its caches of
    pipelines and map plans emptied for the test, so that each shader is built, and seen, anew)."""
    sources: dict = {}
    build = client.pipeline

    def pipeline(key, make_source, nbind, ubytes, **kw):
        sources[key] = make_source()
        return build(key, make_source, nbind, ubytes, **kw)

    monkeypatch.setattr(client, "_pipelines", {})
    monkeypatch.setattr(client, "_captured_keys", OrderedDict())
    monkeypatch.setattr(client, "map_plans", {})
    monkeypatch.setattr(client, "pipeline", pipeline)
    return sources
