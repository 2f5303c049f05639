#!/usr/bin/env bash
# The cudacol branch's check on a GPU machine, in about a minute: the column-reduction tests and the CUDA kernel
# tests (captured sums, the cuBLAS workspace), then the benchmark rows of reductions along axis 0 (numr, CuPy and
# PyTorch side by side). Ends with one PASS/FAIL line; safe to run when something fails (each step is bounded).
#     bash tests/cuda/gpu_check_columns.sh
cd "$(dirname "$0")/../.." || exit 2
python3 -c "import numr_array._speedups" 2>/dev/null || python3 setup.py -q build_ext --inplace >/dev/null 2>&1
timeout 240 python3 -m pytest tests/cuda/test_cuda_columns.py tests/cuda/test_cuda_kernels.py -q -p no:cacheprovider \
    --durations=5 2>&1 | tail -25
rc=${PIPESTATUS[0]}
timeout 120 python3 -m benchmarks.cuda_ops --only "axis=0)" --repeat 5 --min-time 0.02
brc=$?
echo "cudacol GPU check: tests $([ "$rc" = 0 ] && echo PASS || echo "FAIL (pytest rc=$rc)"), benchmark rc=$brc"
