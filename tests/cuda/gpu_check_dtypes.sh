#!/usr/bin/env bash
# The xarr branch's check on a GPU machine, in about a minute: public dtypes are NumPy's np.dtype objects.
# The CUDA tests whose dtype handling changed, then on cuda:0 the generic dtype, NumPy-protocol, where and
# quantile tests and xarray over tensors (skipped where xarray is not installed). Ends with one PASS/FAIL
# line; safe to run when something fails (each step is bounded).
#     bash tests/cuda/gpu_check_dtypes.sh
cd "$(dirname "$0")/../.." || exit 2
python3 -c "import numr_array._speedups" 2>/dev/null || python3 setup.py -q build_ext --inplace >/dev/null 2>&1
timeout 200 python3 -m pytest tests/cuda/test_cuda_backend.py tests/cuda/test_cuda_capture.py -q -p no:cacheprovider \
    2>&1 | tail -5
rc1=${PIPESTATUS[0]}
NUMR_TEST_DEVICE=cuda:0 timeout 300 python3 -m pytest tests/test_dtypes.py tests/test_numpy_protocols.py \
    tests/ecosystem/test_xarray.py "tests/test_searching.py::test_where_takes_numpy_scalars_as_the_operators_do" \
    "tests/test_np_statistics.py::test_quantiles" -q -p no:cacheprovider 2>&1 | tail -8
rc2=${PIPESTATUS[0]}
verdict() { [ "$1" = 0 ] && echo PASS || echo "FAIL (pytest rc=$1)"; }
echo "xarr GPU check: cuda tests $(verdict "$rc1"), cuda:0 dtype/xarray tests $(verdict "$rc2")"
