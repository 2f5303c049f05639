"""The kernel contract and the layering: every backend implements exactly the kernels numr_array/kernels.py
declares, no backend imports a namespace-layer module, and numr_array/ has no import cycle (function-level
imports included)."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import numr_array as xp
from numr_array import kernels
from numr_array.kernels import KERNELS, OPS, PARAM_KEYS, K, check_launch, check_table

PACKAGE = pathlib.Path(xp.__file__).parent
BACKENDS = PACKAGE / "backends"

#: what a backend may import from numr_array outside numr_array.backends
BACKEND_MAY_IMPORT = {"numr_array.runtime", "numr_array._dtypes", "numr_array._tensor", "numr_array.kernels",
                      "numr_array.errors"}


# --- the declared set against each backend -----------------------------------------------------------

def test_declaration_is_consistent():
    assert len(KERNELS) == 142
    assert all(k.family == "elementwise" and k.required == {"dtype"} for k in OPS)
    assert {k.family for k in KERNELS.values() if k not in OPS}.isdisjoint({"elementwise"})
    assert all(getattr(K, name) is k for name, k in KERNELS.items())


def test_cpu_table_is_the_declared_set():
    from numr_array.backends.array_module_kernels import make_kernels
    assert set(make_kernels(np)) == set(KERNELS)


def test_cuda_table_is_the_declared_set():
    """The CUDA client's table is the NumPy-API kernels bound to CuPy (checked with NumPy above); with
    CuPy present, bound to it; its direct launcher serves a subset of the element-wise rows."""
    tree = ast.parse((BACKENDS / "cuda" / "_client.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "make_kernels"]
    assert calls, "the CUDA client no longer builds its table with array_module_kernels.make_kernels"
    direct = next(n for n in ast.parse((BACKENDS / "cuda" / "_direct_elementwise.py").read_text()).body
                  if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "BINARY")
    names = {k.value for k in direct.value.keys}
    assert names <= {k.name for k in OPS if k.arity == 2}
    cupy = pytest.importorskip("cupy")
    from numr_array.backends.array_module_kernels import make_kernels
    assert set(make_kernels(cupy)) == set(KERNELS)


def test_webgpu_table_is_the_declared_set():
    pytest.importorskip("wgpu")
    from numr_array.backends.webgpu._kernels import make_kernels
    assert set(make_kernels()) == set(KERNELS)


def test_a_family_module_that_fails_to_import_fails_loudly(monkeypatch):
    from numr_array.backends.webgpu import _kernels
    monkeypatch.setattr(_kernels, "FAMILIES", _kernels.FAMILIES + ("k_missing",))
    with pytest.raises(ModuleNotFoundError, match="k_missing"):
        _kernels.make_kernels()


def test_a_table_that_misses_or_adds_a_kernel_is_refused():
    table = dict.fromkeys(KERNELS)
    check_table(table, "test")
    del table["add"]
    with pytest.raises(RuntimeError, match="missing: \\['add'\\]"):
        check_table(table, "test")
    table.update(add=None, extra=None)
    with pytest.raises(RuntimeError, match="undeclared: \\['extra'\\]"):
        check_table(table, "test")


def test_check_launch():
    assert kernels.CHECK_LAUNCHES  # tests/conftest.py turns the check on for the whole suite
    x = xp.ones(3)
    check_launch(K.add, (x, x), (x,), {"dtype": x.dtype})
    with pytest.raises(TypeError, match="params"):
        check_launch(K.add, (x, x), (x,), {})
    with pytest.raises(TypeError, match="params"):
        check_launch(K.sum, (x,), (x,), {"axis": (0,), "keepdims": False, "n": 1})
    with pytest.raises(TypeError, match="1 inputs, declared 2"):
        check_launch(K.matmul, (x,), (x,), {})
    with pytest.raises(TypeError, match="not a declared kernel"):
        check_launch("add", (x, x), (x,), {"dtype": x.dtype})


def _params_read(tree: ast.AST) -> set[str]:
    """The string keys a module reads from a kernel's params (``p["k"]``, ``params["k"]``, ``p.get("k")``)."""
    keys = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and getattr(n.value, "id", None) in ("p", "params") \
                and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
            keys.add(n.slice.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" \
                and getattr(n.func.value, "id", None) in ("p", "params") and n.args \
                and isinstance(n.args[0], ast.Constant):
            keys.add(n.args[0].value)
    return keys


@pytest.mark.parametrize("module", sorted(str(p.relative_to(PACKAGE)) for p in BACKENDS.rglob("*.py")))
def test_backends_read_only_declared_params(module):
    undeclared = _params_read(ast.parse((PACKAGE / module).read_text())) - PARAM_KEYS
    assert not undeclared, f"{module} reads params keys no kernel declares: {sorted(undeclared)}"


# --- imports ----------------------------------------------------------------------------------------

def _module_name(path: pathlib.Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


MODULES = {_module_name(p)[0]: p for p in PACKAGE.rglob("*.py")}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (annotations only, never executed)."""
    skip = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING":
            skip.update(id(m) for m in ast.walk(n) if isinstance(m, (ast.Import, ast.ImportFrom)))
    return skip


def imports_of(name: str) -> set[str]:
    """The numr_array modules ``name`` imports, wherever the import statement is (top level, in a function)."""
    path = MODULES[name]
    _, is_package = _module_name(path)
    tree = ast.parse(path.read_text())
    skip = _type_checking_only(tree)
    found = set()
    for n in ast.walk(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.Import):
            targets = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = name.split(".")[:len(name.split(".")) - n.level + (1 if is_package else 0)]
                prefix = ".".join(base + ([n.module] if n.module else []))
            else:
                prefix = n.module or ""
            # ``from pkg import mod`` imports the module pkg.mod; ``from mod import name`` imports mod
            targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in n.names]
        else:
            continue
        for t in targets:
            while t not in MODULES and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in MODULES and t != name:
                found.add(t)
    return found


def test_imports_of_sees_function_level_imports():
    assert "numr_array.backends" in imports_of("numr_array._device")
    assert "numr_array.kernels" in imports_of("numr_array.backends.webgpu._kernels")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("numr_array.backends")))
def test_backends_import_no_namespace_module(module):
    bad = {m for m in imports_of(module) if not m.startswith("numr_array.backends") and m not in BACKEND_MAY_IMPORT}
    assert not bad, f"{module} imports namespace-layer modules {sorted(bad)}"


@pytest.mark.parametrize("module", sorted(BACKEND_MAY_IMPORT))
def test_what_backends_may_import_is_below_the_namespace(module):
    """The modules a backend may import import nothing of the namespace layer either."""
    assert imports_of(module) <= BACKEND_MAY_IMPORT


def test_no_import_cycle():
    graph = {m: imports_of(m) for m in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycle = path[path.index(d):] + [d]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if d not in state:
                visit(d, path + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
