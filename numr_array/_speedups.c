/* numr_array._speedups: the eager call of cached plans, in C (docs/architecture.md, "How xp.add(x, y)
reaches a kernel"): on the CPU NumPy's ufuncs, on CUDA the direct kernels, cuBLAS and device copies.

What it covers, and nothing else:

* ``unary(op, plans, x, out, held)`` / ``binary(op, plans, x1, x2, out, held)``: the namespace's element-wise entry
  (numr_array/_elementwise.py). A call whose plan is cached with a ``native`` part (a CPU plan whose kernel
  is a NumPy ufunc: made by the Python path, the one place where calls are validated and promoted) runs
  here: the plan is looked up by the same key, the ufunc runs on the operands' NumPy views, and the result
  Tensor is made here. Everything else (a new signature, a capture, a lost device, an ``out=`` not yet
  accepted, an operand without a NumPy view, an operand that may be a dead temporary whose case C cannot
  tell) returns NotImplemented,
  and the caller runs the Python path in its own frame (so that operands' reference counts are the Python
  path's), so every error is the Python path's, raised before any kernel runs.
* ``TensorBase``: the base class of numr_array.Tensor, whose number slots and rich comparison are its operators:
  the same call as ``unary``/``binary`` with no Python frame between, the Python path called from the slot
  otherwise (see there).
* ``like(plans, x, ...)``: zeros_like, ones_like and empty_like of a tensor alone, by a cached plan.
* ``reduce(plans, x, axis, keepdims, dtype, out)``: sum, prod, max, min and mean of a cached plan
  (numr_array/_statistical.py), ``asarray(plans, obj, dtype, device, copy)`` of Python scalars and flat
  lists (numr_array/_creation.py), and matmul through ``binary`` (numr_array/_linear_algebra_functions.py):
  plans of the Python path, NotImplemented for everything else, as above.
* Temporary elision of the element-wise call (``elide_target``), with the checks of numr_array._launch
  (``reusable``, ``from_interpreter``; ``c_stack_check`` is the latter's C-stack check, also used there).
* On CUDA (``device_call``, ``blas_call``, ``device_concat``): a plan whose native part is the CUDA client's
  (CudaClient.direct_launch, product_launch, concat_launch) is launched here through the driver's
  cuLaunchKernel, cuBLAS's routines or cuMemcpyDtoDAsync, at addresses the plan's checks allow, with the
  client's lock held; everything else goes to the Python path as above.
* ``Ledger``: an allocator's byte accounting (the base class of runtime.Allocator), updated atomically
  under the GIL without a lock, so that a result's accounting costs no Python frame.

Nothing here validates or promotes: it reads what the Python path decided (the plan tuples) and falls back
to it whenever anything differs from the cached case.
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <float.h>
#include <math.h>
#include <stdint.h>

/* --- Ledger --------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    long long in_use;
    long long peak;
    long long count;
} Ledger;

static inline void
ledger_add(Ledger *l, long long nbytes)
{
    l->in_use += nbytes;
    l->count += 1;
    if (l->in_use > l->peak)
        l->peak = l->in_use;
}

static PyObject *
Ledger_add(Ledger *self, PyObject *arg)
{
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    ledger_add(self, n);
    Py_RETURN_NONE;
}

static PyObject *str_owner, *str_nbytes;

static PyObject *
Ledger_untrack(Ledger *self, PyObject *buffer)
{
    PyObject *nb = PyObject_GetAttr(buffer, str_nbytes);
    if (nb == NULL)
        return NULL;
    long long n = PyLong_AsLongLong(nb);
    Py_DECREF(nb);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (PyObject_SetAttr(buffer, str_owner, Py_None) < 0)
        return NULL;
    self->in_use -= n;
    self->count -= 1;
    Py_RETURN_NONE;
}

static PyObject *
Ledger_totals(Ledger *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(LLL)", self->in_use, self->peak, self->count);
}

static PyObject *
Ledger_reset_peak(Ledger *self, PyObject *Py_UNUSED(ignored))
{
    self->peak = self->in_use;
    Py_RETURN_NONE;
}

static PyMethodDef Ledger_methods[] = {
    {"_add", (PyCFunction)Ledger_add, METH_O, "Account for a new buffer of ``nbytes`` bytes."},
    {"_untrack", (PyCFunction)Ledger_untrack, METH_O,
     "Account for the end of ``buffer`` (its ``owner`` is set to None)."},
    {"_totals", (PyCFunction)Ledger_totals, METH_NOARGS, "(bytes in use, peak bytes, allocations), read at once."},
    {"_reset_peak", (PyCFunction)Ledger_reset_peak, METH_NOARGS, "Restart the peak from the bytes in use."},
    {NULL}
};

static PyTypeObject LedgerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numr_array._speedups.Ledger",
    .tp_basicsize = sizeof(Ledger),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "An allocator's byte accounting: bytes in use, their peak, live allocations (atomic under the GIL).",
    .tp_methods = Ledger_methods,
    .tp_new = PyType_GenericNew,
};

/* --- BufferBase ----------------------------------------------------------------------------------- */

/* The data of runtime.Buffer (its base class): the backend's handle, the bytes, the owner, weak references;
   when the last reference goes, ``owner.deallocate(self)`` (done here for an allocator whose deallocate is
   Ledger._untrack). */
typedef struct {
    PyObject_HEAD
    PyObject *handle;
    PyObject *nbytes;
    PyObject *owner;
    PyObject *weakreflist;
} BufferBase;

static PyObject *str_deallocate;
static PyObject *ledger_untrack;  /* Ledger._untrack, the method descriptor */

static int
BufferBase_init(BufferBase *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"handle", "nbytes", "owner", NULL};
    PyObject *handle, *nbytes, *owner;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO:Buffer", kwlist, &handle, &nbytes, &owner))
        return -1;
    Py_XSETREF(self->handle, Py_NewRef(handle));
    Py_XSETREF(self->nbytes, Py_NewRef(nbytes));
    Py_XSETREF(self->owner, Py_NewRef(owner));
    return 0;
}

static void
BufferBase_finalize(PyObject *self)
{
    PyObject *owner = ((BufferBase *)self)->owner;
    if (owner == NULL || owner == Py_None)
        return;
    /* a finalizer runs while an exception may be propagating (a frame's locals freed as it unwinds): it
       is set aside first, since even _PyType_Lookup clears a pending exception on a method-cache miss */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    if (PyObject_TypeCheck(owner, &LedgerType) && _PyType_Lookup(Py_TYPE(owner), str_deallocate) == ledger_untrack) {
        /* an allocator whose deallocate is the Ledger's own: its accounting, without the method call */
        Ledger *l = (Ledger *)owner;
        l->in_use -= PyLong_AsLongLong(((BufferBase *)self)->nbytes);
        l->count -= 1;
        ((BufferBase *)self)->owner = Py_NewRef(Py_None);
        Py_DECREF(owner);
    }
    else {
        Py_INCREF(owner);
        PyObject *r = PyObject_CallMethodOneArg(owner, str_deallocate, self);
        Py_DECREF(owner);
        if (r == NULL)
            PyErr_WriteUnraisable(self);
        Py_XDECREF(r);
    }
    PyErr_Restore(exc_type, exc_value, exc_tb);
}

static void
BufferBase_dealloc(BufferBase *self)
{
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
        return;  /* resurrected by its owner */
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Py_CLEAR(self->handle);
    Py_CLEAR(self->nbytes);
    Py_CLEAR(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef BufferBase_members[] = {
    {"handle", T_OBJECT_EX, offsetof(BufferBase, handle), 0, "the backend's own object for the memory"},
    {"nbytes", T_OBJECT_EX, offsetof(BufferBase, nbytes), 0, "the bytes asked for"},
    {"owner", T_OBJECT_EX, offsetof(BufferBase, owner), 0, "the allocator (or arena) it returns to, or None"},
    {NULL}
};

static PyTypeObject BufferBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numr_array._speedups.BufferBase",
    .tp_basicsize = sizeof(BufferBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The data of a device allocation (handle, nbytes, owner), returned to its owner when the last "
              "reference goes; runtime.Buffer is its subclass.",
    .tp_members = BufferBase_members,
    .tp_weaklistoffset = offsetof(BufferBase, weakreflist),
    .tp_init = (initproc)BufferBase_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)BufferBase_dealloc,
    .tp_finalize = BufferBase_finalize,
};

/* c_stack_check(): whether the C stack, from the evaluation loop running the caller's Python frames to the
   next evaluation loop out, runs only in the interpreter's own library: numr_array._launch.from_interpreter's
   check (the caller's operator was applied by the interpreter, not by C code holding a borrowed reference),
   as NumPy's check_callers makes it, with glibc's backtrace and dladdr. Where those or the evaluation loop's
   symbol cannot be found, the module has no c_stack_check (and _launch its ctypes form, which finds the
   same). A return address's object and whether it is in the loop are looked up once (dladdr scans a symbol
   table), in a table of the addresses met. */
#if defined(__GLIBC__)
#include <dlfcn.h>
#include <execinfo.h>
#define HAVE_C_STACK_CHECK 1

static void *eval_loop, *libpython;
#define KNOWN_SIZE 1024  /* (a power of two) */
static struct { void *address; void *base; int loop; } known[KNOWN_SIZE];

/* 1 when ``address`` is found (its object's base in *base, whether it is in the loop in *loop), 0 if not */
static int
where(void *address, void **base, int *loop)
{
    size_t h = ((uintptr_t)address >> 2) & (KNOWN_SIZE - 1);
    for (size_t i = 0; i < 8; i++) {
        size_t k = (h + i) & (KNOWN_SIZE - 1);
        if (known[k].address == address) {
            *base = known[k].base;
            *loop = known[k].loop;
            return 1;
        }
        if (known[k].address == NULL)
            break;
    }
    Dl_info info;
    if (!dladdr(address, &info))
        return 0;
    *base = info.dli_fbase;
    *loop = info.dli_saddr == eval_loop;
    for (size_t i = 0; i < 8; i++) {  /* (a full neighbourhood keeps nothing: found again next time) */
        size_t k = (h + i) & (KNOWN_SIZE - 1);
        if (known[k].address == NULL) {
            known[k].address = address, known[k].base = *base, known[k].loop = *loop;
            break;
        }
    }
    return 1;
}

static void *own_base;  /* this module's object (its operator slots sit on the C stack above the interpreter) */

/* Whether the C stack, from here to the ``wanted``-th evaluation loop out, holds only the interpreter's own
   code where it matters: between the last two of those loops for 2 (a Python frame, then the user's: the
   Python path's check, and c_stack_check's), and for 1 (an operator slot of this module called by the
   user's frame) between this module's own frames on top and that loop. */
static int
stack_ok(int wanted)
{
    void *frames[32];  /* (the user's frame lies within about 12 C frames when only the interpreter is between) */
    int n = backtrace(frames, wanted == 1 ? 16 : 32), loops = 0, own = 1;
    for (int i = 0; i < n; i++) {
        void *base;
        int loop;
        if (!where(frames[i], &base, &loop))
            return 0;
        if (loop) {
            if (++loops == wanted)  /* the user's frame, reached through the interpreter's code alone */
                return 1;
            own = 0;
        }
        else if (own && base == own_base)
            continue;  /* (this module's frames, up to its operator slot) */
        else {
            own = 0;
            if (loops == wanted - 1 && base != libpython)
                return 0;  /* foreign C code between the user's operator and ours */
        }
    }
    return 0;
}

static PyObject *
c_stack_check(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(stack_ok(2));
}

/* whether the evaluation loop is found by dladdr as itself (so that c_stack_check can tell it) */
static int
c_stack_check_works(void)
{
    Dl_info info;
    eval_loop = (void *)&_PyEval_EvalFrameDefault;
    if (!dladdr(eval_loop, &info) || info.dli_saddr != eval_loop) {
        eval_loop = NULL;  /* (then no operator's operand is elided here: the Python path decides) */
        return 0;
    }
    libpython = info.dli_fbase;
    if (!dladdr((void *)&stack_ok, &info)) {
        eval_loop = NULL;
        return 0;
    }
    own_base = info.dli_fbase;
    void *frames[4];
    backtrace(frames, 4);  /* (the first backtrace loads the unwinder) */
    return 1;
}

static PyMethodDef c_stack_check_def = {"c_stack_check", c_stack_check, METH_NOARGS,
                                        "c_stack_check(): whether only the interpreter's own code lies between "
                                        "the caller's evaluation loop and the next one out."};
#endif

/* --- the element-wise call ------------------------------------------------------------------------- */

/* set by configure(): the types and slot offsets of the objects a call reads and makes */
static PyTypeObject *Tensor_type, *Buffer_type;
static Py_ssize_t T_buf, T_dtype, T_shape, T_strides, T_offset, T_dev, T_view;  /* Tensor's slots */
static Py_ssize_t D_client;  /* Device._client */
static Py_ssize_t B_handle, B_nbytes, B_owner, B_exported;  /* Buffer's slots (B_exported: -1 if none) */
static PyObject *capture_globals, *runtime_globals;  /* the dicts of numr_array._capture and .runtime */
static PyObject *str_capturing, *str_lost_count;
static PyObject *zero;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* A plan's ``native`` part (numr_array/_elementwise.py, _native): the CPU client's part (CpuClient.ufunc_launch:
   the ufunc, the allocator, the view maker, NumPy's error-state context variable and its "ignore all" value,
   numpy.empty), then the call's (the result's bytes, the scalar operand's NumPy type, the accepted ``out=``
   signatures, the result's NumPy dtype) */
enum { N_UFUNC, N_ALLOCATOR, N_NATIVE, N_ERRVAR, N_QUIET, N_EMPTY, N_NBYTES, N_SCALAR, N_OUTS, N_NPDTYPE, N_LEN };
/* A GPU client's native part (CudaClient.direct_launch, product_launch): its direct kernel of the plan's operand
   form, launched here through cuLaunchKernel (the driver's entry point, ``G_LAUNCH``), or a cuBLAS routine
   (``G_ARGS``), then the same four entries as the CPU's. ``G_FORM``: U (one array), TT (two), TS/ST (an
   array and a scalar second/first), TP/PT (an array and one element broadcast, second/first), R (one array
   reduced to one element: the kernel's words are U's), GEMV/GEMM (a matrix product: ``G_ARGS`` holds the
   routine's address, the cuBLAS handle and its other arguments), BC (two arrays of any strides, broadcast
   ones included: ``G_ARGS`` is the bytes of the kernel's fifth argument, their merged layout); ``G_SCALAR_KIND``: 'f' or 'i' (a Python
   scalar operand as a C float or int of the operands' itemsize), 0 for none; ``G_INPUT_STRIDES``: per
   operand, the strides an array operand must have (C-contiguous for an element-wise kernel, the layout the
   product was planned for), None for a scalar or a broadcast element (the plan's key holds the shapes). */
enum { G_LAUNCH, G_FUNCTION, G_BLOCKS, G_THREADS, G_ELEMENTS, G_FORM, G_ITEMSIZE, G_RESULT_ITEMSIZE, G_SCALAR_KIND,
       G_INPUT_STRIDES, G_ARGS, G_STREAM, G_STREAM_OBJ, G_CURRENT_STREAM, G_MALLOC, G_ALLOCATOR, G_LOCK, G_NBYTES,
       G_SCALAR, G_OUTS, G_NPDTYPE, G_LEN };
enum { FORM_U, FORM_TT, FORM_TS, FORM_ST, FORM_TP, FORM_PT, FORM_R, FORM_GEMV, FORM_GEMM, FORM_BC };
/* the entries both layouts end with, by their place from the end */
#define NATIVE_TAIL(native, k) PyTuple_GET_ITEM(native, PyTuple_GET_SIZE(native) - 4 + (k))
#define NATIVE_NBYTES(native) NATIVE_TAIL(native, 0)
#define NATIVE_OUTS(native) NATIVE_TAIL(native, 2)

static int
slot_offset(PyObject *type, const char *name, Py_ssize_t *off, int required)
{
    PyObject *d = PyObject_GetAttrString(type, name);
    if (d == NULL) {
        if (!required && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            *off = -1;
            return 0;
        }
        return -1;
    }
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "configure: %s is not a slot", name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        Py_DECREF(d);
        PyErr_Format(PyExc_TypeError, "configure: %s is not an object slot", name);
        return -1;
    }
    *off = m->offset;
    Py_DECREF(d);
    return 0;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *tensor, *buffer, *device, *capture_mod, *runtime_mod;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!:configure", &PyType_Type, &tensor, &PyType_Type, &buffer,
                          &PyType_Type, &device, &PyModule_Type, &capture_mod, &PyModule_Type, &runtime_mod))
        return NULL;
    if (slot_offset(tensor, "_buf", &T_buf, 1) || slot_offset(tensor, "_dtype", &T_dtype, 1) ||
        slot_offset(tensor, "_shape", &T_shape, 1) || slot_offset(tensor, "_strides", &T_strides, 1) ||
        slot_offset(tensor, "_offset", &T_offset, 1) || slot_offset(tensor, "_dev", &T_dev, 1) ||
        slot_offset(tensor, "_view", &T_view, 1) || slot_offset(device, "_client", &D_client, 1) ||
        slot_offset(buffer, "handle", &B_handle, 1) || slot_offset(buffer, "nbytes", &B_nbytes, 1) ||
        slot_offset(buffer, "owner", &B_owner, 1) || slot_offset(buffer, "exported", &B_exported, 0))
        return NULL;
    Py_XSETREF(capture_globals, Py_NewRef(PyModule_GetDict(capture_mod)));
    Py_XSETREF(runtime_globals, Py_NewRef(PyModule_GetDict(runtime_mod)));
    Py_XSETREF(Tensor_type, (PyTypeObject *)Py_NewRef(tensor));
    Py_XSETREF(Buffer_type, (PyTypeObject *)Py_NewRef(buffer));
    Py_RETURN_NONE;
}

