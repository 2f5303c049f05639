"""The 13 dtypes of the array API standard, their kinds, and type promotion.

Promotion follows the standard's table where it defines a result. Where it leaves the result to the
implementation (mixing kinds: bool with numbers, integers with floating point; int64 with uint64; an array
with a Python scalar of a higher kind), numr follows NumPy 2 (NEP 50), as a NumPy drop-in must:
``int32 + float32 -> float64``, ``int64 + uint64 -> float64``, ``int array + 1.5 -> float64``.
"""

from __future__ import annotations

import numpy as np


class DType:
    """numr's own record of one of the 13 dtypes of the standard, behind the public dtype objects.

    The public dtypes (``numr_array.float32``, ``Tensor.dtype``, ``result_type``'s result, ...) are NumPy's own
    ``numpy.dtype`` objects, as CuPy's arrays' are: libraries that test ``isinstance(dtype, np.dtype)``
    (xarray, pandas) take them, they hash and compare as NumPy dtypes do, and ``np.dtype(xp.float32) is
    xp.float32``. Inside numr a tensor keeps this record (``Tensor._dtype``) instead: its ``name`` is a slot
    (``np.dtype.name`` is computed, 2 us a read), it hashes by identity in C (every call plan is keyed on it),
    and it holds what numr reads often (``bits``); ``np`` is the public ``numpy.dtype``. Instances are
    singletons; ``check_dtype`` maps any dtype argument to one. It still speaks NumPy's dtype protocol
    (``np.dtype(d)`` reads ``dtype``; ``kind`` is NumPy's letter; other attributes are the NumPy dtype's) and
    equals the NumPy dtype, its scalar type and its names.
    """

    __slots__ = ("name", "kind", "itemsize", "np", "dtype", "bits")

    def __init__(self, name: str):
        self.name = name
        self.np = self.dtype = np.dtype(name)
        self.kind = self.np.kind
        self.itemsize = self.np.itemsize
        self.bits = self.itemsize * 8

    def __repr__(self) -> str:
        return f"numr_array.{self.name}"

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if type(other) is DType:
            return self is other
        if isinstance(other, (np.dtype, str, type)):
            try:
                return self.np == np.dtype(other)
            except TypeError:  # a string or type NumPy does not know as a dtype
                return False
        return NotImplemented

    # Hashed by identity, in C: dtypes key every call plan, and a Python __hash__ (to hash as the NumPy
    # dtype) costs 0.1 us a key. NumPy's scalar types do the same (np.float32 == np.dtype("float32"), with
    # other hashes); np.dtype(d) is the key to use beside NumPy dtypes.
    __hash__ = object.__hash__

    def __getattr__(self, name: str):
        if name.startswith("_") or name in DType.__slots__:  # not set yet (unpickling), or private
            raise AttributeError(name)
        return getattr(self.np, name)

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = DType("bool")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
float32 = DType("float32")
float64 = DType("float64")
complex64 = DType("complex64")
complex128 = DType("complex128")

ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}
# by the id of the public dtype object (those 13 NumPy dtypes live as long as the DTypes that hold them): the
# fastest way from a public dtype to its DType
BY_PUBLIC_ID = {id(d.np): d for d in ALL_DTYPES}

# NumPy's kind letters, which DType.kind holds
INTEGER_KINDS = ("i", "u")
FLOAT_KINDS = ("f", "c")
NUMERIC_KINDS = INTEGER_KINDS + FLOAT_KINDS

