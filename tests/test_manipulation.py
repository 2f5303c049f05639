"""Manipulation functions, differentially against NumPy: values, shapes, dtypes, zero-copy views, errors,
and capture/replay of the ones that copy."""

import math

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp

from .helpers import device_data
from .strategies import ALL, BOOL, COMPLEX, DEVICE, INTEGER, NUMERIC, REAL_FLOAT, SIGNED, UNSIGNED, np_arrays, \
    shapes, supported, tensors, to_np, views


def check(t, expected, dtype=None):
    """t is a tensor equal to the NumPy array ``expected`` in shape, dtype and values (NaN equal to NaN)."""
    assert type(t) is xp.Tensor
    expected = device_data(np.asarray(expected))
    assert t.shape == expected.shape
    assert t.dtype == (expected.dtype if dtype is None else dtype)
    np.testing.assert_array_equal(to_np(t), expected)


def arr(values, dtype=None):
    """``values`` on the device (NumPy data in the dtype the device holds it in: float64 as float32 on an
    adapter without shader-f64)."""
    if isinstance(values, np.ndarray):
        values = device_data(values)
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def shares(view, x) -> bool:
    return view._buf is x._buf


def writes_through(view, x, index) -> bool:
    """Writing x (float) at a basic index changes what ``view`` reads: the view is zero-copy."""
    before = to_np(view).copy()
    x[index] = -100.0
    return not np.array_equal(to_np(view), before)


# --- broadcasting -------------------------------------------------------------------------------------------

@given(st.data())
def test_broadcast_to(data):
    x, a = data.draw(tensors(ALL))
    extra = data.draw(st.lists(st.integers(0, 3), max_size=2))
    shape = tuple(extra) + tuple(data.draw(st.integers(0, 3)) if n == 1 else n for n in a.shape)
    out = xp.broadcast_to(x, shape)
    check(out, np.broadcast_to(a, shape))
    assert shares(out, x)


@given(st.data())
def test_broadcast_to_incompatible_raises_value_error(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1, min_side=2))))
    bad = a.shape[:-1] + (a.shape[-1] + 1,)
    with pytest.raises(ValueError, match="broadcast_to"):
        xp.broadcast_to(x, bad)
    with pytest.raises(ValueError, match="broadcast_to"):
        xp.broadcast_to(x, a.shape[1:])  # fewer dimensions than x
    with pytest.raises(ValueError):
        xp.broadcast_to(x, (-1,) + a.shape)


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_side=4), st.sampled_from(supported(ALL)), st.data())
def test_broadcast_arrays(bshapes, dtype, data):
    pairs = [(views(a), a) for a in (data.draw(np_arrays(dtype, s)) for s in bshapes.input_shapes)]
    ts = [data.draw(v) for v, _ in pairs]
    out = xp.broadcast_arrays(*ts)
    assert isinstance(out, tuple) and len(out) == 3
    for o, e, t in zip(out, np.broadcast_arrays(*[a for _, a in pairs]), ts):
        check(o, e)
        assert shares(o, t)
    assert xp.broadcast_arrays() == ()


@given(st.lists(shapes(max_dims=3, max_side=3), max_size=4))
def test_broadcast_shapes(shape_list):
    try:
        expected = np.broadcast_shapes(*shape_list)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast_shapes"):
            xp.broadcast_shapes(*shape_list)
        return
    assert xp.broadcast_shapes(*shape_list) == expected


def test_broadcast_shapes_rejects_non_shapes():
    with pytest.raises(TypeError):
        xp.broadcast_shapes((2, 1.5))
    with pytest.raises(ValueError):
        xp.broadcast_shapes((2, -1))


@given(st.lists(st.integers(0, 4), max_size=3), st.sampled_from(["xy", "ij"]), st.sampled_from(supported(NUMERIC)),
       st.data())
