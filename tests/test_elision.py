"""Temporary elision (issue 19 item 2), on the device under test: an element-wise result goes into an
operand that is a dead temporary (same shape, dtype and device, referenced by nothing but the call, the
only tensor of its buffer, never exported), and never into memory anything else can still read."""

from __future__ import annotations

import gc
import operator
import os
import threading
import weakref

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import numr_array as xp
from numr_array import _elementwise, _launch
from numr_array._device import parse_device
from numr_array.kernels import OPS

from .strategies import DEVICE, to_np

dev = parse_device(DEVICE)
F32 = xp.float32
SHAPE = (8, 16)
needs_elision = pytest.mark.skipif(not _launch.ELIDE, reason="elision is off (NUMR_ELIDE=0)")


def _clear_plans():
    for table in _elementwise._PLAN_TABLES:
        table.clear()


@pytest.fixture
def small():
    """Elision of operands of any size (the plans made meanwhile are dropped on both sides)."""
    old = _elementwise.ELIDE_MIN_BYTES
    _elementwise.ELIDE_MIN_BYTES = 0
    _clear_plans()
    yield
    _elementwise.ELIDE_MIN_BYTES = old
    _clear_plans()


class Temps:
    """``temps(x)``: a fresh temporary copy of ``x`` (x * 1 in x's dtype), whose buffer is remembered, so
    that ``temps.took(r)`` tells whether the result ``r`` was written into one of their memories."""

    def __init__(self):
        self.bufs = []

    def __call__(self, x):
        r = xp.logical_and(x, True) if x.dtype == xp.bool else xp.multiply(x, 1)
        self.bufs.append(weakref.ref(r._buf))
        return r

    def took(self, result) -> bool:
        return any(result._buf is b() for b in self.bufs)


def on(a, device=DEVICE):
    return xp.asarray(np.array(a), device=device)


def data(seed=0, shape=SHAPE):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def test_elision_is_on_in_this_interpreter():
    # the reference-count calibration holds on the CPython the project supports; only NUMR_ELIDE=0 turns it off
    assert _launch.ELIDE == (os.environ.get("NUMR_ELIDE", "1") != "0")


