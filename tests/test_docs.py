"""The documentation site builds with Sphinx, warnings as errors (the CI build of the docs), and holds what
it promises: every page, the API reference of every public function, and the benchmark plots."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import numr_array as xp
from numr_array import fft, linalg

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ["index", "getting-started", "from-numpy", "generic-libraries", "scikit-learn-scipy", "devices", "capture", "distributed",
         "random", "numpy-differences", "conformance", "benchmarks", "benchmark-plots", "architecture", "api"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(DOCS.parent)}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "--no-color", "-b", "html",
                           "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_namespace_layer_helpers_are_not_public():
    for name in ("dlpack_device", "dlpack_export", "getitem", "setitem", "tensor_repr", "to_device", "to_numpy"):
        assert not hasattr(xp, name), name


def test_every_page_is_built(site):
    for page in PAGES:
        assert (site / f"{page}.html").is_file(), f"{page}.html missing"
    index = (site / "index.html").read_text()
    for page in PAGES[1:]:
        assert f'href="{page}.html"' in index, f"{page} is not in the table of contents"


def test_api_reference_documents_every_public_function(site):
    html = (site / "api.html").read_text()
    anchors = set(re.findall(r'id="(numr_array\.[\w.]+)"', html))
    public = {f"numr_array.{n}" for n in dir(xp) if not n.startswith("_")
              and callable(getattr(xp, n)) and not isinstance(getattr(xp, n), type)}
    public |= {f"numr_array.linalg.{n}" for n in linalg.__all__} | {f"numr_array.fft.{n}" for n in fft.__all__}
    assert public - anchors == set(), f"undocumented: {sorted(public - anchors)}"
    assert "numr_array.Tensor" in anchors and "numr_array.capture" in anchors


def test_device_table_lists_every_public_function(site):
    html = (site / "api.html").read_text()
    table = html[html.index('id="devices-per-function"'):]
    rows = re.findall(r'<tr class="row-(?:odd|even)"><td><p><a class="reference internal" href="#numr_array\.([\w.]+)"',
                      table)
    public = {n for n in dir(xp) if not n.startswith("_") and callable(getattr(xp, n))
              and not isinstance(getattr(xp, n), type)}
    public |= {f"linalg.{n}" for n in linalg.__all__} | {f"fft.{n}" for n in fft.__all__}
    assert set(rows) == public, f"missing: {sorted(public - set(rows))}, extra: {sorted(set(rows) - public)}"


def test_device_table_is_made_from_the_kernels():
    sys.path.insert(0, str(DOCS / "_scripts"))
    try:
        import device_support
    finally:
        sys.path.pop(0)
    from numr_array.kernels import KERNELS
    assert set(device_support.NOTES) <= set(KERNELS), sorted(set(device_support.NOTES) - set(KERNELS))
    assert all(set(notes) <= set(device_support.DEVICES) for notes in device_support.NOTES.values())
    rows = {name: (found, notes, native) for name, found, notes, native in device_support.rows()}
    # the walk finds what a function launches, through helpers and closures
    assert rows["add"][0] == ["add"] and rows["linalg.inv"][0] == ["inv"] and "unique_sort" in rows["unique_all"][0]
    assert rows["sin"][1] == {"webgpu": device_support.NOTES["sin"]["webgpu"]} and rows["reshape"][1] == {}
    assert rows["arccos"][0] == rows["acos"][0]
    assert all(native["cpu"] and native["webgpu"] for _, _, native in rows.values())
    assert rows["result_type"][0] == []  # metadata: no kernel


def test_benchmark_plots_are_drawn(site):
    results = sorted((DOCS / "benchmark-results").glob("*.txt"))
    assert results, "no recorded benchmark results"
    images = list((site / "_images").glob("benchmark-plots-*.png"))
    assert len(images) == len(results)
    assert all(p.stat().st_size > 10_000 for p in images)


def test_benchmark_results_parse():
    sys.path.insert(0, str(DOCS / "_scripts"))
    try:
        import plot_benchmarks
    finally:
        sys.path.pop(0)
    rows = plot_benchmarks.parse("machine: x\noperation  numr  ratios\n"
                                 "add, 8 float32 (per call)     4.79us  numpy 6.19x, array-api-strict 0.55x\n"
                                 "100-op chain: eager   705.53us  numpy 4.38x\n")
    assert rows == [("add, 8 float32 (per call)", pytest.approx(4.79e-6), {"numpy": 6.19, "array-api-strict": 0.55}),
                    ("100-op chain: eager", pytest.approx(705.53e-6), {"numpy": 4.38})]
    for path in (DOCS / "benchmark-results").glob("*.txt"):
        assert plot_benchmarks.parse(path.read_text()), f"{path.name} has no result rows"
