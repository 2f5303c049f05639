"""Copy, fill and matmul kernels."""

from __future__ import annotations

import math


def kernels(m) -> dict:
    def copy(ins, outs, p):
        # astype and copies: the standard's casts are NumPy's unsafe casts (complex -> real drops imag;
        # complex -> bool is True unless both parts are zero)
        src, o = ins[0], outs[0]
        if src.dtype == o.dtype:
            o[...] = src  # (a same-dtype copy: half the cost of copyto's keyword call on small arrays)
            return
        if src.dtype.kind == "c" and o.dtype.kind not in "cb":
            src = m.real(src)
        m.copyto(o, src, casting="unsafe")

    def fill(ins, outs, p):
        o, v = outs[0], p["value"]
        o[...] = v
        if o.dtype.kind in "fc" and v == 0:
            # CuPy fills a zero with a memset, which turns -0.0 into +0.0: give negative zeros their sign
            kind = o.dtype.kind
            for part, pv in ((o, v),) if kind == "f" else ((o.real, v.real), (o.imag, v.imag)):
                if math.copysign(1.0, pv) < 0:
                    m.copysign(part, -1.0, out=part)

    def matmul(ins, outs, p):
        m.matmul(ins[0], ins[1], out=outs[0])
    matmul.fresh_ufunc = m.matmul  # (a gufunc: what the kernel is into a fresh result, CpuClient.ufunc_launch)

    def where(ins, outs, p):
        c, a, b = ins
        o = outs[0]
        m.copyto(o, b, casting="unsafe")
        m.copyto(o, a, where=c, casting="unsafe")

    return {"copy": copy, "fill": fill, "matmul": matmul, "where": where, **creation_kernels(m)}


def creation_kernels(m) -> dict:
    def arange(ins, outs, p):
        o = outs[0]
        start, step = p["start"], p["step"]
        if o.dtype.kind in "iu" and type(start) is int and type(step) is int:
            # start + i * step in uint64 arithmetic, which wraps: the low bits are exact for any integer
            # dtype and any step, and the namespace has checked that every value fits the dtype
            u = m.arange(o.shape[0], dtype=m.uint64)
            u *= m.uint64(step % 2 ** 64)
            u += m.uint64(start % 2 ** 64)
            m.copyto(o, u, casting="unsafe")
        else:
            m.copyto(o, start + m.arange(o.shape[0]) * step, casting="unsafe")

    def linspace(ins, outs, p):
        o = outs[0]
        start, stop, n, endpoint = p["start"], p["stop"], o.shape[0], p["endpoint"]
        if o.dtype.kind != "c":
            m.copyto(o, m.linspace(start, stop, n, endpoint=endpoint, dtype=o.dtype))
            return
        # part by part: not every array module's linspace takes complex bounds (CuPy's does not)
        start, stop = complex(start), complex(stop)
        part = m.real(o).dtype
        m.copyto(o.real, m.linspace(start.real, stop.real, n, endpoint=endpoint, dtype=part))
        m.copyto(o.imag, m.linspace(start.imag, stop.imag, n, endpoint=endpoint, dtype=part))

    def eye(ins, outs, p):
        o = outs[0]
        m.copyto(o, m.eye(o.shape[0], o.shape[1], p["k"], dtype=o.dtype))

    def tril(ins, outs, p):
        m.copyto(outs[0], m.tril(ins[0], p["k"]))

    def triu(ins, outs, p):
        m.copyto(outs[0], m.triu(ins[0], p["k"]))

    return {"arange": arange, "linspace": linspace, "eye": eye, "tril": tril, "triu": triu}
