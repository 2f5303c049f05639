"""Graph capture and replay: the contract of numr_array.capture() on the device under test."""

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import numr_array as xp
from numr_array._device import parse_device

from .helpers import defaults, device_data, needs_dtype
from .strategies import DEVICE, to_np

dev = parse_device(DEVICE)


def arr(values, dtype=None):
    """``values`` on the device (NumPy data in the dtype the device holds it in: float64 as float32 on an
    adapter without shader-f64)."""
    if isinstance(values, np.ndarray):
        values = device_data(values)
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def test_issue_example_replays_on_new_input_data():
    x = arr([[1., 2.], [3., 4.]], dtype=xp.float32)
    out = xp.empty((2, 2), dtype=xp.float32, device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        t = xp.multiply(x, 2.0)
        r = xp.add(t, 1.0, out=out)
    assert r is out
    assert np.array_equal(to_np(out), [[3, 5], [7, 9]])
    x[...] = arr([[5., 6.], [7., 8.]], dtype=xp.float32)
    g.replay()
    assert np.array_equal(to_np(out), [[11, 13], [15, 17]])
    x[0, 0] = -1.0
    g.replay()
    assert to_np(out)[0, 0] == -1.0


def test_a_block_that_runs_only_on_another_device_warns():
    # capture() records the default device: a block whose arrays live elsewhere would replay nothing
    other = next((d for d in xp.__array_namespace_info__().devices() if str(d) != str(dev)), None)
    if other is None:
        pytest.skip("one device here: no other device to run the block on")
    x = xp.asarray([1.0, 2.0], device=other)
    with pytest.warns(RuntimeWarning, match=f"launched nothing on {dev}.*ran on {other}"):
        with xp.capture(device=DEVICE):
            x * 2.0
    with xp.capture(device=DEVICE) as g:  # work on the captured device too: no warning
        y = arr([1.0, 2.0]) * 2.0
        x * 2.0
    g.replay()
    assert to_np(y).tolist() == [2.0, 4.0]


def test_replay_does_not_allocate_or_validate():
    x = arr(np.arange(6.0).reshape(2, 3))
    out = xp.empty((2, 3), device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        xp.sqrt(xp.exp(x) + 1, out=out)
    alloc = dev.client.allocator
    gc.collect()
    before = alloc.stats()
    for _ in range(5):
        g.replay()
    after = alloc.stats()
    assert (after.bytes_in_use, after.allocations) == (before.bytes_in_use, before.allocations)
    assert np.allclose(to_np(out), np.sqrt(np.exp(np.arange(6.0).reshape(2, 3)) + 1))


def test_intermediates_live_in_the_arena_and_survive_the_block():
    x = arr(np.ones(1000))
    out = xp.empty((1000,), device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        assert dev.client.allocator.is_frozen
        t1 = x * 3.0
        t2 = t1 - 1.0
        xp.add(t2, t1, out=out)
    assert not dev.client.allocator.is_frozen
    assert g.arena_bytes >= 2 * x.size * x.dtype.itemsize  # t1 and t2
    keep = weakref.ref(t1._buf.block)  # (t1._buf is the arena's handle on that memory, which goes with t1)
    del t1, t2
    gc.collect()
    assert keep() is not None  # the arena holds the intermediates' memory
    x[...] = 2.0
    g.replay()
    assert np.array_equal(to_np(out), np.full(1000, 11.0))
    del g
    gc.collect()
    assert keep() is None  # and gives it back with the graph


def test_graph_holds_inputs_and_outputs_the_user_dropped():
    x = arr(np.arange(4.0))
    out = xp.empty((4,), device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        xp.multiply(x, x, out=out)
    assert any(t is x for t in g.inputs) and any(t is out for t in g.outputs)
    x_buf = weakref.ref(x._buf)
    del x
    gc.collect()
    assert x_buf() is not None
    g.replay()
    assert np.array_equal(to_np(out), [0, 1, 4, 9])
    del g
    gc.collect()
    assert x_buf() is None


def test_in_place_operators_are_recorded():
    acc = arr(np.zeros(3))
    step = arr([1.0, 2.0, 3.0])
    with xp.capture(device=DEVICE) as g:
        acc += step
    assert any(t is acc for t in g.outputs)
    for _ in range(3):
        g.replay()
    assert np.array_equal(to_np(acc), [4, 8, 12])  # once while capturing, three times replayed


def test_python_scalars_and_shapes_are_frozen():
    x = arr(np.ones((2, 3)))
    out = xp.empty((2, 3), device=DEVICE)
    scale = 2.0
    with xp.capture(device=DEVICE) as g:
        xp.multiply(x, scale, out=out)
    scale = 5.0
    g.replay()
    assert np.array_equal(to_np(out), np.full((2, 3), 2.0))




@pytest.mark.parametrize("name", ["__bool__", "__int__", "__float__", "__complex__", "__index__", "__array__",
                                  "__dlpack__", "nonzero", "unique_values", "unique_all", "unique_counts",
                                  "unique_inverse", "boolean-mask indexing", "to_device"])
def test_host_reads_raise_capture_error_and_leave_no_graph(name, fake_backend):
    x = arr([1.0, 2.0, 3.0])
    calls = {
        "__bool__": lambda: bool(x[0] > 0),
        "__int__": lambda: int(x[0]),
        "__float__": lambda: float(x[0]),
        "__complex__": lambda: complex(x[0]),
        "__index__": lambda: [1, 2][xp.astype(x[0], defaults()["integral"])],
        "__array__": lambda: np.asarray(x),
        "__dlpack__": lambda: x.__dlpack__(),
        "nonzero": lambda: xp.nonzero(x),
        "unique_values": lambda: xp.unique_values(x),
        "unique_all": lambda: xp.unique_all(x),
        "unique_counts": lambda: xp.unique_counts(x),
        "unique_inverse": lambda: xp.unique_inverse(x),
        "boolean-mask indexing": lambda: x[x > 1.5],
        "to_device": lambda: x.to_device("cpu" if DEVICE != "cpu" else "fake:0"),
    }
    before = dev.client.allocator.stats()
    with pytest.raises(xp.CaptureError):
        with xp.capture(device=DEVICE) as g:
            y = x + 1
            calls[name]()
    # the capture is gone: allocator unfrozen, nothing to replay, the device usable, a new capture works
    assert not dev.client.allocator.is_frozen
    with pytest.raises(xp.CaptureError, match="aborted"):
        g.replay()
    assert np.array_equal(to_np(x + 1), [2, 3, 4])
    out = xp.empty((3,), device=DEVICE)
    with xp.capture(device=DEVICE) as g2:
        xp.add(x, 1.0, out=out)
    g2.replay()
    assert np.array_equal(to_np(out), [2, 3, 4])
    del y, g, g2, out
    gc.collect()
    assert dev.client.allocator.stats().bytes_in_use == before.bytes_in_use  # the aborted capture leaked nothing


def test_capture_error_names_the_operation():
    x = arr([1.0])
    with pytest.raises(xp.CaptureError, match="__float__"):
        with xp.capture(device=DEVICE):
            float(x[0])


def test_swallowed_capture_error_still_fails_the_block():
    x = arr([1.0])
    with pytest.raises(xp.CaptureError, match="aborted"):
        with xp.capture(device=DEVICE) as g:
            try:
                float(x[0])
            except xp.CaptureError:
                pass
            x * 2
    with pytest.raises(xp.CaptureError):
        g.replay()


def test_nested_capture_raises_and_outer_survives():
    x = arr([1.0, 2.0])
    out = xp.empty((2,), device=DEVICE)
    with pytest.raises(xp.CaptureError, match="nested"):
        with xp.capture(device=DEVICE):
            with xp.capture(device=DEVICE):
                pass
    assert not dev.client.allocator.is_frozen
    with xp.capture(device=DEVICE) as g:
        xp.negative(x, out=out)
    g.replay()
    assert np.array_equal(to_np(out), [-1, -2])


def test_a_replay_inside_a_capture_block_raises():
    """A graph replayed inside another capture() block would run now and not be part of the new graph (whose
    replays would then miss its work): CaptureError, the block aborted; both graphs' devices stay usable."""
    x = arr([1.0, 2.0])
    out = xp.empty((2,), device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        xp.negative(x, out=out)
    g.replay()
    g.replay()  # (a replay after the second: WebGPU prepares the next one)
    with pytest.raises(xp.CaptureError, match="replay"):
        with xp.capture(device=DEVICE):
            g.replay()
    assert not dev.client.allocator.is_frozen
    x[...] = arr([3.0, 4.0])
    g.replay()
    assert np.array_equal(to_np(out), [-3, -4])


def test_exception_in_block_discards_the_graph():
    x = arr([1.0])
    with pytest.raises(ZeroDivisionError):
        with xp.capture(device=DEVICE) as g:
            x + 1
            1 / 0
    assert not dev.client.allocator.is_frozen
    with pytest.raises(xp.CaptureError):
        g.replay()


def test_validation_errors_inside_capture_leave_out_untouched():
    x = arr([1.0, 2.0])
    out = arr([7.0, 7.0])
    with pytest.raises(ValueError):
        with xp.capture(device=DEVICE):
            xp.add(x, arr([1.0, 2.0, 3.0]), out=out)
    assert np.array_equal(to_np(out), [7, 7])


def test_replay_before_the_block_ends_raises():
    with xp.capture(device=DEVICE) as g:
        with pytest.raises(xp.CaptureError, match="not finished"):
            g.replay()


UNARY = ["sin", "cos", "exp", "tanh", "abs", "negative", "square", "sqrt", "log1p", "floor"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "hypot"]


@given(st.lists(st.one_of(st.tuples(st.just(1), st.sampled_from(UNARY)),
                          st.tuples(st.just(2), st.sampled_from(BINARY), st.floats(-3, 3))),
                min_size=1, max_size=12),
       st.lists(st.floats(0, 2), min_size=4, max_size=4))
def test_replay_equals_eager(chain, new_values):
    """A random chain of element-wise ops: replay after new input data equals running it eagerly."""
    def run(x, y, out):
        t = x
        for step in chain:
            if step[0] == 1:
                t = getattr(xp, step[1])(xp.abs(t))
            else:
                t = getattr(xp, step[1])(t, y) if step[2] > 0 else getattr(xp, step[1])(t, step[2])
        return xp.add(t, 0.0, out=out)

    x = arr(np.linspace(0.1, 1, 4))
    y = arr(np.linspace(1, 2, 4))
    out = xp.empty((4,), device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        run(x, y, out)
    x[...] = arr(new_values)
    g.replay()
    eager = run(arr(new_values), y, xp.empty((4,), device=DEVICE))
    assert np.array_equal(to_np(out), to_np(eager), equal_nan=True)


@pytest.mark.parametrize("then", ["multiply", "cumulative_sum"])
def test_std_then_a_map_launch_of_32_mib_replays_as_eager(then):
    """std over the 2^20 rows of a 2^20 x 8 float32 array, then a launch over all of it (as the jit
    benchmark's sort_stats): the size at which WebGPU's last launch submitted everything before the fused
    launches got their parameters. Replay on new data equals eager, bit for bit."""
    def run(X):
        s = xp.std(X, axis=0)
        o = X * 2.0 if then == "multiply" else xp.cumulative_sum(X, axis=1)
        return s, o

    rng = np.random.default_rng(0)
    X = arr(rng.standard_normal((1 << 20, 8)).astype(np.float32))
    with xp.capture(device=DEVICE) as g:
        s, o = run(X)
    a2 = (rng.standard_normal((1 << 20, 8)) * 3 + 1).astype(np.float32)
    X[...] = arr(a2)
    g.replay()
    es, eo = run(arr(a2))
    assert to_np(s).tobytes() == to_np(es).tobytes()
    assert to_np(o).tobytes() == to_np(eo).tobytes()
    np.testing.assert_allclose(to_np(s), np.std(a2.astype(np.float64), axis=0), rtol=1e-3)


SHAPED_STEPS = ["add_row", "subtract_column", "multiply_transposed", "square_by_pow", "scale_by_0d", "exp"]


@given(st.lists(st.sampled_from(SHAPED_STEPS), min_size=1, max_size=6),
       st.sampled_from(["sum", "mean", "max", "min"]), st.sampled_from([-1, 2, (1, 2)]),
       st.sampled_from([(5, 4, 6), (7, 3, 33), (64, 2, 8)]), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_replay_of_broadcasts_views_and_row_reductions_equals_eager(steps, reduction, axis, shape, keep, seed):
    """A random chain of element-wise ops on operands of other shapes and layouts (a broadcast row and column,
    a transposed array, a 0-D scale, pow), ended by a reduction over trailing axes, its intermediate returned
    or not: a replay after new input data gives eager's bits (where a backend fuses the chain into the
    reduction, and drops the stores of results that died)."""
    a, b, c = shape
    rng = np.random.default_rng(seed)

    def data():
        return [rng.uniform(-2, 2, shape), rng.uniform(-2, 2, (c,)), rng.uniform(-2, 2, (a, 1, 1)),
                rng.uniform(-2, 2, (c, b, a)), rng.uniform(0.5, 1.5, ())]

    def run(x, row, column, xt, s):
        t = x
        for step in steps:
            if step == "add_row":
                t = t + row
            elif step == "subtract_column":
                t = t - column
            elif step == "multiply_transposed":
                t = t * xp.permute_dims(xt, (2, 1, 0))
            elif step == "square_by_pow":
                t = t ** 2
            elif step == "scale_by_0d":
                t = t * s
            else:
                t = xp.exp(-xp.abs(t))
        r = getattr(xp, reduction)(t, axis=axis)
        return (r, t) if keep else (r,)

    tensors = [arr(v, dtype=xp.float32) for v in data()]
    with xp.capture(device=DEVICE) as g:
        results = run(*tensors)
    for t, v in zip(tensors, data()):
        t[...] = arr(v, dtype=xp.float32)
    g.replay()
    for got, want in zip(results, run(*tensors)):
        assert to_np(got).tobytes() == to_np(want).tobytes()


ROW_STEPS = ["sigmoid", "minus_y", "times_y", "tanh", "scale", "abs"]


@given(st.lists(st.sampled_from(ROW_STEPS), max_size=5), st.integers(1, 300), st.integers(1, 130),
       st.sampled_from(["float32", "float64"]), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_replay_of_a_linear_models_gradient_equals_eager(steps, n, d, dtype, in_place, seed):
    """X @ w, a random chain of element-wise ops over its n results, X.T @ r and an update of w (in place or
    not): a replay after new input data gives eager's bits (CUDA makes such a step one pass over X's rows,
    whose products repeat the eager kernels' sums; X has up to 130 columns, past the pass's 128)."""
    needs_dtype(getattr(xp, dtype))
    rng = np.random.default_rng(seed)

    def data():
        return [rng.standard_normal((n, d)).astype(dtype), (rng.standard_normal(d) * 0.1).astype(dtype),
                (rng.random(n) < 0.5).astype(dtype)]

    def run(x, w, y):
        r = x @ w
        for step in steps:
            if step == "sigmoid":
                r = 1.0 / (1.0 + xp.exp(-r))
            elif step == "minus_y":
                r = r - y
            elif step == "times_y":
                r = r * y
            elif step == "tanh":
                r = xp.tanh(r)
            elif step == "scale":
                r = 0.5 * r
            else:
                r = xp.abs(r)
        g = x.T @ r
        if in_place:
            xp.subtract(w, 0.01 * g, out=w)
            return (w,)
        return (w - 0.01 * g, r)

    def fresh(values):
        return [arr(v, dtype=getattr(xp, dtype)) for v in values]

    first, second = data(), data()
    tensors = fresh(first)
    with xp.capture(device=DEVICE) as g:
        results = run(*tensors)
    for got, want in zip(results, run(*fresh(first))):
        assert to_np(got).tobytes() == to_np(want).tobytes()
    for t, v in zip(tensors, second):
        t[...] = arr(v, dtype=getattr(xp, dtype))
    g.replay()
    for got, want in zip(results, run(*fresh(second))):
        assert to_np(got).tobytes() == to_np(want).tobytes()


def test_a_captured_graph_refuses_pickle_and_copies_by_name():
    import copy
    import pickle
    a = xp.ones(4, device=DEVICE)
    with xp.capture(device=DEVICE) as g:
        a + 1.0
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match="captured graph .* cannot be pickled or copied"):
            attempt(g)
