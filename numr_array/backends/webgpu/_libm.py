"""Transcendental functions in WGSL.

float64: ports of fdlibm (FreeBSD msun) computed with f64 arithmetic and integer bit manipulation only,
because drivers' f64 builtins may be inaccurate (lavapipe's f64 sin, exp and log are wrong outright).
Arguments of sin/cos/tan beyond 2^20*pi/2 are reduced exactly with integer arithmetic (Payne-Hanek on
u32 limbs against 1280 bits of 2/pi). Where fdlibm relies on an exact error term (``(a - (a - b)) - b``),
the intermediate passes through ``opq_f64``, an OR with a uniform word that is always 0, so that a
compiler assuming no NaN/infinity cannot reassociate the sequence away.

float32: where the device has float64, sin, cos and tan are FreeBSD msun's float32 functions
(``_F32``): float64 polynomials of degree 9 (sin), 8 (cos) and 13 (tan) on x - n*pi/2 reduced in float64
with pi/2 in two parts (e_rem_pio2f.c) for |x| < 2^28*pi/2, beyond that exactly from a 96-bit window of
2/pi's bits (``rempio2fbig_f32``, a function of its own called from that branch alone); sin and cos are
within 0.501 ulp, 99.97% correctly rounded, tan within 0.8 ulp. They are a fraction of the float64
functions' code, which matters because a fused chain of captured launches inlines them at every step.
sin and tan of |x| < 2^-12 (zeros and subnormals among them) are x itself, returned without a float64
conversion, so that an adapter that flushes float32 subnormals still returns them (cos is 1 there, of a
flushed 0 too). The other float32 functions are the
float64 ones on the operand widened from its bits, narrowed back to bits. Without float64: the WGSL
builtins with the special cases fixed up.

``fmaex``: a fused multiply-add with one rounding (drivers may implement the ``fma`` builtin as a product
and a sum); complex multiplication uses it to match NumPy's loops.
"""

from __future__ import annotations

from ._types import WgslType, F32, F64

BINARY = ("atan2", "pow")

_TWO_OVER_PI = (
    "0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, "
    "0xb7246e3au, 0x424dd2e0u, 0x06492eeau, 0x09d1921cu, 0xfe1deb1cu, 0xb129a73eu, 0xe88235f5u, 0x2ebb4484u, "
    "0xe99c7026u, 0xb45f7e41u, 0x3991d639u, 0x835339f4u, 0x9c845f8bu, 0xbdf9283bu, 0x1ff897ffu, 0xde05980fu, "
    "0xef2f118bu, 0x5a0a6d1fu, 0x6d367ecfu, 0x27cb09b7u, 0x4f463f66u, 0x9e5fea2du, 0x7527bac7u, 0xebe5f17bu, "
    "0x3d0739f7u, 0x8a5292eau, 0x6bfb5fb1u, 0x1f8d5d08u, 0x56033046u, 0xfc7b6babu, 0xf0cfbc20u, 0x9af4361du")

# name -> (helpers it calls, WGSL). Helper names here are the f64 ones.
_F64: dict[str, tuple[tuple[str, ...], str]] = {}


def _def(name: str, deps: tuple[str, ...], code: str) -> None:
    _F64[name] = (deps, code)


_def("words", ("isnan", "inf", "nan", "opq"), """
fn hi_f64(x: f64) -> i32 { return bitcast<i32>(u32(bitcast<u64>(x) >> 32u)); }
fn lo_f64(x: f64) -> u32 { return u32(bitcast<u64>(x) & 0xfffffffflu); }
fn mk_f64(hi: i32, lo: u32) -> f64 { return bitcast<f64>((u64(bitcast<u32>(hi)) << 32u) | u64(lo)); }
fn sethi_f64(x: f64, hi: i32) -> f64 { return mk_f64(hi, lo_f64(x)); }
fn setlo0_f64(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu); }
fn pow2_f64(k: i32) -> f64 { return bitcast<f64>(u64(bitcast<u32>(k + 1023)) << 52u); }
""")

# fma(a, b, c) with one rounding, whatever the driver does with the builtin (lavapipe computes it as a
# product and a sum, each rounded): the product of the 53-bit significands is formed exactly in 128 bits
# (u64 pairs), c is aligned to it (bits shifted out kept as a sticky bit), and the sum is rounded to
# nearest even, into the subnormal range or to infinity as IEEE 754 does.
_def("fmaex", (), """
struct u128_f64 { hi: u64, lo: u64 }
fn clz64_f64(x: u64) -> u32 {
  let h = u32(x >> 32u);
  if (h != 0u) { return countLeadingZeros(h); }
  return 32u + countLeadingZeros(u32(x & 0xfffffffflu));
}
fn clz128_f64(x: u128_f64) -> u32 {
  if (x.hi != 0lu) { return clz64_f64(x.hi); }
  return 64u + clz64_f64(x.lo);
}
fn shl128_f64(x: u128_f64, n: u32) -> u128_f64 {
  if (n == 0u) { return x; }
  if (n >= 128u) { return u128_f64(0lu, 0lu); }
  if (n >= 64u) { return u128_f64(x.lo << (n - 64u), 0lu); }
  return u128_f64((x.hi << n) | (x.lo >> (64u - n)), x.lo << n);
}
fn shr128_f64(x: u128_f64, n: u32) -> u128_f64 {
  if (n == 0u) { return x; }
  if (n >= 128u) { return u128_f64(0lu, 0lu); }
  if (n >= 64u) { return u128_f64(0lu, x.hi >> (n - 64u)); }
  return u128_f64(x.hi >> n, (x.lo >> n) | (x.hi << (64u - n)));
}
fn add128_f64(a: u128_f64, b: u128_f64) -> u128_f64 {
  let lo = a.lo + b.lo;
  return u128_f64(a.hi + b.hi + select(0lu, 1lu, lo < a.lo), lo);
}
fn sub128_f64(a: u128_f64, b: u128_f64) -> u128_f64 {
  return u128_f64(a.hi - b.hi - select(0lu, 1lu, a.lo < b.lo), a.lo - b.lo);
}
fn lt128_f64(a: u128_f64, b: u128_f64) -> bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
fn eq128_f64(a: u128_f64, b: u128_f64) -> bool { return a.hi == b.hi && a.lo == b.lo; }
fn mul64_f64(a: u64, b: u64) -> u128_f64 {
  let m = 0xfffffffflu;
  let a0 = a & m; let a1 = a >> 32u; let b0 = b & m; let b1 = b >> 32u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = (p00 >> 32u) + (p01 & m) + (p10 & m);
  return u128_f64(a1 * b1 + (p01 >> 32u) + (p10 >> 32u) + (mid >> 32u), (mid << 32u) | (p00 & m));
}
fn fmaex_f64(a: f64, b: f64, c: f64) -> f64 {
  let ua = bitcast<u64>(a); let ub = bitcast<u64>(b); let uc = bitcast<u64>(c);
  let ea = i32((ua >> 52u) & 0x7fflu); let eb = i32((ub >> 52u) & 0x7fflu); let ec = i32((uc >> 52u) & 0x7fflu);
  let mant = 0x000ffffffffffffflu;
  let absm = 0x7ffffffffffffffflu;
  if (ea == 0x7ff || eb == 0x7ff) { return a * b + c; }
  // a * b is finite, so an infinite or NaN c is the result (a rounded a * b could overflow against it)
  if (ec == 0x7ff) { return c; }
  if ((ua & absm) == 0lu || (ub & absm) == 0lu) { return a * b + c; }
  if ((uc & absm) == 0lu) { return a * b; }
  let ma = (ua & mant) | select(0x0010000000000000lu, 0lu, ea == 0);
  let mb = (ub & mant) | select(0x0010000000000000lu, 0lu, eb == 0);
  let mc = (uc & mant) | select(0x0010000000000000lu, 0lu, ec == 0);
  // values: P * 2^ep and C * 2^ecx, both normalised to their top bit at bit 125
  var p = mul64_f64(ma, mb);
  let sp = clz128_f64(p) - 2u;
  p = shl128_f64(p, sp);
  let ep = max(ea, 1) + max(eb, 1) - 2150 - i32(sp);
  var q = u128_f64(0lu, mc);
  let sq = clz128_f64(q) - 2u;
  q = shl128_f64(q, sq);
  let eq = max(ec, 1) - 1075 - i32(sq);
  let negp = ((ua ^ ub) >> 63u) != 0lu;
  let negc = (uc >> 63u) != 0lu;
  // x: the operand of larger magnitude; y is shifted to its exponent, lost bits kept as a sticky bit
  var x = p; var y = q; var ex = ep; var ey = eq; var neg = negp;
  if (eq > ep || (eq == ep && lt128_f64(p, q))) { x = q; y = p; ex = eq; ey = ep; neg = negc; }
  let d = u32(min(ex - ey, 200));
  var ys = shr128_f64(y, d);
  if (!eq128_f64(shl128_f64(ys, d), y) || (d >= 128u && !eq128_f64(y, u128_f64(0lu, 0lu)))) { ys.lo = ys.lo | 1lu; }
  var z: u128_f64;
  if (negp == negc) { z = add128_f64(x, ys); } else { z = sub128_f64(x, ys); }
  if (eq128_f64(z, u128_f64(0lu, 0lu))) { return f64(0); }
  let sign = select(0lu, 0x8000000000000000lu, neg);
  let t = 127 - i32(clz128_f64(z));
  // keep 53 bits, or fewer where the result is subnormal (its last bit weighs 2^-1074)
  let s = max(t - 52, -1074 - ex);
  var m: u64;
  if (s <= 0) {
    m = shl128_f64(z, u32(-s)).lo;
  } else if (s >= 128) {
    m = 0lu;
  } else {
    let qz = shr128_f64(z, u32(s));
    let rem = sub128_f64(z, shl128_f64(qz, u32(s)));
    let half = shl128_f64(u128_f64(0lu, 1lu), u32(s - 1));
    m = qz.lo;
    if (lt128_f64(half, rem) || (eq128_f64(rem, half) && (m & 1lu) != 0lu)) { m = m + 1lu; }
  }
  var e = ex + s;
  if (m == 0x0020000000000000lu) { m = m >> 1u; e = e + 1; }
  if (m < 0x0010000000000000lu) { return bitcast<f64>(sign | m); }
  let biased = e + 1075;
  if (biased >= 0x7ff) { return bitcast<f64>(sign | 0x7ff0000000000000lu); }
  return bitcast<f64>(sign | (u64(biased) << 52u) | (m & mant));
}
""")

