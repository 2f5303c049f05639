"""Fusion of captured element-wise chains: consecutive map launches over the same iteration space become
one dispatch of one generated shader.

Each dispatch of a replay costs GPU time of its own (a barrier and a launch), so a captured chain of
small element-wise operations replays no faster than the GPU can launch them one by one. At the end of a
capture, runs of consecutive map launches (element-wise functions, casts, fill, where, clip) over one
iteration space are merged when that is safe: per element, each launch only reads what the same element
of the earlier launches wrote (a read of a buffer written earlier in the run uses the very same view, or
words no launch of the run writes, and a write must not touch what an earlier launch reads or writes
through another view). The merged shader runs the launches' bodies in order for each element, passing
written values on in registers, and still writes every output (a tensor written inside the block may be
read after a replay).

One iteration space: launches over the same number of elements share the dimensions that split both of
theirs (a broadcast difference over (n, k, d), then the square of its contiguous result over n*k*d
elements), and a one-element launch (a scalar of an iterative solver, one element of a concat) joins a
larger run by being computed in every invocation and stored by the first alone; nothing of the run may
then read its words from memory.

A replay gives what eager execution gives, bit for bit: a register holds what a load of the stored value
would give (8- and 16-bit integers narrowed to their width), and each operand of each launch that is a
register (or a value loaded for an earlier operand) passes through a XOR with a zero made from the uniform
word that is always 0 (``_opaque``; an operand loaded for itself alone is already what the launch knows of
it), so that the compiler knows no more of it than of a load and cannot rewrite a sequence of
launches as one expression: contract a product and a sum into an FMA, fold a float-to-int-to-float round
trip into a truncation that forgets the conversion's saturation, or compile one launch's code otherwise
for what it knows of its operands.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from ._wgsl_helpers import WgslHelpers
from ._map_template import MapRecord, coord_lines, element_lines
from ._views import element_span, view_words
from ._shader import Layout, baked, bindings, map_entry, map_groups, pack_words
from ._fused_bodies import _M32, _view, bodies, run_views
from . import _fuse_distances, _fuse_reduce, _fuse_small, _matvec
from .k_reduce import ArgRecord, ReduceRecord

if TYPE_CHECKING:
    from ._client import WebGPUClient

MAX_RUN = 64  # launches per merged shader (its compile time grows with it)


def _refinement(a: tuple, b: tuple) -> tuple | None:
    """The coarsest dims that split both ``a`` and ``b`` into consecutive dimensions, or None: (16384,) and
    (512, 4, 8) give (512, 4, 8); (6, 4) and (4, 6) none, nor two spaces of different element counts."""
    if math.prod(a) != math.prod(b):
        return None
    def cuts(dims):
        out, p = set(), 1
        for s in reversed(dims):
            p *= s
            out.add(p)
        return out
    dims, prev = [], 1
    for c in sorted(cuts(a) | cuts(b)):
        if c % prev:
            return None
        dims.append(c // prev)
        prev = c
    return tuple(reversed(dims))


def _common_dims(a: tuple, b: tuple) -> tuple | None:
    """The iteration space a run over ``a`` and a launch over ``b`` can share, or None: a refinement of
    both, or the larger one where the other has one element (computed by every invocation)."""
    if a == b:
        return a
    na, nb = math.prod(a), math.prod(b)
    if na == nb:
        return _refinement(a, b)
    if na == 1:
        return b
    return a if nb == 1 else None


def _split(strides: tuple, old: tuple, new: tuple) -> tuple:
    """``strides`` over ``old`` as strides over ``new``, a refinement of it."""
    out: list[int] = []
    j = len(new)
    for s, d in zip(reversed(strides), reversed(old)):
        p = 1
        while p < d:
            j -= 1
            out.append(s * p)
            p *= new[j]
    return tuple(reversed(out))


def _recast(rec: MapRecord, dims: tuple) -> MapRecord:
    """``rec`` over the iteration space ``dims`` (what _common_dims gave): the same elements in the same
    order, or, for a one-element launch, the one element in every invocation (``bcast``)."""
    if rec.dims == dims:
        return rec
    if math.prod(rec.dims) == 1:
        strides = [(0,) * len(dims)] * len(rec.views)
        bcast = True
    else:
        strides = [_split(st, rec.dims, dims) for st in rec.strides]
        bcast = rec.bcast
    views = [(v[0], v[1], st, v[3]) for v, st in zip(rec.views, strides)]
    return rec._replace(dims=dims, strides=strides, views=views, bcast=bcast)


def _clash(u: tuple, v: tuple, dims: tuple) -> bool:
    """Whether two views of one buffer reach a common word."""
    a0, a1 = view_words(u, dims)
    b0, b1 = view_words(v, dims)
    return a0 < b1 and b0 < a1


def _can_join(run: list[MapRecord], rec: MapRecord, limit: int) -> bool:
    """Whether ``rec`` (over the run's dims) can join ``run``. Per element, a launch may read what the same
    element of earlier launches wrote: a read of a buffer written earlier in the run uses the very same
    view (then a register) or words no launch of the run writes, and a write must not touch what an
    earlier launch reads or writes through another view. A ``bcast`` launch's element is written by the
    first invocation alone while every invocation computes it: nothing of the run may read its words
    from memory, which another invocation could do after the store."""
    if len(run) >= MAX_RUN:
        return False
    dims = rec.dims
    written: dict = {}
    read: dict = {}
    for r in run:
        for i in range(len(r.views)):
            v = _view(r, i)
            (written if i < r.nout else read).setdefault(v[0], set()).add(v)
    for i in range(len(rec.views)):
        v = _view(rec, i)
        if i < rec.nout:
            if rec.bcast:
                if any(_clash(u, v, dims) for u in read.get(v[0], ())):
                    return False
                if any(_clash(_view(rec, k), v, dims) for k in range(rec.nout, len(rec.views))
                       if _view(rec, k)[0] == v[0]):
                    return False
            if any(u != v and _clash(u, v, dims) for u in read.get(v[0], ())) \
                    or any(u != v and _clash(u, v, dims) for u in written.get(v[0], ())):
                return False
        elif any(u != v and _clash(u, v, dims) for u in written.get(v[0], ())):
            return False
    views = {_view(r, i) for r in run + [rec] for i in range(len(r.views))}
    return len(views) <= limit


def fuse(client: WebGPUClient, steps: list, records: list, bound: list | None = None,
         unheld: set | frozenset = frozenset(), writes: dict | None = None) -> list:
    """``steps`` with each run of two or more joinable map launches replaced by one merged launch.
    ``bound``: per step, its (WBuf, byte offset, byte size) bindings; ``unheld``: the serials of the capture
    arena's blocks no tensor holds at its end; ``writes``: step index -> (memory serial, first word, end word)
    it writes whole without reading (the dispatch's ``whole``). With ``bound`` and ``unheld``, a merged launch
    drops the stores that nothing reads again (_dead_stores), and a reduction whose operand is what the run
    before it stored, when nothing else reads what that run stores, evaluates the run in place of its loads
    (_fuse_reduce): the run leaves the graph; where that reduction is squared distances (_fuse_distances) and an
    argmin or argmax of them their one reader, one step computes both (with the map run after them, and a sum
    over the rows of that run's cast of a bool as partial counts, summed by one workgroup later: ``_counts``)."""
    limit = min(client.max_storage_per_stage, 24)
    groups: list[tuple[int, list[MapRecord] | None]] = []  # (first step, the run's records or None)
    run: list[MapRecord] = []  # the records of the open run, recast over one iteration space
    first = 0

    def close():
        if run:
            groups.append((first, list(run)))
        run.clear()

    for k, (st, rec) in enumerate(zip(steps, records)):
        if type(rec) is not MapRecord:
            close()
            groups.append((k, None))
            continue
        if run:
            dims = _common_dims(run[0].dims, rec.dims)
            if dims is not None:
                cand = rec if rec.dims == dims else _recast(rec, dims)
                base = run if run[0].dims == dims else [_recast(r, dims) for r in run]
                if _can_join(base, cand, limit):
                    run[:] = base
                    run.append(cand)
                    continue
            close()
        first = k
        run.append(rec)
    close()
    dead: dict = {}
    plans: dict = {}  # group of a reduction -> its fusion with the run before it (_fuse_reduce)
    if bound is not None:
        for gi in range(1, len(groups)):
            red = records[groups[gi][0]]
            if groups[gi][1] is None and type(red) is ReduceRecord and groups[gi - 1][1] is not None:
                p = _fuse_reduce.plan(groups[gi - 1][1], red, limit)
                if p is not None:
                    plans[gi] = p
        # a fused reduction reads the run's operands, not x: fused where then nothing reads what the run
        # stores; one that is not reads x again, which may keep another's run alive
        # the runs between an X @ w and an X.T @ v (their dead stores let the three be one pass)
        between = {gi + 1 for gi in range(len(groups) - 2) if groups[gi + 1][1] is not None
                   and type(records[groups[gi][0]]) is type(records[groups[gi + 2][0]]) is _matvec.PassRecord}
        while True:
            b2 = list(bound)
            for gi, p in plans.items():
                b2[groups[gi][0]] = p.bound
            dead = _dead_stores(groups, b2, unheld, {gi - 1 for gi in plans} | between, writes)
            alive = [gi for gi, p in plans.items()
                     if len(dead.get(gi - 1, ())) < sum(r.nout for r in groups[gi - 1][1])]
            if not alive:
                break
            for gi in alive:
                del plans[gi]
    passes = _passes(groups, records, limit, dead, bound, unheld, writes or {})
    # a fused reduction that is squared distances has its own kernel; followed by an argmin or argmax of them
    # that is their one reader, one step computing both, the distances never stored (and the map run after,
    # where it can)
    distances: dict = {}  # group of a fused reduction -> _fuse_distances.fused_step's arguments
    taken: set = set()  # the groups after one of those that its step computes too
    counted: list = []  # (group of the distances, their Counts, the step summing its parts as (record, step))
    for gi, p in plans.items():
        dp = _fuse_distances.plan(p)
        if dp is None:
            continue
        distances[gi] = (dp,)
        k = groups[gi + 1][0] if gi + 1 < len(groups) else None
        if k is None or groups[gi + 1][1] is not None or type(records[k]) is not ArgRecord \
                or not _fuse_distances.takes(dp, records[k]):
            continue
        buf, off, size = p.red.o_binds
        if _unread_after(k, buf.serial, off >> 2, (off + size + 3) >> 2, records, bound, unheld, writes or {}):
            distances[gi] += (records[k],)
            taken.add(gi + 1)
            # and the map run right after it, where it reads the index as each row's (a one-hot mask)
            run = groups[gi + 2][1] if gi + 2 < len(groups) else None
            if run is not None and _fuse_distances.epilogue(dp, records[k], run, limit):
                gone = frozenset(dead.get(gi + 2, ()))
                distances[gi] += (run, gone)
                taken.add(gi + 2)
                # and the sum over the rows of the run's cast of a bool (k-means' counts) after it
                found = _counts(client, gi, dp, run, gone, groups, records, bound, unheld, writes or {}, limit)
                if found is not None:
                    count, parts, stages, phase = found
                    distances[gi] += (count, parts)
                    taken.update(stages)
                    counted.append((gi, count, phase))
    items: list[tuple] = []  # (what _fuse_small may join or None, the step or a function making it)
    covers: list = []  # per item, the groups its step computes (a range), or the window a counts' sum writes
    for gi, (k, recs) in enumerate(groups):
        if gi + 1 in plans or gi - 1 in passes or gi - 2 in passes or gi in taken:  # in an earlier group's step
            continue
        covers.append(range(gi, gi + 1))
        if gi in distances:
            items.append((None, functools.partial(_fuse_distances.fused_step, client, *distances[gi])))
            end = gi + 1
            while end in taken:
                end += 1
            covers[-1] = range(gi - 1, end)
        elif gi in passes:
            items.append((None, functools.partial(_matvec.fused_step, client, *passes[gi])))
            covers[-1] = range(gi, gi + 3)
        elif gi in plans:
            items.append((None, functools.partial(_fuse_reduce.fused_step, client, plans[gi])))
            covers[-1] = range(gi - 1, gi + 1)
        elif recs is None:
            items.append((records[k] if type(records[k]) in _fuse_small.WHOLE else None, steps[k]))
        elif len(recs) == 1:
            items.append((_fuse_small.MapPhase(recs, frozenset()), steps[k]))
        else:
            gone = frozenset(dead.get(gi, ()))
            items.append((_fuse_small.MapPhase(recs, gone), functools.partial(_merged, client, recs, gone)))
    for gi, count, phase in counted:
        # the sum of the partial counts as late as nothing before it binds the sum's memory (an earlier such
        # sum its window): where it is then the small program's first phase, _fuse_small joins it (k-means:
        # the division by the counts)
        at = next(i for i, c in enumerate(covers) if type(c) is range and gi in c) + 1
        while at < len(items) and not (_overlap(covers[at], count.out) if type(covers[at]) is tuple
                                       else any(_binds(groups[g], bound, count.out) for g in covers[at])):
            at += 1
        items.insert(at, phase)
        covers.insert(at, count.out)
    return _fuse_small.join(client, items, limit)


def _counts(client: WebGPUClient, gi: int, dp, run: list, gone: frozenset, groups: list, records: list,
            bound: list, unheld, writes: dict, limit: int) -> tuple | None:
    """Where the one or two reduction steps after the distances of group ``gi`` with their argmin and map ``run``
    (``gone``: its stores nothing reads) sum a cast of a bool the run stores over the rows (_fuse_distances.counts), and
    nothing reads their partial sums after them: (the Counts, the bind triple of new memory for the workgroups'
    partial counts, the groups the distances' step then computes, the sum of those as (record, step)); else None."""
    j = gi + 3
    rec = lambda g: records[groups[g][0]] if g < len(groups) and groups[g][1] is None else None  # noqa: E731
    first, second = rec(j), rec(j + 1)
    if type(first) is not ReduceRecord:
        return None
    second = second if type(second) is ReduceRecord else None
    count = _fuse_distances.counts(dp, run, gone, first, second, limit)
    if count is None:
        return None
    stages = [j] if first.head[4] == 1 else [j, j + 1]  # (one part: the columns pass wrote the sum)
    if len(stages) == 2:  # (its partial sums: M x parts float32 from element head[6] of its window)
        buf, off, _ = first.o_binds
        a = (off >> 2) + first.head[6]
        if not _unread_after(groups[j + 1][0], buf.serial, a, a + first.head[3] * first.head[4], records, bound,
                             unheld, writes):
            return None
    k = dp.p.kshape[1]
    nbytes = 4 * k * count.parts
    try:
        memory = client.allocator.allocate_unfrozen(nbytes)
    except MemoryError:  # (no room for them: the reductions stay)
        return None
    client.fusion_memory.append(memory)  # (the graph holds it: its steps bind it)
    parts = (memory.handle, 0, nbytes)
    return count, parts, stages, _fuse_distances.counts_step(client, count, k, parts)


def _binds(group: tuple, bound: list, window: tuple) -> bool:
    """Whether a step of ``group`` binds memory of ``window`` (WBuf, byte offset, byte size)."""
    k, recs = group
    return any(_overlap(b, window) for j in range(k, k + (len(recs) if recs else 1)) for b in bound[j])


def _overlap(a: tuple, b: tuple) -> bool:
    """Whether two windows (WBuf, byte offset, byte size) share a byte."""
    return a[0].serial == b[0].serial and a[1] < b[1] + b[2] and b[1] < a[1] + a[2]


def _unread_after(k: int, serial: int, a: int, b: int, records: list, bound: list, unheld, writes: dict) -> bool:
    """Whether nothing reads words a to b (exclusive) of memory ``serial`` after step ``k``: later steps write
    them whole before any reads them (a map launch its outputs that reach every element of their span; any
    other step the words in ``writes``, through its one binding that reaches them), or none reads them and no
    tensor holds that memory after the capture (``unheld``). A map launch reads its inputs' words; any other
    step all it binds."""
    live = [(a, b)]
    for j in range(k + 1, len(records)):
        rec = records[j]
        if type(rec) is MapRecord:
            for i in range(len(rec.views)):
                v = _view(rec, i)
                if v[0] != serial:
                    continue
                lo, hi = view_words(v, rec.dims)
                if i >= rec.nout and _hits(live, lo, hi):
                    return False
            for i in range(rec.nout):
                v = _view(rec, i)
                if v[0] == serial:
                    live = _kill(live, *_written_words(v, rec.dims))
        else:
            touch = [(off >> 2, (off + size + 3) >> 2) for buf, off, size in bound[j] if buf.serial == serial]
            if not any(_hits(live, x, y) for x, y in touch):
                continue
            # what it reaches of them, all inside the words it writes whole without reading
            w = writes.get(j)
            if w is None or w[0] != serial or any(lx < y and x < ly and not (w[1] <= max(lx, x) and min(ly, y) <= w[2])
                                                  for x, y in touch for lx, ly in live):
                return False
            live = _kill(live, w[1], w[2])
        if not live:
            return True
    return serial in unheld


def _passes(groups: list, records: list, limit: int, dead: dict, bound: list | None, unheld, writes: dict
            ) -> dict[int, tuple]:
    """Per group that is a captured ``X @ w`` followed by a map run and ``X.T @ v`` of what the run stored
    (``_matvec.joins``; ``dead``: per run, the stores nothing reads): the three, the run's dead stores and
    whether the dot products are, as ``_matvec.fused_step``'s arguments. With ``bound`` (_dead_stores' analysis),
    the dot products and the run's stores of v are dead too where no step after the three reads them: the
    pass hands both over in registers, so ``X.T @ v``, which read v's memory, no longer does."""
    out: dict[int, tuple] = {}
    gi = 0
    while gi + 2 < len(groups):
        rows, recs, cols = records[groups[gi][0]], groups[gi + 1][1], records[groups[gi + 2][0]]
        gone = frozenset(dead.get(gi + 1, ()))
        if type(rows) is type(cols) is _matvec.PassRecord and groups[gi][1] is None and recs is not None \
                and groups[gi + 2][1] is None and _matvec.joins(rows, recs, cols, limit, gone):
            z_dead = False
            if bound is not None:
                k = groups[gi + 2][0]
                unread = lambda v: _unread_after(k, v[0], *view_words(v, (rows.n,)), records, bound, unheld, writes)
                if unread(cols.vec):
                    gone |= {(ri, j) for ri, rec in enumerate(recs) for j in range(rec.nout)
                             if rec.views[j] == cols.vec}
                z_dead = unread(rows.out)
            out[gi] = (rows, recs, cols, gone, z_dead)
            gi += 3
        else:
            gi += 1
    return out


_ALL = (0, 1 << 62)


def _hits(live: list, a: int, b: int) -> bool:
    return any(x < b and a < y for x, y in live)


def _read(live: list, a: int, b: int) -> None:
    """Words a to b (exclusive) read: live from here back to the store that writes them."""
    if not any(x <= a and b <= y for x, y in live):
        live.append((a, b))


def _kill(live: list, a: int, b: int) -> list:
    out = []
    for x, y in live:
        if y <= a or x >= b:
            out.append((x, y))
            continue
        if x < a:
            out.append((x, a))
        if b < y:
            out.append((b, y))
    return out


def _written_words(v: tuple, dims: tuple) -> tuple[int, int]:
    """The words a store through view ``v`` over ``dims`` writes whole: those wholly inside its span where it
    reaches every element of it, else none (an empty range)."""
    if not _dense(v[2], dims):
        return 0, 0
    lo, hi = element_span(v[1], v[2], dims)
    isz = v[3].itemsize
    return (lo * isz + 3) >> 2, (hi + 1) * isz >> 2


def _dense(strides: tuple, dims: tuple) -> bool:
    """Whether a view reaches every element between its lowest and highest."""
    expect = 1
    for s, d in sorted((abs(s), d) for s, d in zip(strides, dims) if d > 1 and s):
        if s != expect:
            return False
        expect = s * d
    return True


def _dead_stores(groups: list, bound: list, unheld, single: set | frozenset = frozenset(),
                 writes: dict | None = None) -> dict[int, set]:
    """Per merged run (its index in ``groups``), the stores (record index, output index) whose words nothing
    reads from memory again: a later launch writes them all before any reads them, or their block is one no
    tensor holds after the capture (``unheld``) and no later launch reads it. Found walking the graph
    backwards with, per buffer, the word ranges a later launch reads before they are written; a step not
    merged by this pass counts as reading all of every window it binds, which is all it can reach (but, for
    a step in ``writes``, step index -> (memory serial, first word, end word), the words it writes whole and
    does not read, bound once), a read of a register written earlier in its run reads no memory.
    ``single``: the groups of one launch whose dead stores are wanted too."""
    live: dict[int, list] = {}

    def get(serial: int) -> list:
        w = live.get(serial)
        if w is None:
            w = live[serial] = [] if serial in unheld else [_ALL]
        return w

    dead: dict[int, set] = {}
    for gi in range(len(groups) - 1, -1, -1):
        k, recs = groups[gi]
        if recs is None:
            serial, a, b = (writes or {}).get(k, (None, 0, 0))
            if sum(buf.serial == serial for buf, _, _ in bound[k]) != 1:  # (bound again: read too)
                serial = None
            for buf, off, size in bound[k]:
                if buf.serial == serial:
                    live[serial] = _kill(get(serial), a, b)
                else:
                    _read(get(buf.serial), off >> 2, (off + size + 3) >> 2)
            continue
        merged = len(recs) > 1 or gi in single
        in_reg: list[set] = []  # per record, the inputs it reads from a register of the run
        seen: set = set()
        for rec in recs:
            in_reg.append({i for i in range(rec.nout, len(rec.views)) if merged and rec.views[i] in seen})
            seen.update(rec.views[:rec.nout])
        mine: set = set()
        for ri in range(len(recs) - 1, -1, -1):
            rec = recs[ri]
            dims = rec.dims
            for j in range(rec.nout):
                v = rec.views[j]
                a, b = view_words(v, dims)
                w = get(v[0])
                if merged and not _hits(w, a, b):
                    mine.add((ri, j))
                live[v[0]] = _kill(w, *_written_words(v, dims))
            for i in range(rec.nout, len(rec.views)):
                if i not in in_reg[ri]:
                    v = rec.views[i]
                    _read(get(v[0]), *view_words(v, dims))
        if mine:
            dead[gi] = mine
    return dead


def _merged(client: WebGPUClient, run: list[MapRecord], dead: set = frozenset()) -> tuple:
    """One launch running ``run``'s bodies per element; ``dead``: the (record, output) stores it leaves out."""
    dims = run[0].dims
    ndim = len(dims)
    # one binding per view used (loaded, not in a register of the run yet, or stored)
    views = run_views(run, dead)
    info = [row[1:] for row in views]
    lay = Layout()
    shape_k = lay.alloc(ndim)
    words_k = [lay.alloc(1 + ndim) for _ in info]
    lib = WgslHelpers(client.has_f64)
    text, _, tail_words = bodies(run, dead, lay, lib, {row[0]: b for b, row in enumerate(views, start=1)})
    idx = coord_lines(ndim, shape_k) + element_lines(ndim, words_k)
    # a written binding is declared atomic when packed: reads of it then use atomicLoad
    decls = bindings([(w, written, written) for w, written, *_ in info])
    source = lay.block() + decls + lib.source() + map_entry("".join(idx) + "".join(text))
    n = math.prod(dims)
    grid = map_groups(n)
    words = [n, grid[0], 0, 0] + list(dims)
    for _, _, _, eoff, st in info:
        words.append(eoff)
        words += [s & _M32 for s in st]
    source = baked(source, words + tail_words, range(len(words), len(words) + len(tail_words)))
    pipe = client.pipeline(("fused", source), lambda: source, len(info), lay.nbytes, captured=True)
    words += tail_words
    binds = tuple(x for _, _, triple, _, _ in info for x in triple)
    return client.encode_recorded(pipe, pack_words(words), binds, grid)
