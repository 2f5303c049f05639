"""Capture with reuse, on the device under test: the memory of a tensor that dies inside a capture() block
serves later allocations of the same block, so a graph's arena stays near the block's peak of live
bytes, while replay still gives what eager execution gives, bit for bit."""

import gc
import weakref

import numpy as np
import pytest

import numr_array as xp
from numr_array._device import parse_device

from .strategies import DEVICE, to_np

dev = parse_device(DEVICE)
F32 = xp.float32


def on(a):
    return xp.asarray(a, device=DEVICE)


def same_bits(got, want) -> bool:
    got, want = to_np(got), to_np(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


def replay_matches_eager(run, inputs, new_inputs):
    """Capture ``run`` on ``inputs``, write ``new_inputs`` into them and replay: the results (a tensor or a
    tuple) must be those of eager ``run`` on the new data, bit for bit. Returns the graph."""
    xs = [on(a) for a in inputs]
    with xp.capture(device=DEVICE) as g:
        res = run(*xs)
    res = res if isinstance(res, tuple) else (res,)
    first = run(*[on(a) for a in inputs])
    first = first if isinstance(first, tuple) else (first,)
    assert all(same_bits(r, w) for r, w in zip(res, first))  # the capture ran the block once, as eagerly
    for x, a in zip(xs, new_inputs):
        x[...] = on(a)
    g.replay()
    want = run(*[on(a) for a in new_inputs])
    want = want if isinstance(want, tuple) else (want,)
    for r, w in zip(res, want):
        assert same_bits(r, w), (to_np(r), to_np(w))
    return g


def sin_chain(x, steps=50):
    t = x
    for _ in range(steps):
        t = xp.sin(t) * 0.9
    return t


@pytest.mark.parametrize("steps", [12, 50])
def test_arena_of_a_chain_stays_within_twice_its_live_bytes(requested, monkeypatch, steps):
    if steps > 12 and dev.kind == "webgpu":
        # (the arena does not depend on fusion, and a software adapter such as lavapipe takes a minute to
        # compile the merged shaders of 50 sin; 12 steps check the merged chain)
        monkeypatch.setattr(dev.client, "fusion", False)
    n = 1 << 16
    rng = np.random.default_rng(0)
    a, a2 = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    g = replay_matches_eager(lambda x: sin_chain(x, steps), [a], [a2])
    live = 3 * n * 4  # the chain's peak: t, sin(t) and the product, each n float32
    assert g.arena_bytes <= 2 * live, g.arena_bytes
    assert sum(requested) >= 2 * steps * n * 4  # what it was asked for: a result per launch


def test_in_place_looking_rebinding(requested):
    rng = np.random.default_rng(1)
    a, a2 = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)

    def run(x):
        t = x * 1.0
        for _ in range(12):
            t = t * 2.0
            t = t + x
            t = t - 1.5
        return t

    g = replay_matches_eager(run, [a], [a2])
    assert g.arena_bytes <= 3 * 4000 and sum(requested) >= 37 * 4000


def test_integer_chain(requested):
    rng = np.random.default_rng(2)
    a, a2 = (rng.integers(-1000, 1000, 513).astype(np.int32) for _ in range(2))

    def run(x):
        t = x
        for k in range(10):
            t = t * 3
            t = t ^ x
            t = t + k
        return t

    g = replay_matches_eager(run, [a], [a2])
    assert g.arena_bytes <= 3 * 513 * 4 and sum(requested) >= 30 * 513 * 4


def test_temporaries_dying_in_the_middle_of_element_wise_runs(requested):
    """Expressions whose temporaries die half-way: the chains a fuser merges, with memory freed and
    reused inside the merged run."""
    rng = np.random.default_rng(3)
    a, b, a2 = (rng.standard_normal(4096).astype(np.float32) for _ in range(3))

    def run(x, y):
        t = x
        for _ in range(6):
            t = (xp.sin(t) + x) * (t - 1.0)
            u = xp.exp(t * 0.01)
            t = u / (u + 1.0) - y
            t = xp.where(t > 0.0, t, y * 0.5)
        return t, u

    g = replay_matches_eager(run, [a, b], [a2, b])
    assert g.arena_bytes < sum(requested) // 4


def test_reductions_and_matmuls_mixed_in(requested):
    rng = np.random.default_rng(4)
    a, a2 = (rng.standard_normal((64, 32)).astype(np.float32) for _ in range(2))
    w = (rng.standard_normal((32, 32)) * 0.2).astype(np.float32)

    def run(x, w):
        t = x
        for _ in range(4):
            t = xp.tanh(t @ w * 0.5)
            t = t - xp.mean(t, axis=0)
            s = xp.sum(t * t)
            t = t / (xp.sqrt(s) + 1.0)
            t = xp.matrix_transpose(xp.matrix_transpose(t) * 2.0) + x
        return t, s

    g = replay_matches_eager(run, [a, w], [a2, w])
    assert g.arena_bytes < sum(requested) // 2


