"""dask.array with numr tensors as chunks: dask's dispatch registrations for the Tensor type.

dask finds most of what it calls on a chunk through NumPy's protocols (``np.concatenate``, ``np.sum``,
``np.tensordot`` ... reach numr's functions through ``Tensor.__array_function__``). What it looks up by
chunk type instead (``percentile``, ``empty``, ``take``, conversion to NumPy, ``sizeof``) is registered
here, as dask registers CuPy. dask registers CuPy itself, lazily; for numr the registration runs when
``dask.array.dispatch`` is imported (or at once, when it already is), through a one-shot import hook that
``numr_array`` installs at import, so that neither package has to import the other first.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Any

import numpy as np

_registered = False
_lock = threading.Lock()


def register() -> None:
    """Register the Tensor chunk type with dask.array's dispatchers (idempotent; imports dask.array)."""
    global _registered
    with _lock:
        if _registered:
            return
        _registered = True
    from dask.array.dispatch import (concatenate_lookup, empty_lookup, nannumel_lookup, numel_lookup,
                                     percentile_lookup, take_lookup, tensordot_lookup, to_numpy_dispatch)
    from dask.sizeof import sizeof

    from . import _namespace as ns
    from ._tensor import Tensor

    concatenate_lookup.register(Tensor, lambda arrays, axis=0: ns.concat(list(arrays), axis=axis))
    tensordot_lookup.register(Tensor, lambda a, b, axes=2: ns.tensordot(a, b, axes=axes))
    take_lookup.register(Tensor, _take)
    empty_lookup.register(Tensor, _empty)
    percentile_lookup.register(Tensor, _percentile)
    # element counts (of mean, var, std) as tensors on the chunk's device, as dask counts CuPy chunks
    numel_lookup.register(Tensor, _numel)
    nannumel_lookup.register(Tensor, lambda x, **kwargs: ns.sum(ns.logical_not(ns.isnan(x)), **kwargs))
    to_numpy_dispatch.register(Tensor, lambda t, **kwargs: np.asarray(ns.to_device(t, "cpu"), **kwargs))
    sizeof.register(Tensor, lambda t: int(t.nbytes))


def _take(a, indices, axis: int = 0):
    from . import _namespace as ns
    from ._tensor import Tensor

    if type(indices) is not Tensor:  # dask passes NumPy indices
        indices = ns.asarray(np.asarray(indices, dtype=np.int64), device=a.device)
    return ns.take(a, indices, axis=axis)


def _numel(x, axis=None, keepdims: bool = False, dtype: Any = np.float64, **kwargs):
    """dask's element count of a chunk (over ``axis``) as a tensor on its device: what mean, var and std
    divide by (dask makes it a NumPy array for NumPy chunks, which a GPU tensor cannot be combined with)."""
    from . import _namespace as ns

    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    axes = {a % x.ndim for a in axes}
    n = 1
    for a in axes:
        n *= x.shape[a]
    if axis is None and not keepdims:
        return np.prod(x.shape, dtype=dtype)  # a NumPy scalar, as dask gives for every chunk type
    shape = tuple(1 if a in axes else s for a, s in enumerate(x.shape) if keepdims or a not in axes)
    return ns.full(shape, n, dtype=dtype, device=x.device)


def _empty(shape, dtype: Any = None, **kwargs):
    # dask calls it with a shape and NumPy's dtype argument only: a CPU tensor, as np.empty gives NumPy
    from . import _namespace as ns

    return ns.empty(shape, dtype=dtype)


def _percentile(a, q, method: str = "linear"):
    """dask's per-chunk percentile: (the q-th percentiles of the 1-D chunk ``a``, its length)."""
    from . import _namespace as ns

    n = a.shape[0]
    if n == 0:
        return None, n
    from ._tensor import Tensor

    if type(q) is not Tensor:
        q = ns.asarray(np.asarray(list(q), dtype=np.float64), device=a.device, dtype=a.dtype
                       if a.dtype.kind == "f" else None)
    return ns.percentile(a, q, method=method), n


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``register`` right after ``dask.array.dispatch`` has been executed, then removes itself."""

    name = "dask.array.dispatch"

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module) -> None:
            loader_exec(module)
            register()  # needs only the dispatchers just made, and dask.sizeof (dask is loaded by now)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Called at numr_array's import: register now if dask.array is loaded, else when it loads."""
    if "dask.array.dispatch" in sys.modules:
        register()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
