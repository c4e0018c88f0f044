"""The sector model: numpy only, no Qt. Pattern (value) -> analysis (pure function) -> views."""

from .analysis import Cancelled, analyze
from .errors import PatternError
from .one_warp import warp_detail
from .pattern import Pattern, load_pattern, pattern_from_dict, pattern_from_text
from .results import Analysis
from .sectors import sector_counts

__all__ = [
    "Analysis", "Cancelled", "Pattern", "PatternError", "analyze", "load_pattern",
    "pattern_from_dict", "pattern_from_text", "sector_counts", "warp_detail",
]
