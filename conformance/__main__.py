"""``python -m conformance`` is the same as ``python -m conformance.run``."""

import sys

from conformance.run import main

sys.exit(main())
