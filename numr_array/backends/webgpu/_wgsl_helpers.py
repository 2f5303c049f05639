"""The WGSL helper functions kernels call, instantiated per compute type from one template each.

A helper is named ``<name>_<suffix>`` (``isnan_f32``, ``floordiv_i64``, ``cmul_c64``); a :class:`WgslHelpers`
collects the helpers a shader uses, with their dependencies, and emits them in dependency order.

Two facts about WGSL compilers shape these templates. They may apply algebraic rewrites that assume no
NaN or infinity (lavapipe folds ``x != x`` to false and ``x - x`` to 0), so NaN, infinity and sign
tests are done on the bits. And float builtins are only as accurate as the driver makes them, so the
transcendental functions come from ``_libm`` (f64 arithmetic, checked against NumPy); float32 ones are
computed in float64 where the device has it, else with the builtins.
"""

from __future__ import annotations


from ._types import WgslType, WGSL_TYPES, COMPUTE, F32, F64, F32_NORMAL_GAPS, f32_normal_gap, f32_to_f64
from ... import _dtypes as dt

#: per real float type: the unsigned type of its bits and the masks of its fields
_FLOAT = {
    "f32": dict(T="f32", U="u32", I="i32", S="f32", ABS="0x7fffffffu", EXP="0x7f800000u", SIGN="0x80000000u",
                QNAN="0x7fc00000u", MANT="0x007fffffu", NB="32u", SIGNSHIFT="31u", ONE="1u",
                MB="23", EB1="9", TOP="31", EMASK="0xffu", EMAX="0xff"),
    "f64": dict(T="f64", U="u64", I="i64", S="f64", ABS="0x7ffffffffffffffflu", EXP="0x7ff0000000000000lu",
                SIGN="0x8000000000000000lu", QNAN="0x7ff8000000000000lu", MANT="0x000ffffffffffffflu",
                NB="64u", SIGNSHIFT="63u", ONE="1lu", MB="52", EB1="12", TOP="63", EMASK="0x7fflu", EMAX="0x7ff"),
}