def test_numr_elide_0_turns_elision_off():
    import subprocess
    import sys
    code = ("import numr_array as xp, numr_array._launch as L, weakref\n"
            "x = xp.ones((1 << 17,), dtype=xp.float32)\n"
            "def t():\n    r = x * 2.0\n    bufs.append(weakref.ref(r._buf))\n    return r\n"
            "bufs = []\ny = xp.sin(t())\nprint(L.ELIDE, y._buf is bufs[0]())\n")
    env = dict(os.environ, NUMR_ELIDE="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["False", "False"]


@needs_elision
def test_dead_temporaries_take_the_result_in_every_call_form(small):
    a_np, b_np = data(0), data(1)
    a, b = on(a_np), on(b_np)
    t = Temps()
    forms = [
        (lambda: xp.add(t(a), b), a_np + b_np),
        (lambda: xp.add(b, t(a)), b_np + a_np),
        (lambda: xp.subtract(t(a), t(b)), a_np - b_np),
        (lambda: t(a) + b, a_np + b_np),
        (lambda: b * t(a), b_np * a_np),
        (lambda: t(a) * 2.0, a_np * np.float32(2)),
        (lambda: 2.0 - t(a), np.float32(2) - a_np),
        (lambda: 1.0 / t(a), np.float32(1) / a_np),
        (lambda: t(a) ** 2, a_np ** 2),
        (lambda: -t(a), -a_np),
        (lambda: xp.sin(t(a)), np.sin(a_np)),
        (lambda: xp.divide(t(a), b), a_np / b_np),
        (lambda: xp.round(t(a)), np.round(a_np)),
        (lambda: xp.add(t(a), b, out=None), a_np + b_np),  # the keyword form
        (lambda: xp.sin(t(a), out=None), np.sin(a_np)),
        (lambda: xp.pow(t(a), 2), a_np ** 2),
        (lambda: xp.sum((t(a) - b) ** 2, axis=-1, keepdims=True) * t(a),
         np.sum((a_np - b_np) ** 2, axis=-1, keepdims=True) * a_np),
    ]
    for k, (form, want) in enumerate(forms):
        t.bufs.clear()
        got = form()
        assert t.took(got), k
        np.testing.assert_allclose(to_np(got), want, rtol=2e-6, err_msg=str(k))
    np.testing.assert_array_equal(to_np(a), a_np)  # the named operands are untouched
    np.testing.assert_array_equal(to_np(b), b_np)


@needs_elision
def test_a_nested_expression_writes_into_its_temporaries(small):
    X_np, C_np = data(0, (64, 8)), data(1, (4, 8))
    X, C = on(X_np), on(C_np)
    D = xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    np.testing.assert_allclose(to_np(D), np.sum((X_np[:, None, :] - C_np[None, :, :]) ** 2, axis=-1), rtol=1e-5)
    np.testing.assert_array_equal(to_np(X), X_np)
    np.testing.assert_array_equal(to_np(C), C_np)


@needs_elision
def test_operands_someone_else_can_read_are_never_taken(small):
    a_np, b_np = data(0), data(1)
    a, b = on(a_np), on(b_np)
    t = Temps()
    control = xp.add(t(a), b)  # (calls are made outside the asserts, whose rewriting keeps operands)
    assert t.took(control)
    named = t(a)
    r = xp.add(named, b)
    assert not t.took(r)
    kept = [t(a)]
    r1 = xp.add(kept[0], b)
    r2 = kept[0] + b
    assert not t.took(r1) and not t.took(r2)

    def user_function(x):  # its caller's argument: the caller may use it again
        return x * 2.0

    arg = t(a)
    r3 = user_function(arg)
    r4 = operator.add(t(a), b)  # C code calling the operator: not the interpreter's stack
    assert not t.took(r3) and not t.took(r4)
    views = []

    def with_a_view():
        x = t(a)
        views.append(x[1:])  # another tensor of the same buffer
        return x

    r5 = xp.sin(with_a_view())
    assert not t.took(r5)
    ref = []

    def with_a_weakref():
        x = t(a)
        ref.append(weakref.ref(x))
        return x

    r = xp.sin(with_a_weakref())
    assert ref[0]() is None and t.took(r)  # a new tensor object: the temporary died as a weakref sees it
    c = xp.empty(SHAPE, dtype=F32, device=DEVICE)
    assert xp.add(t(a), b, out=c) is c and not t.took(c)  # out= given: the result goes there
    for x, want in ((named, a_np), (kept[0], a_np), (arg, a_np), (views[0], a_np[1:]), (a, a_np), (b, b_np)):
        np.testing.assert_array_equal(to_np(x), want)
    np.testing.assert_array_equal(to_np(c), a_np + b_np)


@needs_elision
def test_elements_of_a_numpy_object_array_are_never_taken(small):
    # NumPy's object loops call the operators on references they only borrow from the array: to the count,
    # an element held by nothing else looks like the interpreter's stack slot of a temporary
    a_np = data(0)
    arr = np.empty(2, dtype=object)
    arr[0] = on(a_np)
    arr[1] = on(a_np) * 2.0
    results = [arr + 1.0, 1.0 - arr, arr * arr, -arr, arr ** 2]
    np.testing.assert_array_equal(to_np(arr[0]), a_np)
    np.testing.assert_array_equal(to_np(arr[1]), a_np * np.float32(2))
    np.testing.assert_allclose(to_np(results[0][1]), a_np * np.float32(2) + np.float32(1), rtol=1e-6)
    if _launch._C_STACK is not None:  # the C stack is checked: the interpreter's own operators still elide
        t = Temps()
        got = t(on(a_np)) + 1.0  # (not inside the assert, whose rewriting keeps the operands)
        assert t.took(got)


@needs_elision
def test_no_elision_into_a_broadcast_or_other_dtype_operand(small):
    a_np, row_np = data(0), data(1, SHAPE[1:])
    a, row = on(a_np), on(row_np)
    t = Temps()
    r1 = xp.add(a, t(row))  # the row is smaller than the result
    assert not t.took(r1)
    i16 = on(np.arange(128, dtype=np.int16).reshape(SHAPE))
    i32 = on(np.arange(128, dtype=np.int32).reshape(SHAPE))
    r2 = xp.add(t(i16), i32)  # the result is int32, the temporary int16
    r3 = xp.less(t(a), 0.0)  # a bool result
    assert not t.took(r2) and not t.took(r3)
    np.testing.assert_allclose(to_np(xp.add(a, t(row))), a_np + row_np, rtol=1e-6)


@needs_elision
def test_capture_writes_no_result_into_a_temporary_and_keeps_graph_buffers(small):
    x_np = data(0)
    x = on(x_np)
    t = Temps()
    with xp.capture(device=DEVICE) as g:
        y = xp.sin(t(x))
    assert not t.took(y)  # inside a capture the arena reuses memory, not elision
    graphs = []

    def from_a_graph():
        with xp.capture(device=DEVICE) as g2:
            r = x * 2.0
        graphs.append((g2, r * 1.0))
        return r  # an arena's buffer, baked into g2

    z = xp.sin(from_a_graph())
    assert z._buf is not graphs[0][1]._buf
    outside = []

    def input_of_a_graph():
        r = t(x)  # eager memory, read by the graph below
        with xp.capture(device=DEVICE) as g3:
            w = r + 1.0
        outside.append((g3, w))
        return r

    z2 = xp.sin(input_of_a_graph())
    assert not t.took(z2)
    g3, w = outside[0]
    g3.replay()
    np.testing.assert_allclose(to_np(w), x_np + np.float32(1), rtol=1e-6)  # its input was not overwritten
    g.replay()
    np.testing.assert_allclose(to_np(y), np.sin(x_np), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(z), np.sin(x_np * np.float32(2)), rtol=1e-5, atol=1e-6)


def _exported_then_dead(a, held, export):
    r = a * 1.0
    held.append(export(r))
    return r


@needs_elision
@pytest.mark.parametrize("export", [
    np.asarray,
    np.from_dlpack,
    lambda r: r.__dlpack__(),
], ids=["asarray", "numpy-from_dlpack", "capsule"])
def test_exported_cpu_memory_is_never_taken(small, export):
    a_np = data(0)
    a = on(a_np, "cpu")
    held = []
    r = xp.sin(_exported_then_dead(a, held, export))
    assert r._buf.exported is False
    if isinstance(held[0], np.ndarray):
        np.testing.assert_array_equal(held[0], a_np)  # the exported view still shows the old values
    else:
        np.testing.assert_array_equal(np.from_dlpack(_Capsule(held[0])), a_np)


class _Capsule:
    """A DLPack capsule held as is, handed to np.from_dlpack later."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


@needs_elision
def test_memory_of_another_library_is_never_taken(small):
    a_np = data(0)
    assert not np.shares_memory(to_np(xp.sin(xp.asarray(a_np, device="cpu"))), a_np)
    assert not np.shares_memory(to_np(xp.sin(xp.from_dlpack(a_np))), a_np)
    np.testing.assert_array_equal(a_np, data(0))
    a = on(a_np)
    views = []

    def numr_dlpack_view():
        r = a * 1.0
        views.append(xp.from_dlpack(r))  # a numr view of r's buffer
        return r

    xp.sin(numr_dlpack_view())
    np.testing.assert_array_equal(to_np(views[0]), a_np)


@pytest.mark.cuda
@needs_elision
def test_cuda_array_interface_export_is_never_taken(small):
    if not any(d.startswith("cuda") for d in map(str, xp.__array_namespace_info__().devices())):
        pytest.skip("no CUDA device: CuPy is missing or finds no GPU")
    import cupy
    a_np = data(0)
    a = on(a_np, "cuda:0")
    held = []
    # (a consumer may keep the bare pointer: the mark, not a reference, protects the memory)
    xp.sin(_exported_then_dead(a, held, lambda r: cupy.asarray(r)))
    np.testing.assert_array_equal(cupy.asnumpy(held[0]), a_np)
    d = []
    xp.sin(_exported_then_dead(a, d, lambda r: cupy.from_dlpack(r)))
    np.testing.assert_array_equal(cupy.asnumpy(d[0]), a_np)


@pytest.mark.cuda
def test_cuda_memory_exported_inside_a_capture_never_serves_a_later_tensor_of_the_block():
    if not any(str(d).startswith("cuda") for d in xp.__array_namespace_info__().devices()):
        pytest.skip("no CUDA device: CuPy is missing or finds no GPU")
    x = on(data(0), "cuda:0")
    with xp.capture(device="cuda:0"):
        t = x * 2.0
        pointer = t.__cuda_array_interface__["data"][0]  # a consumer may keep the bare pointer
        del t
        later = [x + float(k) for k in range(4)]
        assert all(u.__cuda_array_interface__["data"][0] != pointer for u in later)


#: an operand of each dtype kind, with values inside every function's domain
_KIND_DATA = {
    "f": lambda rng: rng.uniform(0.1, 0.9, SHAPE).astype(np.float32),
    "c": lambda rng: (rng.uniform(0.1, 0.9, SHAPE) + 1j * rng.uniform(-0.9, 0.9, SHAPE)).astype(np.complex64),
    "i": lambda rng: rng.integers(1, 5, SHAPE).astype(np.int32),
    "b": lambda rng: rng.integers(0, 2, SHAPE).astype(bool),
}
_CASES = [(op, kind) for op in OPS if op.name != "clip"  # (clip takes bounds: its own path, without elision)
          for kind in _KIND_DATA if kind in op.kinds]


@needs_elision
@pytest.mark.parametrize("op, kind", _CASES, ids=[f"{op.name}-{kind}" for op, kind in _CASES])
def test_every_element_wise_function_in_a_temporary_gives_its_fresh_result(small, op, kind):
    fn = getattr(xp, op.name)
    arrays = [on(_KIND_DATA[kind](np.random.default_rng(k))) for k in range(op.arity)]
    want = to_np(fn(*arrays))
    t = Temps()
    if op.arity == 1:
        results = [fn(t(arrays[0]))]
    else:
        results = [fn(t(arrays[0]), arrays[1]), fn(arrays[0], t(arrays[1]))]
    for k, got in enumerate(results):
        if got.dtype == arrays[k].dtype:
            assert t.took(got), (op.name, k)
        np.testing.assert_array_equal(to_np(got), want, err_msg=f"{op.name}, operand {k} in place")


@needs_elision
def test_below_the_size_threshold_nothing_is_taken_above_it_is():
    t = Temps()
    small_a = on(data(0, (64,)))
    r = xp.sin(t(small_a))
    assert not t.took(r)
    n = _launch.ELIDE_MIN_BYTES // 4
    big = on(np.ones(n, np.float32))
    r = xp.sin(t(big)) * 2.0
    assert t.took(r)
    np.testing.assert_allclose(to_np(r)[:3], 2 * np.sin(np.float32(1)), rtol=1e-6)


@needs_elision
def test_the_squared_distance_peak_holds_one_broadcast_difference():
    n, k, d = 2048, 8, 32
    X = on(data(0, (n, d)))
    C = on(data(1, (k, d)))
    gc.collect()
    dev.client.synchronize()
    xp.reset_peak_memory_stats(DEVICE)
    base = xp.memory_stats(DEVICE)["bytes_in_use"]
    D = xp.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    dev.client.synchronize()
    peak = xp.memory_stats(DEVICE)["peak_bytes_in_use"] - base
    diff = n * k * d * 4
    assert peak <= diff + D.size * 4 + diff // 8, peak  # (without elision: two differences)


# --- expression trees with named intermediates, against NumPy ---------------------------------------------

_UNARY = {"negative": (xp.negative, np.negative, lambda x: -x), "abs": (xp.abs, np.abs, abs),
          "sin": (xp.sin, np.sin, None), "square": (xp.square, np.square, lambda x: x ** 2)}
_BINARY = {"add": (xp.add, np.add, operator.add), "subtract": (xp.subtract, np.subtract, operator.sub),
           "multiply": (xp.multiply, np.multiply, operator.mul), "maximum": (xp.maximum, np.maximum, None)}


def trees(depth):
    """(name, as an operator, kept by name, operands...) nodes over the arrays a, b, c and row (which
    broadcasts); a binary node's second operand may be a Python float, and either order is drawn."""
    leaf = st.sampled_from(["a", "b", "c", "row"])
    if depth == 0:
        return leaf
    sub = trees(depth - 1)
    unary = st.tuples(st.sampled_from(sorted(_UNARY)), st.booleans(), st.booleans(), sub)
    other = st.one_of(sub, st.sampled_from([0.5, -1.5, 2.0]))
    binary = st.tuples(st.sampled_from(sorted(_BINARY)), st.booleans(), st.booleans(), sub, other, st.booleans())
    return st.one_of(leaf, unary, binary)


def _evaluate(node, env, named, numpy: bool):
    """``node`` evaluated with temporaries inline (each operand is a call's result, on the stack); a node
    whose "kept" flag is set is also kept in ``named`` (a user-visible tensor from then on)."""
    if isinstance(node, str):
        return env[node]
    if isinstance(node, float):
        return np.float32(node) if numpy else node
    name, as_operator, keep = node[0], node[1], node[2]
    if name in _UNARY:
        f, g, op = _UNARY[name]
        if numpy:
            res = g(_evaluate(node[3], env, named, numpy))
        elif as_operator and op is not None:
            res = op(_evaluate(node[3], env, named, numpy))
        else:
            res = f(_evaluate(node[3], env, named, numpy))
    else:
        f, g, op = _BINARY[name]
        first, second = (node[4], node[3]) if node[5] else (node[3], node[4])
        if numpy:
            res = g(_evaluate(first, env, named, numpy), _evaluate(second, env, named, numpy))
        elif as_operator and op is not None:
            res = op(_evaluate(first, env, named, numpy), _evaluate(second, env, named, numpy))
        else:
            res = f(_evaluate(first, env, named, numpy), _evaluate(second, env, named, numpy))
    if keep:
        named.append(res)
    return res


def _np_env():
    rng = np.random.default_rng(7)
    return {k: rng.uniform(-1.5, 1.5, s).astype(np.float32)
            for k, s in (("a", SHAPE), ("b", SHAPE), ("c", SHAPE), ("row", SHAPE[1:]))}


@needs_elision
@given(tree=trees(4))
def test_no_user_visible_tensor_is_ever_overwritten(tree):
    old = _elementwise.ELIDE_MIN_BYTES
    _elementwise.ELIDE_MIN_BYTES = 0
    _clear_plans()
    try:
        env_np = _np_env()
        env = {k: on(v) for k, v in env_np.items()}
        named, named_np = [], []
        got = _evaluate(tree, env, named, False)
        want = _evaluate(tree, env_np, named_np, True)
    finally:
        _elementwise.ELIDE_MIN_BYTES = old
        _clear_plans()
    tol = dict(rtol=2e-6, atol=1e-6) if dev.kind == "cpu" else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(got), want, **tol)
    assert len(named) == len(named_np)
    for t, w in zip(named, named_np):  # every intermediate the program kept still holds its value
        np.testing.assert_allclose(to_np(t), w, **tol)
    for k, v in env_np.items():
        np.testing.assert_array_equal(to_np(env[k]), v)


