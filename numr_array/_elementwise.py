"""Element-wise functions, all from one table: ``kernels.OPS``.

A row says: the function's name, its arity, the dtype kinds it accepts, and how its result dtype follows
from the (promoted) input dtype. The namespace functions below are made from the rows; each backend
supplies one kernel per row, under the row's name, and gets the compute dtype (the operands' promoted
dtype) as ``params["dtype"]``. Adding an element-wise function is one row in numr_array/kernels.py and
one kernel per backend.

Five rows' functions are written out below instead, each the standard's function with NumPy's habits on
inputs the standard leaves to the library (docs/numpy-differences.md): ``divide`` of integer and boolean
arrays (in floating point), ``logical_*`` of numeric arrays (their non-zero elements), and ``round`` with
NumPy's ``decimals``.
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from . import _capture
from . import _dtypes as dt
from . import runtime as _rt
from ._checks import broadcast_shape, broadcast_to_shape, check_out, check_tensor, promote_on
from ._data_type_functions import astype
from ._device import Device
from ._info import default_dtypes_of
from ._launch import _OPERATOR_OPCODES, ELIDE, ELIDE_MIN_BYTES, from_interpreter, launch, result, reusable
from ._tensor import Tensor, _size, contiguous_strides
from .kernels import CHECK_LAUNCHES
from .kernels import KIND_WORDS as _KIND_WORDS
from .kernels import OPS, K, Kernel

#: the cached-plan call in C (numr_array/_speedups.c); without it, the Python path below serves every call
_speedups = _rt.speedups

Op = Kernel  # a row of the table

OPS_BY_NAME = {op.name: op for op in OPS}
_SCALAR_TYPES = (bool, int, float, complex)
_PROMOTION = dt._PROMOTION
_BOOL_DT = dt.bool_
#: the params of an element-wise launch, one frozen dict per compute dtype (no dict built per call)
_COMPUTE = {d: {"dtype": d} for d in dt.ALL_DTYPES}


def _result_dtype(op: Op, dtype: dt.DType) -> dt.DType:
    r = op.result
    if r == "same":
        return dtype
    if r == "bool":
        return _BOOL_DT
    return dt.real_of(dtype)


def _kind_error(op: Op, dtype: dt.DType) -> TypeError:
    return TypeError(f"{op.name}: {dtype.name} is not accepted; {op.name} takes {_KIND_WORDS[op.kinds]} arrays")


def _with_scalar(op: Op, dtype: dt.DType, value) -> tuple[dt.DType, object]:
    """The promoted dtype of an array of ``dtype`` with the Python scalar ``value`` (the standard's rules),
    and the scalar as a NumPy scalar of it, the form kernels take scalar operands in."""
    if type(value) not in _SCALAR_TYPES:
        raise TypeError(f"{op.name}: operands must be arrays or Python scalars, got {type(value).__name__}")
    promoted = dt.promote_scalar(dtype, value, op.name)
    if dtype.kind not in op.kinds and (promoted is dtype or promoted.kind not in op.kinds):
        raise _kind_error(op, dtype)
    if promoted.kind not in op.kinds:  # a complex scalar beside a real array
        raise TypeError(f"{op.name}: a Python complex with a {dtype.name} array gives {promoted.name}, "
                        f"but {op.name} takes {_KIND_WORDS[op.kinds]} arrays")
    try:  # the scalar as a NumPy scalar of the promoted dtype, the form kernels take scalar operands in
        return promoted, promoted.np.type(value)
    except OverflowError:
        raise _overflow(op, promoted, value) from None


# --- per-signature plans ---------------------------------------------------------------------------
# A call's checks, promotion, result dtype and shape, broadcasting decision and kernel binding depend only on
# its signature: the operands' dtypes (or a scalar's type), shapes and device client. The first call of a
# signature runs the checks (raising what they raise) and keeps the outcome as a plan; a repeated call is
# then a dict lookup, a result allocation and the client's bound kernel. Strides are not part of the key:
# the plan only decides whether broadcast views are needed (a matter of shapes), and the kernel reads each
# operand through its own strided view. A loss of any device (``runtime.lost_count``) drops every plan, so
# none keeps a lost client alive, and eager launches then go through ``_dispatch.launch`` and its checks.
#
# A plan's last entry, ``native``, is for the compiled call (numr_array/_speedups.c): where the client runs the
# launch as one NumPy ufunc call (CpuClient.ufunc_launch), ``_speedups.unary``/``binary`` serve a repeated call
# of the signature in C, from the same table and key, and hand everything else to ``_unary_py``/``_binary_py``
# below unchanged. Its ``outs`` are the ``out=`` signatures (dtype, shape, strides; on the plan's device) that check_out
# accepted for the plan and the client writes directly: C looks them up, it never checks an ``out=`` itself.

#: the per-op plan tables (cleared together when a device is lost, or one when it reaches _PLANS_MAX)
_PLANS_BY_NAME: dict[str, dict] = {}
_PLAN_TABLES: list[dict] = []
_PLANS_MAX = 512
_lost_seen = 0


def _bound(client, dev, op: Op, params: dict):
    """``run(inputs, outputs)``: an eager launch of ``op`` with ``params`` on ``client``, its kernel looked up
    once (the client's ``bind``) where the client has one and launches are not contract-checked."""
    bind = getattr(client, "bind", None)
    run = bind(op.name, params) if bind is not None and not CHECK_LAUNCHES else None
    return run or (lambda inputs, outputs: launch(dev, op, inputs, outputs, params))


def _store(plans: dict, key: tuple, plan: tuple) -> tuple:
    global _lost_seen
    if _rt.lost_count != _lost_seen:
        _lost_seen = _rt.lost_count
        forget_plans()
    if len(plans) >= _PLANS_MAX:
        plans.clear()
    plans[key] = plan
    return plan


def _elides(shape: tuple[int, ...], dtype: dt.DType) -> bool:
    """Whether a result of ``shape`` and ``dtype`` may go into an operand of the same (a dead temporary)."""
    return ELIDE and _size(shape) * dtype.itemsize >= ELIDE_MIN_BYTES


def _native(client, op: Op, dtypes: tuple, rdtype: dt.DType, shape: tuple, scalar: tuple | None = None,
            operands: tuple | None = None):
    """A plan's ``native`` entry: None, or the client's launch of ``op`` on operands of ``dtypes`` (the arrays'
    dtypes, and the scalar's) as _speedups.c runs it followed by the result's bytes, how a scalar operand is
    passed, the accepted ``out=`` signatures, and the result's NumPy dtype (the layouts _speedups.c reads).
    The launch is a CPU client's ufunc call (``ufunc_launch``), or a GPU client's direct kernel
    (``direct_launch``) for the ``operands`` it was planned with: per operand, in order, (shape, strides) of
    an array, None for the scalar.

    ``scalar``: (its type, its dtype, the array's dtype) for a plan with a Python scalar operand. It is passed
    as a NumPy scalar of its dtype, as the Python path does; a Python float beside a real floating-point
    array of its dtype is passed as it is, since NumPy then converts it to that dtype alike (NEP 50)."""
    if _speedups is None:
        return None
    launch = getattr(client, "ufunc_launch", None)
    if launch is not None:
        # one complex element: NumPy's loop into a result it allocates is not the one into a given out (a
        # product without fused multiply-add), whose bits the Python path gives
        part = None if rdtype.kind == "c" and _size(shape) == 1 else \
            launch(op.name, [d.np for d in dtypes], rdtype.np)
    else:
        direct = getattr(client, "direct_launch", None) if operands is not None else None
        part = direct(op.name, [d.np for d in dtypes], rdtype.np, shape, operands) if direct else None
    if part is None:
        return None
    return part + _tail(rdtype, shape, scalar)


def _tail(rdtype: dt.DType, shape: tuple, scalar: tuple | None = None) -> tuple:
    """The entries every native part ends with (_speedups.c reads them from the end): the result's bytes, how
    a scalar operand is passed (see _native), the accepted ``out=`` signatures, the result's NumPy dtype."""
    sctype = None
    if scalar is not None:
        kind, sdtype, xdtype = scalar
        if not (kind is float and sdtype is xdtype and sdtype.kind == "f"):
            sctype = sdtype.np.type
    return rdtype.itemsize * _size(shape), sctype, {}, rdtype.np


def _accept_out(client, native, o: Tensor) -> None:
    """Record that check_out accepted ``o`` (on the plan's device) for a plan with ``native``, where the client
    writes it directly."""
    if native is not None and client.writes_directly(o._shape, o._strides, o._dtype):
        native[-2][o._dtype, o._shape, o._strides] = None


def forget_plans() -> None:
    """Empty every plan table (and the compiled call's kept plans)."""
    for table in _PLAN_TABLES:
        table.clear()
    if _speedups is not None:
        _speedups.forget()


def _plan_unary(op: Op, plans: dict, key: tuple, x) -> tuple:
    """(result dtype, shape, strides, params, device, alloc, run, elide, native) of ``op`` on ``x``'s
    signature; ``elide``: whether the result may go into x, if x is a dead temporary (the Python path decides
    that, by reference counts: the compiled call hands it every call whose operand may be one); ``native``:
    the compiled call's part."""
    dtype = x._dtype
    if dtype.kind not in op.kinds:
        raise _kind_error(op, dtype)
    dev = x._dev
    client = dev._client or dev.client
    params = _COMPUTE[dtype]
    shape = x._shape
    rdtype = _result_dtype(op, dtype)
    elide = rdtype is dtype and _elides(shape, rdtype)
    return _store(plans, key, (rdtype, shape, contiguous_strides(shape), params, dev, client.alloc_tensor,
                               _bound(client, dev, op, params), elide,
                               _native(client, op, (dtype,), rdtype, shape, operands=((shape, x._strides),))))


def _plan_binary(op: Op, plans: dict, key: tuple, x1, x2) -> tuple:
    """(result dtype, shape, strides, params, device, alloc, run, broadcast, elide, native) of ``op`` on two
    arrays' signature; ``broadcast``: whether an operand needs a broadcast view; ``elide``: which operands the
    result may go into, if dead temporaries (1: x1, 2: x2, 3: either); ``native`` as for _plan_unary."""
    dev = x1._dev
    if x2._dev is not dev:
        raise ValueError(f"{op.name}: arrays are on different devices ({dev} and {x2._dev}); "
                         "move one explicitly with to_device()")
    d1 = x1._dtype
    d2 = x2._dtype
    dtype = _PROMOTION[d1, d2]
    if dtype is None or (dtype is not d1 and dtype is not d2):
        dtype = promote_on(dev, d1, d2, op.name)
    # an operand of another kind is taken where it promotes to one the op takes (NumPy's bool + int)
    if d1.kind not in op.kinds and (d1 is dtype or dtype.kind not in op.kinds):
        raise _kind_error(op, d1)
    if d2.kind not in op.kinds and (d2 is dtype or dtype.kind not in op.kinds):
        raise _kind_error(op, d2)
    s1 = x1._shape
    s2 = x2._shape
    shape = s1 if s1 == s2 else broadcast_shape((s1, s2), op.name)
    client = dev._client or dev.client
    params = _COMPUTE[dtype]
    rdtype = _result_dtype(op, dtype)
    elide = 0
    if _elides(shape, rdtype):
        elide = (s1 == shape and d1 is rdtype) + 2 * (s2 == shape and d2 is rdtype)
    return _store(plans, key, (rdtype, shape, contiguous_strides(shape), params, dev, client.alloc_tensor,
                               _bound(client, dev, op, params), s1 != shape or s2 != shape, elide,
                               _native(client, op, (d1, d2), rdtype, shape,
                                       operands=((s1, x1._strides), (s2, x2._strides)))))


def _plan_scalar(op: Op, plans: dict, key: tuple, x, value, reflected: bool) -> tuple:
    """(result dtype, shape, strides, params, device, alloc, run, scalar dtype, elide, native) of ``op`` on an
    array and a Python scalar of ``value``'s type (``reflected``: the scalar is the first operand); each call
    still converts its value (OverflowError is per value); ``elide``, ``native`` as for _plan_unary."""
    dtype, _ = _with_scalar(op, x._dtype, value)
    dev = x._dev
    client = dev._client or dev.client
    params = _COMPUTE[dtype]
    shape = x._shape
    rdtype = _result_dtype(op, dtype)
    dtypes = (dtype, x._dtype) if reflected else (x._dtype, dtype)
    elide = rdtype is x._dtype and _elides(shape, rdtype)
    return _store(plans, key, (rdtype, shape, contiguous_strides(shape), params, dev, client.alloc_tensor,
                               _bound(client, dev, op, params), dtype, elide,
                               _native(client, op, dtypes, rdtype, shape, (type(value), dtype, x._dtype),
                                       (None, (shape, x._strides)) if reflected else ((shape, x._strides), None))))


def _overflow(op: Op, dtype: dt.DType, value) -> OverflowError:
    return OverflowError(f"{op.name}: the Python int {value} does not fit in {dtype.name}")


#: the references an operator's operand has outside _unary/_binary when it is a dead temporary, where the
#: operators are Python methods (no compiled module): the interpreter's stack slot, the Tensor method's frame
#: and the operator function's (``operator_function``). Where they are compiled, their slots (_speedups.c,
#: TensorBase) pass the count themselves: 1, or -1 where no operand can be a dead temporary.
_OPERATOR = 3


def _dead(x: Tensor, held: int) -> bool:
    """Whether the result of the calling _unary/_binary may go into its operand ``x``, held ``held`` times by
    the chain above that function (``reusable``; for an operator, also that the interpreter called it)."""
    return held >= 0 and reusable(x, held + 2) and (held != _OPERATOR or from_interpreter(4))


def _unary_py(op: Op, plans: dict, x, out, held: int):
    """``op`` of ``x`` into ``out`` or a new tensor, or into x itself when x is a dead temporary: ``held``,
    the references to x that the caller's chain holds (its frames' variables), says when it is."""
    if type(x) is not Tensor:
        raise TypeError(f"{op.name}: x must be a numr_array array, got {type(x).__name__}")
    key = (x._dtype, x._shape, x._dev._client)
    plan = plans.get(key)
    if plan is None:
        plan = _plan_unary(op, plans, key, x)
    rdtype, shape, strides, params, dev, alloc, run, elide, native = plan
    if _capture.capturing or _rt.lost_count:  # the launch's capture bookkeeping and liveness checks
        o = result(out, shape, rdtype, dev, op.name)
        launch(dev, op, (x,), (o,), params)
        return o
    if out is None:
        if elide and _dead(x, held):
            o = Tensor(x._buf, rdtype, shape, strides, 0, dev, x._view)
        else:
            buf, view = alloc(shape, rdtype)
            o = Tensor(buf, rdtype, shape, strides, 0, dev, view)
    else:
        o = check_out(out, shape, rdtype, dev, op.name)
        _accept_out(dev._client, native, o)
    run((x,), (o,))
    return o


def _binary_py(op: Op, plans: dict, x1, x2, out, held: int):
    """``op`` of ``x1`` and ``x2`` into ``out`` or a new tensor, or into an operand that is a dead temporary
    (``held``: the references to each operand that the caller's chain holds, as for _unary)."""
    if type(x1) is Tensor:
        if type(x2) is Tensor:
            key = (x1._dtype, x2._dtype, x1._shape, x2._shape, x1._dev._client, x2._dev._client)
            plan = plans.get(key)
            if plan is None:
                plan = _plan_binary(op, plans, key, x1, x2)
            rdtype, shape, strides, params, dev, alloc, run, bcast, elide, native = plan
            if bcast:
                x1 = broadcast_to_shape(x1, shape)
                x2 = broadcast_to_shape(x2, shape)
        else:
            key = (x1._dtype, type(x2), x1._shape, x1._dev._client)
            plan = plans.get(key)
            if plan is None:
                plan = _plan_scalar(op, plans, key, x1, x2, False)
            rdtype, shape, strides, params, dev, alloc, run, sdtype, elide, native = plan
            try:
                x2 = sdtype.np.type(x2)
            except OverflowError:
                raise _overflow(op, sdtype, x2) from None
    elif type(x2) is Tensor:
        key = (type(x1), x2._dtype, x2._shape, x2._dev._client)
        plan = plans.get(key)
        if plan is None:
            plan = _plan_scalar(op, plans, key, x2, x1, True)
        rdtype, shape, strides, params, dev, alloc, run, sdtype, elide, native = plan
        elide *= 2  # (the array is x2)
        try:
            x1 = sdtype.np.type(x1)
        except OverflowError:
            raise _overflow(op, sdtype, x1) from None
    else:
        raise TypeError(f"{op.name}: at least one of x1, x2 must be a numr_array array, "
                        f"got {type(x1).__name__} and {type(x2).__name__}")
    if _capture.capturing or _rt.lost_count:  # the launch's capture bookkeeping and liveness checks
        o = result(out, shape, rdtype, dev, op.name)
        launch(dev, op, (x1, x2), (o,), params)
        return o
    if out is None:
        if elide & 1 and _dead(x1, held):
            o = Tensor(x1._buf, rdtype, shape, strides, 0, dev, x1._view)
        elif elide & 2 and _dead(x2, held):
            o = Tensor(x2._buf, rdtype, shape, strides, 0, dev, x2._view)
        else:
            buf, view = alloc(shape, rdtype)
            o = Tensor(buf, rdtype, shape, strides, 0, dev, view)
    else:
        o = check_out(out, shape, rdtype, dev, op.name)
        _accept_out(dev._client, native, o)
    run((x1, x2), (o,))
    return o


# The compiled call (``_c_unary``/``_c_binary``) serves a cached plan that has a native part and returns
# NotImplemented for anything else; each caller then runs the Python path itself, in its own frame, so that
# an operand's reference count is what _unary_py/_binary_py expect (a C frame in between would hold one more).
# ``held`` is the caller's, as for the Python path: where the plan may elide, an operand held no more than
# that (and the call's own argument) may be a dead temporary, and the call goes to the Python path, which
# decides. Tensor's operators are compiled slots (_speedups.c, TensorBase) that make the same calls from C.
def _calibrate_compiled() -> bool:
    """Whether the compiled calls see an operand's references as their elision expects (_speedups.c, ``dead``
    and ``fallback_held``): from a namespace function, a temporary held by the caller's chain (``held``) and
    once more as the call's argument, a named one once more again; in an operator slot, a temporary held by
    the interpreter's stack slot alone, a named one once more; in the Python path a slot calls, a temporary
    held ``FALLBACK_HELD`` times above it. Probed through chains shaped as the namespace's (_launch._calibrate
    probes the Python path's); where they disagree, nothing is elided in C and the slots pass the Python
    path a count that elides nothing."""
    refs, probe = _speedups.refs, _speedups.Probe

    def function(x, /, *, out=None):  # a namespace function calling _c_binary (held 1)
        return refs(x)

    def python_path(x):  # _binary_py called by an operator slot (held FALLBACK_HELD, + its own, + refs')
        return refs(x)

    named = probe()
    return (function(probe()) == 2 and function(named) == 3 and probe() + 1 == 1 and named + 1 == 2
            and -probe() == 1 and -named == 2 and probe() - python_path == _speedups.FALLBACK_HELD + 2
            and named - python_path == _speedups.FALLBACK_HELD + 3)


if _speedups is not None:
    _speedups.configure(Tensor, _rt.Buffer, Device, _capture, _rt)
    _speedups.configure_elision(_OPERATOR_OPCODES, ELIDE and _calibrate_compiled())
    _c_unary, _c_binary = _speedups.unary, _speedups.binary
else:
    def _c_unary(op: Op, plans: dict, x, out, held: int):
        return NotImplemented

    def _c_binary(op: Op, plans: dict, x1, x2, out, held: int):
        return NotImplemented


def _scalar_bound(b: int | float, dtype: dt.DType):
    """A Python bound of clip as a NumPy scalar of ``dtype``; an integer bound beyond the dtype's range
    bounds nothing on that side, so it is clamped to the range (NumPy would raise OverflowError)."""
    if dtype.kind in dt.INTEGER_KINDS:
        info = np.iinfo(dtype.np)
        b = min(max(b, int(info.min)), int(info.max))
    return dtype.np.type(b)


def clip(x, /, min=None, max=None, *, out=None):
    """Clamp each element of ``x`` to [min, max]; min and max are None, scalars, or arrays that broadcast
    with x (the result has their broadcast shape and x's dtype)."""
    op = K.clip
    if type(x) is not Tensor:
        raise TypeError(f"clip: x must be a numr_array array, got {type(x).__name__}")
    dtype = x._dtype
    if dtype.kind not in op.kinds:
        raise _kind_error(op, dtype)
    dev = x._dev
    bounds = []
    shapes = [x._shape]
    compute = dtype  # the dtype x and the array bounds compare in
    for name, b in (("min", min), ("max", max)):
        if b is None:
            bounds.append(None)
        elif type(b) is Tensor:
            if b._dev is not dev:
                raise ValueError(f"clip: {name} is on {b._dev} but x is on {dev}")
            if b._dtype.kind not in op.kinds:
                raise _kind_error(op, b._dtype)
            if dt.STANDARD_PROMOTION[dtype, b._dtype] is None:  # the result keeps x's dtype: no mixed kinds
                raise TypeError(f"clip: no type promotion between x ({dtype.name}) and {name} ({b._dtype.name})")
            compute = _PROMOTION[compute, b._dtype]
            bounds.append(b)
            shapes.append(b._shape)
        else:
            if type(b) not in (int, float) or not dt.scalar_compatible(dtype, b):
                raise TypeError(f"clip: {name}={b!r} cannot bound a {dtype.name} array")
            bounds.append(_scalar_bound(b, dtype))
    # x, min and max broadcast together (the result has x's dtype, whatever the bounds' dtypes)
    shape = broadcast_shape(shapes, "clip") if len(shapes) > 1 else x._shape
    x = broadcast_to_shape(x, shape)
    bounds = [broadcast_to_shape(b, shape) if type(b) is Tensor else b for b in bounds]
    o = result(out, shape, dtype, dev, "clip")
    launch(dev, op, (x, bounds[0], bounds[1]), (o,), _COMPUTE[compute])
    return o


def _plans(name: str) -> dict:
    """The plan table of the element-wise function ``name`` (one per function, shared by its callers)."""
    table = _PLANS_BY_NAME.get(name)
    if table is None:
        table = _PLANS_BY_NAME[name] = {}
        _PLAN_TABLES.append(table)
    return table


def _make(op: Op):
    """The namespace function of the row ``op``, with its operator's forms: ``_operator``, the Python
    operator's call (Tensor's Python methods, without the compiled module), and ``_slot``, the compiled
    operator slot's (op, plan table, Python path), see _speedups.c, TensorBase."""
    plans = _plans(op.name)
    if op.arity == 1:
        def f(x, /, *, out=None):
            r = _c_unary(op, plans, x, out, 1)
            return _unary_py(op, plans, x, out, 1) if r is NotImplemented else r

        def operator_function(x):
            return _unary_py(op, plans, x, None, _OPERATOR)
        f._slot = (op, plans, _unary_py)
        params = [inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)]
        doc = f"Element-wise {op.name} of x (accepts {_KIND_WORDS[op.kinds]} dtypes)."
    else:
        def f(x1, x2, /, *, out=None):
            r = _c_binary(op, plans, x1, x2, out, 1)
            return _binary_py(op, plans, x1, x2, out, 1) if r is NotImplemented else r

        def operator_function(x1, x2):
            return _binary_py(op, plans, x1, x2, None, _OPERATOR)
        f._slot = (op, plans, _binary_py)
        params = [inspect.Parameter("x1", inspect.Parameter.POSITIONAL_ONLY),
                  inspect.Parameter("x2", inspect.Parameter.POSITIONAL_ONLY)]
        doc = (f"Element-wise {op.name} of x1 and x2, broadcast together (accepts {_KIND_WORDS[op.kinds]} "
               "dtypes; either may be a Python scalar).")
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    f.__name__ = f.__qualname__ = op.name
    f.__module__ = "numr_array"
    f.__doc__ = doc + "\n\n``out``: an array of exactly the result's shape and dtype on the same device; returned."
    f.__signature__ = inspect.Signature(params)
    f._operator = operator_function
    return f


# --- the rows with NumPy's habits, written out (one function each, calling _unary/_binary directly) -------
_NON_FLOAT = dt.INTEGER_KINDS + ("b",)
_NON_FLOAT_DTYPES = frozenset(d for d in dt.ALL_DTYPES if d.kind in _NON_FLOAT)  # one set lookup per division
_NUMERIC_DTYPES = frozenset(d for d in dt.ALL_DTYPES if d.kind in dt.NUMERIC_KINDS)


def _quotient_dtype(x1, x2) -> dt.DType:
    """The real floating-point dtype NumPy divides in when an integer or boolean array takes part: that of
    a floating-point operand, unless a 32- or 64-bit integer needs the default (float64) precision; the
    device's default floating-point dtype otherwise."""
    arrays = [x for x in (x1, x2) if type(x) is Tensor]
    default = default_dtypes_of(arrays[0]._dev)["default_float"]
    floats = [x._dtype for x in arrays if x._dtype.kind in dt.FLOAT_KINDS]
    if not floats:
        return default
    small = all(x._dtype.kind == "b" or x._dtype.bits <= 16 for x in arrays if x._dtype.kind in _NON_FLOAT)
    return dt.real_of(floats[0] if small else dt.promote(floats[0], default, "divide"))


# the plan tables of the functions written out below (shared with the generated ones of the same name)
_PLANS_DIVIDE = _plans("divide")
_PLANS_NOT_EQUAL = _plans("not_equal")
_PLANS_LOGICAL_AND = _plans("logical_and")
_PLANS_LOGICAL_OR = _plans("logical_or")
_PLANS_LOGICAL_XOR = _plans("logical_xor")
_PLANS_LOGICAL_NOT = _plans("logical_not")
_PLANS_ROUND = _plans("round")


def divide(x1: Tensor | int | float | complex, x2: Tensor | int | float | complex, /, *,
           out: Tensor | None = None) -> Tensor:
    """Element-wise x1 / x2, broadcast together (also the ``/`` operator; either may be a Python scalar).
    Integer and boolean arrays, whose quotient the standard leaves implementation-defined, divide as in
    NumPy: in floating point, by NumPy's promotion (alone or with a Python scalar: the device's default
    floating-point dtype, float64 where it has it)."""
    if getattr(x1, "_dtype", None) in _NON_FLOAT_DTYPES or getattr(x2, "_dtype", None) in _NON_FLOAT_DTYPES:
        dtype = _quotient_dtype(x1, x2)
        x1, x2 = (int(x) if type(x) is bool
                  else astype(x, dtype) if type(x) is Tensor and x._dtype.kind in _NON_FLOAT else x
                  for x in (x1, x2))
    r = _c_binary(K.divide, _PLANS_DIVIDE, x1, x2, out, 1)
    return _binary_py(K.divide, _PLANS_DIVIDE, x1, x2, out, 1) if r is NotImplemented else r


def _divide_operator(x1, x2):
    """``/``: divide, its operands' references counted as an operator's (see ``operator_function``)."""
    if getattr(x1, "_dtype", None) in _NON_FLOAT_DTYPES or getattr(x2, "_dtype", None) in _NON_FLOAT_DTYPES:
        return divide(x1, x2)
    return _binary_py(K.divide, _PLANS_DIVIDE, x1, x2, None, _OPERATOR)


def _divide_python(op: Op, plans: dict, x1, x2, out, held: int):
    """``/`` as the compiled operator slot's Python path (see ``_make``): _binary_py's arguments."""
    if getattr(x1, "_dtype", None) in _NON_FLOAT_DTYPES or getattr(x2, "_dtype", None) in _NON_FLOAT_DTYPES:
        return divide(x1, x2)
    return _binary_py(op, plans, x1, x2, out, held + 1 if held >= 0 else held)  # (+ this frame's reference)


divide._operator = _divide_operator
divide._slot = (K.divide, _PLANS_DIVIDE, _divide_python)


def _truth(x):
    """A numeric array's truth values (non-zero), as NumPy's logical functions read them."""
    if type(x) is not Tensor or x._dtype not in _NUMERIC_DTYPES:
        return x
    r = _c_binary(K.not_equal, _PLANS_NOT_EQUAL, x, 0, None, 2)
    return _binary_py(K.not_equal, _PLANS_NOT_EQUAL, x, 0, None, 2) if r is NotImplemented else r


def logical_and(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical AND of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    a, b = _truth(x1), _truth(x2)
    del x1, x2  # (a bool operand is then held by a alone: a dead temporary may take the result)
    r = _c_binary(K.logical_and, _PLANS_LOGICAL_AND, a, b, out, 1)
    return _binary_py(K.logical_and, _PLANS_LOGICAL_AND, a, b, out, 1) if r is NotImplemented else r


def logical_or(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical OR of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    a, b = _truth(x1), _truth(x2)
    del x1, x2  # (a bool operand is then held by a alone: a dead temporary may take the result)
    r = _c_binary(K.logical_or, _PLANS_LOGICAL_OR, a, b, out, 1)
    return _binary_py(K.logical_or, _PLANS_LOGICAL_OR, a, b, out, 1) if r is NotImplemented else r


def logical_xor(x1: Tensor | bool, x2: Tensor | bool, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical XOR of x1 and x2, broadcast together (either may be a Python bool); numeric
    arrays also count, as their non-zero elements (NumPy)."""
    a, b = _truth(x1), _truth(x2)
    del x1, x2  # (a bool operand is then held by a alone: a dead temporary may take the result)
    r = _c_binary(K.logical_xor, _PLANS_LOGICAL_XOR, a, b, out, 1)
    return _binary_py(K.logical_xor, _PLANS_LOGICAL_XOR, a, b, out, 1) if r is NotImplemented else r


def logical_not(x: Tensor, /, *, out: Tensor | None = None) -> Tensor:
    """Element-wise logical NOT of x; a numeric array counts as its non-zero elements (NumPy)."""
    a = _truth(x)
    del x  # (a bool operand is then held by a alone: a dead temporary may take the result)
    r = _c_unary(K.logical_not, _PLANS_LOGICAL_NOT, a, out, 1)
    return _unary_py(K.logical_not, _PLANS_LOGICAL_NOT, a, out, 1) if r is NotImplemented else r


def round(x: Tensor, /, decimals: int = 0, *, out: Tensor | None = None) -> Tensor:
    """Element-wise rounding of x to the nearest integer, half to even (accepts numeric dtypes). NumPy's
    ``decimals`` rounds to that many decimal places (negative: to tens, hundreds, ...) by scaling with
    10**decimals, as NumPy does, so it inherits NumPy's floating-point inexactness (``round(2.675, 2)`` is
    2.67)."""
    decimals = operator.index(decimals)
    if decimals == 0 or (type(x) is Tensor and x._dtype.kind in dt.INTEGER_KINDS and decimals > 0):
        r = _c_unary(K.round, _PLANS_ROUND, x, out, 1)
        return _unary_py(K.round, _PLANS_ROUND, x, out, 1) if r is NotImplemented else r
    check_tensor(x, "round")
    if x._dtype.kind in dt.INTEGER_KINDS:
        raise TypeError(f"round: decimals={decimals} on {x._dtype.name} arrays is not supported; "
                        "cast to a floating-point dtype first")
    if x._dtype.kind not in dt.FLOAT_KINDS:
        raise TypeError(f"round: decimals needs a numeric array, got {x._dtype.name}")
    # NumPy's own steps, so that results agree to the last bit: scale up, round half to even, scale back
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)  # (abs is the element-wise function here)
    if decimals > 0:
        return divide(_unary_py(K.round, _PLANS_ROUND, multiply(x, scale), None, 0), scale, out=out)
    return multiply(_unary_py(K.round, _PLANS_ROUND, divide(x, scale), None, 0), scale, out=out)


_WRITTEN_OUT = ("divide", "logical_and", "logical_or", "logical_xor", "logical_not", "round", "clip")
for _op in OPS:
    if _op.name not in _WRITTEN_OUT:
        globals()[_op.name] = _make(_op)

__all__ = [op.name for op in OPS]
