"""NumPy's dispatch protocols on Tensor: NEP 13 ``__array_ufunc__`` and NEP 18 ``__array_function__``.

A NumPy call on tensors (``np.sin(t)``, ``np.sum(t, axis=0)``, ``t + np.ones(3)``, ``np.concatenate([t, t])``,
``scipy.special.expm1(t)``) runs numr's own function of the same name on the tensors' device and returns
tensors, as CuPy does. NumPy's arguments are translated to the numr function's by NumPy's signature
(NumPy's ``a`` is numr's ``x``, positional NumPy arguments that numr takes by keyword, ...); an argument numr
lacks, given a value other than NumPy's default (``where=``, ``initial=``, ``order='F'``), is a TypeError
naming it. What numr lacks entirely runs on the CPU through NumPy itself on the tensors' zero-copy host
views, its array results wrapped back into tensors; on any other device it is a TypeError naming the
function and the device: nothing goes to the host and back unasked.

Mixing: a NumPy array beside CPU tensors becomes a CPU tensor (without a copy); beside tensors of another
device it is a TypeError (copy it over explicitly), as in CuPy. NumPy scalars (and 0-D NumPy arrays) are
Python scalars. ``like=`` creation (``np.asarray(data, like=t)``, ``np.empty(3, like=t)``) makes the
tensor on ``t``'s device.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import _dtypes as dt
from . import _namespace as ns
from ._tensor import Tensor

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)

#: NumPy's ufuncs that numr has under another name (the rest share NumPy's name, aliases included)
_UFUNC_NAMES = {"rint": "round"}
#: ufuncs of other libraries (scipy.special) that compute what NumPy's ufunc of that name computes
_FOREIGN_UFUNCS = frozenset({"expm1", "log1p", "exp2", "cbrt"})
#: ``ufunc.reduce`` and ``ufunc.accumulate`` as numr functions
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
           "logical_or": "any"}
_ACCUMULATE = {"add": "cumulative_sum", "multiply": "cumulative_prod"}
#: the numr namespace of each NumPy module whose functions numr implements (the package, its linalg and fft:
#: set by install, since this module cannot import the package)
_MODULES: dict[str, ModuleType] = {}
#: NumPy's creation functions numr has under another name (``like=`` calls)
_CREATION_NAMES = {"asanyarray": "asarray", "ascontiguousarray": "asarray"}
#: what a ufunc's operands may be (NumPy's subclasses of ndarray are not: they defer to theirs)
_OPERAND_TYPES = frozenset({Tensor, np.ndarray, bool, int, float, complex, list, tuple})
#: NumPy's arguments that numr's function of that name satisfies whatever their value (numr sorts stably,
#: which every ``kind`` allows)
_SATISFIED = {"sort": frozenset({"kind"}), "argsort": frozenset({"kind"})}
#: NumPy's arguments that every numr function satisfies at this value: its results are row-major (dask asks
#: for ``order="C"`` of ``zeros_like`` and the like)
_ALWAYS = {"order": "C"}
#: ufunc keywords with the only value numr computes
_UFUNC_DEFAULTS = {"casting": "same_kind", "order": "K", "subok": True, "where": True}

_signatures: dict[Callable, inspect.Signature | None] = {}
_ufunc_functions: dict[np.ufunc, Callable | None] = {}


def _signature(f: Callable) -> inspect.Signature | None:
    s = _signatures.get(f, 0)
    if s == 0:
        try:
            s = inspect.signature(f)
        except (TypeError, ValueError):
            s = None
        _signatures[f] = s
    return s


# --- operands --------------------------------------------------------------------------------------------

def _devices(obj, found: set) -> None:
    """Add the devices of the tensors in ``obj`` (nested in lists and tuples) to ``found``."""
    if type(obj) is Tensor:
        found.add(obj._dev)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _devices(item, found)


def _device(label: str, *objs):
    found: set = set()
    for o in objs:
        _devices(o, found)
    if len(found) > 1:
        raise ValueError(f"{label}: tensors on different devices ({', '.join(sorted(map(str, found)))}); "
                         "move them to one with to_device()")
    return found.pop() if found else None


def _numr_operands(obj, dev, label: str):
    """``obj`` with NumPy scalars as Python scalars and NumPy arrays as tensors on ``dev`` (the CPU, without
    a copy); TypeError for a NumPy array beside tensors of another device."""
    if type(obj) is Tensor:
        return obj
    if (isinstance(obj, np.generic) or type(obj) is np.ndarray) and obj.ndim == 0 and obj.dtype.kind in "biufc":
        return obj.item()
    if type(obj) is np.ndarray:
        if dev.kind != "cpu":
            raise TypeError(f"{label}: a NumPy array cannot be combined with {dev} tensors (numr_array does not "
                            f"copy between the host and {dev} implicitly); move it with "
                            f"numr_array.asarray(a, device='{dev}') first")
        try:
            return ns.asarray(obj, device=dev, copy=False)
        except (TypeError, ValueError) as e:  # a dtype or layout numr lacks (float16, strings, ...)
            raise type(e)(f"{label}: {e}") from None
    if isinstance(obj, (list, tuple)):
        return type(obj)(_numr_operands(item, dev, label) for item in obj)
    return obj


def _host(obj, label: str):
    """``obj`` with its (CPU) tensors as their zero-copy NumPy views."""
    if type(obj) is Tensor:
        return ns.to_numpy(obj, label)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_host(item, label) for item in obj)
    return obj


def _wrapped(r, dev, outs: dict):
    """NumPy's result as tensors on ``dev``: arrays and scalars of the standard's dtypes (adopted without a
    copy), the ``out`` tensors for their host views; anything else (str, bool, other dtypes) unchanged."""
    if isinstance(r, (np.ndarray, np.generic)):
        t = outs.get(id(r))
        if t is not None:
            return t
        if r.dtype in dt._BY_NP and r.dtype.byteorder in "=|":
            return ns.asarray(np.asarray(r), device=dev, copy=False)
        return r
    if isinstance(r, (list, tuple)):
        items = [_wrapped(item, dev, outs) for item in r]
        return type(r)(*items) if hasattr(r, "_fields") else type(r)(items)  # (NumPy's named tuples too)
    return r


def _on_host(dev, label: str, call: Callable, args: tuple, kwargs: dict):
    """``call`` (NumPy's own) on the host views of the CPU tensors in args and kwargs, its result wrapped;
    TypeError on any other device."""
    if dev.kind != "cpu":
        raise TypeError(f"{label}: numr_array does not implement it, and implicit conversion of {dev} tensors to "
                        "NumPy is not allowed (it would copy to the host unasked); copy explicitly with "
                        "x.to_device('cpu'), or use a numr_array function")
    host_args = _host(args, label)
    host_kwargs = {k: _host(v, label) for k, v in kwargs.items()}
    outs = {}
    out, host_out = kwargs.get("out"), host_kwargs.get("out")
    if out is not None:
        pairs = zip(out, host_out) if isinstance(out, tuple) else ((out, host_out),)
        outs = {id(h): o for o, h in pairs if type(o) is Tensor}
    return _wrapped(call(*host_args, **host_kwargs), dev, outs)


# --- __array_ufunc__ -------------------------------------------------------------------------------------

def _ufunc_function(ufunc: np.ufunc) -> Callable | None:
    """numr's function for ``ufunc``: NumPy's own ufuncs and the foreign ones that compute the same."""
    f = _ufunc_functions.get(ufunc, 0)
    if f == 0:
        name = ufunc.__name__
        f = None
        if getattr(np, name, None) is ufunc or name in _FOREIGN_UFUNCS:
            f = getattr(_MODULES["numpy"], _UFUNC_NAMES.get(name, name), None)
            f = f if callable(f) and not isinstance(f, type) else None
        _ufunc_functions[ufunc] = f
    return f


def _shown(v) -> str:
    """A value for an error message: an array by its shape and dtype."""
    if isinstance(v, (Tensor, np.ndarray)):
        return f"<{type(v).__name__} of shape {v.shape} and dtype {v.dtype.name}>"
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _check_ufunc_kwargs(kwargs: dict, label: str) -> None:
    for k, v in kwargs.items():
        if k in _UFUNC_DEFAULTS and (v is _UFUNC_DEFAULTS[k] or (type(v) is str and v == _UFUNC_DEFAULTS[k])):
            continue
        raise TypeError(f"{label}: numr_array does not support {k}={_shown(v)}")


def _write(out, result, label: str):
    """``result`` stored into the ``out`` tensor (its shape; a dtype the result promotes to) and ``out``
    returned; nothing written on an error."""
    if out._shape != result._shape:
        raise ValueError(f"{label}: out has shape {out._shape} but the result has shape {result._shape}")
    if dt._PROMOTION[result._dtype, out._dtype] is not out._dtype:
        raise TypeError(f"{label}: out has dtype {out._dtype.name} but the result is {result._dtype.name}")
    ns.setitem(out, ..., result)
    return out


def _out_of(kwargs: dict, nout: int, label: str):
    out = kwargs.pop("out", None)
    if out is None:
        return None
    out = out if isinstance(out, tuple) else (out,)
    if len(out) != nout or any(type(o) is not Tensor for o in out):
        raise TypeError(f"{label}: out must be {nout} numr_array array(s), got {out!r}")
    return out


def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs, **kwargs):
    """NEP 13: a NumPy ufunc (or one of its methods) on tensors, run by numr (see the module's doc)."""
    own = getattr(np, ufunc.__name__, None) is ufunc
    label = (f"numpy.{ufunc.__name__}" if own else f"the ufunc {ufunc.__name__}") + (
        "" if method == "__call__" else f".{method}")
    for x in inputs + tuple(kwargs.get("out") or ()):
        if type(x) not in _OPERAND_TYPES and not isinstance(x, np.generic):
            return NotImplemented
    dev = _device(label, inputs, kwargs.get("out"))
    f = _ufunc_function(ufunc)
    name = ufunc.__name__
    if method == "__call__" and f is not None:
        args = _numr_operands(inputs, dev, label)
        out = _out_of(kwargs, ufunc.nout, label)
        dtype = kwargs.pop("dtype", None)
        _check_ufunc_kwargs(kwargs, label)
        if dtype is not None:
            dtype = dt.check_dtype(dtype, label)
            args = tuple(ns.astype(a, dtype) if type(a) is Tensor else a for a in args)
        if out is not None and ufunc.nout == 1 and "out" in _signature(f).parameters:
            return f(*args, out=out[0])
        r = f(*args)
        if out is None:
            return r
        return _write(out[0], r, label) if ufunc.nout == 1 else tuple(_write(o, v, label) for o, v in zip(out, r))
    if method in ("reduce", "accumulate") and name in (_REDUCE if method == "reduce" else _ACCUMULATE):
        (x,) = _numr_operands(inputs, dev, label)
        out = _out_of(kwargs, 1, label)
        axis = kwargs.pop("axis", 0)
        call = {"axis": axis}
        for k in ("dtype", "keepdims"):
            v = kwargs.pop(k, None)
            if v is not None:
                call[k] = v
        if "initial" in kwargs:
            raise TypeError(f"{label}: numr_array does not support initial={_shown(kwargs['initial'])}")
        _check_ufunc_kwargs(kwargs, label)
        if method == "reduce":
            g = getattr(ns, _REDUCE[name])
        else:
            g = getattr(ns, _ACCUMULATE[name])
            if axis is None:
                x, call["axis"] = ns.reshape(x, (-1,)), 0
        if "dtype" in call and "dtype" not in _signature(g).parameters:
            x = ns.astype(x, dt.check_dtype(call.pop("dtype"), label))
        if out is not None:
            call["out"] = out[0]
        return g(x, **call)
    if method == "outer" and f is not None and ufunc.nin == 2:
        a, b = _numr_operands(inputs, dev, label)
        out = _out_of(kwargs, ufunc.nout, label)
        _check_ufunc_kwargs(kwargs, label)
        if type(a) is Tensor and type(b) is Tensor:
            a = ns.reshape(a, a._shape + (1,) * len(b._shape))
        r = f(a, b)
        return r if out is None else _write(out[0], r, label)
    return _on_host(dev, label, getattr(ufunc, method), inputs, kwargs)


# --- __array_function__ ----------------------------------------------------------------------------------

def _numpy_default(value, default) -> bool:
    """Whether ``value`` is NumPy's default ``default`` for an argument (so numr, lacking it, computes it)."""
    if value is np._NoValue or value is default:
        return True
    return type(value) is type(default) and isinstance(value, (str, bool, int, float)) and value == default


class _Plan:
    """How the arguments of a NumPy function become those of numr's function of that name (made once per
    pair): for each NumPy parameter, numr's parameter taking it, by name where numr has NumPy's name at the
    same place (or as a keyword), else by position; None where numr lacks it."""

    __slots__ = ("np_sig", "params", "positional", "targets", "takes_star", "satisfied", "name")

    def __init__(self, np_sig: inspect.Signature, sig: inspect.Signature, name: str):
        self.np_sig, self.params, self.name = np_sig, sig.parameters, name
        self.positional = [p for p in sig.parameters.values() if p.kind in _POSITIONAL]
        self.takes_star = any(p.kind is _P.VAR_POSITIONAL for p in sig.parameters.values())
        self.satisfied = _SATISFIED.get(name, frozenset())
        np_positional = [p.name for p in np_sig.parameters.values() if p.kind in _POSITIONAL]
        self.targets = {}
        for p in np_sig.parameters.values():
            target = self.params.get(p.name)
            place = np_positional.index(p.name) if p.kind in _POSITIONAL else None
            if target is not None and target.kind in _POSITIONAL and place is not None \
                    and self.positional.index(target) != place:
                target = None  # NumPy's name at another place: map by position
            if target is None and place is not None and place < len(self.positional):
                target = self.positional[place]
            if target is not None and target.kind in (_P.VAR_POSITIONAL, _P.VAR_KEYWORD):
                target = None
            self.targets[p.name] = target

    def _put(self, target, key: str, value, default, by_position: dict, by_name: dict, label: str) -> None:
        if target is None:
            if key in self.satisfied or _numpy_default(value, default) or \
                    (key in _ALWAYS and _numpy_default(value, _ALWAYS[key])):
                return
            raise TypeError(f"{label}: numr_array does not support {key}={_shown(value)}")
        if target.kind is _P.POSITIONAL_ONLY:
            by_position[self.positional.index(target)] = value
        else:
            by_name[target.name] = value

    def translate(self, args: tuple, kwargs: dict, label: str) -> tuple[list, dict]:
        try:
            bound = self.np_sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{label}: {e}") from None
        by_position: dict[int, Any] = {}
        by_name: dict[str, Any] = {}
        star: tuple = ()
        for name, value in bound.arguments.items():
            p = self.np_sig.parameters[name]
            if p.kind is _P.VAR_POSITIONAL:
                if value and not self.takes_star:
                    raise TypeError(f"{label}: numr_array's {self.name} takes no variable arguments")
                star = value
            elif p.kind is _P.VAR_KEYWORD:  # (NumPy's **kwargs: numr's keyword of that name, if any)
                for key, v in value.items():
                    target = self.params.get(key)
                    self._put(target if target is not None and target.kind is not _P.POSITIONAL_ONLY else None,
                              key, v, _P.empty, by_position, by_name, label)
            else:
                self._put(self.targets[name], name, value, p.default, by_position, by_name, label)
        call = []
        for i, p in enumerate(self.positional[:max(by_position, default=-1) + 1]):
            if i in by_position:
                call.append(by_position[i])
            elif p.name in by_name:
                call.append(by_name.pop(p.name))
            elif p.default is not _P.empty:
                call.append(p.default)
            else:
                raise TypeError(f"{label}: missing the argument {p.name}")
        call.extend(star)
        return call, by_name


_plans: dict[tuple[Callable, Callable], _Plan | None] = {}


def _translated(np_func: Callable, f: Callable, args: tuple, kwargs: dict, label: str) -> tuple[list, dict]:
    """NumPy's ``args``/``kwargs`` of ``np_func`` as numr's of ``f`` (see _Plan); NumPy's defaults numr lacks
    dropped, another value of them a TypeError naming it."""
    key = (np_func, f)
    plan = _plans.get(key, 0)
    if plan == 0:
        np_sig, sig = _signature(np_func), _signature(f)
        plan = _plans[key] = None if np_sig is None or sig is None else _Plan(np_sig, sig, f.__name__)
    if plan is None:
        return list(args), kwargs
    return plan.translate(args, kwargs, label)


def _function_of(func: Callable) -> Callable | None:
    module = _MODULES.get(getattr(func, "__module__", None))
    if module is None:
        return None
    f = getattr(module, func.__name__, None)
    return f if callable(f) and not isinstance(f, type) else None


def array_function(self: Tensor, func: Callable, types, args: tuple, kwargs: dict):
    """NEP 18: a NumPy function on tensors, run by numr (see the module's doc)."""
    if not all(t is Tensor or t is np.ndarray for t in types):  # (not NumPy's subclasses: masked arrays, ...)
        return NotImplemented
    label = f"{func.__module__}.{func.__name__}"
    dev = _device(label, args, tuple(kwargs.values()))
    f = _function_of(func)
    if dev is None:  # like=: NumPy dropped it from kwargs; self is the like object; the data is the host's
        name = func.__name__
        f = getattr(_MODULES["numpy"], _CREATION_NAMES.get(name, name), None)
        if f is None:
            raise TypeError(f"{label}: numr_array has no {name} to make a tensor like= on {self._dev}")
        call, named = _translated(func, f, args, kwargs, label)
        if "device" in _signature(f).parameters and named.get("device") is None:
            named["device"] = self._dev
        return f(*call, **named)
    if f is None:
        return _on_host(dev, label, func, args, kwargs)
    args = _numr_operands(args, dev, label)
    kwargs = {k: _numr_operands(v, dev, label) for k, v in kwargs.items()}
    call, named = _translated(func, f, args, kwargs, label)
    return f(*call, **named)


def install(package: ModuleType) -> None:
    """Set the protocols on Tensor; ``package`` is numr_array (its namespace is where NumPy's names are
    looked up, so that every public function serves them)."""
    _MODULES.update({"numpy": package, "numpy.linalg": package.linalg, "numpy.fft": package.fft})
    Tensor.__array_ufunc__ = array_ufunc
    Tensor.__array_function__ = array_function