# name -> (dependencies, template); templates use the keys of _FLOAT (real float helpers) or T/S/U
# (integers) or T/S/R/RS (complex, R its real type). "{{" and "}}" are WGSL braces.
_REAL: dict[str, tuple[tuple[str, ...], str]] = {
    # infinity and NaN through the uniform zero word, not as constants: NVIDIA's Vulkan compiler folded
    # products with a constant f64 infinity wrongly (inf * 0.79 came out 0.79 in complex cosh)
    "inf": ((), "fn inf_{S}() -> {T} {{ return bitcast<{T}>({EXP} | {U}(u.w[0].z)); }}"),
    # x, through an OR with the uniform word that is always 0: a value the compiler cannot see through,
    # so that it neither folds it as a constant nor reassociates an exact sequence around it
    "opq": ((), "fn opq_{S}(x: {T}) -> {T} {{ return bitcast<{T}>(bitcast<{U}>(x) | {U}(u.w[0].z)); }}"),
    "nan": ((), "fn nan_{S}() -> {T} {{ return bitcast<{T}>({QNAN} | {U}(u.w[0].z)); }}"),
    "isnan": ((), "fn isnan_{S}(x: {T}) -> bool {{ return (bitcast<{U}>(x) & {ABS}) > {EXP}; }}"),
    "isinf": ((), "fn isinf_{S}(x: {T}) -> bool {{ return (bitcast<{U}>(x) & {ABS}) == {EXP}; }}"),
    "isfinite": ((), "fn isfinite_{S}(x: {T}) -> bool {{ return (bitcast<{U}>(x) & {EXP}) != {EXP}; }}"),
    "signbit": ((), "fn signbit_{S}(x: {T}) -> bool {{ return (bitcast<{U}>(x) >> {SIGNSHIFT}) != 0{U_SUFFIX}; }}"),
    "fabs": ((), "fn fabs_{S}(x: {T}) -> {T} {{ return bitcast<{T}>(bitcast<{U}>(x) & {ABS}); }}"),
    "copysign": ((), "fn copysign_{S}(x: {T}, y: {T}) -> {T} {{\n"
                     "  return bitcast<{T}>((bitcast<{U}>(x) & {ABS}) | (bitcast<{U}>(y) & {SIGN}));\n}}"),
    "fneg": ((), "fn fneg_{S}(x: {T}) -> {T} {{ return bitcast<{T}>(bitcast<{U}>(x) ^ {SIGN}); }}"),
    # NumPy's maximum/minimum: NaN from either side propagates; ties (signed zeros too) keep the second
    # operand. Compared and chosen on the bits (ordered as integers): compilers made a float compare and
    # select their own max (NVIDIA's and Mesa OpenGL's max(0, -0) was +0), and NVIDIA's flushed the
    # subnormal it returned
    "fgt": ((), """fn fgt_{S}(a: {T}, b: {T}) -> bool {{
  let ua = bitcast<{U}>(a);
  let ub = bitcast<{U}>(b);
  let ka = select(ua | {SIGN}, ~ua, (ua & {SIGN}) != 0{U_SUFFIX});
  let kb = select(ub | {SIGN}, ~ub, (ub & {SIGN}) != 0{U_SUFFIX});
  return ka > kb && ((ua | ub) & {ABS}) != 0{U_SUFFIX};
}}"""),
    "fmax": (("isnan", "fgt"), "fn fmax_{S}(a: {T}, b: {T}) -> {T} {{\n"
                               "  if (isnan_{S}(a)) {{ return a; }}\n  if (isnan_{S}(b)) {{ return b; }}\n"
                               "  return bitcast<{T}>(select(bitcast<{U}>(b), bitcast<{U}>(a), fgt_{S}(a, b)));\n}}"),
    "fmin": (("isnan", "fgt"), "fn fmin_{S}(a: {T}, b: {T}) -> {T} {{\n"
                               "  if (isnan_{S}(a)) {{ return a; }}\n  if (isnan_{S}(b)) {{ return b; }}\n"
                               "  return bitcast<{T}>(select(bitcast<{U}>(b), bitcast<{U}>(a), fgt_{S}(b, a)));\n}}"),
    "feq": (("isnan",), "fn feq_{S}(a: {T}, b: {T}) -> bool {{ return a == b && !isnan_{S}(a) && !isnan_{S}(b); }}"),
    "flt": (("isnan",), "fn flt_{S}(a: {T}, b: {T}) -> bool {{ return a < b && !isnan_{S}(a) && !isnan_{S}(b); }}"),
    "fle": (("isnan",), "fn fle_{S}(a: {T}, b: {T}) -> bool {{ return a <= b && !isnan_{S}(a) && !isnan_{S}(b); }}"),
    "round": (("isfinite", "copysign"), """fn round_{S}(x: {T}) -> {T} {{
  if (!isfinite_{S}(x)) {{ return x; }}
  let f = floor(x);
  let d = x - f;
  var r = f;
  if (d > {T}(0.5)) {{ r = f + {T}(1); }}
  else if (d == {T}(0.5) && f - {T}(2) * floor(f * {T}(0.5)) != {T}(0)) {{ r = f + {T}(1); }}
  return copysign_{S}(r, x);
}}"""),
    "sign": (("isnan",), """fn sign_{S}(x: {T}) -> {T} {{
  if (isnan_{S}(x)) {{ return x; }}
  let b = bitcast<{U}>(x);
  if ((b & {ABS}) == 0{U_SUFFIX}) {{ return bitcast<{T}>(0{U_SUFFIX}); }}
  return bitcast<{T}>((b & {SIGN}) | bitcast<{U}>({T}(1)));
}}"""),
    # floor, ceil and trunc keep the argument's sign (lavapipe's f64 trunc(-0.5) is +0)
    "floor": (("copysign",), "fn floor_{S}(x: {T}) -> {T} {{ return copysign_{S}(floor(x), x); }}"),
    "ceil": (("copysign",), "fn ceil_{S}(x: {T}) -> {T} {{ return copysign_{S}(ceil(x), x); }}"),
    "trunc": (("copysign",), "fn trunc_{S}(x: {T}) -> {T} {{ return copysign_{S}(trunc(x), x); }}"),
    # exact fmod on the bits (musl's): integer long division of the significands, so neither subnormals
    # nor the compiler's float rewrites can change it
    "fmod": (("nan",), """fn fmod_{S}(x: {T}, y: {T}) -> {T} {{
  var ux = bitcast<{U}>(x);
  var uy = bitcast<{U}>(y);
  var ex = {I}((ux >> {MB}u) & {EMASK});
  var ey = {I}((uy >> {MB}u) & {EMASK});
  let sx = ux & {SIGN};
  if ((uy << 1u) == {U}(0) || (uy & {ABS}) > {EXP} || ex == {I}({EMAX})) {{ return nan_{S}(); }}
  if ((ux << 1u) <= (uy << 1u)) {{
    if ((ux << 1u) == (uy << 1u)) {{ return bitcast<{T}>(sx); }}
    return x;
  }}
  if (ex == {I}(0)) {{
    var i = ux << {EB1}u;
    loop {{ if ((i >> {TOP}u) != {U}(0)) {{ break; }} ex = ex - {I}(1); i = i << 1u; }}
    ux = ux << u32({I}(1) - ex);
  }} else {{
    ux = (ux & {MANT}) | ({U}(1) << {MB}u);
  }}
  if (ey == {I}(0)) {{
    var i = uy << {EB1}u;
    loop {{ if ((i >> {TOP}u) != {U}(0)) {{ break; }} ey = ey - {I}(1); i = i << 1u; }}
    uy = uy << u32({I}(1) - ey);
  }} else {{
    uy = (uy & {MANT}) | ({U}(1) << {MB}u);
  }}
  loop {{
    if (ex <= ey) {{ break; }}
    let i = ux - uy;
    if ((i >> {TOP}u) == {U}(0)) {{
      if (i == {U}(0)) {{ return bitcast<{T}>(sx); }}
      ux = i;
    }}
    ux = ux << 1u;
    ex = ex - {I}(1);
  }}
  let i = ux - uy;
  if ((i >> {TOP}u) == {U}(0)) {{
    if (i == {U}(0)) {{ return bitcast<{T}>(sx); }}
    ux = i;
  }}
  loop {{ if ((ux >> {MB}u) != {U}(0)) {{ break; }} ux = ux << 1u; ex = ex - {I}(1); }}
  if (ex > {I}(0)) {{
    ux = (ux - ({U}(1) << {MB}u)) | (bitcast<{U}>(ex) << {MB}u);
  }} else {{
    ux = ux >> u32({I}(1) - ex);
  }}
  return bitcast<{T}>(ux | sx);
}}"""),
    # NumPy's npy_divmod for finite operands: the quotient floored, the remainder with the divisor's sign
    "fdivmod": (("fmod", "copysign", "fdiv"), """fn fdivmod_{S}(a: {T}, b: {T}) -> vec2<{T}> {{
  var m = fmod_{S}(a, b);
  var div = fdiv_{S}(a - m, b);
  if (m != {T}(0)) {{
    if ((b < {T}(0)) != (m < {T}(0))) {{ m = m + b; div = div - {T}(1); }}
  }} else {{
    m = copysign_{S}({T}(0), b);
  }}
  var fd: {T};
  if (div != {T}(0)) {{
    fd = floor(div);
    if (div - fd > {T}(0.5)) {{ fd = fd + {T}(1); }}
  }} else {{
    fd = copysign_{S}({T}(0), fdiv_{S}(a, b));
  }}
  return vec2<{T}>(fd, m);
}}"""),
    # NaN and infinities first (compilers may treat float compares as if NaN did not exist): the
    # standard's floor(a / b) where an infinity is involved, a / b for a zero divisor
    # (zero and sign tests on the bits: an adapter that flushes float32 subnormals compares 1e-45 == 0)
    "ffloordiv": (("fdivmod", "isnan", "isinf", "nan", "fdiv"), """fn ffloordiv_{S}(a: {T}, b: {T}) -> {T} {{
  if (isnan_{S}(a) || isnan_{S}(b)) {{ return nan_{S}(); }}
  if (isinf_{S}(a) || isinf_{S}(b)) {{ return floor(a / b); }}
  if ((bitcast<{U}>(b) & {ABS}) == {U}(0)) {{ return fdiv_{S}(a, b); }}
  return fdivmod_{S}(a, b).x;
}}"""),
    "fremainder": (("fdivmod", "isinf", "isnan", "nan", "copysign"), """fn fremainder_{S}(a: {T}, b: {T}) -> {T} {{
  if (isnan_{S}(a) || isnan_{S}(b) || isinf_{S}(a) || (bitcast<{U}>(b) & {ABS}) == {U}(0)) {{ return nan_{S}(); }}
  if (isinf_{S}(b)) {{
    if ((bitcast<{U}>(a) & {ABS}) == {U}(0)) {{ return copysign_{S}({T}(0), b); }}
    return select(a, b, ((bitcast<{U}>(a) ^ bitcast<{U}>(b)) & {SIGN}) != {U}(0));
  }}
  return fdivmod_{S}(a, b).y;
}}"""),
    "hypot": (("isinf", "isnan", "fabs", "inf"), """fn hypot_{S}(a: {T}, b: {T}) -> {T} {{
  if (isinf_{S}(a) || isinf_{S}(b)) {{ return inf_{S}(); }}
  if (isnan_{S}(a) || isnan_{S}(b)) {{ return a + b; }}
  let x = fabs_{S}(a);
  let y = fabs_{S}(b);
  let m = max(x, y);
  if (m == {T}(0)) {{ return {T}(0); }}
  let r = min(x, y) / m;
  return m * sqrt({T}(1) + r * r);
}}"""),
    "nextafter": (("isnan", "fabs"), """fn nextafter_{S}(x: {T}, y: {T}) -> {T} {{
  if (isnan_{S}(x) || isnan_{S}(y)) {{ return x + y; }}
  if (x == y) {{ return y; }}
  if (x == {T}(0)) {{ return bitcast<{T}>((bitcast<{U}>(y) & {SIGN}) | {ONE}); }}
  let b = bitcast<{U}>(x);
  if ((x < y) == (x > {T}(0))) {{ return bitcast<{T}>(b + {ONE}); }}
  return bitcast<{T}>(b - {ONE});
}}"""),
    "logaddexp": (("isnan", "log1p", "exp", "isinf"), """fn logaddexp_{S}(x: {T}, y: {T}) -> {T} {{
  if (isnan_{S}(x) || isnan_{S}(y)) {{ return x + y; }}
  if (x == y) {{ return x + {T}(0.6931471805599453); }}
  let t = x - y;
  if (t > {T}(0)) {{ return x + log1p_{S}(exp_{S}(-t)); }}
  return y + log1p_{S}(exp_{S}(t));
}}"""),
    "sqrt": (("isnan",), "fn sqrt_{S}(x: {T}) -> {T} {{ return sqrt(x); }}"),
    "reciprocal": (("fdiv",), "fn reciprocal_{S}(x: {T}) -> {T} {{ return fdiv_{S}({T}(1), x); }}"),
    # a / b correctly rounded (float32 on an adapter with float64: see _F32_VIA_F64)
    "fdiv": ((), "fn fdiv_{S}(a: {T}, b: {T}) -> {T} {{ return a / b; }}"),
    # float to integer: truncation toward zero (NaN and out-of-range values are unspecified by the
    # standard; WGSL saturates them)
}

