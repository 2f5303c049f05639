"""Eigen- and singular-value kernels of the linalg extension: eigh, eigvalsh, eig, eigvals, svd, svdvals,
matrix_rank and pinv, for float32, float64, complex64 and complex128.

One invocation per matrix runs the sequential algorithm over its own slice of a scratch buffer; a batch
of matrices is a batch of invocations. The algorithms:

- eigh, eigvalsh: cyclic Jacobi on the Hermitian matrix read from the lower triangle (as LAPACK's
  ``UPLO='L'``), with complex rotations for complex input; a pair is rotated while its off-diagonal
  element exceeds eps * sqrt(|a_pp| |a_qq|), which gives eigenvalues to high relative accuracy.
- svd, svdvals, matrix_rank, pinv: one-sided (Hestenes) Jacobi on the columns of x, or of x^H when x
  is wide; U is completed to an orthonormal basis (zero singular values, full_matrices) by
  Gram-Schmidt on unit vectors. matrix_rank and pinv apply NumPy's cutoff (s > max(s) * rtol, compared
  in the dtype NumPy compares in) and pinv forms V diag(1/s) U^H in the same invocation.
- eig, eigvals of real x: Householder reduction to Hessenberg form and the Francis double-shift QR
  algorithm with eigenvector back-substitution (EISPACK's orthes/hqr2, as in JAMA), so complex
  eigenvalues come in exact conjugate pairs; of complex x: the same reduction and a single-shift complex
  QR algorithm (Wilkinson shifts), with back-substitution on the triangular Schur form. Eigenvectors
  have unit norm and their largest component real and positive (LAPACK's normalisation, up to that
  phase); the order of the eigenvalues is the Schur form's, which may differ from NumPy's.

Each algorithm is a sequence of phases of bounded steps (one row, one rotation, one QR iteration...),
resumable: an invocation runs steps until a budget of loop iterations is spent, keeps its place in its
scratch, and the next dispatch of the same pipeline goes on from there. The host issues the number of
dispatches the worst case needs (at most 30 Jacobi sweeps, 40 QR iterations per eigenvalue); those after
convergence return at once. Nothing is read back. (The budget is lavapipe's: llvmpipe silently ends
every loop of an invocation after 65535 loop iterations in all, and a loop inside a branch not taken
counts once each time the branch is passed, so a turn of the phase loop costs one iteration per loop
statement of the program besides its step. A step of the Hessenberg reduction, of the QR iteration, of
the back-substitution or of completing U costs O(n^2) iterations, so on lavapipe
eig/eigvals are right up to 127x127 and svd's U completion up to 127 rows; the Jacobi steps are O(n).)

Every matrix is first scaled by a power of two near 1 / max|x_ij| (exact), so that squares of its
elements neither overflow nor underflow. eig and eigvals of a matrix with NaN or infinite elements, or
whose QR iteration does not converge, give NaN eigenvalues and eigenvectors, where NumPy raises
LinAlgError (which would need a readback). The input and outputs are bound whole: one larger than the
adapter's largest storage binding raises MemoryError; the scratch is split over launches as needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from string import Template
from typing import NamedTuple

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._client import WebGPUClient
from ._lib import Lib
from ._shader import Layout, bindings, groups, main_header, pack_words
from ._types import COMPUTE, WT, WTS, cast, scalar_words, wt
from ._views import collapse, window
from .k_reduce import _temp

WG = 64  # matrices (invocations) per workgroup
I32 = WTS[dt.int32]
MAX_SWEEPS = 30  # Jacobi sweeps (LAPACK's gesvj too); convergence is quadratic, usually within 10
BUDGET = 50000   # loop iterations one invocation runs per dispatch (llvmpipe stops loops at 65535)


class _Operand(NamedTuple):
    name: str       # accessors name_ld(...) / name_st(..., v) in the WGSL
    t: Tensor
    nd: int         # trailing (matrix or vector) dimensions after the batch ones
    written: bool


class _Phase(NamedTuple):
    done: str       # WGSL condition: the phase is over
    cost: str       # WGSL i32: loop iterations of the next step, at most
    body: str       # WGSL of one step; ``pos`` counts the phase's steps
    count: int      # host: steps of the phase, at most
    max_cost: int   # host: the largest cost of one of them
    advance: bool = True  # pos += 1 after each step (else the body moves on itself)


# --- per-type helpers the algorithms are written with --------------------------------------------------

# E is the element type (real, or vec2 for complex), R its real type. mk: a real as E; re: real part;
# cj: conjugate; mul: product; sq: |z|^2; av: |z|; fin: finite; rscale: a power of two near 1 / x.
_REAL_OPS = """fn mk(r: $R) -> $E { return r; }
fn re(z: $E) -> $R { return z; }
fn cj(z: $E) -> $E { return z; }
fn mul(a: $E, b: $E) -> $E { return a * b; }
fn sq(z: $E) -> $R { return z * z; }
fn av(z: $E) -> $R { return ${fabs}(z); }
fn fin(z: $E) -> bool { return ${isfinite}(z); }
"""
_COMPLEX_OPS = """fn mk(r: $R) -> $E { return $E(r, $R(0)); }
fn re(z: $E) -> $R { return z.x; }
fn cj(z: $E) -> $E { return $E(z.x, -z.y); }
fn mul(a: $E, b: $E) -> $E { return $E(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn sq(z: $E) -> $R { return z.x * z.x + z.y * z.y; }
fn av(z: $E) -> $R { return ${hypot}(z.x, z.y); }
fn fin(z: $E) -> bool { return ${isfinite}(z.x) && ${isfinite}(z.y); }
"""
_RSCALE = {
    "f32": """fn rscale(x: f32) -> f32 {
  let e = i32((bitcast<u32>(x) >> 23u) & 0xffu);
  return bitcast<f32>(u32(clamp(254 - e, 1, 253)) << 23u);
}
""",
    "f64": """fn rscale(x: f64) -> f64 {
  let e = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
  return bitcast<f64>(u64(clamp(2046 - e, 1, 2045)) << 52u);
}
""",
}

# The Jacobi rotation that zeroes the (p, q) element g * ph (|ph| = 1) of a Hermitian 2x2 block with
# real diagonal (app, aqq): U = diag(1, conj(ph)) [[c, s], [-s, c]]; columns p, q of a matrix M become
# M U: (x, y) -> (c x - s conj(ph) y, s x + c conj(ph) y). Defines t (the tangent), c, s, ph, sp, cp.
_ROTATION = """
        let ph = apq / g;
        let theta = (aqq - app) / ($R(2) * g);
        var t: $R;
        if (${fabs}(theta) > $R($BIG)) {
          t = $R(0.5) / theta;
        } else {
          t = $R(1) / (${fabs}(theta) + sqrt($R(1) + theta * theta));
          if (theta < $R(0)) { t = -t; }
        }
        let c = $R(1) / sqrt($R(1) + t * t);
        let s = t * c;
        let sp = cj(ph) * s;
        let cp = cj(ph) * c;
"""
# the next pair (p, q) of the cyclic order; a sweep without rotation ends the iteration
_NEXT_PAIR = """
      q++;
      if (q >= $K) { p++; q = p + 1; }
      if (p >= $K - 1) {
        sweep = select(sweep + 1, $SWEEPS, rot == 0);
        p = 0;
        q = 1;
        rot = 0;
      }
"""


def _overhead(phases: list[_Phase], top: str = "") -> int:
    """Loop iterations that one turn of the state machine's loop costs besides its step. llvmpipe runs a
    branch that any invocation could take under a mask even when none takes it, and a loop in it once:
    every loop statement of the other phases (and of the step's own untaken branches) counts one
    iteration towards its limit each turn. Without this, the steps of a 400x6 SVD's first phases (a row
    each, thousands of turns) ran past the limit and cut a rotation short: float64 singular values off
    by 5e-5 on lavapipe."""
    text = top + "".join(ph.body for ph in phases)
    return 1 + text.count("for (") + text.count("loop {") + text.count("while ")


def _machine(state: list[tuple[str, str]], prologue: str, phases: list[_Phase], top: str = "") -> str:
    """``fn run()``: ``phases`` one after the other, resumed where the last dispatch left them. ``state``
    (name, "i" or "r") are the variables kept in the scratch's first slots between dispatches (ph and
    pos first); a dispatch with ``fresh`` set starts them at 0."""
    lines = ["fn run() {\n", prologue]
    for k, (name, kind) in enumerate(state):
        get = f"i32(re(slot({k})))" if kind == "i" else f"re(slot({k}))"
        lines.append(f"  var {name} = select({get}, {'0' if kind == 'i' else '$R(0)'}, fresh);\n")
    turn = _overhead(phases, top)
    # (the first step of a dispatch runs whatever it costs)
    lines.append(f"  var budget = $BUDGET;\n  loop {{\n    budget -= {turn};\n" + top)
    for k, ph in enumerate(phases):
        lines.append(f"    if (ph == {k}) {{\n      if ({ph.done}) {{ ph = {k + 1}; pos = 0; continue; }}\n"
                     f"      let cost = {ph.cost};\n      if (cost > budget && budget < $BUDGET - {turn}) {{ break; }}\n"
                     f"      budget -= cost;\n{ph.body}\n" + ("      pos++;\n" if ph.advance else "")
                     + "      continue;\n    }\n")
    lines.append("    break;\n  }\n")
    for k, (name, kind) in enumerate(state):
        lines.append(f"  setslot({k}, mk({'$R(' + name + ')' if kind == 'i' else name}));\n")
    lines.append("}\n")
    return "".join(lines)


def _dispatches(phases: list[_Phase], top: str = "") -> int:
    """Dispatches that finish every phase in the worst case: each one not the last runs steps worth
    more than BUDGET minus the largest step (or at least one step)."""
    turn = _overhead(phases, top)
    total = sum(p.count * (p.max_cost + turn) for p in phases)
    steps = sum(p.count for p in phases)
    big = max((p.max_cost + turn for p in phases), default=1)
    return min(steps, -(-total // max(BUDGET - big, 1))) + 1


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


# --- eig, eigvals ------------------------------------------------------------------------------------

# general real matrices: EISPACK's orthes and hqr2, after JAMA's EigenvalueDecomposition
_EIG_REAL_ARRAYS = """
var<private> nn: i32;
fn h(i: i32, j: i32) -> $R { return S(i * nn + j); }
fn sh(i: i32, j: i32, v: $R) { setS(i * nn + j, v); }
fn vv(i: i32, j: i32) -> $R { return S(nn * nn + i * nn + j); }
fn svv(i: i32, j: i32, v: $R) { setS(nn * nn + i * nn + j, v); }
fn dd(i: i32) -> $R { return S(2 * nn * nn + i); }
fn sdd(i: i32, v: $R) { setS(2 * nn * nn + i, v); }
fn ee(i: i32) -> $R { return S(2 * nn * nn + nn + i); }
fn see(i: i32, v: $R) { setS(2 * nn * nn + nn + i, v); }
fn oo(i: i32) -> $R { return S(2 * nn * nn + 2 * nn + i); }
fn soo(i: i32, v: $R) { setS(2 * nn * nn + 2 * nn + i, v); }
fn fab(x: $R) -> $R { return ${fabs}(x); }

fn cdiv(xr: $R, xi: $R, yr: $R, yi: $R) -> vec2<$R> {
  if (fab(yr) > fab(yi)) {
    let r = yi / yr;
    let d = yr + r * yi;
    return vec2<$R>((xr + r * xi) / d, (xi - r * xr) / d);
  }
  let r = yr / yi;
  let d = yi + r * yr;
  return vec2<$R>((r * xr + xi) / d, (r * xi - xr) / d);
}

// component i of eigenvector j: real columns, or (re, im) column pairs of a conjugate pair
fn ev(i: i32, j: i32) -> vec2<$R> {
  let e = ee(j);
  if (e > $R(0)) { return vec2<$R>(vv(i, j), vv(i, j + 1)); }
  if (e < $R(0)) { return vec2<$R>(vv(i, j - 1), -vv(i, j)); }
  return vec2<$R>(vv(i, j), $R(0));
}
fn lam(j: i32) -> vec2<$R> { return vec2<$R>(dd(j), ee(j)); }
"""

_ORTHES_STEP = """
      let m = pos + 1;
      let high = nn - 1;
      var scale = $R(0);
      for (var i = m; i <= high; i++) { scale += fab(h(i, m - 1)); }
      if (scale != $R(0)) {
        var hh = $R(0);
        for (var i = high; i >= m; i--) {
          let o = h(i, m - 1) / scale;
          soo(i, o);
          hh += o * o;
        }
        var g = sqrt(hh);
        if (oo(m) > $R(0)) { g = -g; }
        hh = hh - oo(m) * g;
        soo(m, oo(m) - g);
        for (var j = m; j < nn; j++) {
          var f = $R(0);
          for (var i = high; i >= m; i--) { f += oo(i) * h(i, j); }
          f = f / hh;
          for (var i = m; i <= high; i++) { sh(i, j, h(i, j) - f * oo(i)); }
        }
        for (var i = 0; i <= high; i++) {
          var f = $R(0);
          for (var j = high; j >= m; j--) { f += oo(j) * h(i, j); }
          f = f / hh;
          for (var j = m; j <= high; j++) { sh(i, j, h(i, j) - f * oo(j)); }
        }
        soo(m, scale * oo(m));
        sh(m, m - 1, scale * g);
      }"""

_ACCUMULATE_STEP = """
      let m = nn - 2 - pos;
      let high = nn - 1;
      if (h(m, m - 1) != $R(0)) {
        for (var i = m + 1; i <= high; i++) { soo(i, h(i, m - 1)); }
        for (var j = m; j <= high; j++) {
          var g = $R(0);
          for (var i = m; i <= high; i++) { g += oo(i) * vv(i, j); }
          g = (g / oo(m)) / h(m, m - 1);
          for (var i = m; i <= high; i++) { svv(i, j, vv(i, j) + g * oo(i)); }
        }
      }"""

# one pass of hqr2's main loop: a root or a pair found, or one double-shift QR step
_HQR2_STEP = """
      let eps = $R($EPS);
      var p = $R(0);
      var q = $R(0);
      var r = $R(0);
      var s = $R(0);
      var z = $R(0);
      var w: $R;
      var x: $R;
      var y: $R;
      var l = en;
      while (l > 0) {
        s = fab(h(l - 1, l - 1)) + fab(h(l, l));
        if (s == $R(0)) { s = norm; }
        if (fab(h(l, l - 1)) <= eps * s) { break; }
        l--;
      }
      if (l == en) {
        sh(en, en, h(en, en) + exshift);
        sdd(en, h(en, en));
        see(en, $R(0));
        en--;
        iter = 0;
      } else if (l == en - 1) {
        w = h(en, en - 1) * h(en - 1, en);
        p = (h(en - 1, en - 1) - h(en, en)) / $R(2);
        q = p * p + w;
        z = sqrt(fab(q));
        sh(en, en, h(en, en) + exshift);
        sh(en - 1, en - 1, h(en - 1, en - 1) + exshift);
        x = h(en, en);
        if (q >= $R(0)) {
          if (p >= $R(0)) { z = p + z; } else { z = p - z; }
          sdd(en - 1, x + z);
          sdd(en, dd(en - 1));
          if (z != $R(0)) { sdd(en, x - w / z); }
          see(en - 1, $R(0));
          see(en, $R(0));
          x = h(en, en - 1);
          s = fab(x) + fab(z);
          p = x / s;
          q = z / s;
          r = sqrt(p * p + q * q);
          p = p / r;
          q = q / r;
          for (var j = en - 1; j < nn; j++) {
            z = h(en - 1, j);
            sh(en - 1, j, q * z + p * h(en, j));
            sh(en, j, q * h(en, j) - p * z);
          }
          for (var i = 0; i <= en; i++) {
            z = h(i, en - 1);
            sh(i, en - 1, q * z + p * h(i, en));
            sh(i, en, q * h(i, en) - p * z);
          }
          for (var i = 0; i < nn; i++) {
            z = vv(i, en - 1);
            svv(i, en - 1, q * z + p * vv(i, en));
            svv(i, en, q * vv(i, en) - p * z);
          }
        } else {
          sdd(en - 1, x + p);
          sdd(en, x + p);
          see(en - 1, z);
          see(en, -z);
        }
        en = en - 2;
        iter = 0;
      } else {
        total++;
        if (total > 40 * nn) { bad = 1; }
        x = h(en, en);
        y = $R(0);
        w = $R(0);
        if (l < en) {
          y = h(en - 1, en - 1);
          w = h(en, en - 1) * h(en - 1, en);
        }
        if (iter == 10) {
          exshift += x;
          for (var i = 0; i <= en; i++) { sh(i, i, h(i, i) - x); }
          s = fab(h(en, en - 1)) + fab(h(en - 1, en - 2));
          x = $R(0.75) * s;
          y = x;
          w = $R(-0.4375) * s * s;
        }
        if (iter == 30) {
          s = (y - x) / $R(2);
          s = s * s + w;
          if (s > $R(0)) {
            s = sqrt(s);
            if (y < x) { s = -s; }
            s = x - w / ((y - x) / $R(2) + s);
            for (var i = 0; i <= en; i++) { sh(i, i, h(i, i) - s); }
            exshift += s;
            x = $R(0.964);
            y = x;
            w = x;
          }
        }
        iter++;
        var m = en - 2;
        loop {
          z = h(m, m);
          r = x - z;
          s = y - z;
          p = (r * s - w) / h(m + 1, m) + h(m, m + 1);
          q = h(m + 1, m + 1) - z - r - s;
          r = h(m + 2, m + 1);
          s = fab(p) + fab(q) + fab(r);
          p = p / s;
          q = q / s;
          r = r / s;
          if (m == l) { break; }
          if (fab(h(m, m - 1)) * (fab(q) + fab(r)) <
              eps * (fab(p) * (fab(h(m - 1, m - 1)) + fab(z) + fab(h(m + 1, m + 1))))) { break; }
          m--;
        }
        for (var i = m + 2; i <= en; i++) {
          sh(i, i - 2, $R(0));
          if (i > m + 2) { sh(i, i - 3, $R(0)); }
        }
        for (var k = m; k <= en - 1; k++) {
          let notlast = k != en - 1;
          if (k != m) {
            p = h(k, k - 1);
            q = h(k + 1, k - 1);
            r = $R(0);
            if (notlast) { r = h(k + 2, k - 1); }
            x = fab(p) + fab(q) + fab(r);
            if (x == $R(0)) { continue; }
            p = p / x;
            q = q / x;
            r = r / x;
          }
          s = sqrt(p * p + q * q + r * r);
          if (p < $R(0)) { s = -s; }
          if (s != $R(0)) {
            if (k != m) {
              sh(k, k - 1, -s * x);
            } else if (l != m) {
              sh(k, k - 1, -h(k, k - 1));
            }
            p = p + s;
            x = p / s;
            y = q / s;
            z = r / s;
            q = q / p;
            r = r / p;
            for (var j = k; j < nn; j++) {
              p = h(k, j) + q * h(k + 1, j);
              if (notlast) {
                p = p + r * h(k + 2, j);
                sh(k + 2, j, h(k + 2, j) - p * z);
              }
              sh(k, j, h(k, j) - p * x);
              sh(k + 1, j, h(k + 1, j) - p * y);
            }
            for (var i = 0; i <= min(en, k + 3); i++) {
              p = x * h(i, k) + y * h(i, k + 1);
              if (notlast) {
                p = p + z * h(i, k + 2);
                sh(i, k + 2, h(i, k + 2) - p * r);
              }
              sh(i, k, h(i, k) - p);
              sh(i, k + 1, h(i, k + 1) - p * q);
            }
            for (var i = 0; i < nn; i++) {
              p = x * vv(i, k) + y * vv(i, k + 1);
              if (notlast) {
                p = p + z * vv(i, k + 2);
                svv(i, k + 2, vv(i, k + 2) - p * r);
              }
              svv(i, k, vv(i, k) - p);
              svv(i, k + 1, vv(i, k + 1) - p * q);
            }
          }
        }
      }"""

# hqr2's back-substitution for eigenvalue en: its eigenvector of the quasi-triangular form
_BACKSUB_REAL_STEP = """
      let eps = $R($EPS);
      let en = nn - 1 - pos;
      var p = dd(en);
      var q = ee(en);
      var r = $R(0);
      var s = $R(0);
      var z = $R(0);
      var t: $R;
      var w: $R;
      var x: $R;
      var y: $R;
      if (q == $R(0)) {
        var l = en;
        sh(en, en, $R(1));
        for (var i = en - 1; i >= 0; i--) {
          w = h(i, i) - p;
          r = $R(0);
          for (var j = l; j <= en; j++) { r = r + h(i, j) * h(j, en); }
          if (ee(i) < $R(0)) {
            z = w;
            s = r;
          } else {
            l = i;
            if (ee(i) == $R(0)) {
              if (w != $R(0)) { sh(i, en, -r / w); } else { sh(i, en, -r / (eps * norm)); }
            } else {
              x = h(i, i + 1);
              y = h(i + 1, i);
              q = (dd(i) - p) * (dd(i) - p) + ee(i) * ee(i);
              t = (x * s - z * r) / q;
              sh(i, en, t);
              if (fab(x) > fab(z)) { sh(i + 1, en, (-r - w * t) / x); } else { sh(i + 1, en, (-s - y * t) / z); }
            }
            t = fab(h(i, en));
            if ((eps * t) * t > $R(1)) {
              for (var j = i; j <= en; j++) { sh(j, en, h(j, en) / t); }
            }
          }
        }
      } else if (q < $R(0)) {
        var l = en - 1;
        if (fab(h(en, en - 1)) > fab(h(en - 1, en))) {
          sh(en - 1, en - 1, q / h(en, en - 1));
          sh(en - 1, en, -(h(en, en) - p) / h(en, en - 1));
        } else {
          let c = cdiv($R(0), -h(en - 1, en), h(en - 1, en - 1) - p, q);
          sh(en - 1, en - 1, c.x);
          sh(en - 1, en, c.y);
        }
        sh(en, en - 1, $R(0));
        sh(en, en, $R(1));
        for (var i = en - 2; i >= 0; i--) {
          var ra = $R(0);
          var sa = $R(0);
          for (var j = l; j <= en; j++) {
            ra = ra + h(i, j) * h(j, en - 1);
            sa = sa + h(i, j) * h(j, en);
          }
          w = h(i, i) - p;
          if (ee(i) < $R(0)) {
            z = w;
            r = ra;
            s = sa;
          } else {
            l = i;
            if (ee(i) == $R(0)) {
              let c = cdiv(-ra, -sa, w, q);
              sh(i, en - 1, c.x);
              sh(i, en, c.y);
            } else {
              x = h(i, i + 1);
              y = h(i + 1, i);
              var vr = (dd(i) - p) * (dd(i) - p) + ee(i) * ee(i) - q * q;
              let vi = (dd(i) - p) * $R(2) * q;
              if (vr == $R(0) && vi == $R(0)) {
                vr = eps * norm * (fab(w) + fab(q) + fab(x) + fab(y) + fab(z));
              }
              let c = cdiv(x * r - z * ra + q * sa, x * s - z * sa - q * ra, vr, vi);
              sh(i, en - 1, c.x);
              sh(i, en, c.y);
              if (fab(x) > (fab(z) + fab(q))) {
                sh(i + 1, en - 1, (-ra - w * h(i, en - 1) + q * h(i, en)) / x);
                sh(i + 1, en, (-sa - w * h(i, en) - q * h(i, en - 1)) / x);
              } else {
                let c2 = cdiv(-r - y * h(i, en - 1), -s - y * h(i, en), z, q);
                sh(i + 1, en - 1, c2.x);
                sh(i + 1, en, c2.y);
              }
            }
            t = max(fab(h(i, en - 1)), fab(h(i, en)));
            if ((eps * t) * t > $R(1)) {
              for (var j = i; j <= en; j++) {
                sh(j, en - 1, h(j, en - 1) / t);
                sh(j, en, h(j, en) / t);
              }
            }
          }
        }
      }"""

# general complex matrices: Householder reduction to Hessenberg form, then single-shift QR sweeps of
# Givens rotations; H becomes the triangular Schur form T = Z^H x Z
_EIG_COMPLEX_ARRAYS = """
var<private> nn: i32;
fn h(i: i32, j: i32) -> $E { return S(i * nn + j); }
fn sh(i: i32, j: i32, v: $E) { setS(i * nn + j, v); }
fn zz(i: i32, j: i32) -> $E { return S(nn * nn + i * nn + j); }
fn szz(i: i32, j: i32, v: $E) { setS(nn * nn + i * nn + j, v); }
fn yy(i: i32) -> $E { return S(2 * nn * nn + i); }
fn syy(i: i32, v: $E) { setS(2 * nn * nn + i, v); }
fn ev(i: i32, j: i32) -> $E { return zz(i, j); }
fn lam(j: i32) -> $E { return h(j, j); }
"""

# P = I - v v^H / hh (Hermitian, unitary) zeroes column m-1 below the subdiagonal: H = P H P, Z = Z P
_HESSENBERG_STEP = """
      let m = pos + 1;
      var scale = $R(0);
      for (var i = m; i < nn; i++) { scale += av(h(i, m - 1)); }
      if (scale != $R(0)) {
        var hs = $R(0);
        for (var i = m; i < nn; i++) {
          let o = h(i, m - 1) / scale;
          syy(i, o);
          hs += sq(o);
        }
        let g = sqrt(hs);
        let x0 = yy(m);
        let ax0 = av(x0);
        var ph = mk($R(1));
        if (ax0 > $R(0)) { ph = x0 / ax0; }
        syy(m, x0 + ph * g);
        let hh = hs + g * ax0;
        for (var j = m; j < nn; j++) {
          var f = mk($R(0));
          for (var i = m; i < nn; i++) { f += mul(cj(yy(i)), h(i, j)); }
          f = f / hh;
          for (var i = m; i < nn; i++) { sh(i, j, h(i, j) - mul(yy(i), f)); }
        }
        for (var i = 0; i < nn; i++) {
          var f = mk($R(0));
          var fz = mk($R(0));
          for (var j = m; j < nn; j++) {
            f += mul(h(i, j), yy(j));
            fz += mul(zz(i, j), yy(j));
          }
          f = f / hh;
          fz = fz / hh;
          for (var j = m; j < nn; j++) {
            sh(i, j, h(i, j) - mul(f, cj(yy(j))));
            szz(i, j, zz(i, j) - mul(fz, cj(yy(j))));
          }
        }
        sh(m, m - 1, ph * (-g * scale));
        for (var i = m + 1; i < nn; i++) { sh(i, m - 1, mk($R(0))); }
      }"""

# one pass of the QR iteration: a deflation, or one implicit single-shift sweep over rows l..hi
_SCHUR_STEP = """
      let eps = $R($EPS);
      var l = hi;
      loop {
        if (l <= 0) { break; }
        var s = av(h(l - 1, l - 1)) + av(h(l, l));
        if (s == $R(0)) { s = norm; }
        if (av(h(l, l - 1)) <= eps * s) {
          sh(l, l - 1, mk($R(0)));
          break;
        }
        l--;
      }
      if (l == hi) {
        hi--;
        iter = 0;
      } else {
        total++;
        if (total > 40 * nn) { bad = 1; }
        iter++;
        var mu: $E;
        if (iter % 10 == 0) {
          // exceptional shift
          var e = av(h(hi, hi - 1));
          if (hi - 1 > l) { e += av(h(hi - 1, hi - 2)); }
          mu = h(hi, hi) + mk($R(0.75) * e);
        } else {
          // Wilkinson: the eigenvalue of the trailing 2x2 block nearer its last diagonal element
          let a = h(hi - 1, hi - 1);
          let b = h(hi - 1, hi);
          let c = h(hi, hi - 1);
          let d = h(hi, hi);
          let p = (a - d) * $R(0.5);
          let bc = mul(b, c);
          var disc = ${csqrt}(mul(p, p) + bc);
          if (re(mul(cj(p), disc)) < $R(0)) { disc = -disc; }
          let den = p + disc;
          mu = d;
          if (av(den) > $R(0)) { mu = d - ${cdiv}(bc, den); }
        }
        var x = h(l, l) - mu;
        var y = h(l + 1, l);
        for (var k = l; k < hi; k++) {
          if (k > l) {
            x = h(k, k - 1);
            y = h(k + 1, k - 1);
          }
          let nr = sqrt(sq(x) + sq(y));
          if (nr == $R(0)) { continue; }
          let ax = av(x);
          var c = $R(0);
          var s = mk($R(1));
          if (ax > $R(0)) {
            c = ax / nr;
            s = mul(x / ax, cj(y)) / nr;
          }
          // G = [[c, s], [-conj(s), c]] on rows k, k+1; G^H on columns k, k+1 (of H and Z)
          for (var j = select(l, k - 1, k > l); j < nn; j++) {
            let p = h(k, j);
            let q = h(k + 1, j);
            sh(k, j, p * c + mul(s, q));
            sh(k + 1, j, q * c - mul(cj(s), p));
          }
          if (k > l) { sh(k + 1, k - 1, mk($R(0))); }
          for (var i = 0; i <= min(k + 2, hi); i++) {
            let p = h(i, k);
            let q = h(i, k + 1);
            sh(i, k, p * c + mul(q, cj(s)));
            sh(i, k + 1, q * c - mul(p, s));
          }
          for (var i = 0; i < nn; i++) {
            let p = zz(i, k);
            let q = zz(i, k + 1);
            szz(i, k, p * c + mul(q, cj(s)));
            szz(i, k + 1, q * c - mul(p, s));
          }
        }
      }"""

# the eigenvector of T for t_kk by back-substitution (y_k = 1), then Z y in place of Z's column k
_BACKSUB_COMPLEX_STEP = """
      let eps = $R($EPS);
      let k = nn - 1 - pos;
      let lk = h(k, k);
      syy(k, mk($R(1)));
      for (var i = k - 1; i >= 0; i--) {
        var r = mk($R(0));
        for (var j = i + 1; j <= k; j++) { r += mul(h(i, j), yy(j)); }
        var den = h(i, i) - lk;
        if (av(den) == $R(0)) { den = mk(max(eps * norm, $R($TINY))); }
        let yi = -${cdiv}(r, den);
        syy(i, yi);
        let t = av(yi);
        if ((eps * t) * t > $R(1)) {
          for (var j = i; j <= k; j++) { syy(j, yy(j) / t); }
        }
      }
      for (var i = 0; i < nn; i++) {
        var z = mk($R(0));
        for (var j = 0; j <= k; j++) { z += mul(zz(i, j), yy(j)); }
        szz(i, k, z);
      }"""

# eigenvalue lam(j) / sc and eigenvector ev(., j) of unit norm, largest component real and positive;
# NaN where the iteration failed
_EIG_OUTPUT_STEP = """
      let nan = vec2<$R>(${nan}(), ${nan}());
      if (bad == 0) { w_st(pos, lam(pos) / sc); } else { w_st(pos, nan); }
      var nr = $R(0);  //V
      var best = $R(-1);  //V
      var kmax = 0;  //V
      for (var i = 0; i < nn; i++) {  //V
        let z = ev(i, pos);  //V
        let a = z.x * z.x + z.y * z.y;  //V
        nr += a;  //V
        if (a > best) { best = a; kmax = i; }  //V
      }  //V
      nr = sqrt(nr);  //V
      let zk = ev(kmax, pos);  //V
      let ak = sqrt(best);  //V
      var ph = vec2<$R>($R(1), $R(0));  //V
      if (ak > $R(0)) { ph = vec2<$R>(zk.x, -zk.y) / ak; }  //V
      for (var i = 0; i < nn; i++) {  //V
        let z = ev(i, pos);  //V
        let o = vec2<$R>(z.x * ph.x - z.y * ph.y, z.x * ph.y + z.y * ph.x) / nr;  //V
        if (bad == 0) { v_st(i, pos, o); } else { v_st(i, pos, nan); }  //V
      }  //V"""


def _eig_program(n: int, complex_x: bool) -> tuple[str, list[tuple[str, str]], list[_Phase], str]:
    last = "hi" if complex_x else "en"  # the last row of the active block
    state = [("ph", "i"), ("pos", "i"), ("sc", "r"), ("big", "r"), ("bad", "i"), (last, "i"), ("iter", "i"),
             ("total", "i"), ("exshift", "r"), ("norm", "r")]
    iterations = 41 * n + 1  # QR iterations (at most 40 per eigenvalue) and deflations
    first = [
        _Phase("pos >= nn", "nn + 2", """
      for (var j = 0; j < nn; j++) {
        let v = x_ld(pos, j);
        big = max(big, av(v));
        if (!fin(v)) { bad = 1; }
      }""", n, n + 2),
        _Phase("pos >= 1", "2", "      sc = rscale(big);", 1, 2),
    ]
    norm = _Phase("pos >= nn", "nn + 2", f"""
      for (var j = max(pos - 1, 0); j < nn; j++) {{ norm += av(h(pos, j)); }}
      {last} = nn - 1;""", n, n + 2)
    output = _Phase("pos >= nn", "3 * nn + 6", _EIG_OUTPUT_STEP, n, 3 * n + 6)
    if complex_x:
        phases = first + [
            _Phase("pos >= nn", "nn + 2", """
      for (var j = 0; j < nn; j++) {
        sh(pos, j, x_ld(pos, j) * sc);
        szz(pos, j, mk($R(select(0, 1, pos == j))));
      }""", n, n + 2),
            _Phase("pos >= nn - 2", "4 * nn * nn + 4 * nn + 10", _HESSENBERG_STEP, n, 4 * n * n + 4 * n + 10),
            norm,
            _Phase("hi <= 0", "3 * nn * nn + 4 * nn + 20", _SCHUR_STEP, iterations,
                   3 * n * n + 4 * n + 20, advance=False),
            _Phase("pos >= nn", "3 * nn * nn + 2 * nn + 10", _BACKSUB_COMPLEX_STEP, n, 3 * n * n + 2 * n + 10),
            output]
        arrays = _EIG_COMPLEX_ARRAYS
    else:
        phases = first + [
            _Phase("pos >= nn", "nn + 2", "      for (var j = 0; j < nn; j++) { sh(pos, j, x_ld(pos, j) * sc); }",
                   n, n + 2),
            _Phase("pos >= nn - 2", "4 * nn * nn + 4 * nn + 10", _ORTHES_STEP, n, 4 * n * n + 4 * n + 10),
            _Phase("pos >= nn", "nn + 2",
                   "      for (var j = 0; j < nn; j++) { svv(pos, j, $R(select(0, 1, pos == j))); }", n, n + 2),
            _Phase("pos >= nn - 2", "2 * nn * nn + 2 * nn + 10", _ACCUMULATE_STEP, n, 2 * n * n + 2 * n + 10),
            # the Householder vectors' elements below the subdiagonal are no longer needed
            _Phase("pos >= nn", "nn + 2", "      for (var j = 0; j < pos - 1; j++) { sh(pos, j, $R(0)); }",
                   n, n + 2),
            norm,
            _Phase("en < 0", "3 * nn * nn + 8 * nn + 20", _HQR2_STEP, iterations, 3 * n * n + 8 * n + 20,
                   advance=False),
            _Phase("pos >= nn || norm == $R(0)", "2 * nn * nn + 2 * nn + 10", _BACKSUB_REAL_STEP, n,
                   2 * n * n + 2 * n + 10),
            # back-transformation: the eigenvectors of the original matrix
            _Phase("pos >= nn || norm == $R(0)", "nn * nn + 2 * nn + 4", """
      let j = nn - 1 - pos;
      for (var i = 0; i < nn; i++) {
        var z = $R(0);
        for (var k = 0; k <= j; k++) { z = z + vv(i, k) * h(k, j); }
        svv(i, j, z);
      }""", n, n * n + 2 * n + 4),
            output]
        arrays = _EIG_REAL_ARRAYS
    # a matrix with non-finite elements goes straight to the output (NaN)
    top = f"    if (bad != 0 && ph > 1 && ph < {len(phases) - 1}) {{ ph = {len(phases) - 1}; pos = 0; }}\n"
    return arrays, state, phases, top


# --- the launch frame ------------------------------------------------------------------------------

def _per_matrix(client: WebGPUClient, name: str, key, ew: WT, operands: list[_Operand], batch: tuple[int, ...],
                per: int, params: list[tuple[WT, object]], slots: int, dispatches: int,
                make_code: Callable[[Lib], str]) -> None:
    """Run ``make_code(lib)`` (WGSL defining ``fn run()``, with ``$P0``, ``$P1``... for ``params``; ``lib``
    collects the helpers it calls) once per matrix of ``batch``, ``dispatches`` times: operand ``name``
    is read with ``name_ld(i, j)`` and written with ``name_st(i, j, v)`` (indices over its trailing
    dimensions); each invocation has ``slots`` elements of ``ew`` (``slot(k)`` / ``setslot(k, v)``, kept
    between dispatches, ``fresh`` in the first) then ``per`` more (``S(k)`` / ``setS(k, v)``)."""
    count = math.prod(batch)
    if count == 0:
        return
    # batch dimensions merged where every operand allows (one dimension for contiguous stacks)
    bdims, bstrides = (collapse(batch, [o.t._strides[:len(batch)] for o in operands]) if batch
                       else ((1,), [(0,)] * len(operands)))
    nb = len(bdims)
    lay = Layout()
    W = Layout.word
    first_k, per_k, fresh_k = lay.alloc(1), lay.alloc(1), lay.alloc(1)
    dims_k = lay.alloc(nb)
    op_k = [lay.alloc(1 + nb + o.nd) for o in operands]
    pexprs = [lay.scalar(w) for w, _ in params]
    pkey = ("eigen", name, key, ew.dtype, nb, tuple((o.t._dtype, o.nd) for o in operands),
            tuple(w.dtype for w, _ in params))
    pipe = client.cached_pipeline(pkey)
    if pipe is None:
        lib = Lib(client.has_f64)
        tensors = [(ew, True, True)] + [(wt(o.t._dtype), o.written, False) for o in operands]
        src = [(f"var<private> sb: u32;\nvar<private> fresh: bool;\n"
                f"fn slot(k: i32) -> {ew.ct} {{ return ld1(sb + u32(k)); }}\n"
                f"fn setslot(k: i32, v: {ew.ct}) {{ st1(sb + u32(k), v); }}\n"
                f"fn S(k: i32) -> {ew.ct} {{ return ld1(sb + u32(k + {slots})); }}\n"
                f"fn setS(k: i32, v: {ew.ct}) {{ st1(sb + u32(k + {slots}), v); }}\n")]
        for b, (o, k) in enumerate(zip(operands, op_k), start=2):
            ct = wt(o.t._dtype).ct
            idx = ", ".join(f"i{d}: i32" for d in range(o.nd))
            elem = " + ".join([f"o{b}"] + [f"i{d} * bitcast<i32>({W(k + 1 + nb + d)})" for d in range(o.nd)])
            src.append(f"var<private> o{b}: i32;\n")
            if o.written:
                src.append(f"fn {o.name}_st({idx}{', ' if idx else ''}v: {ct}) {{ st{b}(u32({elem}), v); }}\n")
            else:
                src.append(f"fn {o.name}_ld({idx}) -> {ct} {{ return ld{b}(u32({elem})); }}\n")
        body = Template(make_code(lib)).substitute({f"P{j}": e for j, e in enumerate(pexprs)})
        main = [main_header(WG), (f"  sb = i * {W(per_k)};\n  fresh = {W(fresh_k)} != 0u;\n"
                                  f"  var q = i + {W(first_k)};\n")]
        for d in range(nb - 1, -1, -1):
            main.append(f"  let c{d} = i32(q % {W(dims_k + d)});\n  q = q / {W(dims_k + d)};\n")
        for b, k in enumerate(op_k, start=2):
            main.append(f"  o{b} = " + " + ".join([f"bitcast<i32>({W(k)})"] + [
                f"c{d} * bitcast<i32>({W(k + 1 + d)})" for d in range(nb)]) + ";\n")
        main.append("  run();\n}\n")

        def source() -> str:
            return lay.block() + bindings(tensors) + lib.source() + "".join(src) + body + "".join(main)

        pipe = client.pipeline(pkey, source, len(tensors), lay.nbytes)
    binds: tuple = ()
    opwords: list[int] = []
    for o, bst in zip(operands, bstrides):
        t = o.t
        if t.size == 0:  # nothing of it is read or written: any small binding will do
            t = _temp(client, (1,), t._dtype)
        b0, size, e0 = window(client, t)
        if size > client.max_binding:
            raise MemoryError(f"{client.device}: an operand of {size} bytes exceeds the adapter's largest storage "
                              f"binding ({client.max_binding} bytes)")
        binds += (t._buf.handle, b0, size)
        opwords += [e0] + [s & 0xFFFFFFFF for s in bst] + [s & 0xFFFFFFFF for s in o.t._strides[len(batch):]]
    tail: list[int] = []
    for w, v in params:
        tail += scalar_words(w, v)
    isz = ew.dtype.itemsize
    per += slots
    if per * isz > client.max_binding:
        raise MemoryError(f"{client.device}: {name} of a matrix this large needs {per * isz} bytes of scratch, more "
                          f"than the adapter's largest storage binding ({client.max_binding} bytes)")
    chunk = min(count, client.max_binding // (per * isz))
    scratch = _temp(client, (chunk * per,), ew.dtype)
    sbind = (scratch._buf.handle, 0, max(16, chunk * per * isz))
    for first in range(0, count, chunk):
        todo = min(chunk, count - first)
        grid = groups(todo, WG)
        for d in range(dispatches):
            words = [todo, grid[0], 0, 0, first, per, int(d == 0)] + list(bdims) + opwords + tail
            client.dispatch(pipe, pack_words(words), sbind + binds, grid)


def _run_program(client, name: str, key, x: Tensor, operands: list[_Operand], program, vectors: bool,
                 params: list[tuple[WT, object]], per: int, prologue: str, **extra: str) -> None:
    """Launch ``program`` ((arrays, state, phases[, top]) WGSL pieces) once per matrix of x."""
    arrays, state, phases, *top = program
    ew = COMPUTE[wt(x._dtype)]

    def make_code(lib: Lib) -> str:
        run = _machine(state, prologue, phases, *top)
        return _subst(ew, lib, arrays + run, vectors, **extra)

    _per_matrix(client, name, key, ew, [_Operand("x", x, 2, False)] + operands, x._shape[:-2], per, params,
                len(state), _dispatches(phases, *top), make_code)


def _subst(ew: WT, lib: Lib, template: str, vectors: bool, **extra: str) -> str:
    """``template`` instantiated for element type ``ew``: the type helpers, then the algorithm (with the
    pieces in ``extra``, themselves templates, substituted until none is left; ``$P0``... stay for
    _per_matrix). Lines marked ``//V`` compute eigen- or singular vectors: dropped without ``vectors``."""
    r = _real(ew)
    f64 = r.ct == "f64"
    names = {"E": ew.ct, "R": r.ct, "fabs": lib.fn("fabs", r), "EPS": repr(_eps(r)), "BIG": "1e150" if f64 else "1e18",
             "SWEEPS": str(MAX_SWEEPS), "TINY": "1e-300" if f64 else "1e-37", "nan": lib.fn("nan", r),
             "isfinite": lib.fn("isfinite", r), "ROTATION": _ROTATION, "BUDGET": str(BUDGET)}
    if ew.family == "c":
        names.update(hypot=lib.fn("hypot", r), csqrt=lib.fn("csqrt", ew), cdiv=lib.fn("cdiv", ew))
    names.update(extra)
    text = (_COMPLEX_OPS if ew.family == "c" else _REAL_OPS) + _RSCALE[r.ct] + template
    while True:
        done = Template(text).safe_substitute(names)
        if done == text:
            break
        text = done
    if not vectors:
        text = "\n".join(line for line in text.split("\n") if not line.endswith("//V"))
    return text


def _eps(r: WT) -> float:
    return 2.0 ** -52 if r.ct == "f64" else 2.0 ** -23


def _real(w: WT) -> WT:
    return w.real if w.family == "c" else w


# --- kernels ---------------------------------------------------------------------------------------

def _eigh(vectors: bool):
    def kernel(client, ins, outs, p):
        x = ins[0]
        n = x._shape[-1]
        ops = [_Operand("w", outs[0], 1, True)] + ([_Operand("v", outs[1], 2, True)] if vectors else [])
        _run_program(client, "eigh", vectors, x, ops, _eigh_program(n, vectors), vectors, [(I32, n)],
                     (2 if vectors else 1) * n * n, "  n = $P0;\n")
    return kernel


def _eig(vectors: bool):
    def kernel(client, ins, outs, p):
        x = ins[0]
        n = x._shape[-1]
        complex_x = wt(x._dtype).family == "c"
        ops = [_Operand("w", outs[0], 1, True)] + ([_Operand("v", outs[1], 2, True)] if vectors else [])
        _run_program(client, "eig", vectors, x, ops, _eig_program(n, complex_x), vectors, [(I32, n)],
                     2 * n * n + (n if complex_x else 3 * n), "  nn = $P0;\n")
    return kernel


def _svd_run(client, kind: str, x: Tensor, ops: list[_Operand], full: bool, params: list[tuple[WT, object]],
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
    return {"eigh": _eigh(True), "eigvalsh": _eigh(False), "eig": _eig(True), "eigvals": _eig(False),
            "svd": _svd, "svdvals": _svdvals, "matrix_rank": _matrix_rank, "pinv": _pinv}
