"""Fusion of captured element-wise ops on CUDA (backends/cuda/_direct_elementwise.FusedRun): math functions,
scalar operands, casts, where, clip, comparisons, tests and rounding become steps of one kernel, and a replay
gives the bits eager execution gives (NaN payloads and signed zeros included), on new input data too."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)

from numr_array.backends.cuda._direct_elementwise import FusedRun  # noqa: E402

from .capture_helpers import DEV, bits, client, on, record_runs, replay_equals_eager as _replay_equals_eager  # noqa: E402


@pytest.fixture
def runs(monkeypatch):
    """The step counts of the fused kernels launched (each launch of a FusedRun, eager or in a capture)."""
    return record_runs(monkeypatch, lambda run: len(run.steps))


def values(dtype: str, n: int, seed: int) -> np.ndarray:
    """Values of ``dtype`` with its special cases first: NaN, infinities, signed zeros, subnormals, extremes."""
    rng = np.random.default_rng(seed)
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
        a[:3] = [info.min, info.max, 0]
        a[3:40] = rng.integers(-5 if d.kind == "i" else 0, 6, 37)
        return a
    info = np.finfo(d)
    a = (rng.standard_normal(n) * 3).astype(d)
    a[n // 2:] *= d.type(1e3)
    a[:9] = [np.nan, np.inf, -np.inf, -0.0, 0.0, info.smallest_subnormal, -info.tiny, info.max, 1.0]
    a[9:12] = -np.frombuffer(np.array([0x7FC12345], np.uint32).tobytes(), np.float32)[0]  # a NaN payload
    return a


def replay_equals_eager(block, arrays, runs, fused_steps):
    """``capture_helpers.replay_equals_eager``, its capture having become kernels of ``fused_steps`` steps in all."""
    _replay_equals_eager(block, arrays, runs, lambda r: sum(r) == fused_steps)


def test_the_sin_chain_becomes_few_kernels_and_replays_bit_for_bit(runs):
    x = on(np.linspace(-3, 3, 1024, dtype=np.float32))
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)

    def chain(t):
        for _ in range(100):
            t = xp.multiply(xp.sin(t), 1.5)
        return t

    with xp.capture(device=DEV) as g:
        xp.add(chain(x), 0.0, out=out)
    assert sum(runs) == 201 and len(runs) == -(-201 // FusedRun.MAX_STEPS)
    np.testing.assert_array_equal(bits(out), bits(chain(x)))
    x[...] = on(np.linspace(-30, 30, 1024, dtype=np.float32))
    g.replay()
    np.testing.assert_array_equal(bits(out), bits(chain(x)))


UNARY_FLOAT = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
               "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "abs", "negative", "square",
               "floor", "ceil", "trunc", "round", "isnan", "isinf", "isfinite", "signbit"]
BINARY_FLOAT = ["add", "subtract", "multiply", "divide", "atan2", "hypot", "copysign", "nextafter", "maximum",
                "minimum", "equal", "less", "greater_equal"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_functions_fuse_with_eager_bits(dtype, runs):
    n = 4096
    a, b = values(dtype, n, 1), values(dtype, n, 2)

    def block(x, y):
        # each op reads the previous op's result from a register, as well as fresh operands
        t = xp.multiply(x, 0.75)
        res = [t]
        for name in UNARY_FLOAT:
            res.append(getattr(xp, name)(t))
        for name in BINARY_FLOAT:
            res.append(getattr(xp, name)(t, y))
            res.append(getattr(xp, name)(y, 2.5))
        return res

    replay_equals_eager(block, [a, b], runs, 1 + len(UNARY_FLOAT) + 2 * len(BINARY_FLOAT))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"])
def test_integer_ops_fuse_with_eager_bits(dtype, runs):
    a, b = values(dtype, 2048, 3), values(dtype, 2048, 4)
    signed = np.dtype(dtype).kind == "i"

    def block(x, y):
        t = xp.add(x, y)  # wraps
        res = [t, xp.multiply(t, 3), xp.maximum(t, y), xp.minimum(y, 7), xp.abs(t), xp.square(y),
               xp.bitwise_xor(t, y), xp.less(t, y), xp.floor(t), xp.clip(t, 2, 100), xp.clip(y, max=50)]
        if signed:
            res.append(xp.negative(t))
        return res

    replay_equals_eager(block, [a, b], runs, 12 if signed else 11)


def test_clip_where_and_casts_fuse_with_eager_bits(runs):
    a = values("float32", 4096, 5)
    b = values("float32", 4096, 6)
    c = values("bool", 4096, 7)

    def block(x, y, m):
        lo = xp.clip(x, -1.0, 2.0)
        res = [lo, xp.clip(x, min=0.5), xp.clip(x, max=-0.5), xp.clip(y, float("nan"), 1.0),
               xp.where(m, x, y), xp.where(xp.greater(x, y), 0.0, x),
               xp.astype(x, xp.int32), xp.astype(x, xp.uint8), xp.astype(x, xp.bool), xp.astype(x, xp.float64),
               xp.astype(m, xp.float32), xp.astype(xp.astype(x, xp.int16), xp.float32),
               xp.logical_not(m), xp.logical_and(m, xp.isnan(y))]
        return res

    replay_equals_eager(block, [a, b, c], runs, 17)


def test_float64_casts_and_mixed_results(runs):
    a = values("float64", 2048, 8)

    def block(x):
        f = xp.astype(x, xp.float32)
        return [f, xp.astype(f, xp.float64), xp.astype(x, xp.int64), xp.astype(x, xp.uint32),
                xp.exp(xp.astype(xp.astype(x, xp.int8), xp.float64))]

    replay_equals_eager(block, [a], runs, 7)


def test_large_arrays_fuse_too(runs):
    n = (1 << 20) + 4099
    a = values("float32", n, 9)

    def block(x):
        t = xp.sin(x)
        return [xp.add(xp.multiply(t, 2.0), 1.0)]

    replay_equals_eager(block, [a], runs, 3)


def test_other_kernels_end_a_run(runs):
    x = on(values("float32", 1024, 10))
    with xp.capture(device=DEV) as g:
        t = xp.sin(x) * 2.0
        s = xp.remainder(t, 3.0)  # not fused: ends the run of two
        r = xp.cos(s) + xp.sum(t)  # the reduction is its own kernel; the add of its 0-D result is a new run
    assert runs == [2, 1, 1]
    want = bits(xp.cos(xp.remainder(xp.sin(x) * 2.0, 3.0)) + xp.sum(xp.sin(x) * 2.0))
    np.testing.assert_array_equal(bits(r), want)
    g.replay()
    np.testing.assert_array_equal(bits(r), want)


def test_an_op_whose_operand_lies_partly_under_its_result_is_not_fused(runs):
    # y[1:] = y[:-1] + 100: element i reads what element i - 1 writes, so the op runs as CuPy's kernel
    # (which copies the operand first), not as a step of a fused run
    n = 4096
    x = on(np.arange(n, dtype=np.float32))
    y = on(np.arange(n, dtype=np.float32))
    with xp.capture(device=DEV) as g:
        t = xp.sin(x)  # a run in progress
        xp.add(y[:-1], 100.0, out=y[1:])
    want = np.concatenate([[0.0], np.arange(n - 1) + 100.0]).astype(np.float32)
    np.testing.assert_array_equal(to_np(y), want)
    assert runs == [1]
    y[...] = on(np.arange(n, dtype=np.float32))
    g.replay()
    np.testing.assert_array_equal(to_np(y), want)
    np.testing.assert_array_equal(bits(t), bits(xp.sin(x)))


def test_broadcasts_powers_and_row_reductions_fuse(runs):
    # the k-means distances: a broadcast difference, its square and the sum over the last axis are one kernel
    # (the row reduction's, each element computed by the steps); a replay gives eager's bits
    rng = np.random.default_rng(11)
    X, C = rng.standard_normal((3000, 32)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32)

    def block(x, c):
        d = xp.sum((x[:, None, :] - c[None, :, :]) ** 2, axis=-1)
        e = xp.exp(x * 0.5) / xp.sum(x, axis=1, keepdims=True)  # a sum of an input: the row kernel of its own
        return [d, e, xp.max(xp.exp(x - 1.0), axis=-1), xp.mean(xp.abs(x.T) * 3.0, axis=1)]

    # runs: the difference and its square (then the sum); x * 0.5 and exp (then the table's sum of x); the
    # division by the broadcast sum, x - 1 and exp (then the max); abs of x.T and the product (its mean over
    # rows of 3000 is CuPy's reduction: too few rows for the row kernel)
    replay_equals_eager(block, [X, C], runs, 9)
    assert runs == [2, 2, 3, 2]


def test_a_reduced_result_that_is_also_returned_is_stored(runs):
    rng = np.random.default_rng(13)
    X = rng.standard_normal((4096, 24)).astype(np.float32)

    def block(x):
        d2 = (x - 0.5) ** 2
        return [d2, xp.sum(d2, axis=-1)]

    replay_equals_eager(block, [X], runs, 2)


def test_row_reductions_of_rows_the_lanes_do_not_divide(runs):
    # rows of 37 folded by 16 lanes: two columns each, then five lanes take a third
    rng = np.random.default_rng(17)
    Y = rng.standard_normal((2500, 37)).astype(np.float32)

    def block(y):
        return [xp.sum(xp.square(y - 0.25), axis=-1), xp.max(xp.abs(y) * 2.0, axis=1)]

    replay_equals_eager(block, [Y], runs, 4)


def test_dead_results_are_not_stored(monkeypatch):
    # a run's results that no tensor holds when it is launched are computed, not stored
    seen = []
    launch_run = client._direct.launch_run
    monkeypatch.setattr(client._direct, "launch_run",
                        lambda run, dead=frozenset(): (seen.append([st[2] in dead for st in run.steps]),
                                                       launch_run(run, dead)))
    x = on(np.linspace(-3, 3, 5000, dtype=np.float32))

    def f(t):
        return xp.sum(xp.sin(t) * 2.0 + 1.0, axis=0)  # (all axes: not a row reduction; the run ends at it)

    with xp.capture(device=DEV) as g:
        s = f(x)
    # sin's block, free once the product is made, holds the sum's operand (alive as the run is launched);
    # the product's died: its store is dropped
    assert seen == [[False, True, False]]
    want = xp.sum(xp.sin(x) * 2.0 + 1.0, axis=0)
    assert to_np(s).tobytes() == to_np(want).tobytes()
    x[...] = on(np.linspace(-1, 1, 5000, dtype=np.float32))
    g.replay()
    assert to_np(s).tobytes() == to_np(xp.sum(xp.sin(x) * 2.0 + 1.0, axis=0)).tobytes()


def test_a_view_of_a_result_the_run_writes_starts_a_new_run(runs):
    # u = t.T + 1 reads t transposed: element i of u is element j != i of t, which another thread writes
    a = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    x = on(a)
    with xp.capture(device=DEV) as g:
        t = x * 2.0
        u = t.T + 1.0
    assert runs == [1, 1]
    np.testing.assert_array_equal(to_np(u), (a * 2).T + 1)
    x[...] = on(a + 1)
    g.replay()
    np.testing.assert_array_equal(to_np(u), ((a + 1) * 2).T + 1)


def test_one_element_steps_and_element_operands_fuse(runs):
    # a conjugate-gradient update: the 0-D ratios are steps of the runs that use them (every thread computes
    # them, thread 0 stores them), and the 0-D operands are read by every thread
    rng = np.random.default_rng(12)
    n = 3000

    def block(x, r, p, ap, rs, pap):
        alpha = rs / pap
        x2 = x + alpha * p
        r2 = r - alpha * ap
        rs_new = xp.sum(r2 * r2)  # its own kernel: ends the run
        beta = rs_new / rs
        return [alpha, x2, r2, rs_new, beta, r2 + beta * p]

    arrays = [rng.standard_normal(n).astype(np.float32) for _ in range(4)] + \
        [rng.uniform(1, 2, 1).astype(np.float32) for _ in range(2)]
    # alpha, alpha * p, x + ..., alpha * ap, r - ..., r2 * r2; the sum; beta, beta * p, r2 + ...
    replay_equals_eager(block, arrays, runs, 6 + 3)


def test_a_one_element_result_over_memory_other_threads_read_starts_a_new_run(runs):
    # y = x * s reads s (0-D) in every thread; s += 1 then writes it from thread 0 only: fused, a thread could
    # read the new s, so the add starts a run of its own, of one thread (it reads s, then rewrites it), which
    # z, over many elements, may not join
    x = on(np.arange(2048, dtype=np.float32))
    s = on(np.float32(3.0))
    with xp.capture(device=DEV) as g:
        y = x * s
        xp.add(s, 1.0, out=s)
        z = x * s
    assert runs == [1, 1, 1]
    np.testing.assert_array_equal(to_np(y), np.arange(2048, dtype=np.float32) * 3)
    np.testing.assert_array_equal(to_np(z), np.arange(2048, dtype=np.float32) * 4)
    g.replay()  # s was 4: y = 4x, s = 5, z = 5x
    np.testing.assert_array_equal(to_np(y), np.arange(2048, dtype=np.float32) * 4)
    np.testing.assert_array_equal(to_np(z), np.arange(2048, dtype=np.float32) * 5)


def test_a_run_of_one_thread_that_rewrites_what_it_read_stays_one_thread(runs):
    # one-element steps alone run in one thread, where s *= 2 after reading s is safe; a step over many
    # elements may not join them then (its other threads would read s while thread 0 rewrites it)
    x = on(np.arange(1024, dtype=np.float32))
    s = on(np.float32(1.5))
    with xp.capture(device=DEV) as g:
        t = s + 1.0
        xp.multiply(s, t, out=s)
        y = x * s
    assert runs == [2, 1]
    np.testing.assert_array_equal(to_np(s), np.float32(3.75))
    np.testing.assert_array_equal(to_np(y), np.arange(1024, dtype=np.float32) * np.float32(3.75))
    g.replay()
    want = np.float32(3.75) * np.float32(4.75)
    np.testing.assert_array_equal(to_np(s), want)
    np.testing.assert_array_equal(to_np(y), np.arange(1024, dtype=np.float32) * want)


def test_an_element_of_a_result_the_run_writes_is_not_read_across_threads(runs):
    # u = x * t[5] reads element 5 of t, which thread 5 of the run writes: u starts a new run
    x = on(np.arange(1, 4097, dtype=np.float32))
    with xp.capture(device=DEV) as g:
        t = x * 2.0
        u = x * t[5]
    assert runs == [1, 1]
    want = np.arange(1, 4097, dtype=np.float32) * np.float32(12.0)
    np.testing.assert_array_equal(to_np(u), want)
    x[...] = on(np.arange(2, 4098, dtype=np.float32))
    g.replay()
    np.testing.assert_array_equal(to_np(u), np.arange(2, 4098, dtype=np.float32) * np.float32(14.0))
