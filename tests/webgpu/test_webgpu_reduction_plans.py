"""Per-signature plans of reductions on WebGPU: the namespace's bound plan (numr_array/_statistical.py,
``_bound_reduce``) and the client's one-dispatch launch plan (``k_reduce.reduce``). A repeated call skips
the checks and the general path's steps, yet gives the general path's results for views at other offsets
and strides, raises what a first call raises, and stays correct inside a capture."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array import _statistical
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import k_reduce  # noqa: E402

DEV = "webgpu:0"
FUNCS = ["sum", "prod", "max", "min", "mean"]


@pytest.fixture
def general(monkeypatch):
    """Which general paths ran: the namespace's checks ("checks") and the kernel's dimension merging
    ("collapse")."""
    calls = []
    args, collapse = _statistical.reduction_args, k_reduce.collapse
    monkeypatch.setattr(_statistical, "reduction_args", lambda *a: (calls.append("checks"), args(*a))[1])
    monkeypatch.setattr(k_reduce, "collapse", lambda *a: (calls.append("collapse"), collapse(*a))[1])
    return calls


@pytest.mark.parametrize("axis", [None, 1, -1, (0, 1)])
@pytest.mark.parametrize("name", FUNCS)
def test_a_repeated_reduction_skips_the_general_path(general, name, axis):
    host = (np.arange(12, dtype=np.float32).reshape(3, 4) + 1) / 4
    x = xp.asarray(host, device=DEV)
    f = getattr(xp, name)
    f(x, axis=axis)  # the plans are made
    general.clear()
    for _ in range(3):
        r = f(x, axis=axis)
    assert general == []
    np.testing.assert_allclose(to_np(r), getattr(np, name)(host, axis=axis), rtol=1e-6)


@pytest.mark.parametrize("name", FUNCS)
def test_reduction_plans_follow_offsets_buffers_and_strides(name):
    """One signature (dtype, shape) over views at other offsets and strides and over other buffers: every
    call reads its own operand (the launch plan is keyed on the view's layout)."""
    host = np.linspace(0.5, 2.0, 300, dtype=np.float32)
    f, g = getattr(xp, name), getattr(np, name)
    bufs = [(xp.asarray(host, device=DEV), host), (xp.asarray(host[::-1].copy(), device=DEV), host[::-1])]
    for _ in range(2):
        for start in (0, 1, 5, 99):
            for x, h in bufs:
                np.testing.assert_allclose(to_np(f(x[start:start + 40])), g(h[start:start + 40]), rtol=1e-5)
                np.testing.assert_allclose(to_np(f(x[start:start + 80:2])), g(h[start:start + 80:2]), rtol=1e-5)
                m, hm = x[start:start + 40].reshape((4, 10)), h[start:start + 40].reshape(4, 10)
                np.testing.assert_allclose(to_np(f(m, axis=0)), g(hm, axis=0), rtol=1e-5)
                np.testing.assert_allclose(to_np(f(m.T, axis=1, keepdims=True)), g(hm.T, axis=1, keepdims=True),
                                           rtol=1e-5)


def test_a_planned_reduction_still_raises_what_the_first_call_raises():
    x = xp.asarray(np.ones((2, 3), np.float32), device=DEV)
    for _ in range(2):
        xp.sum(x, axis=1)
        xp.sum(x, axis=1, keepdims=False)
    with pytest.raises(TypeError, match="sum"):
        xp.sum(x, axis=True)  # (True == 1: a key that compared values alone would take axis 1's plan)
    with pytest.raises(TypeError, match="keepdims"):
        xp.sum(x, axis=1, keepdims=0)
    out = xp.asarray(np.full(2, 7, np.int32), device=DEV)
    with pytest.raises(TypeError, match="out"):
        xp.sum(x, axis=1, out=out)
    assert to_np(out).tolist() == [7, 7]
    empty = xp.asarray(np.ones((0, 3), np.float32), device=DEV)
    for _ in range(2):
        with pytest.raises(ValueError, match="max"):
            xp.max(empty, axis=0)


@pytest.mark.parametrize("name", FUNCS)
def test_a_reduction_first_seen_eagerly_is_recorded_in_a_capture(name):
    x = xp.asarray(np.array([1.0, 2.0, 4.0], np.float32), device=DEV)
    f = getattr(xp, name)
    f(x)
    f(x)  # both plans exist before the capture
    with xp.capture(DEV) as g:
        y = f(x)
    x[...] = xp.asarray(np.array([3.0, 5.0, 8.0], np.float32), device=DEV)
    g.replay()
    np.testing.assert_allclose(to_np(y), getattr(np, name)(np.array([3.0, 5.0, 8.0], np.float32)), rtol=1e-6)
    assert to_np(f(x)) == to_np(y)  # and eagerly after it


def _variants(monkeypatch) -> list:
    """The variants of the reductions launched from now on."""
    seen = []
    real = k_reduce._launch
    monkeypatch.setattr(k_reduce, "_launch", lambda client, kind, variant, *a: (seen.append(variant),
                                                                                 real(client, kind, variant, *a))[1])
    return seen


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "complex64"])
@pytest.mark.parametrize("shape, C", [((3000, 16), 16), ((5000, 3), 8), ((700, 100), 32), ((200_000, 5), 8)])
def test_reductions_over_the_leading_axis_take_the_columns_variant(dtype, shape, C, monkeypatch):
    """A reduction down the columns of a C-contiguous matrix (each output's elements a row apart) takes
    k_reduce's columns variant: C outputs side by side per workgroup, in parts where the columns are long;
    against NumPy, for every kind (argmin and argmax: the first of equal values), outputs that do not fill
    the last workgroup's columns."""
    rng = np.random.default_rng(shape[0])
    if dtype == "bool":
        a = rng.random(shape) < 0.01
    elif dtype == "complex64":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    else:
        a = rng.integers(-3, 4, shape).astype(dtype)  # (ties for argmin, argmax)
    x = xp.asarray(a, device=DEV)
    seen = _variants(monkeypatch)
    kinds = {"bool": ["any", "all"], "complex64": ["sum"]}.get(dtype, ["sum", "max", "min", "argmin", "argmax"])
    for kind in kinds:
        got = to_np(getattr(xp, kind)(x, axis=0))
        want = getattr(np, kind)(a, axis=0)
        if dtype == "complex64":
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
        else:
            np.testing.assert_array_equal(got, want)
    assert seen and seen[0] == f"columns{C}"


