"""Tall, thin matrix-vector products as one pass over X's rows (_matvec): X @ w and X.T @ v against NumPy, with
the float64-from-bits path of adapters that flush float32 subnormals forced; a captured X @ w, map run and
X.T @ v of what the run stored (a logistic regression step) as one dispatch whose replays, on new data, equal
eager bit for bit; and the captures that must not become one pass, replayed as eager runs them."""

from __future__ import annotations

import numpy as np
import pytest

import numr_array as xp
from numr_array.backends import get_runtime

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import _matvec  # noqa: E402
from numr_array.backends.webgpu._client import WebGPUClient  # noqa: E402

from benchmarks import workloads  # noqa: E402

from .helpers import DEV, bits, host, needs_dtype, on  # noqa: E402

client = xp._device.parse_device(DEV).client
FLOATS = [pytest.param(np.float32, id="float32"), pytest.param(np.float64, id="float64")]


@pytest.fixture(params=[False, True], ids=["as-adapter", "flushing"])
def flushing(request, monkeypatch):
    """The adapter as it is, and (where it has float64) as one that flushes float32 subnormals: float32
    products then run in float64 from the operands' bits."""
    if request.param:
        needs_dtype(xp.float64)
        monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    return request.param


def passes(kind: str) -> int:
    """How many pass pipelines of ``kind`` ("rows", "cols", "fused") have been built."""
    return sum(1 for k in client._pipelines if k[:2] == ("matvec", kind))


def fused(g) -> int:
    """How many of the graph's dispatches are fused passes."""
    return len(fused_bindings(g))


def fused_bindings(g) -> list[int]:
    """The storage bindings of each of the graph's fused passes."""
    mine = {id(p) for k, p in client._pipelines.items() if k[:2] == ("matvec", "fused")}
    return [step[0].nbind for step in g._graph.steps if id(step[0]) in mine]


