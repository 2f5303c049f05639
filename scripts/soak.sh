#!/usr/bin/env bash
# Soak: run the suite on one device with hypothesis randomized (CI derandomizes, so it never sees new
# examples), a printed seed and more examples per test.
#   scripts/soak.sh DEVICE [EXAMPLES] [SEED] [PYTEST ARGS...]
# DEVICE: cpu, webgpu:0, cuda:0. EXAMPLES: hypothesis max_examples (default 200). SEED: reuse a printed
# seed to repeat a run. Extra arguments go to pytest (e.g. test paths, to restrict the run).
# tests/webgpu and tests/cuda run only in the soak of their own device.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 DEVICE [EXAMPLES] [SEED] [PYTEST ARGS...]" >&2; exit 2; }
device=$1
examples=${2:-200}
seed=${3:-$(python3 -c "import secrets; print(secrets.randbelow(2**32))")}
shift $(( $# < 3 ? $# : 3 ))

args=(-q -p no:cacheprovider "--hypothesis-seed=$seed")
case $device in webgpu*) ;; *) args+=(--ignore=tests/webgpu) ;; esac
case $device in cuda*) ;; *) args+=(--ignore=tests/cuda) ;; esac
# Every xdist worker gets the same --hypothesis-seed, and a test's examples depend only on the seed and
# the test, so a failure repeats with the same SEED with or without -n. WebGPU runs in one process:
# each worker would build its own device and shader caches on the one adapter.
case $device in
  cpu|cuda*) python3 -c "import xdist" 2>/dev/null && args+=(-n auto) ;;
esac

echo "soak: device=$device examples=$examples seed=$seed"
start=$SECONDS
rc=0
NUMR_TEST_DEVICE=$device NUMR_SOAK_EXAMPLES=$examples HYPOTHESIS_PROFILE=soak \
  python3 -m pytest "${args[@]}" "$@" || rc=$?
echo "soak: device=$device examples=$examples seed=$seed rc=$rc time=$(( SECONDS - start ))s"
exit $rc