_def("exp", ("words",), """
fn exp_f64(x0: f64) -> f64 {
  var x = x0;
  let hx0 = hi_f64(x);
  let neg = hx0 < 0;
  let hx = hx0 & 0x7fffffff;
  if (hx >= 0x40862E42) {
    if (hx >= 0x7ff00000) {
      if (isnan_f64(x)) { return x; }
      return select(x, f64(0), neg);
    }
    if (x > f64(7.09782712893383973096e+02)) { return inf_f64(); }
    if (x < f64(-7.45133219101941108420e+02)) { return f64(0); }
  }
  var hi = f64(0);
  var lo = f64(0);
  var k = 0;
  if (hx > 0x3fd62e42) {
    if (hx < 0x3FF0A2B2) {
      if (!neg) { hi = x - f64(6.93147180369123816490e-01); lo = f64(1.90821492927058770002e-10); k = 1; }
      else { hi = x + f64(6.93147180369123816490e-01); lo = f64(-1.90821492927058770002e-10); k = -1; }
    } else {
      k = i32(f64(1.44269504088896338700e+00) * x + select(f64(0.5), f64(-0.5), neg));
      let t = f64(k);
      hi = x - t * f64(6.93147180369123816490e-01);
      lo = t * f64(1.90821492927058770002e-10);
    }
    x = hi - lo;
  } else if (hx < 0x3e300000) {
    return f64(1) + x;
  }
  let t = x * x;
  let c = x - t * (f64(1.66666666666666019037e-01) + t * (f64(-2.77777777770155933842e-03) + t * (
      f64(6.61375632143793436117e-05) + t * (f64(-1.65339022054652515390e-06) + t * f64(4.13813679705723846039e-08)))));
  if (k == 0) { return f64(1) - ((x * c) / (c - f64(2)) - x); }
  let y = f64(1) - ((lo - (x * c) / (f64(2) - c)) - hi);
  if (k == 1024) { return opq_f64(y * f64(2)) * pow2_f64(1023); }
  if (k >= -1021) { return y * pow2_f64(k); }
  return y * pow2_f64(k + 1000) * f64(9.33263618503218878990e-302);
}
""")

_def("log", ("words",), """
fn log_f64(x0: f64) -> f64 {
  var x = x0;
  var hx = hi_f64(x);
  let lx = lo_f64(x);
  var k = 0;
  if (hx < 0x00100000) {
    if (((hx & 0x7fffffff) | bitcast<i32>(lx)) == 0) { return -inf_f64(); }
    if (hx < 0) { return nan_f64(); }
    k = -54;
    x = x * f64(1.80143985094819840000e+16);
    hx = hi_f64(x);
  }
  if (hx >= 0x7ff00000) { return x + x; }
  k = k + ((hx >> 20u) - 1023);
  hx = hx & 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  x = sethi_f64(x, hx | (i ^ 0x3ff00000));
  k = k + (i >> 20u);
  let f = x - f64(1);
  let dk = f64(k);
  if ((0x000fffff & (2 + hx)) < 3) {
    if (f == f64(0)) {
      if (k == 0) { return f64(0); }
      return dk * f64(6.93147180369123816490e-01) + dk * f64(1.90821492927058770002e-10);
    }
    let r = f * f * (f64(0.5) - f64(0.33333333333333333) * f);
    if (k == 0) { return f - r; }
    return dk * f64(6.93147180369123816490e-01) - ((r - dk * f64(1.90821492927058770002e-10)) - f);
  }
  let s = f / (f64(2) + f);
  let z = s * s;
  let w = z * z;
  let ii = (hx - 0x6147a) | (0x6b851 - hx);
  let t1 = w * (f64(3.999999999940941908e-01) + w * (f64(2.222219843214978396e-01) + w * f64(1.531383769920937332e-01)));
  let t2 = z * (f64(6.666666666666735130e-01) + w * (f64(2.857142874366239149e-01) + w * (
      f64(1.818357216161805012e-01) + w * f64(1.479819860511658591e-01))));
  let r = t2 + t1;
  if (ii > 0) {
    let hfsq = f64(0.5) * f * f;
    if (k == 0) { return f - (hfsq - s * (hfsq + r)); }
    return dk * f64(6.93147180369123816490e-01) - ((hfsq - (s * (hfsq + r) + dk * f64(1.90821492927058770002e-10))) - f);
  }
  if (k == 0) { return f - s * (f - r); }
  return dk * f64(6.93147180369123816490e-01) - ((s * (f - r) - dk * f64(1.90821492927058770002e-10)) - f);
}
""")

# log2 and log10 (FreeBSD e_log2.c / e_log10.c): log(1+f) split in hi+lo, scaled with split constants
_def("klog", ("words",), """
struct KLog { k: f64, f: f64, hfsq: f64, r: f64, special: f64, is_special: bool }
fn klog_f64(x0: f64) -> KLog {
  var x = x0;
  var hx = hi_f64(x);
  let lx = lo_f64(x);
  var k = 0;
  if (hx < 0x00100000) {
    if (((hx & 0x7fffffff) | bitcast<i32>(lx)) == 0) { return KLog(0.0, 0.0, 0.0, 0.0, -inf_f64(), true); }
    if (hx < 0) { return KLog(0.0, 0.0, 0.0, 0.0, nan_f64(), true); }
    k = -54;
    x = x * f64(1.80143985094819840000e+16);
    hx = hi_f64(x);
  }
  if (hx >= 0x7ff00000) { return KLog(0.0, 0.0, 0.0, 0.0, x + x, true); }
  if (hx == 0x3ff00000 && lx == 0u) { return KLog(0.0, 0.0, 0.0, 0.0, f64(0), true); }
  k = k + ((hx >> 20u) - 1023);
  hx = hx & 0x000fffff;
  let i = (hx + 0x95f64) & 0x100000;
  x = sethi_f64(x, hx | (i ^ 0x3ff00000));
  k = k + (i >> 20u);
  let f = x - f64(1);
  let hfsq = f64(0.5) * f * f;
  let s = f / (f64(2) + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (f64(3.999999999940941908e-01) + w * (f64(2.222219843214978396e-01) + w * f64(1.531383769920937332e-01)));
  let t2 = z * (f64(6.666666666666735130e-01) + w * (f64(2.857142874366239149e-01) + w * (
      f64(1.818357216161805012e-01) + w * f64(1.479819860511658591e-01))));
  return KLog(f64(k), f, hfsq, s * (hfsq + t2 + t1), 0.0, false);
}
""")