# float32 helpers that an adapter with float64 computes through it. WGSL lets float32 division be off by
# 2.5 ulp (NVIDIA's is: 1.0856384e8 / 7 came out 15509121, not 15509120); the float64 result of one
# operation on float32 values rounded to float32 is the correctly rounded float32 result (53 >= 2 * 24 + 2,
# so the double rounding cannot go wrong). Operands are widened from their bits and results narrowed to
# bits (``widen``, ``narrow``), so that an adapter that flushes float32 subnormals (NVIDIA's) still reads
# and returns them; ``opq`` keeps the compiler from folding the float64 steps back into float32 ones.
_F32_VIA_F64: dict[str, tuple[tuple[tuple[str, WgslType], ...], str]] = {
    # (a normal float32's conversion is exact on every adapter: the bit-built value only for the rest)
    "widen": ((), "fn widen_f32(x: f32) -> f64 {\n"
                  f"  if ({f32_normal_gap('x')} < {F32_NORMAL_GAPS}) {{ return f64(x); }}\n"
                  f"  return {f32_to_f64('x')};\n}}"),
    # x rounded to float32's precision and range, kept in float64: below 2^-126 to a multiple of 2^-149
    # by the float64 addition of 1.5 * 2^-97 (whose ulp that is), ties to even
    "r32": ((("opq", F64),), """fn r32_f32(x: f64) -> f64 {
  let ux = bitcast<u64>(x);
  let ax = bitcast<f64>(ux & 0x7ffffffffffffffflu);
  if (!(ax < bitcast<f64>(0x3810000000000000lu))) { return f64(f32(x)); }
  let c = opq_f64(bitcast<f64>(0x39e8000000000000lu));
  let r = opq_f64(ax + c) - c;
  return bitcast<f64>(bitcast<u64>(r) | (ux & 0x8000000000000000lu));
}"""),
    "narrow": ((("r32", F32),), """fn narrow_f32(x: f64) -> f32 {
  let r = r32_f32(x);
  let ar = bitcast<f64>(bitcast<u64>(r) & 0x7ffffffffffffffflu);
  if (!(ar < bitcast<f64>(0x3810000000000000lu))) { return f32(r); }
  let sign = u32(bitcast<u64>(r) >> 32u) & 0x80000000u;
  return bitcast<f32>(u32(ar * bitcast<f64>(0x4940000000000000lu)) | sign);
}"""),
    # a float64 sum kept in a float32's register (_matvec's lanes after an operand that could make a subnormal):
    # float32's bits where float32 keeps at least 20 bits of it (magnitude 2^-129 or more, zero, infinity, NaN),
    # else the float64's high word (sign, exponent, 20 bits of significand, rounded): ``keep`` gives the bits and
    # 1 where they are a high word, ``kept`` the float64 back from them
    "keep": ((("narrow", F32),), """fn keep_f32(s: f64) -> vec2<u32> {
  let b = bitcast<u64>(s);
  let a = b & 0x7ffffffffffffffflu;
  if (a != 0lu && a < 0x37e0000000000000lu) { return vec2<u32>(u32((b + 0x80000000lu) >> 32u), 1u); }
  return vec2<u32>(bitcast<u32>(narrow_f32(s)), 0u);
}"""),
    "kept": ((("widen", F32),), """fn kept_f32(x: f32, high: bool) -> f64 {
  if (high) { return bitcast<f64>(u64(bitcast<u32>(x)) << 32u); }
  return widen_f32(x);
}"""),
    "fdiv": ((("widen", F32), ("narrow", F32)),
             "fn fdiv_f32(a: f32, b: f32) -> f32 { return narrow_f32(widen_f32(a) / widen_f32(b)); }"),
    # x * x, the square of pow's float64 routine narrowed: float32's own product where 2^-63 <= |x| < inf (then
    # the product is normal or infinite, correctly rounded as the narrowed one: one test on x's bits, not one on
    # x and one on the product), the float64 one for the rest (subnormal products and operands, which NVIDIA's
    # float32 multiplication flushes; zero; NaN, whose bits float64 keeps). The float64 steps cost k-means'
    # fused distances (n x k x d squares) a sixth of their time on an H200.
    "fsquare": ((("widen", F32), ("narrow", F32)), """fn fsquare_f32(x: f32) -> f32 {
  let s = x * x;
  if ((bitcast<u32>(x) & 0x7fffffffu) - 0x20000000u < 0x5f800000u) { return s; }
  return narrow_f32(widen_f32(x) * widen_f32(x));
}"""),
    # fdivmod's float32 steps (NumPy's npy_divmodf), each rounded to float32 as NumPy rounds it
    "fdivmod": ((("fmod", F32), ("widen", F32), ("r32", F32), ("narrow", F32), ("floor", F64)),
                """fn fdivmod_f32(a: f32, b: f32) -> vec2<f32> {
  let wa = widen_f32(a);
  let wb = widen_f32(b);
  var m = widen_f32(fmod_f32(a, b));
  var div = r32_f32(r32_f32(wa - m) / wb);
  let neg0 = bitcast<f64>(0x8000000000000000lu);
  if (m != f64(0)) {
    if ((wb < f64(0)) != (m < f64(0))) { m = r32_f32(m + wb); div = r32_f32(div - f64(1)); }
  } else {
    m = select(f64(0), neg0, (bitcast<u32>(b) >> 31u) != 0u);
  }
  var fd: f64;
  if (div != f64(0)) {
    fd = floor_f64(div);
    if (r32_f32(div - fd) > f64(0.5)) { fd = fd + f64(1); }
  } else {
    fd = select(f64(0), neg0, ((bitcast<u32>(a) ^ bitcast<u32>(b)) >> 31u) != 0u);
  }
  return vec2<f32>(narrow_f32(fd), narrow_f32(m));
}"""),
}

