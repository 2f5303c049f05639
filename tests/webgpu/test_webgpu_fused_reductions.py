"""A captured reduction fused with the element-wise launches that produce its operand (_fuse_reduce): where
nothing else reads what they store, the reduction evaluates them per element instead of reading the
intermediate, and they leave the graph. Each replay (on new input data) equals eager, bit for bit; where
the intermediate is returned or read again, nothing is fused and the replay still equals eager."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp
from numr_array.backends import get_runtime

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu._fuse_reduce import _blocks  # noqa: E402

from .helpers import DEV, WIDEST, bits, on  # noqa: E402


def replayed(run, *args, dtype=np.float32, seed=0):
    """The dispatches of ``run(*args)`` captured, after checking that a replay on new data in the arguments
    equals eager on that data, bit for bit."""
    with xp.capture(device=DEV) as g:
        got = run(*args)
    rng = np.random.default_rng(seed)
    for a in args:
        a[...] = on(rng.standard_normal(a.shape).astype(dtype))
    g.replay()
    want = run(*args)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for a, b in zip(got, want):
        assert bits(a) == bits(b)
    return len(g._graph.steps)


def data(*shape, dtype=np.float32, seed=1):
    return on(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def test_views_split_into_blocks_of_the_producers_order():
    assert _blocks((6, 4), (4, 1), (24,)) == [[(6, 4)], [(4, 1)]]
    assert _blocks((4, 6), (1, 4), (6, 4)) == [[(4, 1)], [(6, 4)]]  # a transposed read
    assert _blocks((48, 8), (8, 1), (6, 8, 8)) == [[(6, 64), (8, 8)], [(8, 1)]]
    assert _blocks((6, 4), (4, 2), (24,)) is None  # every other element
    assert _blocks((4, 4), (6, 1), (24,)) is None  # not every element
    assert _blocks((3, 8), (8, 1), (4, 6)) is None  # blocks across the producer's dimensions


def test_kmeans_distances_are_one_dispatch():
    """``sum((X[:, None, :] - C[None]) ** 2, axis=-1)``: the broadcast difference and its square (n*k*d
    elements) are never stored; the reduction reads X and C."""
    X, C = data(300, 8), data(5, 8, seed=2)
    assert replayed(lambda X, C: xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1), X, C) == 1


def test_the_kmeans_program_replays_four_dispatches_less_per_iteration(monkeypatch):
    """Of the k-means iteration (distances, argmin, the one-hot mask, the counts, the centres), the
    distances' difference and square are fused with their sum, and with the argmin, the one-hot mask and the
    counts (_fuse_distances; the counts' sum over 512 rows one columns pass without them, their partial
    counts' sum a phase of the small program)."""
    from benchmarks import workloads
    from numr_array.backends.webgpu import _fuse_reduce
    X, C0 = data(512, 8), data(4, 8, seed=2)
    ids = on(np.arange(4, dtype=np.int32))
    run = lambda X, C0: workloads.kmeans(xp, X, C0, ids, iters=3)  # noqa: E731
    fused = replayed(run, X, C0)
    monkeypatch.setattr(_fuse_reduce, "plan", lambda *args: None)
    assert fused == replayed(run, X, C0) - 12


def staged(monkeypatch, run, *args, dtype=np.float32) -> list[int]:
    """How many elements of each leaf the fused reduction of ``run`` stages in workgroup memory, after
    checking (``replayed``) that its replays equal eager bit for bit."""
    from numr_array.backends.webgpu import _fuse_reduce
    plans = []
    real = _fuse_reduce.plan
    monkeypatch.setattr(_fuse_reduce, "plan", lambda *a: plans.append(real(*a)) or plans[-1])
    assert replayed(run, *args, dtype=dtype) == 1
    (p,) = [p for p in plans if p is not None]
    return sorted(n for _, n in p.staged.values())


def distances(X, C):
    return xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)


