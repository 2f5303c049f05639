"""Discrete Fourier transform kernels through the array module's ``fft`` (pocketfft on CPU, cuFFT on CUDA).

The namespace resolves every size (``n``, ``s``; no -1 or None reaches a kernel), every axis and the norm
mode; a kernel computes and writes the result into its output, whose dtype the namespace fixed: NumPy's
transforms write it themselves (``out=``, no second result-sized array at the peak); elsewhere, or where
NumPy's result dtype is not the output's, the copy casts a library that computes in double precision back
to the single-precision result.
"""

from __future__ import annotations

_ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_N_DIM = ("fftn", "ifftn", "rfftn", "irfftn")


def kernels(m) -> dict:
    f = m.fft
    direct = m.__name__ == "numpy"  # NumPy 2's transforms take ``out=``; CuPy's do not

    def into(o, transform, x, **kw):
        if direct and o.dtype == _natural(m, x.dtype, o.dtype):
            transform(x, out=o, **kw)
        else:
            m.copyto(o, transform(x, **kw))

    def one_dim(transform):
        def kernel(ins, outs, p):
            into(outs[0], transform, ins[0], n=p["n"], axis=p["axis"], norm=p["norm"])
        return kernel

    def n_dim(transform):
        def kernel(ins, outs, p):
            into(outs[0], transform, ins[0], s=p["s"], axes=p["axes"], norm=p["norm"])
        return kernel

    def shift(transform):
        def kernel(ins, outs, p):
            m.copyto(outs[0], transform(ins[0], axes=p["axes"]))
        return kernel

    def fftfreq(ins, outs, p):
        o = outs[0]
        m.copyto(o, f.fftfreq(o.shape[0], p["d"]))

    def rfftfreq(ins, outs, p):
        m.copyto(outs[0], f.rfftfreq(p["n"], p["d"]))

    table = {name: one_dim(getattr(f, name)) for name in _ONE_DIM}
    table.update({name: n_dim(getattr(f, name)) for name in _N_DIM})
    table.update(fftshift=shift(f.fftshift), ifftshift=shift(f.ifftshift), fftfreq=fftfreq, rfftfreq=rfftfreq)
    return table


def _natural(m, x_dtype, out_dtype):
    """The dtype NumPy's transform of an ``x_dtype`` array gives, of ``out_dtype``'s kind (complex for
    forward transforms of real input, real for irfft and hfft): single precision stays single."""
    single = x_dtype in (m.float32, m.complex64)
    if out_dtype.kind == "c":
        return m.dtype(m.complex64 if single else m.complex128)
    return m.dtype(m.float32 if single else m.float64)
