"""NumPy's array-manipulation functions (numr_array/_np_shape.py) against NumPy on the device under test."""


import numpy as np
import pytest

import numr_array as xp

from .np_helpers import host, on_device, same

A = np.arange(24.0).reshape(2, 3, 4)
M = np.arange(12).reshape(3, 4)


def _all_same(got, ref):
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        same(g, r)


@pytest.mark.parametrize("sections", [1, 2, 3, 5, [1, 2], [0, 5]])
def test_splits(sections):
    v = np.arange(10)
    _all_same(xp.array_split(on_device(v), sections), np.array_split(host(v), sections))
    _all_same(xp.array_split(on_device(A), sections, axis=2), np.array_split(host(A), sections, axis=2))
    if not isinstance(sections, int) or sections in (1, 2):
        _all_same(xp.hsplit(on_device(A), [1] if not isinstance(sections, int) else 1),
                  np.hsplit(host(A), [1] if not isinstance(sections, int) else 1))
        _all_same(xp.vsplit(on_device(A), sections if not isinstance(sections, int) else 2),
                  np.vsplit(host(A), sections if not isinstance(sections, int) else 2))
        _all_same(xp.dsplit(on_device(A), sections), np.dsplit(host(A), sections))


def test_stacks_and_flips():
    a, b = np.arange(3), np.arange(3, 6)
    for name in ("column_stack", "dstack", "row_stack"):
        for args in ((a, b), (M, M)):
            # (row_stack is vstack: NumPy 2.0 deprecated the name and NumPy 2.5 removed it)
            ref = getattr(np, "vstack" if name == "row_stack" else name)([host(x) for x in args])
            same(getattr(xp, name)([on_device(x) for x in args]), ref)
    same(xp.fliplr(on_device(M)), np.fliplr(M))
    same(xp.flipud(on_device(M)), np.flipud(M))
    for k in range(-2, 6):
        same(xp.rot90(on_device(A), k), np.rot90(A, k))
        same(xp.rot90(on_device(A), k, axes=(2, 0)), np.rot90(A, k, axes=(2, 0)))
    same(xp.block([[on_device(M), on_device(M)], [on_device(M), on_device(M)]]), np.block([[M, M], [M, M]]))
    same(xp.block([on_device(a), on_device(b)]), np.block([a, b]))


@pytest.mark.parametrize("obj", [1, -1, slice(0, 3, 2), [0, 2], [2, 0, 2]])
@pytest.mark.parametrize("axis", [None, 1])
def test_delete_insert(obj, axis):
    ref_obj = obj
    same(xp.delete(on_device(M), obj, axis=axis), np.delete(M, ref_obj, axis=axis))
    for values in (7, [5, 6, 7]):
        try:
            ref = np.insert(M, ref_obj, values, axis=axis)
        except ValueError:
            continue
        vals = values if isinstance(values, int) else on_device(np.array(values))
        same(xp.insert(on_device(M), obj, vals, axis=axis), ref)


def test_delete_mask_append_resize_rollaxis():
    mask = np.array([True, False, True, False])
    same(xp.delete(on_device(M), on_device(mask), axis=1), np.delete(M, mask, axis=1))
    same(xp.append(on_device(M), on_device(M)), np.append(M, M))
    same(xp.append(on_device(M), on_device(M), axis=0), np.append(M, M, axis=0))
    for shape in [(5,), (2, 7), (0,), 30]:
        same(xp.resize(on_device(M), shape), np.resize(M, shape))
    for axis, start in [(2, 0), (0, 3), (1, 1), (-1, 1)]:
        same(xp.rollaxis(on_device(A), axis, start), np.rollaxis(A, axis, start))


def test_diagonals_trim_ediff():
    same(xp.diagflat(on_device(np.arange(3)), 1), np.diagflat(np.arange(3), 1))
    for offset, a1, a2 in [(0, 0, 1), (1, 1, 2), (-1, 2, 0)]:
        same(xp.diagonal(on_device(A), offset, a1, a2), np.diagonal(A, offset, a1, a2))
    f = np.array([0, 0, 3, 0, 4, 0])
    for trim in ("f", "b", "fb"):
        same(xp.trim_zeros(on_device(f), trim), np.trim_zeros(f, trim))
    same(xp.ediff1d(on_device(M), to_begin=on_device(np.array([-1])), to_end=on_device(np.array([9, 9]))),
         np.ediff1d(M, to_begin=[-1], to_end=[9, 9]))


def test_apply_along_and_over_axes():
    same(xp.apply_along_axis(lambda v: xp.sum(v) * 2, 1, on_device(M)),
         np.apply_along_axis(lambda v: v.sum() * 2, 1, M))
    same(xp.apply_along_axis(lambda v: v[::-1], 0, on_device(A)), np.apply_along_axis(lambda v: v[::-1], 0, A))
    same(xp.apply_over_axes(xp.sum, on_device(A), [0, 2]), np.apply_over_axes(np.sum, A, [0, 2]))


