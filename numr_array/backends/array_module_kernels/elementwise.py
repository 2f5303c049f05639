"""One kernel per row of the element-wise table (numr_array.kernels.OPS).

Most rows are the array module's ufunc of the same meaning; the rest are written out below, where the
ufunc's answer is not the standard's (special cases of floor_divide, complex expm1, tanh, log2 and
log10, reciprocal of complex zero) or where the ufunc would raise (integer pow with negative exponents).
"""

from __future__ import annotations

import math

# table name -> the array module's ufunc of the same meaning
UFUNCS = {
    "abs": "absolute", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
    "atan": "arctan", "atanh": "arctanh", "cos": "cos", "cosh": "cosh", "exp": "exp",
    "log": "log", "log1p": "log1p", "sin": "sin", "sinh": "sinh",
    "sqrt": "sqrt", "tan": "tan", "bitwise_invert": "invert", "conj": "conjugate",
    "isfinite": "isfinite", "isinf": "isinf", "isnan": "isnan", "logical_not": "logical_not",
    "negative": "negative", "positive": "positive", "sign": "sign",
    "signbit": "signbit", "square": "square",
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "true_divide",
    "remainder": "remainder", "maximum": "maximum", "minimum": "minimum",
    "atan2": "arctan2", "copysign": "copysign", "hypot": "hypot", "logaddexp": "logaddexp",
    "nextafter": "nextafter", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor", "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "equal": "equal", "not_equal": "not_equal", "greater": "greater", "greater_equal": "greater_equal",
    "less": "less", "less_equal": "less_equal",
}


def kernels(m) -> dict:
    ufunc = _numpy_ufunc(m) if m.__name__ == "numpy" else _ufunc
    k = {name: ufunc(getattr(m, ufunc_name)) for name, ufunc_name in UFUNCS.items()}
    for name in ("ceil", "floor", "trunc", "round"):
        k[name] = _rounding(m, getattr(m, {"round": "rint"}.get(name, name)))

    def real(ins, outs, p):
        m.copyto(outs[0], m.real(ins[0]))

    def imag(ins, outs, p):
        m.copyto(outs[0], m.imag(ins[0]))

    def clip(ins, outs, p):
        x, lo, hi = ins
        o = outs[0]
        if lo is None and hi is None:
            m.copyto(o, x)
        elif hi is None:
            m.maximum(x, lo, out=o, casting="unsafe")
        elif lo is None:
            m.minimum(x, hi, out=o, casting="unsafe")
        else:
            m.minimum(m.maximum(x, lo), hi, out=o, casting="unsafe")

    def reciprocal(ins, outs, p):
        # the standard defines reciprocal as 1.0 / x; the array module's reciprocal of complex 0 differs
        m.true_divide(1, ins[0], out=outs[0])

    def floor_divide(ins, outs, p):
        x1, x2 = ins
        o = outs[0]
        if o.dtype.kind != "f":
            m.floor_divide(x1, x2, out=o)
            return
        # Where an infinity is involved the standard prefers floor(x1 / x2) (+-inf, +-0) to the NaN or -1.0
        # of Python's (and the array module's) x1 // x2. Both are computed before o is written: o may be x1.
        inf = m.isinf(x1) | m.isinf(x2)
        fix = m.floor(m.true_divide(x1, x2))
        m.floor_divide(x1, x2, out=o)
        m.copyto(o, fix, where=inf)

    power = ufunc(m.power)

    def pow_(ins, outs, p):
        x1, x2 = ins
        o = outs[0]
        if o.dtype.kind == "f" and type(x2) is not m.ndarray and x2 == 2:
            # x ** 2 as NumPy's own operator computes it (its fast scalar power): a square, a third of the
            # time of the general power loop
            m.square(x1, out=o)
            return
        if o.dtype.kind != "i":
            power(ins, outs, p)
            return
        # Negative integer exponents (the standard leaves them unspecified) would make the array module
        # raise from inside a launch; give the truncated quotient instead: 1 for 1, +-1 for -1, else 0.
        # Everything is computed before o is written: o may be x1 or x2.
        neg = x2 < 0
        inverse = m.where(x1 == 1, 1, m.where(x1 == -1, 1 - 2 * (x2 & 1), 0))
        m.power(x1, m.where(neg, 0, x2), out=o, casting="unsafe")
        m.copyto(o, inverse, where=neg, casting="unsafe")

    def expm1(ins, outs, p):
        x = ins[0]
        o = outs[0]
        if x.dtype.kind != "c":
            m.expm1(x, out=o)
            return
        # exp(a)cis(b) - 1 without cancellation for small |z|, and the standard's special cases, which the
        # array module's complex expm1 misses (expm1(inf+0j) = inf+0j, expm1(-inf+nanj) = -1+0j, ...).
        # Everything is computed before o is written: o may be x.
        a, b = m.real(x), m.imag(x)
        half_sin = m.sin(b / 2)
        # (+ 0.0 turns the -0 of expm1(-0 + 0j) into the standard's +0)
        re = m.expm1(a) * m.cos(b) - 2 * half_sin * half_sin + 0.0
        im = m.where(b == 0, b, m.exp(a) * m.sin(b))
        b_nonfinite = ~m.isfinite(b)
        neg_inf = (a == -m.inf) & b_nonfinite  # -1 + 0j
        pos_inf = (a == m.inf) & b_nonfinite  # inf + NaN j
        m.copyto(o.real, m.where(neg_inf, -1, m.where(pos_inf, m.inf, re)))
        m.copyto(o.imag, m.where(neg_inf, 0, m.where(pos_inf, m.nan, im)))

    def tanh(ins, outs, p):
        x = ins[0]
        o = outs[0]
        if x.dtype.kind != "c":
            m.tanh(x, out=o)
            return
        # tanh(+-inf + bj) is +-1 +- 0j, the zero taking b's sign (the standard; C gives it sin(2b)'s sign).
        # The fix-up is computed before o is written: o may be x.
        a, b = m.real(x), m.imag(x)
        inf = m.isinf(a)
        one = m.copysign(m.ones_like(a), a)
        zero = m.copysign(m.zeros_like(b), b)
        m.tanh(x, out=o)
        m.copyto(o.real, one, where=inf)
        m.copyto(o.imag, zero, where=inf)

    def log_base(real_log, scale: float):
        def kernel(ins, outs, p):
            x = ins[0]
            o = outs[0]
            if x.dtype.kind != "c":
                real_log(x, out=o)
                return
            # log(z) / ln(base) part by part: a complex division by ln(base) (CuPy's way) turns
            # log(0) = -inf + 0j into -inf + NaN j. log(z) is computed before o is written: o may be x.
            ln = m.log(x)
            m.multiply(m.real(ln), scale, out=o.real)
            m.multiply(m.imag(ln), scale, out=o.imag)
        return kernel

    k.update(real=real, imag=imag, clip=clip, reciprocal=reciprocal, floor_divide=floor_divide, pow=pow_,
             expm1=expm1, tanh=tanh, log2=log_base(m.log2, 1 / math.log(2)),
             log10=log_base(m.log10, 1 / math.log(10)))

    def complex_fixed(name: str, fixup):
        """``name``'s kernel: the ufunc kernel for real dtypes (a fresh result where o overlaps x); for complex
        ones the array module's result in a temporary, corrected by ``fixup(x, r)`` where it is wrong, then
        copied to o (computed before o is written: o may be x)."""
        real_kernel, f = k[name], getattr(m, name)

        def kernel(ins, outs, p):
            x = ins[0]
            if x.dtype.kind != "c":
                real_kernel(ins, outs, p)
                return
            r = m.empty(x.shape, x.dtype)
            f(x, out=r)
            fixup(x, r)
            m.copyto(outs[0], r)
        return kernel

    def fix_log1p(x, r):
        # log|1 + z| where |1 + z| overflows but z is finite is finite (the array module's is inf): the log of
        # the larger part plus that of the rest, as the CUDA and WebGPU kernels compute it
        a, b = m.abs(m.real(x) + 1), m.abs(m.imag(x))
        big = m.isposinf(m.real(r)) & m.isfinite(a) & m.isfinite(b)
        if big.any():
            hi, lo = m.maximum(a[big], b[big]), m.minimum(a[big], b[big])
            q = lo / hi
            r.real[big] = m.log(hi) + 0.5 * m.log1p(q * q)

    def fix_sign(x, r):
        # z / |z| with the parts scaled by a power of two first where |z| would overflow or lose bits as a
        # subnormal (NumPy's complex64 sign(2.4e38 + 2.4e38j) is 1j, its complex128 sign(5e-324 + 5e-324j)
        # 1 + 1j)
        big = m.maximum(m.abs(m.real(x)), m.abs(m.imag(x)))
        bits = 63 if x.dtype == m.complex64 else 511
        fix = m.isfinite(big) & (big > 0) & ((big < 2.0 ** -bits) | (big > 2.0 ** bits))
        if fix.any():
            e = m.frexp(big[fix])[1]
            re, im = m.ldexp(m.real(x)[fix], -e), m.ldexp(m.imag(x)[fix], -e)
            h = m.hypot(re, im)
            r.real[fix], r.imag[fix] = re / h, im / h

    if m.__name__ == "numpy":  # (CuPy's log1p and sign are numr's own kernels: backends/cuda/_cupy_module.py)
        k.update(log1p=complex_fixed("log1p", fix_log1p), sign=complex_fixed("sign", fix_sign))
    return k


