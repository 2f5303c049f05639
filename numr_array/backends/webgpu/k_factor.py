"""Factorisations of the linalg extension on the device: cholesky, det, slogdet, inv, solve and qr, with
matrix_power and the vector and matrix norms built on them and on the other families' kernels.

Each factorisation runs as a fixed sequence of dispatches, one or a few per column (LU with partial
pivoting, left-looking Cholesky, Householder QR with LAPACK's geqrf/orgqr conventions): each dispatch is
a map kernel over the batch and over the rows or columns that the step updates, so every invocation
loops over at most one dimension of its matrix. (A whole factorisation per invocation would be simpler,
but lavapipe's llvmpipe silently stops an invocation after 65535 loop iterations in all.) The matrices
are bound whole and addressed through their strides (``run_map``'s raw operands), so an operand larger
than the adapter's largest storage binding raises MemoryError; inputs that a factorisation overwrites are
first copied (and cast to the result dtype) into a contiguous temporary. The WGSL comes from one template
per step, generic over float32, float64, complex64 and complex128 through the scalar operations of
:class:`_Ops`. Performance is not tuned: the steps are neither blocked nor tiled. (The QR steps still
walk a column per invocation, 3M loop iterations: on lavapipe, matrices of more than 21845 rows are
beyond its limit, as are contractions over more than 65535 terms.)

Singular and not positive-definite matrices: NumPy raises LinAlgError; the device never reads its data
back to check (that would stall the queue and break capture), so results follow the GPU libraries'
convention (CuPy's default, without ``cupyx.errstate(linalg='raise')``): inv, solve and matrix_power with
n < 0 of an exactly singular matrix divide by the zero pivot (inf and NaN in the result); det is 0 and
slogdet (0, -inf) as on the CPU; cholesky writes NaN from the first column whose pivot is not positive
on. The ``linalg`` functions therefore raise no LinAlgError on this device.

matrix_norm with ord 2, -2 and 'nuc' launch the ``svdvals`` kernel (the eigen family's) into a
temporary.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._client import WebGPUClient
from ._map_template import MapCodegen, run_map
from ._types import WgslType, WGSL_TYPES, lit, wt
from .k_reduce import _temp, reduce

I32 = WGSL_TYPES[dt.int32]


class _Ops:
    """WGSL expressions of the scalar arithmetic of one float or complex compute type."""

    def __init__(self, g: MapCodegen, w: WgslType):
        self.lib = g.lib
        self.w = w
        self.cx = w.family == "c"
        self.r = w.real if self.cx else w  # the real type (norms, moduli)
        self.T, self.R = w.ct, self.r.ct
        self.zero, self.one = lit(w, 0), lit(w, 1)

    def fn(self, name: str, real: bool = False) -> str:
        return self.lib.fn(name, self.r if real else self.w)

    def mul(self, a: str, b: str) -> str:
        return f"{self.fn('cmul')}({a}, {b})" if self.cx else f"(({a}) * ({b}))"

    def div(self, a: str, b: str) -> str:
        return f"{self.fn('cdiv')}({a}, {b})" if self.cx else f"(({a}) / ({b}))"

    def conj(self, a: str) -> str:
        return f"{self.T}(({a}).x, -({a}).y)" if self.cx else a

    def re(self, a: str) -> str:
        return f"({a}).x" if self.cx else a

    def im(self, a: str) -> str:
        return f"({a}).y" if self.cx else f"{self.R}(0)"

    def of_real(self, r: str) -> str:
        return f"{self.T}({r}, {self.R}(0))" if self.cx else r

    def abs(self, a: str) -> str:
        return f"{self.fn('cabs')}({a})" if self.cx else f"{self.fn('fabs')}({a})"

    def abs1(self, a: str) -> str:
        """|re| + |im|: LAPACK's pivot magnitude (izamax)."""
        f = self.fn("fabs", True)
        return f"({f}(({a}).x) + {f}(({a}).y))" if self.cx else f"{f}({a})"

    def abs2(self, a: str) -> str:
        return f"dot({a}, {a})" if self.cx else f"(({a}) * ({a}))"

    def scale(self, a: str, r: str) -> str:
        """``a`` divided by the real ``r``."""
        return f"(({a}) / ({r}))"