def test_meshgrid(lengths, indexing, dtype, data):
    arrays = [data.draw(np_arrays(dtype, (n,))) for n in lengths]
    ts = [data.draw(views(a)) for a in arrays]
    out = xp.meshgrid(*ts, indexing=indexing)
    assert isinstance(out, tuple)
    expected = np.meshgrid(*arrays, indexing=indexing)
    assert len(out) == len(expected)
    for o, e, t in zip(out, expected, ts):
        check(o, e)
        assert shares(o, t)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="indexing"):
        xp.meshgrid(arr([1, 2]), indexing="xyz")
    with pytest.raises(ValueError, match="1-D"):
        xp.meshgrid(arr([[1, 2]]))
    with pytest.raises(TypeError, match="dtype"):
        xp.meshgrid(arr([1, 2]), arr([1.0]))
    with pytest.raises(TypeError):
        xp.meshgrid([1, 2])


# --- views -------------------------------------------------------------------------------------------------

@given(st.data())
def test_permute_dims_and_matrix_transpose(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1))))
    perm = data.draw(st.permutations(range(a.ndim)))
    axes = tuple(p - a.ndim if data.draw(st.booleans()) else p for p in perm)  # negative axes (2025.12)
    out = xp.permute_dims(x, axes)
    check(out, np.transpose(a, perm))
    assert shares(out, x)
    if a.ndim >= 2:
        mt = xp.matrix_transpose(x)
        check(mt, np.swapaxes(a, -1, -2))
        assert shares(mt, x)
        check(x.mT, np.swapaxes(a, -1, -2))


def test_permute_dims_errors():
    x = arr(np.zeros((2, 3)))
    for bad in [(0,), (0, 0), (0, 1, 2)]:
        with pytest.raises(ValueError, match="permute_dims"):
            xp.permute_dims(x, bad)
    with pytest.raises(IndexError):
        xp.permute_dims(x, (0, 2))
    with pytest.raises(TypeError):
        xp.permute_dims(x, 1)
    with pytest.raises(ValueError, match="matrix_transpose"):
        xp.matrix_transpose(arr([1, 2]))


@given(st.data())
def test_moveaxis(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1))))
    n = a.ndim
    k = data.draw(st.integers(1, n))
    src = data.draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k, unique_by=lambda i: i % n))
    dst = data.draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k, unique_by=lambda i: i % n))
    if k == 1 and data.draw(st.booleans()):
        src, dst = src[0], dst[0]
    else:
        src, dst = tuple(src), tuple(dst)
    out = xp.moveaxis(x, src, dst)
    check(out, np.moveaxis(a, src, dst))
    assert shares(out, x)


def test_moveaxis_errors():
    x = arr(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 1), (0,))
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 0), (1, 2))
    with pytest.raises(IndexError):
        xp.moveaxis(x, 3, 0)


@given(st.data())
def test_expand_dims_int(data):
    x, a = data.draw(tensors(ALL))
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    out = xp.expand_dims(x, axis=axis)
    check(out, np.expand_dims(a, axis))
    assert shares(out, x)


@given(st.data())
def test_expand_dims_tuple(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(max_dims=3))))
    k = data.draw(st.integers(0, 3))
    m = a.ndim + k
    axes = tuple(data.draw(st.lists(st.integers(-m, m - 1), min_size=k, max_size=k, unique_by=lambda i: i % m))
                 if k else ())
    out = xp.expand_dims(x, axis=axes)
    check(out, np.expand_dims(a, axes))
    assert shares(out, x)


def test_expand_dims_errors():
    x = arr(np.zeros((2, 3)))
    for bad in (3, -4, (0, 4), (-5,)):
        with pytest.raises(IndexError, match="expand_dims"):
            xp.expand_dims(x, axis=bad)
    with pytest.raises(ValueError, match="expand_dims"):
        xp.expand_dims(x, axis=(1, -3))  # both name position 1 of the 4-D result
    with pytest.raises(TypeError):
        xp.expand_dims(x, axis=1.0)


@given(st.data())
def test_squeeze(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=3))
    assume(1 in shape)
    x, a = data.draw(tensors(ALL, shape=shape))
    ones = [i for i, n in enumerate(shape) if n == 1]
    axes = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    axes = [i - len(shape) if data.draw(st.booleans()) else i for i in axes]
    axis = axes[0] if len(axes) == 1 and data.draw(st.booleans()) else tuple(axes)
    out = xp.squeeze(x, axis)
    check(out, np.squeeze(a, axis))
    assert shares(out, x)


