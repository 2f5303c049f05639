"""Contractions: matmul, tensordot and vecdot, as one map kernel over the result.

Each result element is a sum over the contracted index set of x1[...] * x2[...]: a result axis has a
stride in x1 and one in x2 (zero where it is not that operand's: a free axis of the other operand, or a
broadcast batch axis), and each contracted axis has a stride in both. The operands are bound whole;
each invocation walks the contraction sequentially in the promoted dtype. This is the simple form (one
invocation per result element, no workgroup tiling).
"""

from __future__ import annotations

import math

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._map import Gen, run_map
from ._types import COMPUTE, WTS, cast, lit, wt

I32 = WTS[dt.int32]


def contract(client, x1: Tensor, x2: Tensor, o: Tensor, out_strides: list[tuple[int, int]],
             red: list[tuple[int, int, int]], conj: bool = False) -> None:
    """o[c] = sum over r of x1[..] * x2[..]: ``out_strides`` (stride in x1, stride in x2) per axis of o,
    ``red`` (size, stride in x1, stride in x2) per contracted axis."""
    c = COMPUTE[wt(o._dtype)]
    w1, w2, ow = wt(x1._dtype), wt(x2._dtype), wt(o._dtype)
    nd, nr = len(o._shape), len(red)
    params = [(I32, s) for pair in out_strides for s in pair]
    params += [(I32, v) for r in red for v in r]

    def body(g: Gen) -> str:
        lib = g.lib
        b1 = " + ".join([g.raw_offset(0)] + [f"i32({g.coord(d)}) * {g.param(2 * d)}" for d in range(nd)])
        b2 = " + ".join([g.raw_offset(1)] + [f"i32({g.coord(d)}) * {g.param(2 * d + 1)}" for d in range(nd)])
        k0 = 2 * nd
        count = " * ".join([g.param(k0 + 3 * j) for j in range(nr)]) or "1"
        lines = [f"  let b1 = {b1};\n  let b2 = {b2};\n  var acc = {lit(c, 0)};\n",
                 f"  for (var r = 0; r < {count}; r = r + 1) {{\n",
                 "    var q = r;\n    var o1 = b1;\n    var o2 = b2;\n"]
        for j in range(nr - 1, -1, -1):
            size, s1, s2 = (g.param(k0 + 3 * j + t) for t in range(3))
            lines.append(f"    {{ let i = q % {size}; q = q / {size}; o1 = o1 + i * {s1}; o2 = o2 + i * {s2}; }}\n")
        a = cast(g.raw_load(0, "o1"), w1, c)
        b = cast(g.raw_load(1, "o2"), w2, c)
        if c.family == "c":
            if conj:
                a = f"{c.ct}(({a}).x, -({a}).y)"
            lines.append(f"    acc = acc + {lib.fn('cmul', c)}({a}, {b});\n")
        elif c.family == "b":
            lines.append(f"    acc = acc || ({a} && {b});\n")
        else:
            lines.append(f"    acc = acc + {a} * {b};\n")
        lines.append("  }\n")
        return "".join(lines) + g.store(0, cast("acc", c, ow))

    run_map(client, "contract", (nd, nr, conj), [o], [], body, params=params, coords=True,
            raw=[(x1, False), (x2, False)])


def _matmul(client, ins, outs, p):
    x1, x2 = ins
    o = outs[0]
    if not math.prod(o._shape):
        return
    s1, s2 = x1._shape, x2._shape
    # x1 as (..., n, k) and x2 as (..., k, m); a 1-D operand has no n (or m) axis in the result
    v1 = len(s1) == 1
    v2 = len(s2) == 1
    t1 = list(zip(s1, x1._strides))
    t2 = list(zip(s2, x2._strides))
    k = s1[-1]
    kst1 = x1._strides[-1]
    kst2 = x2._strides[0] if v2 else x2._strides[-2]
    b1 = t1[:-2] if not v1 else []
    b2 = t2[:-2] if not v2 else []
    nb = len(o._shape) - (0 if v1 else 1) - (0 if v2 else 1)
    strides = []
    for d in range(nb):  # batch axes, right-aligned against each operand's batch axes (size 1: broadcast)
        e1 = d - (nb - len(b1))
        e2 = d - (nb - len(b2))
        st1 = b1[e1][1] if e1 >= 0 and b1[e1][0] != 1 else 0
        st2 = b2[e2][1] if e2 >= 0 and b2[e2][0] != 1 else 0
        strides.append((st1, st2))
    if not v1:
        strides.append((x1._strides[-2], 0))
    if not v2:
        strides.append((0, x2._strides[-1]))
    contract(client, x1, x2, o, strides, [(k, kst1, kst2)] if k else [(0, 0, 0)])


def _tensordot(client, ins, outs, p):
    x1, x2 = ins
    o = outs[0]
    a1, a2 = p["axes1"], p["axes2"]
    strides = [(x1._strides[d], 0) for d in range(len(x1._shape)) if d not in a1]
    strides += [(0, x2._strides[d]) for d in range(len(x2._shape)) if d not in a2]
    red = [(x1._shape[i], x1._strides[i], x2._strides[j]) for i, j in zip(a1, a2)]
    contract(client, x1, x2, o, strides, red)


def _vecdot(client, ins, outs, p):
    x1, x2 = ins
    o = outs[0]
    strides = [(s1, s2) for s1, s2 in zip(x1._strides[:-1], x2._strides[:-1])]
    contract(client, x1, x2, o, strides, [(x1._shape[-1], x1._strides[-1], x2._strides[-1])], conj=True)


def kernels() -> dict:
    return {"matmul": _matmul, "tensordot": _tensordot, "vecdot": _vecdot}
