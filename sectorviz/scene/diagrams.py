"""(pattern, DiagramSpec) -> Scene for every diagram kind, after checking the spec's indices.

grid and warp: lanes.py; overview: overview.py; histogram: histogram.py;
banks: banks.py. Formats (svg.py, tikz.py, raster.py) only
write out the scene, so every format of one spec shows the same drawing.
"""

from __future__ import annotations

from dataclasses import replace

from ..model import Pattern, PatternError
from ..model.frontend import kernel_for
from .banks import bank_scene
from .histogram import histogram_scene
from .lanes import lane_scene
from .overview import overview_scene
from .palette import Theme, theme
from .shapes import Scene
from .sheet import NO_GLOBAL
from .spec import KINDS, DiagramSpec

__all__ = ["KINDS", "DiagramSpec", "diagram_scene", "selected_spec"]


def selected_spec(pattern: Pattern, warp: int, instruction: int, execution: int = 0,
                  **options) -> DiagramSpec:
    """The app's selection -> its diagram. The app counts the global instructions, then the
    shared ones: a global one is drawn as the grid, a shared one as the banks diagram (a
    kernel without global instructions keeps the grid, which says it has none)."""
    n = len(kernel_for(pattern).instructions)
    if instruction < n or n == 0:
        return DiagramSpec(warp=warp, instruction=instruction, execution=execution, **options)
    return DiagramSpec(kind="banks", warp=warp, instruction=instruction - n,
                       execution=execution, **options)


def diagram_scene(pattern: Pattern, spec: DiagramSpec) -> Scene:
    """The scene of one diagram; PatternError naming the option for an index out of range."""
    kernel = kernel_for(pattern)
    if spec.kind not in KINDS:
        raise PatternError("--kind", f"unknown kind {spec.kind!r}; one of {', '.join(KINDS)}")
    if not 0 <= spec.warp < kernel.warps:
        raise PatternError("--warp", f"warp {spec.warp} outside [0, {kernel.warps})")
    if spec.kind != "banks" and not kernel.instructions:
        raise PatternError("kernel", f"{NO_GLOBAL}: the kernel reads and writes no global "
                                     "array, so there are no sectors to draw")
    listed = kernel.shared_instructions if spec.kind == "banks" else kernel.instructions
    if not 0 <= spec.instruction < len(listed):
        raise PatternError("--instruction", f"instruction {spec.instruction} outside "
                                            f"[0, {len(listed)})" + " of the shared ones" * (
                                                spec.kind == "banks"))
    build = {"overview": overview_scene, "banks": bank_scene,
             "histogram": histogram_scene}.get(spec.kind, lane_scene)
    return build(pattern, spec, scaled_text(theme(spec.theme), spec.text_scale))


ROW_TEXT = 12.0  # the largest small text a lane row (13 units in grids, 14 in banks) holds


def scaled_text(th: Theme, factor: float) -> Theme:
    """`th` with its small and label sizes times `factor`, each at most ROW_TEXT (and never
    below its own)."""
    if factor <= 1.0:
        return th
    return replace(th, small_size=max(th.small_size, min(th.small_size * factor, ROW_TEXT)),
                   label_size=max(th.label_size, min(th.label_size * factor, ROW_TEXT)))
