"""Philox4x32-10 random numbers (numr_array/kernels.py's "philox" and "philox_advance"), in vectorised
uint32/uint64 array operations, so that NumPy (CPU) and CuPy (CUDA) compute the same bits as WebGPU's
WGSL (backends/webgpu/k_random.py).

The generator's state is a uint32 array (6,) on the device: key0, key1, then the 128-bit counter, least
significant word first. A kernel reads it when it runs (never when it is recorded), so a replayed draw
uses the counter the previous replay's "philox_advance" left there.
"""

from __future__ import annotations

# Philox4x32's multipliers and Weyl key increments (Salmon et al., "Parallel random numbers: as easy as
# 1, 2, 3", SC11; the Random123 library's constants)
M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10
MASK = 0xFFFFFFFF
#: NumPy computes a draw in blocks of this many elements, whose arrays stay in the CPU's cache (CuPy: in one)
CHUNK = 1 << 16


def philox_words(m, state, n: int, start: int = 0) -> list:
    """The four uint64 arrays (each (n,), values below 2**32) of philox4x32-10(counter + i, key) for
    start <= i < start + n. In-place operations on four arrays and one temporary: no allocation per round."""
    u64 = m.uint64
    i = m.arange(start, start + n, dtype=u64)
    st = state.astype(u64)
    low = st[2] | (st[3] << u64(32))
    s = i + low  # wraps modulo 2**64
    carry = (s < i).astype(u64)
    high = carry + (st[4] | (st[5] << u64(32)))
    a, b = s & u64(MASK), m.right_shift(s, u64(32), out=s)
    c, d = high & u64(MASK), m.right_shift(high, u64(32), out=high)
    t = i  # (the indices are no longer needed: their array is the temporary)
    k0, k1 = st[0], st[1]
    for r in range(ROUNDS):
        if r:
            k0 = (k0 + u64(W0)) & u64(MASK)
            k1 = (k1 + u64(W1)) & u64(MASK)
        m.multiply(a, u64(M0), out=a)  # below 2**64: no wrap
        m.multiply(c, u64(M1), out=c)
        m.right_shift(c, u64(32), out=t)
        m.bitwise_xor(t, b, out=t)
        m.bitwise_xor(t, k0, out=t)  # t: the new word 0
        m.bitwise_and(c, u64(MASK), out=b)
        m.right_shift(a, u64(32), out=c)
        m.bitwise_xor(c, d, out=c)
        m.bitwise_xor(c, k1, out=c)
        m.bitwise_and(a, u64(MASK), out=d)
        a, t = t, a
    return [a, b, c, d]


def _integers(m, w: list, low: int, rng: int):
    """low + floor(R * rng / 2**(32 k)) as a uint64 array (modulo 2**64): R the k words w0.. (w0 most
    significant), k = 2 for rng <= 2**32 and 4 above; rng = 2**64 is R's top 64 bits."""
    u64 = m.uint64
    if rng == 2 ** 64:
        v = (w[0] << u64(32)) | w[1]
    else:
        k = 2 if rng <= 2 ** 32 else 4
        r = w[:k][::-1]  # limbs, least significant first
        p: list = [0] * (k + 2)  # the product's limbs
        for j, cj in enumerate((rng & MASK, rng >> 32)):
            if cj == 0:
                continue
            carry = 0
            for i in range(k):
                t = r[i] * u64(cj) + p[i + j] + carry  # at most (2**32-1)**2 + 2 (2**32-1) < 2**64
                p[i + j] = t & u64(MASK)
                carry = t >> u64(32)
            p[k + j] = carry
        v = p[k] | (p[k + 1] << u64(32))
    return v + u64(low % 2 ** 64)


def kernels(m) -> dict:
    u64 = m.uint64

    def philox(ins, outs, p):
        o = outs[0]
        n = o.size
        flat = o.reshape(-1)  # (a view: the namespace gives a new C-contiguous output)
        step = CHUNK if m.__name__ == "numpy" else max(n, 1)
        for start in range(0, n, step):
            count = min(step, n - start)
            w = philox_words(m, ins[0], count, start)
            dist = p["dist"]
            if dist == "bits":
                v = w[0]
            elif dist == "uniform":
                if o.dtype == m.float32:
                    v = (w[0] >> u64(8)).astype(m.float32) * m.float32(2.0 ** -24)
                else:
                    v = ((w[0] >> u64(5)).astype(m.float64) * 2.0 ** 26 + (w[1] >> u64(6)).astype(m.float64)) * 2.0 ** -53
            else:
                v = _integers(m, w, p["low"], p["range"])
            m.copyto(flat[start:start + count], v, casting="unsafe")

    def philox_advance(ins, outs, p):
        s = outs[0]
        n = p["n"]
        c = s[2:6].astype(u64)
        words = []
        carry = u64(0)
        for j, add in enumerate((n & MASK, n >> 32, 0, 0)):
            t = c[j] + u64(add) + carry
            words.append(t & u64(MASK))
            carry = t >> u64(32)
        m.copyto(s[2:6], m.stack(words), casting="unsafe")  # (on the device: no host read of the counter)

    return {"philox": philox, "philox_advance": philox_advance}
