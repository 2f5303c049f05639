"""Differential fuzz of numr_array against array-api-strict with edge-case arguments.

Calls functions of the creation, manipulation, statistical, fft and linalg families with huge and negative
ints, negative axes, empty arrays, n=0, bools where ints are expected, on the CPU, and reports:

- crash: numr (or reading its result on the host) raised something other than the standard's
  TypeError/ValueError/IndexError (OverflowError counts as the Python type for an int that does not fit;
  BufferError for DLPack), or a NumPy/CuPy class leaked through (UFuncTypeError is a TypeError, but NumPy's);
- unnamed: the message does not name the function;
- hang: numr took longer than --timeout seconds;
- unstable: two identical numr calls gave different results (uninitialised memory);
- mismatch: both succeeded but shapes, dtypes or values differ.

Cases where one side raises and the other does not are counted, and listed with --disagreements: the
standard leaves many of them open (numr refuses bools where ints are expected; array-api-strict hangs where
NumPy does, e.g. diff with n=2**70). MemoryError is allowed: sizes of 2**45 elements are refused at
allocation. The exit status is 1 when anything but "unnamed" was found.

    python3 scripts/fuzz_strict.py [--seed S] [--calls N] [--timeout 5] [-v] [--disagreements]
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import sys
from pathlib import Path

import warnings

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's numr_array

import array_api_strict as xs  # noqa: E402

import numr_array as xp  # noqa: E402

ALLOWED = (TypeError, ValueError, IndexError, OverflowError, BufferError, MemoryError)
DTYPES = ["bool", "int8", "int64", "uint8", "float32", "float64", "complex64", "complex128"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (0, 3), (3, 0), (2, 2), (2, 2, 2), (1, 0, 2)]
# beyond int32 and int64; 2**45 points of anything cannot be allocated, so no call takes the machine's memory
INTS = [0, 1, -1, 2, -2, 3, -4, 5, 2 ** 45, -(2 ** 45), 2 ** 63, 2 ** 70, -(2 ** 70), True, False, 1.0, None]


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout


def make(lib, shape, dtype, seed):
    """The same pseudo-random data as an array of ``lib``."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.integers(-3, 4, size=shape)
    a = (a % 256).astype(dtype) if dtype == "uint8" else a.astype(dtype)
    return lib.asarray(a, dtype=getattr(lib, dtype))


# (family, function path, builder): a builder takes a random.Random and returns (args, kwargs) where an
# argument ("A", shape, dtype) is an array made in each library from the same data
def A(shape, dtype):
    return ("A", shape, dtype)


def i(r):
    return r.choice(INTS)


def axis_or_none(r):
    return r.choice(INTS[:8] + [None])


def arr(r, dtypes=DTYPES, shapes=SHAPES):
    return A(r.choice(shapes), r.choice(dtypes))


