#!/bin/sh
# Branch wgfix's checks for the GPU machine (under a minute; always exits 0, printing PASS/FAIL per group):
# the WebGPU capture whose last launch submitted early (std of 2^20 x 8 then a map launch) and
# vector_norm of tiny and huge orders, on cuda:0 and webgpu:0. Run from the repository root:
#   sh tests/gpu_checks_wgfix.sh
check() {
    name=$1
    shift
    if out=$("$@" -q -p no:cacheprovider 2>&1); then
        echo "PASS $name: $(echo "$out" | tail -n 1)"
    else
        echo "FAIL $name:"
        echo "$out" | tail -n 25
    fi
}
check "webgpu:0 fused launches after an early submit" \
    python3 -m pytest tests/webgpu/test_webgpu_capture.py -k submitted_everything
check "webgpu:0 std of 2^20 x 8 then a map launch, replayed" \
    env NUMR_TEST_DEVICE=webgpu:0 python3 -m pytest tests/test_capture.py -k 32_mib
check "cuda:0 std of 2^20 x 8 then a map launch, replayed" \
    env NUMR_TEST_DEVICE=cuda:0 python3 -m pytest tests/test_capture.py -k 32_mib
check "webgpu:0 vector_norm" \
    python3 -m pytest tests/webgpu/test_webgpu_linalg_factor.py -k "tiny_and_huge or vector_norm"
check "cuda:0 vector_norm" \
    env NUMR_TEST_DEVICE=cuda:0 python3 -m pytest tests/test_linalg.py -k "well_conditioned or vector_norm"
exit 0