_def("log2", ("klog",), """
fn log2_f64(x: f64) -> f64 {
  let q = klog_f64(x);
  if (q.is_special) { return q.special; }
  let hi = setlo0_f64(q.f - q.hfsq);
  let lo = (q.f - hi) - q.hfsq + q.r;
  var val_hi = hi * f64(1.44269504072144627571e+00);
  var val_lo = (lo + hi) * f64(1.67517131648865118353e-10) + lo * f64(1.44269504072144627571e+00);
  let w = opq_f64(q.k + val_hi);
  val_lo = val_lo + ((q.k - w) + val_hi);
  val_hi = w;
  return val_lo + val_hi;
}
""")

_def("log10", ("klog",), """
fn log10_f64(x: f64) -> f64 {
  let q = klog_f64(x);
  if (q.is_special) { return q.special; }
  let hi = setlo0_f64(q.f - q.hfsq);
  let lo = (q.f - hi) - q.hfsq + q.r;
  var val_hi = hi * f64(4.34294481878168880939e-01);
  let y2 = q.k * f64(3.01029995663611771306e-01);
  var val_lo = q.k * f64(3.69423907715893078616e-13) + (lo + hi) * f64(2.50829467116452752298e-11)
      + lo * f64(4.34294481878168880939e-01);
  let w = opq_f64(y2 + val_hi);
  val_lo = val_lo + ((y2 - w) + val_hi);
  val_hi = w;
  return val_lo + val_hi;
}
""")

_def("log1p", ("words",), """
fn log1p_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  let ax = hx & 0x7fffffff;
  var k = 1;
  var f = f64(0);
  var hu = 0;
  var c = f64(0);
  if (hx < 0x3FDA827A) {
    if (ax >= 0x3ff00000) {
      if (x == f64(-1)) { return -inf_f64(); }
      return nan_f64();
    }
    if (ax < 0x3e200000) {
      if (ax < 0x3c900000) { return x; }
      return x - x * x * f64(0.5);
    }
    if (hx > 0 || hx <= bitcast<i32>(0xbfd2bec4u)) { k = 0; f = x; hu = 1; }
  }
  if (hx >= 0x7ff00000) { return x + x; }
  var u = x;
  if (k != 0) {
    if (hx < 0x43400000) {
      u = opq_f64(f64(1) + x);
      hu = hi_f64(u);
      k = (hu >> 20u) - 1023;
      c = select(x - (u - f64(1)), f64(1) - (u - x), k > 0);
      c = c / u;
    } else {
      hu = hi_f64(u);
      k = (hu >> 20u) - 1023;
      c = f64(0);
    }
    hu = hu & 0x000fffff;
    if (hu < 0x6a09e) {
      u = sethi_f64(u, hu | 0x3ff00000);
    } else {
      k = k + 1;
      u = sethi_f64(u, hu | 0x3fe00000);
      hu = (0x00100000 - hu) >> 2u;
    }
    f = u - f64(1);
  }
  let hfsq = f64(0.5) * f * f;
  let dk = f64(k);
  if (hu == 0) {
    if (f == f64(0)) {
      if (k == 0) { return f64(0); }
      c = c + dk * f64(1.90821492927058770002e-10);
      return dk * f64(6.93147180369123816490e-01) + c;
    }
    let r = hfsq * (f64(1) - f64(0.66666666666666666) * f);
    if (k == 0) { return f - r; }
    return dk * f64(6.93147180369123816490e-01) - ((r - (dk * f64(1.90821492927058770002e-10) + c)) - f);
  }
  let s = f / (f64(2) + f);
  let z = s * s;
  let r = z * (f64(6.666666666666735130e-01) + z * (f64(3.999999999940941908e-01) + z * (f64(2.857142874366239149e-01)
      + z * (f64(2.222219843214978396e-01) + z * (f64(1.818357216161805012e-01) + z * (f64(1.531383769920937332e-01)
      + z * f64(1.479819860511658591e-01)))))));
  if (k == 0) { return f - (hfsq - s * (hfsq + r)); }
  return dk * f64(6.93147180369123816490e-01) - ((hfsq - (s * (hfsq + r) + (dk * f64(1.90821492927058770002e-10) + c))) - f);
}
""")

_def("expm1", ("words",), """
fn expm1_f64(x0: f64) -> f64 {
  var x = x0;
  let hx0 = hi_f64(x);
  let neg = hx0 < 0;
  let hx = hx0 & 0x7fffffff;
  if (hx >= 0x4043687A) {
    if (hx >= 0x40862E42) {
      if (hx >= 0x7ff00000) {
        if (isnan_f64(x)) { return x; }
        return select(x, f64(-1), neg);
      }
      if (x > f64(7.09782712893383973096e+02)) { return inf_f64(); }
    }
    if (neg) { return f64(-1); }
  }
  var k = 0;
  var c = f64(0);
  if (hx > 0x3fd62e42) {
    var hi: f64;
    var lo: f64;
    if (hx < 0x3FF0A2B2) {
      if (!neg) { hi = x - f64(6.93147180369123816490e-01); lo = f64(1.90821492927058770002e-10); k = 1; }
      else { hi = x + f64(6.93147180369123816490e-01); lo = f64(-1.90821492927058770002e-10); k = -1; }
    } else {
      k = i32(f64(1.44269504088896338700e+00) * x + select(f64(0.5), f64(-0.5), neg));
      let t = f64(k);
      hi = x - t * f64(6.93147180369123816490e-01);
      lo = t * f64(1.90821492927058770002e-10);
    }
    x = opq_f64(hi - lo);
    c = (hi - x) - lo;
  } else if (hx < 0x3c900000) {
    return x;
  }
  let hfx = f64(0.5) * x;
  let hxs = x * hfx;
  let r1 = f64(1) + hxs * (f64(-3.33333333333331316428e-02) + hxs * (f64(1.58730158725481460165e-03) + hxs * (
      f64(-7.93650757867487942473e-05) + hxs * (f64(4.00821782732936239552e-06) + hxs * f64(-2.01099218183624371326e-07)))));
  let t = f64(3) - r1 * hfx;
  var e = hxs * ((r1 - t) / (f64(6) - x * t));
  if (k == 0) { return x - (x * e - hxs); }
  e = (x * (e - c) - c);
  e = e - hxs;
  if (k == -1) { return f64(0.5) * (x - e) - f64(0.5); }
  if (k == 1) {
    if (x < f64(-0.25)) { return f64(-2) * (e - (x + f64(0.5))); }
    return f64(1) + f64(2) * (x - e);
  }
  if (k <= -2 || k > 56) {
    var y = f64(1) - (e - x);
    if (k == 1024) { y = opq_f64(y * f64(2)) * pow2_f64(1023); } else { y = y * pow2_f64(k); }
    return y - f64(1);
  }
  if (k < 20) {
    let t1 = mk_f64(0x3ff00000 - (0x200000 >> u32(k)), 0u);
    return (t1 - (e - x)) * pow2_f64(k);
  }
  let t2 = mk_f64((0x3ff - k) << 20u, 0u);
  return ((x - (e + t2)) + f64(1)) * pow2_f64(k);
}
""")

# 2/pi's bits from bit p on (bit 0 weighs 2^-1): the exact reductions of huge arguments (float64, float32)
_def("twoopi", (), """
var<private> TWO_OVER_PI: array<u32, 40> = array<u32, 40>(%(TWO_OVER_PI)s);
fn twoopi_bits(p: i32) -> u32 {
  let w = p >> 5u;
  let s = u32(p & 31);
  if (s == 0u) { return TWO_OVER_PI[w]; }
  return (TWO_OVER_PI[w] << s) | (TWO_OVER_PI[w + 1] >> (32u - s));
}
""" % {"TWO_OVER_PI": _TWO_OVER_PI})