def _ufunc(f):
    def kernel(ins, outs, p):
        f(*ins, out=outs[0])
    kernel.ufunc = f  # a client may call the ufunc itself (CpuClient.bind), one frame fewer per launch
    return kernel


def _numpy_ufunc(m):
    """_ufunc for NumPy, whose inner loop depends on the result's layout. A result that overlaps an input
    and is not C-contiguous (a reversed or strided x in x op= y) or is one complex element makes NumPy
    pick another loop than for a fresh result: the iterator flips axes whose strides are all negative,
    and runs one overlapping element with zero strides, which the SIMD loops refuse for scalar ones
    (libm instead of SIMD power and transcendentals; no fused multiply-add in complex multiply and
    square). x op= y would not give the bits of x op y, so such a result is computed fresh and copied.
    A C-contiguous in-place result of several elements takes the out-of-place loop and is written directly;
    so is one real element, whose SIMD and scalar loops round alike."""
    def wrap(f):
        def kernel(ins, outs, p):
            o = outs[0]
            if (not o.flags.c_contiguous or o.size == 1 and o.dtype.kind == "c") and any(
                    type(x) is m.ndarray and m.may_share_memory(x, o) for x in ins):
                r = m.empty(o.shape, o.dtype)
                f(*ins, out=r)
                m.copyto(o, r)
            else:
                f(*ins, out=o)
        kernel.fresh_ufunc = f  # what the kernel is into a fresh result (CpuClient.ufunc_launch)
        return kernel
    return wrap


def _rounding(m, f):
    """ceil/floor/trunc/round: integers and bools are their own result; complex rounds each part."""
    def kernel(ins, outs, p):
        x = ins[0]
        if x.dtype.kind in "biu":
            m.copyto(outs[0], x)
        else:
            f(x, out=outs[0])
    return kernel
