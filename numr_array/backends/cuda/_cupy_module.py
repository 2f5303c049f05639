"""The array module the shared NumPy-API kernels are bound to on CUDA: CuPy, with its matrix products
routed through a client's capturable cuBLAS handle, its linear algebra raising as NumPy's does, and the
few functions whose CuPy results differ from NumPy's (and so from the CPU backend's) replaced.

The kernels in ``backends/array_module_kernels`` are written against ``m``; giving them this module instead of
``cupy`` itself makes every kernel that multiplies matrices (matmul, tensordot, vecdot, matrix_power,
pinv, ...) capturable, and every kernel that divides or takes a minimum agree with the CPU, without each
kernel knowing about CUDA.
"""

from __future__ import annotations

import types

import numpy as np

from ._blas import matmul_into


class _CupyModule(types.ModuleType):
    """A module object with CuPy's namespace, a few functions replaced; anything else falls through to CuPy."""

    def __getattr__(self, name):
        return getattr(self._cupy, name)


def _axes_pair(a_ndim: int, axes) -> tuple[list[int], list[int]]:
    if isinstance(axes, int):
        return list(range(a_ndim - axes, a_ndim)), list(range(axes))
    xa, xb = axes
    xa = [xa] if isinstance(xa, int) else list(xa)
    xb = [xb] if isinstance(xb, int) else list(xb)
    return xa, xb