_def("trig", ("words", "twoopi"), """
fn ksin_f64(x: f64, y: f64, iy: i32) -> f64 {
  let z = x * x;
  let v = z * x;
  let r = f64(8.33333333332248946124e-03) + z * (f64(-1.98412698298579493134e-04) + z * (f64(2.75573137070700676789e-06)
      + z * (f64(-2.50507602534068634195e-08) + z * f64(1.58969099521155010221e-10))));
  if (iy == 0) { return x + v * (f64(-1.66666666666666324348e-01) + z * r); }
  return x - ((z * (f64(0.5) * y - v * r) - y) - v * f64(-1.66666666666666324348e-01));
}
fn kcos_f64(x: f64, y: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = z * (f64(4.16666666666666019037e-02) + z * (f64(-1.38888888888741095749e-03) + z * f64(2.48015872894767294178e-05)))
      + w * w * (f64(-2.75573143513906633035e-07) + z * (f64(2.08757232129817482790e-09) + z * f64(-1.13596475577881948265e-11)));
  let hz = f64(0.5) * z;
  let w1 = opq_f64(f64(1) - hz);
  return w1 + (((f64(1) - w1) - hz) + (z * r - x * y));
}
fn ktan_f64(x0: f64, y0: f64, iy: i32) -> f64 {
  var x = x0;
  var y = y0;
  let hx = hi_f64(x);
  let big = (hx & 0x7fffffff) >= 0x3FE59428;
  if (big) {
    if (hx < 0) { x = -x; y = -y; }
    x = (f64(7.85398163397448278999e-01) - x) + (f64(3.06161699786838301793e-17) - y);
    y = f64(0);
  }
  let z = x * x;
  let w = z * z;
  var r = f64(1.33333333333201242699e-01) + w * (f64(2.18694882948595424599e-02) + w * (f64(3.59207910759131235356e-03)
      + w * (f64(5.88041240820264096874e-04) + w * (f64(7.81794442939557092300e-05) + w * f64(-1.85586374855275456654e-05)))));
  let v = z * (f64(5.39682539762260521377e-02) + w * (f64(8.86323982359930005737e-03) + w * (f64(1.45620945432529025516e-03)
      + w * (f64(2.46463134818469906812e-04) + w * (f64(7.14072491382608190305e-05) + w * f64(2.59073051863633712884e-05))))));
  let s = z * x;
  r = y + z * (s * (r + v) + y);
  r = r + f64(3.33333333333334091986e-01) * s;
  let w2 = opq_f64(x + r);
  if (big) {
    let fv = f64(iy);
    return f64(1 - ((hx >> 30u) & 2)) * (fv - f64(2) * (x - (w2 * w2 / (w2 + fv) - r)));
  }
  if (iy == 1) { return w2; }
  let z2 = setlo0_f64(w2);
  let v2 = r - (z2 - x);
  let a = f64(-1) / w2;
  let t = setlo0_f64(a);
  let s2 = f64(1) + t * z2;
  return t + a * (s2 + t * v2);
}
struct RemPio2 { n: i32, y0: f64, y1: f64 }
fn rempio2_f64(x: f64) -> RemPio2 {
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  if (ix <= 0x413921fb) {
    let fn0 = floor(x * f64(6.36619772367581382433e-01) + f64(0.5));
    var r = opq_f64(x - fn0 * f64(1.57079632673412561417e+00));
    var w = fn0 * f64(6.07710050650619224932e-11);
    let j = ix >> 20u;
    var y0 = opq_f64(r - w);
    let i = j - ((hi_f64(y0) >> 20u) & 0x7ff);
    if (i > 16) {
      var t = r;
      w = fn0 * f64(6.07710050630396597660e-11);
      r = opq_f64(t - w);
      w = fn0 * f64(2.02226624879595063154e-21) - ((t - r) - w);
      y0 = opq_f64(r - w);
      let i2 = j - ((hi_f64(y0) >> 20u) & 0x7ff);
      if (i2 > 49) {
        t = r;
        w = fn0 * f64(2.02226624871116645580e-21);
        r = opq_f64(t - w);
        w = fn0 * f64(8.47842766036889956997e-32) - ((t - r) - w);
        y0 = opq_f64(r - w);
      }
    }
    return RemPio2(i32(fn0), y0, (r - y0) - w);
  }
  // x = m * 2^e exactly; the quadrant and fraction of x*2/pi from a 192-bit window of 2/pi's bits
  let bits = bitcast<u64>(x);
  let e = i32((bits >> 52u) & 0x7fflu) - 1075;
  let m = (bits & 0x000ffffffffffffflu) | 0x0010000000000000lu;
  let mlo = u64(u32(m & 0xfffffffflu));
  let mhi = m >> 32u;
  var a = 1;
  var s = 192 - e;
  if (e >= 2) { a = e - 1; s = 190; }
  var g: array<u32, 6>;
  for (var k = 0; k < 6; k++) { g[5 - k] = twoopi_bits(a - 1 + 32 * k); }
  var q: array<u32, 9>;
  var carry = 0lu;
  for (var k = 0; k < 6; k++) {
    let t = u64(g[k]) * mlo + carry;
    q[k] = u32(t & 0xfffffffflu);
    carry = t >> 32u;
  }
  q[6] = u32(carry);
  carry = 0lu;
  for (var k = 0; k < 7; k++) {
    var gk = 0lu;
    if (k < 6) { gk = u64(g[k]); }
    let t = gk * mhi + u64(q[k + 1]) + carry;
    q[k + 1] = u32(t & 0xfffffffflu);
    carry = t >> 32u;
  }
  // quadrant: bits s, s+1 of q; fraction: the 128 bits below s
  var n = i32(qbits(&q, s) & 3u);
  var f: array<u32, 4>;
  for (var k = 0; k < 4; k++) { f[k] = qbits(&q, s - 128 + 32 * k); }
  var flip = false;
  if ((f[3] >> 31u) != 0u) {
    flip = true;
    n = n + 1;
    var c = 1lu;
    for (var k = 0; k < 4; k++) {
      let t = u64(~f[k]) + c;
      f[k] = u32(t & 0xfffffffflu);
      c = t >> 32u;
    }
  }
  // y = f * 2^-128 * pi/2, with pi/2 * 2^126 in 4 limbs
  let cpi = array<u32, 4>(0xc06e0e68u, 0x62633145u, 0x10b4611au, 0x6487ed51u);
  var r: array<u32, 9>;
  for (var i = 0; i < 4; i++) {
    var cy = 0lu;
    for (var j = 0; j < 4; j++) {
      let t = u64(f[i]) * u64(cpi[j]) + u64(r[i + j]) + cy;
      r[i + j] = u32(t & 0xfffffffflu);
      cy = t >> 32u;
    }
    r[i + 4] = u32(cy);
  }
  var h = 7;
  loop { if (h == 0 || r[h] != 0u) { break; } h = h - 1; }
  let p = 32 * h + 31 - i32(countLeadingZeros(r[h]));
  let t1 = (u64(qbits(&r, p - 31)) << 32u) | u64(qbits(&r, p - 63));
  let t2 = (u64(qbits(&r, p - 95)) << 32u) | u64(qbits(&r, p - 127));
  var y0 = f64(t1 >> 11u) * pow2_f64(p - 52 - 254);
  var y1 = f64((t1 << 53u) | (t2 >> 11u)) * pow2_f64(p - 116 - 254) ;
  if (flip) { y0 = -y0; y1 = -y1; }
  if (hx < 0) { return RemPio2(-n, -y0, -y1); }
  return RemPio2(n, y0, y1);
}
fn qbits(q: ptr<function, array<u32, 9>>, p: i32) -> u32 {
  if (p <= -32) { return 0u; }
  if (p < 0) { return (*q)[0] << u32(-p); }
  let w = p >> 5u;
  let s = u32(p & 31);
  var v = (*q)[w] >> s;
  if (s != 0u && w + 1 < 9) { v = v | ((*q)[w + 1] << (32u - s)); }
  return v;
}
""")

_def("sin", ("trig",), """
fn sin_f64(x: f64) -> f64 {
  let ix = hi_f64(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e500000) { return x; }
    return ksin_f64(x, f64(0), 0);
  }
  if (ix >= 0x7ff00000) { return nan_f64(); }
  let r = rempio2_f64(x);
  switch (r.n & 3) {
    case 0: { return ksin_f64(r.y0, r.y1, 1); }
    case 1: { return kcos_f64(r.y0, r.y1); }
    case 2: { return -ksin_f64(r.y0, r.y1, 1); }
    default: { return -kcos_f64(r.y0, r.y1); }
  }
}
""")

_def("cos", ("trig",), """
fn cos_f64(x: f64) -> f64 {
  let ix = hi_f64(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e46a09e) { return f64(1); }
    return kcos_f64(x, f64(0));
  }
  if (ix >= 0x7ff00000) { return nan_f64(); }
  let r = rempio2_f64(x);
  switch (r.n & 3) {
    case 0: { return kcos_f64(r.y0, r.y1); }
    case 1: { return -ksin_f64(r.y0, r.y1, 1); }
    case 2: { return -kcos_f64(r.y0, r.y1); }
    default: { return ksin_f64(r.y0, r.y1, 1); }
  }
}
""")

