"""1-D cuFFT transforms along the last axis of C-contiguous arrays, with no CuPy array operation around them.

cupy.fft surrounds each cuFFT call with array operations that cost more host time than the transform of a
megabyte takes on the GPU: a zero-padded input is ``cupy.zeros`` and a slice assignment, the C2R input
(which cuFFT may overwrite) is an ``ndarray.copy``, the plan comes from a cache keyed through its config,
and the normalisation is an in-place ufunc. ``CufftLauncher`` does the same steps with the runtime's calls:
the padded or overwritable input is a pool block filled by ``cudaMemsetAsync`` and ``cudaMemcpy2DAsync``,
plans are kept per (points, type, batch), and a normalisation is the direct launcher's divide by the
float scalar cupy.fft divides by (the same kernel expression, so the same bits).
"""

from __future__ import annotations

import math

import cupy
import numpy as np
from cupy.cuda import cufft, runtime

_F32, _F64, _C64, _C128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
#: (value type, input dtype) -> (cuFFT type, result dtype)
_TYPES = {
    ("R2C", _F32): (cufft.CUFFT_R2C, _C64), ("R2C", _F64): (cufft.CUFFT_D2Z, _C128),
    ("C2R", _C64): (cufft.CUFFT_C2R, _F32), ("C2R", _C128): (cufft.CUFFT_Z2D, _F64),
    ("C2C", _C64): (cufft.CUFFT_C2C, _C64), ("C2C", _C128): (cufft.CUFFT_Z2Z, _C128),
}


class CufftLauncher:
    """cuFFT plans of one GPU and the launches of 1-D transforms along the last axis into ``out``."""

    def __init__(self, direct, pool):
        self._direct = direct  # the client's DirectLauncher (the normalising divide)
        self._pool = pool  # plans' work areas come from the pool, never from a capture's arena
        self._plans: dict[tuple[int, int, int], cufft.Plan1d] = {}

    def _plan(self, n: int, fft_type: int, batch: int) -> cufft.Plan1d:
        key = (n, fft_type, batch)
        plan = self._plans.get(key)
        if plan is None:
            with cupy.cuda.using_allocator(self._pool.malloc):
                plan = self._plans[key] = cufft.Plan1d(n, fft_type, batch)
        return plan

    def try_transform(self, x: cupy.ndarray, o: cupy.ndarray, n: int, direction: int, value_type: str,
                      norm: str) -> bool:
        """Transform the rows of ``x`` (zero-padded or trimmed to ``n`` points; C2R: ``n`` output points) into
        the C-contiguous ``o``, normalised as cupy.fft does; False (nothing done) where ``x`` is not C-contiguous
        or its dtype is not the transform's own (cupy.fft converts those)."""
        types = _TYPES.get((value_type, x.dtype))
        if types is None or types[1] != o.dtype or not x.flags.c_contiguous or not o.flags.c_contiguous \
                or x.ndim == 0 or x.size == 0:
            return False
        fft_type = types[0]
        stream = cupy.cuda.get_current_stream().ptr
        m = x.shape[-1]
        rows = x.size // m
        points = n // 2 + 1 if value_type == "C2R" else n  # the input row's length cuFFT reads
        item = x.dtype.itemsize
        source = x
        if m != points or value_type == "C2R":
            # a padded or trimmed copy (C2R: a copy in any case, as cuFFT may overwrite its input)
            source = cupy.empty((rows, points), x.dtype)
            to, kept = source.data.ptr, min(m, points)
            if rows == 1:  # (a 2-D copy costs the host twice a linear one)
                runtime.memcpyAsync(to, x.data.ptr, kept * item, runtime.memcpyDeviceToDevice, stream)
                if kept < points:
                    runtime.memsetAsync(to + kept * item, 0, (points - kept) * item, stream)
            else:
                if kept < points:
                    runtime.memsetAsync(to, 0, source.nbytes, stream)
                runtime.memcpy2DAsync(to, points * item, x.data.ptr, m * item, kept * item, rows,
                                      runtime.memcpyDeviceToDevice, stream)
        self._plan(n, fft_type, rows).fft(source, o, direction)
        divisor = n if norm == "backward" and direction == cufft.CUFFT_INVERSE \
            or norm == "forward" and direction == cufft.CUFFT_FORWARD else math.sqrt(n) if norm == "ortho" else None
        if divisor is not None:
            real = o.dtype.char.lower()  # a complex result is divided component by component
            self._direct.divide_at(o.data.ptr, o.size * (2 if o.dtype.kind == "c" else 1), np.dtype(real), divisor)
        return True
