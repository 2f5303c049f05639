"""What every test module may ask of a device: its dtypes, its default dtypes, and a skip whose reason
names the adapter feature a dtype needs where the device lacks it (a WebGPU adapter without shader-f64 or
shader-int64, e.g. Mesa's OpenGL one, has no float64, complex128, int64 or uint64, and its default
dtypes are float32, complex64 and int32).

``DEVICE`` is the device most tests run on: ``NUMR_TEST_DEVICE``, else ``NUMR_DEVICE``, else cpu."""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import numr_array as xp

DEVICE = os.environ.get("NUMR_TEST_DEVICE", os.environ.get("NUMR_DEVICE", "cpu"))

#: the WebGPU adapter features a dtype needs (numr's float64 kernels also compute in 64-bit integers)
FEATURES = {"float64": ("shader-f64", "shader-int64"), "complex128": ("shader-f64", "shader-int64"),
            "int64": ("shader-int64",), "uint64": ("shader-int64",)}


def dtypes(device=DEVICE, kind=None) -> list:
    """The dtypes ``device`` supports (of ``kind``, as ``info.dtypes`` takes it), in the standard's order."""
    return list(xp.__array_namespace_info__().dtypes(device=device, kind=kind).values())


def defaults(device=DEVICE) -> dict:
    """``device``'s default dtypes, keyed "real floating", "complex floating", "integral", "indexing"."""
    return xp.__array_namespace_info__().default_dtypes(device=device)


def missing(*features: str, device=DEVICE) -> str | None:
    """A skip reason naming the first of the adapter ``features`` that ``device`` lacks, or None when it
    has them all (CPU and CUDA devices have every dtype: they lack none)."""
    client = xp._device.parse_device(device).client
    have = getattr(client, "features", None)
    if have is None:
        return None
    for f in features:
        if f not in have:
            name = client.adapter.info.get("device", "?")
            return f"needs {f}: adapter {name!r} lacks it"
    return None


def needs(*features: str, device=DEVICE) -> None:
    """Skip the test unless ``device`` has every one of ``features`` (the reason names the missing one)."""
    __tracebackhide__ = True  # (the skip reports the test's line, not this one)
    reason = missing(*features, device=device)
    if reason:
        pytest.skip(reason)


def missing_dtype(*dtypes_, device=DEVICE) -> str | None:
    """A skip reason naming the feature the first of ``dtypes_`` that ``device`` lacks needs, or None."""
    have = dtypes(device)
    for d in dtypes_:
        if d not in have:
            return missing(*FEATURES[d.name], device=device) or f"device {device} has no {d.name}"
    return None


def needs_dtype(*dtypes_, device=DEVICE) -> None:
    """Skip the test unless ``device`` supports every one of ``dtypes_``, naming the feature it needs."""
    __tracebackhide__ = True
    reason = missing_dtype(*dtypes_, device=device)
    if reason:
        pytest.skip(reason)


def device_dtype(dtype, device=DEVICE):
    """The dtype ``device`` gives where the CPU gives ``dtype`` (anything np.dtype takes): the default
    integer dtypes int64 and uint64 (of indices, counts, integer sums) are int32 and uint32 on an adapter
    without shader-int64."""
    dtype = np.dtype(dtype)
    if dtype in (xp.int64, xp.uint64) and dtype not in dtypes(device):
        return xp.int32 if dtype == xp.int64 else xp.uint32
    return dtype


def supported_promotion(d1, d2, device=DEVICE) -> bool:
    """Whether ``device`` supports the promoted dtype of ``d1`` and ``d2`` (int8 with uint32 promote to
    int64: a TypeError without shader-int64)."""
    return xp.result_type(d1, d2) in dtypes(device)


def device_data(a: np.ndarray, device=DEVICE) -> np.ndarray:
    """NumPy data ``a`` in the dtype ``device`` holds it in: where the device lacks ``a``'s dtype (float64,
    complex128, int64 or uint64 without shader-f64/shader-int64), its default dtype of that kind (uint32
    for uint64); otherwise ``a`` itself."""
    if a.dtype not in (np.float64, np.complex128, np.int64, np.uint64):
        return a
    dtype = xp._dtypes.from_numpy(a.dtype)
    if dtype in dtypes(device):
        return a
    if dtype == xp.uint64:
        return a.astype(np.uint32)
    kind = {"i": "integral", "f": "real floating", "c": "complex floating"}[a.dtype.kind]
    return a.astype(defaults(device)[kind])


