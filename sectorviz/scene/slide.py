"""The comparison slide: A's and B's grid (or warp) diagrams side by side, or stacked, under a
caption carrying the headline ratio (scene.compare), in any theme; one Scene, so every format
(SVG, PDF, PNG, TikZ) shows the same drawing.

Both sides share one sector-column width, so the wider grid is the one that touches more
sectors; that width is chosen so the slide is 16:9, and one legend serves both sides. The grids show
the pair asked for (a global instruction of A and its match), else the pair whose sectors in the
selected warp change most (Comparison.focus).
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from ..model.errors import PatternError
from .compare import Comparison, Pair, Side, factor_words, ratio
from .lanes import Panel, lane_scene, panel, panel_units
from .palette import Theme, theme
from .parts import MARGIN, caption, caption_width, legend, paragraph
from .shapes import Rect, Scene, Shape, Text
from .spec import DiagramSpec

SIDE_GAP = 24.0  # between the two diagrams, units
CAPTION_WRAP = 640.0  # the slide's caption wraps over the drawing's width, or this if wider
CAPTION_SCALE = 1.5  # the slide's caption against a diagram's: read from the back of a room
X_FIELDS, Y_FIELDS = {"x", "x1", "x2"}, {"y", "y1", "y2"}


def moved(shape: Shape, dx: float, dy: float) -> Shape:
    """A shape shifted by (dx, dy) units."""
    return replace(shape, **{f.name: getattr(shape, f.name) + (dx if f.name in X_FIELDS else dy)
                             for f in fields(shape) if f.name in X_FIELDS | Y_FIELDS})


def slide_pair(c: Comparison, pair: Pair | None) -> Pair:
    """The pair the slide draws: `pair`, or the focus; PatternError when `pair` is a shared
    one (the slide draws sector grids) or A's instruction has no match in B."""
    if pair is None:
        return c.focus()
    if pair.space == "shared":
        raise PatternError("--instruction", f"{c.names(pair)[0]} is a shared instruction: the "
                                            "comparison slide draws global ones")
    if pair.b is None:
        raise PatternError("--instruction", f"instruction {pair.a} of A has no match in B")
    return pair


def _panels(side: Side, spec: DiagramSpec) -> list[Panel]:
    """The panels lane_scene draws for `spec` (one for a grid, every instruction for a warp)."""
    if spec.kind == "grid":
        return [panel(side.listing, side.detail, spec.instruction, spec.execution)]
    return [panel(side.listing, side.detail, k, 0) for k in range(len(side.detail.executions))]


def _first_lane_y(scene: Scene) -> float:
    """The baseline of lane 0's number in a grid or warp scene."""
    return next(s.y for s in scene.shapes if isinstance(s, Text) and s.css == "lane")


def slide_caption(c: Comparison, pair: Pair, kind: str) -> tuple[str, str]:
    """(title, stats): the per-warp change of the drawn instruction (grid) or of the warp,
    then the headline over the grid."""
    names = f"{c.a.listing.name} → {c.b.listing.name}"
    if kind == "grid":
        assert pair.a is not None and pair.b is not None  # a slide draws a matched pair
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
        assert k is not None  # a slide draws a matched pair
        y = paragraph(shapes, f"{tag}, {side.analysis.instructions[k].name}: {side.why[k]}",
                      y, width, th) - 4  # 6 units between A and B
    return y + 4


def slide_scene(c: Comparison, spec: DiagramSpec, stack: bool = False,
                drawn: Pair | None = None, explain: bool = False) -> Scene:
    """A's and B's diagrams of kind spec.kind ('grid' or 'warp') for warp c.warp, side by
    side (stacked with `stack`), of pair `drawn` (None: the focus), under the comparison
    caption (with spec.caption) and, with `explain`, why the drawn pair (a warp diagram: the
    focus) costs what it costs; one legend for both (with spec.legend). The sector columns
    are widened or narrowed so the slide comes out SLIDE_ASPECT (16:9), within the column
    widths lanes.py allows; what is left is margin around the centred drawing."""
    if spec.kind not in ("grid", "warp"):
        raise PatternError("--kind", f"a comparison draws grid or warp diagrams, not {spec.kind}")
    pair = slide_pair(c, drawn)
    args = (c, spec, stack, pair, explain)
    widths = [spec.grid_width, spec.grid_width * 1.5]
    scenes = [_slide(*args, w) for w in widths]
    for _ in range(FIT_ROUNDS):
        (w0, w1), (s0, s1) = widths, scenes
        miss0, miss1 = (s.width - SLIDE_ASPECT * s.height for s in (s0, s1))
        if miss1 == miss0 or abs(miss1) < ASPECT_SLACK * s1.width:
            break
        nxt = min(max(w1 - miss1 * (w1 - w0) / (miss1 - miss0), GRID_LOWEST), GRID_HIGHEST)
        widths, scenes = [w1, nxt], [s1, _slide(*args, nxt)]
    best = min(scenes, key=lambda s: abs(math.log(s.width / (SLIDE_ASPECT * s.height))))
    return _to_aspect(best)


