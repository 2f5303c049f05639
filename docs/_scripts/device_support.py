"""Which devices run each public function natively, and how they differ: the API reference's device table.

Made from the code, so that it cannot fall behind it:

* the kernels a function launches are found by walking its code: the names it uses that are declared
  kernels (numr_array/kernels.py), through the numr_array functions and closures it calls;
* a device runs a function natively when its backend's kernel table holds each of those kernels (each
  table must hold exactly the declared kernels, so today every device runs every function natively; a
  backend that ever left one out would show here);
* (whether a call can be captured depends on its arguments, e.g. ``where`` with one argument reads the
  data on the host, so it is not derived here: capture.md lists what cannot be captured);
* what differs per device is written once per kernel in ``NOTES`` below (devices.md gives the details),
  and every function launching that kernel shows it; tests/test_docs.py checks each key is a declared
  kernel and every public function has a row.
"""

from __future__ import annotations

import dis
import inspect
import types

import numpy as np

import numr_array
from numr_array import fft, kernels, linalg

DEVICES = ("cpu", "cuda", "webgpu")

_LINALG_ERROR = "singular or indefinite input gives non-finite values, not LinAlgError"
_CUSOLVER = "runs eagerly, not inside capture (CuPy refuses cuSOLVER calls on a capturing stream)"
_NO_F64 = "without shader-f64: the driver's float32 builtins (accuracy a few ulp)"

#: kernel -> {device kind: how that device differs}. The details are in devices.md.
NOTES: dict[str, dict[str, str]] = {
    **{k: {"webgpu": _NO_F64} for k in ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
                                         "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
                                         "atanh", "atan2", "pow", "logaddexp")},
    "divide": {"webgpu": "without shader-f64: float32 division is the driver's (WGSL allows 2.5 ulp)"},
    "prod": {"webgpu": "without shader-f64: float32 products accumulate in float32, in tree order"},
    "cholesky": {"cuda": _CUSOLVER, "webgpu": "NaN from the first non-positive pivot, not LinAlgError"},
    "inv": {"cuda": _CUSOLVER, "webgpu": _LINALG_ERROR},
    "solve": {"cuda": _CUSOLVER, "webgpu": _LINALG_ERROR},
    "matrix_power": {"webgpu": "n < 0 of a singular matrix gives non-finite values, not LinAlgError"},
    "eig": {"cuda": _CUSOLVER, "webgpu": "NaN where the QR iteration does not converge; lavapipe: up to 127x127"},
    "eigvals": {"cuda": _CUSOLVER, "webgpu": "NaN where the QR iteration does not converge; lavapipe: up to 127x127"},
    "eigh": {"cuda": _CUSOLVER},
    "eigvalsh": {"cuda": _CUSOLVER},
    "svd": {"cuda": _CUSOLVER},
    "svdvals": {"cuda": _CUSOLVER},
    "qr": {"cuda": _CUSOLVER, "webgpu": "lavapipe: up to 21845 rows"},
    "pinv": {"cuda": _CUSOLVER},
    "matrix_rank": {"cuda": _CUSOLVER},
    "det": {"cuda": _CUSOLVER},
    "slogdet": {"cuda": _CUSOLVER},
    "matrix_norm": {"cuda": "ord 2, -2 and 'nuc' run eagerly, not inside capture (cuSOLVER)"},
    "fftfreq": {"webgpu": "without shader-f64: computed in float32"},
    "rfftfreq": {"webgpu": "without shader-f64: computed in float32"},
}


def public_functions() -> dict[str, object]:
    """Every public function of the namespace and its two extensions, by the name the reference gives."""
    out = {n: getattr(numr_array, n) for n in dir(numr_array) if not n.startswith("_")
           and callable(getattr(numr_array, n)) and not isinstance(getattr(numr_array, n), type)}
    out.update({f"linalg.{n}": getattr(linalg, n) for n in linalg.__all__})
    out.update({f"fft.{n}": getattr(fft, n) for n in fft.__all__})
    return out


