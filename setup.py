"""The one compiled part: numr_array._speedups (numr_array/_speedups.c), the CPU element-wise call in C.

Optional: where it cannot be compiled (no C compiler or no Python headers), the install goes on without it
and numr_array runs on its pure-Python path (slower per call; numr_array.SPEEDUPS says which is in use).
The rest of the project's metadata is in pyproject.toml.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("numr_array._speedups", ["numr_array/_speedups.c"], optional=True,
                             extra_compile_args=["-O2"])])
