"""Products of a tall, thin C-contiguous matrix X (n x d, d <= ``MAX_COLS``) with a vector, as one pass over X's
rows: ``X @ w`` (a dot product per row) and ``X.T @ v`` (a sum of rows scaled by v).

cuBLAS's gemv read a 200k x 64 float32 X at a third of an H200's memory rate for ``X @ w`` (30.7 µs) and ran
``X.T @ v`` as two kernels (13.7 + 3.6 µs). Here a group of ``lanes(d)`` lanes of a warp (about eight columns
each) takes a row at a time, the warp 32 / lanes rows at once (a warp per row spent more instructions per row
than the memory's rate allows), the groups striding over the rows with the next row's loads in flight:

* ``X @ w``: lane l of a group multiplies and adds columns l, l + lanes, ... in increasing order (``fma``), then
  the group's values are summed by a fixed xor tree of shuffles, after which every lane of the group holds the
  row's dot product (IEEE addition commutes, so the butterfly gives them the same bits); lane 0 stores it.
* ``X.T @ v``: each lane keeps an accumulator per column it takes and adds ``v[i] * X[i, c]`` (``fma``) for its
  group's rows in increasing order; a warp's groups are summed by a fixed xor tree, a block's warps by a
  fixed tree in shared memory into a partial sum (a module global, ``numr_part``), and the block that finishes
  last (a ticket counter, reset by it) sums the blocks' partials in a fixed order into the result. The grid
  depends only on n, d and the GPU (``grid``), so the bits depend only on the data, and no second launch is
  needed.

Both are one template (``pass_source``) that a capture's fused run fills in too (``FusedRun.add_head`` and
``add_tail``): a run that starts with ``X @ w``, continues with element-wise steps over its n results and ends
with ``X.T @ r`` is one kernel reading X once, whose bits are eager's, since the row's dot product and the
accumulation are the same code and the steps are each eager kernel's expression.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor

#: the widest X taken (each lane holds at most eight columns of a row in registers)
MAX_COLS = 128
#: threads per block (32 warps) and blocks per SM (``grid``): 64 registers a thread
THREADS = 1024
BLOCKS_PER_SM = 1
#: columns of a row a lane takes, at most: a warp spends its instructions on 32 // lanes rows at once
PER_LANE = 8

#: the most blocks a pass runs (its partial sums' capacity): the SMs of the GPU, at most this
MAX_BLOCKS = 1024
#: partial sums a thread of the last block has in flight at once
PARTS_AHEAD = 16

_CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def supports(dtype: np.dtype, d: int) -> bool:
    """Whether the pass takes an X of ``dtype`` with ``d`` columns."""
    return dtype in _CTYPE and 0 < d <= MAX_COLS


def form(a_shape: tuple, a_strides: tuple, b_shape: tuple, b_strides: tuple) -> tuple[str, int, int] | None:
    """("rows", n, d) for ``X @ w`` (a: n x d C-contiguous, b: d dense), ("cols", n, d) for ``X.T @ v`` (a: the
    transposed view of an n x d C-contiguous X, b: n dense); None for anything else (dtypes and d aside:
    ``supports``)."""
    if len(a_shape) != 2 or len(b_shape) != 1 or b_strides != (1,):
        return None
    r, c = a_shape
    if r == 0 or c == 0:
        return None
    if a_strides == (c, 1) and b_shape == (c,):
        return "rows", r, c
    if a_strides == (1, r) and b_shape == (c,):
        return "cols", c, r
    return None


def tensor_form(a, b, o) -> tuple[str, int, int] | None:
    """``form`` of matmul's operands ``a``, ``b`` into ``o``: tensors of one float dtype (the result's)."""
    if type(a) is not Tensor or type(b) is not Tensor or a._dtype is not b._dtype or o._dtype is not a._dtype:
        return None
    f = form(a._shape, a._strides, b._shape, b._strides)
    return f if f is not None and supports(a._dtype.np, f[2]) else None


def lanes(d: int) -> int:
    """Lanes per row of ``d`` columns: a power of two, about d / 8 (each lane about eight columns), at most 32."""
    return min(32, 1 << max(0, (-(-d // PER_LANE) - 1).bit_length()))


def grid(n: int, d: int, sms: int) -> int:
    """Blocks of a pass over ``n`` rows of ``d`` columns on a GPU of ``sms`` multiprocessors: one per SM, fewer
    where the rows give each group of lanes less than one."""
    return max(1, min(sms * BLOCKS_PER_SM, MAX_BLOCKS, -(-n // (THREADS // 32 * (32 // lanes(d))))))


def pass_source(dtype: np.dtype, d: int, headers: str, params: str, x: str, *, w: str | None = None,
                steps: str = "", value: str | None = None, out: str | None = None,
                preload: tuple = (), after: str | None = None) -> str:
    """A kernel ``k(params)`` (params end with ``long long n``, the rows) making one pass over the rows of the
    n x d C-contiguous matrix at pointer expression ``x`` of ``dtype`` (M), ``lanes(d)`` lanes of a warp per row
    (lane ``gl_`` of the row's group takes columns gl_, gl_ + lanes, ...). With ``w`` (a pointer expression: d
    elements of M), each row's dot product with it is ``h`` (M) before ``steps``, code run for row ``i`` by every
    lane of its group (stores guarded by ``gl_ == 0``); with ``value`` and ``out``, the rows scaled by ``value``
    (an M expression, after the steps) are summed into ``out`` (d elements of M). ``preload`` (C type, pointer
    expression) pairs are arrays the steps read element i of, as ``pv0``, ``pv1``, ...: loaded with the row,
    one row ahead. ``after`` is code run by the last block's thread i < d with the column's sum ``t`` once
    every row is summed, in place of storing t to ``out``."""
    m = _CTYPE[np.dtype(dtype)]
    threads = THREADS
    warps = threads // 32
    L = lanes(d)
    D = -(-d // L)
    rw = 32 // L
    part = D * L  # a warp's columns in shared memory
    guard = "" if D * L == d else f"gl_ + {L} * j < {d} && "  # (columns past d: lanes of the last j)
    vw = 16 // np.dtype(dtype).itemsize  # elements of a 16-byte load
    vec = d % (vw * L) == 0
    # lane gl_'s column j: runs of vw columns (one 16-byte load where X is 16-byte aligned), else every L-th
    col = f"(j / {vw}) * {vw * L} + {vw} * gl_ + j % {vw}" if vec else f"gl_ + {L} * j"
    src = [headers,
           f"__device__ {m} numr_part[{MAX_BLOCKS * d}];\n__device__ unsigned int numr_ticket;\n" if out else "",
           f"extern \"C\" __global__ void __launch_bounds__({threads}, {BLOCKS_PER_SM}) k({params}) {{\n"
           f"  typedef {m} M;\n"
           f"  const M* __restrict__ X_ = (const M*)({x});\n"
           f"  const int lane = threadIdx.x & 31, gl_ = lane & {L - 1};\n"
           f"  const long long step_ = (long long)gridDim.x * {warps * rw};\n"
           # the warp's first row: the loop's condition is the same for all its lanes (the shuffles need them)
           f"  long long base_ = ((long long)blockIdx.x * {warps} + (threadIdx.x >> 5)) * {rw};\n"
           f"  const int grp_ = lane / {L};\n"
           # (a uniform branch: the same columns and order either way, so the same bits)
           + ("  const bool al_ = ((unsigned long long)X_ & 15) == 0;\n" if vec else "")]
    if w is not None:
        src.append(f"  const M* __restrict__ wp_ = (const M*)({w});\n  M wv_[{D}];\n"
                   f"#pragma unroll\n  for (int j = 0; j < {D}; j++) wv_[j] = {col} < {d} ? wp_[{col}] : (M)0;\n")
    if out is not None:
        src.append(f"  M acc_[{D}];\n#pragma unroll\n  for (int j = 0; j < {D}; j++) acc_[j] = (M)0;\n")
    scalar = (lambda row, into: f"#pragma unroll\n    for (int j = 0; j < {D}; j++) {into}[j] = "
              + (f"X_[({row}) * {d}LL + {col}];\n" if not guard else
                 f"{col} < {d} ? X_[({row}) * {d}LL + {col}] : (M)0;\n"))
    vt, parts_ = ("float4", "xyzw") if vw == 4 else ("double2", "xy")
    load = scalar if not vec else (lambda row, into: (
        f"    if (al_) {{\n#pragma unroll\n    for (int q = 0; q < {D // vw}; q++) {{\n"
        f"      const {vt} t_ = ((const {vt}*)(X_ + ({row}) * {d}LL))[q * {L} + gl_];\n"
        + "".join(f"      {into}[q * {vw} + {e}] = t_.{c};\n" for e, c in enumerate(parts_))
        + "    }\n    } else {\n" + scalar(row, into) + "    }\n"))
    # the group's next row (and its elements of the steps' operands) in flight while row i is summed
    src.append(f"  M xn_[{D}];\n" + "".join(f"  {ct} pn{q}_ = ({ct})0;\n" for q, (ct, _) in enumerate(preload))
               + "  if (base_ + grp_ < n) {\n" + load("base_ + grp_", "xn_")
               + "".join(f"    pn{q}_ = {p}[base_ + grp_];\n" for q, (_, p) in enumerate(preload)) + "  }\n"
               "  for (; base_ < n; base_ += step_) {\n"
               "    const long long i = base_ + grp_;\n"
               f"    M xv_[{D}];\n#pragma unroll\n    for (int j = 0; j < {D}; j++) xv_[j] = xn_[j];\n"
               + "".join(f"    const {ct} pv{q} = pn{q}_;\n" for q, (ct, _) in enumerate(preload))
               + "    if (i + step_ < n) {\n" + load("i + step_", "xn_")
               + "".join(f"      pn{q}_ = {p}[i + step_];\n" for q, (_, p) in enumerate(preload)) + "    }\n")
    if w is not None:
        src.append("    M h = (M)0;\n"
                   f"#pragma unroll\n    for (int j = 0; j < {D}; j++) if ({guard}i < n) h = fma(xv_[j], wv_[j], h);\n")
        if L > 1:
            src.append(f"#pragma unroll\n    for (int o_ = {L // 2}; o_ > 0; o_ >>= 1) h += __shfl_xor_sync(0xffffffffu, h, o_);\n")
    src.append("    if (i < n) {\n" + steps)
    if out is not None:
        src.append(f"    {{ const M v_ = (M)({value});\n"
                   f"#pragma unroll\n      for (int j = 0; j < {D}; j++) acc_[j] = fma(v_, xv_[j], acc_[j]); }}\n")
    src.append("    }\n  }\n")
    if out is not None:
        q = threads // d  # threads per column in the last block's sum of the partials
        src.append(
            # the warp's groups, in a fixed tree (every lane then holds its columns' sum over the warp's rows)
            (f"#pragma unroll\n  for (int o_ = {L}; o_ < 32; o_ <<= 1) {{\n"
             f"#pragma unroll\n    for (int j = 0; j < {D}; j++) acc_[j] += __shfl_xor_sync(0xffffffffu, acc_[j], o_);\n  }}\n"
             if rw > 1 else "")
            + f"  __shared__ M sh_[{max(warps * part, threads)}];\n  __shared__ bool last_;\n"
            f"  if (grp_ == 0) {{\n#pragma unroll\n    for (int j = 0; j < {D}; j++) sh_[(threadIdx.x >> 5) * {part} + {col}] = acc_[j];\n  }}\n"
            "  __syncthreads();\n"
            # the block's warps, in a fixed tree in shared memory
            f"  for (int h = {warps // 2}; h > 0; h >>= 1) {{\n"
            f"    for (int e = threadIdx.x; e < h * {part}; e += {threads}) sh_[e] += sh_[e + h * {part}];\n"
            "    __syncthreads();\n  }\n"
            f"  if (threadIdx.x < {d}) numr_part[blockIdx.x * {d}LL + threadIdx.x] = sh_[threadIdx.x];\n"
            # (the writers' fence before the ticket; the last block reads the partials past its L1: __ldcg)
            "  __threadfence();\n  __syncthreads();\n"
            "  if (threadIdx.x == 0) last_ = atomicAdd(&numr_ticket, 1u) == gridDim.x - 1;\n"
            "  __syncthreads();\n  if (!last_) return;\n"
            # the last block: thread t sums column t % d over blocks t / d, + q, ... in order, then the q sums
            f"  const int c_ = threadIdx.x % {d}, q_ = threadIdx.x / {d};\n  M s = (M)0;\n"
            # (loads issued PARTS_AHEAD at a time, then added in order: a loop of fewer turns than its unroll
            # runs its remainder a load at a time. On an H200 this sum was 2.4 µs of a 15.2 µs logistic regression
            # step; loads issued together took 0.7 µs off it)
            f"  if (q_ < {q}) {{\n    for (unsigned int b = q_; b < gridDim.x; b += {PARTS_AHEAD * q}) {{\n"
            f"      M v_[{PARTS_AHEAD}];\n"
            f"#pragma unroll\n      for (int u = 0; u < {PARTS_AHEAD}; u++) if (b + u * {q} < gridDim.x) "
            f"v_[u] = __ldcg(numr_part + (b + u * {q}) * {d}LL + c_);\n"
            f"#pragma unroll\n      for (int u = 0; u < {PARTS_AHEAD}; u++) if (b + u * {q} < gridDim.x) s += v_[u];\n"
            "    }\n  }\n"
            "  __syncthreads();\n"
            f"  if (q_ < {q}) sh_[q_ * {d} + c_] = s;\n  __syncthreads();\n"
            f"  if (threadIdx.x < {d}) {{\n    M t = sh_[threadIdx.x];\n"
            f"    for (int g = 1; g < {q}; g++) t += sh_[g * {d} + threadIdx.x];\n"
            + "    const long long i = threadIdx.x;\n"
            + (after if after is not None else f"    ((M*)({out}))[i] = t;\n") + "  }\n"
            "  if (threadIdx.x == 0) numr_ticket = 0u;\n")
    src.append("}\n")
    return "".join(src)


def eager_source(kind: str, dtype: np.dtype, d: int, headers: str) -> str:
    """The eager kernel ``k(a, b, o, n)`` of ``form``'s ``kind``: "rows" (o = a @ b) or "cols" (o = a.T @ b), a the
    n x d matrix's data."""
    params = "const void* a, const void* b, void* o, long long n"
    if kind == "rows":
        return pass_source(dtype, d, headers, params, "a", w="b", steps="    if (gl_ == 0) ((M*)o)[i] = h;\n")
    return pass_source(dtype, d, headers, params, "a", value="pv0", out="o", preload=(("M", "((const M*)b)"),))
