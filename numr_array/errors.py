"""Errors beside the runtime interface, which the namespace layer and the backends both raise.

A leaf module: it imports nothing, so a backend may import it without reaching into the namespace layer.
"""

from __future__ import annotations


class CaptureError(RuntimeError):
    """An operation that cannot be part of a captured graph was called inside ``capture()``."""


#: the capture in progress, as (its device, a function that aborts it with a reason), or None; set by the
#: namespace's ``capture()`` block (numr_array/_capture.py), one at a time process-wide
capturing: tuple | None = None


def abort_active(why: str) -> None:
    """Abort the capture in progress, if any: what it recorded is discarded, and its block will fail."""
    c = capturing
    if c is not None:
        c[1](why)


def check_host_read(device, what: str) -> None:
    """Raise CaptureError (aborting the capture) if ``what`` would read ``device`` data during its capture."""
    c = capturing
    if c is not None and c[0] is device:
        c[1](f"{what} reads device data on the host")
        raise CaptureError(f"{what}: cannot be captured, it needs the host to read data of {device} "
                           "(and so cannot be replayed); move it out of the capture() block")