SLIDE_ASPECT = 16 / 9
FIT_ROUNDS = 4  # secant steps on the grid width towards the aspect
ASPECT_SLACK = 0.01  # close enough: a width within 1% of the aspect's
GRID_LOWEST, GRID_HIGHEST = 200.0, 6000.0  # grid widths tried, units


def _to_aspect(scene: Scene) -> Scene:
    """`scene` on a SLIDE_ASPECT canvas: margin added on the short side, the drawing centred."""
    width = max(scene.width, math.ceil(scene.height * SLIDE_ASPECT))
    height = max(scene.height, math.ceil(scene.width / SLIDE_ASPECT))
    dx, dy = (width - scene.width) / 2, (height - scene.height) / 2
    return replace(scene, width=width, height=height,
                   shapes=tuple(moved(s, dx, dy) for s in scene.shapes))


def _slide(c: Comparison, spec: DiagramSpec, stack: bool, pair: Pair, explain: bool,
           grid_width: float) -> Scene:
    """The slide of `pair` with the wider side's sector columns filling `grid_width` units."""
    th = theme(spec.theme)
    assert pair.a is not None and pair.b is not None  # a slide draws a matched pair
    sides = [(side, replace(spec, warp=c.warp, instruction=k, caption=True))
             for side, k in ((c.a, pair.a), (c.b, pair.b))]
    units = [panel_units(_panels(side, s)) for side, s in sides]
    column = grid_width / max(units)  # one column width on both sides
    scenes = [lane_scene(side.listing, side.detail,
                         replace(s, grid_width=column * u, legend=False), th)
              for (side, s), u in zip(sides, units)]
    head, stats = slide_caption(c, pair, spec.kind)
    shapes: list[Shape] = []
    big = replace(th, title_size=th.title_size * CAPTION_SCALE,
                  label_size=th.label_size * CAPTION_SCALE)
    across = (max(s.width for s in scenes) if stack
              else sum(s.width for s in scenes) + SIDE_GAP)
    wrap = max(across, CAPTION_WRAP) - 2 * MARGIN  # the caption wraps over the drawing
    top = caption(shapes, head, stats, MARGIN, big, wrap) - MARGIN if spec.caption else 0.0
    if explain:
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
    height = top + (y if stack else max(heights))
    width = max(across, caption_width(head, stats, big, wrap) if spec.caption else 0.0)
    if spec.legend:
        entries = _legend_union([lane_scene(side.listing, side.detail, replace(
            s, grid_width=column * u, caption=False), th) for (side, s), u in zip(sides, units)])
        height = legend(shapes, entries, MARGIN, height - MARGIN + 10, width - MARGIN,
                        th) + MARGIN - 10
    return Scene(math.ceil(width), math.ceil(height), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))


def _legend_union(scenes: list[Scene]) -> list[tuple[str, str, str]]:
    """The legend entries (kind, colour, words) of `scenes`, each once, in order of first
    appearance: read back from their legend swatches and words."""
    entries: dict[str, tuple[str, str, str]] = {}
    for scene in scenes:
        swatch = None
        for s in scene.shapes:
            if s.css == "legend-swatch":
                swatch = s
            elif s.css == "legend" and swatch is not None:
                assert isinstance(s, Text) and not isinstance(swatch, Text)  # box or rule: words
                kind = ("box" if isinstance(swatch, Rect) else
                        "dash" if swatch.dash else "rule")
                colour = swatch.fill if isinstance(swatch, Rect) else swatch.stroke
                entries.setdefault(s.text, (kind, colour, s.text))
                swatch = None
    return list(entries.values())
