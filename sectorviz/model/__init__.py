"""The sector model: numpy only, no Qt. Pattern (value) -> analysis (pure function) -> views."""

from .analysis import Analysis, Cancelled, analyze, warp_detail
from .errors import PatternError
from .pattern import Pattern, load_pattern, pattern_from_dict, pattern_from_text
from .sectors import sector_counts

__all__ = [
    "Analysis", "Cancelled", "Pattern", "PatternError", "analyze", "load_pattern",
    "pattern_from_dict", "pattern_from_text", "sector_counts", "warp_detail",
]
