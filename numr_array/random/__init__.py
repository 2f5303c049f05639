"""numr_array.random: random numbers made on the device (docs/random.md).

``default_rng(seed, device)`` gives a :class:`Generator` (NumPy's ``numpy.random.Generator`` methods) over a
Philox4x32-10 counter-based stream: one seed gives the same numbers on every device, and draws inside
``capture()`` draw fresh numbers at each replay. The legacy functions (``seed``, ``rand``, ``randn``,
``randint``, ...) draw from one global generator per device, like ``numpy.random``'s. :class:`Sobol` makes
Sobol' quasi-random points. The streams are not NumPy's (PCG64).
"""

from __future__ import annotations

import numpy as np

from .._device import Device, resolve_device
from .._tensor import Tensor
from ._generator import Generator, default_rng
from ._sobol import Sobol

__all__ = [
    "Generator",
    "Sobol",
    "choice",
    "default_rng",
    "exponential",
    "normal",
    "permutation",
    "rand",
    "randint",
    "randn",
    "random",
    "random_sample",
    "seed",
    "shuffle",
    "standard_normal",
    "uniform",
]

_seed = None
_globals: dict[Device, Generator] = {}


def _global(device=None) -> Generator:
    """The global generator of ``device`` (default: the default device), made on first use from the last
    ``seed()``."""
    dev = resolve_device(device, "numr_array.random")
    g = _globals.get(dev)
    if g is None:
        g = _globals[dev] = Generator(_seed, dev)
    return g


def seed(seed=None) -> None:
    """Reseed the global generators (every device's, each made again from ``seed`` on its next use)."""
    global _seed
    try:
        np.random.SeedSequence(seed)
    except (TypeError, ValueError) as e:
        raise type(e)(f"seed: invalid seed {seed!r} ({e})") from None
    _seed = seed
    _globals.clear()


def rand(*shape: int, device=None) -> Tensor:
    """Uniform [0, 1) floats of shape ``shape``."""
    return _global(device).random(shape)


def randn(*shape: int, device=None) -> Tensor:
    """Standard normal floats of shape ``shape``."""
    return _global(device).standard_normal(shape)


def randint(low, high=None, size=None, dtype=None, *, device=None) -> Tensor:
    """Integers in [low, high) (in [0, low) without high)."""
    return _global(device).integers(low, high, size, dtype)


def random(size=None, *, device=None) -> Tensor:
    return _global(device).random(size)


random_sample = random


def standard_normal(size=None, *, device=None) -> Tensor:
    return _global(device).standard_normal(size)


def normal(loc=0.0, scale=1.0, size=None, *, device=None) -> Tensor:
    return _global(device).normal(loc, scale, size)


def uniform(low=0.0, high=1.0, size=None, *, device=None) -> Tensor:
    return _global(device).uniform(low, high, size)


def exponential(scale=1.0, size=None, *, device=None) -> Tensor:
    return _global(device).exponential(scale, size)


def choice(a, size=None, replace: bool = True, p=None, *, device=None) -> Tensor:
    return _global(a.device if type(a) is Tensor and device is None else device).choice(a, size, replace, p)


def permutation(x, *, device=None) -> Tensor:
    return _global(x.device if type(x) is Tensor and device is None else device).permutation(x)


def shuffle(x: Tensor) -> None:
    """Permute ``x`` in place along its first axis."""
    if type(x) is not Tensor:
        raise TypeError(f"shuffle: x must be a numr_array Tensor (shuffled in place), got {type(x).__name__}")
    _global(x.device).shuffle(x)
