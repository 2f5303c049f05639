"""The per-element WGSL of a fused run of map launches (``bodies``), shared by the fuser (``_fuse``: runs
merged into one shader) and by the reductions that evaluate a run in place of their loads (``_fuse_reduce``)."""

from __future__ import annotations

from ._map_template import MapCodegen, MapRecord
from ._shader import Layout
from ._types import WgslType, _packing, wt
from ._wgsl_helpers import WgslHelpers

_M32 = 0xFFFFFFFF
#: operands of one record at most, for the salts of a part of a run (bodies' ``index``)
MAX_OPERANDS = 64


def _reloaded(w: WgslType, v: str) -> str:
    """What a load gives back after storing the compute-type value ``v`` of ``w``: a packed integer
    keeps its low bits, sign-extended when signed."""
    if not w.packed or w.family == "b":
        return v
    if w.signed:
        return f"(({v} << {32 - w.bits}u) >> {32 - w.bits}u)"
    return f"({v} & {_packing(w)[2]})"


def _opaque(ct: str, v: str, salt: int) -> str:
    """``v`` (a named value of WGSL type ``ct``) XORed with a zero the compiler cannot see: the same value,
    but one it knows nothing about, as of a value loaded from memory.

    The zero is the uniform word that is always 0 times the odd number ``2 * salt + 1``, in both halves
    of a 64-bit value. XOR, not OR, and both halves: an OR keeps the bits known to be 1, and a word only
    zero-extended lets the high half (sign, exponent) through, so that a compiler would know, say, that
    the result of ``abs`` is non-negative and could drop the sign branches of the next launch's libm
    code, compiling (contracting, folding) it otherwise than the single-op shader, where the value is a
    load: the likely cause of a fused float64 ``hypot`` then ``sin`` replaying an ulp off eager on
    NVIDIA's Vulkan driver. A salt per operand keeps the compiler from seeing two operands as one value
    (one load read twice is two loads eagerly, and ``x - x`` must not fold to 0)."""
    z = "u.w[0].z" if salt == 0 else f"(u.w[0].z * {2 * salt + 1}u)"
    if ct == "bool":
        return f"({v} != ({z} != 0u))"
    if ct.startswith("vec2"):
        r = ct[5:-1]
        return f"{ct}({_opaque(r, v + '.x', salt)}, {_opaque(r, v + '.y', salt)})"
    if ct in ("vec4<f32>", "vec4<u32>", "vec4<i32>"):
        return f"bitcast<{ct}>(bitcast<vec4<u32>>({v}) ^ vec4<u32>({z}))"
    z64 = f"((u64({z}) << 32u) | u64({z}))"
    bits = {"u32": ("u32", z), "i32": ("u32", z), "f32": ("u32", z), "u64": ("u64", z64),
            "i64": ("u64", z64), "f64": ("u64", z64)}
    u, zero = bits[ct]
    if ct == u:
        return f"({v} ^ {zero})"
    return f"bitcast<{ct}>(bitcast<{u}>({v}) ^ {zero})"


def _view(rec: MapRecord, i: int) -> tuple:
    """The identity of tensor i of a record: its memory, element offset, strides (over rec.dims), dtype.

    The memory is the wgpu buffer's serial, not the numr Buffer: inside a capture, a tensor that died
    gives its memory to a later one (a new Buffer over the same wgpu buffer), and a write through the
    new tensor must be seen as touching what an earlier launch of the run read through the old one."""
    return rec.views[i]


def run_views(run: list[MapRecord], dead) -> list[list]:
    """The views a merged run binds, in binding order: those it loads (not in a register of the run yet) and
    those it stores; per view [view, WgslType, stored, bind triple, element offset, strides], the window,
    offset and strides from the first record that has it."""
    used: dict[tuple, bool] = {}  # view -> whether it is stored
    in_reg: set = set()
    for ri, rec in enumerate(run):
        for i in range(rec.nout, len(rec.views)):
            if rec.views[i] not in in_reg:
                used.setdefault(rec.views[i], False)
        for j in range(rec.nout):
            if (ri, j) not in dead:
                used[rec.views[j]] = True
            in_reg.add(rec.views[j])
    if not used:  # (every store dropped, nothing loaded: one binding all the same)
        used[run[0].views[0]] = False
    info: list[list] = []
    seen: set = set()
    for rec in run:
        for i, v in enumerate(rec.views):
            if v in used and v not in seen:
                seen.add(v)
                info.append([v, wt(v[3]), used[v], rec.binds[3 * i:3 * i + 3], rec.eoffs[i], rec.strides[i]])
    return info


