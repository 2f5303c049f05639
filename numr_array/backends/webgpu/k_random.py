"""Philox4x32-10 random numbers in WGSL: "philox" and "philox_advance" (numr_array/kernels.py).

The same bits as backends/array_module_kernels/random.py (NumPy, CuPy), in u32 arithmetic only: WGSL has
no 32x32->64 multiply, so ``mulhi`` is built from 16-bit halves; the integer draws' 64- and 128-bit
products are schoolbook sums of 32-bit limbs. Float64 outputs need shader-f64 (the namespace refuses them
on an adapter without it), 64-bit integers shader-int64.

The generator's state (uint32 (6,): key0, key1, counter words least significant first) is read by the
shader when it runs, so a graph's replay draws from the counter the previous replay's advance left.
"""

from __future__ import annotations

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._shader import Layout, bindings, groups, main_header, pack_words
from ._types import WGSL_TYPES, cast, wt
from ._views import window

U32 = WGSL_TYPES[dt.uint32]
U64 = WGSL_TYPES[dt.uint64]
MASK = 0xFFFFFFFF

# uniform words after the frame's four: the state's element offset, the output's, low (2 words), range (2),
# and the draw's index of the launch's first element (a draw too large for one binding is launched in pieces)
_STATE, _OUT, _LOW, _RANGE, _BASE = 4, 5, 6, 8, 10

_PHILOX = """
fn mulhi(a: u32, b: u32) -> u32 {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}
fn philox(i: u32) -> vec4<u32> {
  let so = %(state)s;
  var k0 = ld1(so); var k1 = ld1(so + 1u);
  let c0 = ld1(so + 2u) + i; let y0 = select(0u, 1u, c0 < i);
  let c1 = ld1(so + 3u) + y0; let y1 = select(0u, 1u, c1 < y0);
  let c2 = ld1(so + 4u) + y1; let y2 = select(0u, 1u, c2 < y1);
  var c = vec4<u32>(c0, c1, c2, ld1(so + 5u) + y2);
  for (var r = 0u; r < 10u; r++) {
    if (r > 0u) { k0 = k0 + 0x9E3779B9u; k1 = k1 + 0xBB67AE85u; }
    let x = c.x; let z = c.z;
    c = vec4<u32>(mulhi(0xCD9E8D57u, z) ^ c.y ^ k0, 0xCD9E8D57u * z, mulhi(0xD2511F53u, x) ^ c.w ^ k1,
                  0xD2511F53u * x);
  }
  return c;
}
"""


def _integer_body(k: int, full: bool, ow) -> str:
    """WGSL computing ``v`` = low + floor(R * range / 2**(32 k)) (R = w.x w.y [w.z w.w], w.x most significant)
    and storing it in the output's dtype."""
    W = Layout.word
    lines = []
    if full:  # range 2**64: R's top 64 bits
        lines.append("  var v0 = w.y; var v1 = w.x;\n")
    else:
        limbs = ["w.y", "w.x"] if k == 2 else ["w.w", "w.z", "w.y", "w.x"]  # least significant first
        lines.append(f"  let cl = array<u32, 2>({W(_RANGE)}, {W(_RANGE + 1)});\n")
        lines.append(f"  var p = array<u32, {k + 2}>();\n")
        lines.append("  for (var j = 0u; j < 2u; j++) {\n    var carry = 0u;\n")
        lines.append(f"    let r = array<u32, {k}>({', '.join(limbs)});\n")
        lines.append(f"    for (var q = 0u; q < {k}u; q++) {{\n"
                     "      let a = r[q]; let b = cl[j];\n"
                     "      var hi = mulhi(a, b); let lo = a * b;\n"
                     "      let s = lo + p[q + j]; hi = hi + select(0u, 1u, s < lo);\n"
                     "      let t = s + carry; hi = hi + select(0u, 1u, t < s);\n"
                     "      p[q + j] = t; carry = hi;\n    }\n"
                     f"    p[{k}u + j] = carry;\n  }}\n")
        lines.append(f"  var v0 = p[{k}]; var v1 = p[{k + 1}];\n")
    if ow.dtype.itemsize == 8:
        lines.append(f"  let v = ((u64(v1) << 32u) | u64(v0)) + ((u64({W(_LOW + 1)}) << 32u) | u64({W(_LOW)}));\n")
        lines.append(f"  st2(o + i, {cast('v', U64, ow)});\n")
    else:
        lines.append(f"  let v = v0 + {W(_LOW)};\n")  # the result fits the dtype: its low 32 bits are it
        lines.append(f"  st2(o + i, {cast('v', U32, wt(dt.int32) if ow.signed else U32)});\n")
    return "".join(lines)


