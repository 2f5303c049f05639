"""The eager map launch's per-signature plans (``_map_template._eager``): a repeated launch skips the
general path's steps and still gives the general path's results for every offset, buffer, scalar and
parameter of the signature; launches the plans do not cover (overlapping views, captures) take the
general path."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import _map_template  # noqa: E402

DEV = "webgpu:0"


@pytest.fixture
def collapses(monkeypatch):
    """The number of times the general path ran (it collapses dimensions on every launch)."""
    calls = []
    real = _map_template.collapse
    monkeypatch.setattr(_map_template, "collapse", lambda *a: (calls.append(1), real(*a))[1])
    return calls


def test_a_repeated_signature_skips_the_general_path(collapses):
    a = xp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device=DEV)
    b = xp.asarray(np.ones((3, 4), np.float32), device=DEV)
    xp.add(a, b)
    xp.add(a, b)  # the plan is made from the built pipeline
    collapses.clear()
    for _ in range(3):
        r = xp.add(a, b)
    assert collapses == []
    assert np.array_equal(to_np(r), np.arange(12, dtype=np.float32).reshape(3, 4) + 1)


def test_plans_follow_offsets_buffers_scalars_and_strides():
    """One signature (dtypes, shape, strides) over views at other offsets, other buffers and other scalar
    values: every launch reads its own operands."""
    host = np.arange(300, dtype=np.float32)
    x = xp.asarray(host, device=DEV)
    y = xp.asarray(host[::-1].copy(), device=DEV)
    for _ in range(2):
        for start in (0, 1, 5, 99):
            for src, h in ((x, host), (y, host[::-1])):
                got = to_np(xp.multiply(src[start:start + 100], float(start) + 0.5))
                np.testing.assert_array_equal(got, h[start:start + 100] * np.float32(start + 0.5))
                got = to_np(xp.subtract(src[start:start + 200:2], src[start + 1:start + 201:2]))
                np.testing.assert_array_equal(got, h[start:start + 200:2] - h[start + 1:start + 201:2])
    z = xp.asarray(np.zeros(1000, np.float32), device=DEV)
    for k in range(3):  # outputs at offsets too (out= a view)
        xp.add(x[:100], float(k), out=z[100 * k + 3:100 * k + 103])
    want = np.zeros(1000, np.float32)
    for k in range(3):
        want[100 * k + 3:100 * k + 103] = host[:100] + k
    np.testing.assert_array_equal(to_np(z), want)


def test_an_input_overlapping_the_output_through_another_view_is_copied_first():
    host = np.arange(64, dtype=np.float32)
    x = xp.asarray(host, device=DEV)
    for _ in range(3):
        xp.add(x[:32], 1.0, out=x[:32])  # the same view: in place, planned
    want = host.copy()
    want[:32] += 3
    np.testing.assert_array_equal(to_np(x), want)
    for _ in range(2):
        xp.negative(x[1:33], out=x[:32])  # another view of the same memory: the general path copies
        want[:32] = -want[1:33]
    np.testing.assert_array_equal(to_np(x), want)


def test_captured_launches_take_the_general_path(collapses):
    a = xp.asarray(np.ones(16, np.float32), device=DEV)
    xp.exp(a)
    xp.exp(a)
    collapses.clear()
    with xp.capture(DEV) as g:
        r = xp.exp(a)
    assert collapses  # recorded for fusion: the general path
    a[...] = xp.asarray(np.zeros(16, np.float32), device=DEV)
    g.replay()
    np.testing.assert_array_equal(to_np(r), np.ones(16, np.float32))


def test_a_launch_at_element_zero_reuses_the_plans_uniform_block(monkeypatch):
    """Tensors all at element 0 of their buffers: the plan's windows and uniform words serve the launch as
    they are, a scalar's bytes appended (nothing packed per launch); a view at an offset, or an 8- or
    16-bit scalar (widened to a word), packs its words. Contiguous, broadcast and transposed operands and
    scalars of every width give NumPy's results either way."""
    packs = []
    real = _map_template.pack_words
    monkeypatch.setattr(_map_template, "pack_words", lambda w: (packs.append(1), real(w))[1])
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = xp.asarray(h, device=DEV)
    row = xp.asarray(h[0].copy(), device=DEV)
    at = xp.asarray(h.T.copy(), device=DEV).T  # a transposed view at element 0
    hi = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    ai = xp.asarray(hi, device=DEV)
    h8 = hi.astype(np.int8)
    a8 = xp.asarray(h8, device=DEV)
    hc = (h + 1j * h[::-1]).astype(np.complex64)
    ac = xp.asarray(hc, device=DEV)
    unpacked = [(lambda: xp.add(a, a), h + h), (lambda: xp.multiply(a, row), h * h[0]),
                (lambda: xp.subtract(at, a), h - h), (lambda: xp.exp(a), np.exp(h)),
                (lambda: xp.add(a, 2.5), h + np.float32(2.5)), (lambda: xp.subtract(-7, ai), -7 - hi),
                (lambda: xp.multiply(ac, 1.5 - 2j), hc * np.complex64(1.5 - 2j))]
    if "float64" in xp.__array_namespace_info__().dtypes(device=DEV):
        hd = h.astype(np.float64) / 3
        unpacked.append((lambda: xp.add(xp.asarray(hd, device=DEV), 1e-300), hd + 1e-300))
    packed = [(lambda: xp.add(a8, 3), h8 + np.int8(3)),
              (lambda: xp.add(xp.asarray(np.arange(20, dtype=np.float32), device=DEV)[3:15], 1.0),
               np.arange(3, 15, dtype=np.float32) + 1)]
    for cases, packing in ((unpacked, False), (packed, True)):
        for fn, want in cases:
            fn()
            fn()
            packs.clear()
            got = to_np(fn())
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-6)
            assert bool(packs) is packing


@pytest.mark.parametrize("most", [1, 3, 2048])
def test_map_invocations_stride_over_every_element(most, monkeypatch):
    """A map launch takes at most MAP_GROUPS workgroups, its invocations striding over the elements: with 1,
    3 and 2048 of them, eager launches (a plan's and the general path's, strided and broadcast operands, a
    where) and a captured chain merged into one launch cover every element of sizes around the workgroup's,
    each written once (an in-place add would show a second write)."""
    from numr_array.backends.webgpu import _shader
    monkeypatch.setattr(_shader, "MAP_GROUPS", most)
    rng = np.random.default_rng(most)
    for n in (1, 255, 256, 257, 5000, 70001):
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal((3, n)).astype(np.float32)
        x, y = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
        for _ in range(2):  # (the second: the eager plan's launch)
            assert np.array_equal(to_np(x * 2.0 + y[1]), a * np.float32(2.0) + b[1])
        assert np.array_equal(to_np(xp.where(y[:, ::2] > 0, y[:, ::2], x[None, ::2])),
                              np.where(b[:, ::2] > 0, b[:, ::2], a[None, ::2]))
        z = xp.asarray(b, device=DEV)
        xp.add(z, 1.0, out=z)
        assert np.array_equal(to_np(z), b + np.float32(1.0))
        with xp.capture(device=DEV) as g:
            r = xp.sin(x) * 3.0 - xp.abs(y[2])
        assert len(g._graph.steps) == 1
        x[...] = xp.asarray(a[::-1].copy(), device=DEV)
        g.replay()
        assert np.array_equal(to_np(r), to_np(xp.sin(x) * 3.0 - xp.abs(y[2])))
