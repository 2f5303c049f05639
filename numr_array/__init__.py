"""numr_array: the Python array API standard (2025.12) over device-resident tensors on CPU, CUDA and
WebGPU, with graph capture and replay (``with numr_array.capture() as g: ...; g.replay()``)."""

from ._dtypes import (bool_ as bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: F401
                      float32, float64, complex64, complex128, DType)
from ._device import Device  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from ._capture import CaptureError, CapturedGraph, capture  # noqa: F401
from ._memory import empty_cache, memory_stats, reset_peak_memory_stats  # noqa: F401
from .errors import DeviceLostError  # noqa: F401
from ._namespace import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from . import linalg, fft  # noqa: F401
from . import _tensor_methods

import math as _math
import sys as _sys

_tensor_methods.install(_sys.modules[__name__])  # the operators and methods that are namespace functions

__array_api_version__ = "2025.12"

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

del _math, _sys
