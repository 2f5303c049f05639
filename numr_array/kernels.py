"""The kernel contract: every kernel a backend implements, declared once.

A :class:`Kernel` gives a kernel's name, its family, how many inputs and outputs a launch passes, and the
keys of its ``params`` (required and optional). The namespace layer launches by these objects
(``launch(dev, K.add, ...)``), never by a name written at the call site; each backend's kernel table must
hold exactly the declared names (checked when a client builds its table, and by tests/test_contract.py).

What a launch passes (the namespace has validated, promoted and allocated everything before):

* inputs: tensors already broadcast to what the kernel reads, NumPy scalars, or None (an absent operand);
  ``VARIADIC`` inputs or outputs mean the count depends on the call (index arrays, nonzero's outputs);
* outputs: tensors the kernel writes;
* params: Python values, frozen at capture time. Every element-wise kernel gets ``dtype``, the dtype its
  operands compute in (their promoted dtype), so that no backend promotes. ``scatter`` gets ``shape``, the
  shape of the indexed selection the value is broadcast to.

This module is a leaf: it imports only the dtypes, so every layer and every backend may import it.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

from . import _dtypes as dt

#: an input or output count that depends on the call
VARIADIC = -1


class Kernel:
    """One declared kernel. Element-wise kernels also carry the accepted dtype ``kinds`` and the
    ``result`` rule of their namespace function ("same": the compute dtype, "bool", or "real": the real
    dtype of the compute dtype)."""

    __slots__ = ("name", "family", "inputs", "outputs", "required", "optional", "kinds", "result")

    def __init__(self, name: str, family: str, inputs: int, outputs: int = 1, required: tuple[str, ...] = (),
                 optional: tuple[str, ...] = (), kinds: tuple[str, ...] = (), result: str = "same"):
        self.name = name
        self.family = family
        self.inputs = inputs
        self.outputs = outputs
        self.required = frozenset(required)
        self.optional = frozenset(optional)
        self.kinds = kinds
        self.result = result

    @property
    def arity(self) -> int:
        """The number of operands of an element-wise kernel."""
        return self.inputs

    @property
    def params(self) -> frozenset[str]:
        """Every params key a launch of this kernel may pass."""
        return self.required | self.optional

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, {self.family!r})"


# --- the element-wise table --------------------------------------------------------------------------
# A row gives the name, the arity, the dtype kinds the function accepts and its result rule; the namespace
# functions are generated from the rows (numr_array/_elementwise.py) and each backend supplies one kernel
# per row. Adding an element-wise function is one row here and one kernel per backend.

ALL_KINDS = ("b",) + dt.NUMERIC_KINDS
NUMERIC = dt.NUMERIC_KINDS
REAL_NUMERIC = dt.INTEGER_KINDS + ("f",)
INTEGER = dt.INTEGER_KINDS
INT_OR_BOOL = ("b",) + dt.INTEGER_KINDS
FLOATING = dt.FLOAT_KINDS
REAL_FLOATING = ("f",)
BOOL = ("b",)
COMPLEX_FLOATING = ("c",)

KIND_WORDS = {
    ALL_KINDS: "any", NUMERIC: "numeric", REAL_NUMERIC: "real numeric", INTEGER: "integer",
    INT_OR_BOOL: "integer or boolean", FLOATING: "floating-point", REAL_FLOATING: "real floating-point",
    BOOL: "boolean", COMPLEX_FLOATING: "complex floating-point",
}


def Op(name: str, arity: int, kinds: tuple[str, ...], result: str = "same") -> Kernel:
    """An element-wise row: its kernel takes ``arity`` operands and the compute dtype."""
    return Kernel(name, "elementwise", arity, 1, ("dtype",), (), kinds, result)


OPS: tuple[Kernel, ...] = (
    Op("abs", 1, NUMERIC, "real"),
    Op("acos", 1, FLOATING), Op("acosh", 1, FLOATING), Op("asin", 1, FLOATING), Op("asinh", 1, FLOATING),
    Op("atan", 1, FLOATING), Op("atanh", 1, FLOATING), Op("cos", 1, FLOATING), Op("cosh", 1, FLOATING),
    Op("exp", 1, FLOATING), Op("expm1", 1, FLOATING), Op("log", 1, FLOATING), Op("log1p", 1, FLOATING),
    Op("log2", 1, FLOATING), Op("log10", 1, FLOATING), Op("sin", 1, FLOATING), Op("sinh", 1, FLOATING),
    Op("sqrt", 1, FLOATING), Op("tan", 1, FLOATING), Op("tanh", 1, FLOATING),
    Op("bitwise_invert", 1, INT_OR_BOOL),
    Op("ceil", 1, REAL_NUMERIC), Op("floor", 1, REAL_NUMERIC), Op("trunc", 1, REAL_NUMERIC),
    Op("conj", 1, NUMERIC), Op("imag", 1, COMPLEX_FLOATING, "real"), Op("real", 1, NUMERIC, "real"),
    Op("isfinite", 1, NUMERIC, "bool"), Op("isinf", 1, NUMERIC, "bool"), Op("isnan", 1, NUMERIC, "bool"),
    Op("logical_not", 1, BOOL),
    Op("negative", 1, NUMERIC), Op("positive", 1, NUMERIC), Op("reciprocal", 1, FLOATING),
    Op("round", 1, NUMERIC), Op("sign", 1, NUMERIC), Op("signbit", 1, REAL_FLOATING, "bool"),
    Op("square", 1, NUMERIC),
    Op("add", 2, NUMERIC), Op("subtract", 2, NUMERIC), Op("multiply", 2, NUMERIC),
    Op("divide", 2, FLOATING), Op("pow", 2, NUMERIC),
    Op("floor_divide", 2, REAL_NUMERIC), Op("remainder", 2, REAL_NUMERIC),
    Op("maximum", 2, REAL_NUMERIC), Op("minimum", 2, REAL_NUMERIC),
    Op("atan2", 2, REAL_FLOATING), Op("copysign", 2, REAL_FLOATING), Op("hypot", 2, REAL_FLOATING),
    Op("logaddexp", 2, REAL_FLOATING), Op("nextafter", 2, REAL_FLOATING),
    Op("bitwise_and", 2, INT_OR_BOOL), Op("bitwise_or", 2, INT_OR_BOOL), Op("bitwise_xor", 2, INT_OR_BOOL),
    Op("bitwise_left_shift", 2, INTEGER), Op("bitwise_right_shift", 2, INTEGER),
    Op("logical_and", 2, BOOL), Op("logical_or", 2, BOOL), Op("logical_xor", 2, BOOL),
    Op("equal", 2, ALL_KINDS, "bool"), Op("not_equal", 2, ALL_KINDS, "bool"),
    Op("greater", 2, REAL_NUMERIC, "bool"), Op("greater_equal", 2, REAL_NUMERIC, "bool"),
    Op("less", 2, REAL_NUMERIC, "bool"), Op("less_equal", 2, REAL_NUMERIC, "bool"),
    # x, then min and max: tensors broadcast to x's shape, NumPy scalars of x's dtype, or None
    Op("clip", 3, REAL_NUMERIC),
)

_V = VARIADIC
_REDUCE = ("axis", "keepdims")  # axis: a tuple of distinct normalised axes

OTHERS: tuple[Kernel, ...] = (
    # creation and copies
    Kernel("copy", "creation", 1),  # casts to the output's dtype; the input is broadcast to the output's shape
    Kernel("fill", "creation", 0, 1, ("value",)),  # value: a NumPy scalar of the output's dtype
    Kernel("arange", "creation", 0, 1, ("start", "step")),
    Kernel("linspace", "creation", 0, 1, ("start", "stop", "endpoint")),
    Kernel("eye", "creation", 0, 1, ("k",)),
    Kernel("tril", "creation", 1, 1, ("k",)),
    Kernel("triu", "creation", 1, 1, ("k",)),
    Kernel("where", "searching", 3),  # condition, x1, x2 (tensors broadcast, or NumPy scalars)
    # manipulation and indexing
    Kernel("repeat", "manipulation", 1, 1, ("repeats", "axis")),
    Kernel("roll", "manipulation", 1, 1, ("shift", "axis")),
    Kernel("gather", "indexing", _V, 1, ("key", "arrays")),  # x, then the index arrays
    Kernel("scatter", "indexing", _V, 1, ("key", "arrays", "shape")),  # value, then the index arrays
    Kernel("take_along_axis", "indexing", 2, 1, ("n", "axis")),
    Kernel("mask_assign", "indexing", 2),
    Kernel("mask_count", "indexing", 1),
    Kernel("index_range", "indexing", 1),  # the min and max of an index array, into a (2,) tensor
    # reductions and scans
    Kernel("sum", "statistical", 1, 1, _REDUCE),
    # acc: the dtype the product accumulates in (the output's, or wider), cast to the output's at the end
    Kernel("prod", "statistical", 1, 1, _REDUCE + ("acc",)),
    Kernel("max", "statistical", 1, 1, _REDUCE),
    Kernel("min", "statistical", 1, 1, _REDUCE),
    Kernel("mean", "statistical", 1, 1, _REDUCE),
    Kernel("var", "statistical", 1, 1, _REDUCE + ("correction",)),
    Kernel("std", "statistical", 1, 1, _REDUCE + ("correction",)),
    Kernel("all", "statistical", 1, 1, _REDUCE),
    Kernel("any", "statistical", 1, 1, _REDUCE),
    Kernel("cumulative_sum", "statistical", 1, 1, ("axis",)),
    Kernel("cumulative_prod", "statistical", 1, 1, ("axis",)),
    Kernel("diff", "utility", 3, 1, ("axis", "n")),  # x, prepend, append (tensors or None)
    # searching, sorting, sets
    Kernel("argmax", "searching", 1, 1, _REDUCE),
    Kernel("argmin", "searching", 1, 1, _REDUCE),
    Kernel("count_nonzero", "searching", 1, 1, _REDUCE),
    Kernel("nonzero", "searching", 1, _V),  # one output per axis of x
    Kernel("searchsorted", "searching", 3, 1, ("side",)),  # x1, x2, sorter (or None)
    Kernel("sort", "sorting", 1, 1, ("axis", "descending", "stable")),
    Kernel("argsort", "sorting", 1, 1, ("axis", "descending", "stable")),
    Kernel("isin", "set", 2, 1, ("invert",)),
    Kernel("unique_sort", "set", 1, 3),  # permutation, run starts, count
    Kernel("unique_gather", "set", 3, _V, ("want",)),  # x, permutation, starts -> the wanted results
    # linear algebra
    Kernel("matmul", "linalg", 2),
    Kernel("tensordot", "linalg", 2, 1, ("axes1", "axes2")),
    Kernel("vecdot", "linalg", 2),
    Kernel("cross", "linalg", 2, 1, ("axis",)),
    Kernel("cholesky", "linalg", 1, 1, ("upper",)),
    Kernel("eigh", "linalg", 1, 2),
    Kernel("eigvalsh", "linalg", 1, 1),
    Kernel("eig", "linalg", 1, 2),
    Kernel("eigvals", "linalg", 1, 1),
    Kernel("qr", "linalg", 1, 2, ("mode",)),
    Kernel("svd", "linalg", 1, 3, ("full_matrices",)),
    Kernel("svdvals", "linalg", 1, 1),
    Kernel("det", "linalg", 1, 1),
    Kernel("slogdet", "linalg", 1, 2),
    Kernel("inv", "linalg", 1, 1),
    Kernel("solve", "linalg", 2, 1),
    Kernel("matrix_power", "linalg", 1, 1, ("n",)),
    Kernel("pinv", "linalg", 2, 1, ("rtol",)),  # x, rtol as an array (or None: then params' rtol)
    Kernel("matrix_rank", "linalg", 2, 1, ("rtol",)),
    Kernel("matrix_norm", "linalg", 1, 1, ("ord",)),
    # ord: 0, 1, 2, inf or -inf (linalg.vector_norm composes the other orders from element-wise functions
    # and reductions, well conditioned where sum(|x|**ord)**(1/ord) is not)
    Kernel("vector_norm", "linalg", 1, 1, ("axes", "keepdims", "ord")),
    # fft
    *(Kernel(n, "fft", 1, 1, ("n", "axis", "norm")) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")),
    *(Kernel(n, "fft", 1, 1, ("s", "axes", "norm")) for n in ("fftn", "ifftn", "rfftn", "irfftn")),
    Kernel("fftfreq", "fft", 0, 1, ("d",)),
    Kernel("rfftfreq", "fft", 0, 1, ("n", "d")),
    Kernel("fftshift", "fft", 1, 1, ("axes",)),
    Kernel("ifftshift", "fft", 1, 1, ("axes",)),
    # random numbers (numr_array/random): the generator's state is a uint32 tensor (6,) on the device,
    # [key0, key1, ctr0, ctr1, ctr2, ctr3] (the 128-bit counter least significant word first), so that a
    # replayed draw reads the counter the previous replay advanced. Element i of a draw comes from
    # philox4x32-10(counter + i, key): dist "bits" (a uint32 output: word 0), "uniform" (float32:
    # (w0 >> 8) * 2**-24; float64: ((w0 >> 5) * 2**26 + (w1 >> 6)) * 2**-53) or "integers" (low +
    # floor(R * range / 2**(32 k)), R the k = 2 words w0 w1 (range <= 2**32) or k = 4 words w0..w3 (range
    # above), w0 most significant; low and range Python ints, range in 1..2**64)
    Kernel("philox", "random", 1, 1, ("dist",), ("low", "range")),
    Kernel("philox_advance", "random", 0, 1, ("n",)),  # the state's counter += n (an int below 2**64)
)

KERNELS: dict[str, Kernel] = {k.name: k for k in OPS + OTHERS}
assert len(KERNELS) == len(OPS) + len(OTHERS), "a kernel is declared twice"

#: the declared kernels as attributes: ``K.add``, ``K.sum``, ...
K = SimpleNamespace(**KERNELS)

#: every params key any kernel takes
PARAM_KEYS: frozenset[str] = frozenset().union(*(k.params for k in KERNELS.values()))

#: set NUMR_CHECK_LAUNCH=1 (the test suite does) to check every launch against its declaration; off, a
#: launch costs nothing extra
CHECK_LAUNCHES = os.environ.get("NUMR_CHECK_LAUNCH", "") not in ("", "0")


def check_launch(kernel: Kernel, inputs, outputs, params: dict) -> None:
    """TypeError unless a launch matches ``kernel``'s declaration (operand counts and params keys)."""
    if type(kernel) is not Kernel or KERNELS.get(kernel.name) is not kernel:
        raise TypeError(f"launch: {kernel!r} is not a declared kernel")
    for what, want, got in (("inputs", kernel.inputs, len(inputs)), ("outputs", kernel.outputs, len(outputs))):
        if want != VARIADIC and want != got:
            raise TypeError(f"launch {kernel.name}: {got} {what}, declared {want}")
    keys = set(params)
    if not kernel.required <= keys or not keys <= kernel.params:
        raise TypeError(f"launch {kernel.name}: params {sorted(keys)}, declared required "
                        f"{sorted(kernel.required)} and optional {sorted(kernel.optional)}")


def check_table(table, backend: str) -> None:
    """RuntimeError unless a backend's kernel table holds exactly the declared kernels."""
    missing = KERNELS.keys() - table.keys()
    extra = table.keys() - KERNELS.keys()
    if missing or extra:
        raise RuntimeError(f"{backend}: the kernel table does not match numr_array/kernels.py "
                           f"(missing: {sorted(missing)}; undeclared: {sorted(extra)})")