def test_small_operands_that_differ_between_outputs_are_staged(monkeypatch):
    """k-means' centres (k x d) are read from workgroup memory, X (n x d, and a scalar: the same for every
    output) from memory; an output count that leaves the last workgroup part idle, a d that is not a
    multiple of the padding's 32, centres read backwards (negative strides), an integer operand."""
    assert staged(monkeypatch, distances, data(300, 8), data(5, 8, seed=2)) == [40]
    assert staged(monkeypatch, distances, data(1000, 37), data(31, 37, seed=2)) == [31 * 37]
    assert staged(monkeypatch, lambda X, C: distances(X, xp.flip(C)), data(300, 8), data(5, 8, seed=2)) == [40]
    assert staged(monkeypatch, lambda X, C: distances(X, C[1:, ::-1]), data(300, 8), data(6, 8, seed=2)) == [40]
    ints = on(np.arange(24, dtype=np.int32).reshape(3, 8))
    Y = on(np.random.default_rng(3).integers(-30, 30, (300, 8)).astype(np.int32))
    assert staged(monkeypatch, lambda Y: xp.max(Y[:, None, :] - ints[None], axis=-1), Y, dtype=np.int32) == [24]


def test_staging_has_a_budget(monkeypatch):
    """One operand of at most STAGE_MOST elements, STAGE_TOTAL in all, fewer than a workgroup reads; the rest
    read from memory, the replay still eager's bits."""
    from numr_array.backends.webgpu._fuse_reduce import STAGE_MOST, STAGE_TOTAL
    d = 16
    big = STAGE_MOST // d + 1
    assert staged(monkeypatch, distances, data(300, d), data(big, d, seed=2)) == []
    k = STAGE_TOTAL // d // 2 + 1  # two operands of k x d: only one fits
    run = lambda X, C, D: xp.sum((X[:, None, :] - C[None]) * D[None], axis=-1)  # noqa: E731
    assert staged(monkeypatch, run, data(300, d), data(k, d, seed=2), data(k, d, seed=3)) == [k * d]
    # few outputs: X's two rows staged too; a reduction of length 1, whose workgroups read each element of C
    # (its first column, 797 elements from the first) at most once: X's rows only
    assert staged(monkeypatch, distances, data(2, 8), data(5, 8, seed=2)) == [16, 40]
    assert staged(monkeypatch, lambda X, C: xp.sum(X[:, None, :1] - C[None, :, :1], axis=-1),
                  data(2, 4), data(200, 4, seed=2)) == [5]


@pytest.mark.parametrize("name, want", [("distances", 4), ("five centres", 1), ("centres first", 4),
                                        ("every operand differs", 1), ("max of products", 4),
                                        ("integers", 4), ("a partial last workgroup", 4)])
def test_several_outputs_per_invocation_where_an_operand_is_theirs_in_common(name, want, monkeypatch):
    """Four consecutive outputs per invocation where some operand is the same for them (X for four
    centres), loaded once: only where the last kept dimension is a multiple of four and some other operand
    differs between them; each output's bits as eager's."""
    from numr_array.backends.webgpu import _fuse_reduce
    monkeypatch.setattr(_fuse_reduce, "PER_MIN_OUTPUTS", 1)
    pers = []
    real = _fuse_reduce.per
    monkeypatch.setattr(_fuse_reduce, "per", lambda p: pers.append(real(p)) or pers[-1])
    X, C = data(300, 9), data(8, 9, seed=2)
    Y = on(np.random.default_rng(3).integers(-30, 30, (300, 8)).astype(np.int32))
    ints = on(np.arange(32, dtype=np.int32).reshape(4, 8))
    run, args, dtype = {
        "distances": (distances, (X, C), np.float32),
        "five centres": (distances, (X, data(5, 9, seed=2)), np.float32),
        "centres first": (lambda X, C: xp.sum((C[:, None, :] - X[None]) ** 2, axis=-1), (X, C), np.float32),
        "every operand differs": (lambda X, C: xp.sum(X[:, None, :] * C[:, None, :], axis=-1), (X, data(300, 9)),
                                  np.float32),
        "max of products": (lambda X, C: xp.max(X[:, None, :] * C[None], axis=-1), (X, C), np.float32),
        "integers": (lambda Y: xp.sum(Y[:, None, :] - ints[None], axis=-1), (Y,), np.int32),
        "a partial last workgroup": (distances, (data(257, 9), C), np.float32),
    }[name]
    assert replayed(run, *args, dtype=dtype) == 1
    assert pers == [want]


def test_a_softmax_denominator_reads_the_maximum_and_its_input():
    """``sum(exp(A - max(A)), axis=-1)``: the max, then one dispatch (whose output may take the memory of
    the max, dead after it: each output reads only its own element of it)."""
    A = data(64, 300)
    assert replayed(lambda A: xp.sum(xp.exp(A - xp.max(A, axis=-1, keepdims=True)), axis=-1), A) == 2


