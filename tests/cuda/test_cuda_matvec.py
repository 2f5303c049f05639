"""Products of a thin matrix with a vector on CUDA (backends/cuda/_matvec): ``X @ w`` and ``X.T @ v`` as one pass over
X's rows, eager and in a capture, where a run ``X.T @ f(X @ w)`` (a gradient of a linear model) is one kernel whose
replay gives eager's bits."""

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.cuda
if get_runtime("cuda") is None:
    pytest.skip("no CUDA device: CuPy is missing or finds no GPU", allow_module_level=True)

from .capture_helpers import DEV, bits, client, on, record_runs, replay_equals_eager  # noqa: E402


@pytest.fixture
def runs(monkeypatch):
    """The step counts of the fused kernels launched (a pass's last block's included), and whether each was a
    pass over a matrix's rows."""
    return record_runs(monkeypatch, lambda run: (len(run.steps) + len(run.after), run.matrix is not None))


SHAPES = [(1, 1), (7, 5), (3, 33), (1000, 64), (4099, 100), (20000, 128), (100_003, 16)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_products_match_numpy(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    X = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal(shape[1]).astype(dtype)
    v = rng.standard_normal(shape[0]).astype(dtype)
    x = on(X)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    scale_rows = np.abs(X) @ np.abs(w)  # the error bound of a dot product grows with the sum of |terms|
    scale_cols = np.abs(X).T @ np.abs(v)
    got_rows, got_cols = to_np(x @ on(w)), to_np(x.T @ on(v))
    assert got_rows.dtype == dtype and got_cols.dtype == dtype
    assert np.all(np.abs(got_rows - X.astype(np.float64) @ w) <= rtol * scale_rows + 1e-30)
    assert np.all(np.abs(got_cols - X.astype(np.float64).T @ v) <= rtol * scale_cols + 1e-30)


@pytest.mark.parametrize("shape", [(5000, 64), (300, 7)])
def test_the_pass_runs_them_and_repeats_its_bits(shape):
    # the Python path's launcher takes both forms (the C path plans the same kernel); the blocks' partial sums
    # are summed in a fixed order by whichever block ends last, so repeated calls give the same bits
    rng = np.random.default_rng(3)
    X = rng.standard_normal(shape).astype(np.float32)
    x, w, v = on(X), on(rng.standard_normal(shape[1]).astype(np.float32)), on(rng.standard_normal(shape[0]).astype(np.float32))
    for a, b, n in ((x, w, shape[0]), (x.T, v, shape[1])):
        o = xp.empty((n,), dtype=xp.float32, device=DEV)
        assert client._direct.try_matvec((a, b), (o,))
        first = bits(o)
        for _ in range(5):
            assert client._direct.try_matvec((a, b), (o,))
            np.testing.assert_array_equal(bits(o), first)
        np.testing.assert_array_equal(bits(a @ b), first)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("d", [64, 32, 8])
def test_a_matrix_off_16_bytes_gives_the_bits_of_an_aligned_one(dtype, d):
    # where d is a multiple of a 16-byte load's elements times the lanes, a lane's columns are runs loaded 16
    # bytes at a time from an aligned X, one by one from any other: the same columns in the same order
    rng = np.random.default_rng(d)
    n = 3001
    X = rng.standard_normal((n, d)).astype(dtype)
    w, v = rng.standard_normal(d).astype(dtype), rng.standard_normal(n).astype(dtype)
    flat = on(np.concatenate([np.zeros(1, dtype), X.ravel()]))
    off = xp.reshape(flat[1:], (n, d))  # 4 or 8 bytes past an aligned start
    assert (off._buf.handle.ptr + off._offset * off._dtype.itemsize) % 16 != 0
    x = on(X)
    np.testing.assert_array_equal(bits(off @ on(w)), bits(x @ on(w)))
    np.testing.assert_array_equal(bits(off.T @ on(v)), bits(x.T @ on(v)))
    np.testing.assert_allclose(to_np(off @ on(w)), X.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_other_operands_are_not_the_pass():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((500, 129)).astype(np.float32)  # wider than MAX_COLS
    x, w = on(X), on(rng.standard_normal(129).astype(np.float32))
    o = xp.empty((500,), dtype=xp.float32, device=DEV)
    assert not client._direct.try_matvec((x, w), (o,))
    np.testing.assert_allclose(to_np(x @ w), X @ to_np(w), rtol=1e-4, atol=1e-4)
    y = on(X[:, :64].copy())
    assert not client._direct.try_matvec((y[::2], w[:64]), (o[:250],))  # a strided matrix
    assert not client._direct.try_matvec((y, xp.astype(w[:64], xp.float64)), (o,))  # mixed dtypes
    assert not client._direct.try_matvec((y, w[:64]), (o[::2],))  # a strided result
    np.testing.assert_allclose(to_np(y[::2] @ w[:64]), X[::2, :64] @ to_np(w[:64]), rtol=1e-4, atol=1e-4)


def test_a_result_over_an_operand_is_refused_and_still_right():
    rng = np.random.default_rng(6)
    V = rng.standard_normal(64).astype(np.float32)
    X = rng.standard_normal((64, 64)).astype(np.float32)
    x, v = on(X), on(V)
    assert not client._direct.try_matvec((x, v), (v,))
    xp.matmul(x, v, out=v)
    np.testing.assert_allclose(to_np(v), X @ V, rtol=1e-5, atol=1e-5)


def logreg_step(x, w, y):
    return [w - 0.01 * (x.T @ (1.0 / (1.0 + xp.exp(-(x @ w))) - y))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,d", [(20000, 64), (777, 5), (40000, 128)])
def test_a_linear_models_gradient_is_one_pass(dtype, n, d, runs):
    # X @ w, the sigmoid and the residual (6 steps per row), X.T @ r and the update (3 steps of the last block):
    # one kernel reading X once
    rng = np.random.default_rng(n + d)
    X = rng.standard_normal((n, d)).astype(dtype)
    w = (rng.standard_normal(d) * 0.1).astype(dtype)
    y = (rng.random(n) < 0.5).astype(dtype)
    replay_equals_eager(logreg_step, [X, w, y], runs, lambda r: r == [(9, True)])


def test_an_update_in_place_of_the_vector_the_rows_read_is_a_step_of_the_last_block(runs):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((30000, 48)).astype(np.float32)
    W = (rng.standard_normal(48) * 0.1).astype(np.float32)
    Y = (rng.random(30000) < 0.5).astype(np.float32)
    x, y, w = on(X), on(Y), on(W)

    def descend():
        for _ in range(3):
            g = x.T @ (1.0 / (1.0 + xp.exp(-(x @ w))) - y)
            xp.subtract(w, 0.01 * g, out=w)  # w: what every row read, written once every row is summed

    descend()
    eager = bits(w)
    w[...] = on(W)
    with xp.capture(device=DEV) as graph:
        descend()
    assert runs == [(9, True)] * 3
    np.testing.assert_array_equal(bits(w), eager)
    w[...] = on(W)
    graph.replay()
    np.testing.assert_array_equal(bits(w), eager)


def test_a_steps_results_that_die_in_the_next_step_are_not_stored(monkeypatch):
    # p (the sigmoid) is alive until the next step makes its own: a run is launched once the next one is
    # complete, by when the step's row results have died, so its kernel stores none of them (the last step's
    # p, alive as the capture ends, and every step's w are stored)
    import re
    stores = []
    launch_run = client._direct.launch_run

    def spy(run, dead=frozenset()):
        stores.append(len(re.findall(r"if \(gl_ == 0\) \(\(\w+\*\)p\d+\)\[i\] = s\d+;", run.kernel(dead)[0])))
        launch_run(run, dead)
    monkeypatch.setattr(client._direct, "launch_run", spy)
    rng = np.random.default_rng(21)
    X = rng.standard_normal((20000, 64)).astype(np.float32)
    Y = (rng.random(20000) < 0.5).astype(np.float32)
    W = np.zeros(64, np.float32)
    x, y = on(X), on(Y)

    def descend(w):
        p = None
        for _ in range(4):
            p = 1.0 / (1.0 + xp.exp(-(x @ w)))
            w = w - 0.01 * (x.T @ (p - y))
        return w, p

    want_w, want_p = (bits(t) for t in descend(on(W)))
    w0 = on(W)
    with xp.capture(device=DEV) as graph:
        w, p = descend(w0)
    assert len(stores) == 4 and stores[:3] == [0, 0, 0] and stores[3] >= 1, stores
    np.testing.assert_array_equal(bits(w), want_w)
    np.testing.assert_array_equal(bits(p), want_p)
    x[...] = on(X[::-1].copy())
    graph.replay()
    np.testing.assert_array_equal(bits(w), bits(descend(on(W))[0]))


def test_a_pass_with_a_stored_result_and_no_head_or_no_tail(runs):
    rng = np.random.default_rng(8)
    X = rng.standard_normal((6000, 40)).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    v = rng.standard_normal(6000).astype(np.float32)

    def block(x, w, v):
        e = xp.exp(x @ w * 0.1)  # stored (returned), and exp(v) joins its run: the same rows
        g = x.T @ xp.exp(v * 0.5)
        h = xp.sin(x @ w)  # a head and a step, no tail (the cumulative sum is not fused)
        k = x.T @ (xp.cumulative_sum(v) - 1.0)  # a step and a tail, no head
        return [e, g, h, k]

    replay_equals_eager(block, [X, w, v], runs, lambda r: r == [(6, True), (2, True), (2, True)])


def test_a_step_writing_the_matrix_or_a_product_over_the_vector_is_not_fused(runs):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    W = rng.standard_normal(8).astype(np.float32)
    x, w = on(X), on(W)
    flat = xp.reshape(x, (-1,))
    with xp.capture(device=DEV) as g:
        z = x @ w
        xp.exp(z, out=flat[:3000])  # rows other warps still read: a run of its own
        r = (x @ w) * 2.0
        xp.matmul(x.T, r, out=w)  # w is what the head read: the pass stores r, the product is eager's kernel
    assert runs == [(1, True), (1, False), (2, True)]
    Xn = X.copy()
    Xn.reshape(-1)[:3000] = np.exp((X.astype(np.float64) @ W).astype(np.float32))
    rn = (Xn.astype(np.float64) @ W).astype(np.float32) * np.float32(2)
    for _ in range(2):  # the capture's own run, then a replay on the original data
        np.testing.assert_allclose(to_np(x), Xn, rtol=1e-4, atol=1e-6)
        err = np.abs(to_np(w) - Xn.T.astype(np.float64) @ rn)
        assert np.all(err <= 1e-4 * (np.abs(Xn).T.astype(np.float64) @ np.abs(rn))), err
        x[...] = on(X)
        w[...] = on(W)
        g.replay()