/* 1 when launches need the Python path's bookkeeping: a capture in progress, or a device lost */
static int
busy(void)
{
    PyObject *c = PyDict_GetItemWithError(capture_globals, str_capturing);
    PyObject *l = PyDict_GetItemWithError(runtime_globals, str_lost_count);
    if (c == zero && l == zero)  /* (0 is one object in CPython) */
        return 0;
    int r = c == NULL || l == NULL || PyObject_IsTrue(c) != 0 || PyObject_IsTrue(l) != 0;
    PyErr_Clear();
    return r;
}

static inline int
is_scalar(PyObject *v)
{
    return PyFloat_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v) || PyComplex_CheckExact(v);
}

/* the NumPy view of tensor ``t`` (a new reference), made by the plan's view maker when ``t`` has none yet */
static PyObject *
view_by(PyObject *t, PyObject *maker)
{
    PyObject *v = SLOT(t, T_view);
    if (v != NULL && v != Py_None)
        return Py_NewRef(v);
    return PyObject_CallOneArg(maker, t);
}

static PyObject *
view_of(PyObject *t, PyObject *native)
{
    return view_by(t, PyTuple_GET_ITEM(native, N_NATIVE));
}

/* A new Tensor over ``handle`` (the backend's object of fresh C-contiguous memory: a NumPy array on the CPU, a
   CuPy memory pointer on CUDA): the allocator's Buffer of it (``nbytes`` accounted in the allocator's Ledger)
   and the tensor of ``dtype``, ``shape``, ``strides`` on ``dev`` with ``view`` as its view (``handle`` itself
   on the CPU, None where the view is made on demand), made without running their __init__ (their slots are
   set directly). Every result of this module is made here. Steals ``handle``. */
static PyObject *
result_over(PyObject *dtype, PyObject *shape, PyObject *strides, PyObject *dev, PyObject *allocator,
            PyObject *nbytes, PyObject *handle, PyObject *view)
{
    PyObject *buf = Buffer_type->tp_alloc(Buffer_type, 0);
    if (buf == NULL) {
        Py_DECREF(handle);
        return NULL;
    }
    SLOT(buf, B_handle) = handle;
    SLOT(buf, B_nbytes) = Py_NewRef(nbytes);
    SLOT(buf, B_owner) = Py_NewRef(allocator);
    if (B_exported >= 0)
        SLOT(buf, B_exported) = Py_NewRef(Py_False);
    ledger_add((Ledger *)allocator, PyLong_AsLongLong(nbytes));
    PyObject *t = Tensor_type->tp_alloc(Tensor_type, 0);
    if (t == NULL) {
        Py_DECREF(buf);
        return NULL;
    }
    SLOT(t, T_buf) = buf;
    SLOT(t, T_dtype) = Py_NewRef(dtype);
    SLOT(t, T_shape) = Py_NewRef(shape);
    SLOT(t, T_strides) = Py_NewRef(strides);
    SLOT(t, T_offset) = Py_NewRef(zero);
    SLOT(t, T_dev) = Py_NewRef(dev);
    SLOT(t, T_view) = Py_NewRef(view);
    return t;
}

/* result_over of the fresh NumPy array ``arr``, its own view (the CPU's results). Steals ``arr``. */
static PyObject *
make_result(PyObject *dtype, PyObject *shape, PyObject *strides, PyObject *dev, PyObject *allocator,
            PyObject *nbytes, PyObject *arr)
{
    return result_over(dtype, shape, strides, dev, allocator, nbytes, arr, arr);
}

/* The new result of an element-wise plan (its dtype, shape, strides and device) over ``arr``. Steals ``arr``. */
static PyObject *
new_result(PyObject *plan, PyObject *native, PyObject *arr)
{
    return make_result(PyTuple_GET_ITEM(plan, 0), PyTuple_GET_ITEM(plan, 1), PyTuple_GET_ITEM(plan, 2),
                       PyTuple_GET_ITEM(plan, 4), PyTuple_GET_ITEM(native, N_ALLOCATOR),
                       PyTuple_GET_ITEM(native, N_NBYTES), arr);
}

static PyObject *str_quiet_context;
static PyObject *out_kwnames;  /* ("out",) */

/* The calling thread's quiet context (borrowed): a context, made once per thread, in which NumPy's error
   state (the context variable ``errvar``) is ``quiet``; entering and leaving it around a ufunc call swaps
   the thread's current context, with no error-state set or reset per call. It holds no other context
   variable: nothing but NumPy's ufunc, which reads only its error state, runs in it. */
static PyObject *
quiet_context(PyObject *errvar, PyObject *quiet)
{
    PyObject *d = PyThreadState_GetDict();
    if (d == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "no thread state dict");
        return NULL;
    }
    PyObject *ctx = PyDict_GetItemWithError(d, str_quiet_context);
    if (ctx != NULL || PyErr_Occurred())
        return ctx;
    ctx = PyContext_New();
    if (ctx == NULL)
        return NULL;
    if (PyContext_Enter(ctx) < 0) {
        Py_DECREF(ctx);
        return NULL;
    }
    PyObject *token = PyContextVar_Set(errvar, quiet);
    if (PyContext_Exit(ctx) < 0 || token == NULL || PyDict_SetItem(d, str_quiet_context, ctx) < 0) {
        Py_XDECREF(token);
        Py_DECREF(ctx);
        return NULL;
    }
    Py_DECREF(token);
    Py_DECREF(ctx);
    return ctx;  /* (the thread's dict holds it) */
}

/* Enter the calling thread's quiet context ``*ctx``: 1 when entered (leave it with PyContext_Exit), 0 when
   the call runs inside it already (a ufunc calling back into numr: quiet already), -1 on an error. */
static int
enter_quiet(PyObject *errvar, PyObject *quiet, PyObject **ctx)
{
    *ctx = quiet_context(errvar, quiet);
    if (*ctx != NULL && PyContext_Enter(*ctx) == 0)
        return 1;
    if (*ctx == NULL || !PyErr_ExceptionMatches(PyExc_RuntimeError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* Run the plan's ufunc on ``ins`` (NumPy views or scalars) into ``out`` (a Tensor whose signature the
   plan accepted) or a new result: the call itself, in the thread's quiet context, so that NumPy's
   floating-point warnings are off for its duration (as CuPy and WebGPU kernels, CPU kernels give inf/NaN
   without warning). A call made while that context is already entered (a ufunc calling back into numr)
   is quiet already and runs as it is. */
static PyObject *
run(PyObject *plan, PyObject *native, PyObject **ins, Py_ssize_t n, PyObject *out, int fresh_ok)
{
    PyObject *ufunc = PyTuple_GET_ITEM(native, N_UFUNC);
    PyObject *args[4];
    PyObject *arr = NULL, *ov = NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        args[i] = ins[i];
    if (out != Py_None) {
        ov = view_of(out, native);
        if (ov == NULL)
            return NULL;
        args[n] = ov;
    }
    else if (!fresh_ok) {
        PyObject *eargs[2] = {PyTuple_GET_ITEM(plan, 1), PyTuple_GET_ITEM(native, N_NPDTYPE)};
        arr = PyObject_Vectorcall(PyTuple_GET_ITEM(native, N_EMPTY), eargs, 2, NULL);
        if (arr == NULL)
            return NULL;
        args[n] = arr;
    }
    PyObject *ctx;
    int entered = enter_quiet(PyTuple_GET_ITEM(native, N_ERRVAR), PyTuple_GET_ITEM(native, N_QUIET), &ctx);
    if (entered < 0) {
        Py_XDECREF(ov);
        Py_XDECREF(arr);
        return NULL;
    }
    /* out= by keyword (a third positional argument of maximum and minimum is deprecated in NumPy) */
    PyObject *r = PyObject_Vectorcall(ufunc, args, n, out != Py_None || !fresh_ok ? out_kwnames : NULL);
    if (entered && PyContext_Exit(ctx) < 0) {
        Py_XDECREF(r);
        r = NULL;
    }
    if (out != Py_None) {
        Py_DECREF(ov);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
        return Py_NewRef(out);
    }
    if (r == NULL) {
        Py_XDECREF(arr);
        return NULL;
    }
    if (arr != NULL) {
        Py_DECREF(r);
        r = arr;
    }
    return new_result(plan, native, r);
}

/* The last plans found, by table: a repeated call with the very same key objects (the same dtype, shape
   tuple and client objects: a loop's tensors, whose shapes are their plans' own tuples) skips building and
   hashing the key. An entry holds its key objects, so that none of their addresses can be reused by
   another object while it is there; it may outlive its table's clearing at 512 plans (its plan is still
   right then); ``forget`` drops them all. */
#define MEMO_SIZE 64
#define KEY_MAX 7
typedef struct {
    PyObject *plans;
    PyObject *items[KEY_MAX];
    Py_ssize_t n;
    PyObject *plan;
} Memo;
static Memo memo[MEMO_SIZE];

static void
memo_store(Memo *m, PyObject *plans, PyObject *const *items, Py_ssize_t n, PyObject *plan)
{
    Memo old = *m;
    m->plans = Py_NewRef(plans);
    for (Py_ssize_t i = 0; i < n; i++)
        m->items[i] = Py_NewRef(items[i]);
    m->n = n;
    m->plan = Py_NewRef(plan);
    Py_XDECREF(old.plans);  /* (released last: their deallocation may run code that calls back in here) */
    for (Py_ssize_t i = 0; i < old.n; i++)
        Py_XDECREF(old.items[i]);
    Py_XDECREF(old.plan);
}

/* forget(): drop every kept plan (called where the plan tables are emptied for a lost device, and by tests
   that change how plans are made) */
static PyObject *last_out[5];

static PyObject *
forget(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    PyObject *old_out[5];
    memcpy(old_out, last_out, sizeof old_out);
    memset(last_out, 0, sizeof last_out);
    for (int i = 0; i < 5; i++)
        Py_XDECREF(old_out[i]);
    for (int i = 0; i < MEMO_SIZE; i++) {
        Memo old = memo[i];
        memo[i] = (Memo){NULL, {NULL}, 0, NULL};
        Py_XDECREF(old.plans);
        for (Py_ssize_t j = 0; j < old.n; j++)
            Py_XDECREF(old.items[j]);
        Py_XDECREF(old.plan);
    }
    Py_RETURN_NONE;
}

/* whether ``native`` is a GPU client's native part (else it is a CPU client's) */
static inline int
is_device_launch(PyObject *native)
{
    return PyTuple_GET_SIZE(native) == G_LEN;
}

/* whether ``plan`` is an element-wise plan with a native part (a CPU client's, or a GPU client's direct
   kernel; never of a lost device) */
static int
elementwise_plan_ok(PyObject *plan)
{
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) < 6)
        return 0;
    PyObject *nat = PyTuple_GET_ITEM(plan, PyTuple_GET_SIZE(plan) - 1);
    if (!PyTuple_CheckExact(nat))
        return 0;
    if (PyTuple_GET_SIZE(nat) == G_LEN)
        return PyObject_TypeCheck(PyTuple_GET_ITEM(nat, G_ALLOCATOR), &LedgerType) &&
               PyLong_CheckExact(PyTuple_GET_ITEM(nat, G_LAUNCH)) && PyLong_CheckExact(PyTuple_GET_ITEM(nat, G_FORM));
    return PyTuple_GET_SIZE(nat) == N_LEN && PyObject_TypeCheck(PyTuple_GET_ITEM(nat, N_ALLOCATOR), &LedgerType) &&
           PyContextVar_CheckExact(PyTuple_GET_ITEM(nat, N_ERRVAR));
}

