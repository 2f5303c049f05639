"""``Generator``: NumPy's ``numpy.random.Generator`` methods, drawn on the device from Philox4x32-10.

The state is a uint32 tensor (6,) on the generator's device: a 64-bit key (from ``numpy.random.SeedSequence``
of the seed) and a 128-bit counter. A draw of n elements launches "philox" (element i from
philox(counter + i, key)) and then "philox_advance" (counter += n), both reading the state on the device:
a captured draw therefore draws fresh numbers at every replay, and one seed gives the same stream on every
device (docs/random.md defines the bits exactly).
"""

from __future__ import annotations

import math
import operator
import threading

import numpy as np

from .. import _dtypes as dt
from .. import _namespace as ns
from .._creation import normalize_shape
from .._device import Device, resolve_device
from .._info import default_dtypes_of
from .._launch import launch, new_tensor
from .._tensor import Tensor
from ..kernels import K

__all__ = ["Generator", "default_rng"]


def _shape(size, func: str) -> tuple[int, ...]:
    return () if size is None else normalize_shape(size, func)


def _dtype(dtype, func: str, kinds: str, words: str) -> dt.DType:
    """``dtype`` (what ``dtype=`` takes everywhere) as a DType of one of NumPy's ``kinds`` letters."""
    dtype = dt.check_dtype(dtype, func)
    if dtype.kind not in kinds:
        raise TypeError(f"{func}: unsupported dtype {dtype.name} (expected {words})")
    return dtype


def _check_on(dev: Device, dtype: dt.DType, func: str) -> None:
    client = dev.client
    if not client.supports_dtype(dtype):
        need = "shader-f64" if dtype.kind in dt.FLOAT_KINDS else "shader-int64"
        lacks = f" (the adapter lacks {need})" if getattr(client, "features", None) is not None else ""
        raise TypeError(f"{func}: {dtype.name} is not supported on device {dev}{lacks}")


def _number(v, func: str, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{func}: {name} must be a real number or an array, got {v!r}")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{func}: {name} must be finite, got {v!r}")
    return v


def _integer(v, func: str, name: str) -> int:
    try:
        if isinstance(v, bool):
            raise TypeError
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{func}: {name} must be an integer, got {v!r}") from None


