"""The phase machine the WebGPU eigen- and singular-value kernels (k_jacobi, k_hessenberg_qr) are written
in, and their launch frame.

One invocation per matrix runs the sequential algorithm over its own slice of a scratch buffer; a batch
of matrices is a batch of invocations.

Each algorithm is a sequence of phases of bounded steps (one row, one rotation, one QR iteration...),
resumable: an invocation runs steps until a budget of loop iterations is spent, keeps its place in its
scratch, and the next dispatch of the same pipeline goes on from there. The host issues the number of
dispatches the worst case needs (at most 30 Jacobi sweeps, 40 QR iterations per eigenvalue); those after
convergence return at once. Nothing is read back. (The budget is lavapipe's: llvmpipe silently ends
every loop of an invocation after 65535 loop iterations in all, and a loop inside a branch not taken
counts once each time the branch is passed, so a turn of the phase loop costs one iteration per loop
statement of the program besides its step. A step of the Hessenberg reduction, of the QR iteration, of
the back-substitution or of completing U costs O(n^2) iterations, so on lavapipe
eig/eigvals are right up to 127x127 and svd's U completion up to 127 rows; the Jacobi steps are O(n).)

Every matrix is first scaled by a power of two near 1 / max|x_ij| (exact), so that squares of its
elements neither overflow nor underflow. eig and eigvals of a matrix with NaN or infinite elements, or
whose QR iteration does not converge, give NaN eigenvalues and eigenvectors, where NumPy raises
LinAlgError (which would need a readback). The input and outputs are bound whole: one larger than the
adapter's largest storage binding raises MemoryError; the scratch is split over launches as needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from string import Template
from typing import NamedTuple

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._client import WebGPUClient
from ._wgsl_helpers import WgslHelpers
from ._shader import Layout, bindings, groups, main_header, pack_words
from ._types import COMPUTE, WgslType, WGSL_TYPES, scalar_words, wt
from ._views import collapse, window
from .k_reduce import _temp

WG = 64  # matrices (invocations) per workgroup
I32 = WGSL_TYPES[dt.int32]
MAX_SWEEPS = 30  # Jacobi sweeps (LAPACK's gesvj too); convergence is quadratic, usually within 10
BUDGET = 50000   # loop iterations one invocation runs per dispatch (llvmpipe stops loops at 65535)


class _Operand(NamedTuple):
    name: str       # accessors name_ld(...) / name_st(..., v) in the WGSL
    t: Tensor
    nd: int         # trailing (matrix or vector) dimensions after the batch ones
    written: bool


class _Phase(NamedTuple):
    done: str       # WGSL condition: the phase is over
    cost: str       # WGSL i32: loop iterations of the next step, at most
    body: str       # WGSL of one step; ``pos`` counts the phase's steps
    count: int      # host: steps of the phase, at most
    max_cost: int   # host: the largest cost of one of them
    advance: bool = True  # pos += 1 after each step (else the body moves on itself)


# --- per-type helpers the algorithms are written with --------------------------------------------------

# E is the element type (real, or vec2 for complex), R its real type. mk: a real as E; re: real part;
# cj: conjugate; mul: product; sq: |z|^2; av: |z|; fin: finite; rscale: a power of two near 1 / x.
_REAL_OPS = """fn mk(r: $R) -> $E { return r; }
fn re(z: $E) -> $R { return z; }
fn cj(z: $E) -> $E { return z; }
fn mul(a: $E, b: $E) -> $E { return a * b; }
fn sq(z: $E) -> $R { return z * z; }
fn av(z: $E) -> $R { return ${fabs}(z); }
fn fin(z: $E) -> bool { return ${isfinite}(z); }
"""
_COMPLEX_OPS = """fn mk(r: $R) -> $E { return $E(r, $R(0)); }
fn re(z: $E) -> $R { return z.x; }
fn cj(z: $E) -> $E { return $E(z.x, -z.y); }
fn mul(a: $E, b: $E) -> $E { return $E(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn sq(z: $E) -> $R { return z.x * z.x + z.y * z.y; }
fn av(z: $E) -> $R { return ${hypot}(z.x, z.y); }
fn fin(z: $E) -> bool { return ${isfinite}(z.x) && ${isfinite}(z.y); }
"""
_RSCALE = {
    "f32": """fn rscale(x: f32) -> f32 {
  let e = i32((bitcast<u32>(x) >> 23u) & 0xffu);
  return bitcast<f32>(u32(clamp(254 - e, 1, 253)) << 23u);
}
""",
    "f64": """fn rscale(x: f64) -> f64 {
  let e = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
  return bitcast<f64>(u64(clamp(2046 - e, 1, 2045)) << 52u);
}
""",
}

# The Jacobi rotation that zeroes the (p, q) element g * ph (|ph| = 1) of a Hermitian 2x2 block with
# real diagonal (app, aqq): U = diag(1, conj(ph)) [[c, s], [-s, c]]; columns p, q of a matrix M become
# M U: (x, y) -> (c x - s conj(ph) y, s x + c conj(ph) y). Defines t (the tangent), c, s, ph, sp, cp.
_ROTATION = """
        let ph = apq / g;
        let theta = (aqq - app) / ($R(2) * g);
        var t: $R;
        if (${fabs}(theta) > $R($BIG)) {
          t = $R(0.5) / theta;
        } else {
          t = $R(1) / (${fabs}(theta) + sqrt($R(1) + theta * theta));
          if (theta < $R(0)) { t = -t; }
        }
        let c = $R(1) / sqrt($R(1) + t * t);
        let s = t * c;
        let sp = cj(ph) * s;
        let cp = cj(ph) * c;
"""
# the next pair (p, q) of the cyclic order; a sweep without rotation ends the iteration
_NEXT_PAIR = """
      q++;
      if (q >= $K) { p++; q = p + 1; }
      if (p >= $K - 1) {
        sweep = select(sweep + 1, $SWEEPS, rot == 0);
        p = 0;
        q = 1;
        rot = 0;
      }
"""


def _overhead(phases: list[_Phase], top: str = "") -> int:
    """Loop iterations that one turn of the state machine's loop costs besides its step. llvmpipe runs a
    branch that any invocation could take under a mask even when none takes it, and a loop in it once:
    every loop statement of the other phases (and of the step's own untaken branches) counts one
    iteration towards its limit each turn. Without this, the steps of a 400x6 SVD's first phases (a row
    each, thousands of turns) ran past the limit and cut a rotation short: float64 singular values off
    by 5e-5 on lavapipe."""
    text = top + "".join(ph.body for ph in phases)
    return 1 + text.count("for (") + text.count("loop {") + text.count("while ")


def _machine(state: list[tuple[str, str]], prologue: str, phases: list[_Phase], top: str = "") -> str:
    """``fn run()``: ``phases`` one after the other, resumed where the last dispatch left them. ``state``
    (name, "i" or "r") are the variables kept in the scratch's first slots between dispatches (ph and
    pos first); a dispatch with ``fresh`` set starts them at 0."""
    lines = ["fn run() {\n", prologue]
    for k, (name, kind) in enumerate(state):
        get = f"i32(re(slot({k})))" if kind == "i" else f"re(slot({k}))"
        lines.append(f"  var {name} = select({get}, {'0' if kind == 'i' else '$R(0)'}, fresh);\n")
    turn = _overhead(phases, top)
    # (the first step of a dispatch runs whatever it costs)
    lines.append(f"  var budget = $BUDGET;\n  loop {{\n    budget -= {turn};\n" + top)
    for k, ph in enumerate(phases):
        lines.append(f"    if (ph == {k}) {{\n      if ({ph.done}) {{ ph = {k + 1}; pos = 0; continue; }}\n"
                     f"      let cost = {ph.cost};\n      if (cost > budget && budget < $BUDGET - {turn}) {{ break; }}\n"
                     f"      budget -= cost;\n{ph.body}\n" + ("      pos++;\n" if ph.advance else "")
                     + "      continue;\n    }\n")
    lines.append("    break;\n  }\n")
    for k, (name, kind) in enumerate(state):
        lines.append(f"  setslot({k}, mk({'$R(' + name + ')' if kind == 'i' else name}));\n")
    lines.append("}\n")
    return "".join(lines)


def _dispatches(phases: list[_Phase], top: str = "") -> int:
    """Dispatches that finish every phase in the worst case: each one not the last runs steps worth
    more than BUDGET minus the largest step (or at least one step)."""
    turn = _overhead(phases, top)
    total = sum(p.count * (p.max_cost + turn) for p in phases)
    steps = sum(p.count for p in phases)
    big = max((p.max_cost + turn for p in phases), default=1)
    return min(steps, -(-total // max(BUDGET - big, 1))) + 1


# --- the launch frame ------------------------------------------------------------------------------

def _per_matrix(client: WebGPUClient, name: str, key, ew: WgslType, operands: list[_Operand], batch: tuple[int, ...],
                per: int, params: list[tuple[WgslType, object]], slots: int, dispatches: int,
                make_code: Callable[[WgslHelpers], str]) -> None:
    """Run ``make_code(lib)`` (WGSL defining ``fn run()``, with ``$P0``, ``$P1``... for ``params``; ``lib``
    collects the helpers it calls) once per matrix of ``batch``, ``dispatches`` times: operand ``name``
    is read with ``name_ld(i, j)`` and written with ``name_st(i, j, v)`` (indices over its trailing
    dimensions); each invocation has ``slots`` elements of ``ew`` (``slot(k)`` / ``setslot(k, v)``, kept
    between dispatches, ``fresh`` in the first) then ``per`` more (``S(k)`` / ``setS(k, v)``)."""
    count = math.prod(batch)
    if count == 0:
        return
    # batch dimensions merged where every operand allows (one dimension for contiguous stacks)
    bdims, bstrides = (collapse(batch, [o.t._strides[:len(batch)] for o in operands]) if batch
                       else ((1,), [(0,)] * len(operands)))
    nb = len(bdims)
    lay = Layout()
    W = Layout.word
    first_k, per_k, fresh_k = lay.alloc(1), lay.alloc(1), lay.alloc(1)
    dims_k = lay.alloc(nb)
    op_k = [lay.alloc(1 + nb + o.nd) for o in operands]
    pexprs = [lay.scalar(w) for w, _ in params]
    pkey = ("eigen", name, key, ew.dtype, nb, tuple((o.t._dtype, o.nd) for o in operands),
            tuple(w.dtype for w, _ in params))
    pipe = client.cached_pipeline(pkey)
    if pipe is None:
        lib = WgslHelpers(client.has_f64)
        tensors = [(ew, True, True)] + [(wt(o.t._dtype), o.written, False) for o in operands]
        src = [(f"var<private> sb: u32;\nvar<private> fresh: bool;\n"
                f"fn slot(k: i32) -> {ew.ct} {{ return ld1(sb + u32(k)); }}\n"
                f"fn setslot(k: i32, v: {ew.ct}) {{ st1(sb + u32(k), v); }}\n"
                f"fn S(k: i32) -> {ew.ct} {{ return ld1(sb + u32(k + {slots})); }}\n"
                f"fn setS(k: i32, v: {ew.ct}) {{ st1(sb + u32(k + {slots}), v); }}\n")]
        for b, (o, k) in enumerate(zip(operands, op_k), start=2):
            ct = wt(o.t._dtype).ct
            idx = ", ".join(f"i{d}: i32" for d in range(o.nd))
            elem = " + ".join([f"o{b}"] + [f"i{d} * bitcast<i32>({W(k + 1 + nb + d)})" for d in range(o.nd)])
            src.append(f"var<private> o{b}: i32;\n")
            if o.written:
                src.append(f"fn {o.name}_st({idx}{', ' if idx else ''}v: {ct}) {{ st{b}(u32({elem}), v); }}\n")
            else:
                src.append(f"fn {o.name}_ld({idx}) -> {ct} {{ return ld{b}(u32({elem})); }}\n")
        body = Template(make_code(lib)).substitute({f"P{j}": e for j, e in enumerate(pexprs)})
        main = [main_header(WG), (f"  sb = i * {W(per_k)};\n  fresh = {W(fresh_k)} != 0u;\n"
                                  f"  var q = i + {W(first_k)};\n")]
        for d in range(nb - 1, -1, -1):
            main.append(f"  let c{d} = i32(q % {W(dims_k + d)});\n  q = q / {W(dims_k + d)};\n")
        for b, k in enumerate(op_k, start=2):
            main.append(f"  o{b} = " + " + ".join([f"bitcast<i32>({W(k)})"] + [
                f"c{d} * bitcast<i32>({W(k + 1 + d)})" for d in range(nb)]) + ";\n")
        main.append("  run();\n}\n")

        def source() -> str:
            return lay.block() + bindings(tensors) + lib.source() + "".join(src) + body + "".join(main)

        pipe = client.pipeline(pkey, source, len(tensors), lay.nbytes)
    binds: tuple = ()
    opwords: list[int] = []
    for o, bst in zip(operands, bstrides):
        t = o.t
        if t.size == 0:  # nothing of it is read or written: any small binding will do
            t = _temp(client, (1,), t._dtype)
        b0, size, e0 = window(client, t)
        if size > client.max_binding:
            raise MemoryError(f"{client.device}: an operand of {size} bytes exceeds the adapter's largest storage "
                              f"binding ({client.max_binding} bytes)")
        binds += (t._buf.handle, b0, size)
        opwords += [e0] + [s & 0xFFFFFFFF for s in bst] + [s & 0xFFFFFFFF for s in o.t._strides[len(batch):]]
    tail: list[int] = []
    for w, v in params:
        tail += scalar_words(w, v)
    isz = ew.dtype.itemsize
    per += slots
    if per * isz > client.max_binding:
        raise MemoryError(f"{client.device}: {name} of a matrix this large needs {per * isz} bytes of scratch, more "
                          f"than the adapter's largest storage binding ({client.max_binding} bytes)")
    chunk = min(count, client.max_binding // (per * isz))
    scratch = _temp(client, (chunk * per,), ew.dtype)
    sbind = (scratch._buf.handle, 0, max(16, chunk * per * isz))
    for first in range(0, count, chunk):
        todo = min(chunk, count - first)
        grid = groups(todo, WG)
        for d in range(dispatches):
            words = [todo, grid[0], 0, 0, first, per, int(d == 0)] + list(bdims) + opwords + tail
            client.dispatch(pipe, pack_words(words), sbind + binds, grid)


def _run_program(client, name: str, key, x: Tensor, operands: list[_Operand], program, vectors: bool,
                 params: list[tuple[WgslType, object]], per: int, prologue: str, **extra: str) -> None:
    """Launch ``program`` ((arrays, state, phases[, top]) WGSL pieces) once per matrix of x."""
    arrays, state, phases, *top = program
    ew = COMPUTE[wt(x._dtype)]

    def make_code(lib: WgslHelpers) -> str:
        run = _machine(state, prologue, phases, *top)
        return _subst(ew, lib, arrays + run, vectors, **extra)

    _per_matrix(client, name, key, ew, [_Operand("x", x, 2, False)] + operands, x._shape[:-2], per, params,
                len(state), _dispatches(phases, *top), make_code)


def _subst(ew: WgslType, lib: WgslHelpers, template: str, vectors: bool, **extra: str) -> str:
    """``template`` instantiated for element type ``ew``: the type helpers, then the algorithm (with the
    pieces in ``extra``, themselves templates, substituted until none is left; ``$P0``... stay for
    _per_matrix). Lines marked ``//V`` compute eigen- or singular vectors: dropped without ``vectors``."""
    r = _real(ew)
    f64 = r.ct == "f64"
    names = {"E": ew.ct, "R": r.ct, "fabs": lib.fn("fabs", r), "EPS": repr(_eps(r)), "BIG": "1e150" if f64 else "1e18",
             "SWEEPS": str(MAX_SWEEPS), "TINY": "1e-300" if f64 else "1e-37", "nan": lib.fn("nan", r),
             "isfinite": lib.fn("isfinite", r), "ROTATION": _ROTATION, "BUDGET": str(BUDGET)}
    if ew.family == "c":
        names.update(hypot=lib.fn("hypot", r), csqrt=lib.fn("csqrt", ew), cdiv=lib.fn("cdiv", ew))
    names.update(extra)
    text = (_COMPLEX_OPS if ew.family == "c" else _REAL_OPS) + _RSCALE[r.ct] + template
    while True:
        done = Template(text).safe_substitute(names)
        if done == text:
            break
        text = done
    if not vectors:
        text = "\n".join(line for line in text.split("\n") if not line.endswith("//V"))
    return text


def _eps(r: WgslType) -> float:
    return 2.0 ** -52 if r.ct == "f64" else 2.0 ** -23


def _real(w: WgslType) -> WgslType:
    return w.real if w.family == "c" else w