def _references(code: types.CodeType) -> list[tuple[str, ...]]:
    """The global names a code object (and the code nested in it) loads, each with the attribute it then
    reads, if any: ("K", "add"), ("_capture", "check_host_read"), ("helper",)."""
    refs: list[tuple[str, ...]] = []
    stack = [code]
    while stack:
        c = stack.pop()
        stack.extend(x for x in c.co_consts if isinstance(x, types.CodeType))
        ins = list(dis.get_instructions(c))
        for i, op in enumerate(ins):
            if op.opname in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME"):
                name = op.argval
                nxt = ins[i + 1] if i + 1 < len(ins) else None
                if nxt is not None and nxt.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    refs.append((name, nxt.argval))
                else:
                    refs.append((name,))
    return refs


def _walk(obj, found: set[str], seen: set[int]) -> None:
    """Add the kernels ``obj`` may launch, in any of its argument forms, to ``found``."""
    func = inspect.unwrap(obj) if callable(obj) else obj
    if not isinstance(func, types.FunctionType) or id(func) in seen:
        return
    if not (func.__module__ or "").startswith("numr_array") or func.__module__.startswith("numr_array.backends"):
        return
    seen.add(id(func))
    closure = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    for ref in _references(func.__code__):
        if ref[0] in closure:
            try:
                target = closure[ref[0]].cell_contents
            except ValueError:  # an empty cell
                continue
        elif ref[0] in func.__globals__:
            target = func.__globals__[ref[0]]
        else:
            continue
        if len(ref) == 2 and (target is kernels.K or isinstance(target, types.ModuleType)):
            target = getattr(target, ref[1], None)
        if isinstance(target, kernels.Kernel):
            found.add(target.name)
        else:
            _walk(target, found, seen)


def kernel_tables() -> dict[str, set[str] | None]:
    """The kernel names each backend's table holds; None where it cannot be built here (no CuPy)."""
    from numr_array.backends.array_module_kernels import make_kernels
    tables: dict[str, set[str] | None] = {"cpu": set(make_kernels(np))}
    try:
        import cupy
        tables["cuda"] = set(make_kernels(cupy))
    except ImportError:  # the CUDA table is the same family modules over CuPy: checked where CuPy is
        tables["cuda"] = None
    from numr_array.backends.webgpu._kernels import make_kernels as webgpu_kernels
    tables["webgpu"] = set(webgpu_kernels())
    return tables


def rows() -> list[tuple[str, list[str], dict[str, str], dict[str, bool | None]]]:
    """(name, kernels, notes per device, native per device) for every public function."""
    tables = kernel_tables()
    out = []
    for name, func in sorted(public_functions().items()):
        found: set[str] = set()
        _walk(func, found, set())
        notes: dict[str, list[str]] = {}
        for k in sorted(found):
            for dev, note in NOTES.get(k, {}).items():
                if note not in notes.setdefault(dev, []):
                    notes[dev].append(note)
        native = {d: (None if tables[d] is None else found <= tables[d]) for d in DEVICES}
        out.append((name, sorted(found), {d: "; ".join(v) for d, v in notes.items()}, native))
    return out


def table_rst() -> str:
    """The device table as a reStructuredText list-table."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 20 10 10 10 50", "",
             "   * - Function", "     - cpu", "     - cuda", "     - webgpu", "     - Differences"]
    mark = {True: "native", False: "**no**", None: "native (\\*)"}
    for name, found, notes, native in rows():
        cells = [mark[native[d]] for d in DEVICES] if found else ["no kernel"] * 3
        diff = "; ".join(f"{d}: {notes[d]}" for d in DEVICES if d in notes)
        lines += [f"   * - :func:`~numr_array.{name}`", *(f"     - {c}" for c in cells), f"     - {diff}"]
    lines += ["", ("(\\*) The CUDA table (the CPU's kernel modules over CuPy) could not be built where this page "
                   "was built (no CuPy); a CUDA client checks that it holds every kernel when it starts."), ""]
    return "\n".join(lines)
