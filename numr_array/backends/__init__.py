"""Backend registry. A backend is imported only when a device of its kind is first asked for."""

from __future__ import annotations

import importlib
import threading

from ..runtime import Runtime

#: device kind -> the package implementing it; each exposes ``create_runtime() -> Runtime | None``
BACKEND_MODULES = {
    "cpu": "numr_array.backends.cpu",
    "cuda": "numr_array.backends.cuda",
    "webgpu": "numr_array.backends.webgpu",
}

_runtimes: dict[str, Runtime | None] = {}
_lock = threading.RLock()


def get_runtime(kind: str) -> Runtime | None:
    """The Runtime of ``kind``, or None when its library is missing or it has no device."""
    if kind not in _runtimes:
        with _lock:  # made once, even when several threads ask first
            if kind not in _runtimes:
                try:
                    module = importlib.import_module(BACKEND_MODULES[kind])
                    _runtimes[kind] = module.create_runtime()
                except ImportError:
                    _runtimes[kind] = None
    return _runtimes[kind]