class _Arr:
    """Raw operand j of a map body over the batch: this invocation's element offset in it (from the
    ``nb`` batch coordinates) and its trailing ``nd`` dimensions, addressed by index expressions (i32)."""

    def __init__(self, g: MapCodegen, j: int, nb: int, nd: int, name: str):
        self.g, self.j, self.name = g, j, name
        base = " + ".join([g.raw_offset(j)] + [f"i32({g.coord(d)}) * {g.raw_stride(j, d)}" for d in range(nb)])
        self.decl = f"  let {name}0 = {base};\n" + "".join(
            f"  let {name}s{k} = {g.raw_stride(j, nb + k)};\n" for k in range(nd))

    def at(self, *idx: str) -> str:
        return " + ".join([f"{self.name}0"] + [f"({i}) * {self.name}s{k}" for k, i in enumerate(idx)])

    def __call__(self, *idx: str) -> str:
        """The element at ``idx``."""
        return self.g.raw_load(self.j, self.at(*idx))

    def set(self, value: str, *idx: str) -> str:
        """The statement storing ``value`` at ``idx``."""
        return self.g.raw_store(self.j, self.at(*idx), value)


def _step(client: WebGPUClient, name: str, w: WgslType, batch: tuple[int, ...], extra: tuple[int, ...],
          arrays: list[tuple[Tensor, int, bool]], params: list[int], text: Callable[..., str], key=()) -> None:
    """One dispatch of step kernel ``name``: an invocation per batch entry and per index of ``extra``.
    ``arrays``: (tensor, trailing dimensions per matrix, written), passed to ``text`` as :class:`_Arr`
    after the :class:`_Ops` of ``w``; in the WGSL, ``P0``, ``P1``... are ``params`` and ``X0``, ``X1``...
    the indices along ``extra`` (i32). ``key``: whatever else changes ``text``'s output."""
    shape = batch + extra
    if not math.prod(shape):
        return
    nb = len(batch)

    def body(g: MapCodegen) -> str:
        arrs = [_Arr(g, j, nb, nd, f"m{j}_") for j, (_, nd, _) in enumerate(arrays)]
        return ("".join(a.decl for a in arrs)
                + "".join(f"  let P{k} = {g.param(k)};\n" for k in range(len(params)))
                + "".join(f"  let X{d} = i32({g.coord(nb + d)});\n" for d in range(len(extra)))
                + text(_Ops(g, w), *arrs))

    run_map(client, name, (key, w.dtype, nb), [], (), body, params=[(I32, v) for v in params], coords=True,
            raw=[(_bindable(client, t), written) for t, _, written in arrays], shape=shape)


def _compute_wt(client: WebGPUClient, name: str, dtype: dt.DType) -> WgslType:
    w = wt(dtype)
    if w.family not in "fc":
        raise NotImplementedError(f"{name}: {dtype.name} is not supported on {client.device}")
    return w


def _bindable(client: WebGPUClient, t: Tensor) -> Tensor:
    """``t``, or where it is empty (no step touches it) a 16-byte stand-in with t's shape."""
    if t.size:
        return t
    b = _temp(client, (1,), t._dtype)
    return Tensor(b._buf, t._dtype, t._shape, (0,) * len(t._shape), 0, client.device)


def _scratch(client: WebGPUClient, x: Tensor, dtype: dt.DType) -> Tensor:
    """A contiguous copy of ``x`` in ``dtype``, for a factorisation to overwrite."""
    s = _temp(client, x._shape, dtype)
    client.launch("copy", (x,), (s,), {})
    return s


def _fill(client: WebGPUClient, o: Tensor, value) -> None:
    client.launch("fill", (), (o,), {"value": o._dtype.np.type(value)})


def _identity(client: WebGPUClient, o: Tensor) -> None:
    """Each matrix of ``o`` (..., M, K) = the first K columns of the M x M identity."""
    eye = _temp(client, o._shape[-2:], o._dtype)
    client.launch("eye", (), (eye,), {"k": 0})
    nb = len(o._shape) - 2
    client.launch("copy", (Tensor(eye._buf, o._dtype, o._shape, (0,) * nb + eye._strides, 0, client.device),), (o,), {})


# --- LU with partial pivoting: det, slogdet, solve, inv --------------------------------------------

