"""Eigenvalues and eigenvectors of general matrices: eig and eigvals, for float32, float64, complex64 and
complex128 (phase machines of ``_phase_machine``).

- eig, eigvals of real x: Householder reduction to Hessenberg form and the Francis double-shift QR
  algorithm with eigenvector back-substitution (EISPACK's orthes/hqr2, as in JAMA), so complex
  eigenvalues come in exact conjugate pairs; of complex x: the same reduction and a single-shift complex
  QR algorithm (Wilkinson shifts), with back-substitution on the triangular Schur form. Eigenvectors
  have unit norm and their largest component real and positive (LAPACK's normalisation, up to that
  phase); the order of the eigenvalues is the Schur form's, which may differ from NumPy's.
"""

from __future__ import annotations

from ._phase_machine import I32, _Operand, _Phase, _run_program
from ._types import wt

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


# --- kernels ---------------------------------------------------------------------------------------

def _eig(vectors: bool):
    def kernel(client, ins, outs, p):
        x = ins[0]
        n = x._shape[-1]
        complex_x = wt(x._dtype).family == "c"
        ops = [_Operand("w", outs[0], 1, True)] + ([_Operand("v", outs[1], 2, True)] if vectors else [])
        _run_program(client, "eig", vectors, x, ops, _eig_program(n, complex_x), vectors, [(I32, n)],
                     2 * n * n + (n if complex_x else 3 * n), "  nn = $P0;\n")
    return kernel


def kernels() -> dict:
    return {"eig": _eig(True), "eigvals": _eig(False)}