def need(dtype) -> None:
    if dtype == np.float64:
        needs_dtype(xp.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n,d", [(1024, 1), (1500, 9), (3001, 7), (4099, 64), (2000, 128), (5000, 33)])
def test_products_match_numpy(dtype, n, d, flushing):
    """Both orientations, with columns that do not fill the last of a row's lanes (9, 7, 33), X at an
    offset in its buffer (rows of a larger array), and the results' sums against float64 NumPy."""
    need(dtype)
    rng = np.random.default_rng(n + d)
    big = rng.standard_normal((n + 3, d)).astype(dtype)
    X, w, v = big[3:], rng.standard_normal(d).astype(dtype), rng.standard_normal(n).astype(dtype)
    Xd = on(big)[3:]
    got_r, got_c = host(Xd @ on(w)), host(Xd.T @ on(v))
    tol = 2e-6 if dtype == np.float32 else 1e-13
    want_r, want_c = X.astype(np.float64) @ w, X.T.astype(np.float64) @ v
    # (each sum within a few roundings of its terms' magnitudes)
    assert np.all(np.abs(got_r - want_r) <= tol * (np.abs(X) @ np.abs(w).astype(np.float64)))
    assert np.all(np.abs(got_c - want_c) <= tol * (np.abs(X.T) @ np.abs(v).astype(np.float64)))
    assert got_r.dtype == got_c.dtype == dtype
    assert passes("rows") and passes("cols")


def test_short_or_wide_matrices_stay_rowdot():
    """Fewer than MIN_ROWS rows or more than MAX_COLS columns: rowdot's kernels (whose one-workgroup launches
    join a capture's programs), not a pass."""
    assert _matvec.form(client, *(on(np.zeros((100, 8), np.float32)),) * 3, [], (100, 8, 0, 1), (8, 1, 1)) is None
    X = on(np.zeros((2048, 200), np.float32))
    assert _matvec.form(client, X, X, X, [], (2048, 200, 0, 1), (200, 1, 1)) is None
    assert _matvec.form(client, X, X, X, [], (2048, 64, 0, 1), (64, 1, 1)) == ("rows", 2048, 64)
    assert _matvec.form(client, X, X, X, [], (64, 1, 0, 1), (2048, 64, 1)) == ("cols", 2048, 64)


def test_float32_subnormal_results_kept_on_a_flushing_adapter(monkeypatch):
    """Products exactly representable as float32 subnormals come back as those subnormals (the float64 path
    from the operands' bits, narrowed to float32 bits)."""
    needs_dtype(xp.float64)
    monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    n, d = 2048, 16
    tiny = np.float32(3e-41)  # a float32 subnormal
    X = np.zeros((n, d), np.float32)
    X[:, 3] = tiny
    X[7, 5] = 2 * tiny
    w = np.zeros(d, np.float32)
    w[3], w[5] = 1, 1
    v = np.zeros(n, np.float32)
    v[7] = 1
    got_r, got_c = host(on(X) @ on(w)), host(on(X).T @ on(v))
    want_r = np.full(n, tiny, np.float32)
    want_r[7] = 3 * tiny
    want_c = np.zeros(d, np.float32)
    want_c[3], want_c[5] = tiny, 2 * tiny
    assert bits(on(got_r)) == want_r.tobytes() and bits(on(got_c)) == want_c.tobytes()


@pytest.mark.parametrize("d", [64, 9])
def test_one_subnormal_among_normal_values_of_a_row(d, monkeypatch):
    """A row's lane converts its values to float64 directly where they are all normal, from their bits
    otherwise: a subnormal among normal values (no zeros) still comes back (on a flushing adapter, the direct
    conversion gives 0)."""
    needs_dtype(xp.float64)
    monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    n = 2048
    rng = np.random.default_rng(d)
    X = (rng.random((n, d)) + 0.5).astype(np.float32)
    tiny = np.float32(3e-41)
    X[5, 3] = tiny
    X[700, d - 1] = -tiny
    w = np.zeros(d, np.float32)
    w[3] = 1
    e = np.zeros(n, np.float32)
    e[5] = 1
    assert host(on(X) @ on(w))[5].tobytes() == tiny.tobytes()
    assert host(on(X).T @ on(e)).tobytes() == X[5].tobytes()
    w[3], w[d - 1] = 0, 1
    assert host(on(X) @ on(w))[700].tobytes() == (-tiny).tobytes()


@pytest.mark.parametrize("d", [64, 9])
def test_normal_products_that_cancel_to_a_subnormal(d, monkeypatch):
    """Products of normal floats whose sum cancels below the smallest normal come back as that subnormal on a
    flushing adapter (the float64 path: float32 arithmetic would give 0 there; with 64 columns, columns 0 and 1
    are one lane's, with 9 two lanes', summed by the row's tree)."""
    needs_dtype(xp.float64)
    monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    n, small = 2048, 2.0 ** -63
    X = np.zeros((n, d), np.float32)
    X[9, 0], X[9, 1], X[10, 0] = small * (1 + 2.0 ** -23), -small, -small
    w = np.zeros(d, np.float32)
    w[0] = w[1] = small
    v = np.zeros(n, np.float32)
    v[9] = v[10] = small
    want_r = (X.astype(np.float64) @ w).astype(np.float32)
    want_c = (X.T.astype(np.float64) @ v).astype(np.float32)
    assert want_r[9] == want_c[0] == np.float32(2.0 ** -149) and want_r[10] == want_c[1] == -np.float32(2.0 ** -126)
    assert host(on(X) @ on(w)).tobytes() == want_r.tobytes()
    assert host(on(X).T @ on(v)).tobytes() == want_c.tobytes()


@pytest.mark.parametrize("later", [0.0, 1.0])
@pytest.mark.parametrize("fused_run", [False, True], ids=["eager", "captured"])
def test_a_lane_keeps_its_float64_sums_after_an_unsafe_operand(fused_run, later, monkeypatch):
    """A lane that met an operand that could make a subnormal (row 0: v a subnormal) adds its later rows as
    float64 sums kept in its registers (``keep``) too, though their operands are safe (row 32, the same lane's
    next turn with 64 columns): float32's fma there would read the kept sums' bits as float32 values (and a
    subnormal as 0 on a flushing adapter). Eagerly, and in a captured X @ w, map run and X.T @ v."""
    needs_dtype(xp.float64)
    monkeypatch.setattr(WebGPUClient, "flushes_f32_subnormals", property(lambda self: True))
    n, d = 2048, 64
    tiny = np.float32(3e-41)
    X = np.ones((n, d), np.float32)
    v = np.zeros(n, np.float32)
    v[0], v[32] = tiny, later
    want = np.full(d, np.float32(np.float64(tiny) + later), np.float32)
    if not fused_run:
        assert bits(on(X).T @ on(v)) == want.tobytes()
        return
    Xd, vd, w = on(X), on(v), on(np.zeros(d, np.float32))
    with xp.capture(device=DEV) as g:
        z = Xd @ w
        r = xp.where(z > 1.0, z, vd)  # (v's bits again, through the run: z is 0)
        out = Xd.T @ r
    g.replay()
    assert fused(g) == 1 and bits(out) == want.tobytes()


@pytest.mark.parametrize("n, d", [(5000, 64), (3001, 128)])
def test_captured_logistic_regression_steps_are_one_pass_each(n, d, flushing):
    """benchmarks/workloads.py's logreg (float32), three steps captured: each step's X @ w, sigmoid and
    X.T @ (p - y) is one fused pass, then one program of one workgroup summing the pass's partial sums and
    updating w (_fuse_small); replays on new data equal eager bit for bit, X and y unchanged. (With 128
    columns on a flushing adapter the capture arena gives the run's temporaries memory that the next
    pass's partial sums take: those stores are dead, so the pass leaves them out and still fuses.)"""
    dtype = np.float32
    inputs, kw = workloads.make_logreg(np.random.default_rng(1), n, d, 3)
    names = ("X", "y", "w0")
    args = [on(inputs[k].astype(dtype)) for k in names]
    with xp.capture(device=DEV) as g:
        got = workloads.logreg(xp, *args, **kw)
    # (X, w, y and the partial sums: the dot products and p - y, which nothing reads after a pass, unstored)
    assert fused_bindings(g) == [4, 4, 4] and len(g._graph.steps) == 6
    for seed in (2, 3):
        new, _ = workloads.make_logreg(np.random.default_rng(seed), n, d, 3)
        for a, k in zip(args, names):
            a[...] = on(new[k].astype(dtype))
        g.replay()
        replayed = [bits(t) for t in list(got) + args]
        for a, k in zip(args, names):
            a[...] = on(new[k].astype(dtype))
        want = workloads.logreg(xp, *args, **kw)
        assert replayed == [bits(t) for t in list(want) + args]


def _replays_as_eager(run, args: list, new: list) -> object:
    with xp.capture(device=DEV) as g:
        got = run(*args)
    for a, n in zip(args, new):
        a[...] = on(n)
    g.replay()
    replayed = [bits(t) for t in list(got) + args]
    for a, n in zip(args, new):
        a[...] = on(n)
    assert replayed == [bits(t) for t in list(run(*args)) + args]
    return g


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_store_of_the_run_is_kept(dtype, flushing):
    """What the run computes on the way (kept as a result) is written as eagerly, in float32 and float64
    (whose run here is arithmetic: float64's exp is not one map launch)."""
    need(dtype)
    rng = np.random.default_rng(4)
    n, d = 3000, 24
    data = lambda: [rng.standard_normal((n, d)).astype(dtype), rng.standard_normal(d).astype(dtype),
                    rng.random(n).astype(dtype)]

    def step(X, w, y):
        z = X @ w
        p = 1.0 / (1.0 + xp.exp(-z)) if dtype == np.float32 else z * 0.25 + 0.5
        return p, X.T @ (p - y)

    g = _replays_as_eager(step, [on(a) for a in data()], data())
    assert fused(g) == 1


@pytest.mark.parametrize("read", ["z", "v", "both", "z-later", "v-in-place"])
def test_stores_read_after_the_pass_are_kept(read, flushing):
    """The dot products z and the run's v = p - y, which the pass hands over in registers, are still stored
    where something reads them after it: returned, read by a later launch, or v stored into memory the
    program holds (an out= view); each stored one binds its memory. Replays on new data equal eager."""
    rng = np.random.default_rng(8)
    n, d = 3000, 16
    data = lambda: [rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal(d).astype(np.float32),
                    rng.random(n).astype(np.float32), np.zeros(n, np.float32)]

    def step(X, w, y, held):
        z = X @ w
        p = 1.0 / (1.0 + xp.exp(-z))
        if read == "v-in-place":
            xp.subtract(p, y, out=held)
            return (X.T @ held,)
        v = p - y
        g = X.T @ v
        if read == "z":
            return g, z
        if read == "v":
            return g, v
        if read == "both":
            return g, v, z
        return g, xp.sum(z * 2.0)

    g = _replays_as_eager(step, [on(a) for a in data()], data())
    assert fused_bindings(g) == [{"z": 5, "v": 5, "both": 6, "z-later": 5, "v-in-place": 5}[read]]


@pytest.mark.parametrize("case", ["shifted", "other-vector", "writes-w", "other-matrix"])
def test_captures_that_are_not_one_pass(case):
    """A run reading the dot products at another element (z[1:]), X.T @ v of a vector the run did not store,
    a run writing w, X.T @ v of another matrix: separate launches, replayed as eager runs them."""
    rng = np.random.default_rng(5)
    n, d = 2500, 16
    data = lambda: [rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal(d).astype(np.float32),
                    rng.standard_normal(n).astype(np.float32), rng.standard_normal((n, d)).astype(np.float32)]

    def step(X, w, y, X2):
        z = X @ w
        if case == "shifted":
            v = xp.concat([z[:1], z[1:] - z[:-1]])
            return (X.T @ v,)
        if case == "other-vector":
            u = xp.exp(-z)
            return u, X.T @ y
        if case == "writes-w":
            v = z * 2.0
            w[...] = w + 1.0
            return (X.T @ v,)
        return (X2.T @ (z * 2.0),)

    g = _replays_as_eager(step, [on(a) for a in data()], data())
    assert fused(g) == 0


@pytest.mark.parametrize("d", [7, 16, 33, 64, 128])
def test_rows_summed_by_subgroup_shuffles_give_the_workgroup_trees_bits(d, flushing, monkeypatch):
    """Where a row's lanes fit in a subgroup (client.subgroup_rows), they are summed by shuffles, and the column
    trees' levels that fit in one go by shuffles; the trees are those in workgroup memory, so X @ w, X.T @ v
    and a captured logistic regression step (the fused pass) have the same bits either way."""
    rng = np.random.default_rng(d)
    n = 3001
    X, w, v = (rng.standard_normal(s).astype(np.float32) for s in ((n, d), d, n))

    def results() -> list:
        Xd = on(X)
        inputs, kw = workloads.make_logreg(np.random.default_rng(d), n, d, 2)
        args = [on(inputs[k]) for k in ("X", "y", "w0")]
        with xp.capture(device=DEV) as g:
            got = workloads.logreg(xp, *args, **kw)
        g.replay()
        assert fused(g) == 2
        shuffled = {k[2] for k, p in client._pipelines.items() if k[:2] == ("matvec", "fused")
                    and any(p is step[0] for step in g._graph.steps) and "subgroupShuffleXor" in k[2]}
        return [bits(Xd @ on(w)), bits(Xd.T @ on(v)), bits(got[0]), bool(shuffled)]

    with_shuffles = results()
    L, sg = _matvec.lanes(d), client.subgroup_rows
    assert with_shuffles[3] == (1 < L <= sg or L < sg)
    monkeypatch.setattr(client, "subgroup_rows", 0)
    with_shuffles[3] = False
    assert results() == with_shuffles


def test_subgroup_probe():
    """client.subgroup_rows: the subgroup size found by its probe, a power of two from 2 to 32 dividing a
    workgroup of 256, where the adapter has the subgroup feature (lavapipe and NVIDIA's driver do), else 0."""
    sg = client.subgroup_rows
    if "subgroup" in client.features:
        assert sg in (2, 4, 8, 16, 32)
    else:
        assert sg == 0


@pytest.mark.parametrize("d", [16, 64, 128])
def test_rows_read_as_vectors_give_the_value_loads_bits(d, flushing):
    """Where X's offset is a multiple of a run of four float32 (_matvec.vector), a lane's run is one vector
    load; X one element further on is read value by value: X @ w, X.T @ v and a captured logistic regression
    step (the fused pass) have the same bits either way."""
    rng = np.random.default_rng(d)
    n = 3001
    inputs, kw = workloads.make_logreg(np.random.default_rng(d), n, d, 2)
    X, y, w0 = inputs["X"], inputs["y"], inputs["w0"]
    w, v = rng.standard_normal(d).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    def results(shift: int) -> tuple[list, set]:
        before = set(client._pipelines)
        Xd = xp.reshape(on(np.concatenate([np.ones(shift, np.float32), X.ravel()]))[shift:], (n, d))
        assert Xd._offset == shift
        with xp.capture(device=DEV) as g:
            got = workloads.logreg(xp, Xd, on(y), on(w0), **kw)
        g.replay()
        assert fused(g) == 2
        out = [bits(Xd @ on(w)), bits(Xd.T @ on(v)), bits(got[0])]
        made = set(client._pipelines) - before
        # (the eager passes' keys end with the values a load takes; a fused pass's key is its source)
        vec = {k[-1] for k in made if k[:2] in (("matvec", "rows"), ("matvec", "cols"))}
        vec |= {4 if "array<vec4<f32>>" in k[2] else 1 for k in made if k[:2] == ("matvec", "fused")}
        return out, vec

    client._pipelines.clear()
    aligned, vec_aligned = results(0)
    client._pipelines.clear()
    shifted, vec_shifted = results(1)
    assert vec_aligned == {4} and vec_shifted == {1}
    assert aligned == shifted


@pytest.mark.parametrize("n, d", [(200_000, 64), (200_000, 32)])
def test_partial_sums_added_in_order_whatever_the_loads_in_flight(n, d, monkeypatch):
    """X.T @ v's partial sums (one per workgroup; up to GROUPS here, as on a GPU) are added in increasing
    order by each lane whatever PARTS_AHEAD is (loads in flight; the last fewer than it, guarded): the same
    bits with 1, 5, 32 and 128, within float32 sums' error of NumPy."""
    monkeypatch.setattr(_matvec, "CPU_GROUPS", _matvec.GROUPS)
    rng = np.random.default_rng(n)
    X, v = rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    Xd, vd = on(X), on(v)
    got = {}
    for ahead in (1, 5, 32, 128):
        monkeypatch.setattr(_matvec, "PARTS_AHEAD", ahead)
        client._pipelines.clear()
        got[ahead] = bits(Xd.T @ vd)
    assert got[1] == got[5] == got[32] == got[128]
    assert _matvec.grid(n, d, True) > 32 * 256 // d  # (more rows of parts per lane than 32)
    r = host(Xd.T @ vd)
    assert np.all(np.abs(r - X.T.astype(np.float64) @ v) <= 2e-6 * (np.abs(X.T) @ np.abs(v).astype(np.float64)))
