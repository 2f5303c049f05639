"""Cubed with numr_array as its backend namespace (``CUBED_BACKEND_ARRAY_API_MODULE=numr_array``): its
array-API functions, reductions and matmul run with numr chunks and give NumPy's results.

Cubed reads the backend module and numr its default device once, at import, so each check runs in a
child process with both set (``NUMR_DEVICE`` is the device under test)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import numr_array as xp
from tests.helpers import DEVICE

pytest.importorskip("cubed", reason="cubed is not installed (the [distributed] extra)")

SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    import cubed, cubed.array_api as cxp
    import numr_array as xp
    spec = cubed.Spec(work_dir=sys.argv[1], allowed_mem="500MB")
    dtype = xp.__array_namespace_info__().default_dtypes()["real floating"]
    a_np = (np.arange(48.0).reshape(6, 8) / 7 - 3).astype(np.dtype(dtype))
    a = cxp.asarray(a_np, chunks=(3, 4), spec=spec)
    checks = {
        "sum_axis0": (cxp.sum(a + 1, axis=0), (a_np + 1).sum(axis=0)),
        "mean": (cxp.mean(a), a_np.mean()),
        "max_axis1": (cxp.max(a, axis=1), a_np.max(axis=1)),
        "argmax_axis1": (cxp.argmax(a, axis=1), a_np.argmax(axis=1)),
        "matmul": (cxp.matmul(a, cxp.permute_dims(a, (1, 0))), a_np @ a_np.T),
        "sin_where": (cxp.where(a > 0, cxp.sin(a), 0.0), np.where(a_np > 0, np.sin(a_np), 0.0)),
        "slice_concat": (cxp.concat([a[1:3], a[4:]], axis=0), np.concatenate([a_np[1:3], a_np[4:]])),
        "std": (cxp.std(a, axis=0), a_np.std(axis=0)),
    }
    out = {}
    for name, (lazy, ref) in checks.items():
        r = lazy.compute()
        out[name] = {"type": type(r).__name__, "device": str(r.device),
                     "err": float(np.max(np.abs(np.asarray(r.to_device("cpu"), dtype=np.float64) - ref)))}
    print(json.dumps(out))
''')


def test_cubed_runs_numr_chunks(tmp_path):
    if str(DEVICE) != "cpu":
        pytest.skip("Cubed stores every chunk in Zarr through np.asarray (cubed.backend_array_api exempts only "
                    "CuPy), an implicit host copy that numr refuses for device tensors: Cubed runs on cpu")
    env = {**os.environ, "CUBED_BACKEND_ARRAY_API_MODULE": "numr_array", "NUMR_DEVICE": str(DEVICE)}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    tol = 1e-5 if xp.__array_namespace_info__().default_dtypes(device=DEVICE)["real floating"] == xp.float32 \
        else 1e-12
    for name, r in results.items():
        assert r["type"] == "Tensor", (name, r)
        assert r["device"] == str(DEVICE), (name, r)
        assert r["err"] <= tol * 50, (name, r)