/* The plan of the key made of ``items`` in ``plans`` (a new reference), or NULL (no error set) when the
   call is for the Python path: none is cached, or ``ok`` says it is not one this module runs. */
static PyObject *
cached(PyObject *plans, PyObject *const *items, Py_ssize_t n, int (*ok)(PyObject *))
{
    Memo *m = &memo[((uintptr_t)plans >> 4) % MEMO_SIZE];
    PyObject *plan = NULL;
    if (m->plans == plans && m->n == n) {
        Py_ssize_t i = 0;
        while (i < n && m->items[i] == items[i])
            i++;
        if (i == n)
            plan = m->plan;
    }
    if (plan == NULL) {
        PyObject *key = PyTuple_New(n);
        if (key == NULL) {
            PyErr_Clear();
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            PyTuple_SET_ITEM(key, i, Py_NewRef(items[i]));
        plan = PyDict_GetItemWithError(plans, key);
        Py_DECREF(key);
        if (plan == NULL) {
            PyErr_Clear();
            return NULL;
        }
        if (!ok(plan))  /* only plans this module runs are kept here */
            return NULL;
        Py_INCREF(plan);
        memo_store(m, plans, items, n, plan);
        Py_DECREF(plan);  /* (the table and the memo hold it) */
    }
    return Py_NewRef(plan);  /* (held for the call: code it runs may empty the table and the memo) */
}

/* an element-wise plan's native part (borrowed from it) */
static inline PyObject *
native_of(PyObject *plan)
{
    return PyTuple_GET_ITEM(plan, PyTuple_GET_SIZE(plan) - 1);
}

/* the last accepted ``out=`` signature: (native part, dtype, shape, strides, device), held (so that no address
   is reused while it is here: the same objects are the same signature, whose acceptance a plan never drops);
   forget() drops it */

/* 1 when ``out`` is None or a tensor whose signature the Python path accepted for this plan: on the plan's
   device (check_out's condition), its (dtype, shape, strides) among the accepted */
static int
out_accepted(PyObject *out, PyObject *plan, PyObject *native)
{
    if (out == Py_None)
        return 1;
    if (!Py_IS_TYPE(out, Tensor_type) || SLOT(out, T_dev) != PyTuple_GET_ITEM(plan, 4))
        return 0;
    PyObject *sig[5] = {native, SLOT(out, T_dtype), SLOT(out, T_shape), SLOT(out, T_strides), SLOT(out, T_dev)};
    if (memcmp(sig, last_out, sizeof sig) == 0)
        return 1;
    PyObject *key = PyTuple_Pack(3, sig[1], sig[2], sig[3]);
    if (key == NULL) {
        PyErr_Clear();
        return 0;
    }
    int r = PyDict_Contains(NATIVE_OUTS(native), key);
    Py_DECREF(key);
    if (r < 0)
        PyErr_Clear();
    if (r == 1) {
        PyObject *old[5];
        memcpy(old, last_out, sizeof old);
        for (int i = 0; i < 5; i++)
            last_out[i] = Py_NewRef(sig[i]);
        for (int i = 0; i < 5; i++)  /* (released last: their deallocation may run code that calls back in here) */
            Py_XDECREF(old[i]);
    }
    return r == 1;
}

/* whether NumPy's own result of these operands is C-contiguous, so the ufunc may allocate it: 1-D, or
   every array operand of the result's shape and C-contiguous (0-D results are NumPy scalars: no) */
static int
fresh_ok(PyObject *plan, PyObject *const *tensors, Py_ssize_t n)
{
    PyObject *shape = PyTuple_GET_ITEM(plan, 1);
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (ndim == 1)
        return 1;
    if (ndim == 0)
        return 0;
    PyObject *strides = PyTuple_GET_ITEM(plan, 2);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (tensors[i] == NULL)
            continue;
        PyObject *s = SLOT(tensors[i], T_shape), *st = SLOT(tensors[i], T_strides);
        if ((s != shape && PyObject_RichCompareBool(s, shape, Py_EQ) != 1) ||
            (st != strides && PyObject_RichCompareBool(st, strides, Py_EQ) != 1)) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* Whether the result of an element-wise ``plan`` may go into one of its array operands ``x1``, ``x2`` (NULL
   for a scalar operand, or the one operand of a unary plan), as the Python path decides: the plan's
   ``elide`` (its entry before the native part: a bool, or for two arrays 1 for x1, 2 for x2, 3 for either,
   and for an array and a scalar that array) allows it, and the operand is held no more than ``held`` times
   by the caller's frames and once as this call's argument. An operand held more is reachable elsewhere:
   never reused, the result is a new array, here as there. */
static int
may_elide(PyObject *plan, PyObject *x1, PyObject *x2, long h)
{
    PyObject *e = PyTuple_GET_ITEM(plan, PyTuple_GET_SIZE(plan) - 2);
    if (e == Py_False || e == zero)
        return 0;
    long which = PyLong_AsLong(e);
    if (which == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    if (x1 == NULL || x2 == NULL)  /* one array operand: any elide value is about it */
        which = 3;
    return ((which & 1) && x1 != NULL && Py_REFCNT(x1) <= h + 1) ||
           ((which & 2) && x2 != NULL && Py_REFCNT(x2) <= h + 1);
}

/* Temporary elision in C (numr_array._launch.reusable and from_interpreter, the Python path's checks, made
   alike): set by configure_elision once the interpreter's reference counts are found to be as expected for
   this call's own frames (_elementwise._calibrate_compiled), with the opcodes of the operator instructions. */
static int elision_calibrated;
static unsigned char operator_opcode[256];
/* ``held`` of an operator slot's call (TensorBase, below): the operand's one reference is the interpreter's
   stack slot, which the slot borrows */
#define SLOT_HELD 0

static PyObject *
configure_elision(PyObject *module, PyObject *args)
{
    PyObject *opcodes;
    int calibrated;
    if (!PyArg_ParseTuple(args, "Op:configure_elision", &opcodes, &calibrated))
        return NULL;
    PyObject *it = PyObject_GetIter(opcodes), *item;
    if (it == NULL)
        return NULL;
    memset(operator_opcode, 0, sizeof operator_opcode);
    while ((item = PyIter_Next(it)) != NULL) {
        long op = PyLong_AsLong(item);
        Py_DECREF(item);
        if (op >= 0 && op < 256)
            operator_opcode[op] = 1;
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    elision_calibrated = calibrated;
    Py_RETURN_NONE;
}

/* refs(x): x's reference count, as the compiled call sees an argument's (for the calibration) */
static PyObject *
refs(PyObject *module, PyObject *x)
{
    return PyLong_FromSsize_t(Py_REFCNT(x));
}

/* from_interpreter of the Python path, for an operator slot of this module: whether the calling frame (the
   user's: no Python frame lies between it and a slot) is executing an operator instruction, and only the
   interpreter's own code lies on the C stack between it and this module; -1 where that cannot be told. */
static int
c_from_interpreter(void)
{
#ifdef HAVE_C_STACK_CHECK
    if (eval_loop == NULL)
        return -1;
    PyFrameObject *user = PyEval_GetFrame();  /* (borrowed) */
    if (user == NULL)
        return 0;
    PyCodeObject *code = PyFrame_GetCode(user);
    int lasti = PyFrame_GetLasti(user);
    PyObject *co = PyCode_GetCode(code);
    Py_DECREF(code);
    if (co == NULL) {
        PyErr_Clear();
        return -1;
    }
    int op = lasti >= 0 && lasti < PyBytes_GET_SIZE(co) ? (unsigned char)PyBytes_AS_STRING(co)[lasti] : -1;
    Py_DECREF(co);
    return op >= 0 && operator_opcode[op] && stack_ok(1);
#else
    return -1;
#endif
}

/* Whether the operand ``x`` (of the result's dtype and shape: the plan's elide flag says so) is a dead
   temporary the result may be written into: 1, 0, or -1 where the Python path must decide. As
   _launch.reusable: held only by the caller's chain (``held``) and this call's argument; the only tensor of
   its Buffer, an allocator's, never exported, and covering all of it (offset 0, the plan's contiguous
   strides, the result's bytes); for an operator, applied by the interpreter itself. */
static int
dead(PyObject *plan, PyObject *native, PyObject *x, long held)
{
    if (!elision_calibrated || B_exported < 0)
        return -1;
    if (Py_REFCNT(x) != held + 1)
        return 0;
    PyObject *buf = SLOT(x, T_buf), *off = SLOT(x, T_offset), *st = SLOT(x, T_strides);
    if (!Py_IS_TYPE(buf, Buffer_type) || Py_REFCNT(buf) != 1 || SLOT(buf, B_owner) == NULL ||
        SLOT(buf, B_owner) == Py_None || SLOT(buf, B_exported) != Py_False)
        return 0;
    if (off != zero && (!PyLong_CheckExact(off) || PyLong_AsSsize_t(off) != 0))
        return 0;
    int same = PyObject_RichCompareBool(SLOT(buf, B_nbytes), NATIVE_NBYTES(native), Py_EQ);
    if (same == 1 && st != PyTuple_GET_ITEM(plan, 2))
        same = PyObject_RichCompareBool(st, PyTuple_GET_ITEM(plan, 2), Py_EQ);
    if (same != 1) {
        PyErr_Clear();
        return same < 0 ? -1 : 0;
    }
    return held == SLOT_HELD ? c_from_interpreter() : 1;
}

/* The operand the result goes into (borrowed), NULL for a new result, or (PyObject *)-1 where the Python
   path must decide; the operands in the Python path's order (x1 first), NULL for a scalar operand. */
static PyObject *
elide_target(PyObject *plan, PyObject *native, PyObject *x1, PyObject *x2, long held)
{
    if (!may_elide(plan, x1, x2, held))
        return NULL;
    PyObject *e = PyTuple_GET_ITEM(plan, PyTuple_GET_SIZE(plan) - 2);
    long which = (x1 == NULL || x2 == NULL) ? 3 : PyLong_AsLong(e);
    PyObject *xs[2] = {x1, x2};
    for (int i = 0; i < 2; i++) {
        if (!(which & (1 << i)) || xs[i] == NULL)
            continue;
        int d = dead(plan, native, xs[i], held);
        if (d != 0)
            return d > 0 ? xs[i] : (PyObject *)-1;
    }
    return NULL;
}

/* A new tensor of the plan's dtype, shape, strides and device over the dead temporary ``target``'s buffer, its
   view ``view`` (a reference this steals, released on failure). */
static PyObject *
tensor_over_target(PyObject *plan, PyObject *target, PyObject *view)
{
    PyObject *t = Tensor_type->tp_alloc(Tensor_type, 0);
    if (t == NULL) {
        Py_DECREF(view);
        return NULL;
    }
    SLOT(t, T_buf) = Py_NewRef(SLOT(target, T_buf));
    SLOT(t, T_dtype) = Py_NewRef(PyTuple_GET_ITEM(plan, 0));
    SLOT(t, T_shape) = Py_NewRef(PyTuple_GET_ITEM(plan, 1));
    SLOT(t, T_strides) = Py_NewRef(PyTuple_GET_ITEM(plan, 2));
    SLOT(t, T_offset) = Py_NewRef(zero);
    SLOT(t, T_dev) = Py_NewRef(PyTuple_GET_ITEM(plan, 4));
    SLOT(t, T_view) = view;
    return t;
}

/* Run the plan's ufunc on ``ins`` into the dead temporary ``target`` and return the result: a new tensor
   over target's buffer (as the Python path's ``Tensor(x._buf, ..., x._view)``), no new buffer. */
static PyObject *
run_into(PyObject *plan, PyObject *native, PyObject **ins, Py_ssize_t n, PyObject *target)
{
    PyObject *args[4], *ctx;
    PyObject *ov = view_of(target, native);
    if (ov == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        args[i] = ins[i];
    args[n] = ov;
    int entered = enter_quiet(PyTuple_GET_ITEM(native, N_ERRVAR), PyTuple_GET_ITEM(native, N_QUIET), &ctx);
    PyObject *r = entered < 0 ? NULL : PyObject_Vectorcall(PyTuple_GET_ITEM(native, N_UFUNC), args, n, out_kwnames);
    if (entered == 1 && PyContext_Exit(ctx) < 0)
        Py_CLEAR(r);
    if (r == NULL) {
        Py_DECREF(ov);
        return NULL;
    }
    Py_DECREF(r);
    return tensor_over_target(plan, target, ov);
}

/* --- Direct device launches (a GPU client's native part, G_* above) ---------------------------------- */

/* cuLaunchKernel's signature (the CUDA driver API), called through the address the client gives */
static PyObject *python_path(void);

typedef int (*launch_kernel_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, void *stream, void **params, void **extra);
static PyObject *str_ptr, *str_acquire, *str_release;

/* the device address of tensor ``t``'s first element: its Buffer's handle's ``ptr`` (a CuPy memory pointer's)
   plus its offset in elements of ``itemsize``; 0 with no error set where it cannot be read */
static unsigned long long
device_address(PyObject *t, Py_ssize_t itemsize)
{
    PyObject *buf = SLOT(t, T_buf);
    if (!Py_IS_TYPE(buf, Buffer_type))
        return 0;
    PyObject *p = PyObject_GetAttr(SLOT(buf, B_handle), str_ptr);
    unsigned long long a = p == NULL ? 0 : PyLong_AsUnsignedLongLong(p);
    Py_XDECREF(p);
    Py_ssize_t off = PyLong_AsSsize_t(SLOT(t, T_offset));
    if (PyErr_Occurred() || off < 0) {
        PyErr_Clear();
        return 0;
    }
    return a + (unsigned long long)off * (unsigned long long)itemsize;
}

/* The Python scalar ``v`` as the kernel's argument word: a C float/double (kind 'f') or int32/int64 (kind 'i')
   of ``itemsize`` bytes, as the Python path converts it (NumPy's scalar of the plan's dtype); 0 where it
   must convert it (another type, an int out of range: it raises OverflowError; a float that overflows
   float32; an int that a double does not hold exactly). */
static int
scalar_word(PyObject *v, int kind, Py_ssize_t itemsize, unsigned long long *word)
{
    int overflow = 0;
    *word = 0;
    if (kind == 'f') {
        double d;
        if (PyFloat_CheckExact(v))
            d = PyFloat_AS_DOUBLE(v);
        else if (PyLong_CheckExact(v)) {
            long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (i == -1 && PyErr_Occurred()) || i > (1LL << 53) || i < -(1LL << 53)) {
                PyErr_Clear();
                return 0;
            }
            d = (double)i;
        }
        else
            return 0;
        if (itemsize == 8) {
            memcpy(word, &d, 8);
            return 1;
        }
        if (itemsize != 4 || (isfinite(d) && fabs(d) > FLT_MAX))
            return 0;
        float f = (float)d;
        memcpy(word, &f, 4);
        return 1;
    }
    if (kind == 'i' && PyLong_CheckExact(v)) {
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (i == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 0;
        }
        if (itemsize == 8) {
            memcpy(word, &i, 8);
            return 1;
        }
        if (itemsize == 4 && i >= INT32_MIN && i <= INT32_MAX) {
            int32_t j = (int32_t)i;
            memcpy(word, &j, 4);
            return 1;
        }
    }
    return 0;
}

/* whether tensor operand ``i``, ``t``, is laid out as the plan needs (its shape is the key's: its strides must
   be the plan's ``G_INPUT_STRIDES[i]``) */
static int
planned_layout(PyObject *t, PyObject *native, Py_ssize_t i)
{
    PyObject *all = PyTuple_GET_ITEM(native, G_INPUT_STRIDES);
    if (!PyTuple_CheckExact(all) || i >= PyTuple_GET_SIZE(all))
        return 0;
    PyObject *st = SLOT(t, T_strides), *want = PyTuple_GET_ITEM(all, i);
    if (st == want)
        return 1;
    int r = PyObject_RichCompareBool(st, want, Py_EQ);
    if (r < 0)
        PyErr_Clear();
    return r == 1;
}

/* whether tensors ``x`` and ``y`` (of one buffer) are the same view: offset, shape, strides and dtype */
static int
same_view(PyObject *x, PyObject *y)
{
    int r = SLOT(x, T_dtype) == SLOT(y, T_dtype) &&
            PyObject_RichCompareBool(SLOT(x, T_offset), SLOT(y, T_offset), Py_EQ) == 1 &&
            PyObject_RichCompareBool(SLOT(x, T_shape), SLOT(y, T_shape), Py_EQ) == 1 &&
            PyObject_RichCompareBool(SLOT(x, T_strides), SLOT(y, T_strides), Py_EQ) == 1;
    PyErr_Clear();
    return r;
}

/* cuBLAS's matrix-vector and matrix products (cublas_api.h; enums are C ints) */
typedef int (*gemv_fn)(void *handle, int trans, int m, int n, const void *alpha, const void *a, int lda,
                       const void *x, int incx, const void *beta, void *y, int incy);
typedef int (*gemm_fn)(void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *a, int atype,
                       int lda, const void *b, int btype, int ldb, const void *beta, void *c, int ctype, int ldc,
                       int compute, int algo);
typedef int (*gemm_batched_fn)(void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,
                               int atype, int lda, long long sa, const void *b, int btype, int ldb, long long sb,
                               const void *beta, void *c, int ctype, int ldc, long long sc, int batch, int compute,
                               int algo);
enum { GEMV_ARGS = 11, GEMM_ARGS = 20 };

/* The cuBLAS call of a GEMV/GEMM plan's ``args`` (CudaClient.product_launch: the routine, the handle, then
   _blas.plan_product's integers, the data type, compute type and algorithm, the addresses of alpha and beta,
   and which operand is cuBLAS's first) on the operands' addresses ``x`` into ``o``: cuBLAS's status, -1
   where the arguments are not as planned. */
static int
blas_call(long form, PyObject *args, const unsigned long long *x, unsigned long long o)
{
    long long v[GEMM_ARGS];
    Py_ssize_t n = PyTuple_CheckExact(args) ? PyTuple_GET_SIZE(args) : 0;
    if (n != (form == FORM_GEMV ? GEMV_ARGS : GEMM_ARGS))
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        v[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(args, i));
        if (v[i] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
    }
    void *handle = (void *)(uintptr_t)v[1];
    if (form == FORM_GEMV) {  /* routine, handle, trans, m, n, lda, incx, incy, alpha, beta, matrix */
        int mat = v[10] != 0;
        return ((gemv_fn)(uintptr_t)v[0])(handle, (int)v[2], (int)v[3], (int)v[4], (void *)(uintptr_t)v[8],
                                          (void *)(uintptr_t)x[mat], (int)v[5], (void *)(uintptr_t)x[1 - mat],
                                          (int)v[6], (void *)(uintptr_t)v[9], (void *)(uintptr_t)o, (int)v[7]);
    }
    /* routine, handle, ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch, type, compute, algo, alpha, beta,
       first */
    int first = v[19] != 0;
    const void *a = (void *)(uintptr_t)x[first], *b = (void *)(uintptr_t)x[1 - first];
    const void *alpha = (void *)(uintptr_t)v[17], *beta = (void *)(uintptr_t)v[18];
    int type = (int)v[14];
    if (v[13] == 1)
        return ((gemm_fn)(uintptr_t)v[0])(handle, (int)v[2], (int)v[3], (int)v[4], (int)v[5], (int)v[6], alpha, a,
                                          type, (int)v[7], b, type, (int)v[8], beta, (void *)(uintptr_t)o, type,
                                          (int)v[9], (int)v[15], (int)v[16]);
    return ((gemm_batched_fn)(uintptr_t)v[0])(handle, (int)v[2], (int)v[3], (int)v[4], (int)v[5], (int)v[6], alpha,
                                              a, type, (int)v[7], v[10], b, type, (int)v[8], v[11], beta,
                                              (void *)(uintptr_t)o, type, (int)v[9], v[12], (int)v[13],
                                              (int)v[15], (int)v[16]);
}

/* The steps every device call takes, in this order (device_call, device_concat, device_asarray):
   on_stream: 1 when CuPy's current stream (``current()``) is the client's ``stream`` (the pool files a block
   under the current stream, and a launch must be ordered after the caller's work there), 0 otherwise, -1 on
   an error; pool_block: a block of ``nbytes`` from the pool's ``malloc`` and its address in *address (NULL,
   no error set, where it fails: the Python path retries and raises); try_lock: take the client's lock
   without waiting (0 where another thread holds it: a capture starting or ending); unlock. */
static int
on_stream(PyObject *current, PyObject *stream)
{
    PyObject *cur = PyObject_CallNoArgs(current);
    if (cur == NULL)
        return -1;
    Py_DECREF(cur);
    return cur == stream;
}

static PyObject *
pool_block(PyObject *malloc, PyObject *nbytes, unsigned long long *address)
{
    PyObject *mp = PyObject_CallOneArg(malloc, nbytes);
    PyObject *p = mp == NULL ? NULL : PyObject_GetAttr(mp, str_ptr);
    *address = p == NULL ? 0 : PyLong_AsUnsignedLongLong(p);
    Py_XDECREF(p);
    if (PyErr_Occurred() || *address == 0) {
        PyErr_Clear();
        Py_XDECREF(mp);
        return NULL;
    }
    return mp;
}

static int
try_lock(PyObject *lock)
{
    PyObject *got = PyObject_CallMethodOneArg(lock, str_acquire, Py_False);
    int r = got == Py_True;
    Py_XDECREF(got);
    PyErr_Clear();
    return r;
}

static int
unlock(PyObject *lock)
{
    PyObject *r = PyObject_CallMethodNoArgs(lock, str_release);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Run a GPU plan's direct kernel on ``xs`` (the operands in order: tensors, or Python scalars where the form
   says) into ``out`` (accepted), the dead temporary ``target``, or a new result, and return the result; or
   NotImplemented (nothing written, nothing kept) where the Python path must run the call: another stream
   current, an operand not as the plan's form needs it, a scalar C does not convert as NumPy does, the
   client's lock held by another thread (a capture it is starting or ending), or an allocation or launch
   that failed (the Python path then makes it again and raises the error).

   Ordering and threads: the result's memory is taken from CuPy's pool while the client's stream is current
   (the pool files it under that stream, as alloc_tensor does); the launch then runs holding the GIL and the
   client's lock (taken without waiting), so that no capture can start or end on the stream in between, and
   the argument words below are not shared with another launch. */
static PyObject *
device_call(PyObject *plan, PyObject *native, PyObject *const *xs, Py_ssize_t n, PyObject *out, PyObject *target)
{
    static unsigned long long words[4];
    static void *params[5] = {&words[0], &words[1], &words[2], &words[3], NULL};
#define G(k) PyTuple_GET_ITEM(native, k)
    long form = PyLong_AsLong(G(G_FORM));
    Py_ssize_t itemsize = PyLong_AsSsize_t(G(G_ITEMSIZE));
    int kind = (int)PyLong_AsLong(G(G_SCALAR_KIND));
    if (PyErr_Occurred())
        return NULL;
    int current = on_stream(G(G_CURRENT_STREAM), G(G_STREAM_OBJ));
    if (current <= 0)
        return current < 0 ? NULL : python_path();
    for (Py_ssize_t i = 0; i < n; i++) {
        int scalar = (form == FORM_TS && i == 1) || (form == FORM_ST && i == 0);
        int element = (form == FORM_TP && i == 1) || (form == FORM_PT && i == 0);
        if (scalar) {
            if (!scalar_word(xs[i], kind, itemsize, &words[i]))
                return python_path();
            continue;
        }
        if (!Py_IS_TYPE(xs[i], Tensor_type) || (!element && !planned_layout(xs[i], native, i)))
            return python_path();
        words[i] = device_address(xs[i], itemsize);
        if (words[i] == 0)
            return python_path();
    }
    if (out != Py_None)  /* an operand that is another view of out's memory: the Python path (CuPy copies it) */
        for (Py_ssize_t i = 0; i < n; i++)
            if (Py_IS_TYPE(xs[i], Tensor_type) && SLOT(xs[i], T_buf) == SLOT(out, T_buf) && !same_view(xs[i], out))
                return python_path();
    unsigned long long inputs[2] = {words[0], words[1]};  /* (the words are rewritten below, after the GIL
                                                             may have been let go in malloc) */
    Py_ssize_t ritemsize = PyLong_AsSsize_t(G(G_RESULT_ITEMSIZE));
    PyObject *mp = NULL;
    unsigned long long o;
    if (out != Py_None)
        o = device_address(out, ritemsize);
    else if (target != NULL)
        o = device_address(target, ritemsize);
    else if ((mp = pool_block(G(G_MALLOC), G(G_NBYTES), &o)) == NULL)
        return python_path();
    PyObject *lock = G(G_LOCK);
    if (o == 0 || !try_lock(lock)) {
        Py_XDECREF(mp);
        return python_path();
    }
    unsigned long long count = PyLong_AsUnsignedLongLong(G(G_ELEMENTS));
    void *function = PyLong_AsVoidPtr(G(G_FUNCTION)), *stream = PyLong_AsVoidPtr(G(G_STREAM));
    launch_kernel_fn launch = (launch_kernel_fn)PyLong_AsVoidPtr(G(G_LAUNCH));
    unsigned blocks = (unsigned)PyLong_AsUnsignedLong(G(G_BLOCKS)), threads = (unsigned)PyLong_AsUnsignedLong(G(G_THREADS));
    int status = -1;
    if (PyErr_Occurred())
        ;
    else if (form == FORM_GEMV || form == FORM_GEMM)
        status = blas_call(form, G(G_ARGS), inputs, o);
    else if (form == FORM_BC && !PyBytes_CheckExact(G(G_ARGS)))
        ;
    else {
        words[0] = inputs[0];
        if (form == FORM_U || form == FORM_R)
            words[1] = o, words[2] = count;
        else
            words[1] = inputs[1], words[2] = o, words[3] = count;
        params[4] = form == FORM_BC ? PyBytes_AS_STRING(G(G_ARGS)) : NULL;  /* (the plan holds the bytes) */
        status = launch(function, blocks, 1, 1, threads, 1, 1, 0, stream, params, NULL);
    }
    PyErr_Clear();
    if (unlock(lock) < 0) {
        Py_XDECREF(mp);
        return NULL;
    }
    if (status != 0) {  /* (CUDA_SUCCESS is 0) nothing ran: the Python path launches it and raises the error */
        Py_XDECREF(mp);
        return python_path();
    }
#undef G
    if (out != Py_None)
        return Py_NewRef(out);
    if (target != NULL) {
        PyObject *v = SLOT(target, T_view);
        return tensor_over_target(plan, target, Py_NewRef(v == NULL ? Py_None : v));
    }
    return result_over(PyTuple_GET_ITEM(plan, 0), PyTuple_GET_ITEM(plan, 1), PyTuple_GET_ITEM(plan, 2),
                       PyTuple_GET_ITEM(plan, 4), PyTuple_GET_ITEM(native, G_ALLOCATOR), NATIVE_NBYTES(native),
                       mp, Py_None);
}

static PyObject *
client_of(PyObject *t)
{
    return SLOT(SLOT(t, T_dev), D_client);
}

/* ``held`` of a call from Python: a positive int (SLOT_HELD, 0, is an operator slot's alone) */
static int
held_arg(PyObject *arg, long *held)
{
    *held = PyLong_AsLong(arg);
    if (*held > SLOT_HELD)
        return 0;
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "held must be a positive int, got %ld", *held);
    return -1;
}

/* A compiled call's answer where it did not serve the call: NULL with the error it met, else NotImplemented
   (the caller then runs the Python path, which validates and raises as without the compiled call) */
static PyObject *
python_path(void)
{
    if (PyErr_Occurred())
        return NULL;
    return Py_NewRef(Py_NotImplemented);
}

/* The element-wise call of ``plans``' cached plan on ``x``, or NotImplemented: the Python path's to make */
static PyObject *
unary_call(PyObject *plans, PyObject *x, PyObject *out, long held)
{
    PyObject *native = NULL, *plan;
    if (Tensor_type == NULL || !Py_IS_TYPE(x, Tensor_type) || busy())
        goto fallback;
    PyObject *items[3] = {SLOT(x, T_dtype), SLOT(x, T_shape), client_of(x)};
    plan = cached(plans, items, 3, elementwise_plan_ok);
    if (plan == NULL)
        goto fallback;
    native = native_of(plan);
    PyObject *target = out == Py_None ? elide_target(plan, native, x, NULL, held) : NULL;
    if (!out_accepted(out, plan, native) || target == (PyObject *)-1) {
        Py_DECREF(plan);
        goto fallback;
    }
    if (is_device_launch(native)) {
        PyObject *r = device_call(plan, native, &x, 1, out, target);
        Py_DECREF(plan);
        return r;
    }
    PyObject *r = NULL, *v = view_of(x, native);
    if (v != NULL) {
        PyObject *tensors[1] = {x};
        r = target != NULL ? run_into(plan, native, &v, 1, target)
                           : run(plan, native, &v, 1, out, fresh_ok(plan, tensors, 1));
        Py_DECREF(v);
    }
    Py_DECREF(plan);
    return r;
fallback:
    return python_path();  /* the caller runs the Python path (_unary_py) */
}

static PyObject *
unary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long held;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "unary(op, plans, x, out, held)");
        return NULL;
    }
    if (held_arg(args[4], &held) < 0)
        return NULL;
    return unary_call(args[1], args[2], args[3], held);
}

