"""array-api-compat: the entry point every array-API consumer (SciPy, scikit-learn, array-api-extra) goes
through to find our namespace, and its device/size helpers."""

import array_api_compat as compat
import numpy as np
import pytest

import numr_array as xp

from ..helpers import defaults
from .helpers import host


@pytest.fixture
def x(device):
    return xp.reshape(xp.arange(12, dtype=defaults(device)["real floating"], device=device), (3, 4))


def test_array_namespace_is_numr(x):
    assert compat.array_namespace(x) is xp
    assert compat.array_namespace(x, x[0]) is xp
    assert compat.get_namespace(x) is xp
    assert compat.is_array_api_obj(x)
    assert not compat.is_numpy_array(x)


@pytest.mark.parametrize("version", [None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"])
def test_api_version_honoured(x, version):
    assert x.__array_namespace__(api_version=version) is xp
    assert compat.array_namespace(x, api_version=version) is xp


@pytest.mark.parametrize("version", ["2020.10", "2026.12", "latest", ""])
def test_api_version_validated(x, version):
    with pytest.raises(ValueError, match="api_version"):
        x.__array_namespace__(api_version=version)
    with pytest.raises(ValueError):
        compat.array_namespace(x, api_version=version)


def test_mixed_namespaces_rejected(x):
    with pytest.raises(TypeError, match="[Mm]ultiple namespaces"):
        compat.array_namespace(x, np.zeros(3))


def test_device_to_device_size(x, device):
    assert compat.device(x) == device == x.device
    assert compat.to_device(x, device) is x
    moved = compat.to_device(x, "cpu")
    assert moved.device == "cpu"
    np.testing.assert_array_equal(host(moved), np.arange(12.0).reshape(3, 4))
    assert compat.size(x) == 12
    assert compat.size(x[1:, :0]) == 0
    assert compat.size(xp.asarray(3.0, device=device)) == 1


def test_writeable_and_lazy_flags(x):
    # array-api-extra's ``at`` and SciPy decide between in-place and copying updates from these
    assert compat.is_writeable_array(x)
    assert not compat.is_lazy_array(x)


def test_namespace_info_through_compat(x, device):
    info = compat.array_namespace(x).__array_namespace_info__()
    assert device in info.devices()
    assert info.default_dtypes(device=device)["real floating"] in (xp.float32, xp.float64)
    assert set(info.dtypes(device=device)) >= {"bool", "int32", "float32"}