def make_module(cupy, blas_of) -> types.ModuleType:
    """CuPy with capturable matmul/dot/tensordot/inner/vdot/vecdot; ``blas_of()`` gives the client's Cublas."""
    import cupyx

    m = _CupyModule("numr_array.backends.cuda.cupy")
    m._cupy = cupy
    m.__dict__.update({k: v for k, v in vars(cupy).items() if not k.startswith("__")})

    def floating(dtype) -> bool:
        return dtype.kind in "fc"

    def matmul(a, b, out=None, **kwargs):
        dtype = np.result_type(a.dtype, b.dtype)
        if kwargs or not floating(dtype) or a.ndim == 0 or b.ndim == 0:
            return cupy.matmul(a, b, out=out, **kwargs)  # integer products: CuPy's own kernels, no cuBLAS
        if out is None:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            shape = batch + a.shape[-2:-1] * (a.ndim > 1) + b.shape[-1:] * (b.ndim > 1)
            out = cupy.empty(shape, dtype)
        elif a.shape[-1] != (b.shape[0] if b.ndim == 1 else b.shape[-2]):
            return cupy.matmul(a, b, out=out)  # let CuPy raise its own shape error
        matmul_into(cupy, blas_of(), a, b, out)
        return out

    def tensordot(a, b, axes=2):
        dtype = np.result_type(a.dtype, b.dtype)
        if not floating(dtype):
            return cupy.tensordot(a, b, axes)
        xa, xb = _axes_pair(a.ndim, axes)
        xa = [x % a.ndim for x in xa] if a.ndim else xa
        xb = [x % b.ndim for x in xb] if b.ndim else xb
        free_a = [i for i in range(a.ndim) if i not in xa]
        free_b = [i for i in range(b.ndim) if i not in xb]
        shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
        k = int(np.prod([a.shape[i] for i in xa]))
        at = a.transpose(free_a + xa).reshape(int(np.prod([a.shape[i] for i in free_a])), k)
        bt = b.transpose(xb + free_b).reshape(k, int(np.prod([b.shape[i] for i in free_b])))
        return matmul(at, bt).reshape(shape)

    def dot(a, b, out=None):
        if a.ndim == 0 or b.ndim == 0:
            r = cupy.multiply(a, b)
        elif b.ndim == 1:
            r = tensordot(a, b, ([a.ndim - 1], [0]))
        else:
            r = tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))
        if out is None:
            return r
        cupy.copyto(out, r, casting="unsafe")
        return out

    def inner(a, b):
        if a.ndim == 0 or b.ndim == 0:
            return cupy.multiply(a, b)
        return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))

    def vdot(a, b):
        a = a.ravel()
        return cupy.sum(cupy.conj(a) * b.ravel() if a.dtype.kind == "c" else a * b.ravel())

    def vecdot(x1, x2, /, *, axis=-1, out=None):
        p = (cupy.conj(x1) if x1.dtype.kind == "c" else x1) * x2
        return cupy.sum(p, axis=axis, out=out)

    m.matmul, m.tensordot, m.dot, m.inner, m.vdot, m.vecdot = matmul, tensordot, dot, inner, vdot, vecdot

    def amin(a, axis=None, out=None, keepdims=False, **kwargs):
        # CuPy 14 hands min's out= and dtype= to CUB in swapped order (a TypeError, or out left unwritten):
        # reduce into a new array, then copy into out
        r = cupy.amin(a, axis=axis, keepdims=keepdims, **kwargs)
        if out is None:
            return r
        cupy.copyto(out, r, casting="unsafe")
        return out

    def searchsorted(a, v, side="left", sorter=None):
        if isinstance(v, np.generic):  # CuPy takes Python scalars and arrays only: a 0-D array, made on the device
            v = cupy.full((), v, v.dtype)
        return cupy.searchsorted(a, v, side=side, sorter=sorter)

    def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        if retstep or axis or np.ndim(start) or np.ndim(stop) or not (
                np.iscomplexobj(start) or np.iscomplexobj(stop)):
            return cupy.linspace(start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
        # CuPy's linspace takes real endpoints only: part by part, in float64 as NumPy computes it
        start, stop = complex(start), complex(stop)
        out = cupy.empty(num, np.complex128 if dtype is None else dtype)
        cupy.copyto(out.real, cupy.linspace(start.real, stop.real, num, endpoint=endpoint, dtype=np.float64))
        cupy.copyto(out.imag, cupy.linspace(start.imag, stop.imag, num, endpoint=endpoint, dtype=np.float64))
        return out

    def repeat(a, repeats, axis=None):
        # a gather with the source positions computed on the host (the counts are host ints already):
        # CuPy's repeat with a list of counts turned +0.0 into -0.0
        if axis is None:
            a, axis = a.ravel(), 0
        src = np.repeat(np.arange(a.shape[axis]), repeats)
        return cupy.take(a, cupy.asarray(src), axis=axis)

    real = _numpy_real(cupy)
    divide, sign, log, log1p, tanh, tan, arccosh = _numpy_complex(cupy)
    hypot = real["hypot"]

    def absolute(a, out=None, **kwargs):
        if kwargs or a.dtype.kind != "c":
            return cupy.absolute(a, out=out, **kwargs)
        return hypot(a.real, a.imag, out=out)  # |z| below the largest float does not overflow (CuPy's did)

    m.absolute = m.abs = absolute
    m.repeat = repeat
    m.tanh, m.tan, m.arccosh, m.acosh = tanh, tan, arccosh, arccosh
    m.fft = _fft_module(cupy)
    m.linspace = linspace
    m.log, m.log1p = log, log1p
    m.amin = m.min = amin
    m.searchsorted = searchsorted
    m.floor_divide, m.remainder, m.mod = real["floor_divide"], real["remainder"], real["remainder"]
    m.minimum, m.maximum, m.hypot = real["minimum"], real["maximum"], real["hypot"]
    m.true_divide = m.divide = divide
    m.sign = sign
    m.linalg = _linalg_module(cupy, cupyx, matmul)
    return m


_DIVMOD = """
    T x = a, y = b;
    T mod = fmod(x, y);
    T div;
    if (y == (T)0) {
        div = x / y;
    } else {
        div = (x - mod) / y;
        if (mod != (T)0) {
            if ((y < (T)0) != (mod < (T)0)) {
                mod += y;
                div -= (T)1;
            }
        } else {
            mod = copysign((T)0, y);
        }
        if (div != (T)0) {
            T f = floor(div);
            div = (div - f > (T)0.5) ? f + (T)1 : f;
        } else {
            div = copysign((T)0, x / y);
        }
    }
"""


def _binary(cupy, fallback, kernel, kinds: str):
    """``fallback`` (a CuPy ufunc) with ``kernel`` (both operands in the result dtype) for result dtypes of
    ``kinds``; any keyword but ``out`` goes to the ufunc."""
    def f(a, b, out=None, **kwargs):
        dtype = out.dtype if out is not None else cupy.result_type(a, b)
        if kwargs or dtype.kind not in kinds:
            return fallback(a, b, out=out, **kwargs)
        if out is None:
            out = cupy.empty(np.broadcast_shapes(getattr(a, "shape", ()), getattr(b, "shape", ())), dtype)
        kernel(_as_type(cupy, a, dtype), _as_type(cupy, b, dtype), out)
        return out
    return f


def _numpy_real(cupy) -> dict:
    """floor_divide and remainder of real floating operands computed as NumPy's npy_divmod does (from fmod,
    so exact where the quotient is huge; CuPy computes floor(a / b) and a - floor(a / b) * b), and minimum
    and maximum that return the second operand of two equal ones (NumPy's -0/+0 choice; CuPy's differs),
    and hypot without overflow below the largest float."""
    def kernel(body, name):
        return cupy.ElementwiseKernel("T a, T b", "T q", body, name)
    return {
        "floor_divide": _binary(cupy, cupy.floor_divide, kernel(_DIVMOD + "q = div;", "numr_floor_divide"), "f"),
        "remainder": _binary(cupy, cupy.remainder, kernel(_DIVMOD + "q = mod;", "numr_remainder"), "f"),
        "minimum": _binary(cupy, cupy.minimum, kernel("q = (a < b || isnan(a)) ? a : b;", "numr_minimum"), "f"),
        "maximum": _binary(cupy, cupy.maximum, kernel("q = (a > b || isnan(a)) ? a : b;", "numr_maximum"), "f"),
        "hypot": _binary(cupy, cupy.hypot, kernel(_HYPOT, "numr_hypot"), "f"),
    }


# CUDA's hypot overflows for finite operands near the largest float (hypot(1, 1.8e308) is inf there)
_HYPOT = """
    q = hypot(a, b);
    if (isinf(q) && isfinite(a) && isfinite(b)) {
        T x = fabs(a), y = fabs(b), mx = fmax(x, y), r = fmin(x, y) / mx;
        q = mx * sqrt((T)1 + r * r);
    }
"""


_COMPLEX_DIVIDE = """
    typedef typename T::value_type R;
    R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    R abr = fabs(br), abi = fabs(bi);
    if (abr >= abi) {
        if (abr == (R)0 && abi == (R)0) {
            q = T(ar / abr, ai / abr);
        } else {
            R rat = bi / br, scl = (R)1 / (br + bi * rat);
            q = T((ar + ai * rat) * scl, (ai - ar * rat) * scl);
        }
    } else {
        R rat = br / bi, scl = (R)1 / (bi + br * rat);
        q = T((ar * rat + ai) * scl, (ai * rat - ar) * scl);
    }
"""

_COMPLEX_SIGN = """
    typedef typename T::value_type R;
    R re_ = a.real(), im_ = a.imag();  // (CuPy's kernels already name their loop index i)
    // parts scaled by a power of two (exactly) so that |z| neither overflows nor loses bits as a subnormal:
    // complex64 sign(2.4e38 + 2.4e38j) was 0, sign(1e-45 + 1e-45j) 1 + 1j
    R big = fmax(fabs(re_), fabs(im_));
    if (isfinite(big) && big > (R)0) {
        int e;
        frexp(big, &e);
        re_ = ldexp(re_, -e);
        im_ = ldexp(im_, -e);
    }
    R h = hypot(re_, im_);
    if (isnan(h)) {
        q = T(h, h);
    } else if (h == (R)0) {
        q = T((R)0, (R)0);
    } else if (isinf(h)) {
        R nan = h - h;
        q = (isinf(re_) && isinf(im_)) ? T(nan, nan)
            : T(isinf(re_) ? copysign((R)1, re_) : (R)0, isinf(im_) ? copysign((R)1, im_) : (R)0);
    } else {
        q = T(re_ / h, im_ / h);
    }
"""


# log|z| + i arg(z) of the complex (re_, im_) into q: through hypot, with a scaled formula where |z| is beyond
# the largest float (CUDA's hypot and so log|z| were inf for 1 + 1.8e308j), and one where both parts are
# subnormal: hypot's result keeps few significant bits there (complex64 log(4.2e-45 + 4.2e-45j) was
# -101.89 + 0.785j, NumPy's -101.83 + 0.785j); scaled by 2^64 in double they are normal, and log(2^64) is
# taken off in two parts (fdlibm's ln2_hi, whose multiples are exact, and ln2_lo)
_LOG_PARTS = """
    R h = hypot(re_, im_);  // inf with an infinite part, NaN with a NaN and no infinite one
    R lr = log(h);
    R big = fmax(fabs(re_), fabs(im_));
    if (isinf(h) && isfinite(re_) && isfinite(im_)) {  // log(max) + log of the rest
        R x = fabs(re_), y = fabs(im_), mx = fmax(x, y), r = fmin(x, y) / mx;
        lr = log(mx) + (R)0.5 * log1p(r * r);
    } else if (big > (R)0 && big < (R)(sizeof(R) == 4 ? 1.1754943508222875e-38 : 2.2250738585072014e-308)) {
        double hs = hypot((double)re_ * 18446744073709551616.0, (double)im_ * 18446744073709551616.0);
        lr = (R)((log(hs) - 44.361419543623924) - 1.2212575547331761e-08);
    }
    q = T(lr, atan2(im_, re_));
"""

_COMPLEX_LOG = """
    typedef typename T::value_type R;
    R re_ = a.real(), im_ = a.imag();
""" + _LOG_PARTS


# tanh of the complex (re_, im_) into t, with C99's +-0 + NaN j for a zero real part and a non-finite imaginary one
_TANH_PARTS = """
    T t = (re_ == (R)0 && !isfinite(im_)) ? T(re_, im_ - im_) : tanh(T(re_, im_));
"""

_COMPLEX_TANH = """
    typedef typename T::value_type R;
    R re_ = a.real(), im_ = a.imag();
""" + _TANH_PARTS + "    q = t;\n"

# tan(z) = -i tanh(i z) (CuPy's tan(inf + 0j) was NaN + NaN j; NumPy's is NaN + 0j)
_COMPLEX_TAN = """
    typedef typename T::value_type R;
    R re_ = -a.imag(), im_ = a.real();
""" + _TANH_PARTS + "    q = T(t.imag(), -t.real());\n"

_COMPLEX_ACOSH = """
    typedef typename T::value_type R;
    R re_ = a.real(), im_ = a.imag();
    q = (re_ == (R)0 && isnan(im_)) ? T(im_, (R)1.5707963267948966) : acosh(a);  // C99: NaN + i pi/2
"""

_COMPLEX_LOG1P = """
    typedef typename T::value_type R;
    R re_ = a.real() + (R)1, im_ = a.imag();
""" + _LOG_PARTS


def _numpy_complex(cupy):
    """Complex divide (Smith's algorithm, so that z / 0 is inf or NaN part by part), sign (z / hypot(z),
    without overflow, with the infinities' cases), log (log|z| through hypot + i arg(z): C99's special values,
    and no overflow; CuPy's log(inf + NaN j) is NaN + NaN j and its log(1 + 1.8e308j) inf), tanh (and tan through
    it) and acosh of a zero real part with a non-finite imaginary one (C99's +-0 + NaN j and NaN + i pi/2; CuPy
    gives NaN + NaN j) and log1p (log|1 + z| + i atan2, which keeps the sign of a
    zero imaginary part on the branch cut) computed as NumPy computes them; CuPy's complex division gives
    NaN + NaN j for z / 0, its sign overflows for |z| beyond about 1e154, and its log1p(-2 - 0j) is +pi j."""
    k_divide = cupy.ElementwiseKernel("T a, T b", "T q", _COMPLEX_DIVIDE, "numr_complex_divide")
    divide = _binary(cupy, cupy.true_divide, k_divide, "c")

    def unary(fallback, body, name):
        kernel = cupy.ElementwiseKernel("T a", "T q", body, name)

        def f(a, out=None, **kwargs):
            if kwargs or a.dtype.kind != "c":
                return fallback(a, out=out, **kwargs)
            return kernel(a, out) if out is not None else kernel(a)
        return f

    return (divide, unary(cupy.sign, _COMPLEX_SIGN, "numr_complex_sign"),
            unary(cupy.log, _COMPLEX_LOG, "numr_complex_log"),
            unary(cupy.log1p, _COMPLEX_LOG1P, "numr_complex_log1p"),
            unary(cupy.tanh, _COMPLEX_TANH, "numr_complex_tanh"),
            unary(cupy.tan, _COMPLEX_TAN, "numr_complex_tan"),
            unary(cupy.arccosh, _COMPLEX_ACOSH, "numr_complex_acosh"))


def _fft_module(cupy) -> types.ModuleType:
    """``cupy.fft`` whose n-D transforms take their axes in any order: CuPy paired ``s`` with the axes in
    another order (fftn(x, s=(5, 3), axes=(1, 0)) came out transposed). Axes in ascending order go to
    cuFFT's n-D plan; any other order is done as NumPy does it, one 1-D transform per axis, the last
    axis first (for the real transforms, the real one on the last axis given)."""
    f = _CupyModule("numr_array.backends.cuda.cupy.fft")
    f._cupy = fft = cupy.fft

    def ordered(nd, one_dim, inverse_real: bool, forward_real: bool):
        def call(a, s=None, axes=None, norm=None):
            if axes is None or s is None or all(x % a.ndim < y % a.ndim for x, y in zip(axes, axes[1:])):
                return nd(a, s=s, axes=axes, norm=norm)
            last = len(axes) - 1
            if forward_real:  # the real transform first, on the last axis
                a = fft.rfft(a, n=s[last], axis=axes[last], norm=norm)
                last -= 1
            for i in range(last - inverse_real, -1, -1):
                a = one_dim(a, n=s[i], axis=axes[i], norm=norm)
            if inverse_real:  # the real transform last, on the last axis
                a = fft.irfft(a, n=s[-1], axis=axes[-1], norm=norm)
            return a
        return call

    f.fftn, f.ifftn = ordered(fft.fftn, fft.fft, False, False), ordered(fft.ifftn, fft.ifft, False, False)
    f.rfftn = ordered(fft.rfftn, fft.fft, False, True)
    f.irfftn = ordered(fft.irfftn, fft.ifft, True, False)
    return f


def _as_type(cupy, x, dtype):
    """An operand in ``dtype`` for a kernel that takes all operands in the result dtype (a scalar as a NumPy
    scalar of it)."""
    if not isinstance(x, cupy.ndarray):
        return dtype.type(x)
    return x if x.dtype == dtype else x.astype(dtype)


def _linalg_module(cupy, cupyx, matmul) -> types.ModuleType:
    """``cupy.linalg`` whose routines raise LinAlgError (as NumPy's do) instead of returning NaNs."""
    la = _CupyModule("numr_array.backends.cuda.cupy.linalg")
    la._cupy = cupy.linalg

    def raising(f):
        def call(*args, **kwargs):
            with cupyx.errstate(linalg="raise"):
                return f(*args, **kwargs)
        call.__name__ = getattr(f, "__name__", "linalg")
        return call

    for name, f in vars(cupy.linalg).items():
        if not name.startswith("_") and callable(f) and not isinstance(f, type):
            setattr(la, name, raising(f))
    la.LinAlgError = np.linalg.LinAlgError
    la.matmul = matmul
    return la