/* The element-wise call of ``plans``' cached plan on ``x1`` and ``x2``, or NotImplemented, as unary_call */
static PyObject *
binary_call(PyObject *plans, PyObject *x1, PyObject *x2, PyObject *out, long held)
{
    PyObject *native = NULL, *plan;
    PyObject *tensors[2] = {NULL, NULL};
    PyObject *ins[2] = {NULL, NULL};
    PyObject *items[6];  /* the key: as _binary_py builds it */
    Py_ssize_t n = 4;
    int scalar = -1;  /* which operand is a Python scalar */
    if (Tensor_type == NULL || busy())
        goto fallback;
    if (Py_IS_TYPE(x1, Tensor_type)) {
        if (Py_IS_TYPE(x2, Tensor_type)) {
            items[0] = SLOT(x1, T_dtype), items[1] = SLOT(x2, T_dtype), items[2] = SLOT(x1, T_shape);
            items[3] = SLOT(x2, T_shape), items[4] = client_of(x1), items[5] = client_of(x2);
            n = 6;
        }
        else if (is_scalar(x2)) {
            items[0] = SLOT(x1, T_dtype), items[1] = (PyObject *)Py_TYPE(x2), items[2] = SLOT(x1, T_shape);
            items[3] = client_of(x1);
            scalar = 1;
        }
        else
            goto fallback;
    }
    else if (Py_IS_TYPE(x2, Tensor_type) && is_scalar(x1)) {
        items[0] = (PyObject *)Py_TYPE(x1), items[1] = SLOT(x2, T_dtype), items[2] = SLOT(x2, T_shape);
        items[3] = client_of(x2);
        scalar = 0;
    }
    else
        goto fallback;
    plan = cached(plans, items, n, elementwise_plan_ok);
    if (plan == NULL)
        goto fallback;
    native = native_of(plan);
    PyObject *target = out != Py_None ? NULL :
        elide_target(plan, native, scalar == 0 ? NULL : x1, scalar == 1 ? NULL : x2, held);
    if (!out_accepted(out, plan, native) || target == (PyObject *)-1) {
        Py_DECREF(plan);
        goto fallback;
    }
    if (is_device_launch(native)) {
        PyObject *xs[2] = {x1, x2};
        PyObject *r = device_call(plan, native, xs, 2, out, target);
        Py_DECREF(plan);
        return r;
    }
    for (int i = 0; i < 2; i++) {
        PyObject *x = i == 0 ? x1 : x2;
        if (i == scalar) {
            /* the scalar as a NumPy scalar of the plan's dtype (one that does not fit goes to the Python
               path, which raises OverflowError), or as it is where the plan says NumPy converts it alike */
            PyObject *sctype = PyTuple_GET_ITEM(native, N_SCALAR);
            ins[i] = sctype == Py_None ? Py_NewRef(x) : PyObject_CallOneArg(sctype, x);
            if (ins[i] == NULL) {
                PyErr_Clear();
                Py_XDECREF(ins[0]);
                Py_DECREF(plan);
                goto fallback;
            }
        }
        else {
            tensors[i] = x;
            ins[i] = view_of(x, native);
            if (ins[i] == NULL) {
                Py_XDECREF(ins[0]);
                Py_DECREF(plan);
                return NULL;
            }
        }
    }
    PyObject *r = target != NULL ? run_into(plan, native, ins, 2, target)
                                 : run(plan, native, ins, 2, out, fresh_ok(plan, tensors, 2));
    Py_DECREF(ins[0]);
    Py_DECREF(ins[1]);
    Py_DECREF(plan);
    return r;
fallback:
    return python_path();  /* the caller runs the Python path (_binary_py) */
}

