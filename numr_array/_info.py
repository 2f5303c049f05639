"""The inspection API: ``__array_namespace_info__()``."""

from __future__ import annotations

import numpy as np

from . import _dtypes as dt
from ._device import Device, available_devices, default_device, resolve_device

__all__ = ["__array_namespace_info__"]


def default_dtypes_of(dev: Device) -> dict[str, dt.DType]:
    """The default dtypes on ``dev``: float64 where the device supports it, else float32."""
    client = dev.client
    f64 = client.supports_dtype(dt.float64)
    return {
        "default_float": dt.float64 if f64 else dt.float32,
        "default_complex": dt.complex128 if f64 and client.supports_dtype(dt.complex128) else dt.complex64,
        "default_integral": dt.int64 if client.supports_dtype(dt.int64) else dt.int32,
    }


class Info:
    """What this library and each of its devices support."""

    __module__ = "numr_array"

    def capabilities(self, *, device=None) -> dict:
        resolve_device(device, "capabilities")
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> Device:
        return default_device()

    def default_dtypes(self, *, device=None) -> dict[str, np.dtype]:
        d = default_dtypes_of(resolve_device(device, "default_dtypes"))
        return {"real floating": d["default_float"].np, "complex floating": d["default_complex"].np,
                "integral": d["default_integral"].np, "indexing": d["default_integral"].np}

    def dtypes(self, *, device=None, kind=None) -> dict[str, np.dtype]:
        client = resolve_device(device, "dtypes").client
        supported = [d for d in dt.ALL_DTYPES if client.supports_dtype(d)]
        if kind is not None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            for k in kinds:
                if not isinstance(k, str):
                    raise TypeError(f"dtypes: kind must be a kind name or a tuple of them, got {kind!r}")
                if k not in dt.KIND_GROUPS:
                    raise ValueError(f"dtypes: unknown kind {k!r}; expected one of {sorted(dt.KIND_GROUPS)}")
            supported = [d for d in supported if dt.isdtype(d, kinds)]
        return {d.name: d.np for d in supported}

    def devices(self) -> tuple[Device, ...]:
        return tuple(available_devices())


def __array_namespace_info__() -> Info:
    return Info()
