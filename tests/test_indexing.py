"""__getitem__/__setitem__, take and take_along_axis, differentially against NumPy: basic views (zero-copy),
integer-array and boolean-mask indexing, writes, errors, and what can be captured."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import numr_array as xp

from .helpers import defaults, device_data
from .strategies import ALL, DEVICE, INTEGER, np_arrays, shapes, supported, tensors, to_np, views


def check(t, expected):
    """t is a tensor equal to the NumPy array ``expected`` in shape, dtype and values (NaN equal to NaN)."""
    assert type(t) is xp.Tensor
    expected = device_data(np.asarray(expected))
    assert t.shape == expected.shape
    assert t.dtype == expected.dtype
    np.testing.assert_array_equal(to_np(t), expected)


def arr(values, dtype=None):
    """``values`` on the device (NumPy data in the dtype the device holds it in: float64 as float32 on an
    adapter without shader-f64)."""
    if isinstance(values, np.ndarray):
        values = device_data(values)
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def scalar_of(a: np.ndarray):
    """A Python scalar the standard lets combine with ``a``'s dtype."""
    return {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1.5 - 2j}[a.dtype.kind]


@st.composite
def value_shapes(draw, target):
    """Shapes that broadcast to ``target`` (trailing axes of it, some of them 1)."""
    k = draw(st.integers(0, len(target)))
    return tuple(1 if draw(st.booleans()) else n for n in target[len(target) - k:])


# --- basic indexing ----------------------------------------------------------------------------------------

@given(st.data())
def test_basic_getitem_is_a_view(data):
    x, a = data.draw(tensors(ALL))
    key = data.draw(hnp.basic_indices(a.shape, allow_newaxis=True, allow_ellipsis=True))
    out = x[key]
    check(out, a[key])
    assert out._buf is x._buf


@given(st.data())
def test_negative_steps(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1, max_dims=2, max_side=6))))
    n = a.shape[0]
    key = slice(data.draw(st.none() | st.integers(-n, n)), data.draw(st.none() | st.integers(-n - 1, max(n - 1, 0))),
                data.draw(st.integers(-3, -1)))
    check(x[key], a[key])
    check(x[key][::-1], a[key][::-1])


@given(st.data())
def test_basic_setitem(data):
    x, a = data.draw(tensors(ALL))
    key = data.draw(hnp.basic_indices(a.shape, allow_newaxis=True, allow_ellipsis=True))
    target = a[key].shape if isinstance(a[key], np.ndarray) else ()
    if data.draw(st.booleans()):
        value = scalar_of(a)
        expected = a.copy()
        expected[key] = value
    else:
        vshape = data.draw(value_shapes(target))
        v = data.draw(np_arrays(x.dtype, vshape))
        value = data.draw(views(v))
        expected = a.copy()
        expected[key] = v
    x[key] = value
    check(x, expected)


def test_zero_dimensional_arrays():
    x = arr(5.0)
    for key in [(), ..., None, (None, ...), (..., None)]:
        out = x[key]
        check(out, np.asarray(np.asarray(5.0)[key]))
        assert out._buf is x._buf
    x[()] = 7.0
    assert float(x) == 7.0
    x[...] = arr(8.0)
    assert float(x) == 8.0
    assert [float(t) for t in arr([1.0, 2.0])] == [1.0, 2.0]


def test_empty_views_and_writes():
    x = arr(np.zeros((0, 3)))
    check(x[..., ::-1], np.zeros((0, 3)))
    check(x[:, 1], np.zeros(0))
    y = arr(np.zeros((3, 0)))
    check(y[2], np.zeros(0))
    y[1] = 5.0  # nothing to write
    x[:, ::-1] = arr(np.ones(3))
    check(x, np.zeros((0, 3)))


# --- integer-array indexing --------------------------------------------------------------------------------