def _lu(client: WebGPUClient, name: str, a: Tensor, rhs: Tensor | None) -> Tensor:
    """LU-factor the contiguous scratch matrices ``a`` (..., N, N) in place (U in the upper triangle; the
    strictly lower part is left as it is, unused), applying the same row operations to ``rhs`` (..., N, K)
    when given; returns the sign of each row permutation (shaped like the batch, in a's dtype)."""
    w = _compute_wt(client, name, a._dtype)
    batch = a._shape[:-2]
    n = a._shape[-1]
    nr = rhs._shape[-1] if rhs is not None else 0
    piv = _temp(client, batch, dt.int32)
    sign = _temp(client, batch, a._dtype)
    with_rhs = rhs is not None

    def pivot(s: _Ops, A: _Arr, P: _Arr, D: _Arr) -> str:
        # the first row with the largest |.| in column k (LAPACK's i?amax); the permutation's sign
        return ("  let k = P1;\n  var p = k;\n"
                f"  var best = {s.abs1(A('k', 'k'))};\n"
                "  for (var r = k + 1; r < P0; r = r + 1) {\n"
                f"    let v = {s.abs1(A('r', 'k'))};\n"
                "    if (v > best) { best = v; p = r; }\n  }\n"
                + P.set("p") +
                f"  var d = {s.one};\n  if (k > 0) {{ d = {D()}; }}\n  if (p != k) {{ d = -d; }}\n" + D.set("d"))

    def swap(s: _Ops, A: _Arr, P: _Arr, B: _Arr | None = None) -> str:
        # rows k and p of [A | rhs], one column per invocation
        src = "  let k = P1;\n  let p = " + P() + ";\n  if (p == k) { return; }\n  let c = X0;\n"
        def rows(M: _Arr, c: str) -> str:
            return f"    let t = {M('k', c)};\n  {M.set(M('p', c), 'k', c)}  {M.set('t', 'p', c)}"

        src += "  if (c < P0) {\n" + rows(A, "c") + "    return;\n  }\n"
        if B is not None:
            src += "  let cb = c - P0;\n" + rows(B, "cb")
        return src

    def eliminate(s: _Ops, A: _Arr, B: _Arr | None = None) -> str:
        # row r -= (A[r, k] / A[k, k]) row k, one element per invocation; A[., k] below the diagonal is
        # only read (nothing reads it later). A zero pivot means an all-zero column: nothing to
        # eliminate (as LAPACK's getrf)
        src = ("  let k = P1;\n  let r = k + 1 + X0;\n"
               f"  let piv = {A('k', 'k')};\n"
               f"  if ({s.abs1('piv')} == {s.R}(0)) {{ return; }}\n"
               f"  let f = {s.div(A('r', 'k'), 'piv')};\n"
               "  let width = P0 - k - 1;\n"
               "  if (X1 < width) {\n    let c = k + 1 + X1;\n"
               f"  {A.set(A('r', 'c') + ' - ' + s.mul('f', A('k', 'c')), 'r', 'c')}    return;\n  }}\n")
        if B is not None:
            src += "  let c = X1 - width;\n" + B.set(B('r', 'c') + " - " + s.mul("f", B("k", "c")), "r", "c")
        return src

    rhs_arr = [(rhs, 2, True)] if with_rhs else []
    for k in range(n):
        _step(client, "lu_pivot", w, batch, (), [(a, 2, True), (piv, 0, True), (sign, 0, True)], [n, k], pivot)
        _step(client, "lu_swap", w, batch, (n + nr,), [(a, 2, True), (piv, 0, False)] + rhs_arr, [n, k], swap,
              key=with_rhs)
        _step(client, "lu_eliminate", w, batch, (n - k - 1, n - k - 1 + nr), [(a, 2, True)] + rhs_arr, [n, k],
              eliminate, key=with_rhs)
    if with_rhs:
        def back(s: _Ops, A: _Arr, B: _Arr) -> str:
            # row r of the solution, through U; rows below r are solved already
            return ("  let r = P1;\n  let c = X0;\n"
                    f"  var t = {B('r', 'c')};\n"
                    f"  for (var k = r + 1; k < P0; k = k + 1) {{ t = t - {s.mul(A('r', 'k'), B('k', 'c'))}; }}\n"
                    + B.set(s.div("t", A("r", "r")), "r", "c"))

        for r in range(n - 1, -1, -1):
            _step(client, "lu_back", w, batch, (nr,), [(a, 2, False), (rhs, 2, True)], [n, r], back)
    return sign


def _det(client, ins, outs, p):
    x, o = ins[0], outs[0]
    if x._shape[-1] == 0:
        _fill(client, o, 1)
        return
    a = _scratch(client, x, o._dtype)
    sign = _lu(client, "det", a, None)

    def det(s: _Ops, A: _Arr, D: _Arr, Det: _Arr) -> str:
        return (f"  var acc = {D()};\n"
                f"  for (var k = 0; k < P0; k = k + 1) {{ acc = {s.mul('acc', A('k', 'k'))}; }}\n" + Det.set("acc"))

    _step(client, "lu_det", wt(o._dtype), a._shape[:-2], (), [(a, 2, False), (sign, 0, False), (o, 0, True)],
          [x._shape[-1]], det)