_INT: dict[str, tuple[tuple[str, ...], str]] = {
    "floordiv": ((), """fn floordiv_{S}(a: {T}, b: {T}) -> {T} {{
  if (b == {T}(0)) {{ return {T}(0); }}
  {SIGNED_DIV}
}}"""),
    "remainder": ((), """fn remainder_{S}(a: {T}, b: {T}) -> {T} {{
  if (b == {T}(0)) {{ return {T}(0); }}
  {SIGNED_REM}
}}"""),
    "ipow": ((), """fn ipow_{S}(a: {T}, b: {T}) -> {T} {{
  {NEG_EXP}
  var base = a;
  var e = b;
  var r = {T}(1);
  loop {{
    if (e == {T}(0)) {{ break; }}
    if ((e & {T}(1)) != {T}(0)) {{ r = r * base; }}
    base = base * base;
    e = e >> {ONE_U};
  }}
  return r;
}}"""),
    # NumPy: shifting by a negative amount or by the width or more gives 0 (left) or the sign (right)
    "shl": ((), """fn shl_{S}(a: {T}, b: {T}) -> {T} {{
  if ({B_OUT}) {{ return {T}(0); }}
  return a << {SHIFT_U}(b);
}}"""),
    "shr": ((), """fn shr_{S}(a: {T}, b: {T}) -> {T} {{
  if ({B_OUT}) {{ return {SIGN_FILL}; }}
  return a >> {SHIFT_U}(b);
}}"""),
    "isign": ((), "fn isign_{S}(x: {T}) -> {T} {{ return {SIGN_EXPR}; }}"),
    "iabs": ((), "fn iabs_{S}(x: {T}) -> {T} {{ return {ABS_EXPR}; }}"),
}