def test_selection():
    choices = [np.arange(4) + 10 * k for k in range(3)]
    idx = np.array([0, 2, 1, 2])
    same(xp.choose(on_device(idx), [on_device(c) for c in choices]), np.choose(idx, choices))
    for shift, mode in ((2, "wrap"), (-1, "clip")):
        same(xp.choose(on_device(idx + shift), [on_device(c) for c in choices], mode=mode),
             np.choose(idx + shift, choices, mode=mode))
    with pytest.raises(ValueError, match="choose: invalid entry"):
        xp.choose(on_device(idx + 1), [on_device(c) for c in choices])
    cond = np.array([True, False, True])
    same(xp.compress(on_device(cond), on_device(M), axis=0), np.compress(cond, M, axis=0))
    same(xp.compress(on_device(cond), on_device(M)), np.compress(cond, M))
    same(xp.extract(on_device(M % 3 == 0), on_device(M)), np.extract(M % 3 == 0, M))
    x = np.arange(10.0)
    conds, chs = [x < 3, x > 5], [x, x ** 2]
    same(xp.select([on_device(c) for c in conds], [on_device(c) for c in chs], -1.0), np.select(conds, chs, -1.0))
    same(xp.piecewise(on_device(x - 5), [on_device(x < 5), on_device(x >= 5)], [lambda v: -v, lambda v: v * 2]),
         np.piecewise(x - 5, [x < 5, x >= 5], [lambda v: -v, lambda v: v * 2]))
    same(xp.piecewise(on_device(x - 5), [on_device(x < 3)], [1.0, lambda v: v]),
         np.piecewise(x - 5, [x < 3], [1.0, lambda v: v]))


def test_in_place_writers():
    def both(f_xp, f_np, a=M):
        t, r = on_device(a.copy()), a.copy()
        f_xp(t)
        f_np(r)
        same(t, r)

    both(lambda t: xp.put(t, on_device(np.array([0, 5, 11])), on_device(np.array([-1, -2, -3]))),
         lambda r: np.put(r, [0, 5, 11], [-1, -2, -3]))
    both(lambda t: xp.put(t, on_device(np.array([13, -20])), 99, mode="wrap"),
         lambda r: np.put(r, [13, -20], 99, mode="wrap"))
    both(lambda t: xp.place(t, on_device(M > 6), on_device(np.array([7, 8]))), lambda r: np.place(r, M > 6, [7, 8]))
    both(lambda t: xp.putmask(t, on_device(M % 2 == 0), on_device(np.array([100, 200]))),
         lambda r: np.putmask(r, M % 2 == 0, [100, 200]))
    both(lambda t: xp.copyto(t, on_device(np.arange(4)), where=on_device(M > 4)),
         lambda r: np.copyto(r, np.arange(4), where=M > 4))
    both(lambda t: xp.fill_diagonal(t, 5), lambda r: np.fill_diagonal(r, 5))
    tall = np.zeros((7, 3), dtype=np.int64)
    both(lambda t: xp.fill_diagonal(t, 5, wrap=True), lambda r: np.fill_diagonal(r, 5, wrap=True), tall)
    where_, what = np.array([[1], [0], [3]]), np.array([[7], [8], [9]])
    both(lambda t: xp.put_along_axis(t, on_device(where_), on_device(what), axis=1),
         lambda r: np.put_along_axis(r, where_, what, axis=1))
    t = on_device(M.copy())
    with pytest.raises(IndexError, match="put: index 12 is out of bounds for size 12"):
        xp.put(t, on_device(np.array([0, 12])), 5)
    same(t, M)  # nothing written
    with pytest.raises(TypeError, match="copyto: cannot cast"):
        xp.copyto(on_device(M.copy()), on_device(np.ones(4)))


def test_as_arrays_and_equiv():
    t = on_device(M)
    assert xp.array_equiv(t, on_device(M[:1] * 0 + M[0])) is False
    assert xp.array_equiv(on_device(np.ones((3, 4))), on_device(np.ones(4))) is True
    assert xp.array_equiv(t, on_device(np.ones(3))) is False
    same(xp.asanyarray(t), M)
    c = xp.ascontiguousarray(t[:, ::2])
    same(c, M[:, ::2])
    assert c._strides == (2, 1)
    with pytest.raises(ValueError, match="asarray_chkfinite"):
        xp.asarray_chkfinite(on_device(np.array([1.0, np.inf])))
    same(xp.require(t[:, ::2], requirements="C"), M[:, ::2])
    with pytest.raises(ValueError, match="require: Fortran"):
        xp.require(t, requirements=["F"])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", [0, 1, (2, 3), ((1, 0), (5, 2))])
def test_pad(mode, width):
    same(xp.pad(on_device(M), width, mode), np.pad(M, width, mode))
    same(xp.pad(on_device(np.arange(3.0)), 7, mode), np.pad(np.arange(3.0), 7, mode))


def test_pad_constant_values_and_errors():
    same(xp.pad(on_device(M), ((1, 2), (0, 1)), constant_values=((7, 8), (9, 10))),
         np.pad(M, ((1, 2), (0, 1)), constant_values=((7, 8), (9, 10))))
    with pytest.raises(ValueError, match="pad: mode"):
        xp.pad(on_device(M), 1, "median")
    with pytest.raises(ValueError, match="pad: constant_values"):
        xp.pad(on_device(M), 1, constant_values=[1, 2, 3])
    with pytest.raises(TypeError, match="pad: constant_values must hold Python numbers"):
        xp.pad(on_device(M), 1, constant_values="a")
    with pytest.raises(ValueError, match="pad: index can't contain negative"):
        xp.pad(on_device(M), -1)
    with pytest.raises(TypeError, match="column_stack: takes a list"):
        xp.column_stack(on_device(M))
    with pytest.raises(ValueError, match="vsplit"):
        xp.vsplit(on_device(np.arange(4)), 2)
    with pytest.raises(ValueError, match="rot90: axes must be different"):
        xp.rot90(on_device(M), axes=(1, 1))
