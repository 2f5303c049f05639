"""numr_array.jit on the device under test: replay equals eager, signatures, fallback, outputs, threads."""

import threading
import warnings

import numpy as np
import pytest

import numr_array as xp
from numr_array._device import parse_device

from .helpers import device_data
from .strategies import DEVICE, to_np

dev = parse_device(DEVICE)


def arr(values, dtype=None):
    if isinstance(values, np.ndarray):
        values = device_data(values)
    return xp.asarray(values, dtype=dtype, device=DEVICE)


def step(w, x, lr):
    """A gradient step of least squares: matmul, element-wise ops with scalars, a reduction."""
    r = xp.matmul(x, w) - 1.0
    g = xp.matmul(xp.matrix_transpose(x), r) / x.shape[0]
    return w - lr * g, xp.mean(r * r)


def test_replay_equals_eager_over_calls_with_new_inputs():
    rng = np.random.default_rng(0)
    f = xp.jit(step)
    x = arr(rng.standard_normal((64, 8)).astype(np.float32))
    w_j = w_e = arr(np.zeros(8, np.float32))
    for k in range(5):
        w_j, loss_j = f(w_j, x, 0.1)
        w_e, loss_e = step(w_e, x, 0.1)
        assert np.array_equal(to_np(w_j), to_np(w_e)), k
        assert np.array_equal(to_np(loss_j), to_np(loss_e)), k
    assert f.signatures == 1
    x2 = arr(rng.standard_normal((64, 8)).astype(np.float32))  # new data, same signature: replayed
    assert np.array_equal(to_np(f(w_j, x2, 0.1)[0]), to_np(step(w_j, x2, 0.1)[0]))
    assert f.signatures == 1


def test_a_new_signature_captures_again():
    calls = []

    @xp.jit
    def f(x, k):
        calls.append(1)
        return x * k + 1

    a = arr(np.arange(4, dtype=np.float32))
    b = arr(np.arange(6, dtype=np.float32))
    assert np.array_equal(to_np(f(a, 2.0)), np.arange(4) * 2 + 1)
    assert np.array_equal(to_np(f(a + 1, 2.0)), (np.arange(4) + 1) * 2 + 1)
    assert len(calls) == 1  # the second call replayed
    assert np.array_equal(to_np(f(b, 2.0)), np.arange(6) * 2 + 1)  # shape
    assert np.array_equal(to_np(f(a, 3.0)), np.arange(4) * 3 + 1)  # the scalar's value
    assert len(calls) == 3
    assert np.array_equal(to_np(f(a, 3)), np.arange(4) * 3 + 1)  # int 3 is not float 3.0: a new signature
    assert len(calls) == 4 and f.signatures == 4
    assert np.array_equal(to_np(f(xp.astype(a, xp.int32), 3)), np.arange(4) * 3 + 1)  # dtype
    assert f.signatures == 5