@st.composite
def mixed_keys(draw, shape, allow_lists=True):
    """(numr key, NumPy key) mixing ints, slices, None and integer arrays (at least one) of any integer
    dtype, as NumPy's vectorized indexing defines it."""
    kinds = [draw(st.sampled_from(["int", "slice", "array", "array"])) for _ in shape]
    if "array" not in kinds:
        kinds[draw(st.integers(0, len(shape) - 1))] = "array"
    n_arrays = kinds.count("array")
    bshapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_arrays, max_dims=2, max_side=3)).input_shapes
    ours, theirs = [], []
    j = 0
    for kind, n in zip(kinds, shape):
        if draw(st.booleans()) and draw(st.booleans()):
            ours.append(None)
            theirs.append(None)
        if kind == "int":
            i = draw(st.integers(-n, n - 1))
            ours.append(i)
            theirs.append(i)
        elif kind == "slice":
            k = draw(st.slices(n))
            ours.append(k)
            theirs.append(k)
        else:
            s = bshapes[j]
            j += 1
            dtype = draw(st.sampled_from(supported(INTEGER)))
            lo = 0 if dtype.kind == "u" else -n
            a = draw(np_arrays(dtype, s, st.integers(lo, n - 1)))
            if allow_lists and a.ndim and draw(st.integers(0, 4)) == 0:
                ours.append(a.astype(np.int64).tolist())
            else:
                ours.append(draw(views(a)))
            theirs.append(a)
    if draw(st.booleans()):
        ours.append(...)
        theirs.append(...)
    return tuple(ours), tuple(theirs)


def nonempty_shapes(max_dims=3):
    return shapes(min_dims=1, max_dims=max_dims, min_side=1, max_side=4)


@given(st.data())
def test_integer_array_getitem(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(nonempty_shapes())))
    key, np_key = data.draw(mixed_keys(a.shape))
    out = x[key]
    check(out, a[np_key])
    assert out._buf is not x._buf


@given(st.data())
def test_integer_arrays_only(data):
    """The standard's integer-array indexing: a tuple of ints and integer arrays, one per axis."""
    x, a = data.draw(tensors(ALL, shape=data.draw(nonempty_shapes(4))))
    np_key = data.draw(hnp.integer_array_indices(a.shape, result_shape=shapes(max_dims=3, max_side=3),
                                                 dtype=defaults()["indexing"]))
    key = tuple(data.draw(views(k)) for k in np_key)
    check(x[key], a[np_key])


def test_zero_d_integer_arrays_equal_ints():
    a = np.arange(24).reshape(2, 3, 4)
    x = arr(a)
    i, j = arr(1), arr(-2, dtype=xp.int8)
    check(x[i, j], a[1, -2])
    check(x[i], a[1])
    check(x[1, j, 3], a[1, -2, 3])
    check(x[i, :, j], a[1, :, -2])


@given(st.data())
def test_integer_array_setitem(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(nonempty_shapes())))
    key, np_key = data.draw(mixed_keys(a.shape, allow_lists=False))
    target = a[np_key].shape
    expected = a.copy()
    # duplicate coordinates write in an unspecified order: give them the same value
    axis_keys = [k for k in np_key if k is not None and k is not Ellipsis]
    coords = np.broadcast_arrays(*[np.asarray(k) % n for k, n in zip(axis_keys, a.shape) if not isinstance(k, slice)])
    unique = len(set(zip(*(c.ravel().tolist() for c in coords)))) == coords[0].size
    if not unique or data.draw(st.booleans()):
        value = scalar_of(a)
        expected[np_key] = value
    else:
        vshape = data.draw(value_shapes(target))
        v = data.draw(np_arrays(x.dtype, vshape))
        value = data.draw(views(v))
        expected[np_key] = v
    x[key] = value
    check(x, expected)


def test_out_of_bounds_index_arrays_raise_before_anything_changes():
    a = np.arange(12.0).reshape(3, 4)
    x = arr(a)
    for key in [(arr([0, 3]),), (arr([0, -4]),), (1, arr([4])), (arr([[0], [1]]), arr([0, 9, 1])),
                (arr(np.array([200], np.uint8)),), (slice(None), [5])]:
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
        with pytest.raises(IndexError, match="out of bounds"):
            x[key] = 1.0
        with pytest.raises(IndexError, match="out of bounds"):
            x[key] = arr(0.0)
    check(x, a)
    with pytest.raises(IndexError):
        arr(np.zeros((0, 2)))[arr([0])]
    check(arr(np.zeros((0, 2)))[arr(np.zeros(0, np.int64))], np.zeros((0, 2)))


def test_host_index_arrays():
    a = np.arange(12.0).reshape(3, 4)
    x = arr(a)
    check(x[[2, 0], [-1, 1]], a[[2, 0], [-1, 1]])
    check(x[np.array([1, 1], np.uint8)], a[[1, 1]])
    check(x[:, np.array([True, False, False, True])], a[:, [0, 3]])
    check(x[[]], a[[]])
    x[[0, 2], 1] = 0.0
    a[[0, 2], 1] = 0.0
    check(x, a)
    with pytest.raises(IndexError):
        x[[[0], [1, 2]]]


