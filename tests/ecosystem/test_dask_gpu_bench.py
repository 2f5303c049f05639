"""benchmarks/dask_gpu.py at tiny sizes: its data, references and checks, and the whole script end to end on
the CPU (parts A and B, dask.distributed worker processes) and on webgpu:0 (part W). Correctness only: the
script's timings are figures for the GPU machine, never asserted here."""

import json

import numpy as np
import pytest

import numr_array as xp
from tests.helpers import DEVICE

pytest.importorskip("dask.array", reason="dask is not installed (the [distributed] extra)")
pytest.importorskip("distributed", reason="distributed is not installed (the [distributed] extra)")

from benchmarks import dask_gpu  # noqa: E402 (after the importorskips: it needs dask)

PERIOD, ROWS = 8, 24  # chunks of three pattern copies


def whole(n_chunks: int, lib: str = "numpy", kind: str = "cpu") -> np.ndarray:
    chunks = [dask_gpu.make_chunk((b, 0), lib=lib, kind=kind, rows=ROWS, period=PERIOD, cols=dask_gpu.COLS,
                                  seed=dask_gpu.SEED) for b in range(n_chunks)]
    return np.concatenate([np.asarray(c.to_device("cpu")) if lib == "numr" else c for c in chunks])


@pytest.mark.parametrize("n_chunks", [1, 6, 7, 16])
def test_reference_is_the_data_in_closed_form(n_chunks):
    x = whole(n_chunks).astype(np.float64)
    ref = dask_gpu.reference(n_chunks, ROWS, PERIOD)
    assert ref["n"] == x.size
    np.testing.assert_allclose([ref["sum"], ref["sumsq"], ref["mean"], ref["std"]],
                               [x.sum(), (x * x).sum(), x.mean(), x.std()], rtol=1e-12)
    np.testing.assert_allclose(ref["gram"], x.T @ x, rtol=1e-12)


def test_chunks_differ_by_block_and_are_exact_in_float32():
    x = whole(8)
    blocks = x.reshape(8, ROWS, -1)
    assert not np.array_equal(blocks[0], blocks[1]) and np.array_equal(blocks[0], blocks[7])  # offsets cycle by 7
    assert np.array_equal(x.astype(np.float64) * 1024, np.round(x.astype(np.float64) * 1024))


def test_numr_chunk_equals_numpy_chunk():
    kind = xp.asarray(0, device=DEVICE).device.kind
    if kind != "cpu" and dask_gpu.worker_device(kind) != str(xp.asarray(0, device=DEVICE).device):
        pytest.skip(f"the benchmark's workers use {kind}:0 alone")
    np.testing.assert_array_equal(whole(9, "numr", kind), whole(9))


def test_check_passes_the_reference_and_fails_a_wrong_result():
    ref = dask_gpu.reference(5, ROWS, PERIOD)
    errors, ok = dask_gpu.check("reduce", np.array([ref["sum"], ref["sumsq"]], np.float32), ref)
    assert ok and set(errors) == {"sum", "sumsq", "mean", "std"} and max(errors.values()) < 1e-6
    assert not dask_gpu.check("reduce", np.array([ref["sum"] * (1 + 1e-3), ref["sumsq"]], np.float32), ref)[1]
    assert not dask_gpu.check("reduce", np.array([np.nan, ref["sumsq"]], np.float32), ref)[1]
    gram = ref["gram"].astype(np.float32)
    assert dask_gpu.check("matmul", gram, ref)[1]
    gram[3, 5] *= 1.01  # one chunk's partial lost or doubled shows up like this
    assert not dask_gpu.check("matmul", gram, ref)[1]


@pytest.mark.parametrize("lib", ["numpy", "numr"])
@pytest.mark.parametrize("op", ["reduce", "matmul"])
def test_graphs_on_the_threaded_scheduler(lib, op):
    """The graphs the workers run, here in one process: one task per chunk for ``reduce`` (made and reduced
    together), and the results equal to the references."""
    import dask
    graph = dask_gpu.graphs(op, lib, "cpu", 20, ROWS, PERIOD)
    if op == "reduce":
        (optimized,) = dask.optimize(graph)
        assert len(dict(optimized.__dask_graph__())) < 20 + 5
    errors, ok = dask_gpu.check(op, graph.compute(scheduler="threads"), dask_gpu.reference(20, ROWS, PERIOD))
    assert ok, errors


@pytest.mark.parametrize("i", [0, 1, 3])
def test_worker_i_sees_gpu_i_alone(i):
    env = dask_gpu.worker_env("cuda", i)
    assert env == {"CUDA_VISIBLE_DEVICES": str(i), "NUMR_DEVICE": "cuda:0", "NCCL_NVLS_ENABLE": "0"}
    assert dask_gpu.worker_env("cpu", i) == {"NUMR_DEVICE": "cpu", "NCCL_NVLS_ENABLE": "0"}


def run_script(tmp_path, capsys, *argv: str) -> tuple[dict, str]:
    path = tmp_path / "out.json"
    rc = dask_gpu.main([*argv, "--period", "64", "--json", str(path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.rstrip().splitlines()[-1].split("] ", 1)[1].startswith("ALL PASS"), out
    return json.loads(path.read_text()), out


def test_script_end_to_end_on_cpu(tmp_path, capsys):
    """Parts A (numr and NumPy chunks, one worker process) and B (two worker processes), as the GPU run
    does them, with the ratio and scaling lines."""
    data, out = run_script(tmp_path, capsys, "--device", "cpu", "--total-gb", "0.002", "--chunk-gb", "0.0003")
    records = data["records"]
    assert {(r["part"], r["lib"], r["op"], r["workers"]) for r in records} == {
        (part, lib, op, n) for part, n in (("A", 1), ("B", 2)) for lib in ("numr", "numpy")
        for op in ("reduce", "matmul")}
    assert all(r["passed"] and r["n_chunks"] == records[0]["n_chunks"] > 2 for r in records)
    kinds = [e["kind"] for e in data["events"]]
    assert kinds.count("ratio") == 2 and kinds.count("scaling") == 4 and "error" not in kinds, out
    assert not data["failures"]


def test_script_webgpu_part(tmp_path, capsys):
    """Part W (numr chunks on webgpu:0 in a worker process), as it runs after the CUDA parts."""
    if "webgpu:0" not in [str(d) for d in xp.__array_namespace_info__().devices()]:
        pytest.skip("no webgpu:0 adapter")
    data, out = run_script(tmp_path, capsys, "--device", "cpu", "--workers", "1", "--webgpu", "on",
                           "--total-gb", "0.002", "--chunk-gb", "0.0005", "--webgpu-chunk-gb", "0.0005")
    w = [r for r in data["records"] if r["part"] == "W"]
    assert [(r["lib"], r["op"], r["devices"]) for r in w] == [("numr", op, ["webgpu:0"]) for op in ("reduce", "matmul")]
    assert all(r["passed"] and r["peak_bytes"] > 0 for r in w), out