static PyObject *
binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    long held;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "binary(op, plans, x1, x2, out, held)");
        return NULL;
    }
    if (held_arg(args[5], &held) < 0)
        return NULL;
    return binary_call(args[1], args[2], args[3], args[4], held);
}

/* --- Tensor's operators ------------------------------------------------------------------------------ */

/* TensorBase: the base class of numr_array.Tensor where this module is built, whose number slots and rich
   comparison are Tensor's operators, so that the interpreter's ``x + y`` reaches the element-wise call with
   no Python frame between. Each operator is configured (configure_operators) with its element-wise
   function's op, plan table and Python path: a cached plan runs here (binary_call, unary_call, SLOT_HELD:
   the operand's one reference is the interpreter's stack slot, which a slot borrows); everything else calls
   the Python path, ``python(op, plans, x1, x2, None, held)`` or ``python(op, plans, x, None, held)``, where
   every error is raised. That call gets ``held`` 1, FALLBACK_HELD (the frame of a Python function called from
   C holds its own reference, the borrowed stack slot one more: _calibrate_compiled checks both), only where
   an operand may be a dead temporary that the interpreter itself applied the operator to, which is told
   here, where the C stack shows it; -1 (nothing is taken) otherwise. An operand other than a tensor or a
   Python scalar is converted by ``operand`` (NumPy scalars: their Python value); where it gives None, the
   slot returns NotImplemented, so that the other operand's reflected operator runs. The in-place operators
   (``x += y``) are the namespace function with ``out=x``: a cached plan whose ``out=`` signature the Python
   path accepted runs here, anything else is ``function(x, y, out=x)``; they return x. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_TRUEDIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_MATMUL, OP_AND, OP_OR, OP_XOR,
       OP_LSHIFT, OP_RSHIFT, OP_NEG, OP_POS, OP_ABS, OP_INVERT, OP_LT, OP_LE, OP_EQ, OP_NE, OP_GT, OP_GE, OP_COUNT };
static const char *const operator_names[OP_COUNT] = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift", "rshift",
    "neg", "pos", "abs", "invert", "lt", "le", "eq", "ne", "gt", "ge"};
#define FIRST_UNARY OP_NEG
#define FIRST_COMPARISON OP_LT  /* (in the order of Py_LT ... Py_GE) */
#define FALLBACK_HELD 1
static struct { PyObject *op, *plans, *python, *function; } operators[OP_COUNT];
static PyObject *operand_fn, *elementwise_globals, *str_elide_min_bytes, *held_fallback, *held_never;

/* configure_operators(table, operand, elementwise globals): ``table`` maps each operator's name (above) to
   (op, plan table or None, Python path, namespace function); ``ELIDE_MIN_BYTES`` is read from the globals when
   needed */
static PyObject *
configure_operators(PyObject *module, PyObject *args)
{
    PyObject *table, *operand, *globals;
    if (!PyArg_ParseTuple(args, "O!OO!:configure_operators", &PyDict_Type, &table, &operand, &PyDict_Type, &globals))
        return NULL;
    if (Tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_operators: configure() first");
        return NULL;
    }
    PyObject *entries[OP_COUNT];
    for (int k = 0; k < OP_COUNT; k++) {
        PyObject *e = PyDict_GetItemString(table, operator_names[k]);
        if (e == NULL || !PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 4 ||
            !PyCallable_Check(PyTuple_GET_ITEM(e, 2)) || !PyCallable_Check(PyTuple_GET_ITEM(e, 3))) {
            PyErr_Format(PyExc_TypeError,
                         "configure_operators: %s needs (op, plans or None, python path, function)",
                         operator_names[k]);
            return NULL;
        }
        entries[k] = e;
    }
    for (int k = 0; k < OP_COUNT; k++) {
        PyObject *plans = PyTuple_GET_ITEM(entries[k], 1);
        Py_XSETREF(operators[k].op, Py_NewRef(PyTuple_GET_ITEM(entries[k], 0)));
        Py_XSETREF(operators[k].plans, plans == Py_None ? NULL : Py_NewRef(plans));
        Py_XSETREF(operators[k].python, Py_NewRef(PyTuple_GET_ITEM(entries[k], 2)));
        Py_XSETREF(operators[k].function, Py_NewRef(PyTuple_GET_ITEM(entries[k], 3)));
    }
    Py_XSETREF(operand_fn, Py_NewRef(operand));
    Py_XSETREF(elementwise_globals, Py_NewRef(globals));
    Py_RETURN_NONE;
}

/* whether the tensor operand ``x`` may be a dead temporary for the Python path: held by the stack slot alone,
   over an allocator's Buffer of at least ELIDE_MIN_BYTES (the Python path decides the rest) */
static int
maybe_dead(PyObject *x)
{
    if (x == NULL || !Py_IS_TYPE(x, Tensor_type) || Py_REFCNT(x) != 1)
        return 0;
    PyObject *buf = SLOT(x, T_buf);
    PyObject *least = PyDict_GetItemWithError(elementwise_globals, str_elide_min_bytes);
    int r = Py_IS_TYPE(buf, Buffer_type) && least != NULL &&
            PyObject_RichCompareBool(SLOT(buf, B_nbytes), least, Py_GE) == 1;
    PyErr_Clear();
    return r;
}

/* ``held`` for the Python path of an operator slot's call (borrowed): FALLBACK_HELD where an operand may be a
   dead temporary of the interpreter's operator, -1 where none can be */
static PyObject *
fallback_held(PyObject *x1, PyObject *x2)
{
    if (elision_calibrated && (maybe_dead(x1) || maybe_dead(x2)) && c_from_interpreter() == 1)
        return held_fallback;
    PyErr_Clear();
    return held_never;
}

/* ``v`` as an operand (borrowed, or a new reference in *owned), or NULL with no error set where it is none */
static PyObject *
as_operand(PyObject *v, PyObject **owned)
{
    *owned = NULL;
    if (Py_IS_TYPE(v, Tensor_type) || is_scalar(v))
        return v;
    PyObject *r = PyObject_CallOneArg(operand_fn, v);
    if (r == NULL || r == Py_None) {
        Py_XDECREF(r);
        return NULL;
    }
    return *owned = r;
}

