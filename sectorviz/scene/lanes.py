"""Grid and warp diagrams: lanes 0..31 (rows) x the sectors a warp touches (columns).

Drawn from the model's GridLayout. A sector column is labelled with its address (hex), its
offset in bytes from the array's element 0, and the distinct bytes the warp uses in it. A cell
a lane touches is tinted (the whole sector is fetched) with the lane's bytes in full colour at
their place inside the sector; it is the element with class `hit` and data-lane/data-sector.
A GapColumn becomes a dashed continuation mark with the bytes it skips. Inactive lanes are grey
bands, crossing and sharing lanes have their own colour and a tag at the right.
The grid kind draws one execution of one instruction; the warp kind draws the first execution
of every instruction side by side on shared lane rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.errors import PatternError
from ..model.sectors import WARP_SIZE
from ..model.values import LaneExecution, Listing, WarpDetail
from .explain import explanations
from .grid import GapColumn, GridLayout, SectorColumn, grid_layout, loop_caption, run_totals
from .palette import Theme, mix
from .parts import (
    MARGIN,
    caption,
    caption_width,
    label_every,
    legend,
    paragraph,
    paragraph_width,
    row_text,
)
from .shapes import Line, Rect, Scene, Shape, Text, text_width
from .spec import DiagramSpec
from .words import NOT_RUN, counted

ROW_H = 13.0  # one lane row
CELL_MIN, CELL_MAX = 10.0, 96.0  # width of one sector column
GAP_UNITS, GAP_MIN = 0.6, 14.0  # width of a gap column, in sector columns and at least
NOT_RUN_UNITS = 8.0  # width of a panel whose instruction the warp does not run
PANEL_GAP = 28.0
CAPTION_SLACK = 120.0  # title and stats wrap past the grid's width plus this, units
CAPTION_MIN = 480.0  # ... but never narrower than this (a narrow side of a slide)
BODY_H = WARP_SIZE * ROW_H


@dataclass(frozen=True)
class Panel:
    """One instruction's grid and the words around it."""

    name: str
    array: str
    layout: GridLayout | None  # None: no lane of the warp runs this instruction
    run: LaneExecution | None
    runs: int  # executions of the instruction by this warp (loop iterations)
    iteration: str  # '' or 'k = 3 (iteration 4 of 64)'


@dataclass(frozen=True)
class Geometry:
    """Where the rows and header lines of all panels lie."""

    cw: float  # width of a sector column
    header_top: float
    horizontal: bool  # address labels fit across a column (else they read upwards)
    abs_y: float  # baseline (horizontal) or foot (rotated) of the address labels
    rel_y: float  # the same for the offset labels
    body_top: float  # top of lane 0
    every: int = 1  # a sector column's labels on every this-many-th column (large type)


