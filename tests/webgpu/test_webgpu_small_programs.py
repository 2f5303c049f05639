"""Captured sequences of small launches as one workgroup (_fuse_small): map runs over at most SMALL elements
and dot products of one workgroup become the phases of one dispatch, with a barrier between phases. Each
replay, on new input data, equals eager bit for bit, and what a program binds stays within the adapter's
limit."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import _fuse_small  # noqa: E402
from numr_array.backends.webgpu._client import WebGPUClient  # noqa: E402

from benchmarks import workloads  # noqa: E402

from .helpers import DEV, WIDEST, bits, host, on  # noqa: E402

client = xp._device.parse_device(DEV).client


def programs(g) -> int:
    """How many of the graph's dispatches are one-workgroup programs."""
    mine = {id(p) for k, p in client._pipelines.items() if k[0] == "small"}
    return sum(id(step[0]) in mine for step in g._graph.steps)


def check(run, args: list, new: list):
    """The graph of ``run(*args)``, after checking that a replay on ``new`` data (written into ``args``) gives
    what eager execution gives on it, results and arguments, bit for bit."""
    with xp.capture(device=DEV) as g:
        got = run(*args)
    got = got if isinstance(got, tuple) else (got,)
    for a, n in zip(args, new):
        a[...] = on(n)
    g.replay()
    replayed = [bits(t) for t in got + tuple(args)]
    for a, n in zip(args, new):
        a[...] = on(n)
    want = run(*args)
    want = want if isinstance(want, tuple) else (want,)
    assert replayed == [bits(t) for t in want + tuple(args)]
    return g


