"""numr_array: the Python array API standard (2025.12) over device-resident tensors on CPU, CUDA and
WebGPU, with graph capture and replay (``with numr_array.capture() as g: ...; g.replay()``).

``__all__`` below is the public namespace, each name once, grouped by the module that defines it
(tests/test_namespace.py checks it against what the package exposes and that each name is defined once).
"""

from . import _dtypes
from ._device import Device  # noqa: F401
from ._tensor import Tensor  # noqa: F401
from ._capture import CaptureError, CapturedGraph, capture  # noqa: F401
from ._jit import JitFallbackWarning, JitFunction, jit  # noqa: F401
from ._memory import empty_cache, memory_stats, reset_peak_memory_stats
from .errors import DeviceLostError  # noqa: F401
from ._namespace import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from . import linalg, fft  # noqa: F401
from . import random  # noqa: F401
from . import _tensor_methods

import logging as _logging
import numpy as _np
import math as _math
import sys as _sys

_tensor_methods.install(_sys.modules[__name__])  # the operators and methods that are namespace functions
# the "numr_array" logger (device discovery and absent backends at INFO, kernel compilation at DEBUG) says
# nothing unless the application configures logging
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
from . import _dask  # noqa: E402
_dask.install()  # dask.array's chunk-type registrations, now or when dask.array is imported

__array_api_version__ = "2025.12"

# The dtypes are NumPy's own dtype objects, as CuPy's arrays' are (numr's record of each is _dtypes.DType);
# DType is their type, for annotations and isinstance.
DType = _np.dtype
(bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64,
 complex128) = (d.np for d in _dtypes.ALL_DTYPES)

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

del _logging, _math, _np, _sys

__all__ = [
    # the standard's constants, dtypes and version; the array, device, dtype and capture types
    "__array_api_version__", "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
    "complex64", "complex128",
    "Tensor", "DType", "Device", "CaptureError", "CapturedGraph", "DeviceLostError", "capture",
    "jit", "JitFunction", "JitFallbackWarning",
    # device memory (_memory.py)
    "empty_cache", "memory_stats", "reset_peak_memory_stats",
    # the extensions
    "linalg", "fft", "random",
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

# NumPy's other functions (the _np_* family modules; docs/numpy-differences.md)
__all__ += [
    "fmod", "cbrt", "exp2", "gcd", "lcm", "sinc", "fabs", "float_power", "heaviside", "i0", "ldexp", "frexp",
    "modf", "divmod", "rint", "fix", "isneginf", "isposinf", "isreal", "iscomplex", "isrealobj",
    "iscomplexobj", "isscalar", "nan_to_num", "angle", "bitwise_not", "bitwise_count", "fmax", "fmin",
    "logaddexp2", "spacing", "real_if_close", "unwrap", "ptp", "packbits", "unpackbits", "median", "quantile", "percentile", "nanmedian",
    "nanquantile", "nanpercentile", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanprod", "nanstd",
    "nanvar", "nancumsum", "nancumprod", "average", "cov", "corrcoef", "bincount", "digitize", "histogram",
    "histogram_bin_edges", "histogram2d", "histogramdd", "array_split", "hsplit", "vsplit", "dsplit",
    "column_stack", "row_stack", "dstack", "fliplr", "flipud", "rot90", "delete", "insert", "append", "resize",
    "rollaxis", "block", "diagflat", "diagonal", "trim_zeros", "ediff1d", "apply_along_axis",
    "apply_over_axes", "choose", "compress", "extract", "select", "piecewise", "put", "place", "putmask",
    "copyto", "fill_diagonal", "put_along_axis", "array_equiv", "asanyarray", "ascontiguousarray",
    "asarray_chkfinite", "require", "pad", "argwhere", "flatnonzero", "unravel_index", "ravel_multi_index", "indices",
    "ix_", "diag_indices", "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "mask_indices", "lexsort", "partition", "argpartition", "sort_complex", "unique",
    "intersect1d", "union1d", "setdiff1d", "setxor1d", "polyval", "polyfit", "polyder", "polyint", "polyadd",
    "polysub", "polymul", "polydiv", "poly", "roots", "convolve", "correlate", "interp", "gradient",
    "trapezoid", "einsum", "einsum_path", "kron", "vdot", "matvec", "vecmat", "cross", "logspace", "geomspace",
    "tri", "vander", "bartlett", "blackman", "hamming", "hanning", "kaiser", "fromfunction", "fromiter",
    "frombuffer", "fromstring", "save", "load", "savez", "savez_compressed", "savetxt", "loadtxt",
    "genfromtxt", "fromfile", "errstate", "seterr", "geterr", "seterrcall", "geterrcall", "set_printoptions",
    "get_printoptions", "printoptions", "array2string", "array_repr", "array_str", "base_repr", "binary_repr",
    "format_float_positional", "format_float_scientific", "typename", "mintypecode", "common_type",
    "min_scalar_type", "promote_types", "issubdtype", "iterable", "may_share_memory", "shares_memory",
    "getbufsize", "setbufsize",
]