def test_index_array_errors():
    x = arr(np.arange(12.0).reshape(3, 4))
    with pytest.raises(IndexError, match="broadcast"):
        x[arr([0, 1]), arr([0, 1, 2])]
    with pytest.raises(IndexError, match="integer or bool"):
        x[arr([0.0, 1.0])]
    with pytest.raises(IndexError):
        x[[0.5]]
    with pytest.raises(IndexError, match="too many"):
        x[arr([0]), arr([0]), arr([0])]
    with pytest.raises(ValueError, match="broadcast"):
        x[arr([0, 1])] = arr(np.zeros((3, 4)))
    with pytest.raises(TypeError):
        x[arr([0])] = arr([1 + 1j])
    with pytest.raises(TypeError):
        x[arr([0])] = "a"


# --- boolean masks -----------------------------------------------------------------------------------------

@given(st.data())
def test_mask_getitem(data):
    x, a = data.draw(tensors(ALL))
    m = data.draw(st.integers(0, a.ndim))
    mask = data.draw(np_arrays(xp.bool, a.shape[:m]))
    key = data.draw(views(mask))
    out = x[key] if data.draw(st.booleans()) else x[key, ...]
    check(out, a[mask])


@given(st.data())
def test_mask_with_other_indices(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=2, max_dims=3, min_side=1, max_side=4))))
    mask = data.draw(np_arrays(xp.bool, a.shape[1:2]))
    t = data.draw(views(mask))
    check(x[:, t], a[:, mask])
    check(x[..., t, :] if a.ndim == 3 else x[..., t], a[..., mask, :] if a.ndim == 3 else a[..., mask])
    check(x[-1, t], a[-1, mask])


@given(st.data())
def test_mask_setitem(data):
    x, a = data.draw(tensors(ALL))
    m = data.draw(st.integers(0, a.ndim))
    mask = data.draw(np_arrays(xp.bool, a.shape[:m]))
    rest = a.shape[m:]
    expected = a.copy()
    how = data.draw(st.sampled_from(["scalar", "rest", "counted"]))
    if how == "scalar":
        value = scalar_of(a)
        expected[mask] = value
    else:
        count = int(mask.sum())
        vshape = rest if how == "rest" else (count,) + rest
        vshape = data.draw(value_shapes(vshape))
        v = data.draw(np_arrays(x.dtype, vshape))
        value = data.draw(views(v))
        expected[mask] = v
    x[data.draw(views(mask))] = value
    check(x, expected)


@given(st.data())
def test_mask_setitem_among_slices(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=2, max_dims=3, max_side=4))))
    lead = data.draw(st.lists(st.sampled_from([None, slice(None), slice(None, None, -1)]), max_size=2))
    lead = [k for k in lead if k is None] + [k for k in lead if k is not None][:a.ndim - 1]
    dim = sum(k is not None for k in lead)
    mask = data.draw(np_arrays(xp.bool, a.shape[dim:dim + 1]))
    key = tuple(lead) + (mask,)
    target = a[key].shape
    counted = data.draw(st.booleans())
    vshape = data.draw(value_shapes(target)) if counted else \
        tuple(1 if i == len(lead) else n for i, n in enumerate(target))[data.draw(st.integers(0, len(lead))):]
    v = data.draw(np_arrays(x.dtype, vshape))
    expected = a.copy()
    expected[key] = v
    x[tuple(lead) + (data.draw(views(mask)),)] = data.draw(views(v))
    check(x, expected)


def test_setitem_promotes_values():
    x = arr(np.zeros(4, np.int32))
    x[arr([True, False, True, False])] = arr([5], dtype=xp.int8)
    x[arr([1])] = arr([-2], dtype=xp.int16)
    x[arr([False, False, False, True])] = arr([7, 9], dtype=xp.uint8)[1:]
    check(x, np.array([5, -2, 5, 9], np.int32))
    y = arr(np.zeros(2, np.complex64))
    y[arr([0, 1])] = arr([1.5, 2.5], dtype=xp.float32)
    check(y, np.array([1.5, 2.5], np.complex64))


