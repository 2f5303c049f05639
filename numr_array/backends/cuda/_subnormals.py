"""Keep float32 subnormals in CuPy's kernels, as NumPy (and so the CPU backend) does.

CuPy compiles every kernel with ``-ftz=true``, flushing float32 subnormal inputs and results to zero:
``1e-45 + 0`` is 0 and ``log(-1e-45)`` is -inf instead of NaN on CUDA. The CUDA runtime undoes that for
the kernels CuPy compiles after the first CUDA client is made: CuPy's compile step gets a marker define
(so that such kernels are cached on disk apart from CuPy's own) and NVRTC then gets ``-ftz=false``.
Set ``NUMR_CUDA_FTZ=1`` to keep CuPy's flushing (and its kernel cache) instead.

This touches two private functions of ``cupy.cuda.compiler`` (CuPy 13 and 14); where they are missing it
does nothing, and float32 subnormals flush as in plain CuPy.
"""

from __future__ import annotations

import os

_MARK = "-DNUMR_KEEP_SUBNORMALS"


def keep_float32_subnormals() -> bool:
    """Install the compile hooks (once); whether CuPy's kernels now keep float32 subnormals."""
    if os.environ.get("NUMR_CUDA_FTZ", "0") not in ("", "0"):
        return False
    from cupy.cuda import compiler
    with_cache = getattr(compiler, "_compile_with_cache_cuda", None)
    nvrtc = getattr(compiler, "_compile_using_nvrtc_no_warning", None)
    if with_cache is None or nvrtc is None:
        return False
    if getattr(with_cache, "numr_keeps_subnormals", False):
        return True

    def compile_with_cache(source, options, *args, **kwargs):
        return with_cache(source, tuple(options) + (_MARK,), *args, **kwargs)

    def compile_using_nvrtc(source, options, *args, **kwargs):
        if _MARK in options:
            options = tuple("-ftz=false" if o == "-ftz=true" else o for o in options)
        return nvrtc(source, options, *args, **kwargs)

    compile_with_cache.numr_keeps_subnormals = True
    compiler._compile_with_cache_cuda = compile_with_cache
    compiler._compile_using_nvrtc_no_warning = compile_using_nvrtc
    return True
