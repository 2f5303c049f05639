"""The map template: an invocation per output element (at most ``_shader.MAP_GROUPS`` workgroups, whose
invocations stride over the elements), over strided and broadcast operands.

Every kernel that computes each output element from the elements of its inputs at the same position
(element-wise functions, casts and copies, fill, where, clip, arange, linspace, eye, tril, triu) is an
instance of this template: the kernel supplies a body that combines the loaded values; the template
supplies the uniform layout, the bindings, the index arithmetic, and the launches.

Host side, per launch: dimensions that are contiguous in every operand are merged (most launches become
1-D), each operand is bound as the window of its buffer that the launch touches, and a launch whose
window would exceed the adapter's largest storage binding is split along its outer dimension into
launches that fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from ..._tensor import Tensor, contiguous_strides
from ... import _dtypes as dt
from ._wgsl_helpers import WgslHelpers
from ._shader import Layout, bindings, map_entry, map_groups, pack_words
from ._types import WgslType, scalar_words, wt
from ._views import bind_whole, collapse, element_span, overlap

if TYPE_CHECKING:
    from ._client import WebGPUClient

_M32 = 0xFFFFFFFF


class MapCodegen:
    """What a map body sees while its shader is generated."""

    def __init__(self, lib: WgslHelpers, ins: list, val_names: list, params: list[str], coords: bool, raw: list,
                 store: Callable[[int, str], str] | None = None):
        self.lib = lib
        self._ins = ins
        self._vals = val_names
        self._params = params
        self.coords = coords
        self._raw = raw  # per raw tensor: (binding number, WgslType, offset word, [shape words], [stride words])
        if store is not None:
            self.store = store

    def wt_in(self, k: int) -> WgslType | None:
        """The WgslType of input k (None where the input is None)."""
        return self._ins[k]

    def val(self, k: int) -> str:
        """The value of input k at this element (a loaded tensor element or a scalar), in its own WgslType."""
        return self._vals[k]

    def param(self, k: int) -> str:
        return self._params[k]

    @staticmethod
    def coord(d: int) -> str:
        """The element's index along output dimension d (u32); only with coords=True."""
        return f"a{d}"

    @staticmethod
    def store(j: int, value: str) -> str:
        return f"  st{j + 1}(e{j + 1}, {value});\n"

    # raw tensors: bound whole, addressed by the body
    def raw_offset(self, j: int) -> str:
        """Raw tensor j's element offset (i32) in its window."""
        return f"bitcast<i32>({self._raw[j][2]})"

    def raw_size(self, j: int, d: int) -> str:
        """Raw tensor j's length along dimension d (i32)."""
        return f"bitcast<i32>({self._raw[j][3][d]})"

    def raw_stride(self, j: int, d: int) -> str:
        return f"bitcast<i32>({self._raw[j][4][d]})"

    def raw_load(self, j: int, elem: str) -> str:
        return f"ld{self._raw[j][0]}(u32({elem}))"

    def raw_store(self, j: int, elem: str, value: str) -> str:
        return f"  st{self._raw[j][0]}(u32({elem}), {value});\n"


