"""Jacobi kernels of the linalg extension: eigh, eigvalsh, svd, svdvals, matrix_rank and pinv, for
float32, float64, complex64 and complex128 (phase machines of ``_phase_machine``).

- eigh, eigvalsh: cyclic Jacobi on the Hermitian matrix read from the lower triangle (as LAPACK's
  ``UPLO='L'``), with complex rotations for complex input; a pair is rotated while its off-diagonal
  element exceeds eps * sqrt(|a_pp| |a_qq|), which gives eigenvalues to high relative accuracy.
- svd, svdvals, matrix_rank, pinv: one-sided (Hestenes) Jacobi on the columns of x, or of x^H when x
  is wide; U is completed to an orthonormal basis (zero singular values, full_matrices) by
  Gram-Schmidt on unit vectors. matrix_rank and pinv apply NumPy's cutoff (s > max(s) * rtol, compared
  in the dtype NumPy compares in) and pinv forms V diag(1/s) U^H in the same invocation.
"""

from __future__ import annotations

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._phase_machine import COMPUTE, I32, MAX_SWEEPS, _NEXT_PAIR, _Operand, _Phase, _real, _run_program
from ._types import WgslType, cast, wt

# --- eigh, eigvalsh ------------------------------------------------------------------------------------

_EIGH_ARRAYS = """
var<private> n: i32;
fn a(i: i32, j: i32) -> $E { return S(i * n + j); }
fn sa(i: i32, j: i32, v: $E) { setS(i * n + j, v); }
fn vv(i: i32, j: i32) -> $E { return S(n * n + i * n + j); }
fn sv(i: i32, j: i32, v: $E) { setS(n * n + i * n + j, v); }
"""


