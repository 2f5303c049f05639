"""benchmarks/memory.py: each program and library in a process of its own, the figures it reports and
its ratios (no figure is asserted against a bound: the instrument is checked, not the library)."""

import json
import sys

import pytest

from benchmarks import memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status (Linux)")
def test_a_child_reports_its_resident_peak_above_the_start():
    r = memory.child("numr:cpu", "heat", "tiny")
    assert r["rss_peak"] >= r["rss_before"] > 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status (Linux)")
def test_main_runs_each_library_apart_and_prints_ratios(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert memory.main(["--size", "tiny", "--programs", "heat", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "heat: RSS peak numpy" in text and "ratio" in text
    report = json.loads(out.read_text())
    assert {r["spec"] for r in report["results"]} == {"numpy", "numr:cpu"}
    assert all(r["rss_peak"] > 0 for r in report["results"])


def test_a_failing_child_is_reported_not_fatal():
    r = memory.measure("no-such-backend", "heat", "tiny")
    assert "error" in r and "no-such-backend" in r["error"]


def test_the_issue_program_is_k_means_then_logistic_regression():
    import numpy as np
    make, run = memory.programs("tiny")["kmeans+logreg (issue 19)"]
    host, params = make(np.random.default_rng(0))
    assert host["X"].shape == (100_000, 32) and params["iters"] == 5 and params["steps"] == 20


def test_a_gpu_row_gives_numr_against_cupy_on_the_same_pool_hook_and_against_torch():
    row = {"numr:cuda:0": {"device_peaks": {"cupy pool hook": 1 << 20, "numr memory_stats": 1 << 20}},
           "cupy": {"device_peaks": {"cupy pool hook": 1 << 21}},
           "torch": {"device_peaks": {"torch max_memory_allocated": 1 << 22}}}
    line = memory._row("kmeans", row, ["numr:cuda:0", "cupy", "torch"], True)
    assert "numr/cupy 0.50" in line and "numr/torch 0.25" in line
    row["cupy"] = {"spec": "cupy", "error": "ModuleNotFoundError: No module named 'cupy'"}
    assert memory._row("kmeans", row, ["numr:cuda:0", "cupy", "torch"], True).startswith("kmeans: ERROR")


def test_numr_on_a_gpu_reports_its_allocator_peak(device):
    if device.kind == "cpu":
        pytest.skip("the device under test is the CPU (the CPU figure is the resident set)")
    r = memory.child(f"numr:{device}", "heat", "tiny")
    assert r["device_peaks"]["numr memory_stats"] > 0
