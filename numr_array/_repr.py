"""The text of a tensor: ``repr`` and ``str`` (a host copy of the values; a placeholder inside a capture)."""

from __future__ import annotations

import numpy as np

from . import _capture
from ._tensor import Tensor
from ._transfer import to_numpy

__all__ = ["tensor_repr"]


def tensor_repr(x: Tensor) -> str:
    suffix = f"dtype={x._dtype.name}" + ("" if x._dev.kind == "cpu" else f", device={x._dev}")
    st = _capture.current()
    if st is not None and st.device is x._dev:
        return f"Tensor(<in capture>, shape={x._shape}, {suffix})"
    body = np.array2string(to_numpy(x, "repr"), separator=", ", prefix="Tensor(")
    if x.size == 0:
        body = f"[], shape={x._shape}"
    return f"Tensor({body}, {suffix})"
