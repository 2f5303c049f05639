"""Matrix products through cuBLAS that can be captured into a CUDA graph.

CuPy refuses every cuBLAS call while a stream is being captured (its wrappers re-bind the handle to the
current stream first, and ``cublasSetStream`` on a capturing stream is the call it forbids). cuBLAS itself
captures fine when its handle is bound to the stream and given a workspace *before* the capture starts:
then a GEMM records one or two kernel nodes and allocates nothing. So each CUDA client owns a handle of its
own, made through ``ctypes`` from the same libcublas CuPy loaded, bound once to the client's compute stream
with a fixed workspace, and calls ``cublasGemmEx`` / ``cublasGemmStridedBatchedEx`` on it directly: the
same routines and compute types CuPy's eager matmul uses, so captured and eager products run the same
kernels at the same speed. A matrix-vector product calls ``cublas?gemv``, and a product of at most 2-D
operands is set up from their shapes and strides alone (no CuPy views, no copies): transposed and strided
matrices are read through the transpose flags and leading dimensions.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy as np

# cuBLAS / CUDA enum values (cublas_api.h, library_types.h)
_OP_N, _OP_T = 0, 1
_GEMM_DEFAULT = GEMM_DEFAULT_ALGO = -1
_COMPUTE_32F, _COMPUTE_32F_FAST_TF32, _COMPUTE_64F = 68, 77, 70
_CUDA_R_32F, _CUDA_R_64F, _CUDA_C_32F, _CUDA_C_64F = 0, 1, 4, 5


def workspace_bytes(compute_capability: str) -> int:
    """The workspace cuBLAS's documentation recommends for a GPU (cublasSetWorkspace): 32 MiB on Hopper and
    later (compute capability 9.0 and up), 4 MiB before. One per client, made at its first product or capture
    and shared by both, so that a captured product runs the kernel its eager call chose (cuBLAS's choice of
    kernel depends on the workspace it has)."""
    return (32 if int(compute_capability) >= 90 else 4) * 1024 * 1024


def blas_types(dtype: np.dtype):
    """(cudaDataType, cublasComputeType, alpha, beta) for a floating dtype, as CuPy's matmul chooses them."""
    ch = dtype.char
    if ch == "f":
        # CuPy computes float32 products in IEEE float32 unless CUPY_TF32=1; so do we
        compute = _COMPUTE_32F_FAST_TF32 if os.environ.get("CUPY_TF32", "0") != "0" else _COMPUTE_32F
        return _CUDA_R_32F, compute, _ONE_F, _ZERO_F
    if ch == "d":
        return _CUDA_R_64F, _COMPUTE_64F, _ONE_D, _ZERO_D
    if ch == "F":
        return _CUDA_C_32F, _COMPUTE_32F, _ONE_C, _ZERO_C
    return _CUDA_C_64F, _COMPUTE_64F, _ONE_Z, _ZERO_Z


# host scalars (pointer mode host: cuBLAS reads them at the call, and a capture bakes their values in)
_ONE_F, _ZERO_F = ctypes.c_float(1.0), ctypes.c_float(0.0)
_ONE_D, _ZERO_D = ctypes.c_double(1.0), ctypes.c_double(0.0)
_ONE_C, _ZERO_C = (ctypes.c_float * 2)(1.0, 0.0), (ctypes.c_float * 2)(0.0, 0.0)
_ONE_Z, _ZERO_Z = (ctypes.c_double * 2)(1.0, 0.0), (ctypes.c_double * 2)(0.0, 0.0)