def _layout() -> Layout:
    lay = Layout()
    lay.alloc(7)  # _STATE, _OUT, _LOW, _RANGE, _BASE
    return lay


def _philox_source(dist: str, ow, k: int, full: bool) -> str:
    lay = _layout()
    W = Layout.word
    body = f"  let w = philox(i + {W(_BASE)});\n  let o = {W(_OUT)};\n"
    if dist == "bits":
        body += "  st2(o + i, w.x);\n"
    elif dist == "uniform" and ow.dtype == dt.float32:
        body += "  st2(o + i, f32(w.x >> 8u) * 5.9604644775390625e-08f);\n"  # 2**-24
    elif dist == "uniform":
        body += ("  st2(o + i, (f64(w.x >> 5u) * f64(67108864.0) + f64(w.y >> 6u)) "
                 "* f64(1.1102230246251565e-16));\n")  # 2**26, 2**-53
    else:
        body += _integer_body(k, full, ow)
    return (lay.block() + bindings([(U32, False, False), (ow, True, False)])
            + _PHILOX % {"state": W(_STATE)} + main_header() + body + "}\n")


def _philox(client, ins, outs, p):
    state, o = ins[0], outs[0]
    n = o.size
    if n == 0:
        return
    ow = wt(o._dtype)
    dist = p["dist"]
    rng = p.get("range", 0)
    k = 2 if rng <= 2 ** 32 else 4
    full = rng == 2 ** 64
    key = ("philox", dist, o._dtype.name, k, full)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        pipe = client.pipeline(key, lambda: _philox_source(dist, ow, k, full), 2, _layout().nbytes)
    sb, ss, sfirst = window(client, state)
    low = p.get("low", 0) % 2 ** 64
    isz = o._dtype.itemsize
    piece = max(1024, (client.max_binding - client.storage_align) // isz // 1024 * 1024)
    for base in range(0, n, piece):
        count = min(piece, n - base)
        part = Tensor(o._buf, o._dtype, (count,), (1,), o._offset + base, o._dev)  # (o is C-contiguous)
        ob, osz, ofirst = window(client, part)
        grid = groups(count)
        words = [count, grid[0], 0, 0, sfirst, ofirst, low & MASK, low >> 32, rng & MASK, (rng >> 32) & MASK, base, 0]
        client.dispatch(pipe, pack_words(words), (state._buf.handle, sb, ss, o._buf.handle, ob, osz), grid)


_ADVANCE = """
@compute @workgroup_size(1)
fn main() {
  let so = %(state)s;
  let a0 = ld1(so + 2u); let s0 = a0 + %(n0)s; let y0 = select(0u, 1u, s0 < a0);
  let a1 = ld1(so + 3u); let t1 = a1 + %(n1)s; let s1 = t1 + y0;
  let y1 = select(0u, 1u, t1 < a1) + select(0u, 1u, s1 < t1);
  let s2 = ld1(so + 4u) + y1; let y2 = select(0u, 1u, s2 < y1);
  st1(so + 2u, s0); st1(so + 3u, s1); st1(so + 4u, s2); st1(so + 5u, ld1(so + 5u) + y2);
}
"""


def _philox_advance(client, ins, outs, p):
    state = outs[0]
    n = p["n"]
    W = Layout.word
    key = ("philox_advance",)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        lay = Layout()
        lay.alloc(3)
        src = (lay.block() + bindings([(U32, True, True)])
               + _ADVANCE % {"state": W(4), "n0": W(5), "n1": W(6)})
        pipe = client.pipeline(key, lambda: src, 1, lay.nbytes)
    sb, ss, sfirst = window(client, state)
    client.dispatch(pipe, pack_words([1, 1, 0, 0, sfirst, n & MASK, (n >> 32) & MASK, 0]),
                    (state._buf.handle, sb, ss), (1, 1, 1))


def kernels() -> dict:
    return {"philox": _philox, "philox_advance": _philox_advance}