static PyObject *
operator_binary(int k, PyObject *a, PyObject *b)
{
    if (operators[k].python == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *own1, *own2 = NULL, *r = NULL;
    PyObject *x1 = as_operand(a, &own1), *x2 = x1 == NULL ? NULL : as_operand(b, &own2);
    if (x2 == NULL) {
        Py_XDECREF(own1);
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *plans = operators[k].plans;
    if (plans != NULL) {
        r = binary_call(plans, x1, x2, Py_None, SLOT_HELD);
        if (r == Py_NotImplemented)
            Py_CLEAR(r);
        else
            goto done;
    }
    PyObject *pargs[6] = {operators[k].op, plans == NULL ? Py_None : plans, x1, x2, Py_None, fallback_held(x1, x2)};
    r = PyObject_Vectorcall(operators[k].python, pargs, 6, NULL);
done:
    Py_XDECREF(own1);
    Py_XDECREF(own2);
    return r;
}

static PyObject *
operator_unary(int k, PyObject *x)
{
    if (operators[k].python == NULL)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *plans = operators[k].plans;
    if (plans != NULL) {
        PyObject *r = unary_call(plans, x, Py_None, SLOT_HELD);
        if (r != Py_NotImplemented)
            return r;
        Py_DECREF(r);
    }
    PyObject *pargs[5] = {operators[k].op, plans == NULL ? Py_None : plans, x, Py_None, fallback_held(x, NULL)};
    return PyObject_Vectorcall(operators[k].python, pargs, 5, NULL);
}

/* the binary operators of the in-place ones, by index (pow aside) */
static binaryfunc number_ops[OP_RSHIFT + 1] = {
    PyNumber_Add, PyNumber_Subtract, PyNumber_Multiply, PyNumber_TrueDivide, PyNumber_FloorDivide,
    PyNumber_Remainder, NULL, PyNumber_MatrixMultiply, PyNumber_And, PyNumber_Or, PyNumber_Xor, PyNumber_Lshift,
    PyNumber_Rshift};

/* x op= y: the namespace function's call with out=x (see above) */
static PyObject *
operator_inplace(int k, PyObject *x, PyObject *b)
{
    if (operators[k].function == NULL || !Py_IS_TYPE(x, Tensor_type))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *own, *r = NULL;
    PyObject *y = as_operand(b, &own);
    if (y == NULL) {
        if (PyErr_Occurred())
            return NULL;
        /* x = x op b, which the interpreter would try next: not NotImplemented, which, from the slot a heap
           type also takes as its sq_inplace_concat (x += b), would be the result */
        return k == OP_POW ? PyNumber_Power(x, b, Py_None) : number_ops[k](x, b);
    }
    PyObject *plans = operators[k].plans;
    if (plans != NULL) {
        r = binary_call(plans, x, y, x, 1);
        if (r == Py_NotImplemented)
            Py_CLEAR(r);
    }
    if (r == NULL && !PyErr_Occurred()) {
        PyObject *fargs[3] = {x, y, x};
        r = PyObject_Vectorcall(operators[k].function, fargs, 2, out_kwnames);
    }
    Py_XDECREF(own);
    if (r == NULL)
        return NULL;
    Py_DECREF(r);
    return Py_NewRef(x);
}

#define BINARY_SLOT(name, k) \
    static PyObject *name(PyObject *a, PyObject *b) { return operator_binary(k, a, b); } \
    static PyObject *name##_inplace(PyObject *a, PyObject *b) { return operator_inplace(k, a, b); }
#define UNARY_SLOT(name, k) static PyObject *name(PyObject *x) { return operator_unary(k, x); }
BINARY_SLOT(tensor_add, OP_ADD)
BINARY_SLOT(tensor_sub, OP_SUB)
BINARY_SLOT(tensor_mul, OP_MUL)
BINARY_SLOT(tensor_truediv, OP_TRUEDIV)
BINARY_SLOT(tensor_floordiv, OP_FLOORDIV)
BINARY_SLOT(tensor_mod, OP_MOD)
BINARY_SLOT(tensor_matmul, OP_MATMUL)
BINARY_SLOT(tensor_and, OP_AND)
BINARY_SLOT(tensor_or, OP_OR)
BINARY_SLOT(tensor_xor, OP_XOR)
BINARY_SLOT(tensor_lshift, OP_LSHIFT)
BINARY_SLOT(tensor_rshift, OP_RSHIFT)
UNARY_SLOT(tensor_neg, OP_NEG)
UNARY_SLOT(tensor_pos, OP_POS)
UNARY_SLOT(tensor_abs, OP_ABS)
UNARY_SLOT(tensor_invert, OP_INVERT)

static PyObject *
tensor_pow(PyObject *a, PyObject *b, PyObject *modulus)
{
    if (modulus != Py_None)  /* (pow(x, y, m): no such element-wise function) */
        Py_RETURN_NOTIMPLEMENTED;
    return operator_binary(OP_POW, a, b);
}

static PyObject *
tensor_pow_inplace(PyObject *a, PyObject *b, PyObject *modulus)
{
    if (modulus != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return operator_inplace(OP_POW, a, b);
}

static PyObject *
tensor_richcompare(PyObject *self, PyObject *other, int op)
{
    return operator_binary(FIRST_COMPARISON + op, self, other);
}

static PyNumberMethods tensor_as_number = {
    .nb_add = tensor_add, .nb_subtract = tensor_sub, .nb_multiply = tensor_mul, .nb_true_divide = tensor_truediv,
    .nb_floor_divide = tensor_floordiv, .nb_remainder = tensor_mod, .nb_power = tensor_pow,
    .nb_matrix_multiply = tensor_matmul, .nb_and = tensor_and, .nb_or = tensor_or, .nb_xor = tensor_xor,
    .nb_lshift = tensor_lshift, .nb_rshift = tensor_rshift, .nb_negative = tensor_neg, .nb_positive = tensor_pos,
    .nb_absolute = tensor_abs, .nb_invert = tensor_invert,
    .nb_inplace_add = tensor_add_inplace, .nb_inplace_subtract = tensor_sub_inplace,
    .nb_inplace_multiply = tensor_mul_inplace, .nb_inplace_true_divide = tensor_truediv_inplace,
    .nb_inplace_floor_divide = tensor_floordiv_inplace, .nb_inplace_remainder = tensor_mod_inplace,
    .nb_inplace_power = tensor_pow_inplace, .nb_inplace_matrix_multiply = tensor_matmul_inplace,
    .nb_inplace_and = tensor_and_inplace, .nb_inplace_or = tensor_or_inplace, .nb_inplace_xor = tensor_xor_inplace,
    .nb_inplace_lshift = tensor_lshift_inplace, .nb_inplace_rshift = tensor_rshift_inplace,
};

static PyTypeObject TensorBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numr_array._speedups.TensorBase",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The base class of numr_array.Tensor: its operators, in C (configure_operators).",
    .tp_as_number = &tensor_as_number,
    .tp_richcompare = tensor_richcompare,
    .tp_new = PyType_GenericNew,
};

/* Probe: the reference counts an operator slot sees, for _elementwise._calibrate_compiled: ``probe + 1`` and
   ``-probe`` give the probe's count in the slot, ``probe - f`` calls ``f(probe)`` from the slot, as the
   operators call their Python path (the count in f's frame is then the Python path's). */
static PyObject *
probe_refs(PyObject *a, PyObject *b)
{
    return PyLong_FromSsize_t(Py_REFCNT(a));
}

static PyObject *
probe_call(PyObject *a, PyObject *b)
{
    return PyObject_CallOneArg(b, a);
}

static PyObject *
probe_neg(PyObject *x)
{
    return PyLong_FromSsize_t(Py_REFCNT(x));
}

static PyNumberMethods probe_as_number = {.nb_add = probe_refs, .nb_subtract = probe_call, .nb_negative = probe_neg};

static PyTypeObject ProbeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "numr_array._speedups.Probe",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reference counts as an operator slot sees them (for the elision's calibration).",
    .tp_as_number = &probe_as_number,
    .tp_new = PyType_GenericNew,
};

/* reduce(plans, x, axis, keepdims, dtype, out): ``sum``, ``prod``, ``max``, ``min`` or ``mean`` of a cached
   plan (numr_array/_statistical.py, _reduce_plan), for ``dtype`` and ``out`` None, ``keepdims`` a bool and
   ``axis`` None, an int or a tuple of ints (exact types: a key of True would find the plan of axis 1). The key
   (x's dtype, shape and client, axis, keepdims) is the Python path's, which keeps a plan only for a call it
   validated and ran; the plan (below) is the result's dtype, shape, strides and device, how to make it
   (allocator, bytes, NumPy dtype, numpy.empty, view maker), NumPy's error state, and the kernel as the CPU
   client describes it (CpuClient.reduce_launch): ``reduce(view, axes, acc, out, keepdims)`` of a ufunc,
   where ``wide`` says the result is computed in ``acc`` and then assigned (rounded once) to the result, and
   ``divide``, None or (true_divide, count) of a mean, divides the sum in place as numpy.mean does. Anything
   else returns NotImplemented, and the caller runs the Python path. */
enum { R_DTYPE, R_SHAPE, R_STRIDES, R_DEV, R_ALLOCATOR, R_NBYTES, R_NPDTYPE, R_EMPTY, R_NATIVE, R_ERRVAR, R_QUIET,
       R_REDUCE, R_AXES, R_ACC, R_KEEPDIMS, R_WIDE, R_DIVIDE, R_LEN };

static PyObject *divide_kwnames;  /* ("out", "casting") */
static PyObject *str_unsafe;

/* a reduction's plan: the CPU's (R_*), or a GPU's direct kernel (an element-wise plan's layout, form R) */
static int
reduce_plan_ok(PyObject *plan)
{
    if (PyTuple_CheckExact(plan) && PyTuple_GET_SIZE(plan) != R_LEN)
        return elementwise_plan_ok(plan) && is_device_launch(native_of(plan));
    return PyTuple_CheckExact(plan) && PyTuple_GET_SIZE(plan) == R_LEN &&
           PyObject_TypeCheck(PyTuple_GET_ITEM(plan, R_ALLOCATOR), &LedgerType) &&
           PyContextVar_CheckExact(PyTuple_GET_ITEM(plan, R_ERRVAR));
}

static int
axis_keyable(PyObject *axis)
{
    if (axis == Py_None || PyLong_CheckExact(axis))
        return 1;
    if (!PyTuple_CheckExact(axis))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(axis); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(axis, i)))
            return 0;
    return 1;
}

#define P(i) PyTuple_GET_ITEM(plan, i)

static PyObject *
run_reduce(PyObject *plan, PyObject *x)
{
    PyObject *v = view_by(x, P(R_NATIVE)), *r = NULL, *ctx;
    if (v == NULL)
        return NULL;
    PyObject *eargs[2] = {P(R_SHAPE), P(R_NPDTYPE)};
    PyObject *arr = PyObject_Vectorcall(P(R_EMPTY), eargs, 2, NULL);
    int entered = arr == NULL ? -1 : enter_quiet(P(R_ERRVAR), P(R_QUIET), &ctx);
    if (entered >= 0) {
        int wide = P(R_WIDE) == Py_True;
        PyObject *rargs[5] = {v, P(R_AXES), P(R_ACC), wide ? Py_None : arr, P(R_KEEPDIMS)};
        r = PyObject_Vectorcall(P(R_REDUCE), rargs, 5, NULL);
        if (r != NULL && wide) {
            int e = PyObject_SetItem(arr, Py_Ellipsis, r);
            Py_SETREF(r, e < 0 ? NULL : Py_NewRef(arr));
        }
        PyObject *divide = P(R_DIVIDE);
        if (r != NULL && divide != Py_None) {
            PyObject *dargs[4] = {arr, PyTuple_GET_ITEM(divide, 1), arr, str_unsafe};
            Py_SETREF(r, PyObject_Vectorcall(PyTuple_GET_ITEM(divide, 0), dargs, 2, divide_kwnames));
        }
        if (entered == 1 && PyContext_Exit(ctx) < 0)
            Py_CLEAR(r);
    }
    Py_DECREF(v);
    if (r == NULL) {
        Py_XDECREF(arr);
        return NULL;
    }
    Py_DECREF(r);
    return make_result(P(R_DTYPE), P(R_SHAPE), P(R_STRIDES), P(R_DEV), P(R_ALLOCATOR), P(R_NBYTES), arr);
}

static PyObject *
reduce(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "reduce(plans, x, axis, keepdims, dtype, out)");
        return NULL;
    }
    PyObject *x = args[1], *axis = args[2], *keepdims = args[3];
    if (Tensor_type == NULL || !Py_IS_TYPE(x, Tensor_type) || args[4] != Py_None || args[5] != Py_None ||
        (keepdims != Py_True && keepdims != Py_False) || !axis_keyable(axis) || busy())
        goto fallback;
    PyObject *items[5] = {SLOT(x, T_dtype), SLOT(x, T_shape), client_of(x), axis, keepdims};
    PyObject *plan = cached(args[0], items, 5, reduce_plan_ok);
    if (plan == NULL)
        goto fallback;
    PyObject *r = PyTuple_GET_SIZE(plan) == R_LEN ? run_reduce(plan, x)
                                                  : device_call(plan, native_of(plan), &x, 1, Py_None, NULL);
    Py_DECREF(plan);
    return r;
fallback:
    return python_path();
}

/* asarray(plans, obj, dtype, device, copy): ``numr_array.asarray`` of a Python scalar, or of a flat list or
   tuple of them, with ``copy`` None or True, by a plan of the Python path (numr_array/_creation.py,
   _asarray_plan) keyed on (obj's type, dtype, device's type, device), ``device`` the default device where
   None was given (its type in the key: a Device equals its name, and hashes as it).
   The plan: the dtype and device arguments it was made for (compared by identity, or both strings, which
   the key compared: a key equal to another by value across types, such as a dtype's name beside the
   DType, is the Python path's), the device, the client's allocator, numpy.asarray and the
   NumPy dtype to convert to (None: NumPy's choice), and the accepted results: {NumPy dtype: (DType,
   itemsize)} of the dtypes the Python path gave for the key unchanged. The value is converted as the Python
   path converts it (numpy.asarray); a conversion that raises, or gives a dtype not accepted (a Python int
   beyond int64, say), goes to the Python path, which raises its own error. */
enum { A_DTYPEARG, A_DEVARG, A_DEV, A_ALLOCATOR, A_ASARRAY, A_NPDTYPE, A_ACCEPTED, A_LEN };

static PyObject *str_dtype, *empty_tuple;

/* A GPU client's plan of asarray of a Python scalar (_creation._scalar_plan, CudaClient.scalar_launch): the
   dtype and device arguments it was made for, the device, the allocator, the result's dtype, its itemsize, the
   kind of conversion ('f': a float to float32/float64, 'i': an int to a signed integer of the itemsize, 'b':
   a bool), then the store kernel's launch: cuLaunchKernel, its CUfunction, the stream's handle and object,
   CuPy's current-stream call, the pool's malloc and the client's lock. */
enum { SA_DTYPEARG, SA_DEVARG, SA_DEV, SA_ALLOCATOR, SA_DTYPE, SA_ITEMSIZE, SA_KIND, SA_LAUNCH, SA_FUNCTION, SA_STREAM,
       SA_STREAM_OBJ, SA_CURRENT_STREAM, SA_MALLOC, SA_LOCK, SA_LEN };

/* The bytes of the Python scalar ``v`` converted as numpy.asarray converts it to the plan's dtype, in *word;
   0 where C does not convert it so (another type, an int out of range: the Python path's) */
static int
scalar_bytes(PyObject *v, int kind, Py_ssize_t itemsize, unsigned long long *word)
{
    *word = 0;
    if (kind == 'b') {
        if (!PyBool_Check(v) || itemsize != 1)
            return 0;
        *word = v == Py_True;
        return 1;
    }
    if (kind == 'f' && !PyFloat_CheckExact(v))
        return 0;
    if (kind == 'i') {
        int overflow = 0;
        if (!PyLong_CheckExact(v))
            return 0;
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (i == -1 && PyErr_Occurred()) ||
            (itemsize < 8 && (i < -(1LL << (8 * itemsize - 1)) || i >= (1LL << (8 * itemsize - 1))))) {
            PyErr_Clear();
            return 0;
        }
        memcpy(word, &i, (size_t)itemsize);  /* (little-endian: the low bytes) */
        return itemsize <= 8;
    }
    return scalar_word(v, kind, itemsize, word);
}

