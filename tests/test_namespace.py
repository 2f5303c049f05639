"""The public namespace (issue 13 item 5): ``numr_array.__all__`` is exactly what the package exposes, each
name listed once and defined once, with no wrapper of one namespace function by another."""

from __future__ import annotations

import ast
import importlib
import inspect
import pathlib
import pkgutil

import numr_array as xp
from numr_array import _namespace, fft, linalg

PACKAGE = pathlib.Path(xp.__file__).parent
#: modules of the package that are not namespace names: the runtime interface and the contract beside it,
#: which backend authors import by their module path
INTERNAL_MODULES = {m.name for m in pkgutil.iter_modules(xp.__path__) if not m.name.startswith("_")} - {"linalg", "fft", "random"}
#: the standard's two dunder names, which ``dir`` minus underscored names leaves out
DUNDERS = {"__array_api_version__", "__array_namespace_info__"}
#: the family modules whose ``__all__`` together are the namespace functions (the star-import of _namespace)
FAMILIES = [importlib.import_module(f"numr_array.{m}") for m in (
    "_creation", "_data_type_functions", "_elementwise", "_linear_algebra_functions", "_searching",
    "_manipulation", "_statistical", "_utility", "_sorting", "_set_functions", "_advanced_indexing", "_dlpack",
    "_numpy_compat", "_np_math", "_np_statistics", "_np_histograms", "_np_shape", "_np_indexing",
    "_np_polynomial", "_np_creation", "_np_io")]


def _defined(path: pathlib.Path) -> set[str]:
    """The names a module defines at its top level with ``def`` or ``class`` (not imports or aliases)."""
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_all_is_the_exposed_namespace_each_name_once():
    assert len(xp.__all__) == len(set(xp.__all__)), sorted(n for n in xp.__all__ if xp.__all__.count(n) > 1)
    assert INTERNAL_MODULES == {"backends", "errors", "kernels", "runtime"}
    exposed = {n for n in dir(xp) if not n.startswith("_")} - INTERNAL_MODULES
    assert set(xp.__all__) == exposed | DUNDERS
    for name in xp.__all__:
        assert hasattr(xp, name), name


def test_star_import_gives_all():
    ns: dict = {}
    exec("from numr_array import *", ns)
    assert set(ns) - {"__builtins__"} == set(xp.__all__)


def test_each_namespace_function_comes_from_one_family_module():
    for name in _namespace.__all__:
        owners = [m.__name__ for m in FAMILIES if name in m.__all__]
        assert len(owners) == 1, f"{name} is exported by {owners}"
        owner = importlib.import_module(owners[0])
        # the function itself: no second function of the same name wraps it (the _numpy_compat overrides
        # of sum, divide, where, ... were such wrappers)
        assert getattr(xp, name) is getattr(owner, name), f"numr_array.{name} is not {owners[0]}.{name}"
    assert set(_namespace.__all__) <= set(xp.__all__)


def test_each_public_name_is_defined_once_in_the_namespace_layer():
    """``def``/``class`` of a public name in two modules of the main namespace is two functions under one
    name (an internal helper named like a public function included); linalg and fft are namespaces of
    their own (``linalg.trace`` is not NumPy's top-level ``trace``)."""
    modules = [p for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "linalg", "fft")]
    defined = {p.stem: _defined(p) for p in modules}
    for name in xp.__all__:
        where = sorted(stem for stem, names in defined.items() if name in names)
        assert len(where) <= 1, f"{name} is defined in {where}"


def test_the_extensions_list_their_names_once():
    for ext in (linalg, fft):
        assert len(ext.__all__) == len(set(ext.__all__)), ext.__name__
        for name in ext.__all__:
            f = getattr(ext, name)
            assert callable(f), f"{ext.__name__}.{name}"
            # defined there, or the main namespace's own function (matmul, tensordot, vecdot, matrix_transpose)
            assert f.__module__ == ext.__name__ or getattr(xp, name, None) is f, f"{ext.__name__}.{name}"


def test_numpy_superset_signatures_extend_the_standard_ones():
    """The standard functions that take NumPy's argument forms too keep the standard's calls: the
    standard's positional parameters stay positional-only, and its keyword parameters keep their names."""
    sig = inspect.signature
    assert list(sig(xp.sum).parameters) == ["x", "axis", "dtype", "out", "keepdims"]
    assert list(sig(xp.std).parameters) == ["x", "axis", "dtype", "out", "ddof", "keepdims", "correction"]
    assert list(sig(xp.where).parameters) == ["condition", "x1", "x2", "out"]
    assert list(sig(xp.round).parameters) == ["x", "decimals", "out"]
    assert list(sig(xp.divide).parameters) == ["x1", "x2", "out"]
    assert sig(xp.divide).parameters["x1"].kind is inspect.Parameter.POSITIONAL_ONLY
