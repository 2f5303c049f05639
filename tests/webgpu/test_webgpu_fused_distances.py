"""Squared distances between rows, ``sum((A[:, None, :] - B[None, :, :]) ** 2, axis=-1)`` in float32, captured:
one dispatch of their own kernel (_fuse_distances), whose replay equals eager bit for bit, its fast path (the
hardware's square) taken only where every input is 0 or of a magnitude in [2^-40, 2^62)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp
from numr_array.backends import get_runtime

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu import _fuse_distances  # noqa: E402

from .helpers import DEV, bits, host, on  # noqa: E402


def distances(X, C):
    return xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)


def captured(monkeypatch, run, *args):
    """``run(*args)`` captured: (the graph, its outputs, per distances kernel built its distances an invocation)."""
    pers = []
    real = _fuse_distances.fused_step
    monkeypatch.setattr(_fuse_distances, "fused_step",
                        lambda client, dp, *arg: pers.append(dp.per) or real(client, dp, *arg))
    with xp.capture(device=DEV) as g:
        got = run(*args)
    return g, got, pers


def data(*shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("k, d, per", [(16, 32, 8), (12, 8, 4), (6, 4, 2), (5, 12, 1), (8, 24, 8)])
@pytest.mark.parametrize("form", ["X - C", "C - X", "X a slice at 4", "C every other column", "C backwards"])
def test_distances_are_one_dispatch_of_their_kernel_with_eager_s_bits(k, d, per, form, monkeypatch):
    """Eight distances an invocation where B's rows divide into eights (else four, two, one); either operand
    first; A's rows starting at a multiple of four elements of its memory; B's rows strided or reversed.
    A replay on new data equals eager."""
    n = 257  # a partial last workgroup
    Xh, Ch = data(n, d + 4), data(k, 2 * d, seed=2)
    X, C = on(Xh), on(Ch)
    run = {
        "X - C": lambda X, C: distances(X[:, :d], C[:, :d]),
        "C - X": lambda X, C: xp.sum((C[None, :, :d] - X[:, None, :d]) ** 2, axis=-1),
        "X a slice at 4": lambda X, C: distances(X[:, 4:], C[:, :d]),
        "C every other column": lambda X, C: distances(X[:, :d], C[:, ::2]),
        "C backwards": lambda X, C: distances(X[:, :d], xp.flip(C[:, :d], axis=0)),
    }[form]
    g, got, pers = captured(monkeypatch, run, X, C)
    want_vector = form != "C every other column"  # B's rows must be contiguous along the summed axis
    assert pers == ([per] if want_vector else [])
    assert len(g._graph.steps) == 1
    X[...] = on(data(n, d + 4, seed=3))
    C[...] = on(data(k, 2 * d, seed=4) * 3)
    g.replay()
    assert bits(got) == bits(run(X, C))


@pytest.mark.parametrize("form", ["X at an odd offset", "rows of 30", "float64", "a product, not a difference"])
def test_what_does_not_read_as_vectors_of_four_takes_the_general_fused_reduction(form, monkeypatch):
    dt = np.float64 if form == "float64" else np.float32
    X, C = on(data(100, 33).astype(dt)), on(data(8, 32, seed=2).astype(dt))
    run = {
        "X at an odd offset": lambda X, C: distances(X[:, 1:], C),
        "rows of 30": lambda X, C: distances(X[:, :30], C[:, :30]),
        "float64": lambda X, C: distances(X[:, :32], C),
        "a product, not a difference": lambda X, C: xp.sum((X[:, None, :32] * C[None]) ** 2, axis=-1),
    }[form]
    if form == "float64" and not xp.__array_namespace_info__().capabilities().get("float64", True):
        pytest.skip("the adapter has no float64")  # (lavapipe and the H200 have it)
    g, got, pers = captured(monkeypatch, run, X, C)
    assert pers == []
    assert len(g._graph.steps) == (3 if form == "float64" else 1)  # (float64 squares are not fused)
    X[...] = on(data(100, 33, seed=3).astype(dt))
    g.replay()
    assert bits(got) == bits(run(X, C))


def test_an_invocation_with_an_input_out_of_range_sums_exactly(monkeypatch):
    """The fast square made to give 1e30 (plus the square, which that rounds away: a constant's sums the
    compiler may fold otherwise): rows of X whose values are all in range keep that (the fast path ran for
    them), rows with a value below 2^-40, at or above 2^62, infinite or NaN equal eager (they took the exact
    path); a value of C out of range sends every row to the exact path."""
    monkeypatch.setattr(_fuse_distances, "_SQUARE", "(d * d + vec4<f32>(1e30))")
    n, k, d = 64, 8, 8
    X, C = on(np.zeros((n, d), np.float32)), on(np.zeros((k, d), np.float32))
    g, got, pers = captured(monkeypatch, distances, X, C)
    assert pers == [8]
    x, c = data(n, d), data(k, d, seed=2)
    odd = {3: 1e-13, 17: np.nan, 40: 2.0 ** 62, 41: -np.inf, 50: 1e-45}
    for row, v in odd.items():
        x[row, 5] = v
    x[60, :] = 0.0  # zeros are in range
    X[...], C[...] = on(x), on(c)
    g.replay()
    fast, want = got.to_device("cpu").numpy(), distances(X, C).to_device("cpu").numpy()
    garbage = np.float32(0)
    for _ in range(d):
        garbage = np.float32(garbage + np.float32(1e30))
    for row in range(n):
        if row in odd:
            assert want[row].tobytes() == fast[row].tobytes()
        else:
            assert (fast[row] == garbage).all()
    c[2, 7] = 2.0 ** -41
    C[...] = on(c)
    g.replay()
    assert bits(got) == bits(distances(X, C))


# an adapter that flushes float32 subnormal products and returns one NaN (NVIDIA's), for the fast path's square
_FLUSHING = ("select(select(d * d, vec4<f32>(0.0), (bitcast<vec4<u32>>(d * d) & vec4<u32>(0x7fffffffu))"
             " < vec4<u32>(0x00800000u)), bitcast<vec4<f32>>(vec4<u32>(0x7fffffffu)),"
             " (bitcast<vec4<u32>>(d * d) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u))")
_EDGES = [0.0, -0.0, 1e-20, -3e-21, 1e-25, 2.0 ** -75, -(2.0 ** -63), 1.08e-19, 1e-40, np.inf, -np.inf, np.nan,
          1.0, -2.5, 1e20, 3e38, 2.0 ** -40, -(2.0 ** -40), np.nextafter(np.float32(2.0 ** -40), np.float32(0)),
          2.0 ** 62, np.nextafter(np.float32(2.0 ** 62), np.float32(0)), 1.5 * 2.0 ** -40]


def _flushing(monkeypatch, x: np.ndarray, c: np.ndarray):
    """The distances of x's rows to c's, captured with the fast square as a flushing adapter gives it and
    replayed: (replay, eager)."""
    monkeypatch.setattr(_fuse_distances, "_SQUARE", _FLUSHING)
    X, C = on(np.zeros_like(x)), on(np.zeros_like(c))
    g, got, pers = captured(monkeypatch, distances, X, C)
    assert len(pers) == 1
    X[...], C[...] = on(x), on(c)
    g.replay()
    return got, distances(X, C)


@pytest.mark.parametrize("where", ["X", "C"])
@pytest.mark.parametrize("fill", [0.0, 1.0, 2.0 ** -40])
def test_each_edge_value_takes_the_right_path(where, fill, monkeypatch):
    """One value of _EDGES per row of X (or of C), the rest ``fill``, against the other operand's rows of
    ``fill`` and of values near it: differences in (2^-75, 2^-63), whose squares a flushing adapter loses, come
    only from values out of range, which take the exact path."""
    m = len(_EDGES)
    x = np.full((m, 8), fill, np.float32)
    x[:, 3] = np.array(_EDGES, np.float32)
    other = np.full((4, 8), fill, np.float32)
    other[1] = np.nextafter(other[1], np.float32(1))
    other[2] = -other[2]
    other[3, ::2] = 2.0 ** -39
    got, want = _flushing(monkeypatch, x, other) if where == "X" else _flushing(monkeypatch, other, x)
    assert bits(got) == bits(want)


@given(st.integers(2, 40), st.integers(2, 20), st.sampled_from([4, 8, 12, 16]),
       st.lists(st.sampled_from(_EDGES) | st.floats(-1e3, 1e3, width=32)
                | st.floats(2.0 ** -45, 2.0 ** -35, width=32), min_size=1, max_size=40),
       st.randoms(use_true_random=False))
def test_distances_on_a_flushing_adapter_give_eager_s_bits(n, k, d, values, rnd):
    """Any values in X and C, the fast square as a flushing adapter gives it: the replay equals eager (lavapipe
    keeps subnormals and NaN payloads: a fast square where the inputs allow a subnormal one would differ)."""
    x = np.array([rnd.choice(values) for _ in range(n * d)], np.float32).reshape(n, d)
    c = np.array([rnd.choice(values) for _ in range(k * d)], np.float32).reshape(k, d)
    # one NaN payload per example (as in test_webgpu_fused_reductions: which one a sum carries is the compiler's,
    # docs/capture.md): NaNs as np.nan, and no infinity in c, whose difference with an equal one of x would be
    # the adapter's own NaN (on lavapipe 0xffc00000, against np.nan's 0x7fc00000)
    for a in (x, c):
        nan = np.isnan(a)
        a[nan] = np.float32(np.nan)
    c[np.isinf(c)] = np.float32(3e38)
    with pytest.MonkeyPatch.context() as mp:
        got, want = _flushing(mp, x, c)
    assert bits(got) == bits(want)


def kinds(g) -> list[str]:
    from benchmarks.webgpu_dispatch_profile import kind_of
    client = xp._device.parse_device(DEV).client
    return [kind_of(client, step[0]) for step in g._graph.steps]


@pytest.mark.parametrize("kind", ["argmin", "argmax"])
@pytest.mark.parametrize("k", [16, 32, 12])
def test_an_argmin_of_the_distances_is_computed_with_them(kind, k, monkeypatch):
    """``argmin(distances, axis=1)`` where nothing else reads the distances: one dispatch, an invocation per
    row (or two, four: eight centres each, their states combined; twelve centres: one), the distances never
    stored. Rows with ties (the lower centre wins), a NaN (the first NaN wins),
    infinities, a distance of 0 and subnormal distances (the exact path, for that row, then for every row where
    a centre is out of range) give eager's indices."""
    n, d = 300, 8
    X, C = on(np.zeros((n, d), np.float32)), on(np.zeros((k, d), np.float32))
    run = lambda X, C: getattr(xp, kind)(distances(X, C), axis=1)  # noqa: E731
    g, got, pers = captured(monkeypatch, run, X, C)
    assert kinds(g) == ["fused-distances"]
    rng = np.random.default_rng(7)
    x, c = rng.integers(-2, 3, (n, d)).astype(np.float32), rng.integers(-2, 3, (k, d)).astype(np.float32)
    c[6] = c[9]  # two centres alike: ties in every row
    x[10, 2], x[11, 0], x[12, 5] = np.nan, np.inf, -np.inf
    x[13] = c[5]  # a distance of 0
    x[14, :], c[3, :] = 1e-20, 0.0  # subnormal squares, summed
    for bad_centre in (False, True):
        if bad_centre:
            c[0, 0] = 1e-20
        X[...], C[...] = on(x), on(c)
        g.replay()
        assert bits(got) == bits(run(X, C))
        assert got.to_device("cpu").numpy()[10] == 0  # every distance of row 10 NaN: the first wins


