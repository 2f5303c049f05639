"""Device objects (``cpu``, ``cuda:0``, ``webgpu:0``) and the default device."""

from __future__ import annotations

import os
import threading

from .backends import BACKEND_MODULES, get_runtime
from .runtime import Client


class Device:
    """One device of one backend. Instances are unique per (kind, index), so ``is`` compares them."""

    __slots__ = ("kind", "index", "_client", "_name")

    def __init__(self, kind: str, index: int):
        self.kind = kind
        self.index = index
        self._client: Client | None = None
        self._name = "cpu" if kind == "cpu" else f"{kind}:{index}"

    @property
    def client(self) -> Client:
        """This device's Client, created on first use."""
        c = self._client
        if c is None:
            runtime = get_runtime(self.kind)
            if runtime is None or self.index >= runtime.device_count():
                raise ValueError(f"device {self._name!r} is not available on this machine")
            c = self._client = runtime.create_client(self)
        return c

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = parse_device(other, "==")
            except (ValueError, TypeError):
                return False
        return self is other

    def __hash__(self) -> int:
        return hash(self._name)

    def __reduce__(self):
        return (parse_device, (self._name,))


_devices: dict[tuple[str, int], Device] = {}
_lock = threading.Lock()


def _device(kind: str, index: int) -> Device:
    key = (kind, index)
    d = _devices.get(key)
    if d is None:
        with _lock:
            d = _devices.setdefault(key, Device(kind, index))
    return d


def parse_device(spec, func: str = "device") -> Device:
    """A Device from a Device or its string form; ValueError for an unknown or malformed name."""
    if type(spec) is Device:
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"{func}: device must be a numr_array Device or a string such as 'cpu', got {spec!r}")
    kind, sep, idx = spec.partition(":")
    if kind not in BACKEND_MODULES or (sep and not idx.isdigit()) or (kind == "cpu" and sep and idx != "0"):
        raise ValueError(f"{func}: unknown device {spec!r}; expected 'cpu', 'cuda:N' or 'webgpu:N'")
    if sep:
        return _device(kind, int(idx))
    runtime = get_runtime(kind) if kind != "cpu" else None  # 'cuda' alone: that backend's default device
    return _device(kind, runtime.default_index() if runtime is not None else 0)


def available_devices() -> list[Device]:
    """Every device of every backend whose library is present, cpu first."""
    out = []
    for kind in BACKEND_MODULES:
        runtime = get_runtime(kind)
        if runtime is not None:
            out.extend(_device(kind, i) for i in range(runtime.device_count()))
    return out


_default: Device | None = None


def default_device() -> Device:
    """The device ``NUMR_DEVICE`` names (default cpu)."""
    global _default
    if _default is None:
        _default = parse_device(os.environ.get("NUMR_DEVICE", "cpu"), "NUMR_DEVICE")
    return _default


def resolve_device(device, func: str) -> Device:
    """``device=`` as given (None means the default device)."""
    if device is None:
        return default_device()
    d = device if type(device) is Device else parse_device(device, func)
    return d