FLOATS = ["float32", "float64", "complex64", "complex128"]
REAL = ["float32", "float64"]
SPECS = [
    ("creation", "arange", lambda r: ((i(r),), {"stop": r.choice([None, i(r)]), "step": r.choice([1, i(r)])})),
    ("creation", "linspace", lambda r: ((i(r), i(r), i(r)), {"endpoint": r.choice([True, False])})),
    ("creation", "full", lambda r: ((r.choice([i(r), (2, i(r))]), i(r)), {})),
    ("creation", "eye", lambda r: ((i(r),), {"k": i(r)})),
    ("creation", "zeros", lambda r: ((r.choice([i(r), (i(r), 0)]),), {})),
    ("creation", "asarray", lambda r: ((r.choice([i(r), [i(r), 1], [[i(r)]]]),), {})),
    ("creation", "tril", lambda r: ((arr(r, shapes=SHAPES[4:]),), {"k": i(r)})),
    ("creation", "triu", lambda r: ((arr(r, shapes=SHAPES[4:]),), {"k": i(r)})),
    ("manipulation", "roll", lambda r: ((arr(r), i(r)), {"axis": axis_or_none(r)})),
    ("manipulation", "flip", lambda r: ((arr(r),), {"axis": axis_or_none(r)})),
    ("manipulation", "expand_dims", lambda r: ((arr(r),), {"axis": i(r)})),
    ("manipulation", "squeeze", lambda r: ((arr(r),), {"axis": i(r)})),
    ("manipulation", "moveaxis", lambda r: ((arr(r), i(r), i(r)), {})),
    ("manipulation", "repeat", lambda r: ((arr(r), r.choice([0, 2, -1, 2 ** 70, True])), {"axis": axis_or_none(r)})),
    ("manipulation", "tile", lambda r: ((arr(r), r.choice([(0,), (2, 1), (-1,), (2 ** 70,), (True,)])), {})),
    ("manipulation", "reshape", lambda r: ((arr(r), r.choice([(-1,), (0, -1), (-1, -1), (2 ** 70,), (3, -1)])), {})),
    ("manipulation", "concat", lambda r: (([arr(r), arr(r)],), {"axis": axis_or_none(r)})),
    ("manipulation", "stack", lambda r: (([arr(r), arr(r)],), {"axis": i(r)})),
    ("manipulation", "unstack", lambda r: ((arr(r),), {"axis": i(r)})),
    ("manipulation", "broadcast_to", lambda r: ((arr(r), r.choice([(0,), (2, 3), (2 ** 70,), (-1,)])), {})),
    ("statistical", "sum", lambda r: ((arr(r),), {"axis": axis_or_none(r), "keepdims": r.choice([True, False])})),
    ("statistical", "prod", lambda r: ((arr(r),), {"axis": axis_or_none(r)})),
    ("statistical", "max", lambda r: ((arr(r),), {"axis": axis_or_none(r)})),
    ("statistical", "mean", lambda r: ((arr(r),), {"axis": axis_or_none(r)})),
    ("statistical", "var", lambda r: ((arr(r, FLOATS),), {"axis": axis_or_none(r), "correction": i(r)})),
    ("statistical", "std", lambda r: ((arr(r, REAL),), {"axis": axis_or_none(r), "correction": i(r)})),
    ("statistical", "cumulative_sum", lambda r: ((arr(r),), {"axis": axis_or_none(r),
                                                             "include_initial": r.choice([True, False])})),
    ("statistical", "cumulative_prod", lambda r: ((arr(r),), {"axis": axis_or_none(r)})),
    ("statistical", "diff", lambda r: ((arr(r),), {"axis": i(r), "n": i(r)})),
    ("fft", "fft.fft", lambda r: ((arr(r, FLOATS),), {"n": i(r), "axis": i(r)})),
    ("fft", "fft.ifft", lambda r: ((arr(r, FLOATS),), {"n": i(r)})),
    ("fft", "fft.rfft", lambda r: ((arr(r, REAL),), {"n": i(r), "axis": i(r)})),
    ("fft", "fft.irfft", lambda r: ((arr(r, FLOATS),), {"n": i(r), "axis": i(r)})),
    ("fft", "fft.hfft", lambda r: ((arr(r, FLOATS),), {"n": i(r)})),
    ("fft", "fft.ihfft", lambda r: ((arr(r, REAL),), {"n": i(r)})),
    ("fft", "fft.fftn", lambda r: ((arr(r, FLOATS),), {"s": r.choice([None, (i(r),)]),
                                                        "axes": r.choice([None, (i(r),)])})),
    ("fft", "fft.irfftn", lambda r: ((arr(r, FLOATS),), {"s": r.choice([None, (i(r), 3)]),
                                                          "axes": r.choice([None, (0, 1), (i(r), -1)])})),
    ("fft", "fft.fftfreq", lambda r: ((i(r),), {"d": r.choice([1.0, 0.0, -2.0, i(r)])})),
    ("fft", "fft.fftshift", lambda r: ((arr(r),), {"axes": r.choice([None, i(r), (i(r),)])})),
    ("linalg", "linalg.inv", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 2), (3, 2, 2), (1, 1), (0, 2, 2)]),), {})),
    ("linalg", "linalg.det", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 2), (3, 2, 2), (2, 3)]),), {})),
    ("linalg", "linalg.matrix_power", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 2), (3, 2, 2)]), i(r)), {})),
    ("linalg", "linalg.matrix_rank", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 3), (2, 2)]),), {})),
    ("linalg", "linalg.vector_norm", lambda r: ((arr(r, FLOATS),), {"axis": axis_or_none(r),
                                                                   "ord": r.choice([2, 1, 0, -1, np.inf, True])})),
    ("linalg", "linalg.matrix_norm", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 3), (2, 2)]),),
                                                {"ord": r.choice(["fro", "nuc", 1, -1, 2, np.inf, 3])})),
    ("linalg", "linalg.cholesky", lambda r: ((arr(r, FLOATS, [(0, 0), (2, 2), (3, 3)]),), {})),
    ("linalg", "linalg.solve", lambda r: ((arr(r, FLOATS, [(2, 2), (0, 0)]),
                                           arr(r, FLOATS, [(2,), (2, 1), (0,)])), {})),
    ("linalg", "linalg.trace", lambda r: ((arr(r, shapes=[(2, 3), (0, 0), (2, 2, 2)]),), {"offset": i(r)})),
    ("linalg", "linalg.diagonal", lambda r: ((arr(r, shapes=[(2, 3), (0, 0), (2, 2, 2)]),), {"offset": i(r)})),
    ("linalg", "linalg.cross", lambda r: ((arr(r, FLOATS, [(3,), (2, 3)]), arr(r, FLOATS, [(3,), (2, 3)])),
                                          {"axis": i(r)})),
]


def resolve(lib, path):
    f = lib
    for part in path.split("."):
        f = getattr(f, part)
    return f