def lane_scene(listing: Listing, detail: WarpDetail, spec: DiagramSpec, th: Theme) -> Scene:
    """The grid (spec.kind == 'grid') or warp diagram of the warp of `detail` (spec.warp)."""
    if spec.kind == "grid":
        count = len(detail.executions[spec.instruction])
        if count and not 0 <= spec.execution < count:
            raise PatternError("--execution", f"execution {spec.execution} outside [0, {count})")
        panels = [panel(listing, detail, spec.instruction, spec.execution)]
    else:
        panels = [panel(listing, detail, k, 0) for k in range(len(detail.executions))]
    head, stats = _caption_text(listing, spec, panels)
    shapes: list[Shape] = []
    wrap = max(spec.grid_width + CAPTION_SLACK, CAPTION_MIN)
    y = caption(shapes, head, stats, MARGIN, th, wrap) if spec.caption else MARGIN
    why = _why(listing, detail, spec) if spec.explain else []
    for words in why:
        y = paragraph(shapes, words, y, wrap + 2 * MARGIN, th)
    titled = spec.kind == "warp"
    titles = [_title(p) if titled else "" for p in panels]
    if titled:
        y += th.label_size * 1.5
    geo = _geometry(panels, y, spec.grid_width, th)
    offset_name = (f"{panels[0].array.split(', ')[0]}[0] +"
                   if len({p.array for p in panels}) == 1 else "offset B")
    left = (MARGIN + th.label_size + 4 + 8
            + max(text_width(t, th.small_size) for t in ("address", "used B", offset_name, "31")))
    _lane_axis(shapes, panels, left, geo, offset_name, th)

    present: set[str] = set()
    x = right = grid_right = left
    for p, title in zip(panels, titles):
        if title:
            shapes.append(Text(x, y - 6, title, th.label_size, th.text, bold=True,
                               css="panel-title"))
        width = _draw_panel(shapes, p, x, geo, th, present)
        tag_w = _draw_tags(shapes, p.layout, x + width + 5, geo, th)
        grid_right = x + width
        right = x + max(width + tag_w, text_width(title, th.label_size))
        x = right + PANEL_GAP
    for k in (8, 16, 24):
        ry = geo.body_top + k * ROW_H
        shapes.append(Line(left - 4, ry, grid_right, ry, th.rule, 0.75, css="lane-group"))

    width = max([right + MARGIN, caption_width(head, stats, th, wrap) if spec.caption else 0.0]
                + [paragraph_width(words, wrap + 2 * MARGIN, th) for words in why])
    y = geo.body_top + BODY_H + th.small_size * 1.4 + 16
    if spec.legend:  # on one line where the width the grid may take allows
        y = legend(shapes, _legend_entries(present, th), MARGIN, y,
                   max(width, MARGIN + wrap) - MARGIN, th)
        width = max([width] + [s.x + text_width(s.text, s.size) + MARGIN for s in shapes
                               if isinstance(s, Text) and s.css == "legend"])
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))


def _why(listing: Listing, detail: WarpDetail, spec: DiagramSpec) -> list[str]:
    """Why the drawn instruction (grid) or each instruction (warp, by name) costs what it
    costs in this warp (scene.explain), a paragraph each."""
    why = explanations(listing, detail, spec.instruction, spec.execution)
    if spec.kind == "grid":
        return [why[spec.instruction]]
    names = [ins.name for ins in listing.instructions]
    return [f"{name}: {words}" for name, words in zip(names, why)]


def panel(listing: Listing, detail: WarpDetail, k: int, execution: int) -> Panel:
    """Instruction k's `execution`-th run by the warp of `detail`, laid out."""
    ins = listing.instructions[k]
    runs = detail.executions[k]
    if not runs:
        return Panel(ins.name, ins.array, None, None, 0, "")
    run = runs[execution]
    layout = grid_layout(run, ins.width, listing.sector_bytes,
                         listing.arrays[ins.first_array].address0, detail.valid)
    iteration = ""
    if len(runs) > 1:
        iteration = f"{loop_caption(run)} (iteration {execution + 1} of {len(runs)})"
    return Panel(ins.name, ins.array, layout, run, len(runs), iteration)


def _stats(runs: list[LaneExecution], sector_bytes: int) -> str:
    """Sectors, ideal sectors and useful % of runs."""
    t = run_totals(runs, sector_bytes)
    return (f"{counted(t.sectors, 'sector')} (ideal {t.ideal_sectors}), useful "
            f"{100 * t.useful_fraction:.1f}% ({t.useful_bytes:,} B used of "
            f"{t.fetched_bytes:,} B fetched)")


def _caption_text(listing: Listing, spec: DiagramSpec, panels: list[Panel]
                  ) -> tuple[str, str]:
    """(title line, stats line): pattern, warp, instruction; sectors, ideal, useful %."""
    if spec.kind == "grid":
        head = f"{listing.name}: warp {spec.warp}, {panels[0].name} (array {panels[0].array})"
        head += f", {panels[0].iteration}" if panels[0].iteration else ""
    else:
        n = len(panels)
        head = f"{listing.name}: warp {spec.warp}, {counted(n, 'instruction')}"
    runs = [p.run for p in panels if p.run is not None]
    if not runs:
        what = "this instruction" if spec.kind == "grid" else "any instruction"
        return head, f"no lane of warp {spec.warp} runs {what}"
    sb = listing.sector_bytes
    active = int(runs[0].active.sum())
    return head, f"{_stats(runs, sb)}, {active} of 32 lanes active, {sb}-byte sectors"