def bodies(run: list[MapRecord], dead, lay: Layout, lib: WgslHelpers, binding: dict, regs: dict | None = None,
           index: list[int] | None = None, loader: str = "ld") -> tuple[list[str], dict, list]:
    """WGSL running ``run``'s bodies in order for one element: an operand not in a register of the run is
    loaded as ``ld{b}(e{b})``, ``b = binding[view]`` (the ``e{b}`` are declared before), a store not in
    ``dead`` is ``st{b}``; scalars and parameters are allocated in ``lay`` in the order of the returned
    uniform words. (lines, view -> the register holding its latest value, uniform words). ``regs``, ``index``:
    for a part of a run (_fuse_small's), the registers its records before wrote, and each record's place in
    the run (its names, its salts, its stores in ``dead``). ``loader``: the loads' name before ``b`` (a fused
    reduction's loads go through its own functions, which read the leaves it stages from workgroup memory)."""
    text = []
    regs = {} if regs is None else regs  # view -> the register holding its latest value
    loaded: set[int] = set()
    tail_words: list[int] = []
    nsalt = 0
    for ri, rec in zip(range(len(run)) if index is None else index, run):
        if index is not None:  # salts past those of the run's records before this one
            nsalt = MAX_OPERANDS * ri
        ins_wt = []
        vals = []
        ti = rec.nout
        for x in rec.desc:
            if x is None:
                ins_wt.append(None)
                vals.append(None)
                continue
            w = wt(x[1])
            ins_wt.append(w)
            if x[0] == "s":
                vals.append(lay.scalar(w))
                continue
            v = _view(rec, ti)
            ti += 1
            fresh = False
            if v in regs:
                src = regs[v]
            else:
                b = binding[v]
                if b not in loaded:
                    text.append(f"  let l{b} = {loader}{b}(e{b});\n")
                    loaded.add(b)
                    fresh = True
                src = f"l{b}"
            if fresh:  # a value loaded for this operand alone is what the launch knows of it eagerly
                vals.append(src)
            else:  # a value computed by the run, or a load another operand read too: its own opaque value
                name = f"o{ri}_{len(vals)}"
                text.append(f"  let {name} = {_opaque(w.ct, src, nsalt)};\n")
                vals.append(name)
            nsalt += 1
        params = [lay.scalar(w) for w in rec.param_wts]
        tail_words += rec.tail

        def store(j: int, value: str, rec=rec, ri=ri) -> str:
            v = _view(rec, j)
            w = wt(v[3])
            name = f"r{ri}_{j}"
            regs[v] = name
            if (ri, j) in dead:
                put = "// (nothing reads this store)"
            else:
                b = binding[v]
                put = f"st{b}(e{b}, s{name});"
                if rec.bcast:  # every invocation computes the element, the first one stores it
                    put = f"if (i == 0u) {{ {put} }}"
            return (f"  let s{name} = {value};\n  {put}\n"
                    f"  let {name} = {_reloaded(w, 's' + name)};\n")

        before = set(regs.values())
        body = rec.body(MapCodegen(lib, ins_wt, vals, params, False, [], store))
        # each launch's body in a block of its own, as in its own shader: two launches of one kernel declare
        # the same names (k_fft's `var fz`); the registers later launches read are declared before the block
        mine = [(v, n) for v, n in regs.items() if n not in before]
        for _, n in mine:
            body = body.replace(f"  let {n} = ", f"  {n} = ", 1)
        text.append("".join(f"  var {n}: {wt(v[3]).ct};\n" for v, n in mine) + "  {\n" + body + "  }\n")
    return text, regs, tail_words
