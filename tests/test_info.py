"""The inspection API, ``__array_namespace_info__()``, and the constants of the namespace."""

from __future__ import annotations

import math

import pytest

import numr_array as xp
from .strategies import ALL, DEVICE

DEV = xp._device.parse_device(DEVICE)
KINDS = {
    "bool": ["bool"], "signed integer": ["int8", "int16", "int32", "int64"],
    "unsigned integer": ["uint8", "uint16", "uint32", "uint64"],
    "integral": ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"],
    "real floating": ["float32", "float64"], "complex floating": ["complex64", "complex128"],
    "numeric": ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
                "complex64", "complex128"],
}


@pytest.fixture
def info():
    return xp.__array_namespace_info__()


def test_capabilities(info):
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    m = caps["max dimensions"]
    assert m is None or (type(m) is int and m >= 8)
    assert {"boolean indexing", "data-dependent shapes", "max dimensions"} <= set(caps)


def test_devices_and_default_device(info):
    devs = info.devices()
    assert type(devs) is tuple and devs[0] == "cpu"
    assert len(set(devs)) == len(devs)
    assert info.default_device() in devs
    for d in devs:
        t = xp.zeros((2,), device=d)  # each device is a valid device= argument
        assert t.device == d


def test_default_dtypes(info):
    for device in (None, DEVICE, DEV):
        d = info.default_dtypes(device=device)
        assert set(d) == {"real floating", "complex floating", "integral", "indexing"}
        assert d["real floating"] in (xp.float32, xp.float64)
        assert d["complex floating"] in (xp.complex64, xp.complex128)
        assert d["integral"] in (xp.int32, xp.int64) and d["indexing"] in (xp.int32, xp.int64)
    cpu = info.default_dtypes(device="cpu")
    assert cpu == {"real floating": xp.float64, "complex floating": xp.complex128, "integral": xp.int64,
                   "indexing": xp.int64}
    d = info.default_dtypes(device=DEVICE)
    # the defaults are what the creation functions use on that device
    assert xp.zeros(1, device=DEVICE).dtype is d["real floating"]
    assert xp.asarray(1, device=DEVICE).dtype is d["integral"]
    assert xp.asarray(1.5, device=DEVICE).dtype is d["real floating"]
    assert xp.asarray(1j, device=DEVICE).dtype is d["complex floating"]
    assert xp.arange(3, device=DEVICE).dtype is d["integral"]
    assert xp.full((1,), 2, device=DEVICE).dtype is d["integral"]


def test_dtypes(info):
    everything = info.dtypes(device="cpu")
    assert list(everything) == [d.name for d in ALL]
    assert all(getattr(xp, name) is d for name, d in everything.items())
    here = info.dtypes(device=DEVICE)
    assert set(here) <= set(everything) and {"bool", "int32", "float32"} <= set(here)
    assert info.dtypes() == info.dtypes(device=info.default_device())
    for kind, names in KINDS.items():
        got = info.dtypes(device=DEVICE, kind=kind)
        assert list(got) == [n for n in names if n in here], kind
    got = info.dtypes(device=DEVICE, kind=("bool", "complex floating"))
    assert list(got) == [n for n in ["bool", "complex64", "complex128"] if n in here]
    assert info.dtypes(device=DEVICE, kind=()) == {}


def test_info_errors(info):
    with pytest.raises(ValueError, match="dtypes"):
        info.dtypes(kind="integer")
    with pytest.raises(ValueError, match="dtypes"):
        info.dtypes(kind=("bool", "floating"))
    with pytest.raises(TypeError, match="dtypes"):
        info.dtypes(kind=xp.int8)
    with pytest.raises(ValueError, match="dtypes"):
        info.dtypes(device="nosuchdevice")
    with pytest.raises(ValueError, match="default_dtypes"):
        info.default_dtypes(device="nosuchdevice")
    with pytest.raises(TypeError, match="default_dtypes"):
        info.default_dtypes(device=1)
    with pytest.raises(ValueError, match="capabilities"):
        info.capabilities(device="nosuchdevice")


def test_constants():
    assert xp.e == math.e and xp.pi == math.pi
    assert xp.inf == math.inf and math.isnan(xp.nan)
    assert xp.newaxis is None
    assert type(xp.e) is float and type(xp.pi) is float and type(xp.inf) is float and type(xp.nan) is float
    assert xp.__array_api_version__ == "2025.12"