# The kind names isdtype accepts, and the dtype kinds each one covers.
KIND_GROUPS = {
    "bool": ("b",),
    "signed integer": ("i",),
    "unsigned integer": ("u",),
    "integral": INTEGER_KINDS,
    "real floating": ("f",),
    "complex floating": ("c",),
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
    """A ``dtype=`` argument as one of the 13 DType objects: a public dtype (a NumPy dtype), a DType, or what
    NumPy takes as that dtype (a NumPy scalar type, a name such as ``"float32"`` or ``"f4"``, and as in NumPy
    and CuPy the Python types ``bool``, ``int``, ``float``, ``complex``: bool, int64, float64, complex128);
    TypeError naming ``func`` and the value for anything else (float16, strings, objects, ...)."""
    d = BY_PUBLIC_ID.get(id(dtype))  # the public dtypes first
    if d is not None:
        return d
    if type(dtype) is DType:
        return dtype
    if isinstance(dtype, (np.dtype, str, type)):
        try:
            npdtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{func}: dtype {dtype!r} is not a data type") from None
        d = _BY_NP.get(npdtype)
        if d is not None and npdtype.byteorder in "=|":
            return d
        raise TypeError(f"{func}: dtype {dtype!r} ({npdtype}) is not supported; numr_array has "
                        f"{', '.join(d.name for d in ALL_DTYPES)}")
    raise TypeError(f"{func}: dtype must be a data type such as numr_array.float32, got {dtype!r}")


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
        if ka == "b":
            return a
        return a if a.bits >= b.bits else b
    if {ka, kb} == {"i", "u"}:
        s, u = (a, b) if ka == "i" else (b, a)
        bits = max(s.bits, 2 * u.bits)
        return {8: int8, 16: int16, 32: int32, 64: int64}.get(bits)
    if {ka, kb} == {"f", "c"}:
        bits = max(real_of(a).bits, real_of(b).bits)
        return complex64 if bits == 32 else complex128
    return None


# The standard's table (None where it defines no result): can_cast reads only this one.
STANDARD_PROMOTION = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}
# Every pair: the standard's result, else NumPy's (an implementation-defined promotion in the standard).
_PROMOTION = {(a, b): r if r is not None else _BY_NP[np.promote_types(a.np, b.np)]
              for (a, b), r in STANDARD_PROMOTION.items()}


def promote(a: DType, b: DType, func: str) -> DType:
    """The promoted dtype of ``a`` and ``b``: the standard's, or NumPy's where the standard defines none."""
    return _PROMOTION[a, b]


def scalar_compatible(dtype: DType, value) -> bool:
    """Whether a Python scalar may become a 0-D array of ``dtype`` (the standard's scalar rules)."""
    t = type(value)
    kind = dtype.kind
    if t is bool:
        return kind == "b"
    if t is int:
        return kind in NUMERIC_KINDS
    if t is float:
        return kind in FLOAT_KINDS
    if t is complex:
        return kind == "c"
    return False


def promote_scalar(dtype: DType, value, func: str) -> DType:
    """The dtype of ``array <op> scalar`` for an array of ``dtype``: the array's own dtype where the scalar's
    kind fits it; else, as NumPy 2 (NEP 50), the scalar's kind at the array's precision for a complex beside
    a real floating-point array, the array's dtype for a bool beside a
    numeric array, and the scalar's default dtype (int64, float64, complex128) beside a bool
    or integer array. TypeError for what is not a Python bool, int, float or complex."""
    if scalar_compatible(dtype, value):
        return dtype
    t = type(value)
    if t is complex and dtype.kind == "f":
        return complex_of(dtype)
    if t is bool and dtype.kind in NUMERIC_KINDS:
        return dtype
    if t in _SCALAR_DEFAULTS:
        return _SCALAR_DEFAULTS[t]
    raise TypeError(f"{func}: a Python {t.__name__} cannot be combined with a {dtype.name} array")


_SCALAR_DEFAULTS = {int: int64, float: float64, complex: complex128}


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


def isdtype(dtype, kind) -> bool:
    """The standard's ``isdtype``: whether ``dtype`` is ``kind`` (a dtype, a kind name, or a tuple of them)."""
    dtype = check_dtype(dtype, "isdtype")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str) and kind in KIND_GROUPS:
        return dtype.kind in KIND_GROUPS[kind]
    if isinstance(kind, (DType, np.dtype, type)):
        return dtype is check_dtype(kind, "isdtype")
    if isinstance(kind, str):
        raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(KIND_GROUPS)}")
    raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of them, got {kind!r}")
