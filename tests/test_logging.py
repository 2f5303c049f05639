"""The ``numr_array`` logger: device discovery and absent backends at INFO, kernel compilation at DEBUG
(once per kernel, not per launch), and nothing on stderr unless the application configures logging."""

import logging
import subprocess
import sys

import pytest

import numr_array as xp
from numr_array import backends

from .helpers import DEVICE


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_nothing_on_stderr_by_default():
    """A NullHandler on "numr_array": even a warning of one of its loggers stays off stderr (Python's
    last-resort handler would print it) until the application configures logging."""
    assert any(isinstance(h, logging.NullHandler) for h in logging.getLogger("numr_array").handlers)
    r = _run("import logging, numr_array as xp\n"
             "logging.getLogger('numr_array.backends').warning('numr-warning-marker')\n"
             "xp.asarray([1.0]) + 1\n")
    assert r.returncode == 0, r.stderr
    assert "numr-warning-marker" not in r.stderr


def test_discovery_says_which_backends_exist_and_why_the_others_do_not():
    r = _run("import logging, sys\n"
             "logging.basicConfig(stream=sys.stdout, level=logging.INFO, format='%(name)s|%(message)s')\n"
             "import numr_array as xp\n"
             "xp.__array_namespace_info__().devices()\n")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("numr_array")]
    assert "numr_array.backends|cpu backend: 1 device(s)" in lines
    for kind in backends.BACKEND_MODULES:
        found = backends.get_runtime(kind) is not None
        said = [line for line in lines if f"{kind} backend" in line]
        assert said, (kind, lines)
        assert all(("absent" in line) is not found for line in said), said


def test_an_absent_webgpu_adapter_says_why(caplog, monkeypatch):
    pytest.importorskip("wgpu")
    from numr_array.backends import webgpu
    monkeypatch.setenv("NUMR_WEBGPU_ADAPTER", "no-such-adapter")
    with caplog.at_level(logging.INFO, logger="numr_array"):
        assert webgpu.create_runtime() is None
    assert any("webgpu backend absent: no WebGPU adapter" in r.getMessage() and "no-such-adapter" in r.getMessage()
               for r in caplog.records)


def test_an_absent_cupy_says_why(caplog, monkeypatch):
    from numr_array.backends import cuda
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with caplog.at_level(logging.INFO, logger="numr_array"):
        assert cuda.create_runtime() is None
    assert any(r.getMessage().startswith("cuda backend absent: CuPy cannot be imported") for r in caplog.records)


@pytest.mark.skipif(not DEVICE.startswith("webgpu"), reason="the WebGPU pipeline cache (NUMR_TEST_DEVICE=webgpu:0)")
def test_webgpu_kernel_compilation_is_logged_once_at_debug(caplog):
    client = xp.asarray([1.0], device=DEVICE).device.client
    source = ("@group(0) @binding(0) var<uniform> u: vec4<u32>;\n"
              "@group(0) @binding(1) var<storage, read_write> v: array<u32>;\n"
              "@compute @workgroup_size(1) fn main() { v[0] = u.x; }\n")
    key = ("test_logging", id(caplog))
    with caplog.at_level(logging.DEBUG, logger="numr_array"):
        first = client.pipeline(key, lambda: source, 1, 16)
        assert client.pipeline(key, lambda: source, 1, 16) is first
    records = [r for r in caplog.records if "compiling the WGSL kernel" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.DEBUG and "test_logging" in records[0].getMessage()
    with caplog.at_level(logging.DEBUG, logger="numr_array"):
        caplog.clear()
        x = xp.asarray([1.0, 2.0], device=DEVICE)
        x + x
        x + x  # the second launch compiles nothing
    assert sum("compiling" in r.getMessage() for r in caplog.records) <= 1


@pytest.mark.cuda
@pytest.mark.skipif(not DEVICE.startswith("cuda"), reason="the CUDA direct kernels (NUMR_TEST_DEVICE=cuda:0)")
def test_cuda_kernel_compilation_is_logged_once_at_debug(caplog):
    import cupy
    import numpy as np

    from numr_array.backends.cuda._direct_elementwise import DirectLauncher
    xp.asarray([1], device=DEVICE).device.client  # (the CUDA client sets CuPy's compile hooks up)
    launcher = DirectLauncher(cupy.cuda.Stream(non_blocking=True))  # a new kernel cache
    with caplog.at_level(logging.DEBUG, logger="numr_array"):
        assert launcher._function("multiply", np.dtype(np.int16), "tt") == launcher._function(
            "multiply", np.dtype(np.int16), "tt")
    records = [r for r in caplog.records if "compiling the direct kernel multiply of int16" in r.getMessage()]
    assert len(records) == 1 and records[0].levelno == logging.DEBUG
