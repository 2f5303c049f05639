"""Device objects (``cpu``, ``cuda:0``, ``webgpu:0``) and the default device."""

from __future__ import annotations

import os
import threading

from .backends import BACKEND_MODULES, get_runtime
from .runtime import Client


class Device:
    """One device of one backend. Instances are unique per (kind, index), so ``is`` compares them.

    ``generation`` counts the clients made after a loss: when a (recoverable) device is lost, the next
    array created on it gets a new client, and the tensors and graphs of the old one raise DeviceLostError.
    """

    __slots__ = ("kind", "index", "_client", "_name", "generation")

    def __init__(self, kind: str, index: int):
        self.kind = kind
        self.index = index
        self._client: Client | None = None
        self._name = "cpu" if kind == "cpu" else f"{kind}:{index}"
        self.generation = 0

    @property
    def client(self) -> Client:
        """This device's Client, created on first use."""
        c = self._client
        if c is None:
            with _client_lock:  # two threads' first uses must not make two clients (two wgpu devices)
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
#: held while a runtime or a client is created (re-entrant: creating a client parses device names)
_client_lock = threading.RLock()


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


def renew_if_lost(d: Device) -> Device:
    """``d``, with a new client (the next generation) in place of a lost one that can be replaced: called
    where new arrays are made on a device, so that the tensors of a lost client keep raising DeviceLostError
    (and no device is requested on their behalf) while new ones work."""
    c = d._client
    if c is not None and c.lost is not None and c.recoverable:
        with _lock:
            if d._client is c:
                d._client = None
                d.generation += 1
    return d


def resolve_device(device, func: str) -> Device:
    """``device=`` of a function that makes new arrays, as given (None means the default device)."""
    if device is None:
        d = default_device()
    else:
        d = device if type(device) is Device else parse_device(device, func)
    c = d._client
    if c is not None and c.lost is not None:
        renew_if_lost(d)
    return d
