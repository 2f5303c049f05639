"""Products of a tall, thin C-contiguous matrix X (n x d, d <= ``MAX_COLS``, n >= ``MIN_ROWS``) with a vector,
as one pass over X's rows: ``X @ w`` (a dot product per row) and ``X.T @ v`` (a sum of rows scaled by v).

rowdot ran them as a workgroup per 64 rows (``X @ w``) or per slice of k with a second launch (``X.T @ v``),
each lane keeping two loads in flight: 35 and 60 µs for a 200k x 64 float32 X on an H200. Here (the design of
the CUDA backend's ``_matvec``) a workgroup takes blocks of 256 rows, striding over them with the grid, and
loads a block's rows ``TURNS_AHEAD`` turns at a time: ``lanes(d)`` lanes per row (lane ``gl`` columns in runs
of ``RUN_BYTES``, runs gl, gl + lanes, ...; or columns gl, gl + lanes, ... where the runs do not divide the row),
256 / lanes rows per turn, lanes turns per block.

* ``X @ w``: each lane multiplies and adds its columns in increasing order (``fma``), the row's lanes are
  summed by a fixed tree (by subgroup shuffles where the adapter's subgroups hold a row's lanes, else in
  workgroup memory: the same bits), and one invocation per row stores the sum.
* ``X.T @ v``: each lane keeps an accumulator per column it takes and adds ``v[i] * X[i, c]`` (``fma``) for
  its rows in increasing order; at the end a fixed pairwise tree (by shuffles within a subgroup, then through
  workgroup memory several columns at a time: ``_column_trees``) sums the workgroup's rows into
  a partial sum per workgroup, which one workgroup (a second launch, ``parts_text``) sums in a fixed order.
  The grid depends only on n and whether the adapter is a CPU (``grid``), so the bits depend only on the data.

float32 on an adapter that flushes float32 subnormals (``compute_type``'s wide) keeps them. An operand is safe
where it is zero, infinite, NaN or at least 2^-40 in magnitude (``f32_safe_gap``): products and sums of safe
operands are never subnormal, so flushing changes nothing. ``X @ w``: a row's lane takes float32's own ``fma``
where its values and w's are safe, else float64's from the operands' bits. ``X.T @ v``: a lane takes float32's
own ``fma`` while every operand it has met is safe, and from the first that is not, float64's from the bits,
its sums kept in its float32 registers (``keep``: float32's bits where float32 keeps 20 bits or more of a sum,
else the float64's high word). Row sums and the partial sums are in float64, the column trees too but where
every lane of the workgroup stayed on float32's products (then in float32, widened), the results narrowed. On an
H200 (200k x 64, logistic regression's 50 fused passes replayed alone): 1059-1069 µs against 1163-1169 with
every product in float64 from the bits (the float32 trees: 1095 against 1110-1113 on another host); narrowing
the fallback's sums to float32 took 1073-1104 µs but left a sum of subnormal products 1e-5 off; float64
registers for them, 1794-1801; a function-scope array, 1357-1360; a bool and a mask beside the sums, 1117-1174.

Both are one template (``pass_text``) that a capture's run fills in too (``fused_step``): a captured
``X @ w``, a map run over its n results and ``X.T @ v`` of what the run stored become one pass: once a
block's dot products are summed, its 256 invocations run the run's bodies for its 256 rows (the dot
product in a register), and the run's value reaches the row's lanes by subgroup shuffles (in workgroup memory
where a row's lanes span subgroups). Its bits are
eager's: the dot product and the accumulation are the same code, the run's bodies each launch's expression
(``_fused_bodies``).

Measured on an H200 and not kept (the fused logistic regression step, pass and parts' sum, GPU timestamps; the
same bits): the end's column trees four at a time in 8 KiB of workgroup memory (6 barriers, not 48; the pass
without its trees saves 2.4 µs a step): 71 against 54 µs a step; the next block's first turns loaded during
this block's run: 72. Both hold more per workgroup while the block's rows wait in the cache for their second
read, which may be why.
"""

from __future__ import annotations

from typing import NamedTuple

from ... import _dtypes as dt
from ..._tensor import Tensor
from ._fused_bodies import MAX_OPERANDS, _M32, _opaque, bodies, run_views
from ._map_template import MapRecord
from ._shader import Layout, baked, bindings, butterfly, pack_words
from ._types import F32, F32_SAFE_GAPS, F64, WgslType, cast, f32_safe_gap, lit, wt
from ._views import bind_whole, whole_words
from ._wgsl_helpers import WgslHelpers
from .k_reduce import _i32, _temp