def test_an_output_in_the_memory_of_an_operand_other_outputs_read_is_not_fused():
    """The capture's arena gives the output the block of ``b * 2.0``, dead after the product: every output
    reads all of it, so the fused reduction would overwrite what others still read."""
    a, b = data(2000, 2000), data(2000, seed=2)
    assert replayed(lambda a, b: xp.sum(a * (b * 2.0)[None, :], axis=1), a, b) == 3


@pytest.mark.parametrize("shape, dispatches", [((70, 50), 1), ((300, 400), 2)])
def test_a_sum_over_all_axes_of_a_product(shape, dispatches):
    """One pass (one workgroup), or partial sums over parts then their sum (the first pass fused)."""
    a, b = data(*shape), data(*shape, seed=2)
    assert replayed(lambda a, b: xp.sum(a * b), a, b) == dispatches


def test_a_long_reduction_in_parts_unrolled():
    """Few outputs, long rows: the template's four-at-a-time loop over the parts, its order kept."""
    a = data(6, 70000)
    assert replayed(lambda a: xp.sum(a * a - 1.0, axis=1), a) == 2


def test_broadcast_operands_over_every_reduced_axis():
    a, b = data(40, 5), data(30, 5, seed=2)
    assert replayed(lambda a, b: xp.sum(a[:, None, :] * b[None, :, :], axis=(1, 2)), a, b) == 1


def test_a_reduction_over_the_leading_axis_reads_the_producer_transposed():
    a, b = data(70, 50), data(70, 50, seed=2)
    assert replayed(lambda a, b: xp.sum(a * b, axis=0), a, b) == 1


@pytest.mark.parametrize("op", ["max", "min", "prod", "mean"])
def test_other_reductions(op):
    a, b = data(40, 30), data(40, 30, seed=2)
    fn = getattr(xp, op)
    n = replayed(lambda a, b: fn(a * 0.5 + b, axis=1), a, b)
    assert n == (2 if op == "mean" else 1)  # (mean: the sum, then its division)


def test_a_count_of_a_comparison():
    """Packed bool intermediates: any, and a sum of an int16 cast."""
    a, b = data(40, 30), data(40, 30, seed=2)
    assert replayed(lambda a, b: xp.any(a > b, axis=1), a, b) == 1
    assert replayed(lambda a, b: xp.sum(xp.astype(a > b, xp.int16), axis=1), a, b) == 1


@pytest.mark.parametrize("name", ["middle axis", "keepdims", "flipped operand", "transposed operand",
                                  "0-d operand", "a reshaped intermediate", "a length-1 reduced axis"])
def test_layouts(name):
    t, s = data(4, 5, 6), on(np.float32(3.0))
    run = {
        "middle axis": lambda t, s: xp.sum(t * 2.0, axis=1),
        "keepdims": lambda t, s: xp.sum(t * 2.0, axis=(0, 2), keepdims=True),
        "flipped operand": lambda t, s: xp.sum(xp.flip(t, axis=2) * t, axis=2),
        "transposed operand": lambda t, s: xp.sum(t[0].T * 3.0, axis=1),
        "0-d operand": lambda t, s: xp.sum(t * s),
        "a reshaped intermediate": lambda t, s: xp.sum(xp.reshape(t * t, (20, 6)), axis=0),
        "a length-1 reduced axis": lambda t, s: xp.sum(xp.reshape(t * t, (120, 1)), axis=1),
    }[name]
    assert replayed(run, t, s) == 1


@pytest.mark.parametrize("dtype", ["int8", "uint16", "complex64"])
def test_packed_and_complex_dtypes(dtype):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(5)
    if dt.kind == "c":
        host = (rng.standard_normal((30, 20)) + 1j * rng.standard_normal((30, 20))).astype(dt)
    else:
        host = rng.integers(0, 50, (30, 20)).astype(dt)
    a = on(host)
    with xp.capture(device=DEV) as g:
        got = (xp.sum(a * a, axis=1), xp.prod(a - 1, axis=0))
    assert len(g._graph.steps) == 2
    a[...] = on(host[::-1].copy())
    g.replay()
    for x, y in zip(got, (xp.sum(a * a, axis=1), xp.prod(a - 1, axis=0))):
        assert bits(x) == bits(y)