class Generator:
    """A counter-based (Philox4x32-10) generator whose numbers are made on ``device``.

    Methods follow ``numpy.random.Generator``'s signatures; results are tensors on the generator's
    device (a 0-D tensor where NumPy returns a Python scalar for ``size=None``). The streams differ from
    NumPy's (PCG64).
    """

    def __init__(self, seed=None, device=None):
        if isinstance(seed, Generator):
            raise TypeError("default_rng: seed must be None, an int or a sequence of ints, got a Generator")
        try:
            seq = np.random.SeedSequence(seed)
        except (TypeError, ValueError) as e:
            raise type(e)(f"default_rng: invalid seed {seed!r} ({e})") from None
        self._start(seq, resolve_device(device, "default_rng"))

    def _start(self, seq: np.random.SeedSequence, dev: Device) -> None:
        self._dev = dev
        self._seq = seq
        key = seq.generate_state(2, np.uint32)
        self._state = ns.asarray(np.array([key[0], key[1], 0, 0, 0, 0], np.uint32), device=dev)
        # a draw and its advance are two launches: threads sharing the generator take turns, so that no two
        # draws read the same counter
        self._lock = threading.Lock()

    @property
    def device(self) -> Device:
        return self._dev

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10) on {self._dev}"

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` independent generators (``SeedSequence.spawn``) on the same device."""
        children = []
        for seq in self._seq.spawn(_integer(n_children, "spawn", "n_children")):
            child = Generator.__new__(Generator)
            child._start(seq, self._dev)
            children.append(child)
        return children

    # --- the draws ----------------------------------------------------------------------------------
    def _draw(self, shape: tuple[int, ...], dtype: dt.DType, params: dict) -> Tensor:
        """A new tensor of ``shape`` from the kernel, the counter then advanced by its size."""
        out = new_tensor(self._dev, shape, dtype)
        n = math.prod(shape)
        if n:
            with self._lock:
                launch(self._dev, K.philox, (self._state,), (out,), params)
                launch(self._dev, K.philox_advance, (), (self._state,), {"n": n})
        return out

    def _float(self, dtype, func: str) -> dt.DType:
        d = default_dtypes_of(self._dev)["default_float"] if dtype is None else _dtype(dtype, func, "f", "a real floating-point dtype")
        _check_on(self._dev, d, func)
        return d

    def _uniform01(self, shape, dtype: dt.DType) -> Tensor:
        return self._draw(shape, dtype, {"dist": "uniform"})

    def bits(self, size=None) -> Tensor:
        """Raw uint32 words (word 0 of each Philox block)."""
        return self._draw(_shape(size, "bits"), dt.uint32, {"dist": "bits"})

    def _target(self, size, dtype, out, func: str) -> tuple[tuple[int, ...], dt.DType]:
        """The shape and dtype of a draw that may go into ``out`` (checked before anything is drawn: it must
        be a tensor of the generator's device, of the draw's shape and dtype)."""
        if out is None:
            return _shape(size, func), self._float(dtype, func)
        if type(out) is not Tensor:
            raise TypeError(f"{func}: out must be a numr_array Tensor, got {type(out).__name__}")
        d = self._float(out._dtype if dtype is None else dtype, func)
        shape = out.shape if size is None else _shape(size, func)
        if out.device != self._dev or out.shape != shape or out._dtype is not d:
            raise ValueError(f"{func}: out is a {out._dtype.name} tensor of shape {out.shape} on {out.device}; the draw "
                             f"is {d.name} of shape {shape} on {self._dev}")
        return shape, d

    @staticmethod
    def _into(out: Tensor | None, value: Tensor) -> Tensor:
        if out is None:
            return value
        ns.setitem(out, ..., value)
        return out

    def random(self, size=None, dtype=None, out=None) -> Tensor:
        """Uniform floats in [0, 1): float32 (w >> 8) * 2**-24, float64 ((w0 >> 5) * 2**26 + (w1 >> 6)) * 2**-53."""
        shape, d = self._target(size, dtype, out, "random")
        return self._into(out, self._uniform01(shape, d))

    def uniform(self, low=0.0, high=1.0, size=None, *, dtype=None) -> Tensor:
        """low + (high - low) * random(): in [low, high) (up to rounding)."""
        d = self._float(dtype, "uniform")
        lo, hi = self._param(low, d, "uniform", "low"), self._param(high, d, "uniform", "high")
        shape = self._out_shape(size, "uniform", lo, hi)
        span = hi - lo if type(lo) is float and type(hi) is float else ns.subtract(hi, lo)
        return ns.add(lo, ns.multiply(span, self._uniform01(shape, d)))

    def standard_normal(self, size=None, dtype=None, out=None) -> Tensor:
        """Box-Muller: sqrt(-2 log(1 - u1)) cos(2 pi u2) of two uniform draws."""
        shape, d = self._target(size, dtype, out, "standard_normal")
        return self._into(out, self._normal(shape, d))

    def _normal(self, shape, d: dt.DType) -> Tensor:
        u1 = self._uniform01(shape, d)
        u2 = self._uniform01(shape, d)
        r = ns.sqrt(ns.multiply(ns.log1p(ns.negative(u1)), -2.0))
        return ns.multiply(r, ns.cos(ns.multiply(u2, 2.0 * math.pi)))

    def normal(self, loc=0.0, scale=1.0, size=None, *, dtype=None) -> Tensor:
        d = self._float(dtype, "normal")
        loc, scale = self._param(loc, d, "normal", "loc"), self._param(scale, d, "normal", "scale", nonneg=True)
        shape = self._out_shape(size, "normal", loc, scale)
        return ns.add(loc, ns.multiply(scale, self._normal(shape, d)))

    def standard_exponential(self, size=None, dtype=None, method: str = "inv") -> Tensor:
        """-log(1 - u) (inversion; NumPy's default "zig" ziggurat is not used)."""
        if method not in ("inv", "zig"):
            raise ValueError(f"standard_exponential: method must be 'inv' or 'zig', got {method!r}")
        d = self._float(dtype, "standard_exponential")
        return ns.negative(ns.log1p(ns.negative(self._uniform01(_shape(size, "standard_exponential"), d))))

    def exponential(self, scale=1.0, size=None, *, dtype=None) -> Tensor:
        d = self._float(dtype, "exponential")
        scale = self._param(scale, d, "exponential", "scale", nonneg=True)
        shape = self._out_shape(size, "exponential", scale)
        e = ns.negative(ns.log1p(ns.negative(self._uniform01(shape, d))))
        return ns.multiply(scale, e)

    #: Marsaglia-Tsang candidates drawn per gamma value: each is accepted with probability above 0.95, so
    #: all of them are rejected with probability below 0.05**12 < 2.5e-16 (the value is then d, the mode)
    GAMMA_TRIES = 12

    def _gamma(self, a, shape: tuple[int, ...], d: dt.DType) -> Tensor:
        """Standard gamma variates of shape parameter ``a`` (a tensor broadcast to ``shape``): Marsaglia and
        Tsang's method (ACM TOMS 26, 2000), its candidates drawn at once and the first accepted one kept;
        for a < 1, gamma(a + 1) * u**(1/a)."""
        a = ns.broadcast_to(a, shape)
        small = ns.less(a, 1.0)
        a1 = ns.where(small, ns.add(a, 1.0), a)
        dd = ns.subtract(a1, 1.0 / 3.0)
        c = ns.divide(1.0 / 3.0, ns.sqrt(dd))
        tries = (self.GAMMA_TRIES,) + shape
        z = self._normal(tries, d)
        u = self._uniform01(tries, d)
        v = ns.pow(ns.add(ns.multiply(c, z), 1.0), 3.0)
        bound = ns.add(ns.multiply(ns.multiply(z, z), 0.5),
                       ns.multiply(dd, ns.add(ns.subtract(1.0, v), ns.log(v))))  # (log of v <= 0: NaN, refused)
        ok = ns.logical_and(ns.greater(v, 0.0), ns.less(ns.log1p(ns.negative(u)), bound))
        first = ns.argmax(ns.astype(ok, dt.uint8), axis=0, keepdims=True)
        vv = ns.reshape(ns.take_along_axis(v, first, axis=0), shape)
        g = ns.multiply(dd, ns.where(ns.any(ok, axis=0), vv, 1.0))
        boost = ns.pow(self._uniform01(shape, d), ns.divide(1.0, a))
        return ns.where(small, ns.multiply(g, boost), g)

    def _tensor_param(self, v, d: dt.DType, func: str, name: str, nonneg: bool = False) -> Tensor:
        v = self._param(v, d, func, name, nonneg)
        return v if type(v) is Tensor else ns.full((), v, dtype=d, device=self._dev)

    def standard_gamma(self, shape, size=None, dtype=None, out=None) -> Tensor:
        """Gamma(shape, 1) variates (``shape`` >= 0; a tensor ``shape`` is not checked on the host)."""
        func = "standard_gamma"
        target, d = self._target(size, dtype, out, func) if out is not None else (None, self._float(dtype, func))
        k = self._tensor_param(shape, d, func, "shape", nonneg=True)
        shape_out = target if target is not None else self._out_shape(size, func, k)
        return self._into(out, self._gamma(k, shape_out, d))

    def gamma(self, shape, scale=1.0, size=None, *, dtype=None) -> Tensor:
        d = self._float(dtype, "gamma")
        k = self._tensor_param(shape, d, "gamma", "shape", nonneg=True)
        scale = self._param(scale, d, "gamma", "scale", nonneg=True)
        shape = self._out_shape(size, "gamma", k, *([scale] if type(scale) is Tensor else []))
        return ns.multiply(scale, self._gamma(k, shape, d))

    def beta(self, a, b, size=None, *, dtype=None) -> Tensor:
        """X / (X + Y) of X ~ Gamma(a), Y ~ Gamma(b) (a, b > 0)."""
        d = self._float(dtype, "beta")
        ta, tb = self._tensor_param(a, d, "beta", "a", nonneg=True), self._tensor_param(b, d, "beta", "b", nonneg=True)
        for name, v in (("a", a), ("b", b)):
            if type(v) is not Tensor and not isinstance(v, (list, tuple, np.ndarray)) and float(v) == 0:
                raise ValueError(f"beta: {name} must be positive, got {v!r}")
        shape = self._out_shape(size, "beta", ta, tb)
        x, y = self._gamma(ta, shape, d), self._gamma(tb, shape, d)
        return ns.divide(x, ns.add(x, y))

    def chisquare(self, df, size=None, *, dtype=None) -> Tensor:
        """2 * Gamma(df / 2) (df > 0)."""
        d = self._float(dtype, "chisquare")
        k = self._tensor_param(df, d, "chisquare", "df", nonneg=True)
        return ns.multiply(self._gamma(ns.multiply(k, 0.5), self._out_shape(size, "chisquare", k), d), 2.0)

    def _from_table(self, k0: int, logpmf: np.ndarray, size, func: str) -> Tensor:
        """Integers k0 + j drawn with probabilities exp(logpmf[j]) (normalised on the host) by the inverse
        CDF: a uniform draw of the device's default float dtype searched in the cumulative table."""
        cdf = np.cumsum(np.exp(logpmf - logpmf.max()))
        cdf /= cdf[-1]
        fd = default_dtypes_of(self._dev)["default_float"]
        shape = _shape(size, func)
        u = self._uniform01(shape, fd)
        table = ns.asarray(cdf[:-1].astype(fd.np), device=self._dev)
        j = ns.searchsorted(table, ns.reshape(u, (-1,)), side="right")
        return ns.reshape(ns.add(j, k0), shape)

    def poisson(self, lam=1.0, size=None) -> Tensor:
        """Poisson(lam) integers (lam a number up to 1e8), by the inverse CDF over a table of lam +- 40 sqrt(lam)
        + 40 (the mass outside is below 1e-300)."""
        lam = _number(lam, "poisson", "lam")
        if not 0 <= lam <= 1e8:  # (the table has 80 sqrt(lam) entries)
            raise ValueError(f"poisson: lam must be in [0, 1e8], got {lam!r}")
        if lam == 0:
            return ns.zeros(_shape(size, "poisson"), dtype=self._index_dtype(), device=self._dev)
        spread = 40 * math.sqrt(lam) + 40
        k = np.arange(max(0, math.floor(lam - spread)), math.ceil(lam + spread) + 1, dtype=np.float64)
        logpmf = k * math.log(lam) - lam - np.array([math.lgamma(v + 1) for v in k])
        return ns.astype(self._from_table(int(k[0]), logpmf, size, "poisson"), self._index_dtype(), copy=False)

    def binomial(self, n, p, size=None) -> Tensor:
        """Binomial(n, p) integers (n an int, p a number in [0, 1]), by the inverse CDF over mean +- 40 sd + 40."""
        n = _integer(n, "binomial", "n")
        p = _number(p, "binomial", "p")
        if n < 0:
            raise ValueError(f"binomial: n must be non-negative, got {n}")
        if not 0 <= p <= 1:
            raise ValueError(f"binomial: p must be in [0, 1], got {p!r}")
        if n == 0 or p in (0.0, 1.0):
            return ns.full(_shape(size, "binomial"), n if p == 1.0 else 0, dtype=self._index_dtype(), device=self._dev)
        mean, var = n * p, n * p * (1 - p)
        if var > 1e8:  # (the table has 80 sqrt(var) entries)
            raise ValueError(f"binomial: n * p * (1 - p) must be at most 1e8, got {var!r} (n={n}, p={p!r})")
        spread = 40 * math.sqrt(var) + 40
        k = np.arange(max(0, math.floor(mean - spread)), min(n, math.ceil(mean + spread)) + 1, dtype=np.float64)
        logpmf = (math.lgamma(n + 1) - np.array([math.lgamma(v + 1) + math.lgamma(n - v + 1) for v in k])
                  + k * math.log(p) + (n - k) * math.log1p(-p))
        return ns.astype(self._from_table(int(k[0]), logpmf, size, "binomial"), self._index_dtype(), copy=False)

    def _param(self, v, d: dt.DType, func: str, name: str, nonneg: bool = False):
        """A distribution parameter: a finite Python float, or a tensor on the generator's device."""
        if type(v) is Tensor:
            if v.device != self._dev:
                raise ValueError(f"{func}: {name} is on {v.device}, the generator on {self._dev}")
            return v
        if isinstance(v, (list, tuple, np.ndarray)):
            a = np.asarray(v, d.np)
            if nonneg and (a < 0).any():
                raise ValueError(f"{func}: {name} must be non-negative, got {v!r}")
            return ns.asarray(a, device=self._dev)
        v = _number(v, func, name)
        if nonneg and v < 0:
            raise ValueError(f"{func}: {name} must be non-negative, got {v!r}")
        return v

    def _out_shape(self, size, func: str, *params) -> tuple[int, ...]:
        shapes = [p.shape for p in params if type(p) is Tensor]
        if size is not None:
            shape = _shape(size, func)
            for s in shapes:
                if ns.broadcast_shapes(s, shape) != shape:
                    raise ValueError(f"{func}: parameters of shape {s} do not broadcast to size {shape}")
            return shape
        return ns.broadcast_shapes(*shapes) if shapes else ()

    def integers(self, low, high=None, size=None, dtype=None, endpoint: bool = False) -> Tensor:
        """Integers in [low, high) ([low, high] with endpoint), unbiased to within range / 2**64 (a range up to
        2**32: two words' 64-bit multiply-shift) or 2**-64 (larger ranges: four words)."""
        func = "integers"
        d = (default_dtypes_of(self._dev)["default_integral"] if dtype is None
             else _dtype(dtype, func, "iu", "an integer dtype"))
        _check_on(self._dev, d, func)
        low = _integer(low, func, "low")
        if high is None:
            low, high = 0, low
        else:
            high = _integer(high, func, "high")
        if endpoint:
            high += 1
        if low >= high:
            raise ValueError(f"{func}: low >= high (low={low}, high={high - endpoint}{', endpoint=True' if endpoint else ''})")
        info = np.iinfo(d.np)
        if low < info.min or high - 1 > info.max:
            raise ValueError(f"{func}: the bounds [{low}, {high}) do not fit in {d.name}")
        return self._draw(_shape(size, func), d, {"dist": "integers", "low": low, "range": high - low})

    def _index_dtype(self) -> dt.DType:
        return default_dtypes_of(self._dev)["default_integral"]

    def _order(self, n: int) -> Tensor:
        """A uniformly random permutation of range(n): indices sorted by a 64-bit key of two uint32 draws
        (secondary, then stable by primary), so ties are a 2**-64 event per pair."""
        k1, k2 = self.bits(n), self.bits(n)
        o = ns.argsort(k2, stable=True)
        return ns.take(o, ns.argsort(ns.take(k1, o), stable=True))

    def permutation(self, x, axis: int = 0) -> Tensor:
        """A permuted range(x) (x an int), or a permuted copy of the array x along ``axis``."""
        if type(x) is not Tensor and not isinstance(x, (list, tuple, np.ndarray)):
            n = _integer(x, "permutation", "x")
            if n < 0:
                raise ValueError(f"permutation: x must be non-negative, got {n}")
            return ns.astype(self._order(n), self._index_dtype(), copy=False)
        x = x if type(x) is Tensor else ns.asarray(x, device=self._dev)
        if x.ndim == 0:
            raise ValueError("permutation: x must be an int or an array of at least one dimension, got a 0-D array")
        axis = _integer(axis, "permutation", "axis")
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"permutation: axis {axis} is out of bounds for an array of {x.ndim} dimensions")
        return ns.take(x, self._order(x.shape[axis]), axis=axis)

    def shuffle(self, x: Tensor, axis: int = 0) -> None:
        """Permute the tensor ``x`` in place along ``axis``."""
        if type(x) is not Tensor:
            raise TypeError(f"shuffle: x must be a numr_array Tensor (shuffled in place), got {type(x).__name__}")
        if x.ndim == 0:
            raise ValueError("shuffle: x must have at least one dimension, got a 0-D array")
        ns.setitem(x, ..., self.permutation(x, axis))

    def choice(self, a, size=None, replace: bool = True, p=None, axis: int = 0, shuffle: bool = True) -> Tensor:
        """Samples of range(a) (a an int) or of a's entries along ``axis``, with or without replacement,
        uniform or with probabilities ``p`` (inverse CDF with replacement; exponential keys without)."""
        func = "choice"
        pool = None
        if type(a) is Tensor or isinstance(a, (list, tuple, np.ndarray)):
            pool = a if type(a) is Tensor else ns.asarray(a, device=self._dev)
            if pool.ndim == 0:
                raise ValueError("choice: a must be a positive int or an array of at least one dimension")
            axis = _integer(axis, func, "axis")
            if not -pool.ndim <= axis < pool.ndim:
                raise ValueError(f"choice: axis {axis} is out of bounds for an array of {pool.ndim} dimensions")
            n = pool.shape[axis]
        else:
            n = _integer(a, func, "a")
            if n <= 0:
                raise ValueError(f"choice: a must be a positive integer, got {n}")
        shape = _shape(size, func)
        k = math.prod(shape)
        if n == 0 and k:
            raise ValueError("choice: a cannot be empty unless no samples are taken")
        probs = None
        if p is not None:
            probs = np.asarray(ns.to_numpy(p, "choice") if type(p) is Tensor else p, np.float64)
            if probs.ndim != 1 or probs.shape[0] != n:
                raise ValueError(f"choice: p must be 1-D of length {n}, got shape {probs.shape}")
            if not np.isfinite(probs).all() or (probs < 0).any():
                raise ValueError(f"choice: probabilities must be finite and non-negative, got {p!r}")
            if abs(probs.sum() - 1.0) > math.sqrt(np.finfo(np.float64).eps):
                raise ValueError(f"choice: probabilities do not sum to 1 (sum {float(probs.sum())!r})")
        fd = default_dtypes_of(self._dev)["default_float"]
        if replace:
            if probs is None:
                idx = self.integers(0, max(n, 1), k, dtype=self._index_dtype())
            else:
                cdf = np.cumsum(probs)
                cdf /= cdf[-1]
                u = self._uniform01((k,), fd)
                idx = ns.searchsorted(ns.asarray(cdf.astype(fd.np), device=self._dev), u, side="right")
                idx = ns.minimum(idx, n - 1)  # (u < 1 = cdf[-1]; rounding of the cdf aside)
        else:
            if k > n:
                raise ValueError(f"choice: cannot take a larger sample ({k}) than the population ({n}) without replacement")
            if probs is None:
                idx = self._order(n)[:k]
            else:
                if np.count_nonzero(probs) < k:
                    raise ValueError(f"choice: fewer non-zero probabilities ({np.count_nonzero(probs)}) than samples ({k})")
                with np.errstate(divide="ignore"):
                    inv = np.where(probs > 0, 1.0 / probs, np.inf)
                keys = ns.multiply(self.standard_exponential(n, dtype=fd), ns.asarray(inv.astype(fd.np), device=self._dev))
                idx = ns.argsort(keys, stable=True)[:k]
        if pool is None:
            return ns.reshape(ns.astype(idx, self._index_dtype(), copy=False), shape)
        picked = ns.take(pool, idx, axis=axis)
        ax = axis % pool.ndim
        return ns.reshape(picked, pool.shape[:ax] + shape + pool.shape[ax + 1:])

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes (uint32 words, little-endian), read back to the host."""
        length = _integer(length, "bytes", "length")
        if length < 0:
            raise ValueError(f"bytes: length must be non-negative, got {length}")
        words = self.bits(-(-length // 4))
        return ns.to_numpy(words, "bytes").astype("<u4").tobytes()[:length]


def default_rng(seed=None, device=None) -> Generator:
    """A new :class:`Generator` seeded with ``seed`` (None: fresh entropy; an int or a sequence of ints,
    through ``numpy.random.SeedSequence``), generating on ``device`` (default: the default device)."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed, device)