#: the widest X taken (a lane holds its columns of a block's rows in registers)
MAX_COLS = 128
#: the fewest rows: shorter products stay rowdot's, whose one-workgroup launches join a capture's programs
MIN_ROWS = 1024
#: columns of a row a lane takes, at most
PER_LANE = 8
#: turns of a block whose rows' loads are in flight together, and the most workgroups of a pass (the partial
#: sums of ``X.T @ v``): a GPU's, a CPU adapter's. Fewer loads in flight take fewer registers, so more
#: workgroups fit: on an H200 (200k x 64 float32, row sums by subgroup shuffles, variants in one process) a
#: jitted logistic regression took 2.51-2.69 ms with 2 turns and 512 workgroups against 3.29 with all 8 turns
#: and 256 (as before: 3.42 with 8 and 512), 2.52-2.55 with 448-768 and 2 turns, 2.55-2.66 with 1 or 3;
#: ``X @ w`` 36 against 43 µs, ``X.T @ v`` 47 against 57; with the later pass (rows handed over by shuffles,
#: dead stores left out; session 25, two processes, 30 replays a variant alternated): 1 turn 1625-1717 µs a
#: replay against 1662-1768 with 2 (passes alone 1367-1442 against 1413-1481), the same bits
TURNS_AHEAD = 1
GROUPS = 512
CPU_GROUPS = 32
#: loads in flight per invocation of the parts' sum, at most (its time is their latency; ``ahead``): all of a
#: lane's rows of parts at once for logistic regression's 391 parts of 64 columns (98 rows; on an H200 its jitted
#: replay took 1732 µs with 128, 1803 with 32, 1872 with 64, the same bits; in session 23, 1776 with its 98
#: loads and no loop against 1823-1904 with 8-64 a turn)
PARTS_AHEAD = 128
#: bytes of a row a lane takes together where the row divides into such runs for every lane (float32: columns
#: 4 gl .. 4 gl + 3, 4 (gl + L) ..., as the CUDA pass): on an H200 (200k x 64 float32, flushing adapter) the fused
#: logistic regression pass took 41.7 µs against 44.4 with every L-th column from gl (GPU timestamps). Where X's
#: offset is a multiple of a run, a run is one 16-byte vector load (``vector``): the pass 40.2 -> 37.0 µs, the
#: jitted 50 steps' replay 1982 -> 1840 µs, the same bits (an earlier pass, before rows were handed between
#: lanes by shuffles, took 20% longer with them)
RUN_BYTES = 16
#: the blocks of rows a workgroup takes, at most, on a CPU adapter: its loops stop after
#: 65535 turns (k_contract's CHUNK)
_CPU_BLOCKS = 32768


def form(client, a: Tensor, v: Tensor, o: Tensor, batch: list, rows: tuple, k: tuple) -> tuple[str, int, int] | None:
    """rowdot's operands as a pass: ("rows", n, d) for ``X @ w`` (a the n x d C-contiguous X, v dense), ("cols",
    n, d) for ``X.T @ v`` (a the transposed view of an n x d C-contiguous X, v dense); None for anything else:
    a batch, another dtype than float32 or float64 for all three, other strides, a short or wide X."""
    if batch or not (a._dtype == v._dtype == o._dtype) or a._dtype not in (dt.float32, dt.float64):
        return None
    if a._dtype == dt.float32 and client.flushes_f32_subnormals and not client.has_f64:
        return None
    N, sai, svi, _ = rows
    K, sak, svk = k
    if svi != 0 or svk != 1:
        return None
    if sak == 1 and sai == K and 0 < K <= MAX_COLS and N >= MIN_ROWS:
        return "rows", N, K
    if sai == 1 and sak == N and 0 < N <= MAX_COLS and K >= MIN_ROWS:
        return "cols", K, N
    return None


def vector(d: int, xw: WgslType, ex: int) -> int:
    """Values of X a pass loads at once: a run (``RUN_BYTES``) where the rows divide into runs for every lane
    and X's element offset ``ex`` is a multiple of one (its binding's offset is: WebGPU aligns those to 256
    bytes), else 1."""
    run = RUN_BYTES // xw.dtype.itemsize
    return run if run > 1 and d % (run * lanes(d)) == 0 and ex % run == 0 else 1


