"""Helpers of the ecosystem tests."""

import numpy as np

import numr_array as xp


def host(x) -> np.ndarray:
    """A NumPy copy of a numr tensor on any device (NumPy values pass through)."""
    if isinstance(x, xp.Tensor):
        return np.asarray(x.to_device("cpu"))
    return np.asarray(x)


def assert_tensor_on(result, device) -> None:
    """``result`` is a numr tensor on ``device``: what an array-API-aware library must hand back."""
    assert isinstance(result, xp.Tensor), f"expected a numr_array Tensor, got {type(result).__name__}"
    assert result.device == device, f"result on {result.device}, inputs on {device}"