class WgslHelpers:
    """The helper functions one shader needs, emitted once each, dependencies first."""

    def __init__(self, has_f64: bool):
        self.has_f64 = has_f64
        self._code: dict[str, str] = {}

    def fn(self, name: str, w: WgslType) -> str:
        """The name of helper ``name`` for compute type ``w``, instantiated into this shader."""
        w = COMPUTE[w]
        full = f"{name}_{w.suffix}"
        if full not in self._code:
            self._code[full] = ""  # placeholder: keeps dependency order and breaks cycles
            self._code[full] = self._instantiate(name, w)
            # move to the end so that it follows the helpers it calls
            self._code[full] = self._code.pop(full)
        return full

    def uses(self, name: str, w: WgslType) -> bool:
        """Whether helper ``name`` for compute type ``w`` is in this shader."""
        return f"{name}_{COMPUTE[w].suffix}" in self._code

    def source(self) -> str:
        return "\n".join(c for c in self._code.values() if c) + "\n"

    def _instantiate(self, name: str, w: WgslType) -> str:
        fam = w.family
        if fam == "f":
            if w.ct == "f32" and self.has_f64 and name in _F32_VIA_F64:
                deps, code = _F32_VIA_F64[name]
                for d, t in deps:
                    self.fn(d, t)
                return code
            if name in _REAL:
                deps, tpl = _REAL[name]
                for d in deps:
                    self.fn(d, w)
                return tpl.format(**_float_subst(w))
            from . import _libm
            return _libm.instantiate(self, name, w)
        if fam in "iu":
            deps, tpl = _INT[name]
            for d in deps:
                self.fn(d, w)
            return tpl.format(**_int_subst(w))
        if fam == "c":
            from . import _complex
            return _complex.instantiate(self, name, w)
        raise KeyError(f"no WGSL helper {name} for {w.dtype.name}")


