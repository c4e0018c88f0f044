"""The comparison slide: A's and B's grid (or warp) diagrams side by side, or stacked, under a
caption carrying the headline ratio (scene.compare), in any theme; one Scene, so every format
(SVG, PDF, PNG, TikZ) shows the same drawing.

Both sides share one sector-column width, so the wider grid is the one that touches more
sectors. The grids show the pair holding A's instruction `spec.instruction` when one is asked for,
else the pair whose sectors in the selected warp change most (Comparison.focus).
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from ..model import PatternError
from .compare import Comparison, Pair, Side, factor_words, ratio
from .lanes import Panel, lane_scene, panel, panel_units
from .palette import Theme, theme
from .parts import MARGIN, caption, caption_width, paragraph
from .shapes import Scene, Shape, Text
from .spec import DiagramSpec

SIDE_GAP = 24.0  # between the two diagrams, units
CAPTION_SCALE = 1.5  # the slide's caption against a diagram's: read from the back of a room
X_FIELDS, Y_FIELDS = {"x", "x1", "x2"}, {"y", "y1", "y2"}


def moved(shape: Shape, dx: float, dy: float) -> Shape:
    """A shape shifted by (dx, dy) units."""
    return replace(shape, **{f.name: getattr(shape, f.name) + (dx if f.name in X_FIELDS else dy)
                             for f in fields(shape) if f.name in X_FIELDS | Y_FIELDS})


def slide_pair(c: Comparison, instruction: int | None) -> Pair:
    """The pair the slide draws: A's instruction `instruction` and its match, or the focus;
    PatternError when that instruction has no match in B."""
    if instruction is None:
        return c.focus()
    pair = c.pair_of(instruction)
    if pair.b is None:
        raise PatternError("--instruction", f"instruction {instruction} of A has no match in B")
    return pair


def _panels(side: Side, spec: DiagramSpec) -> list[Panel]:
    """The panels lane_scene draws for `spec` (one for a grid, every instruction for a warp)."""
    if spec.kind == "grid":
        return [panel(side.pattern, side.detail, spec.instruction, spec.execution)]
    return [panel(side.pattern, side.detail, k, 0) for k in range(len(side.detail.executions))]


def _first_lane_y(scene: Scene) -> float:
    """The baseline of lane 0's number in a grid or warp scene."""
    return next(s.y for s in scene.shapes if isinstance(s, Text) and s.css == "lane")


def slide_caption(c: Comparison, pair: Pair, kind: str) -> tuple[str, str]:
    """(title, stats): the per-warp change of the drawn instruction (grid) or of the warp,
    then the headline over the grid."""
    names = f"{c.a.pattern.name} → {c.b.pattern.name}"
    if kind == "grid":
        wa, wb = c.a.warp_sectors(pair.a), c.b.warp_sectors(pair.b)
        return (f"{names}: {wa:,} → {wb:,} sectors, {factor_words(ratio(wa, wb))}",
                f"warp {c.warp}, {c.a.analysis.instructions[pair.a].name} → "
                f"{c.b.analysis.instructions[pair.b].name}; whole grid: {c.headline}")
    return f"{names}: {c.warp_headline}", f"whole grid: {c.headline}"


def _explain(shapes: list[Shape], c: Comparison, pair: Pair, y: float, width: float,
             th: Theme) -> float:
    """'A: why', 'B: why' of the drawn pair (scene.explain) from y, wrapped at `width`;
    returns the y below."""
    for tag, side, k in (("A", c.a, pair.a), ("B", c.b, pair.b)):
        y = paragraph(shapes, f"{tag}, {side.analysis.instructions[k].name}: {side.why[k]}",
                      y, width, th) - 4  # 6 units between A and B
    return y + 4


def slide_scene(c: Comparison, spec: DiagramSpec, stack: bool = False,
                instruction: int | None = None, explain: bool = False) -> Scene:
    """A's and B's diagrams of kind spec.kind ('grid' or 'warp') for warp c.warp, side by
    side (stacked with `stack`), under the comparison caption (with spec.caption) and, with
    `explain`, why the drawn pair (a warp diagram: the focus) costs what it costs."""
    if spec.kind not in ("grid", "warp"):
        raise PatternError("--kind", f"a comparison draws grid or warp diagrams, not {spec.kind}")
    th = theme(spec.theme)
    pair = slide_pair(c, instruction)
    sides = [(side, replace(spec, warp=c.warp, instruction=k))
             for side, k in ((c.a, pair.a), (c.b, pair.b))]
    units = [panel_units(_panels(side, s)) for side, s in sides]
    column = spec.grid_width / max(units)  # one column width on both sides
    scenes = [lane_scene(side.pattern, replace(s, grid_width=column * u), th)
              for (side, s), u in zip(sides, units)]
    head, stats = slide_caption(c, pair, spec.kind)
    shapes: list[Shape] = []
    big = replace(th, title_size=th.title_size * CAPTION_SCALE,
                  label_size=th.label_size * CAPTION_SCALE)
    top = caption(shapes, head, stats, MARGIN, big) - MARGIN if spec.caption else 0.0
    if explain:
        across = (max(s.width for s in scenes) if stack
                  else sum(s.width for s in scenes) + SIDE_GAP)
        top = _explain(shapes, c, pair, top + MARGIN, across, big) - MARGIN
    rows = [_first_lane_y(scene) for scene in scenes]
    x = y = 0.0
    heights = []
    for scene, row in zip(scenes, rows):
        drop = 0.0 if stack else max(rows) - row  # side by side, lane rows line up
        shapes += [moved(s, x, top + y + drop) for s in scene.shapes]
        heights.append(drop + scene.height)
        if stack:
            y += scene.height
        else:
            x += scene.width + SIDE_GAP
    width = (max(s.width for s in scenes) if stack
             else sum(s.width for s in scenes) + SIDE_GAP)
    height = top + (y if stack else max(heights))
    if spec.caption:
        width = max(width, caption_width(head, stats, big))
    return Scene(math.ceil(width), math.ceil(height), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))
