"""Shader assembly shared by every kernel family: the uniform block, the tensor bindings, the element
loop over a (possibly 2-D) dispatch, and the host-side layout of the uniform words.

Every shader has the same frame: binding 0 is a uniform block of ``vec4<u32>`` words (read through a
dynamic offset, so that one bind group serves many launches), bindings 1.. are the tensors' windows as
read-write storage arrays. Word 0 holds the number of invocations that do work (of a map launch: of
elements), word 1 the number of workgroups along x (the dispatch is 2-D when one dimension would exceed
65535 workgroups), word 2 is always 0: helpers OR it into values to stop the compiler from rewriting exact
float sequences (``opq_f64``), and word 3 is free. The kernel's own words follow.
"""

from __future__ import annotations

import re
import struct
from typing import Container

from ._types import WgslType, load_fn, storage_decl, store_fn, uniform_scalar

WG = 256  # invocations per workgroup of the element-wise kernels
MAX_GROUPS = 65535


class Layout:
    """Allocates uniform words at shader-generation time; the same order fills them at launch time."""

    def __init__(self) -> None:
        self.n = 4  # words 0-3: the frame's

    def alloc(self, count: int) -> int:
        k = self.n
        self.n += count
        return k

    @staticmethod
    def word(k: int) -> str:
        return f"u.w[{k >> 2}].{'xyzw'[k & 3]}"

    def words(self, k: int, count: int) -> list[str]:
        return [self.word(k + i) for i in range(count)]

    def scalar(self, w: WgslType) -> str:
        """Allocate a scalar of ``w`` and return the WGSL expression reading it."""
        k = self.alloc(w.nwords)
        return uniform_scalar(w, self.words(k, w.nwords))

    def block(self) -> str:
        nvec = max(1, (self.n + 3) // 4)
        return f"struct U {{ w: array<vec4<u32>, {nvec}> }}\n@group(0) @binding(0) var<uniform> u: U;\n"

    @property
    def nbytes(self) -> int:
        return max(16, (self.n + 3) // 4 * 16)


def bindings(tensors: list[tuple]) -> str:
    """Declarations and accessors of tensor bindings 1..: for each (wt, written, read_back) binding k
    there is ``ldK(e)`` (unless written without read_back) and ``stK(e, v)`` (when written); a fourth item
    V > 1 declares a read binding of vectors of V values, ``ldK(e)`` then vector e (elements V e ...)."""
    out = []
    for k, (w, written, read_back, *vec) in enumerate(tensors, start=1):
        name = f"b{k}"
        if vec and vec[0] > 1:
            if written:
                raise ValueError(f"bindings: binding {k} of vectors of {vec[0]} values is written (they are read-only)")
            vt = f"vec{vec[0]}<{w.ct}>"
            out.append(f"@group(0) @binding({k}) var<storage, read_write> {name}: array<{vt}>;\n"
                       f"fn ld{k}(e: u32) -> {vt} {{ return {name}[e]; }}\n")
            continue
        out.append(storage_decl(w, name, k, atomic=written))
        if not written or read_back:
            out.append(load_fn(w, f"ld{k}", name, atomic=written))
        if written:
            out.append(store_fn(w, f"st{k}", name))
    return "".join(out)


def main_header(wg: int = WG) -> str:
    """The entry point's start: ``i`` is the invocation's linear index, ``n`` the count doing work."""
    return (f"@compute @workgroup_size({wg})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
            f"  let i = (wid.y * u.w[0].y + wid.x) * {wg}u + li;\n"
            "  if (i >= u.w[0].x) { return; }\n")


#: the most workgroups of a map launch (``map_entry``): its invocations then stride over the elements. An
#: H200 (wgpu, Vulkan) took 10 µs to run 12500 empty workgroups of 256 invocations, 1.7 µs for 782; jitted
#: adam, heat and k-means 1.36-1.39, 1.52 and 1.53 ms with 4096-8192 against 1.43, 1.62 and 1.56 with 65535,
#: x * 2 on 1 GiB float32 2880 GB/s with any of them
MAP_GROUPS = 4096


def map_entry(body: str) -> str:
    """A map's entry point: ``body`` (WGSL for the element at u32 index ``i``, which may ``return``) as a
    function run for elements i = the invocation's index, + the dispatch's invocations, ... below word 0;
    the dispatch is ``map_groups``'s."""
    return (f"fn at_(i: u32) {{\n{body}}}\n@compute @workgroup_size({WG})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32,\n"
            "        @builtin(num_workgroups) nw: vec3<u32>) {\n"
            f"  let stride = nw.x * {WG}u;\n"
            f"  for (var i = wid.x * {WG}u + li; i < u.w[0].x; i = i + stride) {{ at_(i); }}\n}}\n")


def map_groups(n: int) -> tuple[int, int, int]:
    """The workgroups of a ``map_entry`` launch over ``n`` elements: one per WG elements, at most MAP_GROUPS."""
    return (max(1, min(-(-n // WG), MAP_GROUPS)), 1, 1)


def butterfly(v: str, lanes: int, indent: str) -> str:
    """WGSL statements adding to ``v`` (a variable of every invocation) its value in the lanes lanes / 2, ...,
    1 apart, by subgroup shuffles: over ``lanes`` consecutive invocations of one subgroup each ends with the
    sum of a fixed tree (lane l adds lane l + s, s = lanes / 2, ..., 1), the bits of that tree summed in
    workgroup memory (IEEE addition commutes). Every invocation of the subgroup must run them."""
    out = []
    s = lanes // 2
    while s:
        out.append(f"{indent}{v} = {v} + subgroupShuffleXor({v}, {s}u);\n")
        s //= 2
    return "".join(out)


def groups(n_invocations: int, wg: int = WG) -> tuple[int, int, int]:
    """Workgroup counts covering ``n_invocations`` (2-D beyond 65535 workgroups)."""
    g = -(-n_invocations // wg)
    if g <= MAX_GROUPS:
        return (max(g, 1), 1, 1)
    gy = -(-g // MAX_GROUPS)
    gx = -(-g // gy)
    return (gx, gy, 1)


#: the frame's word that is always 0 (``opq_f64``'s): it stays a uniform, opaque to the compiler
OPAQUE_WORD = 2
#: whether captured dispatches compile their words in (``baked``; False: every word stays a uniform)
BAKE = True
_WORD = re.compile(r"u\.w\[(\d+)\]\.([xyzw])")


def baked(text: str, words: list[int], keep: Container[int]) -> str:
    """``text`` with its uniform words written as the literals ``words`` gives them, but OPAQUE_WORD's and
    those in ``keep`` (scalar operands, whose literals the compiler could fold into the arithmetic). A
    captured dispatch's words never change: as constants its shape, strides and offsets let the compiler fold
    its index arithmetic (divisions by the dimensions, loop bounds)."""
    if not BAKE:
        return text

    def literal(m: re.Match) -> str:
        k = int(m.group(1)) * 4 + "xyzw".index(m.group(2))
        return m.group(0) if k == OPAQUE_WORD or k in keep or k >= len(words) else f"{words[k]}u"
    return _WORD.sub(literal, text)


def pack_words(words: list[int]) -> bytes:
    """A dispatch's uniform words (u32) as the bytes written to its uniform slot."""
    return struct.pack(f"<{len(words)}I", *words)
