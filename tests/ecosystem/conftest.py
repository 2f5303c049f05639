"""Shared setup of the ecosystem tests: SciPy's array API mode, and moving results to NumPy for comparison.

``SCIPY_ARRAY_API=1`` must be in the environment before SciPy (or scikit-learn, which imports it) is first
imported: SciPy reads it once, at import. This conftest sets it when the ecosystem tests are collected,
which comes before any other test module in a normal run; a run that imported SciPy earlier without it
fails these tests with a message saying so, rather than testing SciPy's NumPy-only path.
"""

import os
import sys

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest  # noqa: E402  (after the environment is set)


@pytest.fixture(scope="session")
def scipy_array_api():
    """SciPy, checked to be in array API mode."""
    import scipy._lib._array_api as scipy_xp
    if not scipy_xp.SCIPY_ARRAY_API:
        pytest.fail("SciPy was imported before SCIPY_ARRAY_API=1 was set; "
                    "run with SCIPY_ARRAY_API=1 in the environment")
    return sys.modules["scipy"]