def test_mask_shape_rules():
    a = np.arange(6.0).reshape(2, 3)
    x = arr(a)
    check(x[arr(True)], a[None])
    check(x[arr(False)], np.zeros((0, 2, 3)))
    # a mask axis of size 0 selects nothing, whatever the size of the axis it indexes (the standard's rule)
    check(x[arr(np.zeros((2, 0), bool))], np.zeros((0,)))
    check(x[arr(np.zeros((0,), bool))], np.zeros((0, 3)))
    x[arr(np.zeros((0,), bool))] = 1.0
    check(x, a)
    with pytest.raises(IndexError, match="boolean"):
        x[arr([True, False, True])]
    with pytest.raises(IndexError):
        x[arr(np.ones((2, 3, 1), bool))]
    with pytest.raises(ValueError, match="broadcast"):
        x[arr([True, False])] = arr([1.0, 2.0])  # 2 values for 1 selected row of 3
    x[arr(True)] = arr([[1.0, 2.0, 3.0]])
    check(x, np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))
    x[arr(False)] = 0.0
    check(x, np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))
    x[[True, False]] = -1.0  # a list of bools is a mask
    check(x, [[-1.0, -1.0, -1.0], [1.0, 2.0, 3.0]])


# --- key validation ----------------------------------------------------------------------------------------

def test_invalid_keys():
    x = arr(np.zeros((2, 3)))
    for key in [(0, 0, 0), (..., ...), 1.0, True, "a", (0, 1.5), {0}]:
        with pytest.raises(IndexError):
            x[key]
        with pytest.raises(IndexError):
            x[key] = 1.0
    for key in [(2,), (0, -4), (slice(None), 3)]:
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
    with pytest.raises(ValueError, match="step"):
        x[::0]
    with pytest.raises(IndexError):
        x[slice(0, 1.5)]


def test_setitem_value_checks():
    x = arr(np.zeros((2, 3), np.int16))
    with pytest.raises(TypeError):
        x[0] = 1.5
    with pytest.raises(TypeError):
        x[0] = True
    with pytest.raises(TypeError):
        x[0] = arr([1, 2, 3], dtype=xp.int32)  # int32 does not promote to int16
    x[0] = arr([1, 2, 3], dtype=xp.int8)  # int8 does
    with pytest.raises(ValueError):
        x[0] = arr([1, 2], dtype=xp.int16)
    with pytest.raises(OverflowError):
        x[0] = 2 ** 20
    check(x, np.array([[1, 2, 3], [0, 0, 0]], np.int16))


def test_mixed_devices_raise_value_error(fake_backend):
    x = arr([1.0, 2.0])
    other = xp.asarray([0], device="fake:0")
    with pytest.raises(ValueError, match="fake:0"):
        x[other]
    with pytest.raises(ValueError, match="fake:0"):
        x[0] = xp.asarray(1.0, device="fake:0")
    with pytest.raises(ValueError, match="device"):
        xp.take(x, other)


# --- take, take_along_axis ---------------------------------------------------------------------------------

@given(st.data())
def test_take(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1, max_dims=3))))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    dtype = data.draw(st.sampled_from(supported(INTEGER)))
    k = data.draw(st.integers(0, 5)) if n else 0
    idx = data.draw(np_arrays(dtype, (k,), st.integers(0 if dtype.kind == "u" else -n, n - 1)
                              if n else None))
    t = data.draw(views(idx))
    out = xp.take(x, t) if a.ndim == 1 and data.draw(st.booleans()) else xp.take(x, t, axis=axis)
    check(out, np.take(a, idx, axis=axis))


def test_take_errors():
    x = arr(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="axis"):
        xp.take(x, arr([0]))
    with pytest.raises(TypeError, match="integer"):
        xp.take(x, arr([0.0]), axis=0)
    with pytest.raises(ValueError, match="1-D"):
        xp.take(x, arr([[0]]), axis=0)
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take(x, arr([3]), axis=1)
    with pytest.raises(IndexError):
        xp.take(x, arr([0]), axis=2)
    with pytest.raises(ValueError):
        xp.take(arr(1), arr([0]))
    with pytest.raises(TypeError):
        xp.take(x, [0], axis=0)