def run_map(client: WebGPUClient, name: str, key, outs: Sequence[Tensor], ins: Sequence,
            body: Callable[[MapCodegen], str], params: Sequence[tuple[WgslType, object]] = (), coords: bool = False,
            raw: Sequence[tuple[Tensor, bool]] = (), shape: tuple[int, ...] | None = None,
            fusable: bool = True) -> None:
    """Launch map kernel ``name`` (``key``: whatever besides the operand dtypes changes its shader).

    ``ins``: Tensors (already broadcast to the output shape), NumPy scalars or None; ``params``: extra
    scalar parameters (WgslType, value), read in the body with ``MapCodegen.param``; ``coords``: the body uses the
    element's coordinates, so the dimensions are kept as they are. ``raw``: (tensor, written) bound
    whole and addressed by the body (gathers and scatters; needs ``coords``); ``shape``: the shape
    iterated over when it is not the first output's. ``fusable``: a capture may merge the launch with
    its neighbours (not for bodies that store conditionally).
    """
    if shape is None:
        shape = outs[0]._shape
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    if not raw and not coords and client._steps is None and _eager(client, name, key, outs, ins, shape, params):
        return
    ins = _unalias(client, outs, ins)
    tensors = list(outs)
    desc = []
    for x in ins:
        if type(x) is Tensor:
            tensors.append(x)
            desc.append(("t", x._dtype))
        elif x is None:
            desc.append(None)
        else:
            desc.append(("s", dt.from_numpy(x.dtype)))
    if coords:
        dims = shape or (1,)
        strides = [t._strides or (0,) for t in tensors]
    else:
        dims, strides = collapse(shape, [t._strides for t in tensors])
    ndim = len(dims)
    # (the common launch, one output and no params or raw tensors, builds no generator: this runs per launch)
    raw_desc = tuple((r._dtype, len(r._shape), w) for r, w in raw) if raw else ()
    out_dtypes = (outs[0]._dtype,) if len(outs) == 1 else tuple(t._dtype for t in outs)
    pkey = (name, key, ndim, coords, out_dtypes, tuple(desc), tuple(w for w, _ in params) if params else (),
            raw_desc)
    pipe = client.cached_pipeline(pkey)
    if pipe is None:
        pipe = _build(client, pkey, len(outs), body, ndim, coords, [w for w, _ in params],
                      [t._dtype for t in outs], desc, raw_desc)
    tail = []
    for x in ins:
        if x is not None and type(x) is not Tensor:
            tail += scalar_words(wt(dt.from_numpy(x.dtype)), x)
    for w, v in params:
        tail += scalar_words(w, v)
    raw_binds, raw_words = _raw_windows(client, raw) if raw else ((), [])
    whole = _whole(client, dims, tensors, strides)
    chunks = (whole,) if whole is not None else _chunks(client, dims, tensors, strides)
    record = None
    if client._steps is not None and whole is not None and not raw and not coords and fusable:  # capturing
        # captured: what the fusion of element-wise chains (_fuse) needs to merge this launch with others
        # (views, not tensors: holding them would keep the capture arena from reusing their memory)
        views = [(t._buf.handle.serial, t._offset, tuple(st), t._dtype) for t, st in zip(tensors, strides)]
        record = MapRecord(pkey, body, len(outs), desc, [w for w, _ in params], views, strides, dims,
                           whole[2], whole[3], tail)
    for sub_dims, origin, offs, binds in chunks:
        m = 1
        for s in sub_dims:
            m *= s
        grid = map_groups(m)
        words = [m, grid[0], 0, 0]
        words += sub_dims
        for off, st in zip(offs, strides):
            words.append(off)
            words += [s & _M32 for s in st]
        if coords:
            words += origin
        words += raw_words
        words += tail
        client.dispatch(pipe, pack_words(words), binds + raw_binds, grid, record)


class _Plan(NamedTuple):
    """What an eager map launch of one signature (kernel, dtypes, shape, strides) computes once: its
    pipeline, the first uniform words, the workgroups, and per tensor its itemsize, the span of elements
    it reaches from its offset and its stride words; and, for the common launch whose tensors all start at
    element 0, each tensor's (byte offset, byte size) window and the uniform block up to the scalars (None
    where a window exceeds one binding)."""
    pipe: Any
    head: list
    grid: tuple
    spans: list  # per tensor: (itemsize, lowest and highest element reached, relative to its offset)
    stride_words: list
    windows0: tuple | None  # per tensor at offset 0: (byte offset, byte size); None where one does not fit
    # the uniform bytes before the scalars at offset 0, where every scalar's bytes are its words (no 8- or
    # 16-bit type, which a word widens) and the launch has no parameters
    prefix0: bytes | None


