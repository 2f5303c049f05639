"""Backend registry. A backend is imported only when a device of its kind is first asked for."""

from __future__ import annotations

import importlib
import logging
import threading

from ..runtime import Runtime

#: device discovery: the backends found (INFO) and, from each backend, why it is absent (INFO)
log = logging.getLogger(__name__)

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
                    _runtimes[kind] = runtime = module.create_runtime()
                except ImportError as e:
                    log.info("%s backend absent: %s", kind, e)
                    _runtimes[kind] = runtime = None
                if runtime is not None:
                    log.info("%s backend: %d device(s)", kind, runtime.device_count())
    return _runtimes[kind]