def test_the_kmeans_program_replays_without_its_argmin_and_mask_steps(monkeypatch):
    """k-means' argmin reads the distances alone, which the next iteration's one-hot mask overwrites (its
    memory given again by the capture's arena): each iteration's argmin leaves the graph, and the one-hot mask
    after it (the index compared with each centre's, cast to float32) with it."""
    from benchmarks import workloads
    X, C0 = on(data(2000, 8)), on(data(4, 8, seed=2))
    ids = on(np.arange(4, dtype=np.int32))
    run = lambda X, C0: workloads.kmeans(xp, X, C0, ids, iters=3)  # noqa: E731
    g, got, pers = captured(monkeypatch, run, X, C0)
    ks = kinds(g)
    assert ks.count("fused-distances") == 3 and not any("argmin" in kk or kk == "fused" for kk in ks)
    X[...] = on(data(2000, 8, seed=5))
    g.replay()
    (want,) = run(X, C0)
    assert bits(got[0]) == bits(want)


@pytest.mark.parametrize("reader", ["returned", "read again", "overwritten in part"])
def test_distances_read_after_their_argmin_are_stored(reader, monkeypatch):
    """The distances returned, read again after the argmin, or only partly overwritten before a read: the
    argmin stays a dispatch of its own, every result eager's."""
    X, C = on(data(300, 8)), on(data(16, 8, seed=2))

    def run(X, C):
        D = distances(X, C)
        i = xp.argmin(D, axis=1)
        if reader == "returned":
            return i, D
        if reader == "read again":
            return i, xp.min(D, axis=1)
        D[:, :8] = 0.0
        return i, xp.sum(D, axis=1)
    g, got, pers = captured(monkeypatch, run, X, C)
    assert "fused-distances" in kinds(g) and any("argmin" in kk for kk in kinds(g))
    X[...] = on(data(300, 8, seed=3))
    g.replay()
    for a, b in zip(got, run(X, C)):
        assert bits(a) == bits(b)


