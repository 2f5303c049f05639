"""Bad input: the exception the standard names (TypeError for a wrong type or dtype, ValueError for a bad
shape or value, IndexError for an out-of-range axis or index), a message naming the function, and no
change to the inputs or to ``out``."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array._elementwise import OPS
from .helpers import needs_dtype
from .strategies import DEVICE, to_np
from .test_elementwise import accepted, rejected, row_checks, standard_result_dtype


def T(values, dtype=None):
    return xp.asarray(values, dtype=dtype, device=DEVICE)


# (id, call, exception, the function name the message must contain)
CASES = [
    # element-wise
    ("add list", lambda: xp.add(T([1.0]), [1.0]), TypeError, "add"),
    ("add numpy", lambda: xp.add(np.ones(1), T([1.0])), TypeError, "add"),
    ("add scalars", lambda: xp.add(1, 2), TypeError, "add"),
    ("add shapes", lambda: xp.add(T([1.0, 2.0]), T([1.0, 2.0, 3.0])), ValueError, "add"),
    ("add bool bool", lambda: xp.add(T([True]), T([False])), TypeError, "add"),
    ("add numpy scalar", lambda: xp.add(T([1.0]), np.float64(1.0)), TypeError, "add"),
    ("add int overflow", lambda: xp.add(T([1], xp.int8), 300), OverflowError, "add"),
    ("sin int", lambda: xp.sin(T([1])), TypeError, "sin"),
    ("sin list", lambda: xp.sin([1.0]), TypeError, "sin"),
    ("sin scalar", lambda: xp.sin(1.0), TypeError, "sin"),
    ("atan2 complex", lambda: xp.atan2(T([1.0]), 1j), TypeError, "atan2"),
    ("logical_and list", lambda: xp.logical_and([True], T([True])), TypeError, "logical_and"),
    ("bitwise_and float", lambda: xp.bitwise_and(T([1.0]), T([1.0])), TypeError, "bitwise_and"),
    ("bitwise_left_shift bool", lambda: xp.bitwise_left_shift(T([True]), T([True])), TypeError,
     "bitwise_left_shift"),
    ("imag real", lambda: xp.imag(T([1.0])), TypeError, "imag"),
    ("signbit int", lambda: xp.signbit(T([1])), TypeError, "signbit"),
    ("less complex", lambda: xp.less(T([1j]), T([1j])), TypeError, "less"),
    ("clip complex", lambda: xp.clip(T([1j])), TypeError, "clip"),
    ("clip bool", lambda: xp.clip(T([True]), 0, 1), TypeError, "clip"),
    ("clip complex bound", lambda: xp.clip(T([1.0]), 1j), TypeError, "clip"),
    ("clip float bound int x", lambda: xp.clip(T([1]), 0.5), TypeError, "clip"),
    ("clip bool bound", lambda: xp.clip(T([1]), True), TypeError, "clip"),
    ("clip list bound", lambda: xp.clip(T([1.0]), [0.0]), TypeError, "clip"),
    ("clip bound dtype", lambda: xp.clip(T([1], xp.int8), T([0.0])), TypeError, "clip"),
    ("clip bound shape", lambda: xp.clip(T([1.0, 2.0]), None, T([0.0, 1.0, 2.0])), ValueError, "clip"),
    ("clip bound shapes", lambda: xp.clip(T([[1.0]]), T([0.0, 1.0]), T([0.0, 1.0, 2.0])), ValueError, "clip"),
    ("clip list x", lambda: xp.clip([1.0], 0.0), TypeError, "clip"),
    # creation
    ("asarray dtype", lambda: xp.asarray([1], dtype="float16", device=DEVICE), TypeError, "asarray"),
    ("asarray float to int", lambda: xp.asarray(1.5, dtype=xp.int8, device=DEVICE), TypeError, "asarray"),
    ("asarray ragged", lambda: xp.asarray([[1], [1, 2]], device=DEVICE), ValueError, "asarray"),
    ("asarray string", lambda: xp.asarray("1", device=DEVICE), TypeError, "asarray"),
    ("asarray copy", lambda: xp.asarray([1], copy=1, device=DEVICE), ValueError, "asarray"),
    ("asarray device", lambda: xp.asarray([1], device="gpu"), ValueError, "asarray"),
    ("zeros negative", lambda: xp.zeros((-1,), device=DEVICE), ValueError, "zeros"),
    ("ones float shape", lambda: xp.ones((1.0,), device=DEVICE), TypeError, "ones"),
    ("empty dtype", lambda: xp.empty((1,), dtype=object, device=DEVICE), TypeError, "empty"),
    ("full fill", lambda: xp.full((1,), [1], device=DEVICE), TypeError, "full"),
    ("full fill dtype", lambda: xp.full((1,), 1.5, dtype=xp.int8, device=DEVICE), TypeError, "full"),
    ("zeros_like list", lambda: xp.zeros_like([1]), TypeError, "zeros_like"),
    ("ones_like dtype", lambda: xp.ones_like(T([1]), dtype=np.float16), TypeError, "ones_like"),
    ("full_like fill", lambda: xp.full_like(T([1]), 1.5), TypeError, "full_like"),
    ("empty_like device", lambda: xp.empty_like(T([1]), device="gpu"), ValueError, "empty_like"),
    ("arange step", lambda: xp.arange(0, 1, 0, device=DEVICE), ValueError, "arange"),
    ("arange type", lambda: xp.arange("1", device=DEVICE), TypeError, "arange"),
    ("linspace num", lambda: xp.linspace(0, 1, -2, device=DEVICE), ValueError, "linspace"),
    ("linspace dtype", lambda: xp.linspace(0, 1, 2, dtype=xp.int8, device=DEVICE), TypeError, "linspace"),
    ("eye size", lambda: xp.eye(-1, device=DEVICE), ValueError, "eye"),
    ("tril 1-D", lambda: xp.tril(T([1, 2])), ValueError, "tril"),
    ("linspace bound beyond float", lambda: xp.linspace(0, 10 ** 400, 3, device=DEVICE), OverflowError,
     "linspace"),
    ("full int beyond default", lambda: xp.full((1,), 2 ** 70, device=DEVICE), OverflowError, "full"),
    ("from_dlpack int", lambda: xp.from_dlpack(3), TypeError, "from_dlpack"),
    ("diff negative n", lambda: xp.diff(T([1, 2]), n=-1), ValueError, "diff"),
    ("diff bool n", lambda: xp.diff(T([1, 2]), n=True), TypeError, "diff"),
    ("rfft huge n", lambda: xp.fft.rfft(T([1.0]), n=2 ** 70), ValueError, "rfft: n"),
    ("irfftn huge s", lambda: xp.fft.irfftn(T([[1j]]), s=(2 ** 63, 3), axes=(0, 1)), ValueError, "irfftn: s"),
    ("trace offset", lambda: xp.linalg.trace(T([[1]]), offset=None), TypeError, "trace: offset"),
    ("fftfreq huge n", lambda: xp.fft.fftfreq(2 ** 70, device=DEVICE), ValueError, "fftfreq: n"),
    ("repeat huge", lambda: xp.repeat(T([1, 2]), 2 ** 70), ValueError, "repeat: dimension"),
    ("tile huge", lambda: xp.tile(T([1, 2]), (2 ** 70,)), ValueError, "tile: dimension"),
    ("broadcast_to huge", lambda: xp.broadcast_to(T(1), (2 ** 70,)), ValueError, "broadcast_to: dimension"),
    ("broadcast_to too many elements", lambda: xp.broadcast_to(T(1), (2 ** 40, 2 ** 40)), ValueError,
     "broadcast_to: shape"),
    ("broadcast_to too many bytes", lambda: xp.broadcast_to(T([1], xp.int32), (2 ** 62,)), ValueError,
     "broadcast_to"),
    ("zeros too many elements", lambda: xp.zeros((2 ** 40, 2 ** 40), device=DEVICE), ValueError, "zeros: shape"),
    ("eye too many bytes on the CPU", lambda: xp.eye(2 ** 31, 2 ** 31, device="cpu"), MemoryError,
     "cpu: cannot allocate"),
    ("triu list", lambda: xp.triu([[1]]), TypeError, "triu"),
    # data type functions
    ("astype complex to real", lambda: xp.astype(T([1j]), xp.float32), TypeError, "astype"),
    ("astype dtype", lambda: xp.astype(T([1]), np.float16), TypeError, "astype"),
    ("astype list", lambda: xp.astype([1], xp.float64), TypeError, "astype"),
    ("can_cast to", lambda: xp.can_cast(xp.int8, "float16"), TypeError, "can_cast"),
    ("can_cast from", lambda: xp.can_cast("U3", xp.int16), TypeError, "can_cast"),
    ("result_type none", lambda: xp.result_type(), ValueError, "result_type"),
    ("result_type bad", lambda: xp.result_type([1]), TypeError, "result_type"),
    ("finfo int", lambda: xp.finfo(xp.int8), TypeError, "finfo"),
    ("iinfo float", lambda: xp.iinfo(xp.float32), TypeError, "iinfo"),
    ("isdtype kind", lambda: xp.isdtype(xp.int8, "floating"), ValueError, "isdtype"),
    ("isdtype dtype", lambda: xp.isdtype(np.float16, "integral"), TypeError, "isdtype"),
    # the array object
    ("to_device", lambda: T([1]).to_device("gpu"), ValueError, "to_device"),
    ("__array_namespace__", lambda: T([1]).__array_namespace__(api_version="1.0"), ValueError,
     "__array_namespace__"),
    ("T 1-D", lambda: T([1]).T, ValueError, "T"),
    ("mT 1-D", lambda: T([1]).mT, ValueError, "matrix_transpose"),
    ("__index__ float", lambda: T(1.0).__index__(), TypeError, "__index__"),
    ("__float__ complex", lambda: float(T(1j)), TypeError, "__float__"),
    ("__int__ complex", lambda: int(T(1j)), TypeError, "__int__"),
    ("__bool__ 1-D", lambda: bool(T([1, 2])), TypeError, "__bool__"),
    ("__dlpack__ stream on the CPU", lambda: xp.asarray([1], device="cpu").__dlpack__(stream=0), ValueError,
     "__dlpack__"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_error(case):
    _, call, exc, name = case
    with pytest.raises(exc, match=name):
        call()


# --- failed calls change nothing ----------------------------------------------------------------

def _snapshot(*tensors):
    return [to_np(t).copy() for t in tensors]


def _unchanged(tensors, before):
    for t, b in zip(tensors, before):
        np.testing.assert_array_equal(to_np(t), b)


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_elementwise_errors_leave_inputs_and_out_untouched(op):
    f = getattr(ew, op.name)
    dtype = accepted(op)[-1]
    rdtype = standard_result_dtype(op, dtype)
    x = xp.asarray(np.arange(1, 7).reshape(2, 3) % 2 == 0 if dtype == xp.bool else
                   np.arange(1, 7).reshape(2, 3), dtype=dtype, device=DEVICE)
    y = xp.asarray(np.arange(4) % 2 == 0 if dtype == xp.bool else np.arange(4), dtype=dtype, device=DEVICE)
    out = xp.zeros((2, 3), dtype=rdtype, device=DEVICE)
    calls = []
    if op.arity == 1:
        calls += [(lambda: f(to_np(x), out=out), TypeError),
                  (lambda: f(x, out=xp.zeros((3, 2), dtype=rdtype, device=DEVICE)), ValueError)]
    elif op.arity == 2:
        calls += [(lambda: f(x, y, out=out), ValueError),  # shapes (2, 3) and (4,)
                  (lambda: f(x, [1], out=out), TypeError),
                  (lambda: f(x, x, out=y), ValueError if rdtype == dtype else TypeError),
                  (lambda: f(x, x, out=to_np(out)), TypeError)]
        checks = row_checks(op)  # (divide and logical_* take the row's rejected dtypes with NumPy's meaning)
        # (a rejected dtype that promotes with x's to an accepted one is taken, as NumPy takes bool + int)
        for other in [o for o in rejected(op) if xp.result_type(dtype, o).kind not in op.kinds][:3]:
            z = xp.zeros((2, 3), dtype=other, device=DEVICE)
            calls.append((lambda z=z: checks(x, z, out=out), TypeError))
    else:
        calls += [(lambda: f(x, y, out=out), ValueError), (lambda: f(x, 1j, out=out), TypeError),
                  # bounds that broadcast x to (2, 2, 3): out of shape (2, 3) does not fit
                  (lambda: f(x, 0, xp.zeros((2, 1, 1), dtype=dtype, device=DEVICE), out=out), ValueError)]
    for call, exc in calls:
        before = _snapshot(x, y, out)
        with pytest.raises(exc, match=op.name):
            call()
        _unchanged((x, y, out), before)


def test_mixed_devices_raise_value_error(fake_backend):
    for op in OPS:
        f = getattr(ew, op.name)
        dtype = accepted(op)[-1]
        values = [True, False] if dtype == xp.bool else [1, 2]
        here = xp.asarray(values, dtype=dtype, device=DEVICE)
        there = xp.asarray(values, dtype=dtype, device="fake:1")
        out = xp.zeros((2,), dtype=standard_result_dtype(op, dtype), device=DEVICE)
        before = _snapshot(here, there, out)
        if op.arity == 1:
            with pytest.raises(ValueError, match=op.name):
                f(there, out=out)  # out on another device than the input
        else:
            rest = [None] * (op.arity - 2)
            with pytest.raises(ValueError, match=op.name):
                f(here, there, *rest, out=out)
            with pytest.raises(ValueError, match=op.name):
                f(there, here, *rest)
        _unchanged((here, there, out), before)


def test_failed_in_place_operators_leave_the_array_untouched():
    x = T([1, 2, 3], xp.int8)
    for bad in (1.5, T([1.0, 2.0, 3.0]), T([1, 2], xp.int8), T([[1, 2, 3]], xp.int8), T([1, 2, 3], xp.int16)):
        with pytest.raises((TypeError, ValueError)):
            x += bad
        np.testing.assert_array_equal(to_np(x), [1, 2, 3])


def test_astype_and_creation_errors_leave_inputs_untouched():
    z = T([1 + 2j, 3 - 1j])
    before = _snapshot(z)
    with pytest.raises(TypeError, match="astype"):
        xp.astype(z, xp.float32)
    _unchanged((z,), before)
    t = T([[1.0, 2.0], [3.0, 4.0]])
    before = _snapshot(t)
    with pytest.raises(TypeError, match="full_like"):
        xp.full_like(t, 1j)
    with pytest.raises(TypeError, match="tril"):
        xp.tril(t, k=0.5)
    _unchanged((t,), before)


def test_out_that_is_a_broadcast_view_is_rejected_untouched():
    base = xp.zeros(1, device=DEVICE)
    out = xp.broadcast_to(base, (3,))
    with pytest.raises(ValueError, match="broadcast view"):
        xp.add(xp.asarray([1.0, 2.0, 3.0], device=DEVICE), 0.0, out=out)
    assert to_np(base).tolist() == [0.0]