_def("sincos", ("trig",), """
fn sincos_f64(x: f64) -> vec2<f64> {
  let ix = hi_f64(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e46a09e) { return vec2<f64>(x, f64(1)); }
    return vec2<f64>(ksin_f64(x, f64(0), 0), kcos_f64(x, f64(0)));
  }
  if (ix >= 0x7ff00000) { return vec2<f64>(nan_f64(), nan_f64()); }
  let r = rempio2_f64(x);
  let s = ksin_f64(r.y0, r.y1, 1);
  let c = kcos_f64(r.y0, r.y1);
  switch (r.n & 3) {
    case 0: { return vec2<f64>(s, c); }
    case 1: { return vec2<f64>(c, -s); }
    case 2: { return vec2<f64>(-s, -c); }
    default: { return vec2<f64>(-c, s); }
  }
}
""")

_def("tan", ("trig",), """
fn tan_f64(x: f64) -> f64 {
  let ix = hi_f64(x) & 0x7fffffff;
  if (ix <= 0x3fe921fb) {
    if (ix < 0x3e400000) { return x; }
    return ktan_f64(x, f64(0), 1);
  }
  if (ix >= 0x7ff00000) { return nan_f64(); }
  let r = rempio2_f64(x);
  return ktan_f64(r.y0, r.y1, 1 - ((r.n & 1) << 1u));
}
""")

_def("atan", ("words",), """
fn atan_f64(x0: f64) -> f64 {
  var x = x0;
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x44100000) {
    if (isnan_f64(x)) { return x; }
    if (hx > 0) { return f64(1.57079632679489655800e+00) + f64(6.12323399573676603587e-17); }
    return -f64(1.57079632679489655800e+00) - f64(6.12323399573676603587e-17);
  }
  var id = -1;
  if (ix < 0x3fdc0000) {
    if (ix < 0x3e400000) { return x; }
  } else {
    x = abs(x);
    if (ix < 0x3ff30000) {
      if (ix < 0x3fe60000) { id = 0; x = (f64(2) * x - f64(1)) / (f64(2) + x); }
      else { id = 1; x = (x - f64(1)) / (x + f64(1)); }
    } else {
      if (ix < 0x40038000) { id = 2; x = (x - f64(1.5)) / (f64(1) + f64(1.5) * x); }
      else { id = 3; x = f64(-1) / x; }
    }
  }
  let z = x * x;
  let w = z * z;
  let s1 = z * (f64(3.33333333333329318027e-01) + w * (f64(1.42857142725034663711e-01) + w * (f64(9.09088713343650656196e-02)
      + w * (f64(6.66107313738753120669e-02) + w * (f64(4.97687799461593236017e-02) + w * f64(1.62858201153657823623e-02))))));
  let s2 = w * (f64(-1.99999999998764832476e-01) + w * (f64(-1.11111104054623557880e-01) + w * (f64(-7.69187620504482999495e-02)
      + w * (f64(-5.83357013379057348645e-02) + w * f64(-3.65315727442169155270e-02)))));
  if (id < 0) { return x - x * (s1 + s2); }
  var hi_: f64;
  var lo_: f64;
  switch (id) {
    case 0: { hi_ = f64(4.63647609000806093515e-01); lo_ = f64(2.26987774529616870924e-17); }
    case 1: { hi_ = f64(7.85398163397448278999e-01); lo_ = f64(3.06161699786838301793e-17); }
    case 2: { hi_ = f64(9.82793723247329054082e-01); lo_ = f64(1.39033110312309984516e-17); }
    default: { hi_ = f64(1.57079632679489655800e+00); lo_ = f64(6.12323399573676603587e-17); }
  }
  let zz = hi_ - ((x * (s1 + s2) - lo_) - x);
  return select(zz, -zz, hx < 0);
}
""")

_def("atan2", ("atan",), """
fn atan2_f64(y: f64, x: f64) -> f64 {
  if (isnan_f64(x) || isnan_f64(y)) { return x + y; }
  let hx = hi_f64(x);
  let lx = lo_f64(x);
  let ix = hx & 0x7fffffff;
  let hy = hi_f64(y);
  let ly = lo_f64(y);
  let iy = hy & 0x7fffffff;
  let pi = f64(3.1415926535897931160E+00);
  let pi_lo = f64(1.2246467991473531772E-16);
  let pio2 = f64(1.5707963267948965580E+00);
  let pio4 = f64(7.8539816339744827900E-01);
  if (hx == 0x3ff00000 && lx == 0u) { return atan_f64(y); }
  var m = ((hy >> 31u) & 1) | ((hx >> 30u) & 2);
  if ((iy | bitcast<i32>(ly)) == 0) {
    switch (m) {
      case 0, 1: { return y; }
      case 2: { return pi; }
      default: { return -pi; }
    }
  }
  if ((ix | bitcast<i32>(lx)) == 0) { return select(pio2, -pio2, hy < 0); }
  if (ix == 0x7ff00000) {
    if (iy == 0x7ff00000) {
      switch (m) {
        case 0: { return pio4; }
        case 1: { return -pio4; }
        case 2: { return f64(3) * pio4; }
        default: { return f64(-3) * pio4; }
      }
    }
    switch (m) {
      case 0: { return f64(0); }
      case 1: { return -f64(0); }
      case 2: { return pi; }
      default: { return -pi; }
    }
  }
  if (iy == 0x7ff00000) { return select(pio2, -pio2, hy < 0); }
  let k = (iy - ix) >> 20u;
  var z: f64;
  if (k > 60) { z = pio2 + f64(0.5) * pi_lo; m = m & 1; }
  else if (hx < 0 && k < -60) { z = f64(0); }
  else { z = atan_f64(abs(y / x)); }
  switch (m) {
    case 0: { return z; }
    case 1: { return -z; }
    case 2: { return pi - (z - pi_lo); }
    default: { return (z - pi_lo) - pi; }
  }
}
""")

_ASIN_PQ = """
fn asinpq_f64(t: f64) -> f64 {
  let p = t * (f64(1.66666666666666657415e-01) + t * (f64(-3.25565818622400915405e-01) + t * (f64(2.01212532134862925881e-01)
      + t * (f64(-4.00555345006794114027e-02) + t * (f64(7.91534994289814532176e-04) + t * f64(3.47933107596021167570e-05))))));
  let q = f64(1) + t * (f64(-2.40339491173441421878e+00) + t * (f64(2.02094576023350569471e+00) + t * (
      f64(-6.88283971605453293030e-01) + t * f64(7.70381505559019352791e-02))));
  return p / q;
}
"""

_def("asin", ("words",), _ASIN_PQ + """
fn asin_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x3ff00000) {
    if (((ix - 0x3ff00000) | bitcast<i32>(lo_f64(x))) == 0) {
      return x * f64(1.57079632679489655800e+00) + x * f64(6.12323399573676603587e-17);
    }
    return nan_f64();
  }
  if (ix < 0x3fe00000) {
    if (ix < 0x3e500000) { return x; }
    return x + x * asinpq_f64(x * x);
  }
  let w = f64(1) - abs(x);
  let t = w * f64(0.5);
  let s = sqrt(t);
  var r: f64;
  if (ix >= 0x3FEF3333) {
    r = f64(1.57079632679489655800e+00) - (f64(2) * (s + s * asinpq_f64(t)) - f64(6.12323399573676603587e-17));
  } else {
    let w1 = setlo0_f64(s);
    let c = (t - w1 * w1) / (s + w1);
    let p = f64(2) * s * asinpq_f64(t) - (f64(6.12323399573676603587e-17) - f64(2) * c);
    let q = f64(7.85398163397448278999e-01) - f64(2) * w1;
    r = f64(7.85398163397448278999e-01) - (p - q);
  }
  return select(-r, r, hx > 0);
}
""")

