"""The kernel table of the WebGPU backend: every family module's ``kernels()``, merged.

A family module that fails to import fails the client (no kernel may silently go missing), and the
merged table must hold exactly the kernels numr_array/kernels.py declares."""

from __future__ import annotations

import importlib

from ...kernels import check_table

FAMILIES = ("k_elementwise", "k_reduce", "k_index", "k_contract", "k_factor", "k_jacobi", "k_hessenberg_qr",
            "k_sort", "k_fft", "k_random")


def make_kernels() -> dict:
    table: dict = {}
    for name in FAMILIES:
        family = importlib.import_module(f"{__package__}.{name}")
        for kname, kernel in family.kernels().items():
            if kname in table:
                raise RuntimeError(f"webgpu kernel {kname!r} is defined by two family modules")
            table[kname] = kernel
    check_table(table, "webgpu")
    return table
