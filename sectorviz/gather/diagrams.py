"""(pattern, DiagramSpec) -> Scene: the spec checked against the pattern's listing, then the
values its kind draws (one warp's detail for grid and warp, its shared detail for banks, the
per-warp analysis for overview and histogram) handed to scene.diagrams."""

from __future__ import annotations

from typing import Any

from ..model import Pattern, warp_detail
from ..model.analysis import analyzed
from ..model.listing import listing_of
from ..model.one_warp import shared_warp_detail
from ..scene import diagrams
from ..scene.shapes import Scene
from ..scene.spec import GRID_KINDS, DiagramSpec


def selected_spec(pattern: Pattern, warp: int, instruction: int, execution: int = 0,
                  **options: Any) -> DiagramSpec:
    """The app's selection (the global instructions, then the shared ones) -> its diagram
    (scene.diagrams.selected_spec)."""
    return diagrams.selected_spec(listing_of(pattern), warp, instruction, execution, **options)


def diagram_scene(pattern: Pattern, spec: DiagramSpec) -> Scene:
    """The scene of one diagram of `pattern`; PatternError naming the option for an index out
    of range (checked before anything is run)."""
    listing = listing_of(pattern)
    diagrams.check_spec(listing, spec)
    if spec.kind in GRID_KINDS:
        return diagrams.diagram_scene(listing, spec,
                                      analysis=analyzed(pattern, per_warp=True))
    if spec.kind == "banks":
        return diagrams.diagram_scene(listing, spec,
                                      shared=shared_warp_detail(pattern, spec.warp))
    return diagrams.diagram_scene(listing, spec, detail=warp_detail(pattern, spec.warp))