def test_memory_read_through_a_transposed_view_then_reused():
    """``a`` is read transposed by one launch and dies; its memory is then written, as ``c``, by the next
    launch over the same iteration space: a fusion of the two would let element (i, j) overwrite what
    element (j, i) has still to read."""
    rng = np.random.default_rng(5)
    a, b, a2 = (rng.standard_normal((96, 96)).astype(np.float32) for _ in range(3))

    def run(x, y):
        t = xp.sin(x)
        u = xp.matrix_transpose(t) + y
        del t
        c = u + xp.matrix_transpose(y)  # c takes t's memory
        return c * 1.0, u

    replay_matches_eager(run, [a, b], [a2, b])


def test_uploads_inside_the_block_keep_their_memory(requested):
    """An upload is not recorded: its bytes stay in its memory for every replay, so that memory is never
    reused, even after its tensor dies in the block."""
    n = 777
    rng = np.random.default_rng(6)
    a, a2 = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    table = np.arange(n, dtype=np.float32)

    def run(x):
        c = on(table)
        t = x + c
        del c
        for _ in range(4):
            t = t * 2.0 - 1.0  # would overwrite the table if its memory were reused
        r = xp.repeat(t, 2)  # (the int32 table of a WebGPU repeat is an upload too)
        for _ in range(4):
            r = r * 0.5 + 1.0
        return t, r

    replay_matches_eager(run, [a], [a2])


def test_an_upload_into_memory_an_earlier_tensor_used_gets_memory_of_its_own():
    """The upload's tensor would take the memory of ``t``, which died; a replay reruns the launch writing
    ``t`` and would overwrite the uploaded constant, so the upload gets a block of its own."""
    n = 600
    rng = np.random.default_rng(8)
    a, a2 = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    table = np.linspace(-3, 3, n, dtype=np.float32)

    def run(x):
        t = x * 2.0
        s = t + 1.0
        del t
        c = on(table)
        return s * c

    g = replay_matches_eager(run, [a], [a2])
    assert g.arena_bytes == 3 * n * 4  # t's block (s * c's after it), s's, and the table's own


def test_outside_memory_freed_in_the_block_does_not_enter_the_arena():
    n = 1024
    x = on(np.ones(n, np.float32))
    spare = on(np.zeros(n, np.float32))
    alloc = dev.client.allocator
    gc.collect()  # (garbage of earlier tests collected now, not inside the measurement below)
    with xp.capture(device=DEVICE) as g:
        t = x * 2.0
        del t  # an arena block of n float32 is free
        in_use = alloc.stats().bytes_in_use
        del spare  # an outside buffer of the same size goes back to the allocator at once (refcount), not to the arena
        assert alloc.stats().bytes_in_use == in_use - n * 4
        u = x * 3.0  # the free arena block
        v = u + 1.0  # a new one: the outside memory is not the arena's
        del x  # read in the block: the graph holds it
    assert g.arena_bytes == 2 * n * 4
    (held,) = g.inputs
    held[...] = on(np.full(n, 5.0, np.float32))
    g.replay()
    assert np.array_equal(to_np(v), np.full(n, 16.0))


def test_results_kept_after_the_block_keep_their_memory_after_the_graph_goes():
    n = 4096
    a = np.linspace(-1, 1, n, dtype=np.float32)
    x = on(a)
    with xp.capture(device=DEVICE) as g:
        t = sin_chain(x, 6)
        dead = xp.cos(t[:100])  # (a size no later allocation asks for)
        dead_block = weakref.ref(dead._buf.block)
        del dead
        kept = t + 1.0
    want_t = to_np(sin_chain(on(a), 6))
    want = want_t + np.float32(1.0)
    assert np.array_equal(to_np(kept), want)
    del g
    gc.collect()
    assert dead_block() is None  # a block no tensor holds goes with the graph
    # memory handed out now must not be kept's: it still reads its values
    others = [xp.full((n,), 123.0, dtype=F32, device=DEVICE) for _ in range(16)]
    assert np.array_equal(to_np(kept), want) and np.array_equal(to_np(t), want_t)
    assert all(np.array_equal(to_np(o), np.full(n, 123.0)) for o in others)


def test_the_graph_holds_every_block_it_used():
    x = on(np.arange(256, dtype=np.float32))
    with xp.capture(device=DEVICE) as g:
        blocks = []
        t = x
        for _ in range(8):
            t = t * 2.0
            blocks.append(weakref.ref(t._buf.block))
        del t
    gc.collect()
    assert all(b() is not None for b in blocks)
    assert len({id(b()) for b in blocks}) == 2  # two alternate: each product frees the one before last
    g.replay()


def test_a_smaller_request_reuses_a_larger_free_block():
    """A free block serves a request of up to half its size less (none of the exact size being free); the
    buffer says the size asked for, as an allocator's does, and its data round-trips."""
    n = 1000
    x = on(np.arange(n, dtype=np.float32))
    with xp.capture(device=DEVICE) as g:
        t = x * 2.0
        block = t._buf.block
        del t
        u = x[:700] + 1.0  # 2800 bytes from the free 4000-byte block
        assert u._buf.block is block and u._buf.nbytes == 2800
        small = x[:100] * 3.0  # a quarter of the size: a block of its own
        assert small._buf.block is not block
    assert g.arena_bytes == 4000 + 400
    x[...] = on(np.ones(n, np.float32))
    g.replay()
    assert np.array_equal(to_np(u), np.full(700, 2.0)) and np.array_equal(to_np(small), np.full(100, 3.0))