@needs_elision
def test_threads_overwrite_nothing_of_each_other(small):
    a_np, b_np = data(0), data(1)
    a, b = on(a_np), on(b_np)
    want = np.sin(a_np * np.float32(2) + b_np) * np.float32(3) - a_np
    errors = []
    barrier = threading.Barrier(4)

    def work(k):
        try:
            barrier.wait()
            for _ in range(30):
                kept = a * 2.0
                r = xp.sin(kept + b) * 3.0 - a
                np.testing.assert_allclose(to_np(r), want, rtol=1e-5, atol=1e-6)
                np.testing.assert_array_equal(to_np(kept), a_np * np.float32(2))
        except Exception as exc:  # re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors[0]
    np.testing.assert_array_equal(to_np(a), a_np)
    np.testing.assert_array_equal(to_np(b), b_np)


# --- other peaks ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("transform", ["rfft", "fft", "irfft", "ifft"])
def test_cpu_fft_peaks_no_higher_than_numpys(transform):
    import tracemalloc
    a = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    if transform == "irfft":
        a = np.fft.rfft(a).astype(np.complex64)
    x = xp.asarray(a, device="cpu")
    peaks = []
    for f in (getattr(np.fft, transform), getattr(xp.fft, transform)):
        f(a if f.__module__.startswith("numpy") else x)  # (first calls plan and cache)
        gc.collect()
        tracemalloc.start()
        r = f(a if f.__module__.startswith("numpy") else x)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        del r
    numpy_peak, numr_peak = peaks
    # (NumPy's transform writes numr's result itself: no second result-sized array)
    assert numr_peak <= numpy_peak * 1.05, (numr_peak, numpy_peak)


@pytest.mark.parametrize("descending", [False, True])
def test_cpu_sort_peaks_no_higher_than_numpys(descending):
    import tracemalloc
    a = np.random.default_rng(0).standard_normal((4096, 16)).astype(np.float32)
    x = xp.asarray(a, device="cpu")
    want = np.flip(np.sort(np.flip(a, 0), axis=0, kind="stable"), 0) if descending else np.sort(a, axis=0)
    peaks = []
    for f in (lambda: np.sort(a, axis=0, kind="stable"), lambda: xp.sort(x, axis=0, descending=descending, stable=True)):
        f()
        gc.collect()
        tracemalloc.start()
        r = f()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    np.testing.assert_array_equal(to_np(r), want)
    numpy_peak, numr_peak = peaks
    assert numr_peak <= numpy_peak * 1.05, (numr_peak, numpy_peak)  # (the sort runs in the result itself)
