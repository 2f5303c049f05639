"""How each dtype lives in WGSL: its storage in a buffer binding, its compute type, loads, stores,
casts between compute types, and the host packing of scalar operands into uniform words.

Storage follows the host's byte layout exactly (copies to and from the device are plain byte copies):
32- and 64-bit types are native WGSL arrays, complex types are arrays of ``vec2``, and the 8- and
16-bit types (bool, int8, uint8, int16, uint16) are packed in ``array<u32>`` words: loads extract the
element, stores replace its bits with an atomic compare-exchange so that neighbours in one word written
by other invocations are left intact (and two writes of one element leave one of the values).
"""

from __future__ import annotations

import numpy as np

from ... import _dtypes as dt


class WgslType:
    """The WGSL view of one dtype."""

    __slots__ = ("dtype", "family", "ct", "storage", "bits", "signed", "suffix", "real", "nwords")

    def __init__(self, dtype: dt.DType, family: str, ct: str, storage: str, bits: int, signed: bool,
                 suffix: str, real: "WgslType | None" = None):
        self.dtype = dtype
        self.family = family    # "b" bool, "i" signed, "u" unsigned, "f" real float, "c" complex
        self.ct = ct            # WGSL type values are computed in
        self.storage = storage  # WGSL element type of the binding's array ("u32" for packed types)
        self.bits = bits        # element bits when packed into u32 words, else 0
        self.signed = signed
        self.suffix = suffix    # names the helper functions instantiated for this compute type
        self.real = real        # complex: the WgslType of its parts
        self.nwords = max(1, dtype.itemsize // 4)  # uniform words of one scalar

    @property
    def packed(self) -> bool:
        return self.bits != 0

    def __repr__(self) -> str:
        return f"WgslType({self.dtype.name})"


F32 = WgslType(dt.float32, "f", "f32", "f32", 0, True, "f32")
F64 = WgslType(dt.float64, "f", "f64", "f64", 0, True, "f64")
WGSL_TYPES: dict[dt.DType, WgslType] = {
    dt.bool_: WgslType(dt.bool_, "b", "bool", "u32", 8, False, "bool"),
    dt.int8: WgslType(dt.int8, "i", "i32", "u32", 8, True, "i32"),
    dt.int16: WgslType(dt.int16, "i", "i32", "u32", 16, True, "i32"),
    dt.int32: WgslType(dt.int32, "i", "i32", "i32", 0, True, "i32"),
    dt.int64: WgslType(dt.int64, "i", "i64", "i64", 0, True, "i64"),
    dt.uint8: WgslType(dt.uint8, "u", "u32", "u32", 8, False, "u32"),
    dt.uint16: WgslType(dt.uint16, "u", "u32", "u32", 16, False, "u32"),
    dt.uint32: WgslType(dt.uint32, "u", "u32", "u32", 0, False, "u32"),
    dt.uint64: WgslType(dt.uint64, "u", "u64", "u64", 0, False, "u64"),
    dt.float32: F32,
    dt.float64: F64,
    dt.complex64: WgslType(dt.complex64, "c", "vec2<f32>", "vec2<f32>", 0, True, "c64", F32),
    dt.complex128: WgslType(dt.complex128, "c", "vec2<f64>", "vec2<f64>", 0, True, "c128", F64),
}

#: the WgslType of the type a dtype computes in (int8 and int16 compute as int32, uint8 and uint16 as
#: uint32): helper functions are instantiated once per compute type
COMPUTE = {w: WGSL_TYPES[dt.int32] if w.ct == "i32" else WGSL_TYPES[dt.uint32] if w.ct == "u32" else w
           for w in WGSL_TYPES.values()}


def wt(dtype: dt.DType) -> WgslType:
    return WGSL_TYPES[dtype]


# --- loads and stores -------------------------------------------------------------------------------

def load_fn(w: WgslType, name: str, binding: str, atomic: bool = False) -> str:
    """WGSL ``fn name(e: u32) -> ct`` reading element ``e`` of ``binding`` (declared by storage_decl;
    ``atomic`` when it is an output declared atomic that the kernel also reads)."""
    if not w.packed:
        return f"fn {name}(e: u32) -> {w.ct} {{ return {binding}[e]; }}\n"
    sh, lg, mask = _packing(w)
    word = f"atomicLoad(&{binding}[e >> {lg}])" if atomic else f"{binding}[e >> {lg}]"
    if w.family == "b":
        body = f"(({word} >> ((e & {sh}) << 3u)) & 0xffu) != 0u"
    elif w.signed:
        body = f"bitcast<i32>({word} << (({sh} - (e & {sh})) * {w.bits}u)) >> {32 - w.bits}u"
    else:
        body = f"({word} >> ((e & {sh}) * {w.bits}u)) & {mask}"
    return f"fn {name}(e: u32) -> {w.ct} {{ return {body}; }}\n"


def _packing(w: WgslType) -> tuple[str, str, str]:
    """(mask of the element's position in its word, log2 of elements per word, element bit mask)."""
    return ("3u", "2u", "0xffu") if w.bits == 8 else ("1u", "1u", "0xffffu")


def store_fn(w: WgslType, name: str, binding: str) -> str:
    """WGSL ``fn name(e: u32, v: ct)`` writing element ``e`` of ``binding``."""
    if not w.packed:
        return f"fn {name}(e: u32, v: {w.ct}) {{ {binding}[e] = v; }}\n"
    sh, lg, mask = _packing(w)
    val = "select(0u, 1u, v)" if w.family == "b" else ("bitcast<u32>(v)" if w.signed else "v")
    # one compare-exchange replaces the element's bits: two invocations writing the same element (repeated
    # scatter indices) leave one value or the other, never a mix of both
    return (f"fn {name}(e: u32, v: {w.ct}) {{\n"
            f"  let s = (e & {sh}) * {w.bits}u;\n"
            f"  let p = &{binding}[e >> {lg}];\n"
            f"  let bits = ({val} & {mask}) << s;\n"
            f"  var old = atomicLoad(p);\n"
            f"  loop {{\n"
            f"    let r = atomicCompareExchangeWeak(p, old, (old & ~({mask} << s)) | bits);\n"
            f"    if (r.exchanged) {{ break; }}\n"
            f"    old = r.old_value;\n"
            f"  }}\n}}\n")


def storage_decl(w: WgslType, binding: str, index: int, atomic: bool) -> str:
    elem = "atomic<u32>" if (atomic and w.packed) else w.storage
    return f"@group(0) @binding({index}) var<storage, read_write> {binding}: array<{elem}>;\n"


# --- literals and casts -----------------------------------------------------------------------------

def lit(w: WgslType, value) -> str:
    """A WGSL constant of compute type ``w`` from a finite Python number (exact for those kernels use)."""
    ct = w.ct
    if w.family == "c":
        return f"{ct}({lit(w.real, complex(value).real)}, {lit(w.real, complex(value).imag)})"
    if ct == "bool":
        return "true" if value else "false"
    if w.family == "f":
        return f"{ct}({float(value)!r})"
    v = int(value)
    if ct == "i32" and v == -2 ** 31:
        return "i32(-2147483647 - 1)"
    if ct == "i64":
        return f"i64({v}li)" if v != -2 ** 63 else "(i64(-9223372036854775807li) - 1li)"
    return f"{ct}({v}{'u' if ct == 'u32' else 'lu' if ct == 'u64' else ''})"


def cast(expr: str, src: WgslType, dst: WgslType) -> str:
    """``expr`` (of ``src``'s compute type) converted to ``dst``'s compute type, as NumPy's unsafe cast
    does (complex to real keeps the real part; anything to bool is ``!= 0``, tested on the bits for
    floats so that NaN counts as true whatever the compiler assumes about NaN)."""
    s, d = src.ct, dst.ct
    if s == d:
        return expr
    sf, df = src.family, dst.family
    if df == "b":
        if sf == "c":
            return f"({_nonzero(f'({expr}).x', src.real)} || {_nonzero(f'({expr}).y', src.real)})"
        if sf == "f":
            return _nonzero(expr, src)
        return f"({expr} != {s}(0))"
    if sf == "b":
        if df == "c":
            return f"{d}(select({dst.real.ct}(0), {dst.real.ct}(1), {expr}), {_runtime_zero(dst.real)})"
        return f"select({d}(0), {d}(1), {expr})"
    if df == "c":
        if sf == "c":
            if s == "vec2<f32>" and d == "vec2<f64>":
                return f"{d}({f32_to_f64(f'({expr}).x')}, {f32_to_f64(f'({expr}).y')})"
            return f"{d}({expr})"
        return f"{d}({cast(expr, src, dst.real)}, {_runtime_zero(dst.real)})"
    if sf == "c":
        return cast(f"({expr}).x", src.real, dst)
    if sf == "f" and df == "u":
        # WGSL saturates negative floats to 0; NumPy (through C) wraps small negative values
        signed = "i32" if d == "u32" else "i64"
        return f"select({d}({expr}), bitcast<{d}>({signed}({expr})), {expr} < {s}(0))"
    if sf in "iu" and df in "iu":
        return _int_cast(expr, src, dst)
    if s == "f32" and d == "f64":
        return f32_to_f64(expr)
    return f"{d}({expr})"


#: f32_normal_gap(x) is below this exactly where the float32 x is normal (then f64(x) is exact on every adapter)
F32_NORMAL_GAPS = "0x7f000000u"


def f32_normal_gap(expr: str) -> str:
    """The float32 ``expr``'s magnitude bits less the smallest normal's (u32, wrapping below it): under
    F32_NORMAL_GAPS for a normal float, at or above it for zero, a subnormal, an infinity or a NaN."""
    return f"(bitcast<u32>({expr}) & 0x7fffffffu) - 0x00800000u"


#: f32_safe_gap(x) is at most this exactly where the float32 x is zero, infinite, NaN or of magnitude 2^-40 or
#: more: products of such floats and sums of those products (float32 fma chains) are zero or multiples of 2^-126
#: (their exponents add to at least -80, their 24-bit significands to at most 48 bits), so none is subnormal, and
#: an adapter that flushes float32 subnormals gives the bits of one that keeps them
F32_SAFE_GAPS = "0xd4800000u"


def f32_safe_gap(expr: str) -> str:
    """The float32 ``expr``'s magnitude bits less 2^-40's (u32, wrapping): at most F32_SAFE_GAPS for zero
    (exactly it), 2^-40 and above, infinities and NaNs; above it for the magnitudes between."""
    return f"(bitcast<u32>({expr}) & 0x7fffffffu) - 0x2b800000u"


def f32_to_f64(expr: str) -> str:
    """A float32 widened to float64 exactly, built from its bits: NVIDIA's f64(f32) drops a NaN's sign and
    flushes subnormals. Finite normals, infinities and NaNs (payload kept) are the magnitude bits shifted
    by 29 with the exponent rebiased (+896, or +1792 to make 0xff 0x7ff); zero and subnormals are
    f64(mantissa) * 2^-149 (exact); a signalling NaN is quieted, as NumPy's (the CPU's) widening does;
    the sign is or-ed in last."""
    a = f"(bitcast<u32>({expr}) & 0x7fffffffu)"
    big = f"((u64({a}) << 29u) + select(0x3800000000000000lu, 0x7000000000000000lu, {a} >= 0x7f800000u))"
    small = f"bitcast<u64>(f64({a}) * bitcast<f64>(0x36a0000000000000lu))"
    sign = f"(u64(bitcast<u32>({expr}) >> 31u) << 63u)"
    quiet = f"select(0lu, 0x0008000000000000lu, {a} > 0x7f800000u)"
    return f"bitcast<f64>(select({small}, {big}, {a} >= 0x00800000u) | {quiet} | {sign})"


def _runtime_zero(w: WgslType) -> str:
    """+0 read from the uniform word that is always 0: the imaginary part of a real number made complex
    must not be a constant the compiler folds (0 * inf is NaN, 1 / (x + 0j) has a NaN part...)."""
    return "bitcast<f32>(u.w[0].z)" if w.ct == "f32" else "bitcast<f64>(u64(u.w[0].z))"


def _nonzero(expr: str, w: WgslType) -> str:
    if w.ct == "f32":
        return f"((bitcast<u32>({expr}) & 0x7fffffffu) != 0u)"
    return f"((bitcast<u64>({expr}) & 0x7ffffffffffffffflu) != 0lu)"


def _int_cast(expr: str, src: WgslType, dst: WgslType) -> str:
    """Two's-complement conversion between integer compute types (truncating or extending)."""
    s, d = src.ct, dst.ct
    sbits, dbits = int(s[1:]), int(d[1:])
    if sbits == dbits:
        return f"bitcast<{d}>({expr})"
    if sbits < dbits:
        return widen(expr, s, d)
    return f"{d}({expr})"  # narrowing keeps the low bits


def widen(expr: str, s: str, d: str) -> str:
    """A 32-bit integer as a 64-bit one, extended by its own signedness. Spelled through u64(u32), the
    one conversion lavapipe compiles right: its i64(i32) and i64(u32) values compare wrongly."""
    if s == "u32":
        return f"bitcast<{d}>(u64({expr}))"
    return f"bitcast<{d}>(bitcast<i64>(u64(bitcast<u32>({expr})) << 32u) >> 32u)"


# --- host side ------------------------------------------------------------------------------------

def scalar_words(w: WgslType, value) -> list[int]:
    """The uniform words holding the scalar ``value`` of ``w``'s dtype (packed types widened to a word)."""
    if w.packed:
        v = int(value)
        return [v & 0xFFFFFFFF]
    a = np.asarray(value, dtype=w.dtype.np).reshape(1)
    return a.view(np.uint32).tolist()


def uniform_scalar(w: WgslType, words: list[str]) -> str:
    """WGSL for a scalar of ``w`` held in the uniform words ``words`` (accessor expressions)."""
    ct = w.ct
    if w.packed:
        if w.family == "b":
            return f"({words[0]} != 0u)"
        return f"bitcast<i32>({words[0]})" if w.signed else words[0]
    if ct == "u32":
        return words[0]
    if ct in ("i32", "f32"):
        return f"bitcast<{ct}>({words[0]})"
    if ct in ("i64", "u64", "f64"):  # (naga types bitcast<f64>(vec2<u32>) as a vector: join as a u64)
        return f"bitcast<{ct}>((u64({words[1]}) << 32u) | u64({words[0]}))"
    r = w.real
    return f"{ct}({uniform_scalar(r, words[:r.nwords])}, {uniform_scalar(r, words[r.nwords:])})"