def _float_subst(w: WgslType) -> dict:
    s = dict(_FLOAT[w.ct])
    s["U_SUFFIX"] = "u" if w.ct == "f32" else "lu"
    return s


def _int_subst(w: WgslType) -> dict:
    T = w.ct
    signed = T[0] == "i"
    bits = int(T[1:])
    one_u = "1u"
    s = dict(T=T, S=w.suffix, ONE_U=one_u, SHIFT_U="u32")
    if signed:
        # the remainder as a - q * b: NVIDIA's Vulkan driver gets % wrong for negative divisors
        s["SIGNED_DIV"] = (f"if (b == {T}(-1)) {{ return {T}(0) - a; }}\n"
                           f"  let q = a / b;\n"
                           f"  if ((a - q * b != {T}(0)) && ((a < {T}(0)) != (b < {T}(0)))) {{ return q - {T}(1); }}\n"
                           f"  return q;")
        s["SIGNED_REM"] = (f"if (b == {T}(-1)) {{ return {T}(0); }}\n"
                           f"  let r = a - (a / b) * b;\n"
                           f"  if ((r != {T}(0)) && ((r < {T}(0)) != (b < {T}(0)))) {{ return r + b; }}\n"
                           f"  return r;")
        s["NEG_EXP"] = (f"if (b < {T}(0)) {{\n"
                        f"    if (a == {T}(1)) {{ return {T}(1); }}\n"
                        f"    if (a == {T}(-1)) {{ return select({T}(1), {T}(-1), (b & {T}(1)) != {T}(0)); }}\n"
                        f"    return {T}(0);\n  }}")
        s["B_OUT"] = f"b < {T}(0) || b >= {T}({bits})"
        s["SIGN_FILL"] = f"select({T}(0), {T}(-1), a < {T}(0))"
        s["SIGN_EXPR"] = f"select(select({T}(0), {T}(1), x > {T}(0)), {T}(-1), x < {T}(0))"
        s["ABS_EXPR"] = f"select(x, {T}(0) - x, x < {T}(0))"
    else:
        s["SIGNED_DIV"] = "return a / b;"
        s["SIGNED_REM"] = "return a % b;"
        s["NEG_EXP"] = ""
        s["B_OUT"] = f"b >= {T}({bits})"
        s["SIGN_FILL"] = f"{T}(0)"
        s["SIGN_EXPR"] = f"select({T}(0), {T}(1), x > {T}(0))"
        s["ABS_EXPR"] = "x"
    return s


#: the WgslType of bool results
BOOL = WGSL_TYPES[dt.bool_]
__all__ = ["WgslHelpers", "BOOL"]
