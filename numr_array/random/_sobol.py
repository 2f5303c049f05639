"""``Sobol``: Sobol' quasi-random points made on the device, scipy.stats.qmc.Sobol's unscrambled sequence.

The direction vectors (uint32 (d, 30)) and the index of the next point (uint32 (1,)) live in device
tensors: point i is the XOR of the direction vectors of the bits of gray(i) = i ^ (i >> 1), scaled by
2**-30 (scipy's default ``bits=30``), computed with element-wise kernels that read the index from the
device, and the index advances on the device. A captured ``random(n)`` therefore gives the next n points at
every replay, and the direction vectors stay alive with the graph.
"""

from __future__ import annotations

import numpy as np

from .. import _dtypes as dt
from .. import _namespace as ns
from .._device import Device, resolve_device
from .._info import default_dtypes_of
from .._tensor import Tensor
from ._generator import Generator, _check_on, _dtype, _integer

__all__ = ["Sobol"]

BITS = 30

# Primitive polynomials and initial direction numbers of dimensions 2..21 (degree s, coefficients a,
# m_1..m_s), from S. Joe and F. Y. Kuo's table new-joe-kuo-6.21201
# (https://web.maths.unsw.edu.au/~fkuo/sobol/), the table scipy.stats.qmc.Sobol uses; dimension 1 is the
# van der Corput sequence. tests/test_random.py checks the points against scipy's.
JOE_KUO = (
    (1, 0, (1,)), (2, 1, (1, 3)), (3, 1, (1, 3, 1)), (3, 2, (1, 1, 1)), (4, 1, (1, 1, 3, 3)),
    (4, 4, (1, 3, 5, 13)), (5, 2, (1, 1, 5, 5, 17)), (5, 4, (1, 1, 5, 5, 5)), (5, 7, (1, 1, 7, 11, 19)),
    (5, 11, (1, 1, 5, 1, 1)), (5, 13, (1, 1, 1, 3, 11)), (5, 14, (1, 3, 5, 5, 31)),
    (6, 1, (1, 3, 3, 9, 7, 49)), (6, 13, (1, 1, 1, 15, 21, 21)), (6, 16, (1, 3, 1, 13, 27, 49)),
    (6, 19, (1, 1, 1, 15, 7, 5)), (6, 22, (1, 3, 1, 15, 13, 25)), (6, 25, (1, 1, 5, 5, 19, 61)),
    (7, 1, (1, 3, 7, 11, 23, 15, 103)), (7, 4, (1, 3, 7, 13, 13, 15, 69)),
)
MAX_DIM = len(JOE_KUO) + 1


def direction_numbers(d: int) -> np.ndarray:
    """uint32 (d, BITS): v[j, b], the direction number of dimension j for bit b, scaled to BITS bits."""
    v = np.zeros((d, BITS), np.uint32)
    v[0] = [1 << (BITS - 1 - b) for b in range(BITS)]
    for j in range(1, d):
        s, a, m = JOE_KUO[j - 1]
        row = [m[b] << (BITS - 1 - b) for b in range(s)]
        for b in range(s, BITS):
            x = row[b - s] ^ (row[b - s] >> s)
            for k in range(1, s):
                if (a >> (s - 1 - k)) & 1:
                    x ^= row[b - k]
            row.append(x)
        v[j] = row
    return v


class Sobol:
    """Sobol' points in [0, 1)^d (d <= 21), generated on ``device``, unscrambled as
    ``scipy.stats.qmc.Sobol(d, scramble=False)``; ``scramble=True`` applies a random digital shift (an XOR
    of each dimension with random bits from ``seed``), not scipy's LMS scrambling."""

    def __init__(self, d: int, *, scramble: bool = True, seed=None, device=None):
        d = _integer(d, "Sobol", "d")
        if not 1 <= d <= MAX_DIM:
            raise ValueError(f"Sobol: d must be between 1 and {MAX_DIM}, got {d}")
        self.d = d
        self._dev: Device = resolve_device(device, "Sobol")
        self._v = ns.asarray(direction_numbers(d), device=self._dev)
        self._index = ns.zeros((1,), dtype=dt.uint32, device=self._dev)
        self._shift = None
        if scramble:
            bits = Generator(seed, self._dev).bits(d)
            self._shift = ns.bitwise_right_shift(bits, 32 - BITS)

    def random(self, n: int = 1, *, dtype=None) -> Tensor:
        """The next ``n`` points, a (n, d) tensor of the device's default float dtype (or ``dtype``)."""
        n = _integer(n, "random", "n")
        if n < 0:
            raise ValueError(f"random: n must be non-negative, got {n}")
        d = default_dtypes_of(self._dev)["default_float"] if dtype is None else _dtype(dtype, "random", "f", "a real floating-point dtype")
        _check_on(self._dev, d, "random")
        i = ns.add(ns.arange(n, dtype=dt.uint32, device=self._dev), self._index)
        g = ns.reshape(ns.bitwise_xor(i, ns.bitwise_right_shift(i, 1)), (n, 1))
        acc = ns.zeros((n, self.d), dtype=dt.uint32, device=self._dev)
        for b in range(BITS):
            bit = ns.bitwise_and(ns.bitwise_right_shift(g, b), 1)
            acc = ns.bitwise_xor(acc, ns.multiply(bit, self._v[:, b]))
        if self._shift is not None:
            acc = ns.bitwise_xor(acc, self._shift)
        ns.add(self._index, n, out=self._index)
        return ns.multiply(ns.astype(acc, d), 2.0 ** -BITS)

    def reset(self) -> Sobol:
        """Back to the first point."""
        ns.setitem(self._index, ..., 0)
        return self

    def fast_forward(self, n: int) -> Sobol:
        """Skip ``n`` points."""
        n = _integer(n, "fast_forward", "n")
        if n < 0:
            raise ValueError(f"fast_forward: n must be non-negative, got {n}")
        ns.add(self._index, n, out=self._index)
        return self
