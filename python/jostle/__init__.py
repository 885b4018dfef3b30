"""jostle: plan, launch, read and draw jostle-bench campaigns.

The C program `jostle-bench` measures and writes JSON Lines records; this package
never measures. It plans runs, launches them, validates the records and draws them.
"""

import time as _time

# When the package was first imported: a health check's budget counts its own imports (at 30%
# of a core beside other work they took over 4 s, and a clock started after them ran 2 s past
# the budget).
STARTED = _time.monotonic()

__version__ = "0.1.0"

# The record schema this package reads (docs/records.md).
SCHEMA = 1