_def("acos", ("words",), _ASIN_PQ.replace("asinpq_f64", "acospq_f64") + """
fn acos_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  let pio2_hi = f64(1.57079632679489655800e+00);
  let pio2_lo = f64(6.12323399573676603587e-17);
  if (ix >= 0x3ff00000) {
    if (((ix - 0x3ff00000) | bitcast<i32>(lo_f64(x))) == 0) {
      if (hx > 0) { return f64(0); }
      return f64(3.14159265358979311600e+00) + f64(2) * pio2_lo;
    }
    return nan_f64();
  }
  if (ix < 0x3fe00000) {
    if (ix <= 0x3c600000) { return pio2_hi + pio2_lo; }
    let r = acospq_f64(x * x);
    return pio2_hi - (x - (pio2_lo - x * r));
  }
  if (hx < 0) {
    let z = (f64(1) + x) * f64(0.5);
    let s = sqrt(z);
    let w = acospq_f64(z) * s - pio2_lo;
    return f64(3.14159265358979311600e+00) - f64(2) * (s + w);
  }
  let z = (f64(1) - x) * f64(0.5);
  let s = sqrt(z);
  let df = setlo0_f64(s);
  let c = (z - df * df) / (s + df);
  let w = acospq_f64(z) * s + c;
  return f64(2) * (df + w);
}
""")

_def("sinh", ("exp", "expm1"), """
fn sinh_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x7ff00000) { return x + x; }
  let h = select(f64(0.5), f64(-0.5), hx < 0);
  let ax = abs(x);
  if (ix < 0x40360000) {
    if (ix < 0x3e300000) { return x; }
    let t = expm1_f64(ax);
    if (ix < 0x3ff00000) { return h * (f64(2) * t - t * t / (t + f64(1))); }
    return h * (t + t / (t + f64(1)));
  }
  if (ix < 0x40862E42) { return h * exp_f64(ax); }
  if (ix <= 0x408633CE) {
    let w = exp_f64(f64(0.5) * ax);
    return opq_f64(h * w) * w;
  }
  return select(inf_f64(), -inf_f64(), hx < 0);
}
""")

_def("cosh", ("exp", "expm1"), """
fn cosh_f64(x: f64) -> f64 {
  let ix = hi_f64(x) & 0x7fffffff;
  if (ix >= 0x7ff00000) { return x * x; }
  let ax = abs(x);
  if (ix < 0x3fd62e43) {
    let t = expm1_f64(ax);
    let w = f64(1) + t;
    if (ix < 0x3c800000) { return w; }
    return f64(1) + (t * t) / (w + w);
  }
  if (ix < 0x40360000) {
    let t = exp_f64(ax);
    return f64(0.5) * t + f64(0.5) / t;
  }
  if (ix < 0x40862E42) { return f64(0.5) * exp_f64(ax); }
  if (ix <= 0x408633CE) {
    let w = exp_f64(f64(0.5) * ax);
    return opq_f64(f64(0.5) * w) * w;
  }
  return inf_f64();
}
""")

_def("tanh", ("expm1",), """
fn tanh_f64(x: f64) -> f64 {
  let jx = hi_f64(x);
  let ix = jx & 0x7fffffff;
  if (ix >= 0x7ff00000) {
    if (isnan_f64(x)) { return x; }
    return select(f64(1), f64(-1), jx < 0);
  }
  var z: f64;
  if (ix < 0x40360000) {
    if (ix < 0x3e300000) { return x; }
    if (ix >= 0x3ff00000) {
      let t = expm1_f64(f64(2) * abs(x));
      z = f64(1) - f64(2) / (t + f64(2));
    } else {
      let t = expm1_f64(f64(-2) * abs(x));
      z = -t / (t + f64(2));
    }
  } else {
    z = f64(1);
  }
  return select(z, -z, jx < 0);
}
""")

_def("asinh", ("log", "log1p"), """
fn asinh_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  let ix = hx & 0x7fffffff;
  if (ix >= 0x7ff00000) { return x + x; }
  if (ix < 0x3e300000) { return x; }
  let t = abs(x);
  var w: f64;
  if (ix > 0x41b00000) {
    w = log_f64(t) + f64(6.93147180559945286227e-01);
  } else if (ix > 0x40000000) {
    w = log_f64(f64(2) * t + f64(1) / (sqrt(x * x + f64(1)) + t));
  } else {
    let t2 = x * x;
    w = log1p_f64(t + t2 / (f64(1) + sqrt(f64(1) + t2)));
  }
  return select(-w, w, hx > 0);
}
""")

_def("acosh", ("log", "log1p"), """
fn acosh_f64(x: f64) -> f64 {
  let hx = hi_f64(x);
  if (isnan_f64(x)) { return x; }
  if (hx < 0x3ff00000) { return nan_f64(); }
  if (hx >= 0x41b00000) {
    if (hx >= 0x7ff00000) { return x + x; }
    return log_f64(x) + f64(6.93147180559945286227e-01);
  }
  if (((hx - 0x3ff00000) | bitcast<i32>(lo_f64(x))) == 0) { return f64(0); }
  if (hx > 0x40000000) {
    let t = x * x;
    return log_f64(f64(2) * x - f64(1) / (x + sqrt(t - f64(1))));
  }
  let t = x - f64(1);
  return log1p_f64(t + sqrt(f64(2) * t + t * t));
}
""")

_def("atanh", ("log1p",), """
fn atanh_f64(x0: f64) -> f64 {
  let hx = hi_f64(x0);
  let ix = hx & 0x7fffffff;
  if (isnan_f64(x0)) { return x0; }
  let x = abs(x0);
  if (x > f64(1)) { return nan_f64(); }
  if (x == f64(1)) { return select(inf_f64(), -inf_f64(), hx < 0); }
  if (ix < 0x3e300000) { return x0; }
  var t: f64;
  if (ix < 0x3fe00000) {
    let t2 = x + x;
    t = f64(0.5) * log1p_f64(t2 + t2 * x / (f64(1) - x));
  } else {
    t = f64(0.5) * log1p_f64((x + x) / (f64(1) - x));
  }
  return select(t, -t, hx < 0);
}
""")