def data(n, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def test_a_conjugate_gradient_iteration_is_its_product_and_one_program():
    """cg on n = 2048: after A @ p, the iteration's two dot products and three updates (x, r, p, with their
    scalars) run as one workgroup; before the loop, x's zeros and r . r are one program too."""
    program = next(p for p in workloads.PROGRAMS if p.name == "cg")
    data_, params = program.make(np.random.default_rng(0), n=2048, iters=3)
    A, b = on(data_["A"]), on(data_["b"])
    with xp.capture(device=DEV) as alone:
        A @ b
    g = check(lambda A, b: program.run(xp, A, b, **params), [A, b], [data_["A"], data_["b"][::-1].copy()])
    assert programs(g) == 4
    assert len(g._graph.steps) == 4 + 3 * len(alone._graph.steps)


@pytest.mark.parametrize("dtype", ["float32", "widest", "complex64", "int32"])
def test_dot_products_and_the_updates_they_scale(dtype):
    dt = np.dtype(WIDEST.name if dtype == "widest" else dtype)

    def run(a, b):
        d = xp.vecdot(a, b)
        c = a * d + b
        return c - xp.vecdot(c, a) * b, d

    g = check(run, [on(data(1000, dt)), on(data(1000, dt, 1))], [data(1000, dt, 2), data(1000, dt, 3)])
    assert len(g._graph.steps) == programs(g) == 1


def test_a_phase_reads_what_the_one_before_wrote_through_another_view():
    def run(x, y):
        t = x * 2.0
        t[1:] = t[:-1] + 1.0  # a shifted view of t, written by the phase before
        return t, xp.vecdot(t, y)

    g = check(run, [on(data(500)), on(data(500, seed=1))], [data(500, seed=2), data(500, seed=3)])
    assert len(g._graph.steps) == programs(g) == 1


def test_a_phase_writes_what_the_one_before_read():
    def run(x, y):
        s = xp.vecdot(x, y)
        xp.multiply(y, s, out=y)  # y, read by the dot product before
        return xp.vecdot(x, y)

    g = check(run, [on(data(700)), on(data(700, seed=1))], [data(700, seed=2), data(700, seed=3)])
    assert len(g._graph.steps) == programs(g) == 1


def test_a_programs_bindings_stay_within_the_adapters_limit(monkeypatch):
    monkeypatch.setattr(client, "max_storage_per_stage", 6)
    ins = [on(data(300, seed=k)) for k in range(6)]

    def run(*ins):
        acc = ins[0]
        for a in ins[1:]:
            acc = acc * a + xp.vecdot(a, acc)
        return acc

    g = check(run, ins, [data(300, seed=10 + k) for k in range(6)])
    assert programs(g) >= 2
    assert all(step[0].nbind <= 6 for step in g._graph.steps)


def test_at_most_max_phases_in_one_program(monkeypatch):
    monkeypatch.setattr(_fuse_small, "MAX_PHASES", 3)

    def run(a, b):
        for _ in range(3):
            a = a + xp.vecdot(a, b) * 1e-3
        return a  # six phases: a dot product, then an update, three times

    g = check(run, [on(data(256)), on(data(256, seed=1))], [data(256, seed=2), data(256, seed=3)])
    assert len(g._graph.steps) == programs(g) == 2


@pytest.mark.parametrize("n, joined", [(_fuse_small.SMALL, True), (_fuse_small.SMALL + 1, False)])
def test_runs_over_more_than_small_elements_stay_dispatches_of_their_own(n, joined):
    def run(a, b):
        c = (a - 0.5) * b
        return c * xp.vecdot(b, b)

    g = check(run, [on(data(n)), on(data(n, seed=1))], [data(n, seed=2), data(n, seed=3)])
    assert (programs(g) == 1) == joined


@pytest.mark.parametrize("n, sines, joined", [(256, 8, True), (1024, 1, True), (1024, 2, False), (4096, 1, False)])
def test_runs_of_transcendental_functions_over_several_turns_stay_dispatches_of_their_own(n, sines, joined):
    """A program's one workgroup takes a run's n elements in n / 256 turns, evaluating its transcendental
    functions (float64 routines) in each: where the turns past the first take more than LIBM_EXTRA (4) of
    them an element, the run is a dispatch of its own, spread over the GPU (the sin chain of issue 15)."""
    def run(a, b):
        c = a
        for _ in range(sines):
            c = xp.sin(c) * 1.5
        return c * xp.vecdot(b, b)  # a map run, a dot product, a map run

    g = check(run, [on(data(n)), on(data(n, seed=1))], [data(n, seed=2), data(n, seed=3)])
    assert programs(g) == 1
    assert len(g._graph.steps) == (1 if joined else 2)


def test_dot_products_of_tiny_values_on_an_adapter_that_flushes_float32_subnormals(monkeypatch):
    """NVIDIA's Vulkan driver flushes float32 subnormals: its dot products sum in float64 from the operands'
    bits and narrow the result (about 1e-40 here) to float32 themselves; a program does the same."""
    monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    if not client.has_f64:
        pytest.skip("the adapter lacks shader-f64: no float64 sums")
    tiny = (data(400) * 1e-21).astype(np.float32)

    def run(x, y):
        d = xp.vecdot(x, y)
        return d, xp.vecdot(x * 0.5, y)

    g = check(run, [on(tiny), on(tiny[::-1].copy())], [tiny[::-1].copy(), tiny])
    assert len(g._graph.steps) == programs(g) == 1
    d = host(run(on(tiny), on(tiny[::-1].copy()))[0])
    assert d != 0 and abs(d) < np.finfo(np.float32).tiny  # a subnormal, not flushed


def test_the_jit_replays_programs():
    program = next(p for p in workloads.PROGRAMS if p.name == "cg")
    data_, params = program.make(np.random.default_rng(1), n=300, iters=4)
    f = xp.jit(lambda A, b: program.run(xp, A, b, **params))
    A = on(data_["A"])
    f(A, on(data_["b"]))
    b2 = data_["b"][::-1].copy()
    assert bits(f(A, on(b2))[0]) == bits(program.run(xp, A, on(b2), **params)[0])
