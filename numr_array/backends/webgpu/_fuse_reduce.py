"""Fusion of a captured reduction with the element-wise launches that produce its operand.

``sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)`` runs eagerly as a broadcast difference and a square,
each writing an array of n*k*d elements, then a reduction reading the last one. When, in a capture, the
reduction's operand x is written by the run of map launches just before it (_fuse's runs) and nothing
else reads what that run stores (no later launch, no tensor held after the block: _fuse._dead_stores), the
run and the reduction become one dispatch of the reduction template (k_reduce._build) in which each load
of x is replaced by the run's bodies evaluated at that element (``elem``), reading the run's own operands
(broadcast ones included) instead of the intermediate. Nothing of the run is stored.

A replay gives eager's bits: the template's plan (variant, parts, workgroups, unrolling) is the eager
pass's, so each output sums the same values in the same order, and each value is computed by the same
bodies as in the run's merged shader, its operands (but those it loads for themselves alone) and its result
opaque to the compiler (_fused_bodies._opaque), as values loaded from memory are.

x must read exactly the elements the run's last store into its memory wrote, in an order that splits into
the run's dimensions: that store contiguous over the run's dimensions from x's offset, and each of x's
dimensions (kept or reduced) a block of the run's element order (a transposed read, as in a sum over the
leading axis, is one). Each operand of the run then has a stride along every refined dimension.

A small operand that differs between the outputs (k-means' centres C, 16 x 32, against X's 200k rows) is
staged: each workgroup of the one-invocation-per-output variant copies all of it into workgroup memory
first and reads it there, a word of padding after every 32 so that a row per lane falls in different
banks. Read from memory, the lanes' 16 rows of C took 16 cache lines per load: k-means' distances (200k x
16 x 32 float32) 238 µs on an H200, 142 staged (the jitted program 2.09 -> 1.62 ms).

Where an operand is the same for consecutive outputs (X for the centres of one row) and another is not,
an invocation computes PER of them (``per``): the shared operand's loads and their addressing are one for
all, each output still summed alone in its order. The distances 145 -> 116 µs with 4 (126 with 2, 136 with
8, 211 with 16), the jitted k-means 1.55 -> 1.35 ms.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from ..._tensor import contiguous_strides
from ._fused_bodies import _M32, _opaque, bodies
from ._map_template import MapRecord
from ._shader import Layout, groups, pack_words
from ._types import F32, wt
from ._views import collapse
from .k_reduce import ReduceRecord, _build, _i32

if TYPE_CHECKING:
    from ._client import WebGPUClient

#: the most elements of one staged operand, and of all of a dispatch's (32-bit words in workgroup memory,
#: whose guaranteed size is 16 KiB)
STAGE_MOST = 2048
STAGE_TOTAL = 3072
#: outputs per invocation where some operands are the same for consecutive outputs (``per``), and the
#: fewest outputs that take it (fewer invocations for a small reduction would leave the GPU idle)
PER = 4
PER_MIN_OUTPUTS = 65536


#: float32 squares (``x ** 2``: fsquare) in a fused reduction's thread variant, as x * x: fsquare's value but
#: where |x| is in (2^-75, 2^-63) (a subnormal square, which NVIDIA's float32 multiplication flushes) or NaN (its
#: payload). An invocation notes those on |x|'s bits a (float comparisons a compiler may fold as if no NaN could
#: come): the least a - (2^-75's bits + 1), below 2^-63's bits - that only from the band (``_INEXACT``), and the
#: greatest a, above infinity's only from a NaN; then it computes its outputs again with fsquare. The same bits;
#: on an H200 k-means' distances take 72.4 µs against fsquare's 88.2-88.8 (64.3 with x * x and no test)
_FAST_SQUARE = """var<private> band_: u32 = 0xffffffffu;
var<private> top_: u32 = 0u;
fn fsquare_fast(x: f32) -> f32 {
  let a = bitcast<u32>(x) & 0x7fffffffu;
  band_ = min(band_, a - 0x1a000001u);
  top_ = max(top_, a);
  return x * x;
}
"""
_INEXACT = "band_ < 0x05ffffffu || top_ > 0x7f800000u"


class Plan(NamedTuple):
    """How one reduction evaluates the run before it."""
    run: list                # the run's MapRecords
    red: ReduceRecord
    out: tuple               # (record index, output index) of the store x reads
    leaves: list             # per operand loaded from memory: (view, bind triple, element offset)
    kshape: tuple            # the kept dimensions, refined over the run's and collapsed
    ko: tuple                # o's strides over them
    kstrides: list           # per leaf: its strides over kshape
    rshape: tuple            # the reduced dimensions, likewise
    rstrides: list           # per leaf: its strides over rshape
    staged: dict             # leaf index -> (its lowest element read, how many elements from there)

    @property
    def bound(self) -> tuple:
        """The (WBuf, byte offset, byte size) bindings of the fused dispatch."""
        return (tuple(self.red.o_binds[:3]),) + tuple(tuple(b) for _, b, _ in self.leaves)


def _blocks(dims: tuple, strides: tuple, P: tuple) -> list[list[tuple[int, int]]] | None:
    """Per dimension of a view (``dims``, ``strides``) of a buffer that the run's dimensions ``P`` fill
    contiguously from the view's offset, its sub-dimensions (size, contiguous stride over the run's elements),
    outermost first: the cuts of both into consecutive blocks; None where the view does not read each of
    the run's elements exactly once in blocks of them."""
    n = math.prod(P)
    cuts = {1, n}
    p = 1
    for s in reversed(P):
        p *= s
        cuts.add(p)
    mine = [(d, s) for d, s in zip(dims, strides) if d > 1]
    m = 1
    for d, s in mine:
        if s <= 0:
            return None
        m *= d
        cuts.update((s, s * d))
    if m != n:
        return None
    cs = sorted(cuts)
    if any(b % a for a, b in zip(cs, cs[1:])):
        return None
    level = {c: j for j, c in enumerate(cs)}
    covered = [False] * (len(cs) - 1)
    out = []
    for d, s in mine:
        lo, hi = level[s], level[s * d]
        for j in range(lo, hi):
            if covered[j]:
                return None
            covered[j] = True
        out.append([(cs[j + 1] // cs[j], cs[j]) for j in range(hi - 1, lo - 1, -1)])
    return out if all(covered) else None


def _stride(strides: tuple, P: tuple, contig: tuple, c: int) -> int:
    """A view's stride (``strides`` over ``P``) along the sub-dimension of contiguous stride ``c``."""
    for st, d, k in zip(strides, P, contig):
        if d > 1 and k <= c < k * d:
            return st * (c // k)
    raise AssertionError(c)


def plan(run: list[MapRecord], red: ReduceRecord, limit: int) -> Plan | None:
    """The fusion of ``red`` with ``run`` (the map launches just before it), or None where x is not what the
    run's last store into its memory wrote, read in blocks of the run's element order, or the dispatch would
    bind more than ``limit`` buffers. (Whether the run's stores are dead is the caller's to check.)"""
    serial, xoff, xstrides, xdtype = red.x
    if any(r.bcast for r in run):
        return None
    out = None
    for ri, rec in enumerate(run):
        for j in range(rec.nout):
            if rec.views[j][0] == serial:
                out = (ri, j)
    if out is None:
        return None
    v = run[out[0]].views[out[1]]
    P = run[0].dims
    contig = contiguous_strides(P)
    if v[1] != xoff or v[3] != xdtype or any(d > 1 and s != c for d, s, c in zip(P, v[2], contig)):
        return None
    nk = len(red.kshape)
    dims = red.kshape + red.rshape
    blocks = _blocks(dims, xstrides, P)
    if blocks is None:
        return None
    # the run's operands read from memory (not a register of the run), with the window of the first record
    # that has each
    leaves: dict = {}
    written: set = set()
    for rec in run:
        for i in range(rec.nout, len(rec.views)):
            u = rec.views[i]
            if u not in written and u not in leaves:
                leaves[u] = (rec.binds[3 * i:3 * i + 3], rec.eoffs[i], rec.strides[i])
        written.update(rec.views[:rec.nout])
    if len(leaves) + 1 > limit:
        return None
    kdims: list[int] = []
    ko: list[int] = []
    kst: list[list[int]] = [[] for _ in leaves]
    rdims: list[int] = []
    rst: list[list[int]] = [[] for _ in leaves]
    b = 0
    for i, (d, s) in enumerate(zip(dims, xstrides)):
        if d == 1:
            continue
        for size, c in blocks[b]:
            for lst, (_, _, st) in zip(kst if i < nk else rst, leaves.values()):
                lst.append(_stride(st, P, contig, c))
            if i < nk:
                kdims.append(size)
                ko.append(red.ko[i] * (c // s))
            else:
                rdims.append(size)
        b += 1
    kshape, (ko2, *kst2) = collapse(kdims, [tuple(ko)] + [tuple(x) for x in kst])
    rshape, rst2 = collapse(rdims, [tuple(x) for x in rst])
    # o in the memory of an operand (a block the capture's arena gave again): only where each output reads
    # just its own element there, before writing it (in a single pass: the same invocation, or workgroup)
    o_win, o_at = red.o_binds[0], red.o_binds[1] + red.head[6] * red.odtype.itemsize
    for (u, (bi, e, _)), ks, rs in zip(leaves.items(), kst2, rst2):
        if u[0] == o_win.serial and not (red.head[4] == 1 and u[3] == red.odtype and ks == ko2 and not any(rs)
                                         and bi[1] + e * u[3].itemsize == o_at):
            return None
    lv = [(u, bi, e) for u, (bi, e, _) in leaves.items()]
    return Plan(run, red, out, lv, kshape, ko2, kst2, rshape, rst2, _staged(red, lv, kshape, kst2, rshape, rst2))


def _staged(red: ReduceRecord, leaves: list, kshape: tuple, kst: list, rshape: tuple, rst: list) -> dict:
    """The leaves worth staging in workgroup memory (the one-invocation-per-output variant's): 32-bit
    elements, not in o's memory (other workgroups write it), different between outputs (a leaf the same for
    all of them is one broadcast load already), at most STAGE_MOST elements from its lowest read
    (STAGE_TOTAL in all), and fewer than a workgroup reads of it; leaf index -> (lowest element, count)."""
    if red.variant != "thread":
        return {}
    reads = min(256, math.prod(kshape)) * math.prod(rshape)  # of each leaf, by a workgroup
    out: dict = {}
    total = 0
    for i, ((u, _, e), ks, rs) in enumerate(zip(leaves, kst, rst)):
        w = wt(u[3])
        if w.packed or w.ct not in ("f32", "i32", "u32") or u[0] == red.o_binds[0].serial or not any(ks):
            continue
        dims = list(zip(kshape, ks)) + list(zip(rshape, rs))
        lo = e + sum(min(s, 0) * (d - 1) for d, s in dims)
        span = e + sum(max(s, 0) * (d - 1) for d, s in dims) - lo + 1
        if span <= STAGE_MOST and total + span <= STAGE_TOTAL and span < reads:
            out[i] = (lo, span)
            total += span
    return out


class _Evaluated:
    """x's elements as the run computes them, for the reduction template (k_reduce._Loaded's counterpart):
    per output, a base element per leaf (from the kept coordinates); per reduced position, ``elem(r, bases)``
    runs the run's bodies at the leaves' elements there and gives the value the run stored, opaque."""

    def __init__(self, p: Plan):
        self.p = p
        self.xw = wt(p.red.x[3])
        self.nk = len(p.kshape)
        self.nr = len(p.rshape)
        self.positional = True  # (``load`` takes the reduced position, whatever the dimensions)
        self.per = per(p)
        self.deferred = self.fast = False  # (set by ``alloc``: k_reduce._Loaded's)
        self.inexact = _INEXACT

    def alloc(self, lay: Layout, lib) -> None:
        p = self.p
        self.words = [(lay.alloc(1), lay.alloc(self.nk), lay.alloc(self.nr)) for _ in p.leaves]
        self.rs = lay.alloc(self.nr)
        self.lo = {i: lay.alloc(1) for i in p.staged}
        binding = {u: 2 + k for k, (u, _, _) in enumerate(p.leaves)}
        text, self.tail = evaluate(p, lay, lib, binding)
        W = Layout.word
        # the loads of the leaves: staged ones from workgroup memory (element q after the lowest at q + q / 32)
        loads = []
        for k, (u, _, _) in enumerate(p.leaves):
            ct = wt(u[3]).ct
            if k in p.staged:
                n = p.staged[k][1]
                loads.append(f"var<workgroup> sg{2 + k}: array<u32, {n + n // 32 + 1}>;\n"
                             f"fn lx{2 + k}(e: u32) -> {ct} {{ let q = e - {W(self.lo[k])};"
                             f" return bitcast<{ct}>(sg{2 + k}[q + q / 32u]); }}\n")
            else:
                loads.append(f"fn lx{2 + k}(e: u32) -> {ct} {{ return ld{2 + k}(e); }}\n")
        bases = "".join(f", p{b}: i32" for b in binding.values())
        head = [f"fn elem(rpos: u32{bases}) -> {self.xw.ct} {{\n"]
        if self.nr == 1:
            head += [f"  let e{b} = u32(p{b} + i32(rpos) * {_i32(rk)});\n"
                     for b, (_, _, rk) in zip(binding.values(), self.words)]
        else:
            head.append("  var rq = rpos;\n" + "".join(f"  var x{b} = p{b};\n" for b in binding.values()))
            for d in range(self.nr - 1, -1, -1):
                head.append(f"  {{ let c = i32(rq % {W(self.rs + d)}); rq = rq / {W(self.rs + d)};"
                            + "".join(f" x{b} = x{b} + c * {_i32(rk + d)};"
                                      for b, (_, _, rk) in zip(binding.values(), self.words)) + " }\n")
            head += [f"  let e{b} = u32(x{b});\n" for b in binding.values()]
        elem = "".join(head) + text + "}\n"
        self.fn = "".join(loads) + elem
        square = lib.fn("fsquare", F32) if lib.uses("fsquare", F32) else None
        self.deferred = p.red.variant == "thread" and square is not None
        if self.deferred:
            self.fn += _FAST_SQUARE + elem.replace("fn elem(", "fn elem_fast(").replace(f"{square}(", "fsquare_fast(")

    def tensors(self) -> list:
        return [(wt(u[3]), False, False) for u, _, _ in self.p.leaves]

    def helpers(self) -> str:
        return self.fn

    def prologue(self) -> str:
        """The staging of leaves into workgroup memory, by every invocation of the workgroup, then a barrier."""
        if not self.p.staged:
            return ""
        W = Layout.word
        t = []
        for k, (_, n) in self.p.staged.items():
            t.append(f"  for (var s = li; s < {n}u; s = s + 256u) {{"
                     f" sg{2 + k}[s + s / 32u] = bitcast<u32>(ld{2 + k}({W(self.lo[k])} + s)); }}\n")
        return "".join(t) + "  workgroupBarrier();\n"

    def init(self) -> str:
        return "".join(f"  var p{2 + k} = {_i32(ek)};\n" for k, (ek, _, _) in enumerate(self.words))

    def step(self, d: int) -> str:
        return "".join(f" p{2 + k} = p{2 + k} + c * {_i32(kk + d)};" for k, (_, kk, _) in enumerate(self.words))

    def walk(self) -> tuple[list[str], str]:
        return [], ""

    def at(self, r: str) -> str:
        return ""

    def bases(self, R: int) -> str:
        """The bases of outputs 1 .. R - 1 of an invocation (the next along the last kept dimension), for the
        leaves that differ between them."""
        return "".join(f"  let p{2 + k}_{o} = p{2 + k} + {o} * {_i32(kk + self.nk - 1)};\n"
                       for k, ((_, kk, _), ks) in enumerate(zip(self.words, self.p.kstrides)) if ks[-1]
                       for o in range(1, R))

    def load(self, e: str, r: str, o: int = 0) -> str:
        """elem at reduced position ``r`` of the invocation's output ``o`` (its own bases, ``bases``, for the
        leaves that differ between outputs)."""
        return f"elem{'_fast' if self.fast else ''}({r}" + "".join(f", p{2 + k}" + (f"_{o}" if o and ks[-1] else "")
                                     for k, ks in enumerate(self.p.kstrides)) + ")"


def salts(run: list[MapRecord]) -> int:
    """The salts (``_opaque``'s) the bodies of ``run`` take: a value made opaque after them takes this one on."""
    return sum(1 + len(rec.desc) for rec in run)


def evaluate(p: Plan, lay: Layout, lib, binding: dict) -> tuple[str, list]:
    """The statements evaluating ``p``'s run at one element, its leaves loaded as ``lx{b}(e{b})`` (``b =
    binding[view]``, the ``e{b}`` declared before) and nothing stored, ending in the return of the value x
    would hold there, opaque as a load; and the run's uniform words (its scalars, allocated in ``lay``)."""
    dead = {(ri, j) for ri, rec in enumerate(p.run) for j in range(rec.nout)}
    text, regs, tail = bodies(p.run, dead, lay, lib, binding, loader="lx")
    ri, j = p.out
    value = regs[p.run[ri].views[j]]
    return "".join(text) + f"  return {_opaque(wt(p.red.x[3]).ct, value, salts(p.run))};\n", tail


def per(p: Plan) -> int:
    """Outputs per invocation (consecutive along the last kept dimension) of the one-invocation-per-output
    variant: PER where some leaf is the same for all of them (loaded once for them; k-means' X for 4
    centres) and others are not, the last kept dimension a multiple of it and the outputs at least
    PER_MIN_OUTPUTS; else 1."""
    if (p.red.variant != "thread" or not p.kshape or p.kshape[-1] % PER or math.prod(p.kshape) < PER_MIN_OUTPUTS
            or not any(ks[-1] == 0 for ks in p.kstrides) or all(ks[-1] == 0 for ks in p.kstrides)):
        return 1
    return PER


def fused_step(client: WebGPUClient, p: Plan) -> tuple:
    """The graph step of the reduction evaluating the run (the run leaves the graph)."""
    red = p.red
    xs = _Evaluated(p)
    pipe = _build(client, None, red.kind, red.variant, wt(red.odtype), red.acc, red.unroll, False, None, xs)
    head, grid = list(red.head), red.grid
    if xs.per > 1:  # (the thread variant: an invocation per xs.per outputs)
        head[0] = math.prod(p.kshape) // xs.per
        grid = groups(head[0])
        head[1] = grid[0]
    words = head + list(p.kshape) + [s & _M32 for s in p.ko]
    for (_, _, eoff), ks, rs in zip(p.leaves, p.kstrides, p.rstrides):
        words.append(eoff)
        words += [s & _M32 for s in ks]
        words += [s & _M32 for s in rs]
    words += p.rshape
    words += [lo for lo, _ in p.staged.values()]
    words += xs.tail
    binds = tuple(red.o_binds) + tuple(x for _, triple, _ in p.leaves for x in triple)
    return client.encode_recorded(pipe, pack_words(words), binds, grid)