def _slogdet(client, ins, outs, p):
    x = ins[0]
    sign, logabs = outs
    if x._shape[-1] == 0:
        _fill(client, sign, 1)
        _fill(client, logabs, 0)
        return
    a = _scratch(client, x, sign._dtype)
    perm = _lu(client, "slogdet", a, None)

    def slogdet(s: _Ops, A: _Arr, D: _Arr, S: _Arr, L: _Arr) -> str:
        # sign: the permutation's times each pivot's phase; a zero pivot gives exactly (0, -inf), as NumPy
        return (f"  var sgn = {D()};\n  var la = {s.R}(0);\n  var singular = false;\n"
                "  for (var k = 0; k < P0; k = k + 1) {\n"
                f"    let piv = {A('k', 'k')};\n    let ap = {s.abs('piv')};\n"
                f"    if (ap == {s.R}(0)) {{ singular = true; }}\n"
                f"    sgn = {s.mul('sgn', s.scale('piv', 'ap'))};\n"
                f"    la = la + {s.fn('log', True)}(ap);\n  }}\n"
                f"  if (singular) {{ sgn = {s.zero}; la = -{s.fn('inf', True)}(); }}\n" + S.set("sgn") + L.set("la"))

    _step(client, "lu_slogdet", wt(sign._dtype), a._shape[:-2], (),
          [(a, 2, False), (perm, 0, False), (sign, 0, True), (logabs, 0, True)], [x._shape[-1]], slogdet)


def _solve(client, ins, outs, p):
    a, b = ins
    o = outs[0]
    client.launch("copy", (b,), (o,), {})
    _lu(client, "solve", _scratch(client, a, o._dtype), o)


def _inv(client, ins, outs, p):
    o = outs[0]
    a = _scratch(client, ins[0], o._dtype)
    _identity(client, o)
    _lu(client, "inv", a, o)


# --- Cholesky ---------------------------------------------------------------------------------------

def _cholesky(client, ins, outs, p):
    x, o = ins[0], outs[0]
    w = _compute_wt(client, "cholesky", o._dtype)
    upper = bool(p["upper"])
    n = x._shape[-1]

    def column(s: _Ops, X: _Arr, F: _Arr) -> str:
        # column j of the lower factor L, one row per invocation, from x's lower triangle and L's columns
        # before j; upper=True stores L's adjoint, so L[r, c] is conj(o[c, r])
        def L(r, c):
            return s.conj(F(c, r)) if upper else F(r, c)

        def set_l(v, r, c):
            return F.set(s.conj(v), c, r) if upper else F.set(v, r, c)

        return ("  let j = P1;\n  let r = X0;\n"
                f"  if (r < j) {{\n  {set_l(s.zero, 'r', 'j')}    return;\n  }}\n"
                f"  var d = {s.re(X('j', 'j'))};\n"
                f"  for (var k = 0; k < j; k = k + 1) {{ d = d - {s.abs2(L('j', 'k'))}; }}\n"
                # not positive-definite (or NaN): NaN from this column on, the GPU convention
                f"  if (d <= {s.R}(0) || {s.fn('isnan', True)}(d)) {{ d = {s.fn('nan', True)}(); }}\n"
                f"  d = {s.fn('sqrt', True)}(d);\n"
                f"  if (r == j) {{\n  {set_l(s.of_real('d'), 'j', 'j')}    return;\n  }}\n"
                f"  var t = {X('r', 'j')};\n"
                f"  for (var k = 0; k < j; k = k + 1) {{ t = t - {s.mul(L('r', 'k'), s.conj(L('j', 'k')))}; }}\n"
                + set_l(s.scale("t", "d"), "r", "j"))

    for j in range(n):
        _step(client, "cholesky", w, x._shape[:-2], (n,), [(x, 2, False), (o, 2, True)], [n, j], column, key=upper)


# --- Householder QR ---------------------------------------------------------------------------------

