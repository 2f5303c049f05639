"""The one compiled part: numr_array._speedups (numr_array/_speedups.c), the eager call of cached plans in C
(NumPy's ufuncs on the CPU; CUDA's direct kernels, cuBLAS and device copies through the driver's entry points).

Optional: where it cannot be compiled (no C compiler or no Python headers), the install goes on without it
and numr_array runs on its pure-Python path (slower per call; `numr_array.runtime.speedups` is None then).
The build records the SHA-256 of the source it compiled (`_speedups.SOURCE_SHA256`), so that a checkout
whose source has changed since refuses the stale module instead of running it.
The rest of the project's metadata is in pyproject.toml.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "numr_array/_speedups.c"
SHA256 = hashlib.sha256((Path(__file__).parent / SOURCE).read_bytes()).hexdigest()

setup(ext_modules=[Extension("numr_array._speedups", [SOURCE], optional=True, extra_compile_args=["-O2"],
                             define_macros=[("NUMR_SPEEDUPS_SOURCE_SHA256", f'"{SHA256}"')])])