def _find_libcublas() -> ctypes.CDLL:
    """The libcublas CuPy uses (already mapped into the process once CuPy made its handle), else any."""
    import cupy
    cupy.cuda.device.get_cublas_handle()  # makes CuPy load its libcublas
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rsplit(None, 1)[-1]
                name = os.path.basename(path)
                if name.startswith("libcublas.so"):
                    return ctypes.CDLL(path)
    except OSError:
        pass
    for name in ("libcublas.so.13", "libcublas.so.12", "libcublas.so.11", ctypes.util.find_library("cublas")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    raise OSError("cannot find libcublas")


def _fn(lib, *names):
    for n in names:
        f = getattr(lib, n, None)
        if f is not None:
            return f
    raise OSError(f"libcublas has none of {names}")


class Cublas:
    """One cuBLAS handle bound to one stream, with its own workspace (kept alive here)."""

    _lib = None

    def __init__(self, stream_ptr: int, workspace, workspace_bytes: int):
        """``workspace``: a CuPy MemoryPointer of ``workspace_bytes``, held as long as the handle uses it."""
        if Cublas._lib is None:
            lib = _find_libcublas()
            vp, i32, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
            create = _fn(lib, "cublasCreate_v2", "cublasCreate")
            create.argtypes, create.restype = [ctypes.POINTER(vp)], i32
            set_stream = _fn(lib, "cublasSetStream_v2", "cublasSetStream")
            set_stream.argtypes, set_stream.restype = [vp, vp], i32
            set_ws = _fn(lib, "cublasSetWorkspace_v2", "cublasSetWorkspace")
            set_ws.argtypes, set_ws.restype = [vp, vp, ctypes.c_size_t], i32
            destroy = _fn(lib, "cublasDestroy_v2", "cublasDestroy")
            destroy.argtypes, destroy.restype = [vp], i32
            gemm = _fn(lib, "cublasGemmEx")
            gemm.argtypes = [vp, i32, i32, i32, i32, i32, vp, vp, i32, i32, vp, i32, i32, vp, vp, i32, i32, i32, i32]
            gemm.restype = i32
            gemm_b = _fn(lib, "cublasGemmStridedBatchedEx")
            gemm_b.argtypes = [vp, i32, i32, i32, i32, i32, vp, vp, i32, i32, i64, vp, i32, i32, i64, vp,
                               vp, i32, i32, i64, i32, i32, i32]
            gemm_b.restype = i32
            gemv = {}
            for ch, name in (("f", "cublasSgemv_v2"), ("d", "cublasDgemv_v2"), ("F", "cublasCgemv_v2"),
                             ("D", "cublasZgemv_v2")):
                f = _fn(lib, name, name[:-3])
                f.argtypes = [vp, i32, i32, i32, vp, vp, i32, vp, i32, vp, vp, i32]
                f.restype = i32
                gemv[ch] = f
            Cublas._lib = (create, set_stream, set_ws, destroy, gemm, gemm_b, gemv)
        create, set_stream, set_ws, self._destroy, self._gemm, self._gemm_batched, self._gemv = Cublas._lib
        h = ctypes.c_void_p()
        _check(create(ctypes.byref(h)), "cublasCreate")
        self.handle = h
        _check(set_stream(h, stream_ptr), "cublasSetStream")
        self._workspace = workspace
        _check(set_ws(h, workspace.ptr, workspace_bytes), "cublasSetWorkspace")

    def __del__(self):
        h = getattr(self, "handle", None)
        if h is not None:
            self._destroy(h)

    def gemm(self, ta: int, tb: int, m: int, n: int, k: int, a: int, lda: int, sa: int, b: int, ldb: int,
             sb: int, c: int, ldc: int, sc: int, batch: int, dtype: np.dtype) -> None:
        """Column-major C = op(A) op(B) for ``batch`` matrices at element strides sa, sb, sc."""
        dt, compute, one, zero = blas_types(dtype)
        if batch == 1:
            st = self._gemm(self.handle, ta, tb, m, n, k, ctypes.byref(one), a, dt, lda, b, dt, ldb,
                            ctypes.byref(zero), c, dt, ldc, compute, _GEMM_DEFAULT)
        else:
            st = self._gemm_batched(self.handle, ta, tb, m, n, k, ctypes.byref(one), a, dt, lda, sa, b, dt, ldb,
                                    sb, ctypes.byref(zero), c, dt, ldc, sc, batch, compute, _GEMM_DEFAULT)
        _check(st, "cublasGemmEx")

    def routine(self, name: str, dtype: np.dtype) -> int:
        """The address of the routine ``name`` ("gemv", "gemm", "gemm_batched") for ``dtype``'s products, for
        numr_array._speedups's calls of a cached plan (CudaClient.product_launch)."""
        fn = self._gemv[dtype.char] if name == "gemv" else self._gemm if name == "gemm" else self._gemm_batched
        return ctypes.cast(fn, ctypes.c_void_p).value

    def gemv(self, trans: int, m: int, n: int, a: int, lda: int, x: int, incx: int, y: int, incy: int,
             dtype: np.dtype) -> None:
        """y = op(A) x for the column-major ``m x n`` matrix A (leading dimension ``lda``)."""
        _, _, one, zero = blas_types(dtype)
        st = self._gemv[dtype.char](self.handle, trans, m, n, ctypes.byref(one), a, lda, x, incx,
                                    ctypes.byref(zero), y, incy)
        _check(st, "cublas gemv")


_STATUS = {1: "NOT_INITIALIZED", 3: "ALLOC_FAILED", 7: "INVALID_VALUE", 8: "ARCH_MISMATCH",
           11: "MAPPING_ERROR", 13: "EXECUTION_FAILED", 14: "INTERNAL_ERROR", 15: "NOT_SUPPORTED"}


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed: CUBLAS_STATUS_{_STATUS.get(status, status)}")


def _operand(rows: int, cols: int, sr: int, sc: int):
    """How cuBLAS (column-major) reads the transpose of a row-major ``rows x cols`` matrix with element
    strides ``(sr, sc)``: ``(op, ld)``, or None when its layout needs a copy first."""
    # the stride of a length-1 dimension is never used: pick the one that makes the layout valid
    if rows == 1:
        sr = max(cols, 1) if sc == 1 else 1
    if cols == 1:
        sc = 1 if sr != 1 else max(rows, 1)
    if sc == 1 and sr >= max(cols, 1):
        return _OP_N, sr
    if sr == 1 and sc >= max(rows, 1):
        return _OP_T, sc
    return None


def _batch_stride(shape, strides) -> int | None:
    """One element stride that walks the batch dimensions in C order (0 when broadcast), or None."""
    stride = None
    span = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if stride is None:
            stride = s
        elif s != stride * span:
            return None
        span *= n
    if stride is not None and stride < 0:
        return None
    return stride or 0


def _address(x) -> int:
    return x.data.ptr


def _extent(x) -> tuple[int, int]:
    """The byte range [lo, hi) a CuPy array's elements lie in."""
    lo = hi = _address(x)
    for n, s in zip(x.shape, x.strides):
        if n > 1:
            if s < 0:
                lo += s * (n - 1)
            else:
                hi += s * (n - 1)
    return lo, hi + x.itemsize


def _overlaps(out, *operands) -> bool:
    """Whether ``out``'s byte extent intersects any operand's (a conservative may-share-memory test)."""
    if out.size == 0:
        return False
    olo, ohi = _extent(out)
    for x in operands:
        if x.size:
            lo, hi = _extent(x)
            if lo < ohi and olo < hi:
                return True
    return False


def _elements(x) -> list[int]:
    """``x``'s strides in elements."""
    item = x.itemsize
    return [s // item for s in x.strides]


def plan_2d(a_shape: tuple, sa: list, b_shape: tuple, sb: list, out_shape: tuple, so: list) -> tuple | None:
    """The one cuBLAS call computing ``out = a @ b`` for operands of at most two dimensions (not both 1-D), from
    their shapes and element strides alone: ``("gemv", trans, m, n, lda, incx, incy, matrix)`` when one is a
    vector (``matrix``: 0 for a, 1 for b), else ``("gemm", transa, transb, m, n, k, lda, ldb, ldc, 0, 0, 0, 1,
    first)`` (cuBLAS's A is operand ``first``, its B the other; strides and batch of one product); None where a
    layout has no cuBLAS form (the general path then copies it) or nothing is contracted. Run by
    ``run_plan`` here, or from C (numr_array/_speedups.c, ``blas_call``) for a cached plan."""
    if len(a_shape) == 1:
        if len(b_shape) != 2:
            return None
        K, N = b_shape
        M = 1
    else:
        M, K = a_shape
        N = b_shape[1] if len(b_shape) == 2 else 1
    if K == 0:
        return None
    if len(a_shape) == 2 and len(b_shape) == 2:
        la, lb = _operand(M, K, sa[0], sa[1]), _operand(K, N, sb[0], sb[1])
        ldc = so[0] if M > 1 else N  # out read column-major is C^T (N x M): unit stride along N
        if la is None or lb is None or (N > 1 and so[1] != 1) or ldc < N:
            return None
        # row-major C = A B is column-major C^T = B^T A^T
        return ("gemm", lb[0], la[0], N, M, K, lb[1], la[1], ldc, 0, 0, 0, 1, 1)
    # a vector: y = A v (matrix @ vector) or y = B^T v (vector @ matrix)
    if len(a_shape) == 2:
        matrix, sm, sv, rows, cols, vector_first = 0, sa, sb, M, K, False
    else:
        matrix, sm, sv, rows, cols, vector_first = 1, sb, sa, K, N, True
    layout = _operand(rows, cols, sm[0], sm[1])
    incx = sv[0] if (a_shape if vector_first else b_shape)[0] > 1 else 1
    incy = so[0] if out_shape[0] > 1 else 1
    if layout is None or incx <= 0 or incy <= 0:
        return None
    op, ld = layout
    # the memory read column-major is the matrix itself (op T, rows x cols) or its transpose (op N, cols x rows)
    m, n = (rows, cols) if op == _OP_T else (cols, rows)
    trans = op if vector_first else (_OP_T if op == _OP_N else _OP_N)
    return ("gemv", trans, m, n, ld, incx, incy, matrix)


def run_plan(blas: Cublas, plan: tuple, operands: tuple[int, int], out: int, dtype: np.dtype) -> None:
    """The cuBLAS call of a ``plan_2d``/``plan_product`` plan on the operands' and out's addresses."""
    if plan[0] == "gemv":
        trans, m, n, lda, incx, incy, matrix = plan[1:]
        blas.gemv(trans, m, n, operands[matrix], lda, operands[1 - matrix], incx, out, incy, dtype)
    else:
        ta, tb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch, first = plan[1:]
        blas.gemm(ta, tb, m, n, k, operands[first], lda, sa, operands[1 - first], ldb, sb, out, ldc, sc, batch, dtype)


def _product_2d(blas: Cublas, a, b, out) -> bool:
    """``out[...] = a @ b`` with one cuBLAS call (``plan_2d``) written straight into ``out``; False (nothing done)
    where there is none or out aliases an operand."""
    if _overlaps(out, a, b):
        return False
    plan = plan_2d(a.shape, _elements(a), b.shape, _elements(b), out.shape, _elements(out))
    if plan is None:
        return False
    run_plan(blas, plan, (_address(a), _address(b)), _address(out), out.dtype)
    return True


def _gemm_layout(shape: tuple, strides: list, batch: int) -> tuple[int, int, int] | None:
    """(op, ld, batch stride) with which cuBLAS reads the row-major matrices of a (broadcast) operand of
    ``shape`` and element ``strides``, ``batch`` products in all; None where it needs a copy first."""
    if any(s < 0 for n, s in zip(shape[-2:], strides[-2:]) if n > 1):  # (a length-1 axis's stride is not read)
        return None
    layout = _operand(shape[-2], shape[-1], strides[-2], strides[-1])
    bs = _batch_stride(shape[:-2], strides[:-2]) if batch > 1 else 0
    return None if layout is None or bs is None else (layout[0], layout[1], bs)


def _broadcast(shape: tuple, strides: list, batch_shape: tuple) -> tuple[tuple, list]:
    """``shape`` and ``strides`` (of an operand's matrices and its batch axes) broadcast to ``batch_shape``."""
    lead = len(batch_shape) - (len(shape) - 2)
    st = [0] * lead + [0 if n == 1 else s for n, s in zip(shape[:-2], strides[:-2])] + list(strides[-2:])
    return batch_shape + tuple(shape[-2:]), st


def plan_product(a_shape: tuple, sa: list, b_shape: tuple, sb: list, out_shape: tuple) -> tuple | None:
    """The one cuBLAS call writing ``a @ b`` (NumPy's matmul rules) into a new C-contiguous ``out`` of
    ``out_shape`` without copying an operand: ``plan_2d``'s for operands of at most two dimensions, else
    ``("gemm", ...)`` with the batch strides and count of GemmStridedBatchedEx; None where there is none (a
    layout cuBLAS cannot read, nothing contracted, an empty result)."""
    size = 1
    for n in out_shape:
        size *= n
    if size == 0:
        return None
    so = [1] * len(out_shape)
    for i in range(len(out_shape) - 2, -1, -1):
        so[i] = so[i + 1] * out_shape[i + 1]
    if len(a_shape) <= 2 and len(b_shape) <= 2:
        if len(a_shape) + len(b_shape) > 2:
            return plan_2d(a_shape, sa, b_shape, sb, out_shape, so)
        return plan_2d((1,) + a_shape, [0] + sa, b_shape, sb, (1,), [1])  # a dot product: 1 x K times b
    a1, b1 = len(a_shape) == 1, len(b_shape) == 1
    if a1:
        a_shape, sa = (1,) + a_shape, [0] + sa
    if b1:
        b_shape, sb = b_shape + (1,), sb + [0]
    M, K = a_shape[-2:]
    N = b_shape[-1]
    if K == 0:
        return None
    batch_shape = out_shape[:len(out_shape) - (not a1) - (not b1)]
    batch = size // (M * N)
    la = _gemm_layout(*_broadcast(a_shape, sa, batch_shape), batch)
    lb = _gemm_layout(*_broadcast(b_shape, sb, batch_shape), batch)
    if la is None or lb is None:
        return None
    # row-major C = A B is column-major C^T = B^T A^T
    return ("gemm", lb[0], la[0], N, M, K, lb[1], la[1], N, lb[2], la[2], M * N, batch, 1)


def matmul_into(cp, blas: Cublas, a, b, out) -> None:
    """``out[...] = a @ b`` for floating ``out`` (NumPy's matmul rules: 1-D operands, broadcast batches)."""
    dtype = out.dtype
    if a.dtype != dtype:
        a = a.astype(dtype)
    if b.dtype != dtype:
        b = b.astype(dtype)
    if a.ndim <= 2 and b.ndim <= 2 and out.size:
        if a.ndim + b.ndim > 2:
            if _product_2d(blas, a, b, out):
                return
        elif _product_2d(blas, a[None, :], b, out.reshape(1)):  # a dot product: a 1 x K matrix times b
            return
    a1, b1 = a.ndim == 1, b.ndim == 1
    if a1:
        a = a[None, :]
    if b1:
        b = b[:, None]
    M, K = a.shape[-2:]
    N = b.shape[-1]
    batch_shape = out.shape[:out.ndim - (not a1) - (not b1)]
    full = batch_shape + (M, N)
    # write straight into ``out`` when it is C-contiguous and no operand aliases it
    direct = out.flags.c_contiguous and not _overlaps(out, a, b)
    c = out.reshape(full) if direct else cp.empty(full, dtype)
    if c.size == 0:
        return
    if K == 0:
        c.fill(0)
    else:
        batch = 1
        for n in batch_shape:
            batch *= n
        ops = []
        for x in (a, b):
            x = cp.broadcast_to(x, batch_shape + x.shape[-2:])
            layout = _gemm_layout(x.shape, _elements(x), batch)
            if layout is None:
                x = cp.ascontiguousarray(x)
                layout = _gemm_layout(x.shape, _elements(x), batch)
            ops.append((x,) + layout)  # x stays referenced: a copy's block must outlive the GEMM
        (xa, ta, lda, sa), (xb, tb, ldb, sb) = ops
        # row-major C = A B is column-major C^T = B^T A^T
        blas.gemm(tb, ta, N, M, K, _address(xb), ldb, sb, _address(xa), lda, sa, _address(c), N, M * N, batch, dtype)
    if not direct:
        cp.copyto(out, c.reshape(out.shape))
