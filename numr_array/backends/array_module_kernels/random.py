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


def philox_words(m, state, n: int) -> list:
    """The four uint64 arrays (each (n,), values below 2**32) of philox4x32-10(counter + i, key), i < n."""
    u64 = m.uint64
    i = m.arange(n, dtype=u64)
    st = state.astype(u64)
    low = st[2] | (st[3] << u64(32))
    s = low + i  # wraps modulo 2**64
    carry = (s < i).astype(u64)
    high = (st[4] | (st[5] << u64(32))) + carry
    c = [s & u64(MASK), s >> u64(32), high & u64(MASK), high >> u64(32)]
    k0, k1 = st[0], st[1]
    for r in range(ROUNDS):
        if r:
            k0 = (k0 + u64(W0)) & u64(MASK)
            k1 = (k1 + u64(W1)) & u64(MASK)
        p0 = c[0] * u64(M0)  # below 2**64: no wrap
        p1 = c[2] * u64(M1)
        c = [(p1 >> u64(32)) ^ c[1] ^ k0, p1 & u64(MASK), (p0 >> u64(32)) ^ c[3] ^ k1, p0 & u64(MASK)]
    return c


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
        if n == 0:
            return
        w = philox_words(m, ins[0], n)
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
        m.copyto(o, v.reshape(o.shape), casting="unsafe")

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