def materialise(lib, value, seed):
    if isinstance(value, tuple) and value and value[0] == "A":
        return make(lib, value[1], value[2], seed)
    if isinstance(value, list):
        return [materialise(lib, v, seed + k) for k, v in enumerate(value)]
    return value


def as_numpy(result):
    if isinstance(result, (tuple, list)):
        return [as_numpy(r) for r in result]
    return np.from_dlpack(result) if hasattr(result, "__dlpack__") else np.asarray(result)


def call(lib, path, args, kwargs, seed, timeout):
    args = [materialise(lib, a, seed + k) for k, a in enumerate(args)]
    signal.alarm(timeout)
    try:
        return "ok", resolve(lib, path)(*args, **kwargs)
    except Timeout:
        return "hang", None
    except Exception as e:  # noqa: BLE001 - classified below
        return "error", e
    finally:
        signal.alarm(0)


def same(a, b) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if a.shape != b.shape:
        return False
    rtol = 1e-4 if a.dtype in (np.float32, np.complex64) or b.dtype in (np.float32, np.complex64) else 1e-9
    try:
        return bool(np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True))
    except TypeError:
        return bool((a == b).all())


def known_difference(path, kwargs, mine) -> bool:
    """numr follows the standard where NumPy does not: var/std with N - correction <= 0 are NaN (NumPy's
    inf for a non-zero spread)."""
    return path in ("var", "std") and bool(np.isnan(mine).all()) and kwargs.get("correction", 0) >= 1


def dtype_names(result):
    if isinstance(result, (tuple, list)):
        return [dtype_names(r) for r in result]
    return str(result.dtype).rsplit(".", 1)[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--timeout", type=int, default=5)
    ap.add_argument("-v", "--verbose", action="store_true", help="print each call before making it")
    ap.add_argument("--disagreements", action="store_true",
                    help="also list the calls that one library refuses and the other accepts")
    opts = ap.parse_args()
    seed = random.SystemRandom().randrange(2 ** 32) if opts.seed is None else opts.seed
    print(f"seed {seed}, {opts.calls} calls, on the CPU")
    r = random.Random(seed)
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")  # NumPy's warnings for empty means, singular matrices, ...
    counts = collections.Counter()
    findings = collections.defaultdict(list)
    for n in range(opts.calls):
        family, path, build = r.choice(SPECS)
        args, kwargs = build(r)
        data_seed = r.randrange(2 ** 31)
        where = f"{path}(*{args!r}, **{kwargs!r})"
        if opts.verbose:
            print(n, where, file=sys.stderr, flush=True)
        kind, got = call(xp, path, args, kwargs, data_seed, opts.timeout)
        again = call(xp, path, args, kwargs, data_seed, opts.timeout) if kind == "ok" else None
        ref_kind, ref = call(xs, path, args, kwargs, data_seed, opts.timeout)
        counts[(kind, ref_kind)] += 1
        name = path.rsplit(".", 1)[-1]
        if kind == "hang":
            findings["hang"].append(where)
        elif kind == "error":
            cls = type(got)
            if not isinstance(got, ALLOWED) or cls.__module__.split(".")[0] in ("numpy", "cupy"):
                findings["crash"].append(f"{where}: {cls.__module__}.{cls.__name__}: {got}")
            elif name not in str(got) and not isinstance(got, MemoryError):  # the allocator's, not named
                findings["unnamed"].append(f"{where}: {cls.__name__}: {got}")
            if ref_kind == "ok":
                findings["numr refuses"].append(f"{where}: {cls.__name__}: {got}")
        else:
            try:
                mine = as_numpy(got)
            except Exception as e:  # noqa: BLE001 - a result that cannot be read is a crash too
                findings["crash"].append(f"{where}: reading the result: {type(e).__module__}.{type(e).__name__}: {e}")
                continue
            if again[0] != "ok" or not same(mine, as_numpy(again[1])):
                findings["unstable"].append(where)
            if ref_kind == "error":
                findings["strict refuses"].append(f"{where}: {type(ref).__name__}: {ref}")
            if ref_kind == "ok":
                theirs = as_numpy(ref)
                if (not same(mine, theirs) or dtype_names(got) != dtype_names(ref)) and \
                        not known_difference(path, kwargs, mine):
                    findings["mismatch"].append(f"{where}: numr {dtype_names(got)} {mine!r}, "
                                                f"strict {dtype_names(ref)} {theirs!r}")
    print("outcomes (numr, array-api-strict):", dict(counts))
    listed = ("crash", "hang", "unstable", "mismatch", "unnamed")
    for what in listed + (("numr refuses", "strict refuses") if opts.disagreements else ()):
        lines = findings[what]
        print(f"{what}: {len(lines)}")
        for line in sorted(set(lines))[:40]:
            print("   ", line[:400])
    return 1 if any(findings[w] for w in ("crash", "hang", "unstable", "mismatch")) else 0


if __name__ == "__main__":
    sys.exit(main())
