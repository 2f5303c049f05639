"""Capture on WebGPU: a block's dispatches are recorded (pipeline, bind group, dynamic offset, workgroup
counts) while they run once; replay encodes them all into the pending compute pass (submitted with what
follows it), on new input data, with intermediates in the graph's arena and parameters in the graph's own uniform
buffers. Host reads raise CaptureError and leave the device usable."""

from __future__ import annotations

import gc
import re
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp
from numr_array import _elementwise as ew
from numr_array.backends import get_runtime

from ..strategies import to_np

pytestmark = pytest.mark.webgpu
if get_runtime("webgpu") is None:
    pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)", allow_module_level=True)

from numr_array.backends.webgpu._client import WebGPUGraph  # noqa: E402

from .helpers import DTYPES, FLOAT, record_sources  # noqa: E402

DEV = "webgpu:0"
dev = xp._device.parse_device(DEV)
client = dev.client


def on(a):
    return xp.asarray(a, device=DEV)


class _CountingQueue:
    def __init__(self, queue):
        self._q = queue
        self.submits = 0

    def submit(self, buffers):
        self.submits += 1
        return self._q.submit(buffers)

    def __getattr__(self, name):
        return getattr(self._q, name)


def chain(x, y, n):
    t = x
    for _ in range(n // 2):
        t = ew.multiply(t, 0.999)
        t = ew.add(t, y)
    return t


def chain_np(a, b, n):
    t = a
    for _ in range(n // 2):
        t = (t * np.float32(0.999)).astype(np.float32)
        t = (t + b).astype(np.float32)
    return t


@pytest.mark.parametrize("fusion", [True, False])
def test_replay_reruns_the_block_on_new_input_data(monkeypatch, fusion):
    monkeypatch.setattr(client, "fusion", fusion)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1024).astype(np.float32), rng.standard_normal(1024).astype(np.float32)
    x, y = on(a), on(b)
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        xp.add(chain(x, y, 40), 0.0, out=out)
    np.testing.assert_allclose(to_np(out), chain_np(a, b, 40), rtol=1e-5)
    steps = g._graph.steps
    assert isinstance(g._graph, WebGPUGraph)
    assert len(steps) == 41 if not fusion else len(steps) < 8  # the element-wise chain merged
    a2 = rng.standard_normal(1024).astype(np.float32)
    x[...] = on(a2)
    q = _CountingQueue(client.queue)
    client.synchronize()
    monkeypatch.setattr(client, "queue", q)
    g.replay()
    # encoded into the pending pass, as eager launches are: unfused, 41 dispatches are chunks of 16 and 25
    # (the first submitted as soon as it is encoded), fused, one chunk
    chunks = 1 if fusion else 2
    assert len(g._graph.encoded) == chunks
    assert q.submits == chunks - 1
    np.testing.assert_allclose(to_np(out), chain_np(a2, b, 40), rtol=1e-5)
    assert q.submits == chunks  # the replay's last chunk and the readback: one submission


def test_replays_after_the_second_submit_the_buffer_the_one_before_encoded(monkeypatch):
    """From the second replay on, a replay submits its work and encodes the next one apart (a finished command
    buffer), which the next replay submits after the pending eager work: each replay on new input data,
    after an eager in-place update still pending, gives the eager answer; from the third on, a replay is one
    submission besides the pending work's."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal(1024).astype(np.float32)
    x, y = on(np.zeros(1024, np.float32)), on(b)
    out = xp.empty((1024,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        xp.add(chain(x, y, 40), 0.0, out=out)
    graph = g._graph
    for k in range(5):
        a = rng.standard_normal(1024).astype(np.float32)
        x[...] = on(a)
        xp.add(x, 1.0, out=x)  # (pending, not submitted, when the replay starts)
        assert client._enc is not None
        q = _CountingQueue(client.queue)
        monkeypatch.setattr(client, "queue", q)
        g.replay()
        monkeypatch.undo()
        assert (graph.ready is not None) == (k >= 1)
        if k >= 2:  # the pending update, then the prepared replay: one submission
            assert q.submits == 2 and client._enc is None
        np.testing.assert_allclose(to_np(out), chain_np((a + np.float32(1)).astype(np.float32), b, 40), rtol=1e-5)
    graph.release()
    assert graph.ready is None


def bits(t) -> np.ndarray:
    """A tensor's bytes, so that NaN payloads and signed zeros compare too."""
    return np.ascontiguousarray(to_np(t)).view(np.uint8)


def replay_and_eager(run, a, b, a2):
    """(the replay of ``run(x, y)`` captured on ``a``, ``b`` after x is set to ``a2``, eager ``run`` on a2)."""
    x, y = on(a), on(b)
    with xp.capture(device=DEV) as g:
        r = run(x, y)
    x[...] = on(a2)
    g.replay()
    return r, run(on(a2), y)


@given(st.lists(st.tuples(st.sampled_from(["add_x", "mul_y", "inplace", "shifted", "cast", "where", "sum"]),
                          st.sampled_from([d for d in DTYPES if d.kind in ("b", "i", "u")])),
                min_size=1, max_size=12))
def test_fused_replay_equals_eager(ops):
    """Random chains with in-place updates, shifted views of written buffers (which must not merge),
    casts (to an integer dtype and back, of values that grow out of its range), where and a reduction
    in the middle: the merged replay gives what eager execution gives, bit for bit."""
    check_chain(ops)


def check_chain(ops):
    rng = np.random.default_rng(len(ops))
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)

    def run(x, y):
        t = ew.add(x, 0.0)
        for op, cast_to in ops:
            if op == "add_x":
                t = ew.add(t, x)
            elif op == "mul_y":
                t = ew.multiply(t, y)
            elif op == "inplace":
                ew.multiply(t, 0.5, out=t)
            elif op == "shifted":
                t[1:] = t[:-1]
            elif op == "cast":
                t = xp.astype(xp.astype(t, cast_to), xp.float32)
            elif op == "where":
                t = xp.where(ew.greater(t, 0.0), t, y)
            else:
                t = ew.add(t, xp.sum(t))
        return t

    r, want = replay_and_eager(run, a, b, rng.standard_normal(64).astype(np.float32))
    np.testing.assert_array_equal(bits(r), bits(want))


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind in ("b", "i", "u")],
                         ids=lambda d: d.name)
