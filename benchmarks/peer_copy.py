"""Copies between GPUs (issue 18), in a few seconds on a machine of two or more: lists the devices and the peer access between GPUs, copies
256 MiB cuda:0 -> cuda:1 with to_device (device to device) and through the host, times both against CuPy's
own peer copy of the same bytes, checks the bits, and prints PASS or FAIL with the figures.

    python3 -m benchmarks.peer_copy      (from the repository root)
"""

import sys

import numpy as np

import numr_array as xp
from benchmarks._timing import runs
from numr_array import _transfer
from numr_array.backends import get_runtime

NBYTES = 256 << 20
REPEATS = 5


def best(f, sync) -> float:
    """The fastest of REPEATS runs of ``f`` (synchronised by ``sync``) after one untimed, in seconds."""
    return min(runs(f, sync, repeat=REPEATS))


def main() -> int:
    rt = get_runtime("cuda")
    if rt is None or rt.device_count() < 2:
        print("SKIP: needs two CUDA devices (cuda:0 and cuda:1)")
        return 0
    import cupy
    from cupy.cuda import runtime

    from numr_array.backends.cuda._client import peer_access

    n = rt.device_count()
    print("devices:", [str(d) for d in xp.__array_namespace_info__().devices()])
    print("peer access (row can reach column):")
    for i in range(n):
        print(f"  cuda:{i}", ["self" if i == j else peer_access(i, j) for j in range(n)])
    d0, d1 = (xp._device.parse_device(f"cuda:{i}") for i in (0, 1))
    c0, c1 = d0.client, d1.client

    def sync():
        c0.synchronize()
        c1.synchronize()

    a = np.random.default_rng(0).standard_normal(NBYTES // 4).astype(np.float32)
    x = xp.asarray(a, device=d0)
    out = {}
    t_peer = best(lambda: out.__setitem__("peer", x.to_device(d1)), sync)
    t_host = best(lambda: out.__setitem__("host", _transfer.from_numpy(_transfer.to_numpy(x, "check"), d1)), sync)
    with cupy.cuda.Device(0):
        ca = cupy.asarray(a)
    with cupy.cuda.Device(1):
        cb = cupy.empty(a.shape, a.dtype)

    def cupy_sync():
        for i in (0, 1):
            with cupy.cuda.Device(i):
                runtime.deviceSynchronize()

    with cupy.cuda.Device(1):
        t_cupy = best(lambda: cb.data.copy_from_device_async(ca.data, NBYTES), cupy_sync)
    ok = all(np.asarray(out[k].to_device("cpu")).tobytes() == a.tobytes() for k in ("peer", "host"))
    ok = ok and np.array_equal(cupy.asnumpy(cb), a) and out["peer"].device == d1
    gbs = {k: NBYTES / t / 1e9 for k, t in (("to_device", t_peer), ("through host", t_host), ("cupy peer", t_cupy))}
    print("256 MiB cuda:0 -> cuda:1: " + ", ".join(f"{k} {v:.1f} GB/s" for k, v in gbs.items())
          + f"; to_device / CuPy time ratio {t_peer / t_cupy:.2f}, host path / to_device {t_host / t_peer:.1f}x")
    print("PASS" if ok else "FAIL: the copies' bits differ")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
