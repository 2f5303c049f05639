"""Discrete Fourier transform kernels through the array module's ``fft`` (pocketfft on CPU, cuFFT on CUDA).

The namespace resolves every size (``n``, ``s``; no -1 or None reaches a kernel), every axis and the norm
mode; a kernel computes and writes the result into its output, whose dtype the namespace fixed: NumPy's
fft, ifft, rfft and irfft write it themselves (``out=``, no second result-sized array at the peak); elsewhere
(CuPy, NumPy's other transforms, whose ``out`` handling differs for padded, empty or n-dimensional cases,
or a result dtype NumPy would not give) the copy casts a library that computes in double precision back to
the single-precision result.
"""

from __future__ import annotations

_ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_WRITES_OUT = ("fft", "ifft", "rfft", "irfft")  # NumPy's transforms that compute straight into ``out``
_N_DIM = ("fftn", "ifftn", "rfftn", "irfftn")


def kernels(m) -> dict:
    f = m.fft
    numpy = m.__name__ == "numpy"  # NumPy 2's transforms take ``out=``; CuPy's do not

    def one_dim(transform):
        direct = numpy and transform.__name__ in _WRITES_OUT

        def kernel(ins, outs, p):
            x, o = ins[0], outs[0]
            if direct and o.size and o.dtype == _natural(m, x.dtype, o.dtype):
                transform(x, n=p["n"], axis=p["axis"], norm=p["norm"], out=o)
            else:
                m.copyto(o, transform(x, n=p["n"], axis=p["axis"], norm=p["norm"]))
        return kernel

    def n_dim(transform):
        def kernel(ins, outs, p):
            m.copyto(outs[0], transform(ins[0], s=p["s"], axes=p["axes"], norm=p["norm"]))
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
