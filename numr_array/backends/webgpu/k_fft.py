"""The fft extension: fft, ifft, rfft, irfft, hfft, ihfft, their n-D forms, the shifts and the frequencies.

Every transform is a complex transform of length n along one axis, computed on the device:

- a power of two by Stockham autosort passes (natural order in, natural order out, no bit reversal).
  A pass is one radix-R step (R a power of two, at most what fits in workgroup memory): a workgroup
  loads G columns of R points each (consecutive columns, so the loads coalesce), multiplies them by the
  pass's twiddles, runs the R-point transforms in workgroup memory as radix-4 (and one radix-2) Stockham
  stages, and writes them to their sorted places. A length that fits in workgroup memory is one pass over
  rows of the batch; a longer one takes two or more global passes (2^24 points: three of radix 256).
  All batch rows of a pass are one dispatch;
- any other length by Bluestein's chirp-z algorithm: the chirped input is convolved with the chirp
  through a forward and an inverse power-of-two transform of length M >= 2n-1, the chirp's own transform
  coming from a table.

Twiddles are tables computed on the host in float64 (NumPy) and uploaded once per length and dtype:
W_R^m for each radix R (the stages inside a pass, one correctly rounded lookup), and W_N^m for the
passes' twiddles as the product of two lookups (m's low bits and high bits), so that a table of
2^24 points takes 2 * 4096 entries. Bluestein's chirp is computed from m^2 mod 2n (exact in integers).

The real transforms go through the complex one: rfft of a power of two n >= 4 transforms the n/2
complex points x[2j] + i x[2j+1] and untangles the even and odd halves' spectra into the n//2+1 outputs
(one launch), and irfft to such an n tangles its half spectrum into n/2 points, inverts them and
writes their real and imaginary parts as the even and odd outputs. Where the rows are contiguous (real
rows in the transform's real dtype), rfft's first pass reads the real rows as pairs itself (zeros past
their end), irfft's first pass tangles the half spectrum as it reads it, and its last pass writes the real
rows: fft_conv of 2^20 points is 9 launches (two passes and the untangling per rfft; the product; two
passes). Other rffts keep the first n//2+1
outputs of the complex transform; irfft and hfft
write the Hermitian extension of their n//2+1 input points first and keep the real part. The n-D
transforms are 1-D ones over the axes, last axis first (as NumPy; the Hermitian axis last for irfftn).
A transform along the last axis of a contiguous complex input of the output's dtype reads it in place,
and writes the output in place when that is contiguous too; otherwise one launch puts the rows contiguous
(casting, trimming, zero-padding to n, the Hermitian extension, Bluestein's chirp: each point reads the
input point it comes from; in pieces where the input exceeds one storage binding) and another writes the
result (scaling, trimming, casting).

A row of n points (or of M, for Bluestein) must fit in one storage binding: a longer transform raises
MemoryError (the batch is split into launches that fit).
"""

from __future__ import annotations

import collections

import math
import weakref

import numpy as np

from ... import _dtypes as dt
from ..._tensor import Tensor
from ...runtime import Buffer
from ._client import _USAGE, WBuf, WebGPUClient
from ._map_template import MapCodegen, run_map
from ._shader import Layout, bindings, groups, pack_words
from ._types import F32, F64, WgslType, WGSL_TYPES, cast, scalar_words, wt
from ._views import window
from .k_reduce import _narrow, _temp

I32 = WGSL_TYPES[dt.int32]
_MAX_LOCAL = 4096  # points per workgroup at most (registers: 16 per invocation at 256 invocations)
#: invocations of a pass's workgroup at most (each holds workgroup points / this many); the device run of
#: benchmarks/webgpu_programs.py times fft_conv at 256 and 1024
PASS_THREADS = 256

# per client: key -> uploaded constant tables (twiddles, chirps), the TABLES_KEPT most recently used
_tables: weakref.WeakKeyDictionary[WebGPUClient, collections.OrderedDict] = weakref.WeakKeyDictionary()
TABLES_KEPT = 64


# --- plans and tables -------------------------------------------------------------------------------

