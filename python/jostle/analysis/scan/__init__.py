"""`jostle scan`'s analysis, one concern a module: fingerprint (the runs' records read into a
value per node and per link), null (the allocation's empirical null), family (each value's
test against it, and the one family of a scan's tests), links (nodes and cables judged by
their links), classes (the node classes a site knows), verdict (the findings of a scan),
output (the verdict as JSON and text), inputs (host files, the simulated faults asked for).
What a caller needs of the whole scan is named here."""

from .fingerprint import (FINGERPRINT, NodeMetric, baseline_values, link_values,  # noqa: F401
                          load_ratio, node_values, oversubscribed, value_error)
from .verdict import (Finding, Verdict, drain_lines, hold_back, judge, rank,  # noqa: F401
                      second_pass, screen)
