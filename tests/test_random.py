"""numr_array.random (issue 16 item 4): the Philox4x32-10 Generator, the legacy functions and Sobol.

Every device is checked bit for bit against a scalar Python model of the stream (so any two devices agree
with each other), the distributions against scipy.stats with fixed seeds and sizes at which a correct
generator fails with negligible probability (the tests are deterministic: the seeds are fixed), and
capture replays against the same draws made eagerly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import numr_array as xp
from numr_array.backends.array_module_kernels.random import philox_words
from numr_array.random._sobol import JOE_KUO, direction_numbers

from .helpers import DEVICE, defaults, missing_dtype, needs_dtype

MASK = 0xFFFFFFFF


def host(t) -> np.ndarray:
    return np.array(t.to_device("cpu"), copy=True)


# --- a scalar model of the stream (docs/random.md) -----------------------------------------------------

def philox_model(ctr: int, key: int) -> list[int]:
    """Philox4x32-10 of a 128-bit counter and a 64-bit key, in Python ints: four words."""
    c = [(ctr >> (32 * j)) & MASK for j in range(4)]
    k0, k1 = key & MASK, key >> 32
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK]
    return c


def model_key(seed: int) -> int:
    k = np.random.SeedSequence(seed).generate_state(2, np.uint32)
    return int(k[0]) | int(k[1]) << 32


def model_draw(seed: int, counter: int, n: int, kind: str, low: int = 0, rng: int = 0) -> list:
    key = model_key(seed)
    out = []
    for i in range(n):
        w = philox_model(counter + i, key)
        if kind == "bits":
            out.append(w[0])
        elif kind == "float32":
            out.append((w[0] >> 8) * 2.0 ** -24)
        elif kind == "float64":
            out.append(((w[0] >> 5) * 2 ** 26 + (w[1] >> 6)) * 2.0 ** -53)
        else:
            k = 2 if rng <= 2 ** 32 else 4
            r = 0
            for j in range(k):
                r = r << 32 | w[j]
            out.append(low + (r * rng >> (32 * k)))
    return out


def test_philox_known_answers():
    """Random123's known-answer vectors for philox4x32-10."""
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((MASK,) * 4, (MASK,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in cases:
        state = np.array(key + ctr, np.uint32)
        assert [int(w[0]) for w in philox_words(np, state, 1)] == list(want)
        c = sum(v << (32 * j) for j, v in enumerate(ctr))
        assert philox_model(c, key[0] | key[1] << 32) == list(want)


def test_counter_carries_across_words():
    """Counters past 2**32 and 2**64 carry into the next word, on the device as in the model."""
    r = xp.random.default_rng(5, device=DEVICE)
    start = 2 ** 64 - 3
    r._state[2:6] = xp.asarray(np.array([(start >> (32 * j)) & MASK for j in range(4)], np.uint32), device=DEVICE)
    assert host(r.bits(6)).tolist() == model_draw(5, start, 6, "bits")
    assert host(r._state[2:6]).tolist() == [3, 0, 1, 0]  # the counter advanced past 2**64


@pytest.mark.parametrize("kind", ["bits", "float32", "float64"])
def test_stream_is_the_model_bit_for_bit(kind):
    if kind == "float64":
        needs_dtype(xp.float64)
    r = xp.random.default_rng(1234, device=DEVICE)
    draw = (lambda n: r.bits(n)) if kind == "bits" else (lambda n: r.random(n, dtype=getattr(xp, kind)))
    first, second = host(draw(37)), host(draw(5))
    assert first.tolist() == model_draw(1234, 0, 37, kind)
    assert second.tolist() == model_draw(1234, 37, 5, kind)  # the counter advanced by the first draw


@pytest.mark.parametrize("dtype,low,high", [
    ("int32", -3, 1_000_003), ("uint8", 0, 7), ("int8", -128, 128), ("int32", -2 ** 31, 2 ** 31),
    ("uint32", 0, 3 * 2 ** 30), ("uint16", 10, 11),
    ("int64", -2 ** 63, 2 ** 63), ("int64", 5, 10 ** 15), ("uint64", 0, 2 ** 64), ("uint64", 1, 2 ** 32 + 1),
])
def test_integers_are_the_model(dtype, low, high):
    d = getattr(xp, dtype)
    needs_dtype(d)
    r = xp.random.default_rng(99, device=DEVICE)
    got = host(r.integers(low, high, 41, dtype=d))
    assert got.dtype == d
    assert got.tolist() == model_draw(99, 0, 41, "integers", low, high - low)
    assert got.min() >= low and got.max() < high


def test_a_draw_larger_than_a_binding_is_launched_in_pieces(monkeypatch):
    """WebGPU binds the output window whole: beyond the adapter's largest binding the draw is split."""
    if not DEVICE.startswith("webgpu"):
        pytest.skip("the split applies to WebGPU's largest storage binding")
    r = xp.random.default_rng(17, device=DEVICE)
    client = xp._device.parse_device(DEVICE).client
    monkeypatch.setattr(client, "max_binding", 4096 + client.storage_align)
    got = host(r.integers(-5, 5000, 3000, dtype=xp.int16))
    assert got.tolist() == model_draw(17, 0, 3000, "integers", -5, 5005)
    assert host(r.bits(2500)).tolist() == model_draw(17, 3000, 2500, "bits")


def test_integers_endpoint_and_single_bound():
    r = xp.random.default_rng(0, device=DEVICE)
    d = defaults()["integral"]
    got = host(r.integers(3, 5, 2000, endpoint=True))
    assert set(got.tolist()) == {3, 4, 5}
    assert host(r.integers(4, size=(10, 3))).max() < 4
    assert r.integers(4).shape == () and r.integers(4).dtype == d


def test_integers_unbiased_over_a_non_power_of_two_range():
    """range 3 * 2**30: a 32-bit modulo would give [0, 2**30) twice the weight of the other two thirds."""
    r = xp.random.default_rng(2024, device=DEVICE)
    v = host(r.integers(0, 3 * 2 ** 30, 60_000, dtype=xp.uint32)).astype(np.int64)
    counts = np.bincount(v >> 30, minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-6, counts
    small = host(r.integers(0, 7, 70_000, dtype=xp.int32))
    assert stats.chisquare(np.bincount(small, minlength=7)).pvalue > 1e-6


def test_seed_reproducibility():
    a = xp.random.default_rng(7, device=DEVICE)
    b = xp.random.default_rng(7, device=DEVICE)
    c = xp.random.default_rng(8, device=DEVICE)
    x, y, z = (host(g.random(100, dtype=xp.float32)) for g in (a, b, c))
    assert np.array_equal(x, y) and not np.array_equal(x, z)
    assert not np.array_equal(x, host(a.random(100, dtype=xp.float32)))  # the next draw continues the stream
    seq = xp.random.default_rng([1, 2, 3], device=DEVICE)
    assert host(seq.bits(4)).tolist() == model_draw([1, 2, 3], 0, 4, "bits")
    kids = a.spawn(2)
    assert not np.array_equal(host(kids[0].bits(8)), host(kids[1].bits(8)))
    assert xp.random.default_rng(a) is a


def test_fresh_entropy_without_a_seed():
    assert not np.array_equal(host(xp.random.default_rng(device=DEVICE).bits(8)),
                              host(xp.random.default_rng(device=DEVICE).bits(8)))


# --- distributions -----------------------------------------------------------------------------------

def _float_dtypes():
    return [d for d in (xp.float32, xp.float64) if not missing_dtype(d)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions_against_scipy(dtype):
    d = getattr(xp, dtype)
    needs_dtype(d)
    r = xp.random.default_rng(31337, device=DEVICE)
    n = 20_000
    cases = [
        (r.random(n, dtype=d), stats.uniform().cdf),
        (r.uniform(-2.0, 3.0, n, dtype=d), stats.uniform(-2.0, 5.0).cdf),
        (r.standard_normal(n, dtype=d), stats.norm().cdf),
        (r.normal(1.5, 0.25, n, dtype=d), stats.norm(1.5, 0.25).cdf),
        (r.standard_exponential(n, dtype=d), stats.expon().cdf),
        (r.exponential(2.0, n, dtype=d), stats.expon(scale=2.0).cdf),
    ]
    for t, cdf in cases:
        assert t.dtype == d and t.shape == (n,)
        v = host(t)
        assert np.isfinite(v).all()
        assert stats.kstest(v, cdf).pvalue > 1e-6
    u = host(r.random(n, dtype=d))
    assert u.min() >= 0.0 and u.max() < 1.0
    z = host(r.standard_normal(n, dtype=d)).astype(np.float64)
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.var() - 1) < 5 * math.sqrt(2 / n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma_family_against_scipy(dtype):
    d = getattr(xp, dtype)
    needs_dtype(d)
    r = xp.random.default_rng(4242, device=DEVICE)
    n = 20_000
    cases = [(r.standard_gamma(a, n, dtype=d), stats.gamma(a).cdf) for a in (0.3, 1.0, 2.5, 40.0)]
    cases += [(r.gamma(2.0, 3.0, n, dtype=d), stats.gamma(2.0, scale=3.0).cdf),
              (r.beta(0.5, 2.0, n, dtype=d), stats.beta(0.5, 2.0).cdf),
              (r.chisquare(3.0, n, dtype=d), stats.chi2(3.0).cdf)]
    for t, cdf in cases:
        v = host(t)
        assert t.dtype == d and np.isfinite(v).all() and (v >= 0).all()
        assert stats.kstest(v, cdf).pvalue > 1e-6
    assert host(r.standard_gamma(0.0, 4, dtype=d)).tolist() == [0.0] * 4
    shapes = xp.asarray(np.array([0.5, 5.0], d), device=DEVICE)
    g = host(r.standard_gamma(shapes, (8000, 2), dtype=d))
    assert np.allclose(g.mean(axis=0), [0.5, 5.0], rtol=0.05)


def test_poisson_and_binomial_against_scipy():
    r = xp.random.default_rng(77, device=DEVICE)
    n = 40_000
    for lam in (0.5, 4.0, 300.0):
        v = host(r.poisson(lam, n))
        assert v.dtype == defaults()["integral"] and v.min() >= 0
        _chisquare_against(v, stats.poisson(lam))
    for trials, p in ((10, 0.3), (1000, 0.01), (200, 0.9)):
        v = host(r.binomial(trials, p, n))
        assert 0 <= v.min() and v.max() <= trials
        _chisquare_against(v, stats.binom(trials, p))
    assert host(r.poisson(0.0, 3)).tolist() == [0, 0, 0]
    assert host(r.binomial(7, 1.0, 3)).tolist() == [7, 7, 7]


def _chisquare_against(v: np.ndarray, dist) -> None:
    """Chi-square of the counts of v against dist's pmf, the tails beyond expected count 5 pooled."""
    ks = np.arange(v.min(), v.max() + 1)
    expected = dist.pmf(ks) * v.size
    keep = expected >= 5
    lo, hi = ks[keep][0], ks[keep][-1]
    counts = [np.count_nonzero(v <= lo)] + [np.count_nonzero(v == k) for k in range(lo + 1, hi)] + [np.count_nonzero(v >= hi)]
    want = [dist.cdf(lo)] + [dist.pmf(k) for k in range(lo + 1, hi)] + [dist.sf(hi - 1)]
    want = np.array(want) * v.size
    assert stats.chisquare(counts, want * sum(counts) / want.sum()).pvalue > 1e-6


def test_array_parameters_broadcast():
    d = defaults()["real floating"]
    r = xp.random.default_rng(3, device=DEVICE)
    loc = xp.asarray(np.array([0.0, 100.0, -100.0], d), device=DEVICE)
    x = host(r.normal(loc, 1.0, (4000, 3)))
    assert x.shape == (4000, 3)
    assert np.allclose(x.mean(axis=0), [0.0, 100.0, -100.0], atol=0.2)
    assert r.normal(loc).shape == (3,)
    lo = host(r.uniform([0.0, 10.0], [1.0, 20.0], (1000, 2)))
    assert (lo[:, 0] < 1).all() and (lo[:, 1] >= 10).all()


def test_normal_across_devices_within_a_few_ulp():
    """Box-Muller through each device's log1p/sqrt/cos: equal up to a few ulp (the uniforms are equal)."""
    for d in _float_dtypes():
        a = host(xp.random.default_rng(11, device=DEVICE).standard_normal(1000, dtype=d))
        b = host(xp.random.default_rng(11, device="cpu").standard_normal(1000, dtype=d))
        eps = np.finfo(d).eps
        np.testing.assert_allclose(a, b, rtol=16 * eps, atol=16 * eps)


# --- permutations and choice ---------------------------------------------------------------------------

def test_permutation_of_an_int_and_of_an_array():
    r = xp.random.default_rng(4, device=DEVICE)
    p = host(r.permutation(1000))
    assert sorted(p.tolist()) == list(range(1000)) and p.tolist() != list(range(1000))
    assert p.dtype == defaults()["indexing"]
    x = xp.reshape(xp.arange(12, device=DEVICE), (4, 3))
    y = host(r.permutation(x))
    assert y.shape == (4, 3)
    assert sorted(map(tuple, y.tolist())) == [tuple(row) for row in host(x).tolist()]
    cols = host(r.permutation(x, axis=1))
    assert sorted(cols[0].tolist()) == [0, 1, 2] and (cols - cols[:, :1] == cols[0] - cols[0, 0]).all()
    assert r.permutation(0).shape == (0,)


def test_permutation_is_uniform():
    """All 6 orders of 3 elements, equally often."""
    r = xp.random.default_rng(12, device=DEVICE)
    seen = {}
    for _ in range(600):
        k = tuple(host(r.permutation(3)).tolist())
        seen[k] = seen.get(k, 0) + 1
    assert len(seen) == 6 and stats.chisquare(list(seen.values())).pvalue > 1e-6


def test_shuffle_in_place():
    r = xp.random.default_rng(6, device=DEVICE)
    x = xp.arange(50, device=DEVICE)
    buf = x._buf
    assert r.shuffle(x) is None
    v = host(x)
    assert x._buf is buf and sorted(v.tolist()) == list(range(50)) and v.tolist() != list(range(50))
    xp.random.shuffle(x)
    assert sorted(host(x).tolist()) == list(range(50))


def test_choice():
    r = xp.random.default_rng(8, device=DEVICE)
    c = host(r.choice(5, 3000))
    assert set(c.tolist()) == set(range(5))
    pool = xp.asarray(np.array([10, 20, 30, 40], np.int32), device=DEVICE)
    picked = host(r.choice(pool, (2, 3)))
    assert picked.shape == (2, 3) and set(picked.ravel().tolist()) <= {10, 20, 30, 40}
    u = host(r.choice(100, 100, replace=False))
    assert sorted(u.tolist()) == list(range(100))
    p = [0.1, 0.2, 0.3, 0.4]
    w = host(r.choice(4, 40_000, p=p))
    assert stats.chisquare(np.bincount(w, minlength=4), 40_000 * np.array(p)).pvalue > 1e-6
    assert host(r.choice(3, 200, p=[0.0, 1.0, 0.0])).tolist() == [1] * 200
    nr = host(r.choice(6, 3, replace=False, p=[0.0, 0.2, 0.2, 0.2, 0.2, 0.2]))
    assert len(set(nr.tolist())) == 3 and 0 not in nr.tolist()


def test_bytes():
    r = xp.random.default_rng(1, device=DEVICE)
    b = r.bytes(10)
    assert type(b) is bytes and len(b) == 10
    words = model_draw(1, 0, 3, "bits")
    assert b == np.array(words, "<u4").tobytes()[:10]


# --- argument validation -----------------------------------------------------------------------------

def test_argument_errors_name_the_function_and_value():
    r = xp.random.default_rng(0, device=DEVICE)
    with pytest.raises(ValueError, match=r"random: negative dimension -1"):
        r.random(-1)
    with pytest.raises(ValueError, match=r"integers: low >= high \(low=5, high=5\)"):
        r.integers(5, 5)
    with pytest.raises(ValueError, match=r"integers: the bounds \[0, 300\) do not fit in uint8"):
        r.integers(0, 300, dtype=xp.uint8)
    with pytest.raises(TypeError, match=r"integers: unsupported dtype float32"):
        r.integers(0, 3, dtype=xp.float32)
    with pytest.raises(TypeError, match=r"random: unsupported dtype int32"):
        r.random(3, dtype=xp.int32)
    with pytest.raises(TypeError, match=r"standard_normal: dtype 'bogus' is not a data type"):
        r.standard_normal(3, dtype="bogus")
    with pytest.raises(ValueError, match=r"choice: probabilities do not sum to 1 \(sum 0.5"):
        r.choice(2, 3, p=[0.25, 0.25])
    with pytest.raises(ValueError, match=r"choice: p must be 1-D of length 3"):
        r.choice(3, p=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"choice: probabilities must be finite and non-negative"):
        r.choice(2, p=[1.5, -0.5])
    with pytest.raises(ValueError, match=r"choice: cannot take a larger sample \(5\) than the population \(3\)"):
        r.choice(3, 5, replace=False)
    with pytest.raises(ValueError, match=r"choice: a must be a positive integer, got 0"):
        r.choice(0)
    with pytest.raises(ValueError, match=r"normal: scale must be non-negative, got -1.0"):
        r.normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"permutation: x must be non-negative, got -2"):
        r.permutation(-2)
    with pytest.raises(TypeError, match=r"shuffle: x must be a numr_array Tensor"):
        r.shuffle([1, 2, 3])
    with pytest.raises(ValueError, match=r"standard_gamma: shape must be non-negative, got -1.0"):
        r.standard_gamma(-1.0)
    with pytest.raises(ValueError, match=r"beta: a must be positive, got 0"):
        r.beta(0, 1.0)
    with pytest.raises(ValueError, match=r"poisson: lam must be in \[0, 1e8\], got -2.0"):
        r.poisson(-2)
    with pytest.raises(ValueError, match=r"binomial: p must be in \[0, 1\], got 1.5"):
        r.binomial(3, 1.5)
    with pytest.raises(ValueError, match=r"binomial: n must be non-negative, got -3"):
        r.binomial(-3, 0.5)
    with pytest.raises(ValueError, match=r"default_rng: invalid seed -1"):
        xp.random.default_rng(-1)
    with pytest.raises(ValueError, match=r"Sobol: d must be between 1 and 21, got 22"):
        xp.random.Sobol(22)
    state = host(r._state)
    with pytest.raises(ValueError):
        r.integers(9, 3)
    assert np.array_equal(host(r._state), state)  # a failing call draws nothing


def test_out_is_checked_before_drawing():
    d = defaults()["real floating"]
    r = xp.random.default_rng(2, device=DEVICE)
    out = xp.empty((3, 2), dtype=d, device=DEVICE)
    state = host(r._state)
    for call in (lambda: r.random(4, out=out), lambda: r.standard_normal(out=[0.0]),
                 lambda: r.standard_gamma(2.0, (2, 3), out=out)):
        with pytest.raises((TypeError, ValueError), match=r"(random|standard_normal|standard_gamma): out "):
            call()
    assert np.array_equal(host(r._state), state)  # nothing was drawn
    assert r.random(out=out) is out
    assert host(out).tolist() == np.array(model_draw(2, 0, 6, d.name), d).reshape(3, 2).tolist()
    assert r.standard_normal(out=out) is out and r.standard_gamma(3.0, out=out) is out
    assert (host(out) > 0).all()


def test_float64_without_shader_f64_names_it():
    if not missing_dtype(xp.float64):
        pytest.skip(f"{DEVICE} has float64")
    r = xp.random.default_rng(0, device=DEVICE)
    with pytest.raises(TypeError, match="random: float64 is not supported on device .*shader-f64"):
        r.random(3, dtype=xp.float64)


# --- capture -----------------------------------------------------------------------------------------

def test_capture_replays_draw_fresh_numbers():
    d = defaults()["real floating"]
    i = defaults()["integral"]
    r = xp.random.default_rng(21, device=DEVICE)
    out = xp.empty((6,), dtype=d, device=DEVICE)
    outi = xp.empty((6,), dtype=i, device=DEVICE)
    outn = xp.empty((6,), dtype=d, device=DEVICE)
    with xp.capture(DEVICE) as g:
        xp.add(r.random(6, dtype=d), 0, out=out)
        xp.add(r.integers(0, 1000, 6, dtype=i), 0, out=outi)
        xp.add(r.standard_normal(6, dtype=d), 0, out=outn)
    runs = [(host(out), host(outi), host(outn))]
    for _ in range(2):
        g.replay()
        runs.append((host(out), host(outi), host(outn)))
    assert not np.array_equal(runs[1][0], runs[2][0]) and not np.array_equal(runs[0][0], runs[1][0])
    eager = xp.random.default_rng(21, device=DEVICE)
    for run in runs:
        want = (host(eager.random(6, dtype=d)), host(eager.integers(0, 1000, 6, dtype=i)),
                host(eager.standard_normal(6, dtype=d)))
        for a, b in zip(run, want):
            assert np.array_equal(a, b)
    # eager draws after the replays continue from the counter the replays left
    assert np.array_equal(host(r.bits(3)), host(eager.bits(3)))


def test_threads_sharing_a_generator_draw_distinct_numbers():
    import threading
    r = xp.random.default_rng(50, device=DEVICE)
    got = []

    def work():
        for _ in range(20):
            got.append(host(r.bits(16)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    words = np.concatenate(got)
    assert sorted(words.tolist()) == sorted(model_draw(50, 0, 4 * 20 * 16, "bits"))


# --- the legacy functions ------------------------------------------------------------------------------

def test_legacy_functions():
    xp.random.seed(5)
    a = host(xp.random.rand(3, 2, device=DEVICE))
    xp.random.seed(5)
    assert np.array_equal(a, host(xp.random.rand(3, 2, device=DEVICE))) and a.shape == (3, 2)
    assert xp.random.randn(4, device=DEVICE).shape == (4,)
    ri = host(xp.random.randint(2, 9, size=100, device=DEVICE))
    assert ri.min() >= 2 and ri.max() < 9
    assert host(xp.random.randint(3, size=50, device=DEVICE)).max() < 3
    assert xp.random.random((2, 2), device=DEVICE).shape == (2, 2)
    assert xp.random.random_sample is xp.random.random
    assert xp.random.normal(0.0, 2.0, 5, device=DEVICE).shape == (5,)
    assert xp.random.uniform(1.0, 2.0, 5, device=DEVICE).shape == (5,)
    assert xp.random.choice(4, 3, device=DEVICE).shape == (3,)
    assert sorted(host(xp.random.permutation(5, device=DEVICE)).tolist()) == list(range(5))
    with pytest.raises(ValueError, match=r"seed: invalid seed -3"):
        xp.random.seed(-3)
    xp.random.seed(5)
    model = model_draw(5, 0, 6, "float32" if missing_dtype(xp.float64) else "float64")
    assert host(xp.random.rand(6, device=DEVICE)).tolist() == model


# --- Sobol -------------------------------------------------------------------------------------------

def test_sobol_direction_table_is_scipys():
    from scipy.stats import _sobol
    poly, vinit = _sobol.get_poly_vinit("poly", np.uint32), _sobol.get_poly_vinit("vinit", np.uint32)
    for j, (s, a, m) in enumerate(JOE_KUO, start=1):
        assert int(poly[j]) == (1 << s) | (a << 1) | 1
        assert vinit[j][:s].tolist() == list(m)
    assert direction_numbers(21).shape == (21, 30)


@pytest.mark.filterwarnings("ignore:The balance properties")  # (scipy's, for n not a power of 2)
@pytest.mark.parametrize("d", [1, 2, 5, 21])
def test_sobol_is_scipys_unscrambled_sequence(d):
    from scipy.stats import qmc
    dtype = defaults()["real floating"]
    s = xp.random.Sobol(d, scramble=False, device=DEVICE)
    ref = qmc.Sobol(d, scramble=False)
    for n in (64, 7, 57):
        got = host(s.random(n))
        want = ref.random(n).astype(dtype)
        assert got.dtype == dtype and np.array_equal(got, want)
    s.reset()
    assert np.array_equal(host(s.random(4)), qmc.Sobol(d, scramble=False).random(4).astype(dtype))
    s.fast_forward(10)
    ref = qmc.Sobol(d, scramble=False)
    ref.fast_forward(14)
    assert np.array_equal(host(s.random(3)), ref.random(3).astype(dtype))


def test_sobol_scrambled_is_a_digital_shift():
    s = host(xp.random.Sobol(3, seed=1, device=DEVICE).random(256))
    assert (s >= 0).all() and (s < 1).all()
    for j in range(3):  # a digital shift keeps the stratification: one point per interval of 1/256
        assert len(np.unique(np.floor(s[:, j] * 256))) == 256
    assert np.array_equal(s, host(xp.random.Sobol(3, seed=1, device=DEVICE).random(256)))


def test_sobol_in_capture_gives_the_next_points():
    from scipy.stats import qmc
    dtype = defaults()["real floating"]
    s = xp.random.Sobol(4, scramble=False, device=DEVICE)
    out = xp.empty((8, 4), dtype=dtype, device=DEVICE)
    with xp.capture(DEVICE) as g:
        xp.add(s.random(8), 0, out=out)
    runs = [host(out)]
    for _ in range(2):
        g.replay()
        runs.append(host(out))
    want = qmc.Sobol(4, scramble=False).random(32)[:24].astype(dtype)
    assert np.array_equal(np.concatenate(runs), want)