#: the functions whose float32 (and complex64) results numr computes through float64 to a few ulp; on an
#: adapter without shader-f64 they are the WGSL builtins, whose accuracy and special values are the
#: driver's (docs/devices.md, "Accuracy")
LIBM = frozenset({"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
                  "log1p", "log2", "log10", "sin", "sinh", "tan", "tanh", "pow", "atan2", "logaddexp"})


def missing_libm(name: str, device=DEVICE) -> str | None:
    """A skip reason for a few-ulp (or special-value) check of float32 function ``name`` where ``device``
    leaves it to the driver's WGSL builtin, or None."""
    reason = missing("shader-f64", "shader-int64", device=device) if name in LIBM else None
    return reason and (f"{reason} (float32 {name} is computed in float64 to a few ulp; without it, the WGSL "
                       "builtin's accuracy and special values are the driver's)")


def needs_libm(name: str, device=DEVICE) -> None:
    """Skip a few-ulp check of float32 ``name`` where ``device`` leaves it to the driver's builtin."""
    __tracebackhide__ = True
    reason = missing_libm(name, device=device)
    if reason:
        pytest.skip(reason)


def flushes_subnormals(device=DEVICE) -> bool:
    """Whether ``device``'s float32 arithmetic flushes subnormals to zero (a WebGPU adapter's probe,
    ``flushes_f32_subnormals``; CPU and CUDA devices keep them)."""
    return bool(getattr(xp._device.parse_device(device).client, "flushes_f32_subnormals", False))


def flush(a: np.ndarray) -> np.ndarray:
    """``a`` with its float32 subnormals (real and imaginary parts of complex64) flushed to zeros of the
    same sign; other dtypes unchanged."""
    a = np.asarray(a)
    if a.dtype == np.complex64:  # part by part: re + 1j * im would turn an infinite part into NaN
        out = np.empty_like(a)
        out.real, out.imag = flush(a.real.copy()), flush(a.imag.copy())
        return out
    if a.dtype != np.float32:
        return a
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(a) < np.finfo(np.float32).tiny, np.copysign(np.float32(0), a), a).astype(a.dtype)


#: the float32 (and complex64) functions that an adapter with float64 computes through it, reading float32
#: operands from their bits and writing results as bits: they keep subnormals even where the adapter's
#: float32 arithmetic flushes them (docs/devices.md, "Subnormals")
SUBNORMAL_EXACT = {"float32": (LIBM - {"logaddexp"}) | {"divide", "reciprocal", "floor_divide", "remainder"},
                   "complex64": frozenset({"abs", "sign", "exp", "log", "sqrt", "sin", "cos", "sinh", "cosh", "tanh",
                                           "tan", "expm1", "log1p", "asinh", "asin", "acos", "acosh", "atanh",
                                           "atan", "pow"})}


#: the float functions computed on the bits alone (compared as integers, chosen as bits): exact everywhere;
#: real ``sign`` builds its result from the operand's bits (sign(1e-45) is 1 on a flushing adapter too)
ON_THE_BITS = frozenset({"maximum", "minimum"})
REAL_ON_THE_BITS = frozenset({"sign"})

#: complex64 functions computed in complex128 from the operands' bits, their result then scaled in complex64
#: arithmetic: subnormal operands are kept, a subnormal result may be flushed
KEEP_OPERANDS = {"complex64": frozenset({"log2", "log10"})}

#: complex64 functions whose float32 arithmetic mixes steps on the bits (|part|, comparisons of them) with
#: divisions the driver may or may not flush: each part of the result is that of the flushed operands or
#: that of the exact ones (the H200: (0 + inf j) / (1 + 1e-40j) gave the exact answer)
EITHER = {"complex64": frozenset({"divide", "reciprocal"})}


def flushes_in(name: str, rdtype, flushes: bool, has_f64: bool) -> str:
    """How element-wise function ``name``, computed in ``rdtype``, treats float32 subnormals on a device that
    flushes them (``flushes``): "" exactly (the functions it computes through float64, ``has_f64``:
    SUBNORMAL_EXACT; those on the bits; those whose result is float64 or complex128, their float32 operands
    widened from the bits), "results" (KEEP_OPERANDS), "either" (EITHER), else "all": operands and
    results flushed."""
    if not flushes or name in ON_THE_BITS or (name in REAL_ON_THE_BITS and rdtype.kind == "f"):
        return ""
    if has_f64 and rdtype.name in ("float64", "complex128"):
        return ""  # float32 operands are widened from their bits (subnormals kept), float64 is not flushed
    if has_f64 and name in SUBNORMAL_EXACT.get(rdtype.name, ()):
        return ""
    if has_f64 and name in KEEP_OPERANDS.get(rdtype.name, ()):
        return "results"
    if name in EITHER.get(rdtype.name, ()):
        return "either"
    return "all"


