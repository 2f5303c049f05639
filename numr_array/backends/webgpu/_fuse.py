"""Fusion of captured element-wise chains: consecutive map launches over the same iteration space become
one dispatch of one generated shader.

Each dispatch of a replay costs GPU time of its own (a barrier and a launch), so a captured chain of
small element-wise operations replays no faster than the GPU can launch them one by one. At the end of a
capture, runs of consecutive map launches (element-wise functions, casts, fill, where, clip) over the
same merged dimensions are merged when that is safe: per element, each launch only reads what the same
element of the earlier launches wrote (a read of a buffer written earlier in the run must use the very
same view, and a write must not touch what an earlier launch reads through another view). The merged
shader runs the launches' bodies in order for each element, passing written values on in registers, and
still writes every output (a tensor written inside the block may be read after a replay).

A replay gives what eager execution gives, bit for bit: a register holds what a load of the stored value
would give (8- and 16-bit integers narrowed to their width), and each operand of each launch (a register
or a loaded value) passes through a XOR with a zero made from the uniform word that is always 0
(``_opaque``), so that the compiler knows no more of it than of a load and cannot rewrite a sequence of
launches as one expression: contract a product and a sum into an FMA, fold a float-to-int-to-float round
trip into a truncation that forgets the conversion's saturation, or compile one launch's code otherwise
for what it knows of its operands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._wgsl_helpers import WgslHelpers
from ._map_template import MapCodegen, MapRecord, coord_lines, element_lines
from ._shader import Layout, bindings, groups, main_header, pack_words
from ._types import WgslType, _packing, wt

if TYPE_CHECKING:
    from ._client import WebGPUClient

_M32 = 0xFFFFFFFF
MAX_RUN = 64  # launches per merged shader (its compile time grows with it)


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


def _can_join(run: list[MapRecord], rec: MapRecord, limit: int) -> bool:
    if rec.dims != run[0].dims or len(run) >= MAX_RUN:
        return False
    written = {}
    read = {}
    for r in run:
        for i in range(len(r.views)):
            v = _view(r, i)
            (written if i < r.nout else read).setdefault(v[0], set()).add(v)
    for i in range(len(rec.views)):
        v = _view(rec, i)
        if i < rec.nout:  # a write: the buffer's earlier readers and writers used this same view
            if any(u != v for u in read.get(v[0], ())) or any(u != v for u in written.get(v[0], ())):
                return False
        elif any(u != v for u in written.get(v[0], ())):  # a read of something written: the same view
            return False
    views = {_view(r, i) for r in run + [rec] for i in range(len(r.views))}
    return len(views) <= limit


def fuse(client: WebGPUClient, steps: list, records: list) -> list:
    """``steps`` with each run of two or more joinable map launches replaced by one merged launch."""
    limit = min(client.max_storage_per_stage, 24)
    out: list = []
    run: list[int] = []

    def close():
        if len(run) >= 2:
            out.append(_merged(client, [records[k] for k in run]))
        else:
            out.extend(steps[k] for k in run)
        run.clear()

    for k, (st, rec) in enumerate(zip(steps, records)):
        if rec is None:
            close()
            out.append(st)
            continue
        if run and not _can_join([records[j] for j in run], rec, limit):
            close()
        run.append(k)
    close()
    return out


def _merged(client: WebGPUClient, run: list[MapRecord]) -> tuple:
    dims = run[0].dims
    ndim = len(dims)
    # one binding per distinct view; windows, offsets and strides from the record that first has it
    slots: dict[tuple, int] = {}
    info: list[tuple] = []  # per binding: (WgslType, written, bind triple, element offset, strides)
    for rec in run:
        for i, v in enumerate(rec.views):
            written = i < rec.nout
            if v not in slots:
                slots[v] = len(info)
                info.append([wt(v[3]), written, rec.binds[3 * i:3 * i + 3], rec.eoffs[i], rec.strides[i]])
            elif written:
                info[slots[v]][1] = True
    lay = Layout()
    shape_k = lay.alloc(ndim)
    words_k = [lay.alloc(1 + ndim) for _ in info]
    lib = WgslHelpers(client.has_f64)
    text = []
    regs: dict[tuple, str] = {}     # view -> the register holding its latest value
    loaded: set[int] = set()
    tail_words: list[int] = []
    nsalt = 0
    for ri, rec in enumerate(run):
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
            if v in regs:
                src = regs[v]
            else:
                b = slots[v] + 1
                if b not in loaded:
                    text.append(f"  let l{b} = ld{b}(e{b});\n")
                    loaded.add(b)
                src = f"l{b}"
            # each operand of each launch its own opaque value: what the launch knows of it eagerly
            name = f"o{ri}_{len(vals)}"
            text.append(f"  let {name} = {_opaque(w.ct, src, nsalt)};\n")
            nsalt += 1
            vals.append(name)
        params = [lay.scalar(w) for w in rec.param_wts]
        tail_words += rec.tail

        def store(j: int, value: str, rec=rec, ri=ri) -> str:
            v = _view(rec, j)
            b = slots[v] + 1
            w = wt(v[3])
            name = f"r{ri}_{j}"
            regs[v] = name
            return (f"  let s{name} = {value};\n  st{b}(e{b}, s{name});\n"
                    f"  let {name} = {_reloaded(w, 's' + name)};\n")

        before = set(regs.values())
        body = rec.body(MapCodegen(lib, ins_wt, vals, params, False, [], store))
        # each launch's body in a block of its own, as in its own shader: two launches of one kernel declare
        # the same names (k_fft's `var fz`); the registers later launches read are declared before the block
        mine = [(v, n) for v, n in regs.items() if n not in before]
        for _, n in mine:
            body = body.replace(f"  let {n} = ", f"  {n} = ", 1)
        text.append("".join(f"  var {n}: {wt(v[3]).ct};\n" for v, n in mine) + "  {\n" + body + "  }\n")
    idx = coord_lines(ndim, shape_k) + element_lines(ndim, words_k)
    # a written binding is declared atomic when packed: reads of it then use atomicLoad
    decls = bindings([(w, written, written) for w, written, *_ in info])
    source = lay.block() + decls + lib.source() + main_header() + "".join(idx) + "".join(text) + "}\n"
    pipe = client.pipeline(("fused", source), lambda: source, len(info), lay.nbytes)
    n = 1
    for s in dims:
        n *= s
    grid = groups(n)
    words = [n, grid[0], 0, 0] + list(dims)
    for _, _, _, eoff, st in info:
        words.append(eoff)
        words += [s & _M32 for s in st]
    words += tail_words
    binds = tuple(x for _, _, triple, _, _ in info for x in triple)
    return client.encode_recorded(pipe, pack_words(words), binds, grid)
