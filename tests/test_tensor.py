"""The array object: operators (forward, reflected, in-place) against the namespace functions, Python
scalar conversions, __array__, DLPack, repr, len, T/mT, attributes, to_device and __array_namespace__."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp
from numr_array._elementwise import OPS_BY_NAME
from .helpers import supported_promotion
from .strategies import ALL, DEVICE, np_arrays, shapes, supported, tensors, to_np, views
from .test_elementwise import (accepted, constrain, dtype_pairs, promoted, python_scalars,
                               scalar_result_dtype, standard_result_dtype)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEV = xp._device.parse_device(DEVICE)

# operator -> namespace function, for the operators that have reflected and in-place forms
ARITHMETIC = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
COMPARISON = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
              "ge": "greater_equal"}
UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}


def opfn(name: str):
    """The operator module's function for a dunder's name (``and`` is ``operator.and_``)."""
    return getattr(operator, name, None) or getattr(operator, name + "_")


def same(a, b):
    """Two tensors hold the same values, dtype and shape (NaN equal to NaN, zeros by sign)."""
    assert type(a) is xp.Tensor and type(b) is xp.Tensor
    assert a.dtype == b.dtype and a.shape == b.shape
    x, y = to_np(a), to_np(b)
    np.testing.assert_array_equal(x, y)
    if x.dtype.kind == "f":
        assert np.array_equal(np.signbit(x) | np.isnan(x), np.signbit(y) | np.isnan(y))


@st.composite
def operands(draw, func: str):
    op = OPS_BY_NAME[func]
    d1, d2 = draw(dtype_pairs(op))
    rdtype = promoted(d1, d2)
    (s1, s2), _ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    a1 = constrain(func, 0, draw(np_arrays(d1, s1)), rdtype)
    a2 = constrain(func, 1, draw(np_arrays(d2, s2)), rdtype)
    return draw(views(a1)), draw(views(a2))


@pytest.mark.parametrize("dunder, func", list(ARITHMETIC.items()) + list(COMPARISON.items()),
                         ids=list(ARITHMETIC) + list(COMPARISON))
@given(data=st.data())
def test_binary_operators(dunder, func, data):
    x1, x2 = data.draw(operands(func))
    f = getattr(xp, func)
    if not supported_promotion(x1.dtype, x2.dtype):  # (int8 with uint32 to int64: a device without it refuses)
        with pytest.raises(TypeError, match=func):
            opfn(dunder)(x1, x2)
        with pytest.raises(TypeError, match=func):
            getattr(x1, f"__{dunder}__")(x2)
        return
    same(opfn(dunder)(x1, x2), f(x1, x2))
    same(getattr(x1, f"__{dunder}__")(x2), f(x1, x2))


@pytest.mark.parametrize("dunder, func", list(ARITHMETIC.items()) + list(COMPARISON.items()),
                         ids=list(ARITHMETIC) + list(COMPARISON))
@given(data=st.data())
def test_operators_with_python_scalars(dunder, func, data):
    op = OPS_BY_NAME[func]
    dtype = data.draw(st.sampled_from(accepted(op)))
    value = data.draw(python_scalars(dtype))
    rdtype = scalar_result_dtype(dtype, value)
    if rdtype.kind in ("i", "u"):
        value = int(constrain(func, 1, np.asarray(value, rdtype), rdtype).item())
    x = data.draw(views(constrain(func, 0, data.draw(np_arrays(dtype, data.draw(shapes(max_dims=2)))), rdtype)))
    f = getattr(xp, func)
    if rdtype.kind not in op.kinds:
        with pytest.raises(TypeError):
            opfn(dunder)(x, value)
        return
    same(opfn(dunder)(x, value), f(x, value))
    if dunder in ARITHMETIC:
        # the reflected form: scalar <op> array
        if rdtype.kind in ("i", "u"):
            value = int(constrain(func, 0, np.asarray(value, rdtype), rdtype).item())
            x = data.draw(views(constrain(func, 1, to_np(x), rdtype)))
        same(opfn(dunder)(value, x), f(value, x))


@pytest.mark.parametrize("dunder, func", list(ARITHMETIC.items()), ids=list(ARITHMETIC))
@given(data=st.data())
def test_in_place_operators(dunder, func, data):
    x1, x2 = data.draw(operands(func))
    before = to_np(x1).copy()
    expected_dtype = standard_result_dtype(OPS_BY_NAME[func], promoted(x1.dtype, x2.dtype))
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    iop = opfn(f"i{dunder}")
    if expected_dtype != x1.dtype or shape != x1.shape:
        # the result does not fit x1: an error, and x1 is unchanged
        with pytest.raises((TypeError, ValueError), match=func):
            iop(x1, x2)
        np.testing.assert_array_equal(to_np(x1), before)
        return
    expected = getattr(xp, func)(x1, x2)
    same_object = x1
    r = iop(x1, x2)
    assert r is same_object
    same(r, expected)


# (a + bi)(c + di) with ac ~ bd ~ 1e30: the real part cancels, so a fused multiply-add and two separate
# roundings give different bits; then values that a power does not overflow
ROUNDING_SENSITIVE = [(1.0000001e15 + 0.9999999e15j, 1.0000003e15 + 1.0000002e15j),
                      (5600840601502175 + 5j, 1604918817325056 + 5j),
                      (1.2345678e15 + 1.1111111e15j, 1.1111113e15 + 1.2345677e15j),
                      (1.1 + 0.7j, 0.3 - 2.1j), (0.3 + 0.9j, 2.7 - 0.4j)]
IN_PLACE_PAIRS = [("complex128", "complex64"), ("complex128", "complex128"), ("complex64", "complex64"),
                  ("float64", "float32"), ("float64", "float64"), ("float32", "float32")]


def _values(shape, value, dtype) -> np.ndarray:
    """Multiples of ``value`` (a real factor keeps a product's cancellation) of ``shape`` and ``dtype``."""
    return (value * (1 + 0.0137 * np.arange(math.prod(shape)))).reshape(shape).astype(dtype)


def _layouts(value, dtype):
    """Makers of fresh tensors of multiples of ``value``: one element (0-D, 1-D, 2-D), several, strided,
    reversed."""
    def full(shape):
        return lambda: xp.asarray(_values(shape, value, dtype), device=DEVICE)
    return [full(()), full((1,)), full((1, 1)), full((5,)), full((2, 3)),
            lambda: full((10,))()[::2], lambda: xp.flip(full((2, 3))())]


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert to_np(a).tobytes() == to_np(b).tobytes(), (to_np(a), to_np(b))


@pytest.mark.parametrize("d1, d2", IN_PLACE_PAIRS, ids=[f"{a}-{b}" for a, b in IN_PLACE_PAIRS])
@pytest.mark.parametrize("dunder", ["add", "sub", "mul", "truediv", "pow"])
def test_in_place_operators_round_as_the_function(dunder, d1, d2):
    """x1 op= x2 gives the bits of x1 op x2 for every shape and layout of x1, x2 of another dtype or the
    same tensor (NumPy picked another inner loop in place for one complex element or a reversed x1: a
    complex product without fused multiply-add, libm's power instead of the SIMD one)."""
    d1, d2 = getattr(xp, d1), getattr(xp, d2)
    if supported([d1, d2]) != [d1, d2]:
        pytest.skip(f"{DEVICE} lacks {d1.name} or {d2.name}")
    func = getattr(xp, ARITHMETIC[dunder])
    iop = opfn(f"i{dunder}")
    for a, b in ROUNDING_SENSITIVE:
        if d1.kind != "c":
            a, b = a.real, b.imag
        for make in _layouts(a, d1):
            x1 = make()

            def second():
                return xp.asarray(np.flip(_values(x1.shape, b, d2)), device=DEVICE)
            for x2 in (second(), xp.asarray(np.asarray(b, d2), device=DEVICE)):
                expected = func(x1, x2)
                r = make()
                assert iop(r, x2) is r
                _same_bits(r, expected)
            if d2 == d1:  # out= the second operand
                x2 = second()
                _same_bits(func(x1, x2, out=x2), func(x1, second()))
            # x op= x: the same tensor as both operands
            expected = func(x1, x1)
            r = make()
            _same_bits(iop(r, r), expected)


def test_out_an_input_rounds_as_a_fresh_result():
    """A unary function with out= its input (one complex element; a reversed view) gives the bits of a
    fresh result."""
    cases = [(xp.square, lambda: xp.asarray(np.asarray(1.0000001e15 + 0.9999999e15j, np.complex64), device=DEVICE)),
             (xp.log1p, lambda: xp.flip(xp.asarray(np.linspace(0.1, 0.9, 64, dtype=np.float32), device=DEVICE)))]
    for f, make in cases:
        x = make()
        _same_bits(f(x, out=x), f(make()))


def test_in_place_with_python_scalars():
    x = xp.asarray([1.0, 2.0, 3.0], device=DEVICE)
    x += 1
    x *= 2.5
    x -= 0.5
    x /= 2
    x **= 2
    x //= 1.0
    x %= 7
    np.testing.assert_array_equal(to_np(x), [((((v + 1) * 2.5 - 0.5) / 2) ** 2 // 1.0) % 7 for v in (1, 2, 3)])
    i = xp.asarray([1, 2, 12], dtype=xp.uint8, device=DEVICE)
    i <<= 2
    i >>= 1
    i &= 0xF
    i |= 1
    i ^= 2
    np.testing.assert_array_equal(to_np(i), [(((v << 2) >> 1) & 0xF | 1) ^ 2 for v in (1, 2, 12)])
    with pytest.raises(TypeError):
        i += 1.5  # the result would be floating-point
    f = xp.asarray([1.0], dtype=xp.float32, device=DEVICE)
    with pytest.raises(TypeError):
        f += 1j  # the result would be complex
    np.testing.assert_array_equal(to_np(f), [1.0])


@pytest.mark.parametrize("dunder, func", list(UNARY.items()), ids=list(UNARY))
@given(data=st.data())
def test_unary_operators(dunder, func, data):
    op = OPS_BY_NAME[func]
    t, _ = data.draw(tensors(accepted(op)))
    same(opfn(dunder)(t), getattr(xp, func)(t))


def test_matmul_operators():
    a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=DEVICE)
    b = xp.asarray([[0.5, -1.0], [2.0, 0.0]], device=DEVICE)
    np.testing.assert_array_equal(to_np(a @ b), to_np(a) @ to_np(b))
    expected = to_np(a) @ to_np(b)
    a @= b
    np.testing.assert_array_equal(to_np(a), expected)
    with pytest.raises(TypeError):
        a @ 2
    with pytest.raises(TypeError):
        2 @ a


def test_operators_reject_other_types():
    t = xp.asarray([1.0, 2.0], device=DEVICE)
    for other in ([1, 2], "a", None, object()):
        with pytest.raises(TypeError):
            t + other
        with pytest.raises(TypeError):
            other * t
        with pytest.raises(TypeError):
            t < other
    b = xp.asarray([True], device=DEVICE)
    # a Python int with a bool array counts as NumPy's (tests/test_promotion_numpy.py); -b stays refused
    assert (b + 1).dtype == xp.__array_namespace_info__().default_dtypes(device=DEVICE)["integral"]
    with pytest.raises(TypeError):
        -b
    with pytest.raises(TypeError):
        ~t
    assert (t == "a") is False  # equality with foreign objects falls back to identity



def test_operators_hand_unknown_operands_to_their_reflection():
    # NotImplemented for an operand that is no array or scalar, so that its own reflected operator runs
    t = xp.asarray([1.0, 2.0], device=DEVICE)

    class Other:
        def __radd__(self, other):
            return "radd", other

        def __gt__(self, other):
            return "gt", other

    o = Other()
    assert t + o == ("radd", t) and (t < o) == ("gt", t)
    assert t.__add__("a") is NotImplemented and t.__rmul__(None) is NotImplemented
    np.testing.assert_array_equal(to_np(t.__rsub__(1.0)), [0.0, -1.0])
    np.testing.assert_array_equal(to_np(t.__rtruediv__(2.0)), [2.0, 1.0])
    np.testing.assert_array_equal(to_np(t.__rpow__(2)), [2.0, 4.0])
    with pytest.raises(TypeError):
        pow(t, 2, 3)  # no modulus
    with pytest.raises(OverflowError, match="^add: the Python int 1000 does not fit in int8"):
        xp.asarray([1], dtype=xp.int8, device=DEVICE) + 1000
    with pytest.raises(ValueError, match="^matmul: contracted dimensions differ"):
        t @ xp.asarray([1.0, 2.0, 3.0], device=DEVICE)
    with pytest.raises(TypeError, match="^negative: bool is not accepted"):
        -xp.asarray([True], device=DEVICE)
    u = t
    for bad in ("a", None, [1.0]):  # an in-place operator on an unknown operand: a TypeError, t unchanged
        with pytest.raises(TypeError):
            u += bad
        with pytest.raises(TypeError):
            u *= bad
        assert u is t
    u += o  # the in-place operator falls back to the binary one, whose reflection runs
    assert u == ("radd", t)
    np.testing.assert_array_equal(to_np(t), [1.0, 2.0])

def test_numpy_scalars_do_not_hijack_operators():
    """A NumPy scalar beside a tensor never turns the result into a numpy.ndarray."""
    t = xp.asarray([1.0, 2.0], device=DEVICE)
    for r in (lambda: np.float64(2) + t, lambda: t + np.float64(2), lambda: np.float64(2) < t):
        try:
            out = r()
        except TypeError:
            continue
        assert type(out) is xp.Tensor


# --- conversions to Python scalars ------------------------------------------------------------------

@given(tensors(ALL, shape=()))
def test_scalar_conversions(ta):
    t, a = ta
    v = a.item()
    kind = t.dtype.kind
    assert bool(t) == bool(v)
    if kind == "c":
        assert complex(t) == v or (math.isnan(v.real) or math.isnan(v.imag))
        with pytest.raises(TypeError):
            int(t)
        with pytest.raises(TypeError):
            float(t)
    else:
        f = float(t)
        assert type(f) is float
        assert f == float(v) or (math.isnan(f) and math.isnan(v))
        if kind == "f" and math.isnan(v):
            with pytest.raises(ValueError):
                int(t)
        elif kind == "f" and math.isinf(v):
            with pytest.raises(OverflowError):
                int(t)
        else:
            i = int(t)
            assert type(i) is int and i == int(v)
        c = complex(t)
        assert type(c) is complex
    if kind in ("i", "u"):
        assert operator.index(t) == v
        if -5 <= v < 5:
            assert [0, 1, 2, 3, 4][t] == v % 5  # usable as a Python index
    else:
        with pytest.raises(TypeError):
            operator.index(t)


def test_scalar_conversions_need_0d():
    t = xp.asarray([1.0], device=DEVICE)
    for conv in (bool, int, float, complex, operator.index):
        with pytest.raises(TypeError):
            conv(xp.asarray([1, 2], device=DEVICE))
    assert float(t[0]) == 1.0
    assert int(xp.asarray(True, device=DEVICE)) == 1
    assert complex(xp.asarray(2, device=DEVICE)) == 2 + 0j
    assert math.copysign(1, float(xp.asarray(-0.0, device=DEVICE))) == -1


# --- __array__, DLPack ----------------------------------------------------------------------------

@given(tensors(ALL))
def test_array_protocol(ta):
    t, a = ta
    if DEV.kind != "cpu":
        with pytest.raises(TypeError):
            np.asarray(t)
        return
    np.testing.assert_array_equal(np.asarray(t), a)
    c = np.array(t, copy=True)
    np.testing.assert_array_equal(c, a)
    if a.size:
        c.reshape(-1)[0] = c.reshape(-1)[-1]  # a copy never writes back
        np.testing.assert_array_equal(to_np(t), a)
    if t.dtype.kind != "c":
        np.testing.assert_array_equal(np.asarray(t, dtype=np.complex128), a.astype(np.complex128))


def test_array_protocol_copy_false_dtype_change():
    if DEV.kind != "cpu":
        pytest.skip("implicit conversion is CPU-only")
    t = xp.asarray([1, 2], dtype=xp.int32, device=DEVICE)
    with pytest.raises(ValueError):
        t.__array__(dtype=np.float64, copy=False)
    assert t.__array__(copy=False).dtype == np.int32


@given(tensors(ALL))
def test_dlpack_roundtrip_with_numpy(ta):
    t, a = ta
    if DEV.kind != "cpu":
        cpu = np.from_dlpack(t, device="cpu", copy=True)
        np.testing.assert_array_equal(cpu, a)
        return
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)
    assert b.shape == a.shape and b.dtype == a.dtype
    np.testing.assert_array_equal(b, a)
    c = np.from_dlpack(t, copy=True)
    np.testing.assert_array_equal(c, a)
    back = xp.asarray(np.from_dlpack(t), device=DEVICE)
    assert back.dtype == t.dtype
    np.testing.assert_array_equal(to_np(back), a)


def test_dlpack_shares_memory_on_cpu():
    if DEV.kind != "cpu":
        pytest.skip("sharing with NumPy needs host memory")
    t = xp.asarray([1.0, 2.0, 3.0], device=DEVICE)
    b = np.from_dlpack(t)
    t[0] = 10.0
    assert b[0] == 10.0
    v = xp.asarray(np.arange(12.0).reshape(3, 4), device=DEVICE)[::2, ::-1]  # a strided, reversed view
    np.testing.assert_array_equal(np.from_dlpack(v), np.arange(12.0).reshape(3, 4)[::2, ::-1])
    c = np.from_dlpack(t, copy=True)
    t[1] = -1.0
    assert c[1] == 2.0


# --- attributes, repr, len, T, mT -------------------------------------------------------------------

@given(tensors(ALL))
def test_attributes(ta):
    t, a = ta
    assert t.shape == a.shape and type(t.shape) is tuple
    assert t.ndim == a.ndim and t.size == a.size
    assert t.dtype in ALL and t.dtype == a.dtype
    assert t.device == DEV and t.device == DEVICE
    if a.ndim:
        assert len(t) == a.shape[0]
    else:
        with pytest.raises(TypeError):
            len(t)
    if a.ndim == 2:
        np.testing.assert_array_equal(to_np(t.T), a.T)
    else:
        with pytest.raises(ValueError):
            t.T
    if a.ndim >= 2:
        np.testing.assert_array_equal(to_np(t.mT), np.swapaxes(a, -1, -2))
    else:
        with pytest.raises(ValueError):
            t.mT
    r = repr(t)
    assert r.startswith("Tensor(") and t.dtype.name in r
    assert str(t) == r
    with pytest.raises(TypeError):
        hash(t)


def test_repr():
    defaults = xp.__array_namespace_info__().default_dtypes(device=DEVICE)
    i, f = defaults["integral"].name, defaults["real floating"].name
    assert repr(xp.asarray(3, device=DEVICE)).startswith(f"Tensor(3, dtype={i}")
    assert repr(xp.asarray([1.5, 2.0], device=DEVICE)).startswith(f"Tensor([1.5, 2. ], dtype={f}")
    assert repr(xp.zeros((0, 3), device=DEVICE)).startswith(f"Tensor([], shape=(0, 3), dtype={f}")
    assert repr(xp.asarray([True], device=DEVICE)).startswith("Tensor([ True], dtype=bool")
    if DEV.kind != "cpu":
        assert f"device={DEV}" in repr(xp.asarray(1, device=DEVICE))


def test_to_device():
    t = xp.asarray([1, 2], device=DEVICE)
    assert t.to_device(DEVICE) is t
    assert t.to_device(DEV) is t
    c = t.to_device("cpu")
    assert c.device == "cpu" and c.dtype == t.dtype
    np.testing.assert_array_equal(to_np(c), [1, 2])
    z = xp.asarray(2.5, device=DEVICE).to_device("cpu")
    assert z.shape == () and float(z) == 2.5
    for dev in xp.__array_namespace_info__().devices():
        m = t.to_device(dev)
        assert m.device == dev and m.shape == (2,)
        np.testing.assert_array_equal(to_np(m), [1, 2])
    with pytest.raises(ValueError, match="to_device"):
        t.to_device("nosuchdevice")
    with pytest.raises(TypeError, match="to_device"):
        t.to_device(0)


def test_array_namespace():
    t = xp.asarray([1], device=DEVICE)
    assert t.__array_namespace__() is xp
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert t.__array_namespace__(api_version=v) is xp
    for bad in ("2020.10", "2026.12", "latest", 2024):
        with pytest.raises(ValueError, match="__array_namespace__"):
            t.__array_namespace__(api_version=bad)
    assert xp.__array_api_version__ == "2025.12"


def test_iteration_and_hash():
    t = xp.asarray([[1, 2], [3, 4]], device=DEVICE)
    rows = list(t)
    assert len(rows) == 2 and all(r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(to_np(rows[1]), [3, 4])
    with pytest.raises(TypeError):
        iter(xp.asarray(1, device=DEVICE))
    with pytest.raises(TypeError):
        {t}