def _eager(client: WebGPUClient, name: str, key, outs, ins, shape, params) -> bool:
    """The launch of a signature seen before, outside a capture, from its plan (the per-launch steps of
    run_map's general path, precomputed); False where the general path must run: a new signature, an
    input overlapping an output through another view, or a window beyond one binding."""
    sig = [name, key, shape]
    tensors = list(outs)
    zero = True  # every tensor at element 0 of its buffer: the plan's precomputed windows
    for t in outs:
        sig.append(t._dtype)
        sig.append(t._strides)
        if t._offset:
            zero = False
    scalars = False
    for x in ins:
        if type(x) is Tensor:
            for o in outs:
                if x._buf is o._buf and (x._offset != o._offset or x._strides != o._strides):
                    return False  # (rare: _unalias decides whether a copy is needed)
            sig.append(x._dtype)
            sig.append(x._strides)
            tensors.append(x)
            if x._offset:
                zero = False
        else:
            sig.append(None if x is None else x.dtype)
            scalars = scalars or x is not None
    for w, _ in params:
        sig.append(w)
    plans = client.map_plans
    plan = plans.get(tuple(sig))
    if plan is None:
        plan = _make_plan(client, name, key, outs, ins, shape, params, tensors)
        if plan is None:
            return False
        if len(plans) >= 4096:
            plans.clear()
        plans[tuple(sig)] = plan
    if zero and plan.windows0 is not None:
        binds: list = []
        for t, (b0, size) in zip(tensors, plan.windows0):
            binds += (t._buf.handle, b0, size)
        uniform = plan.prefix0
        if uniform is not None:
            if scalars:  # NumPy scalars of the signature's dtypes: their bytes are their uniform words
                for x in ins:
                    if x is not None and type(x) is not Tensor:
                        uniform += x.tobytes()
            client.dispatch(plan.pipe, uniform, tuple(binds), plan.grid)
            return True
        words = _words0(plan, tensors)
    else:
        align = client.storage_align
        limit = client.max_binding
        words = plan.head[:]
        binds = []
        for t, (isz, lo, hi), st in zip(tensors, plan.spans, plan.stride_words):
            off = t._offset
            b0 = (off + lo) * isz
            b0 -= b0 % align
            size = ((off + hi + 1) * isz - b0 + 3) & ~3
            if size > limit:
                return False
            binds += (t._buf.handle, b0, size if size >= 16 else 16)
            words.append(off - b0 // isz)
            words += st
    for x in ins:
        if x is not None and type(x) is not Tensor:
            words += scalar_words(wt(dt.from_numpy(x.dtype)), x)
    for w, v in params:
        words += scalar_words(w, v)
    client.dispatch(plan.pipe, pack_words(words), tuple(binds), plan.grid)
    return True


def _words0(plan: _Plan, tensors) -> list:
    """The uniform words, up to the scalars, of a launch whose tensors all start at element 0."""
    words = plan.head[:]
    for (b0, _), (isz, _, _), st in zip(plan.windows0, plan.spans, plan.stride_words):
        words.append(-(b0 // isz))
        words += st
    return words


def _make_plan(client: WebGPUClient, name: str, key, outs, ins, shape, params, tensors) -> _Plan | None:
    """The plan of an eager launch whose pipeline exists (the general path builds it first: None until then)."""
    desc = tuple(("t", x._dtype) if type(x) is Tensor else None if x is None else ("s", dt.from_numpy(x.dtype))
                 for x in ins)
    dims, strides = collapse(shape, [t._strides for t in tensors])
    out_dtypes = tuple(t._dtype for t in outs)
    pkey = (name, key, len(dims), False, out_dtypes, desc, tuple(w for w, _ in params) if params else (), ())
    pipe = client.cached_pipeline(pkey)
    if pipe is None:
        return None
    m = 1
    for d in dims:
        m *= d
    grid = map_groups(m)
    spans = []
    windows: list | None = []
    align, limit = client.storage_align, client.max_binding
    for t, st in zip(tensors, strides):
        lo, hi = element_span(0, st, dims)
        isz = t._dtype.itemsize
        spans.append((isz, lo, hi))
        b0 = lo * isz
        b0 -= b0 % align
        size = ((hi + 1) * isz - b0 + 3) & ~3
        if windows is not None:
            windows = None if size > limit else windows + [(b0, size if size >= 16 else 16)]
    plan = _Plan(pipe, [m, grid[0], 0, 0, *dims], grid, spans, [[s & _M32 for s in st] for st in strides],
                 None if windows is None else tuple(windows), None)
    if plan.windows0 is not None and not params and all(x is None or type(x) is Tensor or x.dtype.itemsize >= 4
                                                        for x in ins):
        plan = plan._replace(prefix0=pack_words([w & _M32 for w in _words0(plan, tensors)]))
    return plan


def _raw_windows(client: WebGPUClient, raw) -> tuple[tuple, list[int]]:
    """The binds and uniform words (offset, shape, strides) of tensors bound whole."""
    binds: tuple = ()
    words: list[int] = []
    for t, _ in raw:
        b, first = bind_whole(client, t)
        binds += b
        words.append(first)
        words += t._shape
        words += [s & _M32 for s in t._strides]
    return binds, words


def coord_lines(ndim: int, shape_k: int) -> list[str]:
    """WGSL that splits the flat invocation index ``i`` into coordinates c0..c{ndim-1} of the iteration
    space whose shape is in uniform words shape_k..."""
    W = Layout.word
    if ndim == 1:
        return ["  let c0 = i;\n"]
    lines = ["  var q = i;\n"]
    for d in range(ndim - 1, 0, -1):
        lines.append(f"  let c{d} = q % {W(shape_k + d)};\n  q = q / {W(shape_k + d)};\n")
    lines.append("  let c0 = q;\n")
    return lines


def element_lines(ndim: int, tensor_words) -> list[str]:
    """WGSL giving e1, e2, ...: each tensor's element index at the coordinates, from the offset and
    strides stored at its uniform word k (offset at k, strides at k+1...)."""
    W = Layout.word
    lines = []
    for b, k in enumerate(tensor_words, start=1):
        terms = [f"bitcast<i32>({W(k)})"] + [f"i32(c{d}) * bitcast<i32>({W(k + 1 + d)})" for d in range(ndim)]
        lines.append(f"  let e{b} = u32({' + '.join(terms)});\n")
    return lines


class MapRecord(NamedTuple):
    """A captured single-dispatch map launch, as the fusion pass reads it."""
    key: tuple
    body: Callable
    nout: int
    desc: list          # per input: ("t", dtype), ("s", dtype) or None
    param_wts: list
    views: list         # outputs, then the tensor inputs: (memory serial, element offset, strides, dtype)
    strides: list       # each tensor's strides over ``dims``
    dims: tuple
    eoffs: list         # each tensor's element offset in its window
    binds: tuple        # (WBuf, byte offset, byte size) per tensor, flat
    tail: list          # the uniform words of the scalar inputs and parameters
    #: a one-element launch the fusion pass spread over a larger run: every invocation computes it (all its
    #: strides 0), only the first stores it
    bcast: bool = False


def _whole(client: WebGPUClient, dims, tensors: list[Tensor], strides):
    """The one launch covering ``dims`` when every tensor's window fits a binding (the common case, kept
    short: it runs on every launch), else None."""
    align = client.storage_align
    limit = client.max_binding
    binds: list = []
    eoffs = []
    for t, st in zip(tensors, strides):
        isz = t._dtype.itemsize
        lo = hi = off = t._offset
        for s, n in zip(st, dims):
            if s > 0:
                hi += s * (n - 1)
            elif s:
                lo += s * (n - 1)
        b0 = lo * isz
        b0 -= b0 % align
        size = ((hi + 1) * isz - b0 + 3) & ~3
        if size > limit:
            return None
        binds += (t._buf.handle, b0, size if size >= 16 else 16)
        eoffs.append(off - b0 // isz)
    return dims, [0] * len(dims), eoffs, tuple(binds)


def _chunks(client: WebGPUClient, dims, tensors: list[Tensor], strides):
    """(dims, origin, element offsets in the windows, flat binds) of launches covering ``dims``, each
    binding at most the adapter's largest storage binding of every tensor."""
    align = client.storage_align
    limit = client.max_binding
    todo = [(tuple(dims), [0] * len(dims), [t._offset for t in tensors])]
    while todo:
        sub, origin, offs = todo.pop()
        binds = []
        eoffs = []
        fits = True
        for t, st, off in zip(tensors, strides, offs):
            isz = t._dtype.itemsize
            lo, hi = element_span(off, st, sub)
            b0 = lo * isz
            b0 -= b0 % align
            size = max(16, ((hi + 1) * isz - b0 + 3) & ~3)
            if size > limit:
                fits = False
                break
            binds += (t._buf.handle, b0, size)
            eoffs.append(off - b0 // isz)
        if fits:
            yield sub, origin, eoffs, tuple(binds)
            continue
        d = next(i for i, s in enumerate(sub) if s > 1)  # split the outermost dimension longer than 1
        h = sub[d] // 2
        for start, length in ((h, sub[d] - h), (0, h)):
            s2 = sub[:d] + (length,) + sub[d + 1:]
            o2 = list(origin)
            o2[d] += start
            todo.append((s2, o2, [off + st[d] * start for off, st in zip(offs, strides)]))


def _unalias(client: WebGPUClient, outs, ins) -> list:
    """Inputs that share memory with an output through a different view, copied first: each invocation
    reads its inputs and writes its output element, so only identical views may alias."""
    res = list(ins)
    for k, x in enumerate(res):
        if type(x) is not Tensor:
            continue
        for o in outs:
            if x._buf is o._buf and (x._offset, x._strides) != (o._offset, o._strides) and overlap(x, o):
                c = Tensor(client.alloc(x.size * x._dtype.itemsize), x._dtype, x._shape,
                           contiguous_strides(x._shape), 0, client.device)
                client.launch("copy", (x,), (c,), {})
                res[k] = c
                break
    return res


def _build(client: WebGPUClient, pkey, nout: int, body, ndim: int, coords: bool, param_wts, out_dtypes, desc,
           raw_desc):
    lay = Layout()
    lib = WgslHelpers(client.has_f64)
    shape_k = lay.alloc(ndim)
    tensor_wts = [wt(d) for d in out_dtypes] + [wt(x[1]) for x in desc if x is not None and x[0] == "t"]
    tensor_words = [lay.alloc(1 + ndim) for _ in tensor_wts]
    origin_k = lay.alloc(ndim) if coords else None
    raw = []
    for j, (d, rnd, _) in enumerate(raw_desc):
        k = lay.alloc(1 + 2 * rnd)
        raw.append((len(tensor_wts) + 1 + j, wt(d), Layout.word(k), lay.words(k + 1, rnd), lay.words(k + 1 + rnd, rnd)))
    vals: list[str | None] = []
    ins_wt: list[WgslType | None] = []
    scalar_exprs = []
    for x in desc:
        if x is not None and x[0] == "s":
            scalar_exprs.append(lay.scalar(wt(x[1])))
    param_exprs = [lay.scalar(w) for w in param_wts]
    lines = []
    si = 0
    bi = nout
    for k, x in enumerate(desc):
        if x is None:
            vals.append(None)
            ins_wt.append(None)
            continue
        ins_wt.append(wt(x[1]))
        if x[0] == "t":
            bi += 1
            lines.append(f"  let v{k} = ld{bi}(e{bi});\n")
        else:
            lines.append(f"  let v{k} = {scalar_exprs[si]};\n")
            si += 1
        vals.append(f"v{k}")
    g = MapCodegen(lib, ins_wt, vals, param_exprs, coords, raw)
    text = body(g)
    W = Layout.word
    idx = coord_lines(ndim, shape_k)
    if coords:
        idx += [f"  let a{d} = c{d} + {W(origin_k + d)};\n" for d in range(ndim)]
    idx += element_lines(ndim, tensor_words)
    binds = bindings([(w, j < nout, False) for j, w in enumerate(tensor_wts)]
                     + [(wt(d), written, written) for d, _, written in raw_desc])

    def source() -> str:
        return lay.block() + binds + lib.source() + map_entry("".join(idx) + "".join(lines) + text)

    return client.pipeline(pkey, source, len(tensor_wts) + len(raw_desc), lay.nbytes)
