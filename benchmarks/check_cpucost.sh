#!/usr/bin/env bash
# The compiled CPU call's reductions, asarray and matmul plans and its temporary elision, checked on another
# machine (another Python: the elision calibrates its reference counts at import), then timed: a few
# seconds. Prints PASS or FAIL per step and the call_cost table; exits non-zero if a step failed.
#   bash benchmarks/check_cpucost.sh
cd "$(dirname "$0")/.." || exit 1
status=0
step() {  # step NAME COMMAND...: run it, print PASS/FAIL
    if "${@:2}" > /tmp/check_cpucost.log 2>&1; then echo "PASS $1"; else echo "FAIL $1"; tail -n 20 /tmp/check_cpucost.log; status=1; fi
}
step build python3 setup.py -q build_ext --inplace
step calibrated python3 -c "
import numr_array._elementwise as e, numr_array._launch as l
assert e._calibrate_compiled() and l.ELIDE, 'the compiled elision is off here'
print('c_stack_check:', getattr(e._speedups, 'c_stack_check', None))"
step tests python3 -m pytest tests/test_speedups.py tests/test_elision.py -q -x -p no:cacheprovider
OPENBLAS_NUM_THREADS=4 timeout 120 python3 -m benchmarks.call_cost --backends numpy,numr:cpu --repeat 9 2>/dev/null \
    | grep -E '^\|' || { echo "FAIL call_cost"; status=1; }
exit $status
