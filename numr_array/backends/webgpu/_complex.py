"""Complex element-wise functions on ``vec2`` values (x: real part, y: imaginary part).

Arithmetic follows NumPy's loops (Smith's division, its reciprocal, integer powers by squaring); the
elementary functions follow NumPy's npymath (C99 csqrt, clog with the log1p branch near |z| = 1, ctanh)
or the defining identities through them. complex64 functions are computed in complex128 and rounded
where the device has float64.
"""

from __future__ import annotations

from ._types import WgslType, WGSL_TYPES
from ... import _dtypes as dt

# name -> (real helpers used, complex helpers used, template). {T} vec2 type, {R} real type,
# {S} complex suffix, {RS} real suffix.
_C: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    # each product rounded on its own: cpow's integer powers and casinh (compared to NumPy within a few ulp)
    "cmul": (("opq",), (), """fn cmul_{S}(a: {T}, b: {T}) -> {T} {{
  return {T}(opq_{RS}(a.x * b.x) - opq_{RS}(a.y * b.y), opq_{RS}(a.x * b.y) + opq_{RS}(a.y * b.x));
}}"""),
    # NumPy's multiply and square loops fuse the first product with the rounded second one,
    # (fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)): rounding both products apart differs in the last bit,
    # and gives infinity or NaN where the fused sum is finite. fmaex is exact whatever the driver's fma.
    "cmulf": (("opq", "fmaex"), (), """fn cmulf_{S}(a: {T}, b: {T}) -> {T} {{
  return {T}(fmaex_{RS}(a.x, b.x, -opq_{RS}(a.y * b.y)), fmaex_{RS}(a.x, b.y, opq_{RS}(a.y * b.x)));
}}"""),
    "cdiv": (("fabs", "opq"), (), """fn cdiv_{S}(a: {T}, b: {T}) -> {T} {{
  let abr = fabs_{RS}(b.x);
  let abi = fabs_{RS}(b.y);
  if (abr >= abi) {{
    if (abr == {R}(0) && abi == {R}(0)) {{ return {T}(opq_{RS}(a.x) / abr, opq_{RS}(a.y) / abi); }}
    let rat = b.y / b.x;
    let scl = {R}(1) / (b.x + b.y * rat);
    return {T}((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
  }}
  let rat = b.x / b.y;
  let scl = {R}(1) / (b.y + b.x * rat);
  return {T}((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}}"""),
    "cabs": (("hypot",), (), "fn cabs_{S}(a: {T}) -> {R} {{ return hypot_{RS}(a.x, a.y); }}"),
    # (e^|x| / 2) * (p, q), for sinh/cosh/exp products whose factor overflows alone (|x| >= 710)
    # while the product does not: the exponential in two halves, multiplied in from the small side
    "chalfexp": (("exp", "opq"), (), """fn chalfexp_{S}(ax: {R}, p: {R}, q: {R}) -> {T} {{
  let h = exp_{RS}(ax * {R}(0.5));
  let hh = opq_{RS}({R}(0.5) * h);
  return {T}(opq_{RS}(hh * p) * h, opq_{RS}(hh * q) * h);
}}"""),
    "cisnan": (("isnan",), (), "fn cisnan_{S}(a: {T}) -> bool {{ return isnan_{RS}(a.x) || isnan_{RS}(a.y); }}"),
    "cisinf": (("isinf",), (), "fn cisinf_{S}(a: {T}) -> bool {{ return isinf_{RS}(a.x) || isinf_{RS}(a.y); }}"),
    "cisfinite": (("isfinite",), (),
                  "fn cisfinite_{S}(a: {T}) -> bool {{ return isfinite_{RS}(a.x) && isfinite_{RS}(a.y); }}"),
    # z / |z|, an infinite part (with a finite or NaN other part) giving its sign, as NumPy
    # (parts scaled first where |z| would overflow or lose bits as a subnormal: complex128
    # sign(5e-324 + 5e-324j) was 1 + 1j)
    "csign": (("isnan", "isinf", "hypot", "nan", "copysign", "fabs"), (), """fn csign_{S}(a: {T}) -> {T} {{
  if (isinf_{RS}(a.x) && isinf_{RS}(a.y)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
  if (isinf_{RS}(a.x)) {{ return {T}(copysign_{RS}({R}(1), a.x), {R}(0)); }}
  if (isinf_{RS}(a.y)) {{ return {T}({R}(0), copysign_{RS}({R}(1), a.y)); }}
  if (isnan_{RS}(a.x) || isnan_{RS}(a.y)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
  let big = max(fabs_{RS}(a.x), fabs_{RS}(a.y));
  var z = a;
  if (big < {R}({TINY})) {{ z = a * {R}(18446744073709551616.0); }} else if (big > {R}({QMAX})) {{ z = a * {R}(0.25); }}
  let m = hypot_{RS}(z.x, z.y);
  if (m == {R}(0)) {{ return {T}({R}(0), {R}(0)); }}
  return {T}(z.x / m, z.y / m);
}}"""),
    "cround": (("round",), (), "fn cround_{S}(a: {T}) -> {T} {{ return {T}(round_{RS}(a.x), round_{RS}(a.y)); }}"),
    "cexp": (("exp", "sincos", "isfinite", "isinf", "isnan", "signbit", "nan", "copysign"), ("chalfexp",),
     """fn cexp_{S}(a: {T}) -> {T} {{
  let sc = sincos_{RS}(a.y);
  let r = a.x;
  let i = a.y;
  if (isfinite_{RS}(r)) {{
    if (i == {R}(0)) {{ return {T}(exp_{RS}(r), i); }}
    if (!isfinite_{RS}(i)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
    if (r >= {R}(700)) {{ let w = chalfexp_{S}(r, sc.y, sc.x); return w + w; }}
    let e = exp_{RS}(r);
    return {T}(e * sc.y, e * sc.x);
  }}
  if (isnan_{RS}(r)) {{
    if (i == {R}(0)) {{ return a; }}
    return {T}(r, nan_{RS}());
  }}
  if (!signbit_{RS}(r)) {{
    if (i == {R}(0)) {{ return a; }}
    if (!isfinite_{RS}(i)) {{ return {T}(r, nan_{RS}()); }}
    return {T}(r * sc.y, r * sc.x);
  }}
  if (!isfinite_{RS}(i)) {{ return {T}({R}(0), {R}(0)); }}
  return {T}(copysign_{RS}({R}(0), sc.y), copysign_{RS}({R}(0), sc.x));
}}"""),
    "clog": (("log", "log1p", "atan2", "fabs", "hypot", "inf"), (), """fn clog_{S}(a: {T}) -> {T} {{
  let ax = fabs_{RS}(a.x);
  let ay = fabs_{RS}(a.y);
  var rr: {R};
  var z = a;
  if (ax > {R}({QMAX}) || ay > {R}({QMAX})) {{
    rr = log_{RS}(hypot_{RS}(ax * {R}(0.5), ay * {R}(0.5))) + {R}(0.6931471805599453);
  }} else if (ax == {R}(0) && ay == {R}(0)) {{
    rr = -inf_{RS}();
  }} else if (max(ax, ay) < {R}({TINY})) {{
    // subnormal parts: their modulus keeps few significant bits (complex128 log(1.5e-323 + 1.5e-323j) was
    // off by 0.06); scaled by 2^64 they are normal, and log(2^64) comes off in two parts (fdlibm's ln2_hi,
    // whose multiples are exact, and ln2_lo). The angle too is taken of the scaled parts: float32's atan2
    // (without float64) gave pi for atan2(1e-44, -7e-45).
    z = a * {R}(18446744073709551616.0);
    rr = (log_{RS}(hypot_{RS}(fabs_{RS}(z.x), fabs_{RS}(z.y))) - {R}({LN2HI_64})) - {R}({LN2LO_64});
  }} else {{
    let h = hypot_{RS}(ax, ay);
    if ({R}(0.71) <= h && h <= {R}(1.73)) {{
      let am = max(ax, ay);
      let an = min(ax, ay);
      rr = log1p_{RS}((am - {R}(1)) * (am + {R}(1)) + an * an) * {R}(0.5);
    }} else {{
      rr = log_{RS}(h);
    }}
  }}
  return {T}(rr, atan2_{RS}(z.y, z.x));
}}"""),
    "csqrt": (("sqrt", "hypot", "isinf", "isnan", "signbit", "copysign", "fabs", "inf", "nan"), (),
     """fn csqrt_{S}(z: {T}) -> {T} {{
  var a = z.x;
  var b = z.y;
  if (a == {R}(0) && b == {R}(0)) {{ return {T}({R}(0), b); }}
  if (isinf_{RS}(b)) {{ return {T}(inf_{RS}(), b); }}
  if (isnan_{RS}(a)) {{ return {T}(a, nan_{RS}()); }}
  if (isinf_{RS}(a)) {{
    if (signbit_{RS}(a)) {{ return {T}(select({R}(0), b, isnan_{RS}(b)), copysign_{RS}(inf_{RS}(), b)); }}
    return {T}(a, copysign_{RS}(select({R}(0), b, isnan_{RS}(b)), b));
  }}
  var scale = {R}(1);
  if (fabs_{RS}(a) >= {R}({THRESH}) || fabs_{RS}(b) >= {R}({THRESH})) {{
    a = a * {R}(0.25);
    b = b * {R}(0.25);
    scale = {R}(2);
  }}
  var r: {T};
  if (a >= {R}(0)) {{
    let t = sqrt((a + hypot_{RS}(a, b)) * {R}(0.5));
    r = {T}(t, b / ({R}(2) * t));
  }} else {{
    let t = sqrt((-a + hypot_{RS}(a, b)) * {R}(0.5));
    r = {T}(fabs_{RS}(b) / ({R}(2) * t), copysign_{RS}(t, b));
  }}
  return r * scale;
}}"""),
    # csinh and ccosh after FreeBSD's s_csinh.c / s_ccosh.c (C99 Annex G); csin, ccos through them
    "csinh": (("sincos", "sinh", "cosh", "isfinite", "isinf", "nan", "inf", "fabs", "copysign"), ("chalfexp",),
     """fn csinh_{S}(a: {T}) -> {T} {{
  let sc = sincos_{RS}(a.y);
  let x = a.x;
  let y = a.y;
  if (isfinite_{RS}(x) && isfinite_{RS}(y)) {{
    if (y == {R}(0)) {{ return {T}(sinh_{RS}(x), y); }}
    if (fabs_{RS}(x) >= {R}(700)) {{ return chalfexp_{S}(fabs_{RS}(x), select(sc.y, -sc.y, x < {R}(0)), sc.x); }}
    return {T}(sinh_{RS}(x) * sc.y, cosh_{RS}(x) * sc.x);
  }}
  if (x == {R}(0)) {{ return {T}(x, nan_{RS}()); }}
  if (y == {R}(0)) {{ return {T}(x + x, y); }}
  if (isfinite_{RS}(x) || !isinf_{RS}(x)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
  if (!isfinite_{RS}(y)) {{ return {T}(inf_{RS}(), nan_{RS}()); }}
  return {T}(x * sc.y, inf_{RS}() * sc.x);
}}"""),
    "ccosh": (("sincos", "sinh", "cosh", "isfinite", "isinf", "nan", "inf", "copysign", "fabs"), ("chalfexp",),
     """fn ccosh_{S}(a: {T}) -> {T} {{
  let sc = sincos_{RS}(a.y);
  let x = a.x;
  let y = a.y;
  if (isfinite_{RS}(x) && isfinite_{RS}(y)) {{
    if (y == {R}(0)) {{ return {T}(cosh_{RS}(x), x * y); }}
    if (fabs_{RS}(x) >= {R}(700)) {{ return chalfexp_{S}(fabs_{RS}(x), sc.y, select(sc.x, -sc.x, x < {R}(0))); }}
    return {T}(cosh_{RS}(x) * sc.y, sinh_{RS}(x) * sc.x);
  }}
  if (x == {R}(0)) {{ return {T}(nan_{RS}(), x * copysign_{RS}({R}(0), y)); }}
  if (y == {R}(0)) {{ return {T}(x * x, copysign_{RS}({R}(0), x) * y); }}
  if (isfinite_{RS}(x) || !isinf_{RS}(x)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
  if (!isfinite_{RS}(y)) {{ return {T}(inf_{RS}(), nan_{RS}()); }}
  return {T}(inf_{RS}() * sc.y, x * sc.x);
}}"""),
    # csin with NumPy's (glibc's) special values, which are not those of -i csinh(iz)
    "csin": (("sincos", "sinh", "cosh", "isfinite", "isinf", "isnan", "nan", "inf", "fabs", "copysign"), ("chalfexp",),
     """fn csin_{S}(a: {T}) -> {T} {{
  let x = a.x;
  let y = a.y;
  if (!isfinite_{RS}(x)) {{
    if (isinf_{RS}(y)) {{ return {T}(nan_{RS}(), inf_{RS}()); }}
    if (y == {R}(0)) {{ return {T}(nan_{RS}(), y); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (x == {R}(0)) {{ return {T}(x, sinh_{RS}(y)); }}
  if (isnan_{RS}(y)) {{ return {T}(nan_{RS}(), nan_{RS}()); }}
  let sc = sincos_{RS}(x);
  if (fabs_{RS}(y) >= {R}(700)) {{ return chalfexp_{S}(fabs_{RS}(y), sc.x, select(sc.y, -sc.y, y < {R}(0))); }}
  return {T}(sc.x * cosh_{RS}(y), sc.y * sinh_{RS}(y));
}}"""),
    "ccos": ((), ("ccosh",), "fn ccos_{S}(a: {T}) -> {T} {{ return ccosh_{S}({T}(-a.y, a.x)); }}"),
    # tanh(+-inf + bj) = +-1 +- 0j, the zero taking b's sign (the standard's choice)
    "ctanh": (("tan", "sinh", "sincos", "exp", "sqrt", "isfinite", "isnan", "isinf", "copysign", "fabs", "nan"),
              (), """fn ctanh_{S}(a: {T}) -> {T} {{
  let x = a.x;
  let y = a.y;
  if (!isfinite_{RS}(x)) {{
    if (isnan_{RS}(x)) {{ return {T}(x, select(nan_{RS}(), y, y == {R}(0))); }}
    return {T}(copysign_{RS}({R}(1), x), copysign_{RS}({R}(0), y));
  }}
  if (!isfinite_{RS}(y)) {{
    if (x == {R}(0)) {{ return {T}(x, nan_{RS}()); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (fabs_{RS}(x) >= {R}(22)) {{
    let e = exp_{RS}(-fabs_{RS}(x));
    let sc = sincos_{RS}(y);
    return {T}(copysign_{RS}({R}(1), x), {R}(4) * sc.x * sc.y * e * e);
  }}
  let t = tan_{RS}(y);
  let beta = {R}(1) + t * t;
  let s = sinh_{RS}(x);
  let rho = sqrt({R}(1) + s * s);
  let den = {R}(1) + beta * s * s;
  return {T}((beta * rho * s) / den, t / den);
}}"""),
    "ctan": ((), ("ctanh",), """fn ctan_{S}(a: {T}) -> {T} {{
  let t = ctanh_{S}({T}(-a.y, a.x));
  return {T}(t.y, -t.x);
}}"""),
    # exp(a)cis(b) - 1 without cancellation, and the standard's special cases
    "cexpm1": (("expm1", "exp", "sin", "sincos", "isfinite", "isinf", "isnan", "inf", "nan", "opq"), (),
     """fn cexpm1_{S}(z: {T}) -> {T} {{
  let a = z.x;
  let b = z.y;
  if (!isfinite_{RS}(b) && isinf_{RS}(a)) {{
    if (a < {R}(0)) {{ return {T}({R}(-1), {R}(0)); }}
    return {T}(inf_{RS}(), nan_{RS}());
  }}
  let s = sin_{RS}(b * {R}(0.5));
  let sc = sincos_{RS}(b);
  // (+ a runtime zero turns the -0 of expm1(-0 + 0j) into the standard's +0; a literal 0 would be folded)
  let re = expm1_{RS}(a) * sc.y - {R}(2) * s * s + opq_{RS}({R}(0));
  if (b == {R}(0)) {{ return {T}(re, b); }}
  return {T}(re, exp_{RS}(a) * sc.x);
}}"""),
    "clog1p": (("log", "log1p", "atan2", "hypot", "isinf", "isfinite", "fabs"), (), """fn clog1p_{S}(a: {T}) -> {T} {{
  let re = a.x + {R}(1);
  var lr = log_{RS}(hypot_{RS}(re, a.y));
  if (isinf_{RS}(lr) && lr > {R}(0) && isfinite_{RS}(re) && isfinite_{RS}(a.y)) {{
    // |1 + z| overflows, its logarithm does not: log(max) + log of the rest (NumPy's log1p gives inf)
    let m = max(fabs_{RS}(re), fabs_{RS}(a.y));
    let r = min(fabs_{RS}(re), fabs_{RS}(a.y)) / m;
    lr = log_{RS}(m) + {R}(0.5) * log1p_{RS}(r * r);
  }}
  return {T}(lr, atan2_{RS}(a.y, re));
}}"""),
    "clog2": ((), ("clog",), "fn clog2_{S}(a: {T}) -> {T} {{ return clog_{S}(a) * {R}(1.4426950408889634); }}"),
    "clog10": ((), ("clog",), "fn clog10_{S}(a: {T}) -> {T} {{ return clog_{S}(a) * {R}(0.4342944819032518); }}"),
    # the inverse functions after FreeBSD's catrig.c: its special values, its formulas for huge
    # arguments, and the defining logarithms elsewhere
    "casinh": (("signbit", "isnan", "isinf", "nan", "inf", "copysign", "fabs"), ("clog", "csqrt", "cmul"),
     """fn casinh_{S}(a: {T}) -> {T} {{
  let x = a.x;
  let y = a.y;
  if (isnan_{RS}(x) || isnan_{RS}(y)) {{
    if (isinf_{RS}(x)) {{ return {T}(x, nan_{RS}()); }}
    if (isinf_{RS}(y)) {{ return {T}(copysign_{RS}(inf_{RS}(), x), nan_{RS}()); }}
    if (y == {R}(0)) {{ return {T}(nan_{RS}(), y); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (x == {R}(0) && y == {R}(0)) {{ return a; }}
  let z = {T}(fabs_{RS}(x), y);
  var w: {T};
  if (max(fabs_{RS}(x), fabs_{RS}(y)) > {R}({BIG})) {{
    w = clog_{S}(z) + {T}({R}(0.6931471805599453), {R}(0));
  }} else {{
    w = clog_{S}(z + csqrt_{S}(cmul_{S}(z, z) + {T}({R}(1), {R}(0))));
  }}
  return {T}(copysign_{RS}(w.x, x), copysign_{RS}(w.y, y));
}}"""),
    "casin": ((), ("casinh",), """fn casin_{S}(a: {T}) -> {T} {{
  let w = casinh_{S}({T}(a.y, a.x));
  return {T}(w.y, w.x);
}}"""),
    "cacos": (("isnan", "isinf", "nan", "inf", "fabs", "signbit"), ("casin", "clog"), """fn cacos_{S}(a: {T}) -> {T} {{
  let x = a.x;
  let y = a.y;
  if (isnan_{RS}(x) || isnan_{RS}(y)) {{
    if (isinf_{RS}(x)) {{ return {T}(nan_{RS}(), -inf_{RS}()); }}
    if (isinf_{RS}(y)) {{ return {T}(nan_{RS}(), -y); }}
    if (x == {R}(0)) {{ return {T}({R}(1.5707963267948966), nan_{RS}()); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (max(fabs_{RS}(x), fabs_{RS}(y)) > {R}({BIG})) {{
    let w = clog_{S}(a);
    var ry = w.x + {R}(0.6931471805599453);
    if (!signbit_{RS}(y)) {{ ry = -ry; }}
    return {T}(fabs_{RS}(w.y), ry);
  }}
  if (x == {R}(1) && y == {R}(0)) {{ return {T}({R}(0), -y); }}
  let t = casin_{S}(a);
  return {T}({R}(1.5707963267948966) - t.x, -t.y);
}}"""),
    "cacosh": (("isnan", "fabs", "copysign"), ("cacos",), """fn cacosh_{S}(a: {T}) -> {T} {{
  let w = cacos_{S}(a);
  let rx = w.x;
  let ry = w.y;
  if (isnan_{RS}(rx) && isnan_{RS}(ry)) {{ return {T}(ry, rx); }}
  if (isnan_{RS}(rx)) {{ return {T}(fabs_{RS}(ry), rx); }}
  if (isnan_{RS}(ry)) {{ return {T}(ry, rx); }}
  return {T}(fabs_{RS}(ry), copysign_{RS}(rx, a.y));
}}"""),
    "catanh": (("isnan", "isinf", "nan", "copysign", "fabs", "atanh", "atan"), ("clog1p",),
               """fn catanh_{S}(a: {T}) -> {T} {{
  let x = a.x;
  let y = a.y;
  if (isnan_{RS}(x) || isnan_{RS}(y)) {{
    if (isinf_{RS}(x)) {{ return {T}(copysign_{RS}({R}(0), x), nan_{RS}()); }}
    if (isinf_{RS}(y)) {{ return {T}(copysign_{RS}({R}(0), x), copysign_{RS}({R}(1.5707963267948966), y)); }}
    if (x == {R}(0)) {{ return {T}(x, nan_{RS}()); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (x == {R}(0) && y == {R}(0)) {{ return a; }}
  let ax = fabs_{RS}(x);
  let ay = fabs_{RS}(y);
  if (ax > {R}({BIG}) || ay > {R}({BIG})) {{
    var re = copysign_{RS}({R}(0), x);
    if (!isinf_{RS}(x) && !isinf_{RS}(y)) {{
      let t = max(ax, ay);
      let u = x / t;
      let v = y / t;
      re = (u / (u * u + v * v)) / t;
    }}
    return {T}(re, copysign_{RS}({R}(1.5707963267948966), y));
  }}
  if (y == {R}(0) && ax <= {R}(1)) {{ return {T}(atanh_{RS}(x), y); }}
  if (x == {R}(0)) {{ return {T}(x, atan_{RS}(y)); }}
  return (clog1p_{S}(a) - clog1p_{S}(-a)) * {R}(0.5);
}}"""),
    "catan": ((), ("catanh",), """fn catan_{S}(a: {T}) -> {T} {{
  let t = catanh_{S}({T}(-a.y, a.x));
  return {T}(t.y, -t.x);
}}"""),
    "cpow": ((), ("cmul", "cdiv", "cexp", "clog"), """fn cpow_{S}(a: {T}, b: {T}) -> {T} {{
  if (b.x == {R}(0) && b.y == {R}(0)) {{ return {T}({R}(1), {R}(0)); }}
  if (a.x == {R}(0) && a.y == {R}(0)) {{
    if (b.x > {R}(0)) {{ return {T}({R}(0), {R}(0)); }}
    return {T}(nan_{RS}(), nan_{RS}());
  }}
  if (b.y == {R}(0) && b.x == trunc(b.x) && abs(b.x) < {R}(100)) {{
    var n = i32(b.x);
    let neg = n < 0;
    if (neg) {{ n = -n; }}
    var r = {T}({R}(1), {R}(0));
    var p = a;
    var first = true;
    loop {{
      if ((n & 1) != 0) {{
        if (first) {{ r = p; first = false; }} else {{ r = cmul_{S}(r, p); }}
      }}
      n = n >> 1u;
      if (n == 0) {{ break; }}
      p = cmul_{S}(p, p);
    }}
    if (neg) {{ return cdiv_{S}({T}({R}(1), {R}(0)), r); }}
    return r;
  }}
  return cexp_{S}(cmul_{S}(b, clog_{S}(a)));
}}"""),
}