def test_fused_casts_of_out_of_range_floats_replay_as_eager(dtype):
    """A float cast to an integer dtype and back inside one merged launch: the value passed on is the
    stored one (an 8- or 16-bit integer keeps its low bits, it was passed on unnarrowed), and the
    conversion's saturation is kept (a compiler must not fold the round trip into a truncation: a soak
    run replayed the chain add_x x4, sum x5, then a cast to int32, as -3117909504, eager -2147483648)."""
    a = np.array([3e9, -3.1e9, -3117909504.0, 1e20, -1e20, np.inf, -np.inf, np.nan, 2.5, -2.5, 300.7, -40000.2,
                  70000.5, -0.0], np.float32)

    def run(x, y):
        return xp.astype(xp.astype(ew.add(ew.multiply(x, y), 0.0), dtype), xp.float32)

    r, want = replay_and_eager(run, np.zeros_like(a), np.ones_like(a), a)
    np.testing.assert_array_equal(bits(r), bits(want))


def test_the_issues_fused_chain_replays_as_eager():
    check_chain([("add_x", None)] * 4 + [("sum", None)] * 5 + [("cast", xp.int32)])


@pytest.mark.parametrize("dtype", FLOAT, ids=lambda d: d.name)
def test_fused_products_and_sums_round_as_eager(dtype):
    """x * y + z over two launches rounds twice in the merged shader too (no contraction into an FMA)."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(4096).astype(dtype) for _ in range(3))
    z = on(c)
    r, want = replay_and_eager(lambda x, y: ew.add(ew.multiply(x, y), z), a, b, a[::-1].copy())
    np.testing.assert_array_equal(bits(r), bits(want))
    np.testing.assert_array_equal(to_np(want), a[::-1] * b + c)


@pytest.mark.parametrize("dtype", FLOAT, ids=lambda d: d.name)
def test_fused_sum_then_difference_is_not_folded_and_libm_chain_replays_as_eager(dtype):
    """(x + y) - y over two launches rounds twice in the merged shader too: a compiler that sees through
    the register passed on folds it to x. A float64 soak run replayed add(y), subtract(y), then sin, cos
    and sin x4 (each of abs(t)) of 1.1294517479668944 with y = 2 two ulps off eager (the subtraction
    already one ulp off: folded), on a tree from before values passed on in registers were made opaque
    (_fused_bodies._opaque); dropping that for either float dtype fails this test."""
    rng = np.random.default_rng(3)
    a = np.concatenate([[0.0, 0.0, 0.0, 1.1294517479668944], rng.uniform(0, 2, 252)]).astype(dtype)
    b = np.linspace(1, 2, a.size, dtype=dtype)
    b[3] = 2

    def run(x, y):
        t = ew.subtract(ew.add(x, y), y)
        for f in ["sin", "cos", "sin", "sin", "sin", "sin"]:
            t = getattr(ew, f)(ew.abs(t))
        return t, ew.subtract(ew.add(x, y), y)

    (r, r_diff), (want, want_diff) = replay_and_eager(run, np.zeros_like(a), b, a)
    np.testing.assert_array_equal(to_np(want_diff), (a + b) - b)
    np.testing.assert_array_equal(bits(r_diff), bits(want_diff))
    np.testing.assert_array_equal(bits(r), bits(want))


def _functions(source: str) -> dict[str, str]:
    """A shader's helper functions (``fn`` items other than main): name -> text."""
    fns = {}
    lines = iter(source.splitlines())
    for line in lines:
        m = re.match(r"fn (\w+)\(", line)
        if not m or m.group(1) == "main":
            continue
        text = [line]
        if not line.endswith("}"):
            for body in lines:
                text.append(body)
                if body == "}":
                    break
        fns[m.group(1)] = "\n".join(text)
    return fns


