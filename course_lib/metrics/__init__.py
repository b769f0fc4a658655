"""Metrics: sequence exact match and alignment; more per task in sibling modules."""

from course_lib.metrics.sequence import alignment_share, exact_match

__all__ = ["alignment_share", "exact_match"]