def test_a_host_read_falls_back_to_eager_once_and_says_why():
    calls = []

    @xp.jit
    def f(x):
        calls.append(1)
        if float(xp.sum(x)) > 0:
            return x + 1
        return x - 1

    a = arr(np.ones(3, np.float32))
    with pytest.warns(xp.JitFallbackWarning, match=r"f: it cannot be captured .*float.*runs eagerly"):
        assert np.array_equal(to_np(f(a)), [2, 2, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the signature now runs eagerly, without a warning
        assert np.array_equal(to_np(f(-a)), [-2, -2, -2])
    assert len(calls) == 3  # the aborted capture, then the eager run of each call


def test_outputs_are_fresh_arrays_not_the_graphs_buffers():
    f = xp.jit(lambda x: x * 2)
    a = arr(np.arange(3, dtype=np.float32))
    r1 = f(a)
    r2 = f(a + 10)
    r3 = f(a + 20)
    assert np.array_equal(to_np(r1), [0, 2, 4])  # not overwritten by the later replays
    assert np.array_equal(to_np(r2), [20, 22, 24])
    r3[...] = arr(np.zeros(3, np.float32))  # writing a result does not touch the graph
    assert np.array_equal(to_np(f(a)), [0, 2, 4])


def test_the_callers_arrays_are_neither_aliased_nor_left_unwritten():
    @xp.jit
    def f(x, acc):
        xp.add(acc, x, out=acc)  # writes an argument, as eager would
        return x

    x = arr(np.ones(3, np.float32))
    acc = arr(np.zeros(3, np.float32))
    r = f(x, acc)
    assert r is not x and np.array_equal(to_np(acc), [1, 1, 1])
    f(x, acc)
    assert np.array_equal(to_np(acc), [2, 2, 2])
    x[...] = arr(np.full(3, 5, np.float32))  # the caller's x is not the graph's input buffer
    assert np.array_equal(to_np(r), [1, 1, 1])


def test_exceptions_propagate_and_nothing_is_cached():
    calls = []

    @xp.jit
    def f(x, fail):
        calls.append(1)
        y = x + 1
        if fail:
            raise KeyError("boom")
        return y

    a = arr(np.ones(2, np.float32))
    with pytest.raises(KeyError, match="boom"):
        f(a, True)
    with pytest.raises(KeyError, match="boom"):
        f(a, True)
    assert len(calls) == 2 and f.signatures == 0
    with pytest.raises(TypeError):  # the namespace's own errors propagate too
        xp.jit(lambda x: xp.sin(x, 1))(a)
    assert np.array_equal(to_np(f(a, False)), [2, 2])


def test_unhashable_arguments_and_mixed_devices_run_eagerly_with_a_warning():
    f = xp.jit(lambda x, host: x * float(host[0]))
    a = arr(np.ones(2, np.float32))
    with pytest.warns(xp.JitFallbackWarning, match="neither an array nor hashable"):
        assert np.array_equal(to_np(f(a, np.array([3.0]))), [3, 3])  # a NumPy array: not hashable
    if DEVICE != "cpu":
        g = xp.jit(lambda x, y: x + xp.asarray(y, device=x.device))
        with pytest.warns(xp.JitFallbackWarning, match="several devices"):
            g(a, xp.ones(2, dtype=xp.float32, device="cpu"))


def test_nested_arguments_kwargs_and_outputs():
    @xp.jit
    def f(pair, *, scale):
        a, b = pair
        return {"sum": (a + b) * scale, "parts": [a, b * scale], "n": 2}

    a, b = arr(np.ones(2, np.float32)), arr(np.full(2, 2, np.float32))
    for s in (1.0, 1.0, 2.0):
        r = f((a, b), scale=s)
        assert r["n"] == 2
        assert np.array_equal(to_np(r["sum"]), [3 * s, 3 * s])
        assert np.array_equal(to_np(r["parts"][1]), [2 * s, 2 * s])
        assert r["parts"][0] is not a


def test_decorator_with_parentheses_and_bad_argument():
    @xp.jit()
    def f(x):
        return -x

    assert np.array_equal(to_np(f(arr(np.ones(2, np.float32)))), [-1, -1])
    with pytest.raises(TypeError, match="jit: expected a function"):
        xp.jit(3)


def test_concurrent_calls_share_one_capture_and_stay_correct():
    calls = []

    @xp.jit
    def f(x, y):
        calls.append(1)
        return xp.sin(x) * 2 + y

    rng = np.random.default_rng(1)
    data = [rng.standard_normal(256).astype(np.float32) for _ in range(8)]
    y = arr(np.ones(256, np.float32))
    want = [to_np(xp.sin(arr(d)) * 2 + y) for d in data]
    got: dict = {}
    errors = []
    start = threading.Barrier(4)

    def worker(t):
        try:
            start.wait()
            for k in range(t, len(data), 4):
                for _ in range(3):
                    got[k] = to_np(f(arr(data[k]), y))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # traced twice: the first call's capture, and the second call's, which reads y (passed again) in place
    assert len(calls) == 2 and f.signatures == 1
    for k in range(len(data)):
        assert np.array_equal(got[k], want[k]), k


def _entry(f):
    (entry,) = f._cache.values()
    return entry


def test_an_argument_passed_again_is_read_in_place():
    traces = []

    @xp.jit
    def f(w, x):
        traces.append(1)
        return xp.matmul(x, w) * 2.0

    rng = np.random.default_rng(4)
    X = rng.standard_normal((32, 8)).astype(np.float32)
    x = arr(X)
    for k in range(4):
        W = rng.standard_normal(8).astype(np.float32)
        got = f(arr(W), x)
        assert np.array_equal(to_np(got), to_np(xp.matmul(x, arr(W)) * 2.0)), k
    # the second call captured again with x as it is (w, a new array each call, still copied)
    assert len(traces) == 2 and set(_entry(f).bound) == {1} and _entry(f).statics[1] is None
    x[...] = arr(X[::-1].copy())  # written in place: the graph reads it where it is
    W = rng.standard_normal(8).astype(np.float32)
    assert np.array_equal(to_np(f(arr(W), x)), to_np(xp.matmul(x, arr(W)) * 2.0))
    assert len(traces) == 2


def test_other_memory_for_an_argument_read_in_place_captures_with_copies_for_good():
    traces = []

    @xp.jit
    def f(a, b):
        traces.append(1)
        return a @ b + 1.0

    rng = np.random.default_rng(5)
    A = rng.standard_normal((6, 6)).astype(np.float32)
    a, b = arr(A), arr(rng.standard_normal(6).astype(np.float32))
    for _ in range(3):
        assert np.array_equal(to_np(f(a, b)), to_np(a @ b + 1.0))
    assert len(traces) == 2 and set(_entry(f).bound) == {0, 1}
    # the same memory and shape at other strides: not the argument read in place (a copy's result: the copy
    # is C-contiguous, and a transposed operand's product sums in another order)
    at = xp.matrix_transpose(a)
    assert np.array_equal(to_np(f(at, b)), to_np((at * 1.0) @ b + 1.0))
    assert len(traces) == 3 and not _entry(f).bound
    for c in (a, at, arr(A * 2)):
        assert np.array_equal(to_np(f(c, b)), to_np((c * 1.0) @ b + 1.0))
    assert len(traces) == 3
    del a
    import gc
    gc.collect()  # the jit does not keep an argument read in place alive
    assert np.array_equal(to_np(f(arr(A), b)), to_np(arr(A) @ b + 1.0))


def test_an_argument_written_in_place_and_passed_again():
    @xp.jit
    def f(acc, x):
        xp.add(acc, x, out=acc)
        return acc * 1.0

    acc, x = arr(np.zeros(4, np.float32)), arr(np.ones(4, np.float32))
    for k in range(1, 5):
        r = f(acc, x)
        assert np.array_equal(to_np(acc), np.full(4, k, np.float32)), k
        assert np.array_equal(to_np(r), np.full(4, k, np.float32)), k
    assert set(_entry(f).bound) == {0, 1}


def test_a_call_inside_a_capture_block_is_recorded_into_that_graph():
    f = xp.jit(lambda x: x * 2 + 1)
    a = arr(np.arange(3, dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with xp.capture(device=DEVICE) as g:
            r = f(a)
    assert f.signatures == 0
    a[...] = arr(np.full(3, 10, np.float32))
    g.replay()
    assert np.array_equal(to_np(r), [21, 21, 21])
    assert np.array_equal(to_np(f(a)), [21, 21, 21]) and f.signatures == 1  # outside: captured as usual


def test_the_documented_example_runs():
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "capture.md").read_text()
    section = text[text.index("## jit"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "capture.md", "exec"), {})


jitted_step = xp.jit(step)


def test_a_jitted_function_pickles_as_its_function_without_its_graphs():
    # (multiprocessing's spawn and dask pickle what they send: the copy captures afresh where it runs)
    import copy
    import pickle
    x = arr(np.ones((16, 8), np.float32))
    w = arr(np.zeros(8, np.float32))
    jitted_step(w, x, 0.1)
    assert jitted_step.signatures >= 1
    for other in (pickle.loads(pickle.dumps(jitted_step)), copy.deepcopy(jitted_step)):
        assert isinstance(other, xp.JitFunction) and other.fn is step and other.signatures == 0
        assert np.array_equal(to_np(other(w, x, 0.1)[0]), to_np(step(w, x, 0.1)[0]))
