"""Errors beside the runtime interface, which the namespace layer and the backends both raise.

A leaf module: it imports nothing of numr_array, so a backend may import it without reaching into the
namespace layer.
"""

from __future__ import annotations

import threading


class DeviceLostError(RuntimeError):
    """A device stopped working (a driver reset, a GPU timeout, a destroyed WebGPU device, a sticky CUDA
    error). Every tensor and captured graph made on it before the loss raises this on its next use.

    ``device`` names the device, ``reason`` is what the backend said, and ``recoverable`` whether new
    arrays on the device get a fresh one (WebGPU) or the device is gone for the rest of the process (CUDA).
    """

    def __init__(self, device: str, reason: str, recoverable: bool = True):
        self.device = device
        self.reason = reason
        self.recoverable = recoverable
        if recoverable:
            todo = f"create new arrays on {device}; tensors and graphs made before the loss cannot be used"
        else:
            todo = (f"{device} cannot be used again in this process (restart it to use {device}); "
                    "tensors and graphs made on it cannot be used; other devices still work")
        super().__init__(f"{device} was lost ({reason}): {todo}")

    def __reduce__(self):
        return (type(self), (self.device, self.reason, self.recoverable))


class CaptureError(RuntimeError):
    """An operation that cannot be part of a captured graph was called inside ``capture()``."""


class _Capturing(threading.local):
    #: the calling thread's capture in progress, as (its device, a function that aborts it with a reason),
    #: or None; set by the namespace's ``capture()`` block (numr_array/_capture.py)
    capture: tuple | None = None


capturing = _Capturing()


def abort_active(why: str) -> None:
    """Abort the calling thread's capture, if any: what it recorded is discarded, and its block will fail."""
    c = capturing.capture
    if c is not None:
        c[1](why)


def check_host_read(device, what: str) -> None:
    """Raise CaptureError (aborting the capture) if ``what`` would read ``device`` data during the calling
    thread's capture of it."""
    c = capturing.capture
    if c is not None and c[0] is device:
        c[1](f"{what} reads device data on the host")
        raise CaptureError(f"{what}: cannot be captured, it needs the host to read data of {device} "
                           "(and so cannot be replayed); move it out of the capture() block")