def test_squeeze_errors():
    x = arr(np.zeros((1, 3, 1)))
    with pytest.raises(ValueError, match="squeeze"):
        xp.squeeze(x, 1)
    with pytest.raises(ValueError):
        xp.squeeze(x, (0, 1))
    with pytest.raises(IndexError):
        xp.squeeze(x, 3)
    with pytest.raises(ValueError):
        xp.squeeze(x, (0, -3))  # repeated
    with pytest.raises(TypeError):
        xp.squeeze(x, None)
    check(xp.squeeze(x, ()), np.zeros((1, 3, 1)))


@given(st.data())
def test_flip(data):
    x, a = data.draw(tensors(ALL))
    n = a.ndim
    axis = data.draw(st.none() | (st.integers(-n, n - 1) if n else st.none())
                     | st.lists(st.integers(0, max(n - 1, 0)), unique=True, max_size=n).map(tuple))
    out = xp.flip(x, axis=axis) if axis is not None or data.draw(st.booleans()) else xp.flip(x)
    check(out, np.flip(a, axis))
    assert shares(out, x)
    # the negative-stride view composes with other views and with copies
    if n:
        check(xp.flip(out, axis=axis), a)
        check(xp.reshape(out, (-1,)), np.flip(a, axis).reshape(-1))


def test_flip_writes_through_and_errors():
    x = arr(np.arange(6.0).reshape(2, 3))
    f = xp.flip(x, axis=1)
    assert f.strides == (3, -1)
    x[0, 2] = 10.0
    assert float(f[0, 0]) == 10.0
    f[1, 0] = -1.0  # writing the view writes x
    assert float(x[1, 2]) == -1.0
    with pytest.raises(IndexError):
        xp.flip(x, axis=2)
    with pytest.raises(ValueError):
        xp.flip(x, axis=(0, -2))


@given(st.data())
def test_unstack(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1))))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    out = xp.unstack(x, axis=axis)
    assert isinstance(out, tuple) and len(out) == a.shape[axis]
    for i, o in enumerate(out):
        check(o, np.take(a, i, axis=axis))
        assert shares(o, x)
    with pytest.raises(IndexError):
        xp.unstack(x, axis=a.ndim)


def test_view_functions_write_through():
    x = arr(np.arange(12.0).reshape(3, 4))
    assert writes_through(xp.broadcast_to(x[0], (2, 4)), x, (0, 1))
    assert writes_through(xp.expand_dims(x, axis=(0, 3)), x, (1, 1))
    assert writes_through(xp.squeeze(x[:1], 0), x, (0, 3))
    assert writes_through(xp.permute_dims(x, (1, 0)), x, (2, 2))
    assert writes_through(xp.reshape(x, (2, 6)), x, (2, 3))
    assert writes_through(xp.unstack(x, axis=1)[2], x, (1, 2))
    assert writes_through(xp.meshgrid(x[0], x[1])[1], x, (1, 0))
    assert writes_through(xp.moveaxis(x, 0, 1), x, (0, 0))


# --- reshape -----------------------------------------------------------------------------------------------

@st.composite
def same_size_shapes(draw, shape):
    """Shapes of as many elements as ``shape``, one entry possibly -1."""
    size = math.prod(shape)
    ndim = draw(st.integers(0 if size == 1 else 1, 4))
    if size == 0:
        out = list(draw(hnp.array_shapes(min_dims=max(ndim, 1), max_dims=max(ndim, 1), min_side=0, max_side=4)))
        out[draw(st.integers(0, len(out) - 1))] = 0
        return tuple(out)
    out = [1] * ndim
    n = size
    p = 2
    while n > 1:  # spread the prime factors of size over the dimensions
        while n % p == 0:
            if ndim:
                out[draw(st.integers(0, ndim - 1))] *= p
            n //= p
        p += 1
    if ndim and draw(st.booleans()):
        out[draw(st.integers(0, ndim - 1))] = -1
    return tuple(out)


# a view built the same way on a NumPy array and on a tensor
view_ops = st.lists(st.sampled_from(["T", "flip", "step", "slice1", "expand"]), max_size=3)


