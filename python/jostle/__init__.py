"""jostle: plan, launch, read and draw jostle-bench campaigns.

The C program `jostle-bench` measures and writes JSON Lines records; this package
never measures. It plans runs, launches them, validates the records and draws them.
"""

__version__ = "0.1.0"

# The record schema this package reads (docs/records.md).
SCHEMA = 1
