"""Per-signature plans of reductions and of ``asarray`` of a Python scalar, on any device (C plans on the CPU,
Python plans on a GPU client): a repeated signature raises what its first call raises and reads each
operand through its own view."""

import numpy as np
import pytest

import numr_array as xp

from .strategies import DEVICE, to_np


def arr(values, dtype=None):
    return xp.asarray(values, dtype=dtype, device=DEVICE)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_a_planned_reduction_raises_what_its_first_call_raises(name):
    f = getattr(xp, name)
    x = arr(np.ones((2, 3), np.float32))
    for _ in range(2):
        f(x, axis=1)
        f(x, axis=None, keepdims=False)
    for _ in range(2):
        with pytest.raises(TypeError, match=name):
            f(x, axis=True)
        with pytest.raises(TypeError, match="keepdims"):
            f(x, axis=1, keepdims=0)
        with pytest.raises((ValueError, IndexError), match=name):
            f(x, axis=2)
    out = arr(np.full(2, 7, np.int32))
    with pytest.raises(TypeError, match="out"):
        f(x, axis=1, out=out)
    assert to_np(out).tolist() == [7, 7]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_a_planned_reduction_reads_each_view(name):
    host = np.linspace(0.5, 2.0, 60, dtype=np.float32)
    x = arr(host)
    f, g = getattr(xp, name), getattr(np, name)
    for _ in range(2):
        for start in (0, 3, 17):
            np.testing.assert_allclose(to_np(f(x[start:start + 20])), g(host[start:start + 20]), rtol=1e-5)
            np.testing.assert_allclose(to_np(f(x[start:start + 40:2])), g(host[start:start + 40:2]), rtol=1e-5)


def test_a_planned_scalar_asarray_raises_what_its_first_call_raises():
    for _ in range(2):
        assert to_np(arr(2)) == 2
        assert to_np(arr(3, dtype=xp.uint8)) == 3
    for _ in range(2):
        with pytest.raises(OverflowError, match="asarray"):
            arr(2 ** 70)
        with pytest.raises(OverflowError, match="asarray"):
            arr(300, dtype=xp.uint8)
        with pytest.raises(TypeError, match="asarray"):
            arr(1.5, dtype=xp.int8)
        with pytest.raises(ValueError, match="asarray: copy must be"):
            xp.asarray(2, copy=1, device=DEVICE)
