"""Kernels for backends whose native arrays follow NumPy's API (NumPy on CPU, CuPy on CUDA).

Each family module exposes ``kernels(m) -> dict[name, kernel]`` over an array module ``m``; a kernel is
``kernel(ins, outs, params)``: ``ins`` are native arrays (views of the input tensors, already broadcast by
the namespace), NumPy scalars or None, ``outs`` native views of the output tensors to write into, and
``params`` the launch's frozen parameters. Kernels never allocate results or validate arguments.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..._tensor import Tensor
from ...kernels import check_table


def make_kernels(m, own: dict | None = None) -> dict:
    """Every kernel of every family module in this package, bound to the array module ``m``: exactly the
    kernels numr_array/kernels.py declares (RuntimeError otherwise). ``own``: a backend's own kernels for
    some of those names, which replace the shared ones (RuntimeError for a name the families lack)."""
    table: dict = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        family = importlib.import_module(f"{__name__}.{info.name}")
        for name, kernel in family.kernels(m).items():
            if name in table:
                raise RuntimeError(f"kernel {name!r} is defined by two family modules")
            table[name] = kernel
    if own:
        unknown = sorted(set(own) - set(table))
        if unknown:
            raise RuntimeError(f"{m.__name__}: own kernels for names no family defines: {unknown}")
        table.update(own)
    check_table(table, f"{m.__name__} kernels")
    return table


def native_views(native, inputs, outputs) -> tuple[list, list]:
    """A launch's operands as kernels take them: each tensor as its cached native view (made by ``native``
    on first use), scalars and None as they are."""
    ins = []
    for t in inputs:
        if type(t) is Tensor:
            v = t._view
            ins.append(v if v is not None else native(t))
        else:
            ins.append(t)
    outs = []
    for t in outputs:
        v = t._view
        outs.append(v if v is not None else native(t))
    return ins, outs