static PyObject *
device_asarray(PyObject *plan, PyObject *obj)
{
    static unsigned long long words[4];
    static void *params[4] = {&words[0], &words[1], &words[2], &words[3]};
    unsigned long long value;
    Py_ssize_t itemsize = PyLong_AsSsize_t(P(SA_ITEMSIZE));
    int kind = (int)PyLong_AsLong(P(SA_KIND));
    if (PyErr_Occurred())
        return NULL;
    if (!scalar_bytes(obj, kind, itemsize, &value))
        return python_path();
    int current = on_stream(P(SA_CURRENT_STREAM), P(SA_STREAM_OBJ));
    if (current <= 0)
        return current < 0 ? NULL : python_path();
    unsigned long long o;
    PyObject *nbytes = PyLong_FromSsize_t(itemsize);
    if (nbytes == NULL)
        return NULL;
    PyObject *mp = pool_block(P(SA_MALLOC), nbytes, &o);
    if (mp == NULL || !try_lock(P(SA_LOCK))) {
        Py_XDECREF(mp);
        Py_DECREF(nbytes);
        return python_path();
    }
    launch_kernel_fn launch = (launch_kernel_fn)PyLong_AsVoidPtr(P(SA_LAUNCH));
    void *function = PyLong_AsVoidPtr(P(SA_FUNCTION)), *stream = PyLong_AsVoidPtr(P(SA_STREAM));
    int status = -1;
    if (!PyErr_Occurred()) {
        words[0] = o, words[1] = value, words[2] = 0, words[3] = (unsigned long long)itemsize;
        status = launch(function, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
    }
    PyErr_Clear();
    int released = unlock(P(SA_LOCK));
    if (released < 0 || status != 0) {
        Py_DECREF(mp);
        Py_DECREF(nbytes);
        return released < 0 ? NULL : python_path();
    }
    PyObject *r = result_over(P(SA_DTYPE), empty_tuple, empty_tuple, P(SA_DEV), P(SA_ALLOCATOR), nbytes, mp, Py_None);
    Py_DECREF(nbytes);
    return r;
}

static PyObject *
asarray(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "asarray(plans, obj, dtype, device, copy)");
        return NULL;
    }
    PyObject *obj = args[1], *dtype = args[2], *device = args[3], *copy = args[4];
    Py_ssize_t n = -1;  /* the length of a list or tuple; -1 for a scalar */
    if (Tensor_type == NULL || (copy != Py_None && copy != Py_True))
        goto fallback;
    if (!is_scalar(obj)) {
        if (!PyList_CheckExact(obj) && !PyTuple_CheckExact(obj))
            goto fallback;
        n = PySequence_Fast_GET_SIZE(obj);
        PyObject **items = PySequence_Fast_ITEMS(obj);
        for (Py_ssize_t i = 0; i < n; i++)
            if (!is_scalar(items[i]))
                goto fallback;
    }
    if (busy())
        goto fallback;
    PyObject *key = PyTuple_Pack(4, (PyObject *)Py_TYPE(obj), dtype, (PyObject *)Py_TYPE(device), device);
    if (key == NULL)
        return NULL;
    PyObject *plan = PyDict_GetItemWithError(args[0], key);
    Py_DECREF(key);
    if (plan == NULL)
        PyErr_Clear();  /* (an unhashable dtype or device: the Python path reports it) */
    if (plan != NULL && PyTuple_CheckExact(plan) && PyTuple_GET_SIZE(plan) == SA_LEN && n < 0 &&
        P(SA_DTYPEARG) == dtype &&
        (P(SA_DEVARG) == device || (PyUnicode_CheckExact(device) && PyUnicode_CheckExact(P(SA_DEVARG)))) &&
        PyObject_TypeCheck(P(SA_ALLOCATOR), &LedgerType)) {
        Py_INCREF(plan);  /* (held for the call) */
        PyObject *r = device_asarray(plan, obj);
        Py_DECREF(plan);
        return r;
    }
    if (plan == NULL || !PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != A_LEN || P(A_DTYPEARG) != dtype ||
        (P(A_DEVARG) != device && !(PyUnicode_CheckExact(device) && PyUnicode_CheckExact(P(A_DEVARG)))) ||
        !PyObject_TypeCheck(P(A_ALLOCATOR), &LedgerType) || !PyDict_CheckExact(P(A_ACCEPTED)))
        goto fallback;
    Py_INCREF(plan);  /* (held for the call: code it runs may empty the table) */
    PyObject *cargs[2] = {obj, P(A_NPDTYPE)};
    PyObject *a = PyObject_Vectorcall(P(A_ASARRAY), cargs, 2, NULL), *r = NULL;
    PyObject *npdtype = a == NULL ? NULL : PyObject_GetAttr(a, str_dtype);
    PyObject *acc = npdtype == NULL ? NULL : PyDict_GetItemWithError(P(A_ACCEPTED), npdtype);
    Py_XDECREF(npdtype);
    if (acc == NULL || !PyTuple_CheckExact(acc) || PyTuple_GET_SIZE(acc) != 2) {
        PyErr_Clear();  /* (the Python path raises its own error, or converts otherwise) */
        Py_XDECREF(a);
        Py_DECREF(plan);
        goto fallback;
    }
    Py_ssize_t itemsize = PyLong_AsSsize_t(PyTuple_GET_ITEM(acc, 1));
    PyObject *shape = n < 0 ? Py_NewRef(empty_tuple) : Py_BuildValue("(n)", n);
    PyObject *strides = n < 0 ? Py_NewRef(empty_tuple) : Py_BuildValue("(i)", 1);
    PyObject *nbytes = PyLong_FromSsize_t(itemsize * (n < 0 ? 1 : n));
    if (shape == NULL || strides == NULL || nbytes == NULL || (itemsize == -1 && PyErr_Occurred()))
        Py_DECREF(a);
    else
        r = make_result(PyTuple_GET_ITEM(acc, 0), shape, strides, P(A_DEV), P(A_ALLOCATOR), nbytes, a);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(nbytes);
    Py_DECREF(plan);
    return r;
fallback:
    return python_path();
}

/* like(plans, x, dtype, device, shape): ``zeros_like``, ``ones_like`` or ``empty_like`` of a tensor ``x``, the
   other arguments None, by a plan of the Python path (numr_array/_creation.py, _like_plan) keyed on (x's dtype,
   shape and client): the result's dtype, shape, strides, device, allocator, bytes and NumPy dtype, the
   function making its array (numpy.zeros or numpy.empty) and None or the NumPy scalar to fill it with. */
enum { L_DTYPE, L_SHAPE, L_STRIDES, L_DEV, L_ALLOCATOR, L_NBYTES, L_NPDTYPE, L_MAKE, L_FILL, L_LEN };

static PyObject *str_fill;

static int
like_plan_ok(PyObject *plan)
{
    return PyTuple_CheckExact(plan) && PyTuple_GET_SIZE(plan) == L_LEN &&
           PyObject_TypeCheck(PyTuple_GET_ITEM(plan, L_ALLOCATOR), &LedgerType);
}

static PyObject *
like(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "like(plans, x, dtype, device, shape)");
        return NULL;
    }
    PyObject *x = args[1];
    if (Tensor_type == NULL || !Py_IS_TYPE(x, Tensor_type) || args[2] != Py_None || args[3] != Py_None ||
        args[4] != Py_None || busy())
        goto fallback;
    PyObject *items[3] = {SLOT(x, T_dtype), SLOT(x, T_shape), client_of(x)};
    PyObject *plan = cached(args[0], items, 3, like_plan_ok);
    if (plan == NULL)
        goto fallback;
    PyObject *margs[2] = {P(L_SHAPE), P(L_NPDTYPE)};
    PyObject *arr = PyObject_Vectorcall(P(L_MAKE), margs, 2, NULL), *r = NULL;
    if (arr != NULL && P(L_FILL) != Py_None) {
        PyObject *f = PyObject_CallMethodOneArg(arr, str_fill, P(L_FILL));
        if (f == NULL)
            Py_CLEAR(arr);
        Py_XDECREF(f);
    }
    if (arr != NULL)
        r = make_result(P(L_DTYPE), P(L_SHAPE), P(L_STRIDES), P(L_DEV), P(L_ALLOCATOR), P(L_NBYTES), arr);
    Py_DECREF(plan);
    return r;
fallback:
    return python_path();
}

#undef P

/* where(plans, condition, x1, x2, out): ``numr_array.where`` of three arrays on one client, for ``out`` None,
   by a plan of the Python path (numr_array/_searching.py) keyed on (the three dtypes, the three shapes, the
   client), kept where x1 and x2 have the result's dtype: numpy.where of their NumPy views, whose own result
   becomes the tensor's buffer (the client's ``where_launch``; the kernel's copies into a result give the
   same values). A result NumPy lays out otherwise than C order (operands all in another order) is dropped and
   the call goes to the Python path, as does every other call. */
enum { W_DTYPE, W_SHAPE, W_STRIDES, W_DEV, W_ALLOCATOR, W_NBYTES, W_WHERE, W_NATIVE, W_BYTE_STRIDES, W_LEN };

static PyObject *str_strides;

static int
where_plan_ok(PyObject *plan)
{
    return PyTuple_CheckExact(plan) && PyTuple_GET_SIZE(plan) == W_LEN &&
           PyObject_TypeCheck(PyTuple_GET_ITEM(plan, W_ALLOCATOR), &LedgerType);
}

static PyObject *
where3(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "where(plans, condition, x1, x2, out)");
        return NULL;
    }
    PyObject *c = args[1], *x1 = args[2], *x2 = args[3];
    if (Tensor_type == NULL || args[4] != Py_None || !Py_IS_TYPE(c, Tensor_type) || !Py_IS_TYPE(x1, Tensor_type) ||
        !Py_IS_TYPE(x2, Tensor_type) || client_of(x1) != client_of(c) || client_of(x2) != client_of(c) || busy())
        goto fallback;
    PyObject *items[7] = {SLOT(c, T_dtype), SLOT(x1, T_dtype), SLOT(x2, T_dtype), SLOT(c, T_shape),
                          SLOT(x1, T_shape), SLOT(x2, T_shape), client_of(c)};
    PyObject *plan = cached(args[0], items, 7, where_plan_ok), *views[3] = {NULL, NULL, NULL}, *arr = NULL;
    if (plan == NULL)
        goto fallback;
    for (int i = 0; i < 3; i++)
        if ((views[i] = view_by(args[1 + i], PyTuple_GET_ITEM(plan, W_NATIVE))) == NULL)
            goto done;
    arr = PyObject_Vectorcall(PyTuple_GET_ITEM(plan, W_WHERE), views, 3, NULL);
    PyObject *st = arr == NULL ? NULL : PyObject_GetAttr(arr, str_strides);
    int c_order = st == NULL ? -1 : PyObject_RichCompareBool(st, PyTuple_GET_ITEM(plan, W_BYTE_STRIDES), Py_EQ);
    Py_XDECREF(st);
    if (c_order != 1)
        Py_CLEAR(arr);  /* (not C order: NotImplemented below, the Python path) */
done:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(views[i]);
    PyObject *r = arr == NULL ? NULL :
        make_result(PyTuple_GET_ITEM(plan, W_DTYPE), PyTuple_GET_ITEM(plan, W_SHAPE), PyTuple_GET_ITEM(plan, W_STRIDES),
                    PyTuple_GET_ITEM(plan, W_DEV), PyTuple_GET_ITEM(plan, W_ALLOCATOR),
                    PyTuple_GET_ITEM(plan, W_NBYTES), arr);
    Py_DECREF(plan);
    if (r == NULL && !PyErr_Occurred())
        return Py_NewRef(Py_NotImplemented);
    return r;
fallback:
    return python_path();
}

/* concat(arrays, axis, plans, fallback): ``numr_array.concat`` of a cached plan (numr_array/_manipulation.py,
   _concat_plan): the key (axis, client, then each array's dtype and shape) looked up in ``plans``; the plan
   (dtype, shape, strides, device, allocator, nbytes, NumPy dtype, numpy.empty, view maker, per array the
   index of its place in the result or None) says where each array goes. Every array has the result's dtype
   (the plan exists only then), so each copy is a plain assignment, which raises no floating-point error.
   Anything else is ``fallback(arrays, axis)``. */
enum { C_DTYPE, C_SHAPE, C_STRIDES, C_DEV, C_ALLOCATOR, C_NBYTES, C_NPDTYPE, C_EMPTY, C_NATIVE, C_PLACES, C_LEN };

/* A GPU client's concat plan (_manipulation._concat_plan, CudaClient.concat_launch): the result's dtype, shape,
   strides, device, allocator and bytes, the driver's cuMemcpyDtoDAsync, the stream's handle and object, CuPy's
   current-stream call, the pool's malloc, the client's lock, and per array (its byte offset in the result,
   its bytes, the strides it must have, its itemsize) or None for an empty one: each array is one
   device-to-device copy into a contiguous range of the result. */
enum { DC_DTYPE, DC_SHAPE, DC_STRIDES, DC_DEV, DC_ALLOCATOR, DC_NBYTES, DC_MEMCPY, DC_STREAM, DC_STREAM_OBJ,
       DC_CURRENT_STREAM, DC_MALLOC, DC_LOCK, DC_PIECES, DC_LEN };
typedef int (*memcpy_fn)(unsigned long long dst, unsigned long long src, size_t bytes, void *stream);

/* The concat of ``items`` by the device plan: the new result, or NotImplemented (nothing kept) where the
   Python path must make it (as device_call: another stream current, an array not laid out as planned, the
   lock another thread's, a failed allocation or copy). */
static PyObject *
device_concat(PyObject *plan, PyObject *const *items, Py_ssize_t n)
{
#define D(k) PyTuple_GET_ITEM(plan, k)
    PyObject *pieces = D(DC_PIECES);
    if (!PyTuple_CheckExact(pieces) || PyTuple_GET_SIZE(pieces) != n)
        return python_path();
    int current = on_stream(D(DC_CURRENT_STREAM), D(DC_STREAM_OBJ));
    if (current <= 0)
        return current < 0 ? NULL : python_path();
    unsigned long long src[64];
    if (n > 64)
        return python_path();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(pieces, i);
        if (p == Py_None)
            continue;
        PyObject *want = PyTuple_GET_ITEM(p, 2), *st = SLOT(items[i], T_strides);
        if (st != want && PyObject_RichCompareBool(st, want, Py_EQ) != 1) {
            PyErr_Clear();
            return python_path();
        }
        src[i] = device_address(items[i], PyLong_AsSsize_t(PyTuple_GET_ITEM(p, 3)));
        if (src[i] == 0)
            return python_path();
    }
    unsigned long long o;
    PyObject *mp = pool_block(D(DC_MALLOC), D(DC_NBYTES), &o);
    if (mp == NULL || !try_lock(D(DC_LOCK))) {
        Py_XDECREF(mp);
        return python_path();
    }
    memcpy_fn copy = (memcpy_fn)PyLong_AsVoidPtr(D(DC_MEMCPY));
    void *stream = PyLong_AsVoidPtr(D(DC_STREAM));
    int status = PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; status == 0 && i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(pieces, i);
        if (p == Py_None)
            continue;
        unsigned long long off = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(p, 0));
        size_t bytes = PyLong_AsSize_t(PyTuple_GET_ITEM(p, 1));
        status = PyErr_Occurred() ? -1 : copy(o + off, src[i], bytes, stream);
    }
    PyErr_Clear();
    if (unlock(D(DC_LOCK)) < 0) {
        Py_DECREF(mp);
        return NULL;
    }
    if (status != 0) {  /* (a copy already queued wrote only the new block, which goes back to the pool) */
        Py_DECREF(mp);
        return python_path();
    }
    return result_over(D(DC_DTYPE), D(DC_SHAPE), D(DC_STRIDES), D(DC_DEV), D(DC_ALLOCATOR), D(DC_NBYTES), mp,
                       Py_None);