def flushed_reference(reference, arrays: list, flushing) -> tuple:
    """(the reference of ``arrays``, a function to apply to the device's result before comparing them), by
    the mode :func:`flushes_in` gives (True: "all"): "all", the reference of the operands with their
    float32/complex64 subnormals flushed, and subnormal results of either side counted as zeros;
    "results", the plain reference with subnormal results counted as zeros; "either", the "all" reference,
    with each part of the device's result that is the plain reference's (within 1e-5) counted as the
    flushed one's; "" (or False), the plain reference and the identity."""
    mode = "all" if flushing is True else (flushing or "")
    if not mode:
        return reference(arrays), lambda r: r
    if mode == "results":
        return flush(reference(arrays)), flush
    flushed = flush(reference([None if a is None else flush(a) for a in arrays]))
    if mode == "all":
        return flushed, flush
    exact = np.asarray(reference(arrays))

    def as_compared(r):
        r = np.array(flush(r))
        parts = (np.real, np.imag) if r.dtype.kind == "c" else (lambda v: v,)
        for k, part in enumerate(parts):
            got, e, f = part(r), part(flush(exact)), part(flushed)
            same = np.isclose(got, e, rtol=1e-5, atol=0, equal_nan=True) & (np.signbit(got) == np.signbit(e))
            if r.dtype.kind == "c":
                (r.real if k == 0 else r.imag)[same] = f[same]
            else:
                r[same] = f[same]
        return r
    return flushed, as_compared


def exact_p_norm(values, p: float) -> float:
    """sum(|v|**p)**(1/p) of the (real or complex) ``values`` for a real p (not 0 or +-inf), computed in
    decimal with enough digits that the result is right to float64 precision for any p, however small
    (NumPy's direct formula is not: it gives 1.0 for [1.25] and p = 1e-300). NaN propagates; 0**p is inf
    for p < 0 and inf**p is 0, as in the direct formula."""
    from decimal import Decimal, localcontext

    mags = [abs(complex(v)) for v in np.asarray(values).reshape(-1)]
    if any(math.isnan(v) for v in mags):
        return math.nan
    if p > 0 and math.inf in mags:
        return math.inf
    if p < 0 and 0.0 in mags:
        return 0.0
    terms = [v for v in mags if v not in (0.0, math.inf)]
    if not terms:  # a sum of zeros: 0**(1/p)
        return 0.0 if p > 0 else math.inf
    with localcontext() as ctx:
        # v**p is 1 + p*log(v) + ...: digits enough for p*log(v) to count, and 40 more
        ctx.prec = 40 + max(0, -math.floor(math.log10(abs(p))))
        ctx.Emax, ctx.Emin = 10 ** 6, -10 ** 6
        dp = Decimal(p)
        logs = [Decimal(v).ln() * dp for v in terms]  # log(v**p), summed as exponentials scaled by the largest
        top = max(logs)
        log_norm = (top + sum((t - top).exp() for t in logs if t - top > -10 ** 5).ln()) / dp
        if log_norm > 710:
            return math.inf
        if log_norm < -746:
            return 0.0
        return float(log_norm.exp())


#: (values, ord) pairs for vector_norm's general orders: tiny orders of both signs (where the direct formula
#: sum(|x|**p)**(1/p) loses every digit), zeros, infinities, NaN, ties, n > 1, results near the dtype's limits
P_NORM_CASES = [(v, p) for p in (2.2e-16, -2.2e-16, 1e-300, -1e-300, 5e-324, 1e-10, -1e-10, 0.01, -0.01, 0.5, -0.5,
                                 1.5, 3.0, -3.0, 40.0, -40.0, 1e300, -1e300)
                for v in ([1.25], [-1.25], [3.0, 4.0], [0.0, 1.25], [1.25, 0.0, -1.25], [0.0, 0.0], [1.0, math.inf],
                          [math.inf, -math.inf], [1.0, math.nan], [0.1, 0.2, 0.3, 0.4, 5.0, 6.0, 7.0], [3e30, 4e30],
                          [3e-30, 4e-30])]


def python_calls(fn) -> list[str]:
    """The names of the Python functions ``fn()`` calls (its own frame aside): which calls a compiled path
    served (none of the Python path's functions appear)."""
    names: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            names.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return names[1:]
