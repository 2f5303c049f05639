"""The WebGPU tests compare the device with the CPU backend: their references are made on the CPU
whatever NUMR_DEVICE says (the whole suite also runs under NUMR_DEVICE=cuda:0 on the GPU machine)."""

import pytest

from numr_array import _device


@pytest.fixture(autouse=True)
def cpu_references(monkeypatch):
    monkeypatch.setattr(_device, "_default", _device.parse_device("cpu"))