def _title(p: Panel) -> str:
    """A warp-diagram panel's title: instruction and its sectors."""
    if p.run is None:
        return f"{p.name}: not run"
    first = f", first of {p.runs}" if p.runs > 1 else ""
    return f"{p.name}{first}: {counted(p.run.sectors, 'sector')}"


def _column_width(cw: float, column: SectorColumn | GapColumn) -> float:
    return cw if isinstance(column, SectorColumn) else max(cw * GAP_UNITS, GAP_MIN)


def panel_units(panels: list[Panel]) -> float:
    """Width of the panels in sector columns: a gap column GAP_UNITS, a panel not run
    NOT_RUN_UNITS; the grid's width over this is the column width."""
    return sum(NOT_RUN_UNITS if p.layout is None else
               sum(1.0 if isinstance(c, SectorColumn) else GAP_UNITS for c in p.layout.columns)
               for p in panels)


def _geometry(panels: list[Panel], header_top: float, grid_width: float,
              th: Theme) -> Geometry:
    """Column width from how many columns share `grid_width`; label direction from their
    width."""
    cw = min(CELL_MAX, max(CELL_MIN, grid_width / panel_units(panels)))
    columns = [c for p in panels if p.layout is not None for c in p.layout.columns
               if isinstance(c, SectorColumn)]
    small = th.small_size
    abs_w = max((text_width(f"0x{c.address:x}", small) for c in columns), default=0.0)
    rel_w = max((text_width(f"{c.relative:,}", small) for c in columns), default=0.0)
    if max(abs_w, rel_w) + 6 <= cw:
        return Geometry(cw, header_top, True, header_top + small * 1.1,
                        header_top + small * 2.5, header_top + small * 2.8 + 4)
    body_top = header_top + abs_w + rel_w + 14
    return Geometry(cw, header_top, False, header_top + abs_w, body_top - 6, body_top,
                    label_every(small, cw))


def _lane_axis(shapes: list[Shape], panels: list[Panel], left: float, geo: Geometry,
               offset_name: str, th: Theme) -> None:
    """Names of the header rows, the lane numbers (muted where no panel's lane is active)
    and the word 'lane' reading upwards along them."""
    small, x = th.small_size, left - 8
    if geo.horizontal:
        abs_y, rel_y = geo.abs_y, geo.rel_y
    else:  # centred on the upward-reading labels: [header_top, abs_y] and [abs_y + 8, rel_y]
        abs_y = (geo.header_top + geo.abs_y) / 2 + small * 0.36
        rel_y = (geo.abs_y + 8 + geo.rel_y) / 2 + small * 0.36
    shapes.append(Text(x, abs_y, "address", small, th.muted, anchor="end", css="axis"))
    shapes.append(Text(x, rel_y, offset_name, small, th.muted, anchor="end", css="axis"))
    shapes.append(Text(x, geo.body_top + BODY_H + small * 1.4, "used B", small, th.muted,
                       anchor="end", css="axis"))
    shapes.append(Text(MARGIN + th.label_size, geo.body_top + BODY_H / 2, "lane",
                       th.label_size, th.muted, anchor="middle", rotate=True, css="axis"))
    active = np.zeros(WARP_SIZE, dtype=bool)
    for p in panels:
        if p.layout is not None:
            active |= p.layout.active
    for lane in range(0, WARP_SIZE, label_every(small, ROW_H)):
        shapes.append(Text(x, _row_baseline(geo, lane, small), str(lane), small,
                           th.text if active[lane] else th.muted, anchor="end", css="lane"))


def _row_baseline(geo: Geometry, row: float, size: float) -> float:
    """Baseline of text of `size` centred on lane row `row` (may be fractional)."""
    return geo.body_top + row * ROW_H + ROW_H / 2 + size * 0.36


