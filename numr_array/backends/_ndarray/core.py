"""Copy, fill and matmul kernels."""

from __future__ import annotations


def kernels(m) -> dict:
    def copy(ins, outs, p):
        # astype and copies: the standard's casts are NumPy's unsafe casts (complex -> real drops imag)
        src = ins[0]
        if src.dtype.kind == "c" and outs[0].dtype.kind != "c":
            src = m.real(src)
        m.copyto(outs[0], src, casting="unsafe")

    def fill(ins, outs, p):
        outs[0][...] = p["value"]

    def matmul(ins, outs, p):
        m.matmul(ins[0], ins[1], out=outs[0])

    def where(ins, outs, p):
        c, a, b = ins
        o = outs[0]
        m.copyto(o, b, casting="unsafe")
        m.copyto(o, a, where=c, casting="unsafe")

    return {"copy": copy, "fill": fill, "matmul": matmul, "where": where, **creation_kernels(m)}


def creation_kernels(m) -> dict:
    def arange(ins, outs, p):
        o = outs[0]
        m.copyto(o, p["start"] + m.arange(o.shape[0]) * p["step"], casting="unsafe")

    def linspace(ins, outs, p):
        o = outs[0]
        m.copyto(o, m.linspace(p["start"], p["stop"], o.shape[0], endpoint=p["endpoint"], dtype=o.dtype))

    def eye(ins, outs, p):
        o = outs[0]
        m.copyto(o, m.eye(o.shape[0], o.shape[1], p["k"], dtype=o.dtype))

    def tril(ins, outs, p):
        m.copyto(outs[0], m.tril(ins[0], p["k"]))

    def triu(ins, outs, p):
        m.copyto(outs[0], m.triu(ins[0], p["k"]))

    return {"arange": arange, "linspace": linspace, "eye": eye, "tril": tril, "triu": triu}