def _qr(client, ins, outs, p):
    x = ins[0]
    q, r = outs
    w = _compute_wt(client, "qr", q._dtype)
    batch = x._shape[:-2]
    m, n = x._shape[-2:]
    k = min(m, n)
    kq, kr = q._shape[-1], r._shape[-2]
    a = _scratch(client, x, q._dtype)
    tau = _temp(client, batch + (k,), q._dtype)

    def reflector(s: _Ops, A: _Arr, TAU: _Arr) -> str:
        # H = I - tau v v^H with v = (1, x / (alpha - beta)) maps column j's (alpha, x) to (beta, 0), beta
        # real (LAPACK's larfg); v is kept below the diagonal of A
        R = s.R
        fabs, sqrt = s.fn("fabs", True), s.fn("sqrt", True)
        has_im = f" || {s.im('alpha')} != {R}(0)" if s.cx else ""
        tau_expr = f"{s.T}((beta - ar) / beta, -({s.im('alpha')}) / beta)" if s.cx else "(beta - ar) / beta"
        # a column below LAPACK's safe minimum is scaled up by a power of two first (exact; LAPACK's larfg
        # rescales likewise): with subnormal entries, norm, beta and v would lose their bits to underflow
        scale, tiny = ("1.0715086071862673e+301", "1.1830521861667747e-271") if R == "f64" else \
            ("1.152921504606847e+18", "8.077935669463161e-28")
        sc = s.of_real("sc")
        return ("  let M = P0;\n  let j = P2;\n"
                f"  var mx = {R}(0);\n"
                f"  for (var r = j + 1; r < M; r = r + 1) {{ mx = max(mx, {s.abs(A('r', 'j'))}); }}\n"
                f"  let sc = select({R}(1), {R}({scale}), max(mx, {s.abs(A('j', 'j'))}) < {R}({tiny}));\n"
                f"  let alpha = {s.mul(A('j', 'j'), sc)};\n"
                "  mx = mx * sc;\n"
                # ||x||, scaled by its largest element against overflow
                f"  var xn = {R}(0);\n"
                f"  if (mx > {R}(0)) {{\n    var ss = {R}(0);\n"
                f"    for (var r = j + 1; r < M; r = r + 1) {{ let t = {s.abs(A('r', 'j'))} * sc / mx; ss = ss + t * t; }}\n"
                f"    xn = mx * {sqrt}(ss);\n  }}\n"
                f"  var tau = {s.zero};\n"
                f"  if (xn != {R}(0){has_im}) {{\n"
                f"    let ar = {s.re('alpha')};\n    let ai = {fabs}({s.im('alpha')});\n"
                f"    let h = max(max({fabs}(ar), ai), xn);\n"
                f"    let beta = -{s.fn('copysign', True)}(h * {sqrt}((ar / h) * (ar / h) + (ai / h) * (ai / h)"
                " + (xn / h) * (xn / h)), ar);\n"
                f"    tau = {tau_expr};\n"
                # x / (alpha - beta), divided rather than multiplied by the reciprocal: |alpha - beta| >= |x_r|,
                # so the quotient cannot overflow
                f"    let den = alpha - {s.of_real('beta')};\n"
                "    for (var r = j + 1; r < M; r = r + 1) {\n"
                f"    {A.set(s.div(s.mul(A('r', 'j'), sc), 'den'), 'r', 'j')}    }}\n"
                f"  {A.set(s.of_real('beta / sc'), 'j', 'j')}  }}\n" + TAU.set("tau", "j"))

    def reflect(s: _Ops, A: _Arr, TAU: _Arr, C: _Arr, conj: bool) -> str:
        # column c of C[j:, :] = H_j^H C (conj: while factoring, C = A) or H_j C (building Q)
        t = s.conj(TAU("j")) if conj else TAU("j")
        return ("  let M = P0;\n  let j = P2;\n  let c = P3 + X0;\n"
                f"  var t = {C('j', 'c')};\n"
                f"  for (var r = j + 1; r < M; r = r + 1) {{ t = t + {s.mul(s.conj(A('r', 'j')), C('r', 'c'))}; }}\n"
                f"  t = {s.mul(t, 't')};\n"
                + C.set(C("j", "c") + " - t", "j", "c")
                + "  for (var r = j + 1; r < M; r = r + 1) {\n"
                + f"  {C.set(C('r', 'c') + ' - ' + s.mul(A('r', 'j'), 't'), 'r', 'c')}  }}\n")

    arrays = [(a, 2, True), (tau, 1, True)]
    for j in range(k):
        _step(client, "qr_reflector", w, batch, (), arrays, [m, n, j], reflector)
        _step(client, "qr_apply", w, batch, (n - j - 1,), arrays, [m, n, j, j + 1],
              lambda s, A, TAU: reflect(s, A, TAU, A, True))
    # R: the upper triangle of A's first KR rows
    _step(client, "qr_r", w, batch, (kr, n), [(a, 2, False), (r, 2, True)], [],
          lambda s, A, RR: RR.set(f"select({s.zero}, {A('X0', 'X1')}, X0 <= X1)", "X0", "X1"))
    # Q = H_0 H_1 ... H_{K-1} times the first KQ columns of I, the reflectors applied last to first (columns
    # before j are unit vectors that H_j leaves alone)
    _identity(client, q)
    for j in range(k - 1, -1, -1):
        _step(client, "qr_q", w, batch, (kq - j,), arrays + [(q, 2, True)], [m, n, j, j],
              lambda s, A, TAU, C: reflect(s, A, TAU, C, False))