@given(st.data())
def test_take_along_axis(data):
    x, a = data.draw(tensors(ALL, shape=data.draw(shapes(min_dims=1, max_dims=3, max_side=4))))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    # indices broadcast with x on the other axes
    ishape = [1 if data.draw(st.booleans()) else s for s in a.shape]
    ishape[axis] = data.draw(st.integers(0, 4)) if n else 0
    dtype = data.draw(st.sampled_from(supported(INTEGER)))
    idx = data.draw(np_arrays(dtype, tuple(ishape), st.integers(0 if dtype.kind == "u" else -n,
                                                                  max(n - 1, 0))))
    expected_shape = np.broadcast_shapes(a.shape[:axis % a.ndim] + (1,) + a.shape[axis % a.ndim + 1:], idx.shape)
    expected_shape = list(expected_shape)
    expected_shape[axis] = idx.shape[axis]
    t = data.draw(views(idx))
    out = xp.take_along_axis(x, t, axis=axis) if axis != -1 or data.draw(st.booleans()) else xp.take_along_axis(x, t)
    if n:
        check(out, np.take_along_axis(a, idx.astype(np.int64), axis=axis))
    else:
        check(out, np.zeros(expected_shape, a.dtype))


def test_take_along_axis_errors():
    x = arr(np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError):
        xp.take_along_axis(x, arr([0]))
    with pytest.raises(TypeError):
        xp.take_along_axis(x, arr([[0.0]]))
    with pytest.raises(ValueError):
        xp.take_along_axis(x, arr(np.zeros((3, 1), np.int64)))
    with pytest.raises(IndexError, match="out of bounds"):
        xp.take_along_axis(x, arr([[0], [-4]]))
    with pytest.raises(IndexError):
        xp.take_along_axis(x, arr([[0]]), axis=2)


# --- capture -----------------------------------------------------------------------------------------------

def test_gathers_and_scatters_capture_and_replay():
    a = np.arange(12.0).reshape(3, 4)
    x = arr(a)
    idx = arr([2, 0])
    mask = arr([True, False, True, False])
    with xp.capture(device=DEVICE) as g:
        g1 = x[idx, 1:]
        g2 = xp.take(x, idx, axis=1)
        g3 = xp.take_along_axis(x, xp.reshape(idx, (1, 2)), axis=1)
        y = x * 1.0
        y[:, mask] = -1.0
        y[idx] = arr([5.0, 6.0, 7.0, 8.0])
    def expected(a, i, m):
        y = a.copy()
        y[:, m] = -1.0
        y[i] = [5.0, 6.0, 7.0, 8.0]
        return a[i, 1:], np.take(a, i, axis=1), np.take_along_axis(a, i.reshape(1, 2), axis=1), y
    for t, e in zip((g1, g2, g3, y), expected(a, np.array([2, 0]), np.array([True, False, True, False]))):
        check(t, e)
    a2, i2, m2 = a * 3 - 1, np.array([1, -3]), np.array([False, True, True, True])
    x[...] = arr(a2)
    idx[...] = arr(i2)
    mask[...] = arr(m2)
    g.replay()
    for t, e in zip((g1, g2, g3, y), expected(a2, i2, m2)):
        check(t, e)
    # out-of-bounds indices are not checked inside a capture: replays clip them, never reading outside x
    idx[...] = arr([100, -100])
    g.replay()
    check(g1, a2[[2, 0], 1:])


@pytest.mark.parametrize("call", [
    lambda x, m: x[m],
    lambda x, m: x.__setitem__(m, arr([1.0, 2.0])),  # the value's shape must match the mask's count
    lambda x, m: xp.reshape(x, (2, 2))[m[:2], arr([0, 1])],
])
def test_mask_reads_that_need_the_count_cannot_be_captured(call):
    x = arr(np.arange(4.0))
    m = arr([True, False, True, False])
    with pytest.raises(xp.CaptureError, match="boolean-mask indexing"):
        with xp.capture(device=DEVICE):
            call(x, m)
    check(x, np.arange(4.0))


def test_out_of_bounds_in_capture_do_not_raise():
    x = arr(np.arange(4.0))
    with xp.capture(device=DEVICE):
        out = x[arr([7, -9])]
    check(out, [3.0, 0.0])  # clipped: implementation-defined values, never memory outside x


def test_take_with_a_python_int_drops_the_axis_as_numpy():
    a = np.arange(12).reshape(3, 4)
    x = xp.asarray(a, device=DEVICE)
    for index, axis in ((1, 1), (-1, 0), (0, -1)):
        np.testing.assert_array_equal(to_np(xp.take(x, index, axis=axis)), np.take(a, index, axis=axis))
    assert xp.take(xp.asarray(a[0], device=DEVICE), 2).shape == ()
    with pytest.raises(IndexError, match="take: index 5"):
        xp.take(x, 5, axis=0)
    with pytest.raises(ValueError, match="axis is required"):
        xp.take(x, 0)
