"""Fusion of a captured sequence of small launches into one dispatch of one workgroup.

An iterative solver on short vectors (conjugate gradients on n = 2048: per iteration a matrix-vector
product, then a dot product, an update of x and r, a dot product and an update of p) replays as a chain of
dispatches each waiting for the one before it, and on an H200 through NVIDIA's Vulkan driver each dispatch
costs the host about 6 µs of wgpu's encoding and the GPU about 2 µs, however little it does. When
consecutive steps of a capture are small (map runs over at most SMALL elements, dot products that are one
workgroup of one part, the sum of a thin-product pass's partial sums), they become the phases of one shader that a single workgroup of 256 invocations runs:
a map run's elements in a loop over the invocations, a dot product as its own shader computes it (the same
lanes, the same order of sums: k_contract.rowdot_text), and between phases a barrier, so that each phase sees
what the ones before it stored.

A replay gives eager's bits: each phase is its launch's code (or its run's, as _fuse merges it) on values
loaded from memory.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, NamedTuple

from ._fused_bodies import _M32, bodies, run_views
from ._libm import FUNCTIONS as TRANSCENDENTAL
from ._map_template import coord_lines
from ._shader import Layout, baked, bindings, pack_words
from ._wgsl_helpers import WgslHelpers
from ._matvec import PartsRecord
from .k_contract import RowdotRecord

if TYPE_CHECKING:
    from ._client import WebGPUClient

#: elements of a map run one workgroup takes as a phase (sixteen per invocation)
SMALL = 4096
#: phases per program (its compile time grows with them)
MAX_PHASES = 16
#: elements of a map phase each invocation takes per turn of its loop: their loads are in flight together
UNROLL = 4
#: a map phase's transcendental evaluations an element, times its turns past the first, beyond which it runs
#: as a dispatch of its own: on an H200 the 100-step chain of float32 sin and multiply on 1024 elements (four
#: runs of 64 launches) took 0.219 ms as one workgroup's program, against 0.209 for CuPy's graph of it
LIBM_EXTRA = 4


#: the records of one-workgroup launches that are phases as their own shaders run them: ``text(lay, lib, slots,
#: sh)`` their statements, ``ct`` their workgroup array's type, ``words`` their uniform words, ``binds`` and
#: ``bound`` their tensors (the written one first)
WHOLE = (RowdotRecord, PartsRecord)


class MapPhase(NamedTuple):
    """A run of map launches (_fuse's) as a phase: its records over one iteration space, and the stores
    (record index, output index) that nothing reads again."""
    run: list
    dead: frozenset


def small(phase) -> bool:
    """Whether ``phase`` (a MapPhase, one of WHOLE or None) can be a phase of a program: a map run over at most
    SMALL elements whose transcendental functions (each a float64 evaluation of many steps) cost the one
    workgroup's invocations, in the turns past their first, at most LIBM_EXTRA evaluations an element more
    than they would as a dispatch of their own spread over the GPU."""
    if type(phase) in WHOLE:
        return True
    if type(phase) is not MapPhase:
        return False
    n = math.prod(phase.run[0].dims)
    libm = sum(r.key[0] in TRANSCENDENTAL for r in phase.run)
    return n <= SMALL and (-(-n // 256) - 1) * libm <= LIBM_EXTRA


class _Bindings:
    """The program's storage bindings: one per window and dtype, shared by the phases, but a map phase
    gets one per view it binds (its element indices are per binding)."""

    def __init__(self):
        self.slots: list[list] = []  # per binding: [WgslType, written, bind triple]

    def assign(self, needs: list[tuple], distinct: bool) -> list[int]:
        """Binding numbers (from 1) for one phase's ``needs``: (bind triple, WgslType, written) each;
        ``distinct``: a binding each (a map phase's, whose element indices are per binding)."""
        taken: set[int] = set()
        out = []
        for triple, w, written in needs:
            key = (triple[0].serial, triple[1], triple[2], w.dtype)
            b = next((k for k, s in enumerate(self.slots, start=1)
                      if not (distinct and k in taken) and (s[2][0].serial, s[2][1], s[2][2], s[0].dtype) == key),
                     None)
            if b is None:
                self.slots.append([w, written, triple])
                b = len(self.slots)
            elif written:
                self.slots[b - 1][1] = True
            taken.add(b)
            out.append(b)
        return out

    def plus(self, phase, views: list | None) -> tuple["_Bindings", list[int]]:
        """These bindings with ``phase``'s tensors bound too (a new object), and the binding numbers of its
        tensors: those of a WHOLE record (o, a and v of a dot product), a map run's ``views`` (run_views') in
        their order."""
        more = _Bindings()
        more.slots = [list(s) for s in self.slots]
        if type(phase) in WHOLE:
            b = phase.binds
            return more, more.assign([(b[3 * k:3 * k + 3], w, k == 0) for k, w in enumerate(phase.bound)], False)
        return more, more.assign([(triple, w, stored) for _, w, stored, triple, _, _ in views], True)


def _map_text(phase: MapPhase, info: list, slots: list[int], lay: Layout, lib: WgslHelpers, words: list,
              tag: str) -> tuple[str, str, int]:
    """A map phase: (its functions, its statements, how many of its words are its scalar operands'), the run's
    bodies for elements li, li + 256, ..., UNROLL of them per turn of the loop with the loads of all of them
    first, the one-element launches once before (its words appended to ``words``, the scalars' last;
    ``info``: its run_views).
    Loads may pass the stores of the elements before them: what a run loads from memory, no launch of the
    run writes (_fuse._can_join), but for the element's own store through the same view."""
    run = phase.run
    dims = run[0].dims
    ndim = len(dims)
    shape_k = lay.alloc(ndim)
    n_k = lay.alloc(1)
    view_k = [lay.alloc(1 + ndim) for _ in info]
    binding = {row[0]: b for row, b in zip(info, slots)}
    # the one-element launches spread over the run, once per invocation before the loop (the first one
    # stores them), the others per element in the loop, reading them from registers
    once = [k for k, rec in enumerate(run) if rec.bcast]
    each = [k for k, rec in enumerate(run) if not rec.bcast]
    regs: dict = {}
    first, _, tail = bodies([run[k] for k in once], phase.dead, lay, lib, binding, regs, once)
    text, _, tail2 = bodies([run[k] for k in each], phase.dead, lay, lib, binding, regs, each)
    tail += tail2
    words += list(dims) + [math.prod(dims)]
    for row in info:
        words.append(row[4])
        words += [s & _M32 for s in row[5]]
    words += tail
    W = Layout.word
    fns = []
    for b, k in zip(slots, view_k):  # element index of binding b's view at the run's flat index i
        terms = [f"bitcast<i32>({W(k)})"] + [f"i32(c{d}) * bitcast<i32>({W(k + 1 + d)})" for d in range(ndim)]
        fns.append(f"fn {tag}e{b}(i: u32) -> u32 {{\n" + "".join(coord_lines(ndim, shape_k))
                   + f"  return u32({' + '.join(terms)});\n}}\n")
    loads = {line: int(line.split()[1][1:]) for line in text if line == _load(line)}
    rest = "".join(line for line in text if line not in loads)
    n = W(n_k)
    out = []
    if first:
        out.append("  let i = li;\n" + "".join(f"  let e{b} = {tag}e{b}(0u);\n" for b in slots) + "".join(first))
    out.append(f"  for (var i0 = li; i0 < {n}; i0 = i0 + {256 * UNROLL}u) {{\n")
    for u in range(UNROLL):
        at = "i0" if u == 0 else f"min(i0 + {256 * u}u, {n} - 1u)"
        out.append(f"  let j{u} = {at};\n" + "".join(f"  let l{b}_{u} = ld{b}({tag}e{b}(j{u}));\n" for b in loads.values()))
    for u in range(UNROLL):
        out.append(("  {\n" if u == 0 else f"  if (i0 + {256 * u}u < {n}) {{\n") + f"  let i = i0 + {256 * u}u;\n"
                   + "".join(f"  let e{b} = {tag}e{b}(i);\n" for b in slots)
                   + "".join(f"  let l{b} = l{b}_{u};\n" for b in loads.values()) + rest + "  }\n")
    out.append("  }\n")
    return "".join(fns), "".join(out), len(tail)


def _load(line: str) -> str:
    """``line`` if it is one of bodies' loads of a binding (``let lB = ldB(eB);``), else ''."""
    parts = line.split()
    if len(parts) == 4 and parts[0] == "let" and parts[1][:1] == "l" and parts[1][1:].isdigit():
        b = parts[1][1:]
        return line if line == f"  let l{b} = ld{b}(e{b});\n" else ""
    return ""


def _program(client: WebGPUClient, group: list[tuple], binds: _Bindings) -> tuple:
    """The graph step of one workgroup running the phases of ``group`` in order: (phase, step, its binding
    numbers in ``binds``, its run_views or None) each."""
    lay = Layout()
    lib = WgslHelpers(client.has_f64)
    words = [1, 1, 0, 0]
    scalars: set[int] = set()  # (the words of scalar operands)
    shared = []
    text = []
    for k, (phase, _, slots, views) in enumerate(group):
        if type(phase) in WHOLE:
            sh = f"sh{k}"
            shared.append(f"var<workgroup> {sh}: array<{phase.ct}, 256>;\n")
            body = phase.text(lay, lib, slots, sh)
            words += phase.words[4:]
        else:
            fns, body, ns = _map_text(phase, views, slots, lay, lib, words, f"p{k}")
            scalars.update(range(len(words) - ns, len(words)))
            shared.append(fns)
        if text:  # what the phases before stored, visible to this one's invocations
            text.append("  storageBarrier();\n  workgroupBarrier();\n")
        text.append("  {\n" + body + "  }\n")
    decls = bindings([(w, written, written) for w, written, _ in binds.slots])
    source = (lay.block() + decls + lib.source() + "".join(shared) + "@compute @workgroup_size(256)\n"
              "fn main(@builtin(local_invocation_index) li: u32) {\n" + "".join(text) + "}\n")
    source = baked(source, words, scalars)
    pipe = client.pipeline(("small", source), lambda: source, len(binds.slots), lay.nbytes, captured=True)
    flat = tuple(x for _, _, triple in binds.slots for x in triple)
    return client.encode_recorded(pipe, pack_words(words), flat, (1, 1, 1))


def join(client: WebGPUClient, items: list[tuple], limit: int) -> list:
    """The graph's steps from ``items``: (phase or None, step or a function making it) each, in order; each
    sequence of two or more consecutive small phases (up to MAX_PHASES, binding at most ``limit`` buffers)
    becomes one program."""
    out: list = []
    group: list[tuple] = []  # (phase, step, binding numbers, run_views or None)
    binds = _Bindings()

    def close():
        if len(group) > 1:
            out.append(_program(client, group, binds))
        else:
            out.extend(_step(entry[1]) for entry in group)
        group.clear()

    for phase, step in items:
        if not small(phase):
            close()
            binds = _Bindings()
            out.append(_step(step))
            continue
        views = run_views(phase.run, phase.dead) if type(phase) is MapPhase else None
        more, slots = binds.plus(phase, views)
        if group and (len(group) >= MAX_PHASES or len(more.slots) > limit):
            close()
            more, slots = _Bindings().plus(phase, views)
        binds = more
        group.append((phase, step, slots, views))
    close()
    return out


def _step(step: tuple | Callable) -> tuple:
    return step() if callable(step) else step