#undef D
}

static PyObject *
concat(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "concat(arrays, axis, plans, fallback)");
        return NULL;
    }
    PyObject *arrays = args[0], *axis = args[1], *plans = args[2], *fallback = args[3];
    PyObject *key = NULL, *plan, *arr = NULL;
    Py_ssize_t n;
    if (Tensor_type == NULL || busy() || !PyLong_CheckExact(axis) ||
        !(PyList_CheckExact(arrays) || PyTuple_CheckExact(arrays)))
        goto fallback;
    n = PySequence_Fast_GET_SIZE(arrays);
    if (n == 0)
        goto fallback;
    PyObject **items = PySequence_Fast_ITEMS(arrays);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_IS_TYPE(items[i], Tensor_type))
            goto fallback;
    key = PyTuple_New(2 + 2 * n);
    if (key == NULL)
        return NULL;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(axis));
    PyTuple_SET_ITEM(key, 1, Py_NewRef(client_of(items[0])));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(key, 2 + 2 * i, Py_NewRef(SLOT(items[i], T_dtype)));
        PyTuple_SET_ITEM(key, 3 + 2 * i, Py_NewRef(SLOT(items[i], T_shape)));
    }
    plan = PyDict_GetItemWithError(plans, key);
    Py_DECREF(key);
    if (plan == NULL || !PyTuple_CheckExact(plan) ||
        (PyTuple_GET_SIZE(plan) != C_LEN && PyTuple_GET_SIZE(plan) != DC_LEN) ||
        !PyObject_TypeCheck(PyTuple_GET_ITEM(plan, C_ALLOCATOR), &LedgerType))
        goto fallback;
    for (Py_ssize_t i = 0; i < n; i++)  /* (the key names the first array's client: all must share it) */
        if (client_of(items[i]) != client_of(items[0]))
            goto fallback;
    Py_INCREF(plan);  /* (held for the call: code it runs may empty the table) */
    if (PyTuple_GET_SIZE(plan) == DC_LEN) {
        PyObject *r = device_concat(plan, items, n);
        Py_DECREF(plan);
        if (r != Py_NotImplemented)
            return r;
        Py_DECREF(r);
        goto fallback;
    }
    PyObject *eargs[2] = {PyTuple_GET_ITEM(plan, C_SHAPE), PyTuple_GET_ITEM(plan, C_NPDTYPE)};
    arr = PyObject_Vectorcall(PyTuple_GET_ITEM(plan, C_EMPTY), eargs, 2, NULL);
    PyObject *places = PyTuple_GET_ITEM(plan, C_PLACES);
    for (Py_ssize_t i = 0; arr != NULL && i < n; i++) {
        PyObject *place = PyTuple_GET_ITEM(places, i);
        if (place == Py_None)
            continue;
        PyObject *v = SLOT(items[i], T_view);
        if (v == NULL || v == Py_None)
            v = PyObject_CallOneArg(PyTuple_GET_ITEM(plan, C_NATIVE), items[i]);
        else
            Py_INCREF(v);
        if (v == NULL || PyObject_SetItem(arr, place, v) < 0)
            Py_CLEAR(arr);
        Py_XDECREF(v);
    }
    PyObject *r = arr == NULL ? NULL :
        make_result(PyTuple_GET_ITEM(plan, C_DTYPE), PyTuple_GET_ITEM(plan, C_SHAPE),
                    PyTuple_GET_ITEM(plan, C_STRIDES), PyTuple_GET_ITEM(plan, C_DEV),
                    PyTuple_GET_ITEM(plan, C_ALLOCATOR), PyTuple_GET_ITEM(plan, C_NBYTES), arr);
    Py_DECREF(plan);
    return r;
fallback:
    if (PyErr_Occurred())
        return NULL;
    return PyObject_Vectorcall(fallback, args, 2, NULL);
}

/* Tensor.__getitem__ (numr_array._indexing.getitem): ``x[a:b:c]`` of a tensor of at least one axis in C
   (the view's shape, strides and offset as getitem's plain-slice path computes them, and, where the parent
   has a NumPy view, its view as the parent's indexed alike); every other key, and a slice whose bounds do not convert, goes to
   getitem, which also reports the errors. */
static PyObject *getitem_fallback;
static PyTypeObject *ndarray_type;  /* numpy.ndarray: the NumPy views, whose indexing costs a fraction of a call */

static PyObject *
tensor_getitem(PyObject *x, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "__getitem__ takes one key");
        return NULL;
    }
    PyObject *key = args[0];
    PyObject *shape = SLOT(x, T_shape), *strides = SLOT(x, T_strides);
    Py_ssize_t start, stop, step;
    if (!PySlice_Check(key) || !PyTuple_CheckExact(shape) || PyTuple_GET_SIZE(shape) == 0 ||
        !PyTuple_CheckExact(strides) || PyTuple_GET_SIZE(strides) != PyTuple_GET_SIZE(shape))
        goto fallback;
    if (PySlice_Unpack(key, &start, &stop, &step) < 0) {
        PyErr_Clear();
        goto fallback;
    }
    Py_ssize_t n0 = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0));
    Py_ssize_t st = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, 0));
    Py_ssize_t offset = PyLong_AsSsize_t(SLOT(x, T_offset));
    if ((n0 == -1 || st == -1 || offset == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        goto fallback;
    }
    Py_ssize_t len = PySlice_AdjustIndices(n0, &start, &stop, step);
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    PyObject *nshape = PyTuple_New(ndim), *nstrides = PyTuple_New(ndim), *view = NULL, *t = NULL;
    if (nshape == NULL || nstrides == NULL)
        goto error;
    int empty = len == 0;
    for (Py_ssize_t i = 1; i < ndim; i++) {
        PyObject *d = PyTuple_GET_ITEM(shape, i);
        PyTuple_SET_ITEM(nshape, i, Py_NewRef(d));
        PyTuple_SET_ITEM(nstrides, i, Py_NewRef(PyTuple_GET_ITEM(strides, i)));
        if (PyLong_CheckExact(d) && PyLong_AsSsize_t(d) == 0)
            empty = 1;
    }
    PyObject *a = PyLong_FromSsize_t(len), *b = PyLong_FromSsize_t(st * step);
    PyObject *o = PyLong_FromSsize_t(empty ? 0 : offset + start * st);  /* (an empty view: offset 0) */
    if (a == NULL || b == NULL || o == NULL) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_XDECREF(o);
        goto error;
    }
    PyTuple_SET_ITEM(nshape, 0, a);
    PyTuple_SET_ITEM(nstrides, 0, b);
    PyObject *pv = SLOT(x, T_view);
    if (pv != NULL && Py_IS_TYPE(pv, ndarray_type)) {
        PyObject *k = PyTuple_Pack(2, key, Py_Ellipsis);
        view = k == NULL ? NULL : PyObject_GetItem(pv, k);
        Py_XDECREF(k);
        if (view == NULL) {
            Py_DECREF(o);
            goto error;
        }
    }
    t = Tensor_type->tp_alloc(Tensor_type, 0);
    if (t == NULL) {
        Py_DECREF(o);
        goto error;
    }
    SLOT(t, T_buf) = Py_NewRef(SLOT(x, T_buf));
    SLOT(t, T_dtype) = Py_NewRef(SLOT(x, T_dtype));
    SLOT(t, T_shape) = nshape;
    SLOT(t, T_strides) = nstrides;
    SLOT(t, T_offset) = o;
    SLOT(t, T_dev) = Py_NewRef(SLOT(x, T_dev));
    SLOT(t, T_view) = view != NULL ? view : Py_NewRef(Py_None);
    return t;
error:
    Py_XDECREF(nshape);
    Py_XDECREF(nstrides);
    Py_XDECREF(view);
    return NULL;
fallback:
    if (PyErr_Occurred())
        return NULL;
    PyObject *fargs[2] = {x, key};
    return PyObject_Vectorcall(getitem_fallback, fargs, 2, NULL);
}

static PyMethodDef getitem_def = {"__getitem__", (PyCFunction)(void (*)(void))tensor_getitem, METH_FASTCALL,
                                  "x[key]: a view for ints, slices, None and Ellipsis; a gathered copy for index arrays."};

static PyObject *
getitem_method(PyObject *module, PyObject *args)
{
    PyObject *fallback, *ndarray;
    if (!PyArg_ParseTuple(args, "OO!:getitem_method", &fallback, &PyType_Type, &ndarray))
        return NULL;
    if (Tensor_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "getitem_method: configure() first");
        return NULL;
    }
    Py_XSETREF(getitem_fallback, Py_NewRef(fallback));
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(ndarray));
    return PyDescr_NewMethod(Tensor_type, &getitem_def);
}


static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Tensor, Buffer, Device, _capture, runtime, unary fallback, binary fallback)"},
    {"unary", (PyCFunction)(void (*)(void))unary, METH_FASTCALL,
     "unary(op, plans, x, out, held): an element-wise call."},
    {"binary", (PyCFunction)(void (*)(void))binary, METH_FASTCALL,
     "binary(op, plans, x1, x2, out, held): an element-wise call."},
    {"configure_elision", configure_elision, METH_VARARGS,
     "configure_elision(operator opcodes, calibrated): temporary elision in C, where calibrated."},
    {"configure_operators", configure_operators, METH_VARARGS,
     "configure_operators(table, operand, elementwise globals): Tensor's operators (TensorBase)."},
    {"refs", refs, METH_O, "refs(x): x's reference count as the compiled call sees an argument's."},
    {"forget", forget, METH_NOARGS, "forget(): drop the plans kept by their key objects."},
    {"getitem_method", getitem_method, METH_VARARGS,
     "getitem_method(getitem, numpy.ndarray): Tensor.__getitem__ in C, handing all but plain slices to "
     "``getitem``."},
    {"reduce", (PyCFunction)(void (*)(void))reduce, METH_FASTCALL,
     "reduce(plans, x, axis, keepdims, dtype, out): sum, prod, max, min or mean of a cached plan."},
    {"asarray", (PyCFunction)(void (*)(void))asarray, METH_FASTCALL,
     "asarray(plans, obj, dtype, device, copy): asarray of Python scalars (or a flat sequence) by a cached plan."},
    {"like", (PyCFunction)(void (*)(void))like, METH_FASTCALL,
     "like(plans, x, dtype, device, shape): zeros_like, ones_like or empty_like of a tensor by a cached plan."},
    {"where", (PyCFunction)(void (*)(void))where3, METH_FASTCALL,
     "where(plans, condition, x1, x2, out): where of three arrays by a cached plan."},
    {"concat", (PyCFunction)(void (*)(void))concat, METH_FASTCALL,
     "concat(arrays, axis, plans, fallback): numr_array.concat of a cached plan."},
    {NULL}
};

#ifndef NUMR_SPEEDUPS_SOURCE_SHA256  /* setup.py defines it: the SHA-256 of this file when it was built */
#define NUMR_SPEEDUPS_SOURCE_SHA256 ""
#endif

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "numr_array._speedups",
    "The eager call of cached plans (CPU ufuncs; CUDA kernels, cuBLAS, copies) and the allocator's accounting, in C "
    "(see _speedups.c).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&LedgerType) < 0 || PyType_Ready(&BufferBaseType) < 0 || PyType_Ready(&TensorBaseType) < 0 ||
        PyType_Ready(&ProbeType) < 0)
        return NULL;
    str_elide_min_bytes = PyUnicode_InternFromString("ELIDE_MIN_BYTES");
    held_fallback = PyLong_FromLong(FALLBACK_HELD);
    held_never = PyLong_FromLong(-1);
    if (!str_elide_min_bytes || !held_fallback || !held_never)
        return NULL;
    str_deallocate = PyUnicode_InternFromString("deallocate");
    str_quiet_context = PyUnicode_InternFromString("numr_array._speedups.quiet_context");
    out_kwnames = Py_BuildValue("(s)", "out");
    ledger_untrack = PyDict_GetItemString(LedgerType.tp_dict, "_untrack");
    str_owner = PyUnicode_InternFromString("owner");
    str_nbytes = PyUnicode_InternFromString("nbytes");
    str_capturing = PyUnicode_InternFromString("capturing");
    str_lost_count = PyUnicode_InternFromString("lost_count");
    zero = PyLong_FromLong(0);
    str_ptr = PyUnicode_InternFromString("ptr");
    str_acquire = PyUnicode_InternFromString("acquire");
    str_release = PyUnicode_InternFromString("release");
    if (!str_ptr || !str_acquire || !str_release)
        return NULL;
    divide_kwnames = Py_BuildValue("(ss)", "out", "casting");
    str_unsafe = PyUnicode_InternFromString("unsafe");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_strides = PyUnicode_InternFromString("strides");
    str_fill = PyUnicode_InternFromString("fill");
    empty_tuple = PyTuple_New(0);
    if (!divide_kwnames || !str_unsafe || !str_dtype || !str_strides || !str_fill || !empty_tuple)
        return NULL;
    if (!str_owner || !str_nbytes || !str_deallocate || !str_quiet_context || !out_kwnames || !ledger_untrack || !str_capturing || !str_lost_count || !zero)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
#ifdef HAVE_C_STACK_CHECK
    if (c_stack_check_works()) {
        PyObject *f = PyCFunction_NewEx(&c_stack_check_def, NULL, NULL);
        if (f == NULL || PyModule_AddObject(m, "c_stack_check", f) < 0) {
            Py_XDECREF(f);
            Py_DECREF(m);
            return NULL;
        }
    }
#endif
    if (PyModule_AddObjectRef(m, "Ledger", (PyObject *)&LedgerType) < 0 ||
        PyModule_AddObjectRef(m, "BufferBase", (PyObject *)&BufferBaseType) < 0 ||
        PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&TensorBaseType) < 0 ||
        PyModule_AddObjectRef(m, "Probe", (PyObject *)&ProbeType) < 0 ||
        PyModule_AddIntConstant(m, "FALLBACK_HELD", FALLBACK_HELD) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_SHA256", NUMR_SPEEDUPS_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
