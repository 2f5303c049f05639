"""numr_array: the Python array API standard (2025.12) over device-resident tensors on CPU, CUDA and
WebGPU, with graph capture and replay (``with numr_array.capture() as g: ...; g.replay()``).

``__all__`` below is the public namespace, each name once, grouped by the module that defines it
(tests/test_namespace.py checks it against what the package exposes and that each name is defined once).
"""

from ._dtypes import (bool_ as bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: F401
                      float32, float64, complex64, complex128, DType)
from ._device import Device  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from ._capture import CaptureError, CapturedGraph, capture  # noqa: F401
from ._memory import empty_cache, memory_stats, reset_peak_memory_stats
from .errors import DeviceLostError  # noqa: F401
from ._namespace import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from . import linalg, fft  # noqa: F401
from . import _tensor_methods

import math as _math
import sys as _sys

_tensor_methods.install(_sys.modules[__name__])  # the operators and methods that are namespace functions
from . import _dask  # noqa: E402
_dask.install()  # dask.array's chunk-type registrations, now or when dask.array is imported

__array_api_version__ = "2025.12"

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

del _math, _sys

__all__ = [
    # the standard's constants, dtypes and version; the array, device, dtype and capture types
    "__array_api_version__", "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
    "complex64", "complex128",
    "Tensor", "DType", "Device", "CaptureError", "CapturedGraph", "DeviceLostError", "capture",
    # device memory (_memory.py)
    "empty_cache", "memory_stats", "reset_peak_memory_stats",
    # the extensions
    "linalg", "fft",
    # creation (_creation.py)
    "arange", "asarray", "empty", "empty_like", "eye", "full", "full_like", "linspace", "ones", "ones_like", "tril",
    "triu", "zeros", "zeros_like",
    # data type functions (_data_type_functions.py)
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    # element-wise (kernels.OPS) (_elementwise.py)
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign",
    "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot",
    "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10", "log1p", "log2", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign", "signbit",
    "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc",
    # linear algebra (_linear_algebra_functions.py)
    "matmul", "tensordot", "vecdot",
    # manipulation (_manipulation.py)
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "matrix_transpose",
    "meshgrid", "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    # searching (_searching.py)
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where",
    # sets (_set_functions.py)
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # sorting (_sorting.py)
    "argsort", "sort",
    # statistics (_statistical.py)
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    # utility (_utility.py)
    "all", "any", "diff",
    # indexing (_advanced_indexing.py)
    "take", "take_along_axis",
    # DLPack (_dlpack.py)
    "from_dlpack",
    # NumPy's names (docs/numpy-differences.md) (_numpy_compat.py)
    "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "conjugate", "invert",
    "left_shift", "right_shift", "mod", "power", "true_divide", "concatenate", "transpose", "amax", "amin",
    "ndarray", "array", "copy", "ravel", "swapaxes", "hstack", "vstack", "atleast_1d", "atleast_2d", "atleast_3d",
    "split", "ndim", "shape", "size", "identity", "diag", "trace", "dot", "inner", "outer", "cumsum", "cumprod",
    "isclose", "allclose", "array_equal", "deg2rad", "rad2deg", "degrees", "radians", "around", "nansum", "nanmean",
]
