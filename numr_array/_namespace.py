"""Every namespace function in one module, for the Tensor methods (which cannot import the package).

``__all__`` is the namespace functions: the union of the family modules' ``__all__``, which the package
star-imports (its own ``__all__`` lists the whole public namespace). The internal helpers imported below it
(getitem, to_numpy, ...) are for the Tensor methods only.
"""

from . import (_advanced_indexing, _creation, _data_type_functions, _dlpack, _elementwise,
               _linear_algebra_functions, _manipulation, _numpy_compat, _searching, _set_functions, _sorting,
               _statistical, _utility)
from ._creation import *  # noqa: F401,F403
from ._data_type_functions import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._linear_algebra_functions import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._utility import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._set_functions import *  # noqa: F401,F403
from ._advanced_indexing import *  # noqa: F401,F403
from ._dlpack import *  # noqa: F401,F403
from ._numpy_compat import *  # noqa: F401,F403
# NumPy's other functions, one module per family (docs/numpy-differences.md)
from . import _np_math, _np_statistics, _np_histograms, _np_shape, _np_indexing, _np_polynomial, _np_creation, _np_io  # noqa: E402
from ._np_math import *  # noqa: F401,F403,E402
from ._np_statistics import *  # noqa: F401,F403,E402
from ._np_histograms import *  # noqa: F401,F403,E402
from ._np_shape import *  # noqa: F401,F403,E402
from ._np_indexing import *  # noqa: F401,F403,E402
from ._np_polynomial import *  # noqa: F401,F403,E402
from ._np_creation import *  # noqa: F401,F403,E402
from ._np_io import *  # noqa: F401,F403,E402
from ._indexing import getitem, setitem  # noqa: F401
from ._dlpack import dlpack_device, dlpack_export  # noqa: F401
from ._repr import tensor_repr  # noqa: F401
from ._transfer import to_device, to_numpy  # noqa: F401

__all__ = sorted({name for module in (_creation, _data_type_functions, _elementwise, _linear_algebra_functions,
                                      _searching, _manipulation, _statistical, _utility, _sorting, _set_functions,
                                      _advanced_indexing, _dlpack, _numpy_compat, _np_math, _np_statistics, _np_histograms, _np_shape, _np_indexing, _np_polynomial, _np_creation, _np_io)
                  for name in module.__all__})

SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