def apply_view_ops(obj, ops, lib):
    for op in ops:
        if obj.ndim == 0:
            break
        if op == "T":
            obj = lib.permute_dims(obj, tuple(reversed(range(obj.ndim)))) if lib is xp else obj.T
        elif op == "flip":
            obj = lib.flip(obj, axis=0)
        elif op == "step":
            obj = obj[..., ::2]
        elif op == "slice1":
            obj = obj[1:]
        elif op == "expand":
            obj = lib.expand_dims(obj, axis=0)
    return obj


@given(st.data())
def test_reshape_matches_numpy_views_and_copies(data):
    dtype = data.draw(st.sampled_from(supported(ALL)))
    base = data.draw(np_arrays(dtype, data.draw(shapes(min_dims=1, max_side=6))))
    ops = data.draw(view_ops)
    a = apply_view_ops(base, ops, np)
    x = apply_view_ops(xp.asarray(base, device=DEVICE), ops, xp)
    shape = data.draw(same_size_shapes(a.shape))
    copy = data.draw(st.sampled_from([None, True, False]))
    try:
        expected = np.reshape(a, shape, copy=copy)
    except ValueError:
        assert copy is False
        with pytest.raises(ValueError, match="copy=False"):
            xp.reshape(x, shape, copy=False)
        return
    out = xp.reshape(x, shape, copy=copy)
    check(out, expected)
    # a view exactly where NumPy makes one (and never with copy=True)
    assert shares(out, x) == np.shares_memory(expected, a) or a.size == 0
    if copy:
        assert not shares(out, x)


def test_reshape_errors():
    x = arr(np.arange(6))
    for bad in [(4,), (-1, -1), (-2, 3), (0, -1), (4, -1)]:
        with pytest.raises(ValueError, match="reshape"):
            xp.reshape(x, bad)
    with pytest.raises(TypeError):
        xp.reshape(x, (2.0, 3))
    with pytest.raises(ValueError, match="copy"):
        xp.reshape(x, (2, 3), copy="yes")
    check(xp.reshape(arr(np.zeros((0, 3))), (3, 0, 5)), np.zeros((3, 0, 5)))
    check(xp.reshape(arr(5), (1, 1)), np.full((1, 1), 5))


# --- joining -----------------------------------------------------------------------------------------------

families = st.sampled_from([f for f in (BOOL, SIGNED, UNSIGNED, INTEGER, REAL_FLOAT, COMPLEX, REAL_FLOAT + COMPLEX)
                            if supported(f)])


def no_subnormals(a: np.ndarray) -> np.ndarray:
    """``a`` with subnormal floats zeroed: CuPy's dtype-changing copies flush them (a backend property, not
    what concat and stack are tested for)."""
    if a.dtype.kind in "fc":
        a = a.copy()
        parts = [a.real, a.imag] if a.dtype.kind == "c" else [a]
        for p in parts:
            p[(p != 0) & (np.abs(p) < np.finfo(p.dtype).tiny)] = 0
    return a


def promoted(dtypes):
    r = dtypes[0]
    for d in dtypes[1:]:
        r = xp.result_type(r, d)
        if r is None:
            return None
    return r


@given(st.data())
def test_concat(data):
    family = data.draw(families)
    k = data.draw(st.integers(1, 3))
    dtypes = [data.draw(st.sampled_from(supported(family))) for _ in range(k)]
    base = data.draw(shapes(max_dims=3))
    axis = data.draw(st.none() | (st.integers(-len(base), len(base) - 1) if base else st.none()))
    arrays = []
    for d in dtypes:
        s = data.draw(shapes(max_dims=3)) if axis is None else \
            base[:axis % len(base)] + (data.draw(st.integers(0, 3)),) + base[axis % len(base) + 1:]
        arrays.append(no_subnormals(data.draw(np_arrays(d, s))))
    ts = [data.draw(views(a)) for a in arrays]
    result = promoted(dtypes)
    if result is None or not supported([result]):  # (no promotion, or to int64 on a device without it)
        with pytest.raises(TypeError, match="concat"):
            xp.concat(ts, axis=axis)
        return
    out = xp.concat(ts, axis=axis) if axis != 0 or data.draw(st.booleans()) else xp.concat(ts)
    if axis is None:
        expected = np.concatenate([a.reshape(-1).astype(result) for a in arrays])
    else:
        expected = np.concatenate([a.astype(result) for a in arrays], axis=axis)
    check(out, expected, result)
    assert all(not shares(out, t) for t in ts)


