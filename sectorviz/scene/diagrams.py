"""(pattern, DiagramSpec) -> Scene for every diagram kind, after checking the spec's indices.

grid and warp: lanes.py; overview: overview.py. Formats (svg.py, tikz.py, raster.py) only
write out the scene, so every format of one spec shows the same drawing.
"""

from __future__ import annotations

from ..model import Pattern, PatternError
from ..model.analysis import kernel_for
from .lanes import lane_scene
from .overview import overview_scene
from .palette import theme
from .shapes import Scene
from .sheet import NO_GLOBAL
from .spec import KINDS, DiagramSpec

__all__ = ["KINDS", "DiagramSpec", "diagram_scene"]


def diagram_scene(pattern: Pattern, spec: DiagramSpec) -> Scene:
    """The scene of one diagram; PatternError naming the option for an index out of range."""
    kernel = kernel_for(pattern)
    if spec.kind not in KINDS:
        raise PatternError("--kind", f"unknown kind {spec.kind!r}; one of {', '.join(KINDS)}")
    if not 0 <= spec.warp < kernel.warps:
        raise PatternError("--warp", f"warp {spec.warp} outside [0, {kernel.warps})")
    if not kernel.instructions:
        raise PatternError("kernel", f"{NO_GLOBAL}: the kernel reads and writes no global "
                                     "array, so there are no sectors to draw")
    if not 0 <= spec.instruction < len(kernel.instructions):
        raise PatternError("--instruction", f"instruction {spec.instruction} outside "
                                            f"[0, {len(kernel.instructions)})")
    build = overview_scene if spec.kind == "overview" else lane_scene
    return build(pattern, spec, theme(spec.theme))