def _draw_panel(shapes: list[Shape], p: Panel, x0: float, geo: Geometry, th: Theme,
                present: set[str]) -> float:
    """One panel from x0: columns, inactive bands, gap marks, hit cells, labels; returns its
    width. Adds the kinds of thing drawn ('plain', 'crossing', 'shared', 'gap', 'inactive')
    to `present` for the legend. A sector that starts a 128-byte line gets a rule at its left."""
    small, cw, top = th.small_size, geo.cw, geo.body_top
    bottom = top + BODY_H
    if p.layout is None:
        w = NOT_RUN_UNITS * cw
        shapes.append(Rect(x0, top, w, BODY_H, th.inactive, css="not-run"))
        shapes.append(Text(x0 + w / 2 + small * 0.36, top + BODY_H / 2, NOT_RUN,
                           small, th.muted, anchor="middle", rotate=True, css="note"))
        return w
    layout = p.layout
    xs: list[float] = np.cumsum([x0] + [_column_width(cw, c) for c in layout.columns]).tolist()
    width = xs[-1] - x0
    sectors = [(c, x) for c, x in zip(layout.columns, xs) if isinstance(c, SectorColumn)]
    for column, cx in sectors:
        shapes.append(Rect(cx + 0.5, top, cw - 1, BODY_H, th.cell, css="sector",
                           data=(("sector", str(column.sector)),)))
    for lane in np.nonzero(~layout.active)[0]:
        present.add("inactive")
        shapes.append(Rect(x0, top + lane * ROW_H, width, ROW_H, th.inactive,
                           css="inactive" if layout.valid[lane] else "inactive missing",
                           data=(("lane", str(lane)),)))
    for gap, cx in zip(layout.columns, xs):
        if isinstance(gap, GapColumn):
            present.add("gap")
            gap_w = _column_width(cw, gap)
            _gap_mark(shapes, gap, cx + gap_w / 2, top, bottom, th,
                      max(row_text(th), min(th.small_size, gap_w - 4)))
    for j, (column, cx) in enumerate(sectors):
        _draw_cells(shapes, layout, j, column, cx, geo, th, present)
        if j % geo.every == 0:
            _draw_labels(shapes, column, cx + cw / 2, geo, th)
    for column, cx in sectors:
        if column.line_start:
            present.add("line")
            shapes.append(Line(cx, top - 3, cx, bottom + 3, th.muted, 1.5, css="line-mark"))
    return width


def _lane_colour(layout: GridLayout, lane: int, th: Theme) -> tuple[str, str]:
    """(css class, colour) of a lane's cells: crossing wins over shared."""
    if layout.crossing[lane]:
        return "crossing", th.crossing
    if layout.shared[lane]:
        return "shared", th.shared
    return "plain", th.plain


def _draw_cells(shapes: list[Shape], layout: GridLayout, j: int, column: SectorColumn,
                cx: float, geo: Geometry, th: Theme, present: set[str]) -> None:
    """The hit cells of sector column j: the sector tinted (fetched), the bytes no lane uses
    in the waste colour, the lane's bytes [lo, hi) in colour."""
    inner, sb = geo.cw - 1, layout.sector_bytes
    for lane in range(WARP_SIZE):
        lo, hi = int(layout.cell_lo[lane, j]), int(layout.cell_hi[lane, j])
        if hi <= lo:
            continue
        css, colour = _lane_colour(layout, lane, th)
        present.add(css)
        if column.used_bytes > hi - lo:
            present.add("others")
        cy = geo.body_top + lane * ROW_H + 1
        shapes.append(Rect(cx + 0.5, cy, inner, ROW_H - 2, mix(colour, th.background, th.tint),
                           css=f"hit {css}",
                           data=(("lane", str(lane)), ("sector", str(column.sector)),
                                 ("bytes", f"{lo}:{hi}"))))
        for a, b in column.unused:
            present.add("wasted")
            shapes.append(Rect(cx + 0.5 + inner * a / sb, cy, inner * (b - a) / sb, ROW_H - 2,
                               th.wasted, css="wasted"))
        shapes.append(Rect(cx + 0.5 + inner * lo / sb, cy, inner * (hi - lo) / sb, ROW_H - 2,
                           colour, css=f"used {css}"))


