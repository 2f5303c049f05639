"""The 13 dtypes of the array API standard, their kinds, and type promotion.

Promotion follows the standard's table exactly: mixing kinds (integer with floating, bool with numbers)
or int64 with uint64 has no defined result and raises TypeError, as in array-api-strict.
"""

from __future__ import annotations

import numpy as np


class DType:
    """A data type of the standard. Instances are singletons; compare with ``==`` or ``is``."""

    __slots__ = ("name", "kind", "itemsize", "np", "bits")

    def __init__(self, name: str, kind: str):
        self.name = name
        self.kind = kind
        self.np = np.dtype(name)
        self.itemsize = self.np.itemsize
        self.bits = self.itemsize * 8

    def __repr__(self) -> str:
        return f"numr_array.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = DType("bool", "bool")
int8 = DType("int8", "signed integer")
int16 = DType("int16", "signed integer")
int32 = DType("int32", "signed integer")
int64 = DType("int64", "signed integer")
uint8 = DType("uint8", "unsigned integer")
uint16 = DType("uint16", "unsigned integer")
uint32 = DType("uint32", "unsigned integer")
uint64 = DType("uint64", "unsigned integer")
float32 = DType("float32", "real floating")
float64 = DType("float64", "real floating")
complex64 = DType("complex64", "complex floating")
complex128 = DType("complex128", "complex floating")

ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}

INTEGER_KINDS = ("signed integer", "unsigned integer")
FLOAT_KINDS = ("real floating", "complex floating")
NUMERIC_KINDS = INTEGER_KINDS + FLOAT_KINDS

# The kind names isdtype accepts, and the dtype kinds each one covers.
KIND_GROUPS = {
    "bool": ("bool",),
    "signed integer": ("signed integer",),
    "unsigned integer": ("unsigned integer",),
    "integral": INTEGER_KINDS,
    "real floating": ("real floating",),
    "complex floating": ("complex floating",),
    "numeric": NUMERIC_KINDS,
}


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(npdtype) -> DType:
    """The DType for a NumPy dtype; TypeError for one the standard lacks (float16, str, object...)."""
    try:
        return _BY_NP[np.dtype(npdtype)]
    except (KeyError, TypeError):
        raise TypeError(f"numr_array has no dtype matching NumPy's {npdtype!r}") from None


def check_dtype(dtype, func: str) -> DType:
    """Validate a ``dtype=`` argument: one of the 13 DType objects."""
    if type(dtype) is not DType:
        raise TypeError(f"{func}: dtype must be a numr_array dtype such as numr_array.float32, got {dtype!r}")
    return dtype


def real_of(dtype: DType) -> DType:
    """The real dtype of the same precision (complex64 -> float32)."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def complex_of(dtype: DType) -> DType:
    return {float32: complex64, float64: complex128}.get(dtype, dtype)


def _promote_pair(a: DType, b: DType) -> DType | None:
    if a is b:
        return a
    ka, kb = a.kind, b.kind
    if ka == kb:
        if ka == "bool":
            return a
        return a if a.bits >= b.bits else b
    if {ka, kb} == {"signed integer", "unsigned integer"}:
        s, u = (a, b) if ka == "signed integer" else (b, a)
        bits = max(s.bits, 2 * u.bits)
        return {8: int8, 16: int16, 32: int32, 64: int64}.get(bits)
    if {ka, kb} == {"real floating", "complex floating"}:
        bits = max(real_of(a).bits, real_of(b).bits)
        return complex64 if bits == 32 else complex128
    return None


_PROMOTION = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote(a: DType, b: DType, func: str) -> DType:
    """The standard's promoted dtype of ``a`` and ``b``; TypeError where the standard defines none."""
    r = _PROMOTION[a, b]
    if r is None:
        raise TypeError(f"{func}: no type promotion between {a.name} and {b.name} in the array API standard")
    return r


def scalar_compatible(dtype: DType, value) -> bool:
    """Whether a Python scalar may become a 0-D array of ``dtype`` (the standard's scalar rules)."""
    t = type(value)
    kind = dtype.kind
    if t is bool:
        return kind == "bool"
    if t is int:
        return kind in NUMERIC_KINDS
    if t is float:
        return kind in FLOAT_KINDS
    if t is complex:
        return kind == "complex floating"
    return False


def promote_scalar(dtype: DType, value, func: str) -> DType:
    """The dtype of ``array <op> scalar`` for an array of ``dtype``: the array's own dtype, or for a Python
    complex beside a real floating-point array the complex dtype of its precision; TypeError otherwise."""
    if scalar_compatible(dtype, value):
        return dtype
    if type(value) is complex and dtype.kind == "real floating":
        return complex_of(dtype)
    raise TypeError(f"{func}: a Python {type(value).__name__} cannot be combined with a {dtype.name} array")


def default_dtype_of_scalar(value, default_float: DType = float64, default_integral: DType = int64,
                            default_complex: DType = complex128) -> DType:
    """The dtype a Python scalar gets alone (``asarray(1.5)``, ``full(s, 1)``): the device's defaults."""
    t = type(value)
    if t is bool:
        return bool_
    if t is int:
        return default_integral
    if t is float:
        return default_float
    if t is complex:
        return default_complex
    raise TypeError(f"expected a Python scalar, got {t.__name__}")


def isdtype(dtype: DType, kind) -> bool:
    """The standard's ``isdtype``: whether ``dtype`` is ``kind`` (a dtype, a kind name, or a tuple of them)."""
    check_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if type(kind) is DType:
        return dtype is kind
    if isinstance(kind, str):
        if kind not in KIND_GROUPS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(KIND_GROUPS)}")
        return dtype.kind in KIND_GROUPS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of them, got {kind!r}")