def test_concat_errors():
    a, b = arr(np.zeros((2, 3))), arr(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="concat"):
        xp.concat([a, b], axis=0)
    check(xp.concat((a, b), axis=1), np.zeros((2, 7)))
    with pytest.raises(ValueError):
        xp.concat([a, arr(np.zeros(3))])
    with pytest.raises(ValueError):
        xp.concat([])
    with pytest.raises(ValueError):
        xp.concat([arr(1.0)], axis=0)
    check(xp.concat([arr(1.0), arr([2.0, 3.0])], axis=None), [1.0, 2.0, 3.0])
    with pytest.raises(IndexError):
        xp.concat([a, a], axis=2)
    # a bool and a float array concatenate as in NumPy (the standard leaves mixed kinds open)
    b = arr([[True, False, True]])
    np.testing.assert_array_equal(to_np(xp.concat([a, b])), np.concatenate([to_np(a), to_np(b)]))
    with pytest.raises(TypeError):
        xp.concat(a)


@given(st.data())
def test_stack(data):
    family = data.draw(families)
    k = data.draw(st.integers(1, 3))
    dtypes = [data.draw(st.sampled_from(supported(family))) for _ in range(k)]
    shape = data.draw(shapes(max_dims=3))
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    arrays = [no_subnormals(data.draw(np_arrays(d, shape))) for d in dtypes]
    ts = [data.draw(views(a)) for a in arrays]
    result = promoted(dtypes)
    if result is None or not supported([result]):  # (no promotion, or to int64 on a device without it)
        with pytest.raises(TypeError, match="stack"):
            xp.stack(ts, axis=axis)
        return
    check(xp.stack(ts, axis=axis), np.stack([a.astype(result) for a in arrays], axis=axis), result)


def test_stack_errors():
    with pytest.raises(ValueError, match="stack"):
        xp.stack([arr([1, 2]), arr([1, 2, 3])])
    with pytest.raises(IndexError):
        xp.stack([arr([1, 2])], axis=2)
    check(xp.stack([arr(1), arr(2)]), [1, 2])


# --- repeat, tile, roll -------------------------------------------------------------------------------------

@given(st.data())
def test_repeat(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(max_dims=3))))
    axis = data.draw(st.none() | (st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    n = a.size if axis is None else a.shape[axis]
    kind = data.draw(st.sampled_from(["int", "array1", "array"]))
    if kind == "int":
        r = data.draw(st.integers(0, 3))
        rep, rep_np = r, r
    else:
        rdtype = data.draw(st.sampled_from(supported(INTEGER)))
        rep_np = data.draw(np_arrays(rdtype, (1,) if kind == "array1" else (n,), st.integers(0, 3)))
        rep = data.draw(views(rep_np))
    out = xp.repeat(x, rep, axis=axis) if axis is not None or data.draw(st.booleans()) else xp.repeat(x, rep)
    check(out, np.repeat(a, rep_np.astype(np.int64) if kind != "int" else rep_np, axis=axis))


def test_repeat_errors():
    x = arr(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, -1)
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, arr([1, -1, 2]), axis=1)
    with pytest.raises(ValueError, match="repeat"):
        xp.repeat(x, arr([1, 2]), axis=1)
    with pytest.raises(TypeError):
        xp.repeat(x, arr([1.0, 2.0]), axis=0)
    with pytest.raises(TypeError):
        xp.repeat(x, 2.0)
    with pytest.raises(IndexError):
        xp.repeat(x, 2, axis=2)


@given(st.data())
def test_tile(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(max_dims=3, max_side=3))))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    check(xp.tile(x, reps), np.tile(a, reps))


def test_tile_errors():
    with pytest.raises(ValueError):
        xp.tile(arr([1, 2]), (-1,))
    with pytest.raises(TypeError):
        xp.tile(arr([1, 2]), 2)


