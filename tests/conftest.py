"""Test configuration: hypothesis profiles and the device under test.

``NUMR_TEST_DEVICE`` (default: ``NUMR_DEVICE``, else cpu) picks the device most tests run on. In CI
(``CI`` set) hypothesis is derandomized so that a run cannot flake; scripts/soak.sh loads the "soak" profile:
randomized (the seed comes from ``--hypothesis-seed``), ``NUMR_SOAK_EXAMPLES`` examples per test, and no
example database, so that a seed alone repeats a run.
"""

import os

# SciPy reads this once, at its first import: the ecosystem tests need its array-API dispatch on
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# every launch of the suite is checked against its declaration in numr_array/kernels.py (read at import)
os.environ.setdefault("NUMR_CHECK_LAUNCH", "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("thorough", deadline=None, max_examples=500,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("soak", derandomize=False, deadline=None, database=None,
                          max_examples=int(os.environ.get("NUMR_SOAK_EXAMPLES", "200")),
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def device():
    """The device under test, as a numr_array Device."""
    import numr_array as xp
    return xp._device.parse_device(
        os.environ.get("NUMR_TEST_DEVICE", os.environ.get("NUMR_DEVICE", "cpu")))


@pytest.fixture
def fake_backend(monkeypatch):
    """Register tests/fake_backend.py as device kind 'fake' (two CPU-like devices) for one test."""
    from numr_array import backends
    monkeypatch.setitem(backends.BACKEND_MODULES, "fake", "tests.fake_backend")
    yield
    backends._runtimes.pop("fake", None)


@pytest.fixture
def requested(monkeypatch):
    """The bytes the arena is asked for in a block (what it would hold without reuse)."""
    asked = []
    from numr_array import _capture
    allocate = _capture.Arena.allocate

    def counting(self, nbytes):
        asked.append(nbytes)
        return allocate(self, nbytes)

    monkeypatch.setattr(_capture.Arena, "allocate", counting)
    return asked