def lanes(d: int) -> int:
    """Lanes per row of ``d`` columns: a power of two, about d / PER_LANE, at most 32. (One lane per row on a
    CPU adapter, whose barriers each cost a pass over the workgroup, took lavapipe 50 s to compile for 64
    columns.)"""
    return min(32, 1 << max(0, (-(-d // PER_LANE) - 1).bit_length()))


def grid(n: int, d: int, cpu: bool) -> int:
    """Workgroups of a pass over ``n`` rows of ``d`` columns: at most GROUPS (CPU_GROUPS), each taking the same
    number of blocks of 256 rows (one fewer for the last ones)."""
    blocks = -(-n // 256)
    most = CPU_GROUPS if cpu else GROUPS
    each = max(-(-blocks // most), 1)
    if cpu:
        each = min(each, _CPU_BLOCKS)
    return max(1, min(-(-blocks // each), 65535))


def compute_type(client, dtype: dt.DType) -> tuple[WgslType, bool]:
    """(the type products and sums are in, whether float32 is widened to float64 from its bits)."""
    wide = dtype == dt.float32 and client.has_f64 and client.flushes_f32_subnormals
    return (F64 if wide else wt(dtype)), wide


def pass_text(lay: Layout, lib: WgslHelpers, xw: WgslType, c: WgslType, wide: bool, d: int, bx: int,
              bw: int | None = None, row_end=None, value=None, bp: int | None = None, ends: str = "turn",
              sg: int = 0, vec: int = 1) -> str:
    """The statements of a pass's entry point over the rows of the n x d C-contiguous X (binding ``bx`` of
    ``xw``), its words allocated in ``lay``: n, X's element offset, then w's (with ``bw``), then the partial
    sums' (with ``bp``).

    A workgroup takes blocks of 256 rows (block b of workgroup g: rows 256 (b G + g) ...), loading all of a
    block's rows first (lane gl of row slot ti: its columns of rows 256 (b G + g) + t R + ti,
    turns t < L), then: with ``bw``, each row's dot product with w (binding bw, dense) is ``row_end(h)``'s
    ``h`` (a compute-type expression), WGSL run for row i < n by one invocation: per turn by invocation i -
    (the turn's first row) (``ends`` "turn"), or once the block's turns are summed, by invocation i - (the
    block's first row), h then in ``shv[li]`` (``ends`` "block": the run's steps for 256 rows at once, not
    32 rows each turn with their latency; where a subgroup holds whole rows, its lanes end its rows instead,
    lane l of S the row of turn l / P, slot l % P (P = S / L, S the pipeline's subgroup size, which on some
    adapters differs from the client's probe), the sums and values handed over by shuffles without workgroup
    memory or barriers: the fused logistic regression pass (50k x 32) 6.9 -> 4.0 ms on lavapipe; on an H200
    (200k x 64) replays 1-3% faster); with ``bp``, the rows scaled by ``value(t)`` (a compute-type expression
    for turn t, read by every lane of a row i < n after the rows ended) are summed, turn by turn, into the
    workgroup's partial sums, d values at binding bp from its offset + d * workgroup. A row's lanes
    are summed by subgroup shuffles where they are at most ``sg`` (the client's ``subgroup_rows``), else in
    workgroup memory with a barrier per level: the same tree (lane gl adds lane gl + s, s = L/2, ..., 1), so
    the same bits; the partial sums' trees take ``sg`` too (``_column_trees``). ``vec`` > 1 (``vector``): X's
    binding holds vectors of that many values, a lane's run one load."""
    W = Layout.word
    L = lanes(d)
    D = -(-d // L)
    R = 256 // L
    n_k, ex_k = lay.alloc(1), lay.alloc(1)
    ew_k = lay.alloc(1) if bw is not None else None
    ep_k = lay.alloc(1) if bp is not None else None
    zero = lit(c, 0)
    widen = lib.fn("widen", F32) if wide else None
    conv = (lambda e: f"{widen}({e})") if wide else (lambda e: cast(e, xw, c))
    keep = lib.fn("keep", F32) if wide and bp is not None else None
    kept = lambda j: f"{lib.fn('kept', F32)}(acc{j}, (st_ & {1 << j}u) != 0u)"
    reload = ends == "block" and bw is not None
    gather = reload and gathers(d, sg)
    run = RUN_BYTES // xw.dtype.itemsize
    if d % (run * L) == 0:  # lane gl's columns: runs of ``run`` (RUN_BYTES)
        col = [f"{run}u * gl + {(j // run) * run * L + j % run}u" for j in range(D)]
        inside = [None] * D
    else:  # every L-th, from gl
        col = [f"gl + {L * j}u" for j in range(D)]
        inside = [None if L * j + L <= d else f"{col[j]} < {d}u" for j in range(D)]  # (None: always)

    def guarded(j: int, line: str) -> str:
        return line if inside[j] is None else f"if ({inside[j]}) {{ {line} }}"

    def loads(u: int) -> list[str]:  # turn u's row's columns into x{u}_0 ...
        if vec == 1:
            return [guarded(j, f"x{u}_{j} = ld{bx}(ex + r{u} * {d}u + {col[j]});") for j in range(D)]
        return [f"{{ let q_ = ld{bx}((ex + r{u} * {d}u + {col[j]}) / {vec}u); "
                + " ".join(f"x{u}_{j + k} = q_.{'xyzw'[k]};" for k in range(vec)) + " }" for j in range(0, D, vec)]

    def all_safe(names: list[str]) -> str:  # wide: whether the float32 values are all safe (0 where not loaded)
        m = f32_safe_gap(names[0])
        for e in names[1:]:
            m = f"max({m}, {f32_safe_gap(e)})"
        return f"{m} <= {F32_SAFE_GAPS}"

    def safe(u: int) -> str:  # turn u's values of the lane
        return all_safe([f"x{u}_{j}" for j in range(D)])

    def accumulate(turns) -> list[str]:  # the turns' rows scaled by their values into the accumulators
        a = []
        for u in turns:
            if gather:  # row (u, slot) of the subgroup ended in its lane u rows_ + slot (every lane shuffles)
                a.append(f"    let vs{u} = subgroupShuffle(vb, {u}u * rows_ + slot_);\n")
            a.append(f"    if (r{u} < n) {{\n      let v_ = {f'vs{u}' if gather else value(u)};\n")
            if reload:
                # the rows loaded again (from the cache): the block's X values are not held in registers
                # across the run's steps (libm code beside them left a fused pass at a third of the memory rate)
                a += [f"      {x}\n" for x in loads(u)]
            if not wide:
                a += ["      " + guarded(j, f"acc{j} = fma(v_, {conv(f'x{u}_{j}')}, acc{j});") + "\n" for j in range(D)]
                a.append("    }\n")
                continue
            # wide: float32's own fma while every operand the lane has met is safe; from the first that is not,
            # float64's from the bits, its sums kept in the float32 registers (``keep``: a bit of st_ a column)
            safe_ = f"{f'xs{u}' if bw is not None else safe(u)} && {f32_safe_gap('v_')} <= {F32_SAFE_GAPS}"
            a.append(f"      if (!({safe_})) {{ st_ = st_ | 0x80000000u; }}\n      if (st_ == 0u) {{\n")
            a += ["        " + guarded(j, f"acc{j} = fma(v_, x{u}_{j}, acc{j});") + "\n" for j in range(D)]
            a.append(f"      }} else {{\n        let vw_ = {conv('v_')};\n")
            for j in range(D):
                k_ = f"{keep}(fma(vw_, {conv(f'x{u}_{j}')}, {kept(j)}))"
                a.append("        " + guarded(j, f"{{ let k_ = {k_}; acc{j} = bitcast<f32>(k_.x); "
                                                f"st_ = (st_ & {~(1 << j) & 0xffffffff}u) | (k_.y << {j}u); }}") + "\n")
            a.append("      }\n    }\n")
        return a

    t = [f"  let gl = li % {L}u;\n  let ti = li / {L}u;\n  let n = {W(n_k)};\n  let ex = {W(ex_k)};\n"
         # the workgroups stride over the blocks (word 1: the workgroups)
         f"  let stride = {W(1)} * 256u;\n  var bb = wid.x * 256u;\n"]
    if bw is not None:
        t.append(f"  let ew = {W(ew_k)};\n")
        if wide:  # w as loaded, and whether all of the lane's are safe
            t += [f"  var wv{j} = 0.0f;\n  " + guarded(j, f"wv{j} = ld{bw}(ew + {col[j]});") + "\n" for j in range(D)]
            t.append(f"  let ws_ = {all_safe([f'wv{j}' for j in range(D)])};\n")
        else:
            t += [f"  var wv{j} = {zero};\n  " + guarded(j, f"wv{j} = {conv(f'ld{bw}(ew + {col[j]})')};") + "\n"
                  for j in range(D)]
    if bp is not None:
        if wide:  # (bad_'s start, before any invocation can set it)
            t.append("  if (li == 0u) { bad_ = 0u; }\n  workgroupBarrier();\n")
        t += [f"  var acc{j} = {lit(xw, 0) if wide else zero};\n" for j in range(D)]
        if wide:  # (st_: bit 31 once an operand was not safe, bit j where acc{j} holds a high word, ``keep``)
            t.append("  var st_ = 0u;\n")
    if gather:  # (the pipeline's own subgroup size: it may differ from the client's probe on some adapters)
        # rows_: a subgroup's rows in a turn; the invocation's row slot in them (slot_), the lane whose sum
        # it takes (from_), the row of a block it ends (mine_)
        t.append(f"  let rows_ = subgroup_size / {L}u;\n  let slot_ = ti % rows_;\n"
                 f"  let from_ = (sl % rows_) * {L}u + sl / rows_;\n"
                 f"  let mine_ = (sl / rows_) * {R}u + (li / subgroup_size) * rows_ + sl % rows_;\n"
                 f"  var hs = {zero};\n")
    t.append("  loop {\n    if (bb >= n) { break; }\n")
    ahead = min(L, TURNS_AHEAD)
    for g0 in range(0, L, ahead):  # the block's rows, ``ahead`` turns' loads in flight together
        turns = range(g0, min(L, g0 + ahead))
        for u in turns:
            t.append(f"    let r{u} = bb + {u * R}u + ti;\n"
                     + "".join(f"    var x{u}_{j} = {lit(xw, 0)};\n" for j in range(D))
                     + f"    if (r{u} < n) {{\n" + "".join(f"      {x}\n" for x in loads(u)) + "    }\n")
        for u in turns if bw is not None else ():
            t.append(f"    var h{u} = {zero};\n")
            if wide:  # float32's own fma where the lane's values and w's are safe, else float64's from the bits
                t.append(f"    let xs{u} = {safe(u)};\n    if (ws_ && xs{u}) {{\n      var q_ = 0.0f;\n")
                t += ["      " + guarded(j, f"q_ = fma(x{u}_{j}, wv{j}, q_);") + "\n" for j in range(D)]
                t.append(f"      h{u} = {widen}(q_);\n    }} else {{\n")
                t += ["      " + guarded(j, f"h{u} = fma({conv(f'x{u}_{j}')}, {conv(f'wv{j}')}, h{u});") + "\n"
                      for j in range(D)]
                t.append("    }\n")
            else:
                t += ["    " + guarded(j, f"h{u} = fma({conv(f'x{u}_{j}')}, wv{j}, h{u});") + "\n" for j in range(D)]
            if L == 1:  # (one turn, each invocation its row's)
                t.append("    if (r0 < n) {\n      let i = r0;\n" + row_end("h0") + "    }\n")
                continue
            if L <= sg:  # the row's lanes in one subgroup: a butterfly leaves every lane the tree's sum
                t.append(butterfly(f"h{u}", L, "    "))
                if ends == "turn":
                    t.append(f"    if (gl == 0u && r{u} < n) {{\n      let i = r{u};\n" + row_end(f"h{u}") + "    }\n")
                elif gather:  # lane k of a row's lanes keeps turn k's sum (one register, not L)
                    t.append(f"    hs = {'h0' if u == 0 else f'select(hs, h{u}, gl == {u}u)'};\n")
                continue
            # the row's lanes, by a fixed tree (every invocation reaches the barriers)
            t.append(f"    sh[li] = h{u};\n    workgroupBarrier();\n")
            s = L // 2
            while s:
                t.append(f"    if (gl < {s}u) {{ sh[li] = sh[li] + sh[li + {s}u]; }}\n    workgroupBarrier();\n")
                s //= 2
            if ends == "turn":
                t.append(f"    if (li < {R}u && bb + {u * R}u + li < n) {{\n      let i = bb + {u * R}u + li;\n"
                         + row_end(f"sh[li * {L}u]") + "    }\n")
            else:
                t.append(f"    if (li < {R}u) {{ shv[{u * R}u + li] = sh[li * {L}u]; }}\n")
            t.append("    workgroupBarrier();\n")  # (before the next turn's tree writes workgroup memory)
        if bp is not None and not reload:
            t += accumulate(turns)
    if gather:
        # lane k of a row's lanes offers turn k's sum; lane l of a subgroup ends row (turn l / rows_, slot
        # l % rows_), whose lanes are (l % rows_) L ... (the same bits as the block's sums read from workgroup memory)
        t.append(f"    let hb = subgroupShuffle(hs, from_);\n    var vb = {lit(xw, 0)};\n    let i = bb + mine_;\n"
                 "    if (i < n) {\n" + row_end("hb", "vb") + "    }\n")
    elif ends == "block" and bw is not None and L > 1:  # (the last turn's tree ended with a barrier)
        t.append("    if (bb + li < n) {\n      let i = bb + li;\n" + row_end("shv[li]", "shx[li]") + "    }\n"
                 "    workgroupBarrier();\n")
    if bp is not None and reload:
        t += accumulate(range(L))
    t.append("    bb = bb + stride;\n  }\n")
    if bp is not None:
        t.append(f"  let ep = {W(ep_k)} + wid.x * {d}u;\n")
        if not wide:
            t += _column_trees(D, L, R, sg, col, inside, bp, "acc")
        else:  # (float32 trees where every lane of the workgroup stayed safe: their sums cannot be subnormal)
            t.append("  if (st_ != 0u) { bad_ = 1u; }\n  if (workgroupUniformLoad(&bad_) == 0u) {\n")
            t += ["  " + x for x in _column_trees(D, L, R, sg, col, inside, bp, "acc", "sh32", widen)]
            t.append("  } else {\n")
            t += [f"    var accw{j} = {kept(j)};\n" for j in range(D)]
            t += ["  " + x for x in _column_trees(D, L, R, sg, col, inside, bp, "accw")]
            t.append("  }\n")
    return "".join(t)


def _column_trees(D: int, L: int, R: int, sg: int, col: list, inside: list, bp: int, acc: str, sh: str = "sh",
                  widen: str = "") -> list[str]:
    """The workgroup's partial sums: for each column j < D of each lane gl (``{acc}{j}``), the sum over the R row
    slots ti by a fixed pairwise tree (ti with ti ^ 1, then ^ 2, ...), stored at ``col[j]`` (where ``inside[j]``).
    The levels within a subgroup (lane distance 2^k L under ``sg``) go by shuffles, which leave each lane of a
    group of E slots the group's sum; then the R / E group sums of E columns at a time go through workgroup
    memory and are summed, in the same order, by the lanes of slot ti (column j0 + ti of the round): two
    barriers a round (the tree in workgroup memory took 1 + log2(R) a column: 48 for 64 columns, and its
    barriers cost an H200's logistic regression pass 2.4-3 µs of its 28). ``sh``: the workgroup array, of the
    accumulators' type; ``widen``: the function its sums go through to the partial sums' type."""
    E = 1
    while E < R and E * L < sg:
        E *= 2
    Q = R // E
    t = []
    k = 1
    while k < E:
        t += [f"  {acc}{j} = {acc}{j} + subgroupShuffleXor({acc}{j}, {k * L}u);\n" for j in range(D)]
        k *= 2
    for j0 in range(0, D, E):
        batch = range(j0, min(D, j0 + E))
        if j0:
            t.append("  workgroupBarrier();\n")  # (the round before has read workgroup memory)
        t.append(f"  if (ti % {E}u == 0u) {{\n"
                 + "".join(f"    {sh}[{(j - j0) * Q * L}u + ti / {E}u * {L}u + gl] = {acc}{j};\n" for j in batch)
                 + "  }\n  workgroupBarrier();\n")
        for j in batch:
            terms = [f"{sh}[{(j - j0) * Q * L + q * L}u + gl]" for q in range(Q)]
            while len(terms) > 1:
                terms = [f"({terms[i]} + {terms[i + 1]})" for i in range(0, len(terms), 2)]
            cond = f"ti == {j - j0}u" + ("" if inside[j] is None else f" && {inside[j]}")
            t.append(f"  if ({cond}) {{ st{bp}(ep + {col[j]}, {widen}({terms[0]})); }}\n")
    return t


def gathers(d: int, sg: int) -> bool:
    """Whether a fused pass over rows of ``d`` columns hands its rows between a subgroup's lanes (``pass_text``):
    a row's lanes more than one and within a subgroup (``sg``, the client's ``subgroup_rows``)."""
    return 1 < lanes(d) <= sg


#: a wide pass's partial sums' flag and float32 trees (``pass_text``)
TREES32 = "var<workgroup> bad_: u32;\nvar<workgroup> sh32: array<f32, 256>;\n"


def _entry(lay: Layout, decls: str, lib: WgslHelpers, c: WgslType, body: str, shared: str = "",
           subgroup: bool = False) -> str:
    """The shader around ``body``; ``subgroup``: with the invocation's subgroup size and index in it
    (``subgroup_size``, ``sl``)."""
    params = (", @builtin(subgroup_size) subgroup_size: u32, @builtin(subgroup_invocation_id) sl: u32"
              if subgroup else "")
    return (lay.block() + decls + lib.source() + f"var<workgroup> sh: array<{c.ct}, 256>;\n" + shared
            + "@compute @workgroup_size(256)\n"
            f"fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32{params}) {{\n"
            + body + "}\n")


def _result(lib: WgslHelpers, c: WgslType, wide: bool, ow: WgslType, h: str) -> str:
    return f"{lib.fn('narrow', F32)}({h})" if wide else cast(h, c, ow)


def ahead(G: int, d: int) -> int:
    """Loads in flight per invocation of the sum of G partial sums of d columns: its rows of them (then one
    load each, no loop: ``parts_text``), at most PARTS_AHEAD (fewer where there are fewer: a CPU adapter's
    compiler takes longer with each)."""
    return max(1, min(PARTS_AHEAD, -(-G // (256 // d))))


def parts_text(lay: Layout, lib: WgslHelpers, c: WgslType, ow: WgslType, wide: bool, d: int, A: int,
               b: tuple[int, int] = (1, 2), sh: str = "sh") -> str:
    """The statements of the one-workgroup sum of ``X.T @ v``'s partial sums (G rows of d compute values, binding
    b[1]) into the result (binding b[0], stride so), its words allocated in ``lay``: G, the parts' offset, the
    result's offset and stride. Invocation (r, c) of the first q * d (q = 256 // d) sums rows r, r + q, ... of
    column c in increasing order, ``A`` loads in flight (``ahead``), each added where it is a row: all of its
    rows at once where ``A`` is below PARTS_AHEAD (``ahead`` gave every row a load), else a loop of A loads a
    turn and the last fewer than A; invocation c < d then the q sums in order; ``sh``: the workgroup array of
    256 compute values."""
    W = Layout.word
    g_k, ep_k, eo_k, so_k = (lay.alloc(1) for _ in range(4))
    q = 256 // d
    G, ep = W(g_k), W(ep_k)
    ld = lambda g: f"ld{b[1]}({ep} + ({g}) * {d}u + c_)"

    def last(m: int) -> str:  # the m rows from g, each loaded and added where it is a row
        return ("".join(f"    var t{k} = {lit(c, 0)};\n    if (g + {k * q}u < {G}) {{ t{k} = {ld(f'g + {k * q}u')}; }}\n"
                        for k in range(m))
                + "".join(f"    if (g + {k * q}u < {G}) {{ s = s + t{k}; }}\n" for k in range(m)))

    text = f"  let c_ = li % {d}u;\n  let r_ = li / {d}u;\n  var s = {lit(c, 0)};\n  if (r_ < {q}u) {{\n    var g = r_;\n"
    if A < PARTS_AHEAD:
        # (the loop, entered by three of logistic regression's four rows of lanes for their 98 rows where the
        # last 97 loads served the fourth, took its 50 jitted steps 1950 µs on an H200 against 1776 with every
        # lane's rows in the last loads)
        text += last(A)
    else:
        text += (f"    loop {{\n      if (g + {(A - 1) * q}u >= {G}) {{ break; }}\n"
                 + "".join(f"      let a{k} = {ld(f'g + {k * q}u')};\n" for k in range(A))
                 + "".join(f"      s = s + a{k};\n" for k in range(A))
                 + f"      g = g + {A * q}u;\n    }}\n" + last(A - 1))
    return (text + f"  }}\n  {sh}[li] = s;\n  workgroupBarrier();\n"
            f"  if (li < {d}u) {{\n    var t = {sh}[li];\n"
            f"    for (var k = 1u; k < {q}u; k = k + 1u) {{ t = t + {sh}[k * {d}u + li]; }}\n"
            f"    st{b[0]}(u32(i32({W(eo_k)}) + i32(li) * {_i32(so_k)}), {_result(lib, c, wide, ow, 't')});\n  }}\n")


class PartsRecord(NamedTuple):
    """A captured sum of a pass's partial sums (one workgroup), as _fuse_small reads it to run it as a phase of
    a one-workgroup program (the update of w after a logistic regression's gradient). Holds no tensor."""
    args: tuple     # parts_text's arguments after the layout and helpers
    words: list     # the dispatch's uniform words, frame words first
    binds: tuple    # (WBuf, byte offset, byte size) of the result and the parts
    bound: tuple    # their WgslTypes

    @property
    def ct(self) -> str:
        """The compute type of the phase's workgroup array."""
        return self.args[0].ct

    def text(self, lay: Layout, lib: WgslHelpers, slots: list[int], sh: str) -> str:
        """The phase's statements, its tensors at bindings ``slots``."""
        return parts_text(lay, lib, *self.args, b=tuple(slots), sh=sh)


def _sum_partials(client, parts: Tensor, o: Tensor, so: int, c: WgslType, wide: bool) -> None:
    """o (its d elements ``so`` apart) = the sum over axis 0 of a pass's partial sums ``parts`` (G x d, compute
    type c), by one workgroup."""
    G, d = parts._shape
    (b1, e1), (b2, e2) = bind_whole(client, o), bind_whole(client, parts)
    pipe, words, record = _parts_sum(client, o._dtype, c, wide, G, d, b1 + b2, e2, e1, so)
    client.dispatch(pipe, pack_words(words), b1 + b2, (1, 1, 1), record if client.capturing else None)


def parts_step(client, parts: tuple, G: int, d: int, out: tuple, oe: int, so: int) -> tuple[PartsRecord, tuple]:
    """(its PartsRecord, the graph step) of a captured sum, by one workgroup, of G rows of d float32 partial sums
    whose additions are exact (small integers) at ``parts`` (a bind triple, from its start) into float32 values
    ``so`` apart from element ``oe`` of the window ``out``: a step the fusion pass makes (_fuse_distances'
    counts), not run now."""
    binds = tuple(out) + tuple(parts)
    pipe, words, record = _parts_sum(client, dt.float32, F32, False, G, d, binds, 0, oe, so)
    return record, client.encode_recorded(pipe, pack_words(words), binds, (1, 1, 1))


def _parts_sum(client, odtype: dt.DType, c: WgslType, wide: bool, G: int, d: int, binds: tuple, ep: int, eo: int,
               so: int) -> tuple:
    """(pipeline, uniform words, PartsRecord) of the one-workgroup sum (``parts_text``) of G rows of d partial
    sums in compute values ``c`` from element ``ep`` of binds' second window into ``odtype`` values ``so`` apart
    from element ``eo`` of its first."""
    ow = wt(odtype)
    A = ahead(G, d)
    key = ("matvec", "parts", odtype, d, wide, A)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        lay = Layout()
        lib = WgslHelpers(client.has_f64)
        body = parts_text(lay, lib, c, ow, wide, d, A)
        source = _entry(lay, bindings([(ow, True, False), (c, False, False)]), lib, c, body)
        pipe = client.pipeline(key, lambda: source, 2, lay.nbytes)
    words = [256, 1, 0, 0, G, ep, eo, so & _M32]
    return pipe, words, PartsRecord((c, ow, wide, d, A), words, binds, (ow, c))


class PassRecord(NamedTuple):
    """A captured pass, as the fusion pass reads it (``fused_step``). Holds no tensor."""
    kind: str       # "rows" (X @ w) or "cols" (X.T @ v, into partial sums)
    dtype: dt.DType
    n: int
    d: int
    x: tuple        # X's (memory serial, element offset)
    vec: tuple      # w's or v's view (memory serial, element offset, strides, dtype), as MapRecord.views
    out: tuple      # the view written: the result (rows), the partial sums (cols)
    binds: tuple    # (WBuf, byte offset, byte size) of the written view, X and the vector
    eoffs: tuple    # their element offsets in those windows
    so: int         # the result's stride (rows)
    groups: int     # the dispatch's workgroups (``grid``)


def run(client, kind: str, n: int, d: int, a: Tensor, v: Tensor, o: Tensor, so: int, cpu: bool) -> None:
    """o (its elements ``so`` apart) = X @ v (kind "rows") or X.T @ v ("cols") of the n x d X whose data ``a``
    views; ``cpu``: the adapter is a CPU (``grid``)."""
    c, wide = compute_type(client, a._dtype)
    xw = ow = wt(a._dtype)
    G = grid(n, d, cpu)
    dest = o if kind == "rows" else _temp(client, (G, d), c.dtype)
    (b1, e1), (b2, e2), (b3, e3) = (bind_whole(client, t) for t in (dest, a, v))
    sg = client.subgroup_rows
    vec = vector(d, xw, e2)
    key = ("matvec", kind, a._dtype, d, wide, sg, vec)
    pipe = client.cached_pipeline(key)
    if pipe is None:
        lay = Layout()
        lib = WgslHelpers(client.has_f64)
        if kind == "rows":
            eo_k, so_k = lay.alloc(1), lay.alloc(1)
            body = pass_text(lay, lib, xw, c, wide, d, 2, bw=3, sg=sg, vec=vec, row_end=lambda h: (
                f"      st1(u32({_i32(eo_k)} + i32(i) * {_i32(so_k)}), {_result(lib, c, wide, ow, h)});\n"))
        else:
            ev_k = lay.alloc(1)
            body = pass_text(lay, lib, xw, c, wide, d, 2, bp=1, vec=vec, sg=sg,
                             value=lambda u: f"ld3({Layout.word(ev_k)} + r{u})")
        decls = bindings([(wt(dest._dtype), True, False), (xw, False, False, vec), (xw, False, False)])
        source = _entry(lay, decls, lib, c, body, TREES32 if wide and kind == "cols" else "")
        pipe = client.pipeline(key, lambda: source, 3, lay.nbytes)
    # (rows: the result's offset and stride, then n, X's offset, w's; cols: v's offset, n, X's, the parts')
    words = [G * 256, G, 0, 0] + ([e1, so & _M32, n, e2, e3] if kind == "rows" else [e3, n, e2, e1])
    record = None
    if client.capturing:
        serial = lambda t: t._buf.handle.serial
        out = ((serial(o), o._offset, (so,), o._dtype) if kind == "rows"
               else (serial(dest), dest._offset, (1,), dest._dtype))
        record = PassRecord(kind, a._dtype, n, d, (serial(a), a._offset), (serial(v), v._offset, (1,), v._dtype),
                            out, b1 + b2 + b3, (e1, e2, e3), so, G)
    # (cols: the partial sums, every one written, none read; rows: the n results where they are contiguous)
    client.dispatch(pipe, pack_words(words), b1 + b2 + b3, (G, 1, 1), record,
                    whole_words(dest) if kind == "cols" or so == 1 else None)
    if kind == "cols":  # (wide: the parts summed in float64, the sum narrowed to float32 bits)
        _sum_partials(client, dest, o, so, c, wide)


def _bound_views(recs: list[MapRecord], z: tuple, gone: frozenset) -> list:
    """The run's run_views a fused pass binds after its own four: the dot products' view only where the run
    stores into their memory (else the run reads them from the register ``zr``)."""
    return [row for row in run_views(recs, gone) if row[0] != z or row[2]]


def joins(rows: PassRecord, recs: list[MapRecord], cols: PassRecord, limit: int,
          gone: frozenset = frozenset()) -> bool:
    """Whether ``rows``, the map run ``recs`` and ``cols`` may run as one pass (``fused_step``): the same X;
    the run over the n rows, reading the dot products and storing the vector cols reads; nothing of X, w or
    the partial sums written by the run (but its stores in ``gone``, (record, output) pairs nothing reads,
    which the pass leaves out), nothing read from the partial sums' memory but from the run's own registers,
    the dot products' memory read and written by it only through their own view (element i in row i's turn:
    a capture gives their memory to a later result once read); the bindings within ``limit``."""
    if rows.kind != "rows" or cols.kind != "cols" or (rows.dtype, rows.n, rows.d, rows.x) != \
            (cols.dtype, cols.n, cols.d, cols.x) or rows.binds[3:6] != cols.binds[3:6] or recs[0].dims != (rows.n,):
        return False
    z, parts = rows.out, cols.out
    fixed = {rows.x[0], rows.vec[0], parts[0]}
    stored = {rec.views[j] for ri, rec in enumerate(recs) for j in range(rec.nout) if (ri, j) not in gone}
    if cols.vec not in stored or parts[0] == z[0]:
        return False
    reads_z = False
    earlier: set = set()  # the views the run stored before (a later record reads them from registers)
    for ri, rec in enumerate(recs):
        for i, view in enumerate(rec.views):
            if i < rec.nout and (ri, i) in gone:
                continue
            if view[0] in fixed and (i < rec.nout or (view[0] == parts[0] and view not in earlier)):
                return False
            if view[0] == z[0]:
                if view != z:
                    return False
                reads_z = reads_z or i >= rec.nout
        earlier.update(rec.views[:rec.nout])
    return reads_z and 4 + len(_bound_views(recs, z, gone)) <= limit


def fused_step(client, rows: PassRecord, recs: list[MapRecord], cols: PassRecord,
               gone: frozenset = frozenset(), z_dead: bool = False) -> tuple:
    """One dispatch running ``rows``, the map run ``recs`` per row and ``cols`` (``joins``) as one pass: the
    dot products (unless ``z_dead``: nothing reads them after) and every store of the run but those in
    ``gone`` are written as eagerly, the partial sums as cols writes them (its reduction stays the next step
    of the graph)."""
    c, wide = compute_type(client, rows.dtype)
    xw = wt(rows.dtype)
    d, n = rows.d, rows.n
    lay = Layout()
    lib = WgslHelpers(client.has_f64)
    views = _bound_views(recs, rows.out, gone)
    z_stored = any(row[0] == rows.out for row in views)
    own = not (z_stored or z_dead)  # the pass stores the dot products itself, at binding 4
    first = 4 + own  # the run's views' first binding
    binding = {row[0]: b for b, row in enumerate(views, start=first)}
    ez_k, sz_k = lay.alloc(1), lay.alloc(1)
    view_k = [lay.alloc(2) for _ in views]
    text, regs, tail_words = bodies(recs, gone, lay, lib, binding, {rows.out: "zr"})
    vreg = regs[cols.vec]
    L = lanes(d)
    v = _opaque(xw.ct, vreg, MAX_OPERANDS * len(recs))
    elements = "".join(f"      let e{b} = u32({_i32(k)} + i32(i) * {_i32(k + 1)});\n"
                       for b, k in enumerate(view_k, start=first))

    def row_end(h: str, dest: str = "shx[li]") -> str:
        # (where the run stores into the dot products' memory, its store is the last: the pass leaves its own)
        return (f"      let zr = {_result(lib, c, wide, xw, h)};\n"
                + (f"      st4(u32({_i32(ez_k)} + i32(i) * {_i32(sz_k)}), zr);\n" if own else "") + elements
                + "".join(text) + f"      {dest} = {v};\n")

    vec = vector(d, xw, rows.eoffs[1])
    body = pass_text(lay, lib, xw, c, wide, d, 2, bw=3, row_end=row_end, bp=1, ends="block",
                     value=lambda u: f"shx[{u * (256 // L)}u + ti]", sg=client.subgroup_rows, vec=vec)
    decls = bindings([(c, True, False), (xw, False, False, vec), (xw, False, False)] + [(xw, True, False)] * own
                     + [(w, stored, stored) for _, w, stored, *_ in views])
    G = cols.groups
    words = [G * 256, G, 0, 0, rows.eoffs[0], rows.so & _M32]
    for _, _, _, _, eoff, st in views:
        words += [eoff, st[0] & _M32]
    scalars = range(len(words), len(words) + len(tail_words))
    words += tail_words
    words += [n, rows.eoffs[1], rows.eoffs[2], cols.eoffs[0]]
    gather = gathers(d, client.subgroup_rows)
    # (shv: a block's dot products, shx: the run's values, where they are not handed over by shuffles)
    shared = "" if gather else f"var<workgroup> shv: array<{c.ct}, 256>;\nvar<workgroup> shx: array<{xw.ct}, 256>;\n"
    shared += TREES32 if wide else ""
    source = _entry(lay, decls, lib, c, body, shared, subgroup=gather)
    source = baked(source, words, scalars)
    pipe = client.pipeline(("matvec", "fused", source), lambda: source, 3 + own + len(views), lay.nbytes,
                           captured=True)
    binds = cols.binds[0:3] + rows.binds[3:6] + rows.binds[6:9] + rows.binds[0:3] * own + \
        tuple(x for _, _, _, triple, _, _ in views for x in triple)
    return client.encode_recorded(pipe, pack_words(words), binds, (G, 1, 1))