_def("pow", ("words",), """
fn pow_f64(x: f64, y: f64) -> f64 {
  let hx = hi_f64(x);
  let lx = lo_f64(x);
  let hy = hi_f64(y);
  let ly = lo_f64(y);
  var ix = hx & 0x7fffffff;
  let iy = hy & 0x7fffffff;
  if ((iy | bitcast<i32>(ly)) == 0) { return f64(1); }
  if (hx == 0x3ff00000 && lx == 0u) { return f64(1); }
  if (isnan_f64(x) || isnan_f64(y)) { return x + y; }
  var yisint = 0;
  if (hx < 0) {
    if (iy >= 0x43400000) { yisint = 2; }
    else if (iy >= 0x3ff00000) {
      let k = (iy >> 20u) - 0x3ff;
      if (k > 20) {
        let j = ly >> u32(52 - k);
        if ((j << u32(52 - k)) == ly) { yisint = 2 - i32(j & 1u); }
      } else if (ly == 0u) {
        let j = iy >> u32(20 - k);
        if ((j << u32(20 - k)) == iy) { yisint = 2 - (j & 1); }
      }
    }
  }
  if (ly == 0u) {
    if (iy == 0x7ff00000) {
      if (((ix - 0x3ff00000) | bitcast<i32>(lx)) == 0) { return f64(1); }
      if (ix >= 0x3ff00000) { return select(f64(0), y, hy >= 0); }
      return select(f64(0), -y, hy < 0);
    }
    if (iy == 0x3ff00000) {
      if (hy < 0) { return f64(1) / x; }
      return x;
    }
    if (hy == 0x40000000) { return x * x; }
    if (hy == 0x3fe00000 && hx >= 0) { return sqrt(x); }
  }
  var ax = abs(x);
  if (lx == 0u && (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000)) {
    var z = ax;
    if (hy < 0) { z = f64(1) / z; }
    if (hx < 0) {
      if (((ix - 0x3ff00000) | yisint) == 0) { return nan_f64(); }
      if (yisint == 1) { z = -z; }
    }
    return z;
  }
  let xneg = hx < 0;
  if (xneg && yisint == 0) { return nan_f64(); }
  var sn = f64(1);
  if (xneg && yisint == 1) { sn = f64(-1); }
  var t1: f64;
  var t2: f64;
  if (iy > 0x41e00000) {
    if (iy > 0x43f00000) {
      if (ix <= 0x3fefffff) { return select(f64(0), inf_f64(), hy < 0); }
      if (ix >= 0x3ff00000) { return select(f64(0), inf_f64(), hy > 0); }
    }
    if (ix < 0x3fefffff) { return sn * select(f64(0), inf_f64(), hy < 0); }
    if (ix > 0x3ff00000) { return sn * select(f64(0), inf_f64(), hy > 0); }
    let t = ax - f64(1);
    let w = (t * t) * (f64(0.5) - t * (f64(0.3333333333333333333333) - t * f64(0.25)));
    let u = f64(1.44269502162933349609e+00) * t;
    let v = t * f64(1.92596299112661746887e-08) - w * f64(1.44269504088896338700e+00);
    t1 = setlo0_f64(u + v);
    t2 = v - (t1 - u);
  } else {
    var n = 0;
    if (ix < 0x00100000) {
      ax = ax * f64(9007199254740992.0);
      n = n - 53;
      ix = hi_f64(ax);
    }
    n = n + ((ix >> 20u) - 0x3ff);
    let j = ix & 0x000fffff;
    ix = j | 0x3ff00000;
    var k = 0;
    if (j <= 0x3988E) { k = 0; }
    else if (j < 0xBB67A) { k = 1; }
    else { k = 0; n = n + 1; ix = ix - 0x00100000; }
    ax = sethi_f64(ax, ix);
    let bp = select(f64(1), f64(1.5), k == 1);
    let dp_h = select(f64(0), f64(5.84962487220764160156e-01), k == 1);
    let dp_l = select(f64(0), f64(1.35003920212974897128e-08), k == 1);
    let u = ax - bp;
    let v = f64(1) / (ax + bp);
    let ss = u * v;
    let s_h = setlo0_f64(ss);
    let t_h0 = mk_f64(((ix >> 1u) | 0x20000000) + 0x00080000 + (k << 18u), 0u);
    let t_l0 = ax - (t_h0 - bp);
    let s_l = v * ((u - s_h * t_h0) - s_h * t_l0);
    var s2 = ss * ss;
    var r = s2 * s2 * (f64(5.99999999999994648725e-01) + s2 * (f64(4.28571428578550184252e-01) + s2 * (
        f64(3.33333329818377432918e-01) + s2 * (f64(2.72728123808534006489e-01) + s2 * (f64(2.30660745775561754067e-01)
        + s2 * f64(2.06975017800338417784e-01))))));
    r = r + s_l * (s_h + ss);
    s2 = s_h * s_h;
    let t_h = setlo0_f64(f64(3) + s2 + r);
    let t_l = r - ((t_h - f64(3)) - s2);
    let u2 = s_h * t_h;
    let v2 = s_l * t_h + t_l * ss;
    let p_h = setlo0_f64(u2 + v2);
    let p_l = v2 - (p_h - u2);
    let z_h = f64(9.61796700954437255859e-01) * p_h;
    let z_l = f64(-7.02846165095275826516e-09) * p_h + p_l * f64(9.61796693925975554329e-01) + dp_l;
    let t = f64(n);
    t1 = setlo0_f64(((z_h + z_l) + dp_h) + t);
    t2 = z_l - (((t1 - t) - dp_h) - z_h);
  }
  let y1 = setlo0_f64(y);
  let p_l = (y - y1) * t1 + y * t2;
  var p_h = y1 * t1;
  let z = opq_f64(p_l + p_h);
  let j = hi_f64(z);
  // overflow (z >= 1024) and underflow (z <= -1075) tested on the value, and the signed results made
  // without arithmetic: NVIDIA's Vulkan compiler got fdlibm's bit tests and sn * inf wrong here
  let neg = xneg && yisint == 1;
  if (z >= f64(1024)) {
    if (z > f64(1024) || p_l + f64(8.0085662595372944372e-17) > z - p_h) {
      return select(inf_f64(), mk_f64(bitcast<i32>(0xfff00000u), 0u), neg);
    }
  } else if (z <= f64(-1075)) {
    if (z < f64(-1075) || p_l <= z - p_h) { return select(f64(0), mk_f64(bitcast<i32>(0x80000000u), 0u), neg); }
  }
  let i2 = j & 0x7fffffff;
  var k = (i2 >> 20u) - 0x3ff;
  var n = 0;
  if (i2 > 0x3fe00000) {
    n = j + (0x00100000 >> u32(k + 1));
    k = ((n & 0x7fffffff) >> 20u) - 0x3ff;
    let t = mk_f64(n & ~(0x000fffff >> u32(k)), 0u);
    n = ((n & 0x000fffff) | 0x00100000) >> u32(20 - k);
    if (j < 0) { n = -n; }
    p_h = p_h - t;
  }
  let t = setlo0_f64(p_l + p_h);
  let u = t * f64(6.93147182464599609375e-01);
  let v = (p_l - (t - p_h)) * f64(6.93147180559945286227e-01) + t * f64(-1.90465429995776804525e-09);
  let z2 = opq_f64(u + v);
  let w = v - (z2 - u);
  let tt = z2 * z2;
  let t3 = z2 - tt * (f64(1.66666666666666019037e-01) + tt * (f64(-2.77777777770155933842e-03) + tt * (
      f64(6.61375632143793436117e-05) + tt * (f64(-1.65339022054652515390e-06) + tt * f64(4.13813679705723846039e-08)))));
  let r = (z2 * t3) / (t3 - f64(2)) - (w + z2 * w);
  var zr = f64(1) - (r - z2);
  let jr = hi_f64(zr) + (n << 20u);
  if ((jr >> 20u) <= 0) { zr = ldexp(zr, n); }
  else { zr = sethi_f64(zr, jr); }
  return sn * zr;
}
""")


#: the element-wise functions defined above (the other entries are helpers they call)
FUNCTIONS = frozenset(_F64) - {"fmaex", "klog", "trig", "twoopi", "words"}


# float32 sin, cos, tan where the device has float64: FreeBSD msun's float32 functions (s_sinf.c, s_cosf.c,
# s_tanf.c; k_sinf.c, k_cosf.c and k_tanf.c's float64 polynomials, of degree 9, 8 and 13, on the reduced
# argument; e_rem_pio2f.c's float64 reduction), under 0.8 ulp (sin and cos 0.501). Each is inlined at every
# call of a fused chain, so it is a fraction of the float64 functions' code. name -> (helpers it calls, WGSL)
_F32: dict[str, tuple[tuple[tuple[str, WgslType], ...], str]] = {}

_F32["trigf"] = ((("opq", F64), ("twoopi", F64)), """
fn ksindf_f32(x: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = f64(-1.98393348360966317347e-04) + z * f64(2.7183114939898219064e-06);
  let s = z * x;
  return (x + s * (f64(-1.66666666416265235595e-01) + z * f64(8.3333293858894631756e-03))) + s * w * r;
}
fn kcosdf_f32(x: f64) -> f64 {
  let z = x * x;
  let w = z * z;
  let r = f64(-1.38867637746099294692e-03) + z * f64(2.43904487962774090654e-05);
  return ((f64(1) + z * f64(-4.99999997251031003120e-01)) + w * f64(4.16666233237390631894e-02)) + (w * z) * r;
}
struct RemPio2f { n: i32, y: f64 }
// |x| >= 2^28*pi/2, finite: x = m * 2^e exactly (m < 2^24, 5 <= e <= 104). The bits of 2/pi from the one
// weighing 2 in x*2/pi on, 96 of them as an integer W, give x*2/pi mod 4 = (m*W mod 2^96) * 2^-94 to within
// 2^-70 (the bits before are multiples of 4, those after add less than m * 2^-94); its nearest integer is
// the quadrant, and the rest (at least ~2^-30 for a float32) times pi/2 is y.
fn rempio2fbig_f32(x: f32) -> RemPio2f {
  let u = bitcast<u32>(x);
  let e = i32((u >> 23u) & 0xffu) - 150;
  let m = u64((u & 0x7fffffu) | 0x800000u);
  let a0 = m * u64(twoopi_bits(e - 2));
  let a1 = m * u64(twoopi_bits(e + 30));
  let a2 = m * u64(twoopi_bits(e + 62));
  // (m*W mod 2^96) >> 32, in 64 bits
  let top = (a0 << 32u) + a1 + (a2 >> 32u);
  let n = (top + 0x2000000000000000lu) >> 62u;
  let f = bitcast<i64>(top - (n << 62u));
  let y = (f64(f) + f64(a2 & 0xfffffffflu) * f64(2.3283064365386963e-10)) * f64(3.4061215800865545e-19);
  if ((u >> 31u) != 0u) { return RemPio2f(-i32(n), -y); }
  return RemPio2f(i32(n), y);
}
// finite x: n, the nearest integer to x*2/pi, and y = x - n*pi/2
fn rempio2f_f32(x: f32) -> RemPio2f {
  if ((bitcast<u32>(x) & 0x7fffffffu) >= 0x4dc90fdbu) { return rempio2fbig_f32(x); }
  // |x| < 2^28*pi/2: pio2_1 has 25 bits, so n*pio2_1 and the difference are exact, and pio2_1 + pio2_1t is
  // pi/2 to 78 bits (r through opq: x - n*pio2_1 - n*pio2_1t must not become x - n*(pio2_1 + pio2_1t))
  let xd = f64(x);
  let fn0 = floor(xd * f64(6.36619772367581382433e-01) + f64(0.5));
  let r = opq_f64(xd - fn0 * f64(1.57079631090164184570e+00));
  return RemPio2f(i32(fn0), r - fn0 * f64(1.58932547735281966916e-08));
}
""")