# functions computed in complex128 for complex64 where the device has float64 (their accuracy comes
# from the float64 libm)
_WIDEN = {"cabs", "csign", "cexp", "clog", "csqrt", "csin", "ccos", "csinh", "ccosh", "ctanh", "ctan", "cexpm1",
          "clog1p", "casinh", "casin", "cacos", "cacosh", "catanh", "catan", "cpow"}
_ONE_ARG = {"exp", "log", "sqrt", "sin", "cos", "sinh", "cosh", "tanh", "tan", "expm1", "log1p", "log2", "log10",
            "asinh", "asin", "acos", "acosh", "atanh", "atan"}


def instantiate(lib, name: str, w: WgslType) -> str:
    T, R, S = w.ct, w.real.ct, w.suffix
    if name in _WIDEN and S == "c64" and lib.has_f64:
        wide = lib.fn(name, WGSL_TYPES[dt.complex128])
        # parts widened from and narrowed to the bits: an adapter that flushes float32 subnormals keeps them
        wd, nr = lib.fn("widen", w.real), lib.fn("narrow", w.real)
        a, b = (f"vec2<f64>({wd}({v}.x), {wd}({v}.y))" for v in ("a", "b"))
        if name == "cabs":
            return f"fn cabs_c64(a: vec2<f32>) -> f32 {{ return {nr}({wide}({a})); }}"
        call = f"{wide}({a}, {b})" if name == "cpow" else f"{wide}({a})"
        params = "a: vec2<f32>, b: vec2<f32>" if name == "cpow" else "a: vec2<f32>"
        return (f"fn {name}_c64({params}) -> vec2<f32> {{\n  let r = {call};\n"
                f"  return vec2<f32>({nr}(r.x), {nr}(r.y));\n}}")
    real_deps, cdeps, tpl = _C[name]
    for d in real_deps:
        lib.fn(d, w.real)
    for d in ("nan",):
        lib.fn(d, w.real)
    for d in cdeps:
        lib.fn(d, w)
    big = "1e150" if R == "f64" else "1e18"
    f64 = R == "f64"
    return tpl.format(T=T, R=R, S=S, RS=w.real.suffix, QMAX="4.49423283715579e+307" if f64 else "8.5e37",
                      THRESH="7.446288774449766e+307" if f64 else "1.8e38", BIG=big,
                      TINY="2.2250738585072014e-308" if f64 else "1.1754943508222875e-38",
                      LN2HI_64="44.361419543623924" if f64 else "44.36083984375",
                      LN2LO_64="1.2212575547331761e-08" if f64 else "0.0005797120393253863")