@pytest.mark.parametrize("form", ["one-hot", "one-hot and index", "mask kept", "weights where the index"])
def test_a_map_of_the_index_after_the_argmin_is_computed_with_it(form, monkeypatch):
    """A map run over (rows, centres) right after the argmin, reading the index as each row's: evaluated by
    the distances' invocations, the index from a register (and still stored); its live stores kept (a bool
    mask returned), the replay eager's bits."""
    ids = on(np.arange(16, dtype=np.int32))
    w = on(data(16, seed=9))

    def run(X, C):
        i = xp.argmin(distances(X, C), axis=1)
        mask = i[:, None] == ids[None, :]
        onehot = xp.astype(mask, xp.float32)
        return {"one-hot": (onehot,), "one-hot and index": (onehot, i), "mask kept": (onehot, mask),
                "weights where the index": (xp.where(mask, w[None, :], 0.5),)}[form]
    X, C = on(data(300, 8)), on(data(16, 8, seed=2))
    g, got, pers = captured(monkeypatch, run, X, C)
    assert kinds(g) == ["fused-distances"]
    X[...], C[...] = on(data(300, 8, seed=3)), on(data(16, 8, seed=4))
    g.replay()
    for a, b in zip(got, run(X, C)):
        assert bits(a) == bits(b)


