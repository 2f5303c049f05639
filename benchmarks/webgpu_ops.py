"""``python -m benchmarks.webgpu_ops``: the single ops behind the WebGPU program figures (issue 15's table and
the thin products of the programs), numr webgpu:0 against CuPy (or NumPy where CuPy is missing), each
synchronised after every call; the host time per small op in a batch; and ``--cg-trace``, the conjugate
gradient program of benchmarks/workloads.py step by step against NumPy float32, naming the first quantity
that goes non-finite or far from NumPy's.

    python -m benchmarks.webgpu_ops [--repeat 20] [--only X.T@v,H@W] [--cg-trace] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

import numr_array as xp
from benchmarks._timing import runs

DEV = "webgpu:0"


def _timed(fn, sync, repeat: int) -> float:
    """Median seconds of one call followed by a synchronisation, after two warm-up calls."""
    return statistics.median(runs(fn, sync, repeat=repeat, warmup=2))


def _data(rng) -> dict:
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    return {"X": f(200_000, 64), "w": f(64), "v": f(200_000), "D": f(200_000, 16), "u": f(1 << 20),
            "H": f(8192, 1024), "W": f(1024, 1024), "W2": f(1024, 10), "G": f(8192, 10), "oh": f(200_000, 16),
            "Xk": f(200_000, 32), "A": f(2048, 2048), "p": f(2048), "s": f((1 << 20) - 4096), "h": f(4097)}


#: (name, function of (namespace, arrays)); sizes of issue 15's table and of the programs' thin products
OPS = [
    ("X.T@v 200k x 64", lambda m, a: m.matmul(a["X"].T, a["v"])),
    ("X@w 200k x 64", lambda m, a: m.matmul(a["X"], a["w"])),
    ("argmin(D, axis=1) 200k x 16", lambda m, a: m.argmin(a["D"], axis=1)),
    ("concat 3 slices of 1M", lambda m, a: m.concat([a["u"][:300_000], a["u"][300_000:700_000], a["u"][700_000:]])),
    ("exp(-v) 200k", lambda m, a: m.exp(-a["v"])),
    ("where(H>0, H, 0.01H) 8192 x 1024", lambda m, a: m.where(a["H"] > 0, a["H"], 0.01 * a["H"])),
    ("H@W 8192 x 1024 x 1024", lambda m, a: m.matmul(a["H"], a["W"])),
    ("H@W2 8192 x 1024 x 10", lambda m, a: m.matmul(a["H"], a["W2"])),
    ("H.T@G 1024 x 8192 x 10", lambda m, a: m.matmul(a["H"].T, a["G"])),
    ("onehot.T@X 16 x 200k x 32", lambda m, a: m.matmul(a["oh"].T, a["Xk"])),
    ("A@p 2048", lambda m, a: m.matmul(a["A"], a["p"])),
    ("vecdot 2048", lambda m, a: m.vecdot(a["p"], a["p"])),
    ("rfft 2^20", lambda m, a: m.fft.rfft(a["s"], n=1 << 20)),
    ("fft_conv 2^20 by 4097", lambda m, a: m.fft.irfft(m.fft.rfft(a["s"], n=1 << 20) * m.fft.rfft(a["h"], n=1 << 20),
                                                     n=1 << 20)),
]


def _peer():
    """(name, namespace, asarray, sync) of CuPy through array_api_compat, else NumPy."""
    try:
        import cupy as cp
        from array_api_compat import array_namespace
        ns = array_namespace(cp.zeros(1))
        return "CuPy", ns, cp.asarray, cp.cuda.get_current_stream().synchronize
    except Exception:
        return "NumPy", np, np.asarray, lambda: None


def bench_ops(repeat: int, only: list[str]) -> dict:
    client = xp._device.parse_device(DEV).client
    peer, pns, pput, psync = _peer()
    host = _data(np.random.default_rng(0))
    ours = {k: xp.asarray(v, device=DEV) for k, v in host.items()}
    theirs = {k: pput(v) for k, v in host.items()}
    res = {"peer": peer, "adapter": dict(client.adapter.info), "ops": {}}
    print(f"WebGPU adapter: {client.adapter.info.get('device')} ({client.adapter.info.get('backend_type')}); "
          f"peer: {peer}")
    print(f"{'op (synchronised after each call)':40s} {'numr us':>10s} {peer + ' us':>10s} {'ratio':>8s}")
    for name, fn in OPS:
        if only and not any(o in name for o in only):
            continue
        a = _timed(lambda: fn(xp, ours), client.synchronize, repeat)
        b = _timed(lambda: fn(pns, theirs), psync, repeat)
        res["ops"][name] = {"numr_s": a, "peer_s": b, "ratio": a / b}
        print(f"{name:40s} {a * 1e6:10.1f} {b * 1e6:10.1f} {a / b:8.2f}")
    # host time per small op in a batch (no synchronisation between calls)
    s = xp.ones((1024,), dtype=xp.float32, device=DEV)
    t = xp.ones((1024,), dtype=xp.float32, device=DEV)
    for label, fn in (("add", lambda: xp.add(s, t)), ("multiply by a scalar", lambda: xp.multiply(s, 2.0)),
                      ("exp", lambda: xp.exp(s))):
        n = 1000
        per = _timed(lambda: [fn() for _ in range(n)], client.synchronize, max(3, repeat // 4)) / n
        res["ops"]["batch " + label] = {"numr_s": per}
        print(f"{'host per op in a batch: ' + label:40s} {per * 1e6:10.2f}")
    return res


def cg_trace(n: int = 2048, iters: int = 50) -> int:
    """The cg program on webgpu:0 and in NumPy float32, iteration by iteration: prints each step's scalars
    and returns 1 at the first quantity that is non-finite or off by more than 1e-2 relative."""
    from benchmarks.workloads import make_cg
    host, _ = make_cg(np.random.default_rng(7), n, iters)
    A, b = host["A"], host["b"]
    Ad, bd = xp.asarray(A, device=DEV), xp.asarray(b, device=DEV)
    x, r, p = np.zeros_like(b), b.copy(), b.copy()
    xd, rd, pd = xp.zeros_like(bd), bd, bd
    rs, rsd = np.float32(r @ r), xp.vecdot(rd, rd)

    def bad(name: str, got, want, it: int) -> bool:
        g = np.asarray(xp.asarray(got, device="cpu") if hasattr(got, "device") else got, dtype=np.float64)
        w = np.asarray(want, dtype=np.float64)
        err = np.max(np.abs(g - w)) / max(np.max(np.abs(w)), 1e-30) if w.size else 0.0
        if not np.all(np.isfinite(g)) or err > 1e-2:
            print(f"iteration {it}: {name} differs: non-finite {int(np.sum(~np.isfinite(g)))} of {g.size}, "
                  f"relative error {err:.2e}; numr {g.ravel()[:4]} numpy {w.ravel()[:4]}")
            return True
        return False

    if bad("vecdot(b, b)", rsd, rs, 0):
        return 1
    for it in range(1, iters + 1):
        Ap, Apd = A @ p, Ad @ pd
        if bad("A @ p", Apd, Ap, it):
            return 1
        pAp, pApd = np.float32(p @ Ap), xp.vecdot(pd, Apd)
        if bad("vecdot(p, Ap)", pApd, pAp, it):
            return 1
        alpha, alphad = rs / pAp, rsd / pApd
        x, xd = x + alpha * p, xd + alphad * pd
        r, rd = r - alpha * Ap, rd - alphad * Apd
        if bad("x", xd, x, it) or bad("r", rd, r, it):
            return 1
        rs_new, rs_newd = np.float32(r @ r), xp.vecdot(rd, rd)
        if bad("vecdot(r, r)", rs_newd, rs_new, it):
            return 1
        p, pd = r + (rs_new / rs) * p, rd + (rs_newd / rsd) * pd
        rs, rsd = rs_new, rs_newd
        print(f"iteration {it}: rs {float(rsd):.6e} (NumPy {float(rs):.6e})")
    print("cg: every step finite and within 1e-2 of NumPy float32")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--only", default="", help="comma-separated substrings of op names")
    ap.add_argument("--cg-trace", action="store_true", help="only the step-by-step cg check")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    if args.cg_trace:
        return cg_trace()
    res = bench_ops(args.repeat, [s for s in args.only.split(",") if s])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