def expr(name: str, c: WgslType, args: list[str], lib) -> tuple[str, WgslType]:
    """The expression of element-wise op ``name`` on complex values (``_elementwise_exprs.expr`` handles the rest)."""
    a = args[0]
    b = args[1] if len(args) > 1 else None
    R = c.real
    f = lambda n: lib.fn(n, c)
    if name in _ONE_ARG:
        return f"{f('c' + name)}({a})", c
    table = {
        "abs": (f"{f('cabs')}({a})", R), "real": (f"({a}).x", R), "imag": (f"({a}).y", R),
        "conj": (f"{c.ct}(({a}).x, {lib.fn('fneg', R)}(({a}).y))", c),
        "isnan": (f"{f('cisnan')}({a})", None), "isinf": (f"{f('cisinf')}({a})", None),
        "isfinite": (f"{f('cisfinite')}({a})", None),
        "negative": (f"(-{a})", c), "positive": (a, c), "square": (f"{f('cmulf')}({a}, {a})", c),
        "reciprocal": (f"{f('cdiv')}({c.ct}({R.ct}(1), {R.ct}(0)), {a})", c), "sign": (f"{f('csign')}({a})", c),
        "round": (f"{f('cround')}({a})", c),
        "multiply": (f"{f('cmulf')}({a}, {b})", c), "divide": (f"{f('cdiv')}({a}, {b})", c),
        "pow": (f"{f('cpow')}({a}, {b})", c), "add": (f"({a} + {b})", c), "subtract": (f"({a} - {b})", c),
    }
    e, r = table[name]
    if r is None:
        r = WGSL_TYPES[dt.bool_]
    return e, r