@pytest.mark.parametrize("form", ["index shifted", "into the centres", "index of another row"])
def test_a_map_the_invocations_cannot_compute_stays_a_dispatch(form, monkeypatch):
    """A run reading the index otherwise than as its row's, or writing what the distances read (the memory
    of the centres, which each workgroup stages as it starts): left a dispatch of its own, the replay eager's
    bits."""
    ids = on(np.arange(16, dtype=np.int32))

    def run(X, C):
        i = xp.argmin(distances(X, C[:16, :8]), axis=1)
        if form == "index shifted":
            return (xp.astype(i[1:, None] == ids[None, :], xp.float32),)
        if form == "into the centres":
            return (xp.multiply(xp.astype(i[:, None] == ids[None, :], xp.float32), 2.0, out=C),)
        return (xp.astype(xp.flip(i)[:, None] == ids[None, :], xp.float32),)
    X, C = on(data(300, 8)), on(data(300, 16, seed=2))
    g, got, pers = captured(monkeypatch, run, X, C)
    assert kinds(g)[0] == "fused-distances" and len(kinds(g)) >= 2
    X[...], C[...] = on(data(300, 8, seed=3)), on(data(300, 16, seed=4))
    g.replay()
    got = tuple(bits(a) for a in got)  # (C, written by the replay, is reset for eager)
    C[...] = on(data(300, 16, seed=4))
    for a, b in zip(got, run(X, C)):
        assert a == bits(b)


def _kmeans_counts(X, C, ids, reader: str = "none"):
    """One k-means iteration's one-hot mask, its counts (its sum over the rows) and the centres' sums; ``reader``:
    what reads the counts besides the division."""
    i = xp.argmin(distances(X, C), axis=1)
    onehot = xp.astype(i[:, None] == ids[None, :], xp.float32)
    counts = xp.sum(onehot, axis=0)
    out = ()
    if reader == "right after":  # (a result of another size than the partial counts: see below)
        out = (counts[:1] * 2.0,)
    S = onehot.T @ X
    if reader == "returned":
        out = (counts,)
    return (S / (counts + xp.astype(counts == 0, xp.float32))[:, None], onehot) + out


@pytest.mark.parametrize("n, k, stages", [(300, 16, 1), (1000, 12, 1), (2000, 4, 1), (3000, 4, 2), (5000, 16, 2),
                                          (40, 3, 1), (70_000, 16, 2)])