# |x| < 2^-12 (zeros and subnormals among them): sin and tan round to x itself, returned as it came (no
# float64 conversion, which an adapter that flushes float32 subnormals would flush); cos rounds to 1, and so
# does its polynomial at a flushed 0. Results otherwise are at least ~2^-31 in magnitude and below 2^31: f32()
# of the float64 value rounds them as narrow would. NaN and infinities give NaN.
_F32["sin"] = ((("trigf", F32), ("nan", F32)), """fn sin_f32(x: f32) -> f32 {
  let ix = bitcast<u32>(x) & 0x7fffffffu;
  if (ix < 0x39800000u) { return x; }
  if (ix >= 0x7f800000u) { return nan_f32(); }
  let r = rempio2f_f32(x);
  var v: f64;
  if ((r.n & 1) == 0) { v = ksindf_f32(r.y); } else { v = kcosdf_f32(r.y); }
  return f32(select(v, -v, (r.n & 2) != 0));
}""")

_F32["cos"] = ((("trigf", F32), ("nan", F32)), """fn cos_f32(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u) { return nan_f32(); }
  let r = rempio2f_f32(x);
  var v: f64;
  if ((r.n & 1) == 0) { v = kcosdf_f32(r.y); } else { v = ksindf_f32(r.y); }
  return f32(select(v, -v, ((r.n + 1) & 2) != 0));
}""")

_F32["tan"] = ((("trigf", F32), ("nan", F32)), """fn tan_f32(x: f32) -> f32 {
  let ix = bitcast<u32>(x) & 0x7fffffffu;
  if (ix < 0x39800000u) { return x; }
  if (ix >= 0x7f800000u) { return nan_f32(); }
  let r = rempio2f_f32(x);
  let y = r.y;
  let z = y * y;
  let t = f64(5.33812378445670393523e-02) + z * f64(2.45283181166547278873e-02);
  let w = z * z;
  let s = z * y;
  let u = f64(3.33331395030791399758e-01) + z * f64(1.33392002712976742718e-01);
  let v = (y + s * u) + (s * w) * (t + w * (f64(2.97435743359967304927e-03) + z * f64(9.46564784943673166728e-03)));
  return f32(select(v, f64(-1) / v, (r.n & 1) != 0));
}""")

def instantiate(lib, name: str, w: WgslType) -> str:
    """The WGSL of transcendental ``name`` for real float type ``w`` (registering its dependencies)."""
    if w.ct == "f64":
        deps, code = _F64[name]
        for d in deps:
            lib.fn(d, w)
        return code.strip()
    if name == "fmaex":
        return _fma_f32(lib, w)
    if lib.has_f64 and name in _F32:
        deps, code = _F32[name]
        for d, t in deps:
            lib.fn(d, t)
        return code.strip()
    if lib.has_f64:
        # widened from and narrowed to the bits: an adapter that flushes float32 subnormals keeps them
        f = lib.fn(name, F64)
        wd, nr = lib.fn("widen", w), lib.fn("narrow", w)
        if name == "sincos":
            return (f"fn sincos_f32(x: f32) -> vec2<f32> {{\n  let r = {f}({wd}(x));\n"
                    f"  return vec2<f32>({nr}(r.x), {nr}(r.y));\n}}")
        if name in BINARY:
            return f"fn {name}_f32(x: f32, y: f32) -> f32 {{ return {nr}({f}({wd}(x), {wd}(y))); }}"
        return f"fn {name}_f32(x: f32) -> f32 {{ return {nr}({f}({wd}(x))); }}"
    return _builtin_f32(lib, name, w)


def _builtin_f32(lib, name: str, w: WgslType) -> str:
    """float32 from the WGSL builtins, for adapters without float64."""
    isnan = lib.fn("isnan", w)
    isinf = lib.fn("isinf", w)
    if name == "expm1":
        return ("fn expm1_f32(x: f32) -> f32 {\n"
                f"  let e = exp(x);\n  if (e == 1.0 || {isnan}(x)) {{ return x; }}\n"
                f"  if ({isinf}(e)) {{ return e; }}\n  let d = e - 1.0;\n  if (d == -1.0) {{ return -1.0; }}\n"
                "  return d * x / log(e);\n}")
    if name == "log1p":
        return ("fn log1p_f32(x: f32) -> f32 {\n"
                f"  let v = 1.0 + x;\n  if (v == 1.0 || {isnan}(x) || {isinf}(x)) {{ return select(x, log(v), x < 0.0); }}\n"
                "  return log(v) * x / (v - 1.0);\n}")
    if name == "log10":
        return "fn log10_f32(x: f32) -> f32 { return log2(x) * 0.30102999566398120; }"
    if name == "pow":
        # C99's special values by hand: the builtins' log2(0) and log2(inf) are the driver's (Mesa's
        # OpenGL gives finite values, so that pow(0, -1) was 0, not inf)
        inf = lib.fn("inf", w)
        return ("fn pow_f32(x: f32, y: f32) -> f32 {\n"
                "  if (y == 0.0 || x == 1.0) { return 1.0; }\n"
                f"  if ({isnan}(x) || {isnan}(y)) {{ return x + y; }}\n"
                "  let ax = abs(x);\n"
                f"  if ({isinf}(y)) {{\n"
                "    if (ax == 1.0) { return 1.0; }\n"
                f"    return select(0.0, {inf}(), (ax > 1.0) == (y > 0.0));\n  }}\n"
                "  let yint = floor(y) == y;\n"
                "  let yodd = yint && abs(y) < 16777216.0 && floor(y * 0.5) != y * 0.5;\n"
                "  var r: f32;\n"
                f"  if (ax == 0.0) {{ r = select(0.0, {inf}(), y < 0.0); }}\n"
                f"  else if ({isinf}(ax)) {{ r = select(0.0, {inf}(), y > 0.0); }}\n"
                f"  else if (x < 0.0 && !yint) {{ return {lib.fn('nan', w)}(); }}\n"
                "  else { r = exp2(y * log2(ax)); }\n"
                "  return select(r, -r, (bitcast<u32>(x) >> 31u) == 1u && yodd);\n}")
    if name == "atan2":
        return "fn atan2_f32(y: f32, x: f32) -> f32 { return atan2(y, x); }"
    if name == "sincos":
        return "fn sincos_f32(x: f32) -> vec2<f32> { return vec2<f32>(sin(x), cos(x)); }"
    return f"fn {name}_f32(x: f32) -> f32 {{ return {name}(x); }}"


def _fma_f32(lib, w: WgslType) -> str:
    """float32 fma: the product is exact in float64; the sum is rounded to odd in float64 (its error from
    TwoSum) so that rounding that to float32 gives the correctly rounded result. Without float64, the
    builtin (fused or not, as the driver makes it)."""
    if not lib.has_f64:
        return "fn fmaex_f32(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }"
    opq = lib.fn("opq", F64)
    return ("fn fmaex_f32(a: f32, b: f32, c: f32) -> f32 {\n"
            f"  let p = {opq}(f64(a) * f64(b));\n"
            "  let cc = f64(c);\n"
            f"  var s = {opq}(p + cc);\n"
            f"  let bb = {opq}(s - p);\n"
            "  let err = (p - (s - bb)) + (cc - bb);\n"
            "  let us = bitcast<u64>(s);\n"
            "  if (err != f64(0) && (us & 1lu) == 0lu && (us & 0x7ff0000000000000lu) != 0x7ff0000000000000lu) {\n"
            "    s = bitcast<f64>(select(us - 1lu, us + 1lu, (err > f64(0)) == (s > f64(0))));\n"
            "  }\n"
            "  return f32(s);\n}")