# --- matrix_power -----------------------------------------------------------------------------------

def _matrix_power(client, ins, outs, p):
    x, o, n = ins[0], outs[0], p["n"]
    if n == 0:
        _identity(client, o)
        return
    if n < 0:
        t = _temp(client, x._shape, o._dtype)
        _inv(client, (x,), (t,), {})
        x, n = t, -n
    matmul = client.kernels["matmul"]

    def product(a: Tensor, b: Tensor) -> Tensor:
        t = _temp(client, x._shape, o._dtype)
        matmul(client, (a, b), (t,), {})
        return t

    # binary powering, the same order of products as the CPU kernel (numpy.linalg.matrix_power)
    result = None
    while n:
        n, bit = divmod(n, 2)
        if bit:
            result = x if result is None else product(result, x)
        if n:
            x = product(x, x)
    client.launch("copy", (result,), (o,), {})


# --- norms --------------------------------------------------------------------------------------------

def _pnorm(client: WebGPUClient, x: Tensor, axes: tuple[int, ...], o: Tensor, order: float) -> None:
    """o = the ``order`` (0, 1, 2, inf or -inf) vector norm of x over ``axes`` (o shaped like x's other axes,
    or like x with length-1 reduced axes), from the element-wise and reduction kernels."""
    if order == 0:
        reduce(client, "count_nonzero", x, axes, o)
        return
    a = _temp(client, x._shape, o._dtype)
    client.launch("abs", (x,), (a,), {"dtype": x._dtype})
    if order in (math.inf, -math.inf):
        _extreme(client, a, axes, o, order > 0)
        return
    if order == 2:
        client.launch("multiply", (a, a), (a,), {"dtype": a._dtype})
    reduce(client, "sum", a, axes, o)
    if order == 2:
        client.launch("sqrt", (o,), (o,), {"dtype": o._dtype})


def _extreme(client: WebGPUClient, a: Tensor, axes: tuple[int, ...], o: Tensor, largest: bool) -> None:
    """o = max (or min) of a over ``axes``; the max over nothing is 0 (the norms' value; the namespace
    rejects the min over nothing)."""
    if not math.prod(a._shape[d] for d in axes):
        _fill(client, o, 0)
        return
    reduce(client, "max" if largest else "min", a, axes, o)


def _vector_norm(client, ins, outs, p):
    _pnorm(client, ins[0], tuple(p["axes"]), outs[0], p["ord"])


def _matrix_norm(client, ins, outs, p):
    x, o, order = ins[0], outs[0], p["ord"]
    *batch, m, n = x._shape
    batch = tuple(batch)
    nb = len(batch)
    ov = Tensor(o._buf, o._dtype, batch, o._strides[:nb], o._offset, o._dev)  # keepdims' (1, 1) dropped
    if order == "fro":
        _pnorm(client, x, (nb, nb + 1), ov, 2)
    elif order in ("nuc", 2, -2):
        sv = _temp(client, batch + (min(m, n),), o._dtype)
        client.kernels["svdvals"](client, (x,), (sv,), {})
        if order == "nuc":
            reduce(client, "sum", sv, (nb,), ov)
        else:
            _extreme(client, sv, (nb,), ov, order > 0)
    else:
        # 1: the largest column sum (over rows, axis -2); inf: the largest row sum (over columns)
        axis = nb if abs(order) == 1 else nb + 1
        sums = _temp(client, batch + ((n,) if axis == nb else (m,)), o._dtype)
        _pnorm(client, x, (axis,), sums, 1)
        _extreme(client, sums, (nb,), ov, order > 0)


def kernels() -> dict:
    return {"cholesky": _cholesky, "det": _det, "slogdet": _slogdet, "inv": _inv, "solve": _solve, "qr": _qr,
            "matrix_power": _matrix_power, "vector_norm": _vector_norm, "matrix_norm": _matrix_norm}
