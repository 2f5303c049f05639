#!/usr/bin/env bash
# GPU check of the reduction and scalar plans (branch wgcost), about a minute: the plans' tests on WebGPU and
# CUDA, then the per-call costs beside CuPy and PyTorch. Prints PASS/FAIL per step; never stops early.
cd "$(dirname "$0")/.." || exit 1
status=0
step() { local name=$1; shift; if timeout 300 "$@" > /tmp/gpu_check_step.log 2>&1; then echo "PASS $name"
         else echo "FAIL $name"; tail -20 /tmp/gpu_check_step.log; status=1; fi; tail -1 /tmp/gpu_check_step.log; }
step "webgpu plan tests" python3 -m pytest -x -q tests/webgpu/test_webgpu_reduction_plans.py \
     tests/webgpu/test_webgpu_small_upload.py tests/webgpu/test_webgpu_launch_plans.py
for dev in webgpu:0 cuda:0; do
  step "$dev statistics/creation/plans/capture" env NUMR_TEST_DEVICE=$dev python3 -m pytest -x -q \
       tests/test_statistical.py tests/test_creation.py tests/test_call_plans.py tests/test_capture.py \
       tests/test_reduction_scalar_plans.py
done
timeout 240 python3 -m benchmarks.call_cost --backends numr:webgpu:0,numr:cuda:0,cupy,torch --repeat 5 \
  --gpu-time 0.05 || { echo "FAIL call_cost"; status=1; }
exit $status
