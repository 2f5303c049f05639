"""The kernel table of the WebGPU backend: every family module's ``kernels()``, merged."""

from __future__ import annotations

import importlib

FAMILIES = ("k_elementwise", "k_reduce", "k_index", "k_linalg", "k_lu", "k_sort", "k_fft", "k_eigen")


def make_kernels() -> dict:
    table: dict = {}
    for name in FAMILIES:
        try:
            family = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{name}":
                raise
            continue
        for kname, kernel in family.kernels().items():
            if kname in table:
                raise RuntimeError(f"webgpu kernel {kname!r} is defined by two family modules")
            table[kname] = kernel
    return table