def test_the_widest_float():
    dt = np.dtype(WIDEST.name)
    a, b = data(40, 30, dtype=dt), data(30, dtype=dt, seed=2)
    assert replayed(lambda a, b: xp.sum((a - b) * (a + b) * 3.0, axis=1), a, b, dtype=dt) == 1


def test_an_intermediate_also_returned_is_not_fused():
    a, b = data(40, 30), data(40, 30, seed=2)
    assert replayed(lambda a, b: (a * b, xp.sum(a * b, axis=1)), a, b) == 2


def test_an_intermediate_read_by_a_later_launch_is_not_fused():
    a, b = data(40, 30), data(40, 30, seed=2)

    def run(a, b):
        t = a * b
        return xp.sum(t, axis=1) + t[:, 0]

    assert replayed(run, a, b) == 3


def test_a_part_of_the_intermediate_is_not_fused():
    a, b = data(40, 30), data(40, 30, seed=2)
    assert replayed(lambda a, b: xp.sum((a * b)[:, :10], axis=1), a, b) == 2


def test_two_reductions_of_one_intermediate_are_not_fused():
    a, b = data(40, 30), data(40, 30, seed=2)

    def run(a, b):
        t = a * b
        return xp.sum(t, axis=1), xp.max(t, axis=1)

    assert replayed(run, a, b) == 3


def test_the_jit_fuses_too():
    X, C = data(300, 8), data(5, 8, seed=2)
    f = xp.jit(lambda X, C: xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1))
    f(X, C)
    X2, C2 = data(300, 8, seed=3), data(5, 8, seed=4)
    assert bits(f(X2, C2)) == bits(xp.sum((X2[:, None, :] - C2[None, :, :]) ** 2, axis=-1))
    (entry,) = f._cache.values()
    assert len(entry.graph._graph.steps) == 1


def test_the_gpu_check_script_runs_and_passes(capsys):
    from benchmarks import fused_reduction
    assert fused_reduction.main(["--size", "tiny"]) == 0
    out = capsys.readouterr().out
    assert "dispatches per replay 1 fused, 2 not" in out and out.rstrip().endswith("PASS")


@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("k", [8, 33])
def test_subnormal_results_of_the_fused_operand_are_kept(reduction, k):
    """Squares that are float32 subnormals (1e-40, 4e-40; and 0 below them) reach a fused max or min whole: on
    an H200 (Vulkan) such values went through the group variant's workgroup array as floats and came out 0,
    while eager, reading them from memory, kept them. Replay equals eager and NumPy's float32 squares."""
    row = np.zeros((3, 1, k), np.float32) + (1.0 if reduction == "min" else 0.0)
    row[0, 0, 5], row[1, 0, 7], row[2, 0, 3], row[2, 0, 6] = 1e-20, -2e-20, 1e-30, -2e-20
    x = on(np.zeros_like(row))
    run = lambda t: getattr(xp, reduction)(t ** 2, axis=-1)
    with xp.capture(device=DEV) as g:
        got = run(x)
    x[...] = on(row)
    g.replay()
    want = getattr(np, reduction)((row.astype(np.float64) ** 2).astype(np.float32), axis=-1)
    assert bits(got) == bits(run(x)) == want.tobytes()
    assert len(g._graph.steps) == 1


@pytest.mark.parametrize("per", [1, 4])
def test_squares_the_fast_pass_cannot_give_are_computed_again(monkeypatch, per):
    """A fused reduction of squares runs x * x first and its outputs again with the exact square where some
    |x| lay in (2^-75, 2^-63) or was NaN. Here the fast square is made to give 1e30 for those: only an
    invocation that noted them and computed its outputs again gives eager's bits. Rows with no such value
    and rows with values below 2^-75 (whose squares are 0 both ways) keep the fast pass's sums."""
    from numr_array.backends.webgpu import _fuse_reduce

    monkeypatch.setattr(_fuse_reduce, "_FAST_SQUARE", _fuse_reduce._FAST_SQUARE.replace(
        "  return x * x;", "  if (a - 0x1a000001u < 0x05ffffffu || a > 0x7f800000u) { return 1e30; }\n"
        "  return x * x;"))
    monkeypatch.setattr(_fuse_reduce, "PER_MIN_OUTPUTS", 0 if per > 1 else 1 << 30)
    n, k, d = 64, 8, 4
    X, C = on(np.zeros((n, d), np.float32)), on(np.zeros((k, d), np.float32))
    run = lambda X, C: xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)  # noqa: E731
    with xp.capture(device=DEV) as g:
        got = run(X, C)
    assert len(g._graph.steps) == 1
    rng = np.random.default_rng(5)
    x = rng.standard_normal((n, d)).astype(np.float32)
    x[3, 1], x[17, 0], x[40, 2] = 3e-20, np.nan, -1e-25  # in the band, NaN, below it
    x[41, 3] = -np.inf
    X[...] = on(x)
    C[...] = on(rng.standard_normal((k, d)).astype(np.float32) * 0)
    g.replay()
    want = run(X, C)
    assert bits(got) == bits(want)
    host = got.to_device("cpu").numpy()
    assert np.isnan(host[17]).all() and (host[41] == np.inf).all() and np.isfinite(host[3]).all()


