"""No hidden host round trips on WebGPU: a chain through the kernel families (matmul, reductions, sort,
searching, scans, linalg, fft) reads nothing back until its result is read, and the same chain can be
captured (a host read inside capture() would raise CaptureError) and replayed on new input."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array import fft, linalg
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = [pytest.mark.webgpu]
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from .helpers import DEV, INDEX, WIDEST  # noqa: E402

#: float64 where the adapter has it; float32 (with its tolerance) on one without shader-f64
RTOL = 1e-9 if WIDEST == xp.float64 else 2e-4


def chain(a, b):
    """matmul -> sum -> sort -> fft, and on the way the other device families."""
    m = xp.matmul(a, b)
    s = xp.sum(m, axis=0)
    srt = xp.sort(s, descending=True)
    spectrum = fft.fft(srt)
    order = xp.argsort(s)
    where = xp.searchsorted(xp.sort(s), s)
    scan = xp.cumulative_sum(s)
    top = xp.argmax(m, axis=1)
    members = xp.isin(top, order[:4])
    sym = m + xp.matrix_transpose(m) + 64 * xp.eye(m.shape[0], dtype=m.dtype, device=DEV)
    w = linalg.eigvalsh(sym)
    x = linalg.solve(sym, s)
    sv = linalg.svdvals(m)
    return spectrum, order, where, scan, top, members, w, x, sv, linalg.det(sym[:4, :4])


def numpy_chain(a, b):
    m = a @ b
    s = m.sum(axis=0)
    sym = m + m.T + 64 * np.eye(m.shape[0])
    return (np.fft.fft(np.sort(s)[::-1]), np.argsort(s, kind="stable"), np.searchsorted(np.sort(s), s),
            np.cumsum(s), np.argmax(m, axis=1), np.isin(np.argmax(m, axis=1), np.argsort(s, kind="stable")[:4]),
            np.linalg.eigvalsh(sym), np.linalg.solve(sym, s), np.linalg.svd(m, compute_uv=False),
            np.linalg.det(sym[:4, :4]))


def check(got, want):
    for g, w in zip(got, want):
        g = to_np(g)
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=RTOL * max(1.0, float(np.max(np.abs(w)))))
        else:
            np.testing.assert_array_equal(g, w.astype(INDEX) if w.dtype.kind == "i" else w)


def data(seed: int):
    rng = np.random.default_rng(seed)
    # small integers as floats: every product and sum is exact (in float32 too), so sort orders and ties
    # match NumPy's exactly
    return (rng.integers(-8, 9, (12, 10)).astype(WIDEST), rng.integers(-8, 9, (10, 12)).astype(WIDEST))


def test_chain_reads_nothing_back_until_its_result_is_read():
    a, b = data(0)
    ta, tb = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
    client = ta._dev.client
    before = client.readbacks
    got = chain(ta, tb)
    assert client.readbacks == before, "a kernel of the chain read device data back on the host"
    check(got, numpy_chain(a, b))
    assert client.readbacks > before  # reading the results is what reads back


def test_chain_captures_and_replays_on_new_input():
    a, b = data(1)
    ta, tb = xp.asarray(a, device=DEV), xp.asarray(b, device=DEV)
    with xp.capture(device=DEV) as g:
        outs = chain(ta, tb)
    check(outs, numpy_chain(a, b))
    a2, b2 = data(2)
    ta[...] = xp.asarray(a2, device=DEV)
    tb[...] = xp.asarray(b2, device=DEV)
    g.replay()
    check(outs, numpy_chain(a2, b2))