_BARRIER_CHAINS = {
    # (sqrt: float64 sin and hypot are not element-wise launches on lavapipe, so they would not fuse)
    "f": lambda x, y: ew.subtract(xp.sqrt(xp.abs(ew.multiply(xp.abs(x), y))), y),
    "c": lambda x, y: ew.add(xp.exp(ew.multiply(x, x)), y),
    "i": lambda x, y: ew.add(xp.abs(ew.multiply(x, x)), y),
}


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind in _BARRIER_CHAINS], ids=lambda d: d.name)
def test_a_fused_shader_gives_each_launch_operands_it_knows_nothing_of(monkeypatch, dtype):
    """The merged shader as WGSL: every operand of every launch that is a register written by an earlier
    launch, or a value an earlier operand loaded, is its own XOR with a zero the compiler cannot see, in
    every bit (64-bit values in both halves); an operand loaded for itself alone is read as loaded, as
    eagerly; and the launches' bodies call the very helper functions of their single-op shaders.
    On NVIDIA's Vulkan driver (webgpu:0 on the H200), a fused float64 hypot(x, 1.0) then sin replayed an
    ulp off eager while registers were ORed with the word zero-extended: the high half, with the sign
    that abs had cleared, passed through known. Lavapipe replays bit for bit either way, so the shader
    text is checked here."""
    sources = record_sources(monkeypatch, client)  # every shader of the chain built (and seen) anew
    a = (np.linspace(-2, 2, 64) * (1 + 1j if dtype.kind == "c" else 1)).astype(dtype)
    run = _BARRIER_CHAINS[dtype.kind]
    r, want = replay_and_eager(run, a, np.ones_like(a), a[::-1].copy())
    np.testing.assert_array_equal(bits(r), bits(want))
    fused = [s for k, s in sources.items() if k[0] == "fused"]
    assert len(fused) == 1
    src = fused[0]
    main = src[src.index("\nfn at_("):]  # (the element's code, map_entry's)
    wide = dtype.itemsize // (2 if dtype.kind == "c" else 1) == 8
    z = r"(u\.w\[0\]\.z|\(u\.w\[0\]\.z \* \d+u\))"
    lane = rf"\^ \(\(u64\({z}\) << 32u\) \| u64\({z}\)\)" if wide else rf"\^ {z}\)"
    zeros = []
    for name, expr in re.findall(r"let (o\d+_\d+) = (.*);", main):
        lanes = re.findall(lane, expr)
        assert len(lanes) == (2 if dtype.kind == "c" else 1), (name, expr)
        assert all(len(set(zs)) == 1 for zs in lanes if wide), (name, expr)  # the same zero in both halves
        zeros.append(lanes[0])
    # registers: each launch after the first reads one (and the last reads y a second time)
    assert len(zeros) >= 3 and len(set(zeros)) == len(zeros)  # a zero of its own per operand
    body = [line for line in main.splitlines() if re.match(r"\s*let sr\d+_\d+ = ", line)]
    # a launch's body reads opaque operands, and a load bare once at most (a second operand reading it
    # reads an opaque copy)
    assert not re.search(r"\br\d+_\d+\b", "\n".join(body))
    bare = re.findall(r"\bl\d+\b", "\n".join(body))
    assert bare and len(set(bare)) == len(bare)
    fused_fns = _functions(src)
    for key, s in sources.items():
        if key[0] != "fused":
            for name, text in _functions(s).items():
                if not re.fullmatch(r"(ld|st)\d+|at_", name):  # (binding accessors are numbered per shader)
                    assert fused_fns.get(name) == text, name