@pytest.mark.parametrize("reader", ["none", "right after", "returned"])
def test_the_counts_of_the_one_hot_mask_are_summed_by_the_distances_workgroups(n, k, stages, reader, monkeypatch):
    """k-means' counts (the sum over the rows of the one-hot mask, a cast of a bool): each workgroup of the
    distances counts its rows' ones, one workgroup sums those; the columns pass and the sum of its partial
    sums (``stages``) leave the graph. The counts are eager's values: rows not a multiple of 256, centres not
    dividing 256, a centre no row picks (its count 0), an id no centre has (a column of zeros), the last row's
    one in the last column, the counts read right after, returned, or only by the division (their sum then the
    small program's first phase).
    (The columns pass's partial sums must be unread after it: a result the capture's arena puts in their
    memory and returns keeps the reductions, which the reader right after, of another size, does not.)"""
    X, C = on(data(n, 8, seed=n)), on(data(k, 8, seed=k))
    idv = np.arange(k, dtype=np.int32)
    idv[1] = 99  # no row's index: a column of zeros
    ids = on(idv)
    with monkeypatch.context() as m:
        m.setattr(_fuse_distances, "counts", lambda *a: None)
        before = kinds(captured(m, _kmeans_counts, X, C, ids, reader)[0])
    g, got, _ = captured(monkeypatch, _kmeans_counts, X, C, ids, reader)
    ks = kinds(g)
    assert ks.count("fused-distances") == 1 and len(ks) <= len(before) - stages, (ks, before)
    for seed in (3, 4):
        x = data(n, 8, seed=seed)
        c = data(k, 8, seed=seed + 10)
        c[0] = 1e3  # a centre far from every row: its count 0
        x[-1] = c[-1]  # the last row's one in the last column (what a read past the rows would clamp to)
        X[...], C[...] = on(x), on(c)
        g.replay()
        want = _kmeans_counts(X, C, ids, reader)
        for a, b in zip(got, want):
            assert bits(a) == bits(b)
        if reader == "returned":
            counts = host(want[-1])
            assert counts[0] == 0 and counts[1] == 0 and counts[-1] >= 1 and counts.sum() <= n


@pytest.mark.parametrize("form", ["where 1 or 0", "a cast times 2", "a cast plus 0"])
def test_sums_that_are_not_counts_of_a_cast_stay_reductions(form, monkeypatch):
    """A sum over the rows of a run's value that is not a cast of a bool (a where of 1 and 0, a cast doubled, a
    cast plus 0: the values 0 and 1 but not known to be) stays the reductions' steps. The replay is eager's."""
    ids = on(np.arange(16, dtype=np.int32))
    w = on(np.ones(16, np.float32))

    def run(X, C):
        i = xp.argmin(distances(X, C), axis=1)
        mask = i[:, None] == ids[None, :]
        if form == "where 1 or 0":
            m = xp.where(mask, xp.ones_like(w), 0.0)
        elif form == "a cast times 2":
            m = xp.astype(mask, xp.float32) * 2.0
        else:
            m = xp.astype(mask, xp.float32) + 0.0
        return xp.sum(m, axis=0), m
    X, C = on(data(3000, 8)), on(data(16, 8, seed=2))
    g, got, _ = captured(monkeypatch, run, X, C)
    assert any(kk.startswith("reduce sum") for kk in kinds(g))
    X[...], C[...] = on(data(3000, 8, seed=3)), on(data(16, 8, seed=4))
    g.replay()
    for a, b in zip(got, run(X, C)):
        assert bits(a) == bits(b)


def test_without_memory_for_the_partial_counts_the_reductions_stay(monkeypatch):
    """Where the device has no room for the partial counts when the capture ends, the graph keeps the counts'
    reductions and replays eager's values."""
    from numr_array.backends.webgpu import _fuse
    client = xp._device.parse_device(DEV).client

    def refuse(nbytes):
        raise MemoryError(f"no room for {nbytes} bytes")

    def no_room(*args):
        called.append(1)
        with monkeypatch.context() as m:
            m.setattr(client.allocator, "allocate_unfrozen", refuse)
            return real(*args)
    called: list = []
    real = _fuse._counts
    monkeypatch.setattr(_fuse, "_counts", no_room)
    ids = on(np.arange(4, dtype=np.int32))
    X, C = on(data(3000, 8)), on(data(4, 8, seed=2))
    g, got, _ = captured(monkeypatch, _kmeans_counts, X, C, ids)
    assert called and any(kk.startswith("reduce sum columns") for kk in kinds(g))
    X[...] = on(data(3000, 8, seed=5))
    g.replay()
    for a, b in zip(got, _kmeans_counts(X, C, ids)):
        assert bits(a) == bits(b)
