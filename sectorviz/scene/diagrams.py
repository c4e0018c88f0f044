"""(listing, DiagramSpec, what the spec's kind draws) -> Scene for every diagram kind, after
checking the spec's indices.

grid and warp: lanes.py (one warp's WarpDetail); overview: overview.py and histogram:
histogram.py (an Analysis with per-warp figures); banks: banks.py (one warp's
SharedWarpDetail). Formats (svg.py, tikz.py, raster.py) only write out the scene, so every
format of one spec shows the same drawing. sectorviz.gather computes the inputs from a
pattern.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..model.errors import PatternError
from ..model.results import Analysis
from ..model.values import Listing, SharedWarpDetail, WarpDetail
from .banks import bank_scene
from .histogram import histogram_scene
from .lanes import lane_scene
from .overview import overview_scene
from .palette import Theme, theme
from .shapes import Scene
from .sheet import NO_GLOBAL
from .spec import GRID_KINDS, KINDS, DiagramSpec

__all__ = ["KINDS", "DiagramSpec", "check_spec", "diagram_scene", "selected_spec"]


def selected_spec(listing: Listing, warp: int, instruction: int, execution: int = 0,
                  **options: Any) -> DiagramSpec:
    """The app's selection -> its diagram. The app counts the global instructions, then the
    shared ones: a global one is drawn as the grid, a shared one as the banks diagram (a
    kernel without global instructions keeps the grid, which says it has none)."""
    n = len(listing.instructions)
    if instruction < n or n == 0:
        return DiagramSpec(warp=warp, instruction=instruction, execution=execution, **options)
    return DiagramSpec(kind="banks", warp=warp, instruction=instruction - n,
                       execution=execution, **options)


def check_spec(listing: Listing, spec: DiagramSpec) -> None:
    """PatternError naming the option for a kind, warp or instruction out of range."""
    if spec.kind not in KINDS:
        raise PatternError("--kind", f"unknown kind {spec.kind!r}; one of {', '.join(KINDS)}")
    if not 0 <= spec.warp < listing.warps:
        raise PatternError("--warp", f"warp {spec.warp} outside [0, {listing.warps})")
    if spec.kind != "banks" and not listing.instructions:
        raise PatternError("kernel", f"{NO_GLOBAL}: the kernel reads and writes no global "
                                     "array, so there are no sectors to draw")
    listed = listing.shared_instructions if spec.kind == "banks" else listing.instructions
    if not 0 <= spec.instruction < len(listed):
        raise PatternError("--instruction", f"instruction {spec.instruction} outside "
                                            f"[0, {len(listed)})" + " of the shared ones" * (
                                                spec.kind == "banks"))


def diagram_scene(listing: Listing, spec: DiagramSpec, detail: WarpDetail | None = None,
                  shared: SharedWarpDetail | None = None,
                  analysis: Analysis | None = None) -> Scene:
    """The scene of one diagram from what its kind draws: `detail` of spec.warp (grid, warp),
    `shared` of spec.warp (banks), `analysis` with per-warp figures (overview, histogram);
    PatternError naming the option for an index out of range."""
    check_spec(listing, spec)
    th = scaled_text(theme(spec.theme), spec.text_scale)
    if spec.kind in GRID_KINDS:
        assert analysis is not None and analysis.per_warp_sectors is not None
        build = overview_scene if spec.kind == "overview" else histogram_scene
        return build(analysis, spec, th)
    if spec.kind == "banks":
        assert shared is not None and shared.warp == spec.warp
        return bank_scene(listing, shared, spec, th)
    assert detail is not None and detail.warp == spec.warp
    return lane_scene(listing, detail, spec, th)


MAX_TEXT_SCALE = 4.0  # a window's small text grows at most this much (a presentation)


def scaled_text(th: Theme, factor: float) -> Theme:
    """`th` with its small and label sizes times `factor` (at most MAX_TEXT_SCALE, never
    below 1); what lies inside a lane row keeps its size (parts.row_text), and labels
    beside the rows and columns are thinned where they no longer fit each one
    (parts.label_every)."""
    if factor <= 1.0:
        return th
    factor = min(factor, MAX_TEXT_SCALE)
    return replace(th, small_size=th.small_size * factor, label_size=th.label_size * factor)