def _eigh_program(n: int, vectors: bool) -> tuple[str, list[tuple[str, str]], list[_Phase]]:
    state = [("ph", "i"), ("pos", "i"), ("sc", "r"), ("big", "r"), ("sweep", "i"), ("p", "i"), ("q", "i"),
             ("rot", "i")]
    phases = [
        _Phase("pos >= n", "pos + 3", """
      for (var j = 0; j <= pos; j++) { big = max(big, av(x_ld(pos, j))); }""", n, n + 3),
        _Phase("pos >= 1", "2", """
      sc = rscale(big);
      p = 0;
      q = 1;""", 1, 2),
        # the Hermitian matrix of the lower triangle, scaled
        _Phase("pos >= n", "pos + n + 4", """
      for (var j = 0; j <= pos; j++) {
        let v = x_ld(pos, j) * sc;
        if (pos == j) { sa(j, j, mk(re(v))); } else { sa(pos, j, v); sa(j, pos, cj(v)); }
      }
      for (var j = 0; j < n; j++) { sv(pos, j, mk($R(select(0, 1, pos == j)))); }  //V""", n, 2 * n + 4),
        _Phase("sweep >= $SWEEPS || n < 2", "3 * n + 8", """
      let apq = a(p, q);
      let g = av(apq);
      let app = re(a(p, p));
      let aqq = re(a(q, q));
      if (g > $R($EPS) * sqrt(${fabs}(app)) * sqrt(${fabs}(aqq))) {
        rot = 1;
$ROTATION
        for (var r = 0; r < n; r++) {
          let x = a(r, p);
          let y = a(r, q);
          sa(r, p, x * c - mul(y, sp));
          sa(r, q, x * s + mul(y, cp));
        }
        for (var r = 0; r < n; r++) {
          let x = a(p, r);
          let y = a(q, r);
          sa(p, r, x * c - mul(y, ph) * s);
          sa(q, r, x * s + mul(y, ph) * c);
        }
        sa(p, p, mk(app - t * g));
        sa(q, q, mk(aqq + t * g));
        sa(p, q, mk($R(0)));
        sa(q, p, mk($R(0)));
        for (var r = 0; r < n; r++) {  //V
          let x = vv(r, p);  //V
          let y = vv(r, q);  //V
          sv(r, p, x * c - mul(y, sp));  //V
          sv(r, q, x * s + mul(y, cp));  //V
        }  //V
      }""" + _NEXT_PAIR.replace("$K", "n"), MAX_SWEEPS * n * (n - 1) // 2 + 1, 3 * n + 8),
        # ascending eigenvalues (selection sort), eigenvectors along
        _Phase("pos >= n", "2 * n + 4", """
      var k = pos;
      var best = re(a(pos, pos));
      for (var j = pos + 1; j < n; j++) {
        let d = re(a(j, j));
        if (d < best) { k = j; best = d; }
      }
      if (k != pos) {
        sa(k, k, a(pos, pos));
        for (var r = 0; r < n; r++) { let t = vv(r, pos); sv(r, pos, vv(r, k)); sv(r, k, t); }  //V
      }
      w_st(pos, best / sc);""", n, 2 * n + 4),
    ]
    if vectors:
        phases.append(_Phase("pos >= n", "n + 2", """
      for (var j = 0; j < n; j++) { v_st(pos, j, vv(pos, j)); }""", n, n + 2))
    return _EIGH_ARRAYS, state, phases


# --- svd, svdvals, matrix_rank, pinv -------------------------------------------------------------------

# x (rows x cols) is worked on as W = x (m = rows >= cols = k) or W = x^H (m = cols > rows = k), W's
# columns stored contiguously; W's region has room for kc columns (m with full U), then V (k x k, by
# columns), then the singular values.
_SVD_ARRAYS = """
var<private> rows: i32;
var<private> cols: i32;
var<private> tr: bool;
var<private> m: i32;
var<private> k: i32;
var<private> kc: i32;
var<private> vo: i32;
var<private> so: i32;
fn w(i: i32, j: i32) -> $E { return S(j * m + i); }
fn sw(i: i32, j: i32, v: $E) { setS(j * m + i, v); }
fn vv(i: i32, j: i32) -> $E { return S(vo + j * k + i); }
fn sv(i: i32, j: i32, v: $E) { setS(vo + j * k + i, v); }
fn sig(j: i32) -> $R { return re(S(so + j)); }
"""
_SVD_PROLOGUE = """  rows = $ROWS;
  cols = $COLS;
  tr = rows < cols;
  m = max(rows, cols);
  k = min(rows, cols);
  kc = $KC;
  vo = m * kc;
  so = vo + k * k;
"""
# NumPy's cutoff s > max(s) * rtol, in the dtype NumPy multiplies and compares in
_CUTOFF = """
      var smax = $R(0);
      if (k > 0) { smax = sig(0) / sc; }
      let thr = $SMAX * $RTOL;"""


def _svd_program(rows: int, cols: int, kind: str, full: bool) -> tuple[str, list[tuple[str, str]], list[_Phase]]:
    """Phases of the one-sided Jacobi SVD then those of ``kind``: svd, svdvals, matrix_rank or pinv."""
    m, k = max(rows, cols), min(rows, cols)
    kc = m if full else k
    state = [("ph", "i"), ("pos", "i"), ("sc", "r"), ("big", "r"), ("sweep", "i"), ("p", "i"), ("q", "i"),
             ("rot", "i"), ("r", "i"), ("cand", "i")]
    phases = [
        _Phase("pos >= rows", "cols + 2", """
      for (var j = 0; j < cols; j++) { big = max(big, av(x_ld(pos, j))); }""", rows, cols + 2),
        _Phase("pos >= 1", "2", """
      sc = rscale(big);
      p = 0;
      q = 1;""", 1, 2),
        _Phase("pos >= m", "k + 2", """
      for (var j = 0; j < k; j++) {
        if (tr) { sw(pos, j, cj(x_ld(j, pos)) * sc); } else { sw(pos, j, x_ld(pos, j) * sc); }
      }""", m, k + 2),
    ]
    if kind in ("svd", "pinv"):
        phases.append(_Phase("pos >= k", "k + 2", """
      for (var j = 0; j < k; j++) { sv(pos, j, mk($R(select(0, 1, pos == j)))); }""", k, k + 2))
    phases += [
        _Phase("sweep >= $SWEEPS || k < 2", "2 * m + k + 8", """
      var app = $R(0);
      var aqq = $R(0);
      var apq = mk($R(0));
      for (var i = 0; i < m; i++) {
        let x = w(i, p);
        let y = w(i, q);
        app += sq(x);
        aqq += sq(y);
        apq += mul(cj(x), y);
      }
      let g = av(apq);
      if (g > $R($EPS) * sqrt(app) * sqrt(aqq)) {
        rot = 1;
$ROTATION
        for (var i = 0; i < m; i++) {
          let x = w(i, p);
          let y = w(i, q);
          sw(i, p, x * c - mul(y, sp));
          sw(i, q, x * s + mul(y, cp));
        }
        for (var i = 0; i < k; i++) {  //V
          let x = vv(i, p);  //V
          let y = vv(i, q);  //V
          sv(i, p, x * c - mul(y, sp));  //V
          sv(i, q, x * s + mul(y, cp));  //V
        }  //V
      }""" + _NEXT_PAIR.replace("$K", "k"), MAX_SWEEPS * k * (k - 1) // 2 + 1, 2 * m + k + 8),
        _Phase("pos >= k", "m + 2", """
      var t = $R(0);
      for (var i = 0; i < m; i++) { t += sq(w(i, pos)); }
      setS(so + pos, mk(sqrt(t)));""", k, m + 2),
        # descending singular values (selection sort), the columns of W and V along
        _Phase("pos >= k", "2 * k + m + 4", """
      var b = pos;
      for (var j = pos + 1; j < k; j++) { if (sig(j) > sig(b)) { b = j; } }
      if (b != pos) {
        let t = S(so + pos);
        setS(so + pos, S(so + b));
        setS(so + b, t);
        for (var i = 0; i < m; i++) { let y = w(i, pos); sw(i, pos, w(i, b)); sw(i, b, y); }
        for (var i = 0; i < k; i++) { let y = vv(i, pos); sv(i, pos, vv(i, b)); sv(i, b, y); }  //V
      }""", k, 2 * k + m + 4),
    ]
    # W's columns of nonzero singular values normalised: U's columns (r of them)
    normalize = _Phase("pos >= k", "m + 2", """
      let t = sig(pos);
      if (t > $R(0)) {
        for (var i = 0; i < m; i++) { sw(i, pos, w(i, pos) / t); }
        r = pos + 1;
      }""", k, m + 2)
    if kind == "svdvals":
        phases.append(_Phase("pos >= k", "2", "      s_st(pos, sig(pos) / sc);", k, 2))
    elif kind == "matrix_rank":
        phases.append(_Phase("pos >= 1", "k + 4", _CUTOFF + """
      var cnt = 0;
      for (var j = 0; j < k; j++) { if ($SJ > thr) { cnt++; } }
      o_st($COUNT);""", 1, k + 4))
    elif kind == "pinv":
        # x = U S V^H: pinv = V S^+ U^H (with W = x^H: U = V and V = W); S^+ in place of S
        phases += [normalize, _Phase("pos >= 1", "k + 4", _CUTOFF + """
      for (var j = 0; j < k; j++) {
        var inv = $R(0);
        if ($SJ > thr) { inv = sc / sig(j); }
        setS(so + j, mk(inv));
      }""", 1, k + 4), _Phase("pos >= cols", "rows * (k + 1) + 2", """
      for (var j = 0; j < rows; j++) {
        var acc = mk($R(0));
        for (var l = 0; l < k; l++) {
          if (tr) {
            acc += mul(w(pos, l), cj(vv(j, l))) * sig(l);
          } else {
            acc += mul(vv(pos, l), cj(w(j, l))) * sig(l);
          }
        }
        o_st(pos, j, acc);
      }""", cols, rows * (k + 1) + 2)]
    else:
        phases += [normalize, _Phase("pos >= kc", "4 * m * pos + 4 * m + 8", """
      // U completed to kc columns: a unit vector orthogonalised (twice) against the columns so far;
      // some unit vector keeps at least 3/(4m) of its square norm, this one more than 1/(4m)
      if (pos < r) {
        pos = r;
      } else if (cand >= m) {
        pos++;
      } else {
        for (var i = 0; i < m; i++) { sw(i, pos, mk($R(select(0, 1, i == cand)))); }
        cand++;
        for (var rep = 0; rep < 2; rep++) {
          for (var l = 0; l < pos; l++) {
            var d = mk($R(0));
            for (var i = 0; i < m; i++) { d += mul(cj(w(i, l)), w(i, pos)); }
            for (var i = 0; i < m; i++) { sw(i, pos, w(i, pos) - mul(w(i, l), d)); }
          }
        }
        var t = $R(0);
        for (var i = 0; i < m; i++) { t += sq(w(i, pos)); }
        if ($R(4) * $R(m) * t > $R(1)) {
          let nv = sqrt(t);
          for (var i = 0; i < m; i++) { sw(i, pos, w(i, pos) / nv); }
          pos++;
        }
      }""", kc + m + 1, 4 * m * kc + 4 * m + 8, advance=False),
            _Phase("pos >= k", "2", "      s_st(pos, sig(pos) / sc);", k, 2),
            # x = U S V^H: U = W, Vh = V^H; with W = x^H: U = V, Vh = W^H
            _Phase("pos >= rows", "max(rows, kc) + 2", """
      if (tr) {
        for (var j = 0; j < rows; j++) { u_st(pos, j, vv(pos, j)); }
      } else {
        for (var j = 0; j < kc; j++) { u_st(pos, j, w(pos, j)); }
      }""", rows, max(rows, kc) + 2),
            _Phase("pos >= select(cols, kc, tr)", "cols + 2", """
      for (var j = 0; j < cols; j++) {
        if (tr) { vh_st(pos, j, cj(w(j, pos))); } else { vh_st(pos, j, cj(vv(j, pos))); }
      }""", max(cols, kc), cols + 2)]
    return _SVD_ARRAYS, state, phases


# --- kernels ---------------------------------------------------------------------------------------

def _eigh(vectors: bool):
    def kernel(client, ins, outs, p):
        x = ins[0]
        n = x._shape[-1]
        ops = [_Operand("w", outs[0], 1, True)] + ([_Operand("v", outs[1], 2, True)] if vectors else [])
        _run_program(client, "eigh", vectors, x, ops, _eigh_program(n, vectors), vectors, [(I32, n)],
                     (2 if vectors else 1) * n * n, "  n = $P0;\n")
    return kernel


def _svd_run(client, kind: str, x: Tensor, ops: list[_Operand], full: bool, params: list[tuple[WgslType, object]],
             key=None, **extra: str) -> None:
    rows, cols = x._shape[-2:]
    m, k = max(rows, cols), min(rows, cols)
    vectors = kind in ("svd", "pinv")
    _run_program(client, kind, (full, key), x, ops, _svd_program(rows, cols, kind, full), vectors,
                 [(I32, rows), (I32, cols)] + params, m * (m if full else k) + k * k + k, _SVD_PROLOGUE,
                 ROWS="$P0", COLS="$P1", KC="m" if full else "k", **extra)


def _svd(client, ins, outs, p):
    u, s, vh = outs
    _svd_run(client, "svd", ins[0], [_Operand("u", u, 2, True), _Operand("s", s, 1, True),
                                     _Operand("vh", vh, 2, True)], bool(p["full_matrices"]), [])


def _svdvals(client, ins, outs, p):
    _svd_run(client, "svdvals", ins[0], [_Operand("s", outs[0], 1, True)], False, [])


def _cutoff(x: Tensor, rtol_array: Tensor | None, rtol: float | None, ops: list[_Operand]):
    """(operands, parameters, dtype, substitutions) of NumPy's cutoff s > max(s) * rtol: with a Python
    rtol the product is in s's dtype (a weak scalar); with an array, in the promotion of both dtypes."""
    r = _real(COMPUTE[wt(x._dtype)])
    if rtol_array is None:
        return ops, [(r, rtol)], r.dtype, {"SMAX": "smax", "RTOL": "$P2", "SJ": "(sig(j) / sc)"}
    ct = wt(dt.promote(r.dtype, rtol_array._dtype, "rtol"))
    return (ops + [_Operand("rt", rtol_array, 0, False)], [], ct.dtype,
            {"SMAX": cast("smax", r, ct), "RTOL": cast("rt_ld()", wt(rtol_array._dtype), ct),
             "SJ": cast("(sig(j) / sc)", r, ct)})


def _matrix_rank(client, ins, outs, p):
    x, rtol_array = ins
    o = outs[0]
    ops, params, ct, subst = _cutoff(x, rtol_array, p["rtol"], [_Operand("o", o, 0, True)])
    _svd_run(client, "matrix_rank", x, ops, False, params, ct, COUNT=cast("cnt", I32, wt(o._dtype)), **subst)


def _pinv(client, ins, outs, p):
    x, rtol_array = ins
    ops, params, ct, subst = _cutoff(x, rtol_array, p["rtol"], [_Operand("o", outs[0], 2, True)])
    _svd_run(client, "pinv", x, ops, False, params, ct, **subst)


def kernels() -> dict:
    return {"eigh": _eigh(True), "eigvalsh": _eigh(False), "svd": _svd, "svdvals": _svdvals,
            "matrix_rank": _matrix_rank, "pinv": _pinv}