def _draw_labels(shapes: list[Shape], column: SectorColumn, mid: float, geo: Geometry,
                 th: Theme) -> None:
    """Address and offset above a sector column, its used bytes below."""
    small = th.small_size
    pairs = ((f"0x{column.address:x}", geo.abs_y, "address"),
             (f"{column.relative:,}", geo.rel_y, "offset"))
    for words, y, css in pairs:
        if geo.horizontal:
            shapes.append(Text(mid, y, words, small, th.text, anchor="middle", css=css))
        else:
            shapes.append(Text(mid + small * 0.36, y, words, small, th.text, rotate=True,
                               css=css))
    used = str(column.used_bytes)
    bottom = geo.body_top + BODY_H
    if text_width(used, small) + 2 <= geo.cw:
        shapes.append(Text(mid, bottom + small * 1.4, used, small, th.text, anchor="middle",
                           css="used-bytes"))
    else:
        shapes.append(Text(mid + small * 0.36, bottom + 4 + text_width(used, small), used, small,
                           th.text, rotate=True, css="used-bytes"))


def _gap_mark(shapes: list[Shape], column: GapColumn, mid: float, top: float, bottom: float,
              th: Theme, small: float) -> None:
    """A continuation mark: dashed rule broken by the skipped byte count, read upwards in
    text of size `small` (as large as the column holds)."""
    words = f"{column.skipped_bytes:,} B"
    half = text_width(words, small) / 2 + 4
    centre = (top + bottom) / 2
    shapes.append(Line(mid, top, mid, centre - half, th.muted, 1.0, dash=True, css="gap"))
    shapes.append(Line(mid, centre + half, mid, bottom, th.muted, 1.0, dash=True, css="gap"))
    shapes.append(Text(mid + small * 0.36, centre, words, small, th.muted, anchor="middle",
                       rotate=True, css="gap-bytes"))


def _tags(layout: GridLayout | None) -> list[tuple[float, str, str]]:
    """(lane row, words, kind) right of a panel: crossing and sharing lanes one by one, a run
    of inactive (or missing) lanes as one tag at its middle row."""
    if layout is None:
        return []
    tags: list[tuple[float, str, str]] = [
        (lane, "crosses", "crossing") if layout.crossing[lane] else
        (lane, "shares", "shared") for lane in range(WARP_SIZE)
        if layout.crossing[lane] or layout.shared[lane]]
    lane = 0
    while lane < WARP_SIZE:
        end = lane
        if not layout.active[lane]:
            missing = not layout.valid[lane]
            while (end + 1 < WARP_SIZE and not layout.active[end + 1]
                   and (not layout.valid[end + 1]) == missing):
                end += 1
            lanes = f"lane {lane}" if end == lane else f"lanes {lane}-{end}"
            tags.append(((lane + end) / 2, f"{lanes} {'no thread' if missing else 'inactive'}",
                         "missing" if missing else "inactive"))
        lane = end + 1
    return tags


def _draw_tags(shapes: list[Shape], layout: GridLayout | None, x: float, geo: Geometry,
               th: Theme) -> float:
    """Tags at x; returns the width they take (0 without tags)."""
    colours = {"crossing": th.crossing, "shared": th.shared}
    tags, size = _tags(layout), row_text(th)
    for row, words, kind in tags:
        shapes.append(Text(x, _row_baseline(geo, row, size), words, size,
                           colours.get(kind, th.muted), css=f"tag tag-{kind}"))
    return max((text_width(words, size) + 10 for _, words, _ in tags), default=0.0)


def _legend_entries(present: set[str], th: Theme) -> list[tuple[str, str, str]]:
    """Legend entries for what the panels show, the tint in the first lane colour shown;
    `present` holds the kinds drawn (lane kinds, 'others', 'wasted', 'inactive', 'gap',
    'line')."""
    lanes = [(colour, words) for kind, colour, words in (
        ("plain", th.plain, "bytes a lane uses"),
        ("crossing", th.crossing, "lane spans two sectors"),
        ("shared", th.shared, "bytes shared with another lane")) if kind in present]
    entries = [("box", colour, words) for colour, words in lanes]
    if lanes and "others" in present:
        entries.append(("box", mix(lanes[0][0], th.background, th.tint),
                        "bytes other lanes use"))
    if "wasted" in present:
        entries.append(("box", th.wasted, "fetched, no lane uses (wasted)"))
    if "inactive" in present:
        entries.append(("box", th.inactive, "inactive lane"))
    if "gap" in present:
        entries.append(("dash", th.muted, "untouched sectors skipped"))
    if "line" in present:
        entries.append(("rule", th.muted, "a 128-byte line starts"))
    return entries