def _local(client: WebGPUClient, cw: WgslType) -> int:
    """Points of ``cw`` that one workgroup transforms in workgroup memory (a power of two)."""
    limit = int(client.wdevice.limits["max-compute-workgroup-storage-size"])
    return min(_MAX_LOCAL, 1 << ((limit // cw.dtype.itemsize).bit_length() - 1))


def _radices(client: WebGPUClient, cw: WgslType, n: int) -> list[int]:
    """The radices of the passes of a power-of-two transform of n points (their product is n)."""
    local = _local(client, cw)
    if n <= local:
        return [n]
    # several passes: at least 32 bytes (a memory sector) of consecutive columns per workgroup, for
    # coalesced accesses; the largest radix that leaves: 2^20 complex64 points in two passes of 1024
    rmax = (local // max(1, 32 // cw.dtype.itemsize)).bit_length() - 1
    k = n.bit_length() - 1
    p = -(-k // rmax)
    return [1 << (k // p + (1 if t < k % p else 0)) for t in range(p)]


def _split(n: int) -> int:
    """The low-part size S of the two-level table of W_n^m (m = lo + S * hi)."""
    k = n.bit_length() - 1
    return max(min(n, _MAX_LOCAL), 1 << ((k + 1) // 2))


def _unit(num: np.ndarray, den: int) -> np.ndarray:
    """exp(-2 pi i num / den) in complex128."""
    a = -2.0 * np.pi * (num.astype(np.float64) / den)
    return np.cos(a) + 1j * np.sin(a)


def _upload(client: WebGPUClient, key: tuple, make) -> Tensor:
    """The constant table ``make()`` (a 1-D NumPy array) on the device, uploaded on first use. Tables are
    buffers of their own, outside the allocator: captures and replays keep binding them (a bind group
    holds its buffers, so a table dropped from this cache lives on in the graphs that use it). The
    cache keeps the ``TABLES_KEPT`` most recently used tables: many odd lengths do not pile up."""
    cache = _tables.setdefault(client, collections.OrderedDict())
    t = cache.get(key)
    if t is not None:
        cache.move_to_end(key)
    else:
        host = make()
        size = max(16, host.nbytes)
        buf = Buffer(WBuf(client.wdevice.create_buffer(size=size, usage=_USAGE), size), host.nbytes, None)
        client.copy_to_device(host, buf, 0)
        dtype = dt.from_numpy(host.dtype)
        t = cache[key] = Tensor(buf, dtype, host.shape, (1,), 0, client.device)
        while len(cache) > TABLES_KEPT:
            cache.popitem(last=False)
    return t


def _twiddles(client: WebGPUClient, cw: WgslType, n: int, radices: list[int]) -> tuple[Tensor, dict[int, int]]:
    """The table of a power-of-two transform of n points: W_n^m for m < S, W_n^(S h) for h < n/S, then
    W_R^m (m < R) for each radix R; and each radix's offset in it."""
    s = _split(n)
    offs = {}
    pos = s + n // s
    for r in radices:
        if r not in offs:
            offs[r] = pos
            pos += r

    def make():
        parts = [_unit(np.arange(s), n), _unit(np.arange(n // s) * s, n)]
        parts += [_unit(np.arange(r), r) for r in offs]
        return np.concatenate(parts).astype(cw.dtype.np)

    return _upload(client, (cw.dtype, "twiddles", n), make), offs


def _chirp_tables(client: WebGPUClient, cw: WgslType, n: int, m: int, inv: bool) -> tuple[Tensor, Tensor]:
    """Bluestein's tables for n points through transforms of m: the chirp a[j] = exp(-+ pi i j^2 / n)
    (j < n) and the transform of its conjugate wrapped to m points, divided by m (the inverse transform
    of the convolution is left unscaled)."""
    def chirp():
        j = np.arange(n, dtype=np.int64)
        a = _unit((j * j) % (2 * n), 2 * n)
        return np.conj(a) if inv else a

    def spectrum():
        a = chirp()
        b = np.zeros(m, np.complex128)
        b[:n] = np.conj(a)
        b[m - n + 1:] = np.conj(a[1:])[::-1]
        return (np.fft.fft(b) / m).astype(cw.dtype.np)

    return (_upload(client, (cw.dtype, "chirp", n, inv), lambda: chirp().astype(cw.dtype.np)),
            _upload(client, (cw.dtype, "chirp-spectrum", n, m, inv), spectrum))


# --- the Stockham pass --------------------------------------------------------------------------------

def _cmul(ct: str, a: str, b: str) -> str:
    return f"{ct}({a}.x * {b}.x - {a}.y * {b}.y, {a}.x * {b}.y + {a}.y * {b}.x)"


def _stages(r: int) -> list[int]:
    k = r.bit_length() - 1
    return [4] * (k // 2) + [2] * (k % 2)


def _dft(ct: str, r: int, u: list[str], y: list[str]) -> str:
    """WGSL computing the r-point transform of u into new variables y (the sign from the inverse flag)."""
    if r == 2:
        return f"    let {y[0]} = {u[0]} + {u[1]};\n    let {y[1]} = {u[0]} - {u[1]};\n"
    a, b, c, d, e = (f"{y[0]}_{s}" for s in "abcde")
    return (f"    let {a} = {u[0]} + {u[2]};\n    let {b} = {u[0]} - {u[2]};\n"
            f"    let {c} = {u[1]} + {u[3]};\n    let {d} = {u[1]} - {u[3]};\n"
            f"    let {e} = select({ct}({d}.y, -{d}.x), {ct}(-{d}.y, {d}.x), inv);\n"  # d * -i, or d * i
            f"    let {y[0]} = {a} + {c};\n    let {y[1]} = {b} + {e};\n"
            f"    let {y[2]} = {a} - {c};\n    let {y[3]} = {b} - {e};\n")


def _pass_pipeline(client: WebGPUClient, cw: WgslType, r: int, g: int, nt: int, cfast_in: bool, cfast_out: bool,
                   twiddle: bool, real_in: bool = False, real_out: bool = False, tangle: bool = False):
    """The pipeline of one radix-r pass: workgroups of nt invocations, g columns of r points each.
    ``real_in``: the input rows are real, point e being (x[2e], x[2e+1]) with zeros from the row's length
    on (rfft's first pass); ``real_out``: the output rows are real, point e written as (y[2e], y[2e+1])
    (irfft's last pass); ``tangle``: the input rows are half spectra X (zeros from their length on),
    point e being irfft's (X[e] + conj X[N-e]) + i W_2N^-e (X[e] - conj X[N-e]), W from a fourth binding
    (irfft's first pass)."""
    key = ("fft_pass", cw.dtype, r, g, nt, cfast_in, cfast_out, twiddle, real_in, real_out, tangle)
    pipe = client.cached_pipeline(key)
    if pipe is not None:
        return pipe
    lay = Layout()
    names = ("total", "clog", "p", "in_off", "in_bs", "out_off", "out_bs", "mstep", "smask", "slog", "rtab", "inv",
             "in_len", "tw_off", "npts")
    w = {nm: Layout.word(lay.alloc(1)) for nm in names}
    scale = lay.scalar(cw.real)
    ct = cw.ct
    e_total = g * r
    q = e_total // nt
    row = not cfast_in  # one pass over whole rows: each row contiguous in workgroup memory

    def sidx(j: str, c: str) -> str:
        if row:
            return f"({c}) * {r}u + ({j})"
        # columns interleaved, swizzled (c xor j) so that neither consecutive columns nor consecutive
        # points of a column fall in one memory bank
        return f"({j}) * {g}u + (({c}) ^ (({j}) & {g - 1}u))"

    def split(e: str, cfast: bool) -> tuple[str, str]:
        """(column, point) of element e of the workgroup, columns or points consecutive."""
        return (f"{e} % {g}u", f"{e} / {g}u") if cfast else (f"{e} / {r}u", f"{e} % {r}u")

    src = [lay.block(), bindings([(cw.real if real_in else cw, False, False),
                                  (cw.real if real_out else cw, True, False),
                                  (cw, False, False)] + ([(cw, False, False)] if tangle else [])),
           f"var<workgroup> sh: array<{ct}, {e_total}>;\n",
           f"fn cm(a: {ct}, b: {ct}) -> {ct} {{ return {_cmul(ct, 'a', 'b')}; }}\n",
           f"fn cj(a: {ct}) -> {ct} {{ return select(a, {ct}(a.x, -a.y), {w['inv']} != 0u); }}\n",
           # W_N^m as the product of its low and high parts; W_R^m from the radix's table
           (f"fn twn(m: u32) -> {ct} {{ return cj(cm(ld3(m & {w['smask']}), "
            f"ld3({w['smask']} + 1u + (m >> {w['slog']})))); }}\n"),
           f"fn twr(m: u32) -> {ct} {{ return cj(ld3({w['rtab']} + m)); }}\n",
           (f"@compute @workgroup_size({nt})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n"
            "  let wg = wid.y * u.w[0].y + wid.x;\n  if (wg >= u.w[0].x) { return; }\n"
            f"  let col0 = wg * {g}u;\n  let cmask = (1u << {w['clog']}) - 1u;\n  let pm = {w['p']} - 1u;\n"
            f"  let inv = {w['inv']} != 0u;\n")]
    c, j = split("e", cfast_in)
    src.append(f"  for (var s = 0u; s < {q}u; s = s + 1u) {{\n    let e = li + s * {nt}u;\n"
               f"    let c = {c};\n    let j = {j};\n    let gc = col0 + c;\n    var v = {ct}();\n"
               f"    if (gc < {w['total']}) {{\n      let b = gc >> {w['clog']};\n      let i = gc & cmask;\n")
    if real_in:
        src.append(f"      let e2 = 2u * (i + (j << {w['clog']}));\n"
                   f"      let qi = {w['in_off']} + b * {w['in_bs']} + e2;\n"
                   f"      if (e2 < {w['in_len']}) {{ v.x = ld1(qi); }}\n"
                   f"      if (e2 + 1u < {w['in_len']}) {{ v.y = ld1(qi + 1u); }}\n")
    elif tangle:  # X[0] and X[N] count as real (their imaginary parts drop out of a real result, as NumPy's)
        rt = cw.real.ct
        src.append(f"      let e = i + (j << {w['clog']});\n      let qi = {w['in_off']} + b * {w['in_bs']};\n"
                   f"      var a = {ct}();\n      var bc = {ct}();\n"
                   f"      if (e < {w['in_len']}) {{ a = ld1(qi + e); }}\n"
                   f"      if ({w['npts']} - e < {w['in_len']}) {{ bc = ld1(qi + {w['npts']} - e); }}\n"
                   f"      if (e == 0u) {{ a.y = {rt}(0); bc.y = {rt}(0); }}\n"
                   f"      let bb = {ct}(bc.x, -bc.y);\n      let t = ld4({w['tw_off']} + e);\n"
                   f"      let dd = cm({ct}(t.x, -t.y), a - bb);\n      v = (a + bb) + {ct}(-dd.y, dd.x);\n")
    else:
        src.append(f"      v = ld1({w['in_off']} + b * {w['in_bs']} + i + (j << {w['clog']}));\n")
    if twiddle:  # the pass's twiddle W_(pR)^(jk) = W_N^(jk N/(pR))
        src.append(f"      v = cm(v, twn(j * (i & pm) * {w['mstep']}));\n")
    src.append(f"    }}\n    sh[{sidx('j', 'c')}] = v;\n  }}\n  workgroupBarrier();\n")
    h = 1
    for rs in _stages(r):  # the r-point transforms: Stockham stages of radix rs in workgroup memory
        per = r // rs
        body = ["  {\n"]
        for s in range(q // rs):
            bc, bi = (f"b{s} / {per}u", f"b{s} % {per}u") if row else (f"b{s} % {g}u", f"b{s} / {g}u")
            body.append(f"    let b{s} = li + {s * nt}u;\n    let c{s} = {bc};\n    let i{s} = {bi};\n"
                        f"    let k{s} = i{s} & {h - 1}u;\n")
            u = []
            for t in range(rs):
                x = f"sh[{sidx(f'i{s} + {t * per}u', f'c{s}')}]"
                if t and h > 1:
                    x = f"cm({x}, twr({t} * k{s} * {r // (rs * h)}u))"
                body.append(f"    let u{s}_{t} = {x};\n")
                u.append(f"u{s}_{t}")
            body.append(_dft(ct, rs, u, [f"y{s}_{t}" for t in range(rs)]))
        body.append("    workgroupBarrier();\n")
        for s in range(q // rs):
            for t in range(rs):
                body.append(f"    sh[{sidx(f'(i{s} - k{s}) * {rs}u + k{s} + {t * h}u', f'c{s}')}] = y{s}_{t};\n")
        body.append("    workgroupBarrier();\n  }\n")
        src += body
        h *= rs
    c, j = split("e", cfast_out)
    src.append(f"  for (var s = 0u; s < {q}u; s = s + 1u) {{\n    let e = li + s * {nt}u;\n"
               f"    let c = {c};\n    let j = {j};\n    let gc = col0 + c;\n"
               f"    if (gc < {w['total']}) {{\n      let b = gc >> {w['clog']};\n      let i = gc & cmask;\n"
               "      let k = i & pm;\n"
               f"      let qo = {w['out_off']} + b * {w['out_bs']};\n"
               f"      let eo = (i - k) * {r}u + k + j * {w['p']};\n      let z = sh[{sidx('j', 'c')}] * {scale};\n")
    if real_out:
        src.append("      st2(qo + 2u * eo, z.x);\n      st2(qo + 2u * eo + 1u, z.y);\n")
    else:
        src.append("      st2(qo + eo, z);\n")
    src.append("    }\n  }\n}\n")
    text = "".join(src)
    return client.pipeline(key, lambda: text, 4 if tangle else 3, lay.nbytes)


def _fft_rows(client: WebGPUClient, cw: WgslType, src: Tensor, dst: Tensor, n: int, inv: bool, scale: float,
              in_len: int | None = None, real_out: bool = False, tangle: Tensor | None = None) -> None:
    """dst = scale * the transform (inverse: exponent sign +) of each row of src, both (B, n) views with
    contiguous rows (n a power of two > 1). dst may be src itself; passes alternate with scratch rows.
    ``in_len``: src is real, (B, >= in_len) rows whose point e is (src[2e], src[2e+1]), zero from element
    in_len on; ``real_out``: dst is real, (B, 2n) rows taking point e as (dst[2e], dst[2e+1]); ``tangle``
    (with ``in_len``): src is irfft's (B, in_len) half spectra, tangled by the first pass with these
    W_2n^k (k <= n)."""
    radices = _radices(client, cw, n)
    table, roffs = _twiddles(client, cw, n, radices)
    targets = [dst]
    scratch: list[Tensor] = []
    for k in range(len(radices) - 2, -1, -1):  # intermediate results, last first: never a pass's own input
        banned = {id(targets[0]._buf)} | ({id(src._buf)} if k == 0 else set())
        t = next((x for x in scratch + ([] if real_out else [dst]) if id(x._buf) not in banned), None)
        if t is None:
            t = _temp(client, (src._shape[0], n), cw.dtype)
            scratch.append(t)
        targets.insert(0, t)
    cur, p = src, 1
    last = len(radices) - 1
    for k, (r, out) in enumerate(zip(radices, targets)):
        _pass(client, cw, cur, out, table, n, r, p, inv, scale if k == last else 1.0, _split(n), roffs[r],
              in_len if k == 0 else None, real_out and k == last, tangle if k == 0 else None)
        cur, p = out, p * r


def _pass(client: WebGPUClient, cw: WgslType, src: Tensor, dst: Tensor, table: Tensor, n: int, r: int, p: int,
          inv: bool, scale: float, s: int, rtab: int, in_len: int | None, real_out: bool,
          tangle: Tensor | None) -> None:
    cols = n // r
    local = _local(client, cw)
    e_total = max(r, min(local, 1024)) if cols == 1 else local
    g = e_total // r
    nt = min(PASS_THREADS, e_total // 4)
    pipe = _pass_pipeline(client, cw, r, g, nt, cols > 1, p > 1, p > 1, in_len is not None and tangle is None,
                          real_out, tangle is not None)
    cap = client.max_binding - client.storage_align
    nrows = src._shape[0]
    per = nrows
    for t in (src, dst):  # rows per launch: every window within one binding
        bs = t._strides[0]
        if bs:
            tsz = t._dtype.itemsize
            per = min(per, max(1, (cap - t._shape[1] * tsz) // (bs * tsz) + 1))
    tb, ts, _ = window(client, table)
    extra, tw_off = (), 0
    if tangle is not None:
        wb, wsz, tw_off = window(client, tangle)
        extra = (tangle._buf.handle, wb, wsz)
    for b0 in range(0, nrows, per):
        nb = min(per, nrows - b0)
        sv, dv = _narrow(src, 0, b0, nb), _narrow(dst, 0, b0, nb)
        sb, ss, se = window(client, sv)
        db, ds, de = window(client, dv)
        if max(ss, ds) > client.max_binding:
            raise MemoryError(f"{client.device}: a row of {n} points of {cw.dtype.name} exceeds the adapter's "
                              f"largest storage binding ({client.max_binding} bytes)")
        total = nb * cols
        ngroups = -(-total // g)
        grid = groups(ngroups * nt, nt)
        words = [ngroups, grid[0], 0, 0, total, cols.bit_length() - 1, p, se, sv._strides[0], de,
                 dv._strides[0], cols // p, s - 1, s.bit_length() - 1, rtab, int(inv), in_len or 0, tw_off, n]
        words += scalar_words(cw.real, scale)
        client.dispatch(pipe, pack_words(words), (src._buf.handle, sb, ss, dst._buf.handle, db, ds,
                                                  table._buf.handle, tb, ts) + extra, grid)


# --- one transform along one axis -------------------------------------------------------------------------

def _rows(t: Tensor, axis: int, n: int) -> Tensor | None:
    """``t`` as (B, n) rows (the axis contiguous, the other axes one evenly spaced batch), or None."""
    if t._strides[axis] != 1:
        return None
    merged: list[list[int]] = []
    for d, (size, st) in enumerate(zip(t._shape, t._strides)):
        if d == axis or size == 1:
            continue
        if merged and merged[-1][1] == st * size:
            merged[-1] = [merged[-1][0] * size, st]
        else:
            merged.append([size, st])
    if len(merged) > 1 or (merged and merged[0][1] < 0):
        return None
    nb, bs = merged[0] if merged else (1, n)
    return Tensor(t._buf, t._dtype, (nb, n), (bs, 1), t._offset, t._dev)


def _work_view(work: Tensor, shape: tuple[int, ...], axis: int, length: int) -> Tensor:
    """Contiguous rows ``work`` (B, L) seen with ``shape``'s dimensions, ``length`` points along ``axis``."""
    strides = [0] * len(shape)
    step = work._strides[0]
    for d in range(len(shape) - 1, -1, -1):
        if d != axis:
            strides[d] = step
            step *= shape[d]
    strides[axis] = 1
    shp = shape[:axis] + (length,) + shape[axis + 1:]
    return Tensor(work._buf, work._dtype, shp, tuple(strides), work._offset, work._dev)


def _along(t: Tensor, shape: tuple[int, ...], axis: int) -> Tensor:
    """1-D table ``t`` broadcast to ``shape`` along ``axis``."""
    strides = tuple(1 if d == axis else 0 for d in range(len(shape)))
    return Tensor(t._buf, t._dtype, shape, strides, t._offset, t._dev)


def _fill0(client: WebGPUClient, t: Tensor) -> None:
    client.launch("fill", (), (t,), {"value": 0})


def _load(client: WebGPUClient, cw: WgslType, x: Tensor, dst: Tensor, axis: int, conj: bool,
          chirp: Tensor | None) -> None:
    """dst = x cast to ``cw`` (conjugated where ``conj``), times the chirp along ``axis`` where given."""
    ct = cw.ct

    def body(g: MapCodegen) -> str:
        lines = f"  var fz = {cast(g.val(0), g.wt_in(0), cw)};\n"
        if conj:
            lines += f"  fz = {ct}(fz.x, -fz.y);\n"
        if chirp is not None:
            lines += f"  let fw = {g.val(1)};\n  fz = {_cmul(ct, 'fz', 'fw')};\n"
        return lines + g.store(0, "fz")

    ins = [x] if chirp is None else [x, _along(chirp, dst._shape, axis)]
    run_map(client, "fft_load", (conj, chirp is not None), [dst], ins, body)


def _prepare_pieces(client: WebGPUClient, cw: WgslType, x: Tensor, full: Tensor, axis: int, n: int, half: bool,
                    conj: bool, chirp: Tensor | None) -> None:
    """_prepare in pieces (copies, zeros, the reversed half, the chirp), for an input larger than one
    storage binding: map launches split into launches that fit."""
    total = full._shape[axis]
    m = x._shape[axis]
    if half:
        h = n // 2 + 1
        mm = min(m, h)
        _load(client, cw, _narrow(x, axis, 0, mm), _narrow(full, axis, 0, mm), axis, conj, None)
        if mm < h:
            _fill0(client, _narrow(full, axis, mm, h - mm))
        if n > h:  # point j of [h, n) is conj(point n - j): a reversed view of [1, n - h]
            strides = tuple(-1 if d == axis else s for d, s in enumerate(full._strides))
            shape = x._shape[:axis] + (n - h,) + x._shape[axis + 1:]
            rev = Tensor(full._buf, full._dtype, shape, strides, full._offset + n - h, full._dev)
            _load(client, cw, rev, _narrow(full, axis, h, n - h), axis, True, None)
        if chirp is not None:
            pts = _narrow(full, axis, 0, n)
            _load(client, cw, pts, pts, axis, False, chirp)
        mm = n
    else:
        mm = min(m, n)
        _load(client, cw, _narrow(x, axis, 0, mm), _narrow(full, axis, 0, mm), axis, conj, chirp)
    if mm < total:
        _fill0(client, _narrow(full, axis, mm, total - mm))


def _prepare(client: WebGPUClient, cw: WgslType, x: Tensor, work: Tensor, axis: int, n: int, half: bool, conj: bool,
             chirp: Tensor | None) -> None:
    """Rows ``work`` (B, L) = the n points transformed along ``axis`` of x (trimmed or zero-padded; the
    Hermitian extension of the first n//2+1 where ``half``), times the chirp where given, then zeros: one
    launch, each output point reading the input point it comes from (or none)."""
    total = work._shape[1]
    full = _work_view(work, x._shape, axis, total)
    m = x._shape[axis]
    h = n // 2 + 1
    if window(client, x)[1] > client.max_binding:
        _prepare_pieces(client, cw, x, full, axis, n, half, conj, chirp)
        return
    ct = cw.ct
    nd = len(full._shape)

    def body(g: MapCodegen) -> str:
        base = _row_start(g, nd, axis)
        lines = [f"  let j = i32({g.coord(axis)});\n  var k = j;\n"]
        if half:  # point j of [h, n) is the conjugate of point n - j
            lines.append(f"  if (j >= {g.param(2)}) {{ k = {g.param(1)} - j; }}\n")
        value = cast(g.raw_load(0, f"{base} + k * {g.raw_stride(0, axis)}"), wt(x._dtype), cw)
        lines.append(f"  var fz = {ct}();\n  if (k < {g.param(0)} && j < {g.param(1)}) {{\n    fz = {value};\n")
        if conj:
            lines.append(f"    fz = {ct}(fz.x, -fz.y);\n")
        if half:
            lines.append(f"    if (j >= {g.param(2)}) {{ fz = {ct}(fz.x, -fz.y); }}\n")
        if chirp is not None:
            lines.append(f"    let fw = {g.raw_load(1, f'{g.raw_offset(1)} + j')};\n"
                         f"    fz = {_cmul(ct, 'fz', 'fw')};\n")
        lines.append("  }\n")
        return "".join(lines) + g.store(0, "fz")

    raw = [(x, False)] + ([(chirp, False)] if chirp is not None else [])
    run_map(client, "fft_prepare", (axis, half, conj, chirp is not None), [full], [], body, coords=True, raw=raw,
            params=[(I32, m), (I32, n), (I32, h if half else n)])


def _store(client: WebGPUClient, cw: WgslType, src: Tensor, o: Tensor, axis: int, scale: float,
           chirp: Tensor | None) -> None:
    """o = scale * src (times the chirp along ``axis`` where given), cast to o's dtype (the real part for
    a real o)."""
    ct, ow = cw.ct, wt(o._dtype)

    def body(g: MapCodegen) -> str:
        lines = f"  var fz = {g.val(0)};\n"
        if chirp is not None:
            lines += f"  let fw = {g.val(1)};\n  fz = {_cmul(ct, 'fz', 'fw')};\n"
        return lines + g.store(0, cast(f"fz * {g.param(0)}", cw, ow))

    ins = [src] if chirp is None else [src, _along(chirp, o._shape, axis)]
    run_map(client, "fft_store", chirp is not None, [o], ins, body, params=[(cw.real, scale)])


# name: (exponent sign + (inverse), Hermitian half input, conjugated input, scaled as a forward transform)
_KINDS = {"fft": (False, False, False, True), "ifft": (True, False, False, False),
          "rfft": (False, False, False, True), "ihfft": (True, False, False, False),
          "irfft": (True, True, False, False), "hfft": (True, True, True, True)}


def _norm_scale(norm: str, n: int, forward: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") == forward else 1.0


def _row_start(g: MapCodegen, nd: int, axis: int) -> str:
    """The element offset, in the map's first raw operand, of the row along ``axis`` that the invocation's
    coordinates on the other axes select."""
    return " + ".join([g.raw_offset(0)] + [f"i32({g.coord(d)}) * {g.raw_stride(0, d)}"
                                           for d in range(nd) if d != axis])


def _half_fits(client: WebGPUClient, cw: WgslType, x: Tensor, nrows: int, hn: int) -> bool:
    """Whether x and the work rows of a real transform through nrows complex transforms of hn points each fit
    one storage binding."""
    return window(client, x)[1] <= client.max_binding and nrows * hn * cw.dtype.itemsize <= client.max_binding


def _half_twiddles(client: WebGPUClient, cw: WgslType, n: int) -> Tensor:
    """W_n^k for k = 0 .. n/2 on the device (uploaded once per dtype and n): what rfft's untangling and
    irfft's tangling of a half-length complex transform multiply by."""
    return _upload(client, (cw.dtype, "rfft-twiddles", n), lambda: _unit(np.arange(n // 2 + 1), n).astype(cw.dtype.np))


def _real_forward(client: WebGPUClient, cw: WgslType, x: Tensor, o: Tensor, axis: int, n: int, scale: float) -> bool:
    """rfft of real x (n a power of two >= 4) through a complex transform of n/2 points: z[j] = x[2j] + i
    x[2j+1] (zero-padded) is transformed, and X[k] = E[k] + W_n^k O[k] for k <= n/2, where E[k] = (Z[k] +
    conj Z[n/2-k]) / 2 and O[k] = (Z[k] - conj Z[n/2-k]) / 2i are the transforms of the even and odd
    points: half the passes' memory traffic of a complex transform of n. False (nothing done) where an
    operand exceeds one storage binding."""
    hn = n // 2
    nrows = math.prod(o._shape) // o._shape[axis]
    if not _half_fits(client, cw, x, nrows, hn):
        return False
    ct, rt = cw.ct, cw.real
    work = _temp(client, (nrows, hn), cw.dtype)
    full = _work_view(work, x._shape, axis, hn)
    nd = len(x._shape)

    def pairs(g: MapCodegen) -> str:
        base = _row_start(g, nd, axis)
        load = lambda k: cast(g.raw_load(0, f"{base} + {k} * {g.raw_stride(0, axis)}"), wt(x._dtype), rt)
        return (f"  let k = 2 * i32({g.coord(axis)});\n  var fz = {ct}();\n"
                f"  if (k < {g.param(0)}) {{ fz.x = {load('k')}; }}\n"
                f"  if (k + 1 < {g.param(0)}) {{ fz.y = {load('(k + 1)')}; }}\n" + g.store(0, "fz"))

    rows = _rows(x, axis, x._shape[axis]) if x._dtype is cw.real.dtype else None
    if rows is not None:  # the first pass reads the real rows itself, as pairs
        _fft_rows(client, cw, rows, work, hn, False, 1.0, in_len=min(x._shape[axis], n))
    else:
        run_map(client, "rfft_pairs", axis, [full], [], pairs, coords=True, raw=[(x, False)],
                params=[(I32, x._shape[axis])])
        _fft_rows(client, cw, work, work, hn, False, 1.0)
    tw = _half_twiddles(client, cw, n)
    res = _work_view(work, o._shape, axis, hn)

    def post(g: MapCodegen) -> str:
        base = _row_start(g, nd, axis)
        at = lambda k: g.raw_load(0, f"{base} + ({k}) * {g.raw_stride(0, axis)}")
        return (f"  let k = i32({g.coord(axis)});\n  let hn = {g.param(0)};\n"
                f"  let a = {at('k % hn')};\n  let bc = {at('(hn - k) % hn')};\n  let b = {ct}(bc.x, -bc.y);\n"
                f"  let e = (a + b) * {rt.ct}(0.5);\n  let d = (a - b) * {rt.ct}(0.5);\n"
                f"  let od = {ct}(d.y, -d.x);\n  let w = {g.raw_load(1, f'{g.raw_offset(1)} + k')};\n"
                f"  let fz = e + {_cmul(ct, 'w', 'od')};\n" + g.store(0, f"fz * {g.param(1)}"))

    run_map(client, "rfft_post", axis, [o], [], post, coords=True, raw=[(res, False), (tw, False)],
            params=[(I32, hn), (rt, scale)])
    return True


def _real_inverse(client: WebGPUClient, cw: WgslType, x: Tensor, o: Tensor, axis: int, n: int, scale: float) -> bool:
    """irfft of the half spectrum X (n a power of two >= 4) through an inverse complex transform of n/2
    points: Z[k] = (X[k] + conj X[n/2-k]) + i W_n^-k (X[k] - conj X[n/2-k]) transforms to z[j] = x[2j] +
    i x[2j+1] (the even and odd points' spectra, tangled as the forward half transform untangles them).
    False (nothing done) where an operand exceeds one storage binding."""
    hn = n // 2
    nrows = math.prod(o._shape) // o._shape[axis]
    if not _half_fits(client, cw, x, nrows, hn):
        return False
    ct, rt = cw.ct, cw.real
    tw = _half_twiddles(client, cw, n)
    xrows = _rows(x, axis, x._shape[axis]) if x._dtype is cw.dtype else None
    orows = _rows(o, axis, n) if o._dtype is cw.real.dtype else None
    if xrows is not None and orows is not None:  # the passes tangle, transform and write: nothing else
        _fft_rows(client, cw, xrows, orows, hn, True, scale, in_len=x._shape[axis], real_out=True, tangle=tw)
        return True
    work = _temp(client, (nrows, hn), cw.dtype)
    full = _work_view(work, x._shape, axis, hn)
    nd = len(x._shape)

    def tangle(g: MapCodegen) -> str:
        base = _row_start(g, nd, axis)
        load = lambda k: cast(g.raw_load(0, f"{base} + {k} * {g.raw_stride(0, axis)}"), wt(x._dtype), cw)
        return (f"  let k = i32({g.coord(axis)});\n  let hn = {g.param(1)};\n  var a = {ct}();\n  var bc = {ct}();\n"
                f"  if (k < {g.param(0)}) {{ a = {load('k')}; }}\n"
                f"  if (hn - k < {g.param(0)}) {{ bc = {load('(hn - k)')}; }}\n"
                # X[0] and X[n/2] count as real (their imaginary parts drop out of a real result, as NumPy's)
                f"  if (k == 0) {{ a.y = {rt.ct}(0); bc.y = {rt.ct}(0); }}\n"
                f"  let b = {ct}(bc.x, -bc.y);\n  let t = {g.raw_load(1, f'{g.raw_offset(1)} + k')};\n"
                f"  let w = {ct}(t.x, -t.y);\n  let d = {_cmul(ct, 'w', '(a - b)')};\n"
                f"  let fz = (a + b) + {ct}(-d.y, d.x);\n" + g.store(0, "fz"))

    run_map(client, "irfft_tangle", axis, [full], [], tangle, coords=True, raw=[(x, False), (tw, False)],
            params=[(I32, x._shape[axis]), (I32, hn)])
    if orows is not None:  # the last pass writes the real and imaginary parts as the even and odd outputs
        _fft_rows(client, cw, work, orows, hn, True, scale, real_out=True)
        return True
    _fft_rows(client, cw, work, work, hn, True, 1.0)
    res = _work_view(work, o._shape, axis, hn)
    ow = wt(o._dtype)

    def store(g: MapCodegen) -> str:
        base = _row_start(g, nd, axis)
        return (f"  let j = i32({g.coord(axis)});\n"
                f"  let z = {g.raw_load(0, f'{base} + (j >> 1u) * {g.raw_stride(0, axis)}')};\n"
                f"  let v = select(z.x, z.y, (j & 1) == 1);\n" + g.store(0, cast(f"v * {g.param(0)}", rt, ow)))

    run_map(client, "irfft_store", axis, [o], [], store, coords=True, raw=[(res, False)], params=[(rt, scale)])
    return True


def transform(client: WebGPUClient, x: Tensor, o: Tensor, axis: int, n: int, kind: str, norm: str) -> None:
    """o = the 1-D transform ``kind`` (a name of _KINDS) of n points of x along ``axis``."""
    inv, half, conj, forward = _KINDS[kind]
    cw = wt(dt.complex_of(o._dtype))
    scale = _norm_scale(norm, n, forward)
    nrows = math.prod(o._shape) // o._shape[axis]
    if kind == "rfft" and n >= 4 and n & (n - 1) == 0 and _real_forward(client, cw, x, o, axis, n, scale):
        return
    if kind == "irfft" and n >= 4 and n & (n - 1) == 0 and _real_inverse(client, cw, x, o, axis, n, scale):
        return
    if n & (n - 1) == 0 and n > 1:
        src = None
        if not half and x._dtype is cw.dtype and n <= x._shape[axis]:
            src = _rows(_narrow(x, axis, 0, n), axis, n)
        if src is None:
            src = _temp(client, (nrows, n), cw.dtype)
            _prepare(client, cw, x, src, axis, n, half, conj, None)
        dst = _rows(o, axis, n) if kind in ("fft", "ifft") and o._dtype is cw.dtype else None
        if dst is not None:
            _fft_rows(client, cw, src, dst, n, inv, scale)
            return
        res = src if src._buf is not x._buf else _temp(client, (nrows, n), cw.dtype)
        _fft_rows(client, cw, src, res, n, inv, 1.0)
        _store(client, cw, _work_view(res, o._shape, axis, o._shape[axis]), o, axis, scale, None)
        return
    if n == 1:
        work = _temp(client, (nrows, 1), cw.dtype)
        _prepare(client, cw, x, work, axis, 1, half, conj, None)
        _store(client, cw, _work_view(work, o._shape, axis, o._shape[axis]), o, axis, scale, None)
        return
    # Bluestein: X[k] = a[k] * sum_j (x[j] a[j]) conj(a[k - j]), the sum a convolution of m >= 2n-1 points
    m = 1 << (2 * n - 2).bit_length()
    chirp, spectrum = _chirp_tables(client, cw, n, m, inv)
    work = _temp(client, (nrows, m), cw.dtype)
    _prepare(client, cw, x, work, axis, n, half, conj, chirp)
    _fft_rows(client, cw, work, work, m, False, 1.0)
    ct = cw.ct
    run_map(client, "fft_pointwise", None, [work], [work, _along(spectrum, work._shape, 1)],
            lambda g: f"  let fz = {g.val(0)};\n  let fw = {g.val(1)};\n" + g.store(0, _cmul(ct, "fz", "fw")))
    _fft_rows(client, cw, work, work, m, True, 1.0)
    _store(client, cw, _work_view(work, o._shape, axis, o._shape[axis]), o, axis, scale, chirp)


# --- the kernels --------------------------------------------------------------------------------------

def _one_dim(kind: str):
    def kernel(client, ins, outs, p):
        transform(client, ins[0], outs[0], p["axis"], p["n"], kind, p["norm"])
    return kernel


def _n_dim(kind: str):
    def kernel(client, ins, outs, p):
        x, o = ins[0], outs[0]
        axes, sizes = list(p["axes"]), list(p["s"])
        if not axes:
            client.launch("copy", (x,), (o,), {})
            return
        # NumPy's order: the last axis first; rfftn starts with its real axis, irfftn ends with it
        inner = {"fftn": "fft", "ifftn": "ifft", "rfftn": "fft", "irfftn": "ifft"}[kind]
        steps = [(inner, a, s) for a, s in zip(axes, sizes)][::-1]
        if kind == "rfftn":
            steps = [("rfft", axes[-1], sizes[-1])] + steps[1:]
        elif kind == "irfftn":
            steps = steps[1:] + [("irfft", axes[-1], sizes[-1])]
        cdt = dt.complex_of(o._dtype)
        cur = x
        for k, (name, a, s) in enumerate(steps):
            if k == len(steps) - 1:
                dst = o
            else:
                length = s // 2 + 1 if name == "rfft" else s
                dst = _temp(client, cur._shape[:a] + (length,) + cur._shape[a + 1:], cdt)
            transform(client, cur, dst, a, s, name, p["norm"])
            cur = dst
    return kernel


def _shift(sign: int):
    def kernel(client, ins, outs, p):
        x = ins[0]
        axes = tuple(p["axes"])
        client.launch("roll", (x,), outs, {"shift": tuple(sign * (x._shape[a] // 2) for a in axes), "axis": axes})
    return kernel


def _freq(client: WebGPUClient, o: Tensor, n: int, d: float, signed: bool) -> None:
    """o[k] = k / (d n) (k - n from (n+1)//2 on where ``signed``), as NumPy: an integer times 1/(n d) in
    float64 (float32 without float64)."""
    rw = F64 if client.has_f64 else F32
    ow = wt(o._dtype)

    def body(g: MapCodegen) -> str:
        k = f"i32({g.coord(0)})"
        v = f"select({k} - {g.param(0)}, {k}, {k} < {g.param(1)})" if signed else k
        return g.store(0, cast(f"{rw.ct}({v}) * {g.param(2)}", rw, ow))

    run_map(client, "fftfreq", signed, [o], [], body, coords=True,
            params=[(I32, n), (I32, (n + 1) // 2), (rw, 1.0 / (n * d))])


def kernels() -> dict:
    table = {name: _one_dim(name) for name in _KINDS}
    table.update({name: _n_dim(name) for name in ("fftn", "ifftn", "rfftn", "irfftn")})
    table.update(fftshift=_shift(1), ifftshift=_shift(-1),
                 fftfreq=lambda client, ins, outs, p: _freq(client, outs[0], outs[0]._shape[0], p["d"], True),
                 rfftfreq=lambda client, ins, outs, p: _freq(client, outs[0], p["n"], p["d"], False))
    return table
