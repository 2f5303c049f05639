"""``python -m numr_array``: list the devices found, then on each run a short computation and a
capture/replay of a 100-op element-wise chain, checked against NumPy, with timings."""

from __future__ import annotations

import sys
import time

import numpy as np

import numr_array as xp

CHAIN = 100


def _chain(x, y, out):
    t = x
    for i in range(CHAIN // 2 - 1):
        t = xp.multiply(t, 0.999)
        t = xp.add(t, y)
    t = xp.multiply(t, 0.5)
    return xp.add(t, 0.0, out=out)


def _per_call(fn, repeat: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def check_device(device) -> bool:
    client = device.client
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(a, device=device)
    y = xp.sin(x) @ x.T + 1
    ok = np.allclose(np.asarray(y.to_device("cpu")), np.sin(a) @ a.T + 1, rtol=1e-5, atol=1e-6)
    print(f"  sin(x) @ x.T + 1 on a 3x4 float32 array: {'matches NumPy' if ok else 'DIFFERS from NumPy'}")

    x = xp.asarray(np.full(1024, 1.0, np.float32), device=device)
    y = xp.asarray(np.full(1024, 0.001, np.float32), device=device)
    out = xp.empty((1024,), dtype=xp.float32, device=device)

    def eager():
        _chain(x, y, out)
        client.synchronize()

    t_eager = _per_call(eager, 20)
    with xp.capture(device=device) as g:
        _chain(x, y, out)

    def replay():
        g.replay()
        client.synchronize()

    t_replay = _per_call(replay, 50)
    x[...] = 2.0
    g.replay()
    expected = np.full(1024, 2.0, np.float32)
    for _ in range(CHAIN // 2 - 1):
        expected = expected * np.float32(0.999) + np.float32(0.001)
    expected = expected * np.float32(0.5)
    replay_ok = np.allclose(np.asarray(out.to_device("cpu")), expected, rtol=1e-5)
    print(f"  {CHAIN}-op element-wise chain on 1024 float32: eager {t_eager * 1e3:.3f} ms, "
          f"replay {t_replay * 1e3:.3f} ms ({t_eager / t_replay:.1f}x); replay after new input "
          f"{'matches NumPy' if replay_ok else 'DIFFERS from NumPy'}")
    return ok and replay_ok


def main() -> int:
    devices = xp.__array_namespace_info__().devices()
    print(f"numr_array, array API {xp.__array_api_version__}; devices found: {', '.join(map(str, devices))}")
    ok = True
    for device in devices:
        print(f"{device}:")
        ok &= check_device(device)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