_FLUSHING_SQUARE = """  let s = x * x;
  let b = bitcast<u32>(s) & 0x7fffffffu;
  if (b < 0x00800000u) { return 0.0; }
  if (b > 0x7f800000u) { return bitcast<f32>(0x7fffffffu); }
  return s;"""
_SQUARE_EDGES = [0.0, -0.0, 1e-20, -3e-21, 1e-25, 2.0 ** -75, -(2.0 ** -63), 1.08e-19, 1e-40, np.inf, -np.inf,
                 np.nan, np.uint32(0x7FC01234).view(np.float32).item(), 1.0, -2.5, 1e20, 3e38,
                 # the band's edges, a float32 step inside: 2^-75 (1 + 2^-23) and 2^-63 (1 - 2^-24)
                 np.uint32(0x1A000001).view(np.float32).item(), -np.uint32(0x1FFFFFFF).view(np.float32).item()]


def _flushing_replay(run, x):
    """``run(t)`` captured, replayed on ``x`` with the fast square as a flushing adapter gives it."""
    from numr_array.backends.webgpu import _fuse_reduce

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_fuse_reduce, "_FAST_SQUARE", _fuse_reduce._FAST_SQUARE.replace("  return x * x;",
                                                                                   _FLUSHING_SQUARE))
        t = on(np.zeros_like(x))
        with xp.capture(device=DEV) as g:
            got = run(t)
        t[...] = on(x)
        g.replay()
    assert len(g._graph.steps) == 1
    return got, run(t)


@pytest.mark.parametrize("reduction", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("fill", [0.0, 1.0])
def test_each_edge_value_takes_the_right_pass(reduction, fill):
    """One value of _SQUARE_EDGES per row, among zeros (where a square that is 2^-149 or 0 shows in the sum)
    or ones, with the fast square as a flushing adapter gives it: each row equals eager's. A NaN with a payload
    comes out of the fast square as the adapter's one NaN, so its row too must take the exact pass."""
    x = np.full((len(_SQUARE_EDGES), 5), fill, np.float32)
    x[:, 2] = np.array(_SQUARE_EDGES, np.float32)
    got, want = _flushing_replay(lambda t: getattr(xp, reduction)(t ** 2, axis=-1), x)
    assert bits(got) == bits(want)


@given(st.sampled_from(["sum", "max", "min", "prod"]), st.integers(1, 24), st.integers(2, 32),
       st.lists(st.sampled_from(_SQUARE_EDGES) | st.floats(-1e3, 1e3, width=32), min_size=1, max_size=40),
       st.randoms(use_true_random=False))
def test_fast_squares_on_a_flushing_adapter_give_eager_s_bits(reduction, n, k, values, rnd):
    """The fast square as an adapter that flushes float32 subnormal results and returns one NaN gives it
    (NVIDIA's), against eager's exact squares (lavapipe keeps subnormals and NaN payloads): for any values,
    the fast pass notes every element whose square it would get wrong, so the replay equals eager."""
    x = np.array([rnd.choice(values) for _ in range(n * k)], np.float32).reshape(n, k)
    # one NaN payload per example: which of two different NaNs a sum of both carries is the compiler's choice,
    # and lavapipe's differs between a fused shader and eager's (docs/capture.md)
    nan = np.isnan(x)
    x[nan] = x[nan][:1].repeat(nan.sum())
    got, want = _flushing_replay(lambda t: getattr(xp, reduction)(t ** 2, axis=-1), x)
    assert bits(got) == bits(want)