def test_graph_parameters_survive_later_eager_work():
    x = on(np.arange(8, dtype=np.float32))
    out = xp.empty((8,), dtype=xp.float32, device=DEV)
    with xp.capture(device=DEV) as g:
        ew.multiply(ew.add(x, 3.0), 2.0, out=out)
    t = x
    for k in range(3000):  # refills the eager uniform buffer many times over
        t = ew.add(t, float(k))
    to_np(t)
    x[...] = on(np.ones(8, np.float32))
    g.replay()
    assert to_np(out).tolist() == [8.0] * 8


def test_intermediates_live_in_the_arena_and_inputs_are_held():
    x = on(np.arange(6.0, dtype=np.float32))
    with xp.capture(device=DEV) as g:
        t = ew.multiply(x, 2.0)
        r = xp.sum(ew.add(t, 1.0))
    assert g.arena_bytes > 0
    assert any(i is x for i in g.inputs)
    ref = weakref.ref(x._buf)
    del x
    gc.collect()
    assert ref() is not None  # held by the graph
    g.replay()
    assert float(r) == 36.0


@given(st.sampled_from(["sum", "mean", "max", "var", "cumulative_sum"]), st.integers(1, 3000))
def test_reductions_with_partial_results_replay(name, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((2, n)).astype(np.float32)
    x = on(a)
    f = getattr(xp, name)
    with xp.capture(device=DEV) as g:
        r = f(x, axis=1)
    a2 = rng.standard_normal((2, n)).astype(np.float32)
    x[...] = on(a2)
    g.replay()
    # The reference is computed in float64: NumPy's float32 cumsum is sequential, and its own error
    # (~eps * n for a random walk of n terms: 1.2e-4 at n=2492) exceeded the tolerance. A float32 sum or
    # blocked scan of n standard-normal terms is off by a small multiple of eps * sqrt(n) (measured
    # <= 8 eps * sqrt(n) for numr's scan, n <= 1e5); the absolute tolerance allows 16x that.
    ref = to_np(f(xp.asarray(a2.astype(np.float64)), axis=1))
    atol = 16 * np.finfo(np.float32).eps * np.sqrt(n)
    np.testing.assert_allclose(to_np(r), ref, rtol=1e-4, atol=atol)


def test_indexing_creation_and_copies_in_a_capture():
    a = np.arange(20, dtype=np.int32)
    x = on(a)
    idx = on(np.array([3, 1, 4, 1, 5], np.int64 if xp.int64 in xp.__array_namespace_info__().dtypes(
        device=DEV).values() else np.int32))
    with xp.capture(device=DEV) as g:
        gathered = x[idx]
        z = xp.zeros((5,), dtype=xp.int32, device=DEV)
        z[1:] = gathered[:-1]
        w = xp.concat([z, xp.flip(gathered)])
        x[ew.less(x, 3)] = 0
    x[...] = on(a * 10)
    g.replay()
    assert to_np(gathered).tolist() == [30, 10, 40, 10, 50]
    assert to_np(w).tolist() == [0, 30, 10, 40, 10, 50, 10, 40, 10, 30]


@pytest.mark.parametrize("what", ["bool", "float", "to_device", "mask"])
def test_host_reads_raise_capture_error_and_leave_the_device_usable(what):
    x = on(np.arange(4.0, dtype=np.float32))
    with pytest.raises(xp.CaptureError):
        with xp.capture(device=DEV):
            y = ew.add(x, 1.0)
            if what == "bool":
                bool(y[0])
            elif what == "float":
                float(y[0])
            elif what == "to_device":
                y.to_device("cpu")
            else:
                y[ew.greater(y, 2.0)]
    assert client._steps is None and not client.allocator.is_frozen
    assert to_np(ew.add(x, 1.0)).tolist() == [1, 2, 3, 4]
    with xp.capture(device=DEV) as g:
        r = ew.multiply(x, 3.0)
    g.replay()
    assert to_np(r).tolist() == [0, 3, 6, 9]


def test_capture_of_launches_split_over_bindings(monkeypatch):
    monkeypatch.setattr(client, "max_binding", 4096)
    a = np.arange(5000, dtype=np.float32)
    x = on(a)
    with xp.capture(device=DEV) as g:
        y = ew.add(x, 1.0)
        s = xp.sum(y)
    assert len(g._graph.steps) > 3
    x[...] = on(a * 2)
    g.replay()
    assert to_np(y)[-1] == 2 * 4999 + 1
    assert float(s) == float((a * 2 + 1).sum(dtype=np.float64))


def test_fused_launches_replay_when_the_last_captured_launch_submitted_everything(monkeypatch):
    """A launch binding EARLY_SUBMIT_BYTES submits at once, so a capture whose last launch does leaves
    nothing pending; the merged launches the fusion pass adds at the end still need their parameters
    written into the graph's uniform buffer (they were not: x * 2 + 1 replayed nothing)."""
    from numr_array.backends.webgpu import _client
    monkeypatch.setattr(_client, "EARLY_SUBMIT_BYTES", 1)
    x = on(np.arange(64, dtype=np.float32))
    with xp.capture(device=DEV) as g:
        u = ew.add(ew.multiply(x, 2.0), 1.0)
    assert len(g._graph.steps) == 1
    x[...] = on(np.ones(64, np.float32))
    g.replay()
    assert to_np(u).tolist() == [3.0] * 64


def test_reused_memory_read_through_another_view_splits_the_fused_run():
    """``t`` is read transposed and dies; its memory then takes the result of the next launch, over the same
    iteration space. Merged, element (i, j) would overwrite what element (j, i) has still to read: the
    fusion sees one wgpu buffer under two views and keeps the launches apart."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((96, 96)).astype(np.float32), rng.standard_normal((96, 96)).astype(np.float32)
    x, y = on(a), on(b)

    def capture(reuse):
        with xp.capture(device=DEV) as g:
            t = xp.sin(x)
            block = t._buf.block
            u = xp.matrix_transpose(t) + y
            if reuse:
                del t
            c = u + xp.matrix_transpose(y)
            assert (c._buf.block is block) == reuse
        return g, c

    g, c = capture(reuse=False)
    assert len(g._graph.steps) == 2  # the two transposed adds merge when their memory is distinct
    g, c = capture(reuse=True)
    assert len(g._graph.steps) == 3
    a2 = rng.standard_normal((96, 96)).astype(np.float32)
    x[...] = on(a2)
    g.replay()
    want = xp.matrix_transpose(xp.sin(on(a2))) + y + xp.matrix_transpose(y)
    assert to_np(c).tobytes() == to_np(want).tobytes()


@pytest.mark.parametrize("op", ["add", "sin", "where", "clip", "astype", "copy", "fill"])
def test_a_captured_map_launch_keeps_no_tensor_alive(op):
    """What the fusion pass keeps of a launch (its record) holds no tensor: a temporary dies where it
    would eagerly, and its memory can serve the block's next allocation."""
    x = on(np.linspace(-2, 2, 64, dtype=np.float32))
    calls = {
        "add": lambda t: ew.add(t, x),
        "sin": lambda t: xp.sin(t),
        "where": lambda t: xp.where(ew.greater(t, 0.0), t, x),
        "clip": lambda t: xp.clip(t, -1.0, x),
        "astype": lambda t: xp.astype(t, xp.int32),
        "copy": lambda t: t[::-1] + 0.0,
        "fill": lambda t: xp.full_like(t, 3.0),
    }
    with xp.capture(device=DEV):
        t = ew.multiply(x, 2.0)
        r = calls[op](t)
        ref = weakref.ref(t)
        del t
        gc.collect()
        assert ref() is None
    del r


def test_two_fused_launches_of_one_kernel_declaring_a_variable_replay_as_eager():
    # rfft's input scaling (a map body that declares `var fz`) twice in a row: fused, each body needs a
    # scope of its own, else the merged shader declares fz twice and fails to compile
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(500).astype(np.float32), rng.standard_normal(33).astype(np.float32)
    x, h = on(a), on(b)
    n = 532

    def conv():
        return xp.fft.irfft(xp.fft.rfft(x, n=n) * xp.fft.rfft(h, n=n), n=n)

    with xp.capture(device=DEV) as g:
        r = conv()
    np.testing.assert_array_equal(to_np(r), to_np(conv()))
    x[...] = on(a[::-1].copy())
    g.replay()
    np.testing.assert_array_equal(to_np(r), to_np(conv()))


def test_float64_libm_launches_stay_apart_float32_ones_merge():
    """A float64 function of numr's WGSL libm is not merged with other launches (a driver may compile its
    arithmetic otherwise inside a larger shader: the H200 replayed a fused float64 hypot-then-sin an ulp off
    eager); float32 chains of the same functions still merge."""
    for dtype, steps in ((np.float32, 1), (np.float64, 3)):
        if dtype == np.float64 and xp.float64 not in xp.__array_namespace_info__().dtypes(device=DEV).values():
            continue  # (no shader-f64: nothing to keep apart)
        x = on(np.linspace(-2, 2, 64).astype(dtype))
        with xp.capture(device=DEV) as g:
            y = xp.sin(xp.hypot(x, 1.0) * 2.0)
        assert len(g._graph.steps) == steps, (dtype, len(g._graph.steps))
        eager = xp.sin(xp.hypot(x, 1.0) * 2.0)
        g.replay()
        assert np.asarray(y.to_device("cpu")).tobytes() == np.asarray(eager.to_device("cpu")).tobytes()


@pytest.mark.parametrize("most, first, n, chunks", [(8, 16, 20, [8, 8, 4]), (128, 4, 30, [4, 8, 16, 2])],
                         ids=["at-most-replay_chunk", "doubling"])
def test_a_long_replay_is_submitted_in_chunks_as_it_is_encoded(monkeypatch, most, first, n, chunks):
    """A replay is cut into chunks of FIRST_CHUNK dispatches, then twice as many each, up to client.replay_chunk;
    each chunk but the last is submitted as soon as it is encoded (the GPU works on it while the host encodes
    the next), and the last shares the next submission."""
    from numr_array.backends.webgpu import _client
    monkeypatch.setattr(client, "fusion", False)
    monkeypatch.setattr(client, "replay_chunk", most)
    monkeypatch.setattr(_client, "FIRST_CHUNK", first)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(256).astype(np.float32), rng.standard_normal(256).astype(np.float32)
    x, y = on(a), on(b)
    with xp.capture(device=DEV) as g:
        r = chain(x, y, n)
    assert len(g._graph.steps) == n
    assert [len(c) for c in g._graph.encoded] == chunks
    x[...] = on(b)
    q = _CountingQueue(client.queue)
    client.synchronize()
    monkeypatch.setattr(client, "queue", q)
    g.replay()
    assert q.submits == len(chunks) - 1
    np.testing.assert_array_equal(to_np(r), to_np(chain(on(b), y, n)))


def test_the_cache_keeps_the_most_recent_captured_pipelines_and_graphs_keep_their_own(monkeypatch):
    """A fused dispatch's source holds its shape (_shader.baked), so each capture of another shape compiles
    its own pipeline: the cache keeps CAPTURED_PIPELINES of them, and a graph whose pipeline it dropped still
    replays (the graph holds it)."""
    from numr_array.backends.webgpu import _client
    monkeypatch.setattr(_client, "CAPTURED_PIPELINES", 2)
    before = {k for k in client._pipelines if k[0] == "fused"}
    graphs = []
    for n in (300, 301, 302, 303):
        x = xp.asarray(np.arange(n, dtype=np.float32), device=DEV)
        with xp.capture(device=DEV) as g:
            y = (x + 1.0) * 2.0 - 3.0
        graphs.append((g, x, y, n))
    assert len({k for k in client._pipelines if k[0] == "fused"} - before) == 2
    assert len(client._captured_keys) <= 2
    for g, x, y, n in graphs:
        new = np.linspace(-1, 1, n, dtype=np.float32)
        x[...] = xp.asarray(new, device=DEV)
        g.replay()
        np.testing.assert_array_equal(to_np(y), (new + np.float32(1)) * np.float32(2) - np.float32(3))
