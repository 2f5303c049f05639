"""Per-signature plans of element-wise calls (numr_array/_elementwise.py): a repeated signature reuses its
first call's checks and kernel binding, yet still checks what varies per call (a scalar's value, ``out``),
raises what a first call raises, stays correct for operands of other strides and inside a capture, and
keeps a bounded table."""

import numpy as np
import pytest

import numr_array as xp
from numr_array import _elementwise

from .strategies import DEVICE, to_np


def arr(values, dtype=None):
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def test_a_cached_scalar_signature_still_checks_each_value():
    x = arr([1, 2, 3], dtype=xp.int8)
    assert to_np(xp.add(x, 1)).tolist() == [2, 3, 4]  # the (int8, int) plan now exists
    with pytest.raises(OverflowError, match="add: the Python int 1000 does not fit in int8"):
        xp.add(x, 1000)
    with pytest.raises(OverflowError, match="does not fit in int8"):
        xp.add(1000, x)
    assert to_np(x).tolist() == [1, 2, 3]


def test_out_is_checked_on_every_call_of_a_cached_signature():
    x = arr([1.0, 2.0], dtype=xp.float32)
    xp.add(x, x)
    out = arr([7, 7], dtype=xp.int32)  # (a dtype every device holds)
    with pytest.raises(TypeError, match="add: out has dtype int32 but the result is float32"):
        xp.add(x, x, out=out)
    assert to_np(out).tolist() == [7.0, 7.0]
    good = arr([0.0, 0.0], dtype=xp.float32)
    assert xp.add(x, x, out=good) is good
    assert to_np(good).tolist() == [2.0, 4.0]


@pytest.mark.parametrize("call", [lambda x: xp.bitwise_and(x, x), lambda x: xp.bitwise_invert(x),
                                  lambda x: xp.bitwise_and(x, 1.5), lambda x: xp.add(x, "1")])
def test_a_failing_signature_fails_every_time(call):
    x = arr([1.0, 2.0], dtype=xp.float32)
    for _ in range(3):
        with pytest.raises(TypeError):
            call(x)


def test_a_cached_broadcast_plan_serves_operands_of_other_strides():
    a = arr(np.arange(16, dtype=np.float32).reshape(2, 8))
    b = arr(np.arange(8, dtype=np.float32))
    assert np.array_equal(to_np(a + b), np.arange(16).reshape(2, 8) + np.arange(8))
    wide = arr(np.arange(32, dtype=np.float32).reshape(2, 16))
    strided_a = wide[:, ::2]  # shape (2, 8) as a, strides (16, 2)
    strided_b = arr(np.arange(16, dtype=np.float32))[::-2]  # shape (8,) as b, stride -2
    expect = np.arange(32).reshape(2, 16)[:, ::2] + np.arange(16)[::-2]
    assert np.array_equal(to_np(strided_a + strided_b), expect)


def test_a_signature_first_seen_eagerly_is_recorded_in_a_capture():
    x = arr([1.0, 2.0], dtype=xp.float32)
    xp.multiply(x, 3.0)  # the plan exists before the capture
    with xp.capture(device=DEVICE) as g:
        y = xp.multiply(x, 3.0)
    x[...] = arr([5.0, 6.0], dtype=xp.float32)
    g.replay()
    assert to_np(y).tolist() == [15.0, 18.0]


def test_the_plan_tables_are_bounded():
    for n in range(_elementwise._PLANS_MAX + 20):
        xp.negative(xp.zeros((n,), dtype=xp.float32, device=DEVICE))
    assert 0 < max(len(t) for t in _elementwise._PLAN_TABLES) <= _elementwise._PLANS_MAX
