#!/usr/bin/env bash
# Install what the tests need and run them: the package with its test and webgpu extras, and Debian's
# software Vulkan adapter (lavapipe) when no WebGPU adapter is found, so the WebGPU tests run, not skip.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e ".[test,webgpu]"

has_adapter() {
  python3 -c "import sys, wgpu; sys.exit(0 if wgpu.gpu.request_adapter_sync() else 1)" >/dev/null 2>&1
}
if ! has_adapter; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "no WebGPU adapter: installing mesa-vulkan-drivers (lavapipe)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers >/dev/null
  fi
  if ! has_adapter; then
    echo "warning: no WebGPU adapter; the WebGPU tests will be skipped" >&2
    # CI must run them: a missing adapter there is a failure, not a skip
    [ -z "${CI:-}" ] || { echo "CI: no WebGPU adapter after installing lavapipe" >&2; exit 1; }
  fi
fi
exec python3 -m pytest -q "$@"
