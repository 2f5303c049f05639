"""Linear-algebra kernels: decompositions, solves, norms and contractions through the array module's own
``linalg`` (LAPACK on CPU, cuSOLVER/cuBLAS on CUDA).

The namespace broadcasts every operand to the full batch shape before launching, so no kernel relies on
its library broadcasting stacks of matrices (CuPy's routines do not all do so), and it rejects the empty
reductions that have no value (a minimum over nothing). A singular or non-convergent input makes NumPy
raise ``LinAlgError``, which the namespace re-raises naming the function; CuPy instead returns NaNs unless
``cupyx.errstate(linalg='raise')`` is set, which the CUDA backend may choose to do.
"""

from __future__ import annotations

import math


def kernels(m) -> dict:
    la = m.linalg

    def cast(a, dtype):
        # mixed-dtype operands: compute in the promoted dtype the namespace chose for the result
        return a if a.dtype == dtype else a.astype(dtype)

    def adjoint(a):
        return m.conj(m.swapaxes(a, -1, -2))

    def max_last(c):
        # max over the last axis; 0 for an empty axis (the norms' value of an empty matrix, as in NumPy)
        return c.max(axis=-1) if c.shape[-1] else m.zeros(c.shape[:-1], c.dtype)

    def cholesky(ins, outs, p):
        lower = la.cholesky(ins[0])
        m.copyto(outs[0], adjoint(lower) if p["upper"] else lower)

    def det(ins, outs, p):
        m.copyto(outs[0], la.det(ins[0]))

    def slogdet(ins, outs, p):
        sign, logabsdet = la.slogdet(ins[0])
        m.copyto(outs[0], sign)
        m.copyto(outs[1], logabsdet)

    def eigh(ins, outs, p):
        w, v = la.eigh(ins[0])
        m.copyto(outs[0], w)
        m.copyto(outs[1], v)

    def eigvalsh(ins, outs, p):
        m.copyto(outs[0], la.eigvalsh(ins[0]))

    # la.eig / la.eigvals: NumPy; CuPy only from v14 on (older CuPy lacks them: the CUDA backend overrides)
    def eig(ins, outs, p):
        w, v = la.eig(ins[0])  # real dtypes where every eigenvalue is real: copyto widens to complex
        m.copyto(outs[0], w)
        m.copyto(outs[1], v)

    def eigvals(ins, outs, p):
        m.copyto(outs[0], la.eigvals(ins[0]))

    def inv(ins, outs, p):
        m.copyto(outs[0], la.inv(ins[0]))

    def solve(ins, outs, p):
        # both operands are (..., M, M) and (..., M, K) with equal batch shapes: no vector ambiguity
        o = outs[0]
        m.copyto(o, la.solve(cast(ins[0], o.dtype), cast(ins[1], o.dtype)))

    def matrix_power(ins, outs, p):
        x, o, n = ins[0], outs[0], p["n"]
        if n == 0:
            o[...] = m.eye(x.shape[-1], dtype=o.dtype)
            return
        if n < 0:
            x, n = la.inv(x), -n
        # binary powering, the same order of products as numpy.linalg.matrix_power
        result = None
        while n:
            n, bit = divmod(n, 2)
            if bit:
                result = x if result is None else m.matmul(result, x)
            if n:
                x = m.matmul(x, x)
        m.copyto(o, result)

    def qr(ins, outs, p):
        q, r = la.qr(ins[0], mode=p["mode"])
        m.copyto(outs[0], q)
        m.copyto(outs[1], r)

    def svd(ins, outs, p):
        u, s, vh = la.svd(ins[0], full_matrices=p["full_matrices"])
        m.copyto(outs[0], u)
        m.copyto(outs[1], s)
        m.copyto(outs[2], vh)

    def svdvals(ins, outs, p):
        m.copyto(outs[0], la.svd(ins[0], compute_uv=False))

    def relative_cutoff(s, rtol_array, rtol):
        """Singular values ``s`` (..., K) above rtol times the largest of their row."""
        r = rtol if rtol_array is None else rtol_array[..., None]
        return s > s.max(axis=-1, keepdims=True) * r

    def matrix_rank(ins, outs, p):
        x, rtol_array = ins
        o = outs[0]
        s = la.svd(x, compute_uv=False)
        if s.shape[-1] == 0:
            o[...] = 0
            return
        m.copyto(o, m.count_nonzero(relative_cutoff(s, rtol_array, p["rtol"]), axis=-1))

    def pinv(ins, outs, p):
        x, rtol_array = ins
        o = outs[0]
        u, s, vh = la.svd(x, full_matrices=False)
        if s.shape[-1] == 0:
            o[...] = 0
            return
        large = relative_cutoff(s, rtol_array, p["rtol"])
        s_inv = m.where(large, 1 / m.where(large, s, 1), 0).astype(s.dtype)
        m.copyto(o, m.matmul(adjoint(vh) * s_inv[..., None, :], adjoint(u)))

    def matrix_norm(ins, outs, p):
        x, o, order = ins[0], outs[0], p["ord"]
        if order == "fro":
            a = m.abs(x)
            r = m.sqrt(m.sum(a * a, axis=(-2, -1)))
        elif order in ("nuc", 2, -2):
            s = la.svd(x, compute_uv=False)
            r = s.sum(axis=-1) if order == "nuc" else max_last(s) if order == 2 else s.min(axis=-1)
        else:
            # 1: column sums (over rows, axis -2); inf: row sums (over columns, axis -1)
            sums = m.sum(m.abs(x), axis=-2 if abs(order) == 1 else -1)
            r = max_last(sums) if order > 0 else sums.min(axis=-1)
        m.copyto(o, r.reshape(o.shape))

    def vector_norm(ins, outs, p):
        x, o = ins[0], outs[0]
        axes, keep, order = p["axes"], p["keepdims"], p["ord"]
        a = m.abs(x)
        if order == math.inf:
            empty = any(x.shape[i] == 0 for i in axes)
            r = 0 if empty else m.max(a, axis=axes, keepdims=keep)
        elif order == -math.inf:
            r = m.min(a, axis=axes, keepdims=keep)
        elif order == 0:
            r = m.sum(a != 0, axis=axes, keepdims=keep)
        elif order == 1:
            r = m.sum(a, axis=axes, keepdims=keep)
        else:  # 2
            r = m.sqrt(m.sum(a * a, axis=axes, keepdims=keep))
        m.copyto(o, r, casting="unsafe")  # ord=0 counts (integers) into the float result

    def cross(ins, outs, p):
        o = outs[0]
        m.copyto(o, m.cross(cast(ins[0], o.dtype), cast(ins[1], o.dtype), axis=p["axis"]))

    def tensordot(ins, outs, p):
        o = outs[0]
        m.copyto(o, m.tensordot(cast(ins[0], o.dtype), cast(ins[1], o.dtype), axes=(p["axes1"], p["axes2"])))

    def vecdot(ins, outs, p):
        # vectors along the last axis, batch shapes equal: one (1, K) @ (K, 1) product per batch entry
        o = outs[0]
        a, b = cast(ins[0], o.dtype), cast(ins[1], o.dtype)
        if a.dtype.kind == "c":
            a = m.conj(a)
        m.copyto(o, m.matmul(a[..., None, :], b[..., :, None])[..., 0, 0])

    return {
        "cholesky": cholesky, "det": det, "slogdet": slogdet, "eigh": eigh, "eigvalsh": eigvalsh, "eig": eig,
        "eigvals": eigvals, "inv": inv, "solve": solve, "matrix_power": matrix_power, "qr": qr, "svd": svd,
        "svdvals": svdvals, "matrix_rank": matrix_rank, "pinv": pinv, "matrix_norm": matrix_norm,
        "vector_norm": vector_norm, "cross": cross, "tensordot": tensordot, "vecdot": vecdot,
    }
