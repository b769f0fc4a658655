"""Pictures: attention heat maps, curves and overlays."""

from course_lib.plots.attention import attention_heatmap, exact_match_by_length

__all__ = ["attention_heatmap", "exact_match_by_length"]