@given(st.data())
def test_roll(data):
    x, a = data.draw(tensors(ALL))
    n = a.ndim
    big = st.integers(-50, 50)
    if n and data.draw(st.booleans()):
        axis = tuple(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))  # repeats add up
        shift = data.draw(big | st.lists(big, min_size=len(axis), max_size=len(axis)).map(tuple))
        if len(axis) == 1 and data.draw(st.booleans()):
            axis = axis[0]
            shift = shift[0] if isinstance(shift, tuple) else shift
    else:
        axis, shift = None, data.draw(big)
    out = xp.roll(x, shift, axis=axis)
    check(out, np.roll(a, shift, axis=axis))
    assert not shares(out, x)


def test_roll_errors():
    x = arr(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError):
        xp.roll(x, (1, 2))
    with pytest.raises(ValueError):
        xp.roll(x, (1, 2), axis=(0,))
    with pytest.raises(IndexError):
        xp.roll(x, 1, axis=2)
    with pytest.raises(TypeError):
        xp.roll(x, 1.5)


# --- argument and device checks -----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: xp.reshape(np.zeros(3), (3,)), lambda: xp.flip([1, 2]), lambda: xp.squeeze(np.zeros(1), 0),
    lambda: xp.expand_dims([1], axis=0), lambda: xp.broadcast_to(1, (2,)), lambda: xp.roll([1], 1),
    lambda: xp.tile([1], (2,)), lambda: xp.repeat([1], 2), lambda: xp.unstack([1]),
    lambda: xp.moveaxis([1], 0, 0), lambda: xp.stack([[1]]), lambda: xp.concat([np.zeros(2)]),
])
def test_non_arrays_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_mixed_devices_raise_value_error(fake_backend):
    a = arr([1.0, 2.0])
    b = xp.asarray([3.0], device="fake:0")
    for call in (lambda: xp.concat([a, b]), lambda: xp.stack([a, b[:1]]), lambda: xp.broadcast_arrays(a, b),
                 lambda: xp.meshgrid(a, b), lambda: xp.repeat(a, xp.asarray([1, 2], device="fake:0"))):
        with pytest.raises(ValueError, match="device"):
            call()


# --- capture -----------------------------------------------------------------------------------------------

def test_copying_functions_capture_and_replay():
    x = arr(np.arange(6.0).reshape(2, 3))
    y = arr(np.arange(3.0))
    with xp.capture(device=DEVICE) as g:
        outs = {
            "concat": xp.concat([x, xp.flip(x, axis=0)], axis=1),
            "concat_none": xp.concat([x, y], axis=None),
            "stack": xp.stack([x[0], y], axis=-1),
            "tile": xp.tile(x, (2, 1, 2)),
            "repeat": xp.repeat(x, 2, axis=0),
            "roll": xp.roll(x, (1, -1), axis=(0, 1)),
            "reshape": xp.reshape(x.mT, (6,)),
            "view": xp.expand_dims(xp.permute_dims(x, (1, 0)), axis=0),
        }
    def expected(a, b):
        return {
            "concat": np.concatenate([a, a[::-1]], axis=1),
            "concat_none": np.concatenate([a.ravel(), b]),
            "stack": np.stack([a[0], b], axis=-1),
            "tile": np.tile(a, (2, 1, 2)),
            "repeat": np.repeat(a, 2, axis=0),
            "roll": np.roll(a, (1, -1), axis=(0, 1)),
            "reshape": a.T.reshape(6),
            "view": a.T[None],
        }
    for k, v in expected(np.arange(6.0).reshape(2, 3), np.arange(3.0)).items():
        check(outs[k], v)
    a2, b2 = np.arange(6.0).reshape(2, 3) * 10 - 7, np.array([5.0, -1.0, 2.0])
    x[...] = arr(a2)
    y[...] = arr(b2)
    g.replay()
    for k, v in expected(a2, b2).items():
        check(outs[k], v)


def test_repeat_by_an_array_cannot_be_captured():
    x = arr([1, 2])
    with pytest.raises(xp.CaptureError, match="repeat"):
        with xp.capture(device=DEVICE):
            xp.repeat(x, arr([1, 2]))
    check(xp.repeat(x, arr([1, 2])), [1, 2, 2])
