"""The benchmark instruments (benchmarks/): their checks, error reporting and timing helpers. Timings are
never asserted; only that the scripts measure, check and report."""

import dataclasses
import json
import math

import numpy as np
import pytest

from benchmarks import call_cost, replay_cost, workloads
from benchmarks._backends import load, load_all, numpy_namespace
from benchmarks._timing import runs, side_by_side


def test_check_flags_wrong_values_shapes_counts_and_nonfinite():
    ref = (np.array([1.0, -2.0]),)
    assert workloads.check([np.array([1.0, -2.0], np.float32)], ref) == [0.0]
    assert workloads.check([np.array([1.0, -1.0])], ref) == [0.5]  # normalised by max |ref|
    assert workloads.check([np.array([1.0])], ref) == [math.inf]
    assert workloads.check([np.array([np.nan, -2.0])], ref) == [math.inf]
    assert math.inf in workloads.check([], ref)


def test_every_program_has_every_size_and_a_tolerance_per_output():
    rng = np.random.default_rng(0)
    for p in workloads.PROGRAMS:
        assert set(p.sizes) == {"tiny", "cpu", "gpu"}
        host, params = p.make(rng, **p.sizes["tiny"])
        assert len(p.run(np, **host, **params)) == len(p.tols), p.name


def test_workloads_run_checked_on_numpy_and_numr(device, tmp_path, capsys):
    out = tmp_path / "w.json"
    rc = workloads.main(["--size", "tiny", "--backends", f"numpy,numr:{device}", "--repeat", "2",
                         "--programs", "heat,cg,kmeans", "--json", str(out)])
    report = json.loads(out.read_text())
    assert rc == 0, capsys.readouterr().out
    assert {(r["program"], r["backend"]) for r in report["results"]} == {
        (p, b) for p in ("heat", "cg", "kmeans") for b in ("numpy", f"numr:{device}")}
    for r in report["results"]:
        assert r["ok"] and len(r["times"]) == 2 and r["peak_bytes"] >= 0
    assert "geometric mean" in capsys.readouterr().out


def test_workloads_jit_mode_adds_checked_jit_columns(device, tmp_path, capsys):
    out = tmp_path / "w.json"
    rc = workloads.main(["--size", "tiny", "--backends", f"numr:{device}", "--repeat", "2", "--jit",
                         "--programs", "heat,adam", "--no-memory", "--json", str(out)])
    report = json.loads(out.read_text())
    assert rc == 0, capsys.readouterr().out
    assert {(r["program"], r["backend"]) for r in report["results"]} == {
        (p, b) for p in ("heat", "adam") for b in (f"numr:{device}", f"numr:{device}+jit")}
    assert all(r["ok"] for r in report["results"])
    assert "| eager / jit |" in capsys.readouterr().out


def test_a_failing_check_and_a_raising_backend_are_reported_not_fatal(monkeypatch, capsys):
    def broken(xp, u, *, steps, alpha):
        if xp is numpy_namespace():  # the float64 reference and the NumPy backend are right
            return workloads.heat(xp, u, steps=steps, alpha=alpha)
        return (u * 2.0,)

    def raising(xp, x, h):
        if xp is not np:
            raise RuntimeError("no kernel")
        return workloads.fft_conv(xp, x, h)

    def no_reference(xp, x, h):
        raise AttributeError("module 'numpy' has no attribute 'cumulative_sum'")

    programs = [workloads.Program("heat", broken, workloads.make_heat, "{n}", workloads.PROGRAMS[3].sizes, (1e-5,)),
                workloads.Program("fft_conv", raising, workloads.make_fft_conv, "{n}", workloads.PROGRAMS[6].sizes,
                                  (1e-4,)),
                workloads.Program("cg", no_reference, workloads.make_fft_conv, "{n}", workloads.PROGRAMS[6].sizes,
                                  (1e-4,))]
    monkeypatch.setattr(workloads, "PROGRAMS", programs)
    assert workloads.main(["--size", "tiny", "--backends", "numpy,numr:cpu", "--repeat", "1", "--no-memory"]) == 1
    text = capsys.readouterr().out
    assert "**FAIL** (error" in text and "**ERROR** RuntimeError: no kernel" in text
    assert text.count("**ERROR** float64 reference: AttributeError") == 2


def test_unavailable_backends_are_listed_with_the_reason():
    backends, missing = load_all(["numpy", "nosuch"])
    assert [b.name for b in backends] == ["numpy"]
    assert "nosuch" in missing and "ValueError" in missing["nosuch"]


def test_peak_memory_counts_a_temporary():
    b = load("numr:cpu")
    x = b.put(np.ones(1 << 18, np.float32))  # 1 MiB
    assert b.peak(lambda: x + 1.0) >= 1 << 20


def test_peak_memory_of_numr_on_a_gpu_counts_a_temporary():
    from numr_array.backends import get_runtime
    if get_runtime("webgpu") is None:
        pytest.skip("no WebGPU adapter (wgpu missing or no adapter found)")
    b = load("numr:webgpu:0")  # (the allocator's counters, through numr_array.memory_stats)
    x = b.put(np.ones(1 << 18, np.float32))  # 1 MiB
    assert b.peak(lambda: x + 1.0) >= 1 << 20
    assert b.peak(lambda: None) == 0  # the peak starts afresh at each measurement


def test_call_cost_row_times_what_runs_and_reports_what_raises():
    backends = [load("numpy"), load("numr:cpu")]

    def setup(b):
        if b.name == "numr:cpu":
            raise TypeError("unsupported")
        return call_cost.add(np.float32)(b)

    cells = call_cost.time_row(setup, False, backends, min_time=0.001, gpu_time=0.001, repeat=2)
    assert cells["numpy"] > 0 and cells["numr:cpu"].startswith("ERROR TypeError: unsupported")
    assert call_cost.ratio_pairs(backends) == [("numr:cpu", "numpy")]


def test_timing_helpers_return_seconds_per_call():
    calls = []
    t = side_by_side({"a": lambda: calls.append(1)}, min_time=0.001, repeat=3, reduce=min)
    assert 0 < t["a"] < 0.01 and calls
    assert len(runs(lambda: None, repeat=4, warmup=2)) == 4


def test_a_failing_memory_run_keeps_the_times():
    def no_counter(fn):
        raise RuntimeError("no counter")

    backend = dataclasses.replace(load("numpy"), measure=no_counter)
    (r,) = workloads.run_program(workloads.PROGRAMS[3], "tiny", [backend], repeat=2, warmup=0, memory=True)
    assert r.ok and len(r.times) == 2 and r.peak_bytes is None
    assert "memory **ERROR** RuntimeError: no counter" in workloads._cell(r)


def test_replay_cost_reports_dispatches_and_checks_replay_against_eager(device, capsys):
    rc = replay_cost.main(["--device", str(device), "--programs", "heat,cg", "--min-time", "0.002", "--repeat", "1"])
    out = capsys.readouterr().out
    assert rc == 0, out
    rows = [line.split("|") for line in out.splitlines() if line.startswith(("| heat", "| cg"))]
    assert len(rows) == 2 and all(r[-2].strip() == "PASS" for r in rows), out
    for r in rows:
        if r[4].strip() == "-":  # a CUDA graph: its kernel nodes are not counted
            assert str(device).startswith("cuda"), out
            continue
        launches, dispatches = int(r[3]), int(r[4])
        assert 0 < dispatches <= launches