def test_a_captured_reduction_over_the_leading_axis_fuses_in_the_columns_variant(monkeypatch):
    """``sum(a * b, axis=0)`` captured: one dispatch of the columns variant evaluating the product, whose
    replay on new data equals eager bit for bit."""
    seen = _variants(monkeypatch)
    a, b = (xp.asarray(np.random.default_rng(s).standard_normal((5000, 24)).astype(np.float32), device=DEV)
            for s in (1, 2))
    with xp.capture(device=DEV) as g:
        got = xp.sum(a * b, axis=0)
    assert len(g._graph.steps) == 2 and seen[0] == "columns32"  # (the parts, then their sum)
    a[...] = xp.asarray(np.random.default_rng(3).standard_normal((5000, 24)).astype(np.float32), device=DEV)
    g.replay()
    assert to_np(got).tobytes() == to_np(xp.sum(a * b, axis=0)).tobytes()
    np.testing.assert_allclose(to_np(got), (to_np(a).astype(np.float64) * to_np(b)).sum(0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("shape, axis", [((200_000, 16), 0), ((391, 512), 0), ((8, 300_000), 1), ((64, 100_000), 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_walking_variants_loads_ahead_keep_the_order_of_their_sums(shape, axis, dtype, monkeypatch):
    """The group and columns variants issue WALK_AHEAD iterations' four loads together, folding each four in
    as one iteration at a time does: sums, products, maxima and means (k-means' counts over 200k rows, a thin
    product's 391 partial sums, long rows) come out with the same bits for 1, 2 and 4 iterations ahead."""
    a = np.random.default_rng(7).standard_normal(shape).astype(dtype)
    x = xp.asarray(a, device=DEV)
    got = {}
    for ahead in (1, 2, 4):
        monkeypatch.setattr(k_reduce, "WALK_AHEAD", ahead)
        got[ahead] = [np.asarray(to_np(f(x, axis=axis))).tobytes() for f in (xp.sum, xp.prod, xp.max, xp.mean)]
    assert got[1] == got[2] == got[4]
    np.testing.assert_allclose(to_np(xp.sum(x, axis=axis)), a.sum(axis=axis), rtol=1e-4, atol=1e-2)
