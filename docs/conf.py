"""Sphinx configuration of the numr_array site: ``sphinx-build -W docs <out>`` (tests/test_docs.py runs it).

Pages are Markdown (MyST). The API reference is made at read time from the namespace itself (see
``_api_listing``), so it lists every public function without generated files in the source tree; the
benchmark plots are drawn at build time from the recorded results in docs/benchmark-results/.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_scripts"))  # plot_benchmarks, for the plot directive

import numr_array  # noqa: E402  (importable from the checkout, via the path above)

project = "numr_array"
author = "numr_array contributors"
copyright = "numr_array contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "matplotlib.sphinxext.plot_directive",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_scripts", "benchmark-results", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"undoc-members": False}
autosummary_generate = False  # stub pages would be written into the source tree
napoleon_numpy_docstring = True

plot_include_source = False
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]

html_theme = "pydata_sphinx_theme"
html_title = "numr_array"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path: list[str] = []


def _release() -> str:
    try:
        return importlib.metadata.version("numr-array")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"


release = version = _release()

# --- the API reference ------------------------------------------------------------------------------------
# (section title, module whose __all__ lists the functions); a name appears once, in its first section
API_SECTIONS = [
    ("Creation functions", "numr_array._creation"),
    ("Data type functions", "numr_array._data_type_functions"),
    ("Element-wise functions", "numr_array._elementwise"),
    ("Indexing functions", "numr_array._advanced_indexing"),
    ("Linear algebra functions", "numr_array._linear_algebra_functions"),
    ("Manipulation functions", "numr_array._manipulation"),
    ("Searching functions", "numr_array._searching"),
    ("Set functions", "numr_array._set_functions"),
    ("Sorting functions", "numr_array._sorting"),
    ("Statistical functions", "numr_array._statistical"),
    ("Utility functions", "numr_array._utility"),
    ("Interchange", "numr_array._dlpack"),
    ("Memory", "numr_array._memory"),
    ("NumPy names (see NumPy differences)", "numr_array._numpy_compat"),
    ("NumPy: mathematical functions", "numr_array._np_math"),
    ("NumPy: statistics", "numr_array._np_statistics"),
    ("NumPy: counting and histograms", "numr_array._np_histograms"),
    ("NumPy: array manipulation", "numr_array._np_shape"),
    ("NumPy: indexing, sorting and sets", "numr_array._np_indexing"),
    ("NumPy: polynomials, signals and products", "numr_array._np_polynomial"),
    ("NumPy: creation", "numr_array._np_creation"),
    ("NumPy: files, settings and dtype utilities", "numr_array._np_io"),
]
EXTENSIONS = [("linalg extension", "numr_array.linalg"), ("fft extension", "numr_array.fft")]
OBJECTS = """
Array object, devices, dtypes and capture
-----------------------------------------

.. autoclass:: numr_array.Tensor
   :members:
   :special-members: __array_namespace__, __dlpack__, __dlpack_device__, __getitem__, __setitem__

.. autoclass:: numr_array.Device
   :members: client

.. autofunction:: numr_array.capture

.. autoclass:: numr_array.CapturedGraph
   :members: replay, inputs, outputs, arena_bytes

.. autoclass:: numr_array.CaptureError

.. autofunction:: numr_array.jit

.. autoclass:: numr_array.JitFunction
   :members: signatures

.. autoclass:: numr_array.JitFallbackWarning

.. autoclass:: numr_array.linalg.LinAlgError

.. autofunction:: numr_array.__array_namespace_info__

.. autoclass:: numr_array._info.Info
   :members:
"""


def _public_names(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    return [n for n in getattr(module, "__all__", []) if callable(getattr(module, n, None))]


def _api_listing() -> str:
    """reStructuredText for every public function of the namespace, grouped as the standard groups them."""
    out = []
    seen: set[str] = set()
    for title, module_name in API_SECTIONS:
        names = [n for n in _public_names(module_name) if n not in seen and hasattr(numr_array, n)]
        if module_name.endswith("_elementwise") and "clip" not in names and "clip" not in seen:
            names.append("clip")
        seen.update(names)
        out.append(_section(title, "numr_array", names))
    for title, module_name in EXTENSIONS:
        out.append(_section(title, module_name, _public_names(module_name)))
    out.append(OBJECTS)
    out.append(_device_table())
    return "\n".join(out)


def _device_table() -> str:
    """Per function, the devices that run it natively and how they differ (docs/_scripts/device_support.py:
    made from the kernel declarations, the backends' kernel tables and its per-kernel notes)."""
    import device_support
    title = "Devices per function"
    intro = ("Each function's kernels, found in its code, against each backend's kernel table; the differences "
             "are those of its kernels (details in :doc:`devices`). A function without a kernel makes a view, "
             "reads metadata or works on the host (formatting, files), alike on every device. Whether a call can "
             "be captured depends on its arguments: :doc:`capture` lists what cannot.")
    return "\n".join([title, "-" * len(title), "", intro, "", device_support.table_rst()])


def _section(title: str, module: str, names: list[str]) -> str:
    lines = [title, "-" * len(title), "", f".. currentmodule:: {module}", "", ".. autosummary::", ""]
    lines += [f"   {n}" for n in sorted(names)]
    lines.append("")
    lines += [f".. autofunction:: {n}\n" for n in sorted(names)]
    return "\n".join(lines)


# --- the benchmark plots: one per results file -----------------------------------------------------------
def _benchmark_plots() -> str:
    import plot_benchmarks
    sections = []
    for device in plot_benchmarks.devices():
        sections.append(f"## {device}\n\n```{{eval-rst}}\n.. plot::\n\n   from plot_benchmarks import plot\n"
                        f"   plot({device!r})\n```\n")
    return "\n".join(sections) or "No results are recorded yet."


# markers in pages that are replaced, when Sphinx reads them, by content made from the code and data
GENERATED = {"api": ("<!-- api-listing -->", lambda: "```{eval-rst}\n" + _api_listing() + "\n```"),
             "benchmark-plots": ("<!-- benchmark-plots -->", _benchmark_plots)}


def _inject(app, docname: str, source: list[str]) -> None:
    if docname in GENERATED:
        marker, make = GENERATED[docname]
        source[0] = source[0].replace(marker, make())


def setup(app):
    app.connect("source-read", _inject)
