"""Exceptions the backends raise (a leaf module: it imports nothing from numr_array)."""

from __future__ import annotations


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
