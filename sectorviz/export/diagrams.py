"""(pattern, DiagramSpec) -> Scene: the three diagram kinds, as pure functions of small values.

- grid: one execution of one instruction by one warp. Rows are lanes 0..31, columns the 32-byte
  sectors the warp touches in address order (a GapColumn becomes a narrow continuation mark with
  the bytes it skips). A touched cell is tinted (the whole sector is fetched) and the bytes the
  lane uses are drawn in full colour at their place inside the sector.
- warp: the first execution of every instruction of one warp, side by side, on shared lane rows.
- overview: the kernel strip, instructions x warps, coloured by sectors per request
  (`analyze(pattern, per_warp=True)`), warps binned when there are more than fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import Pattern, PatternError, analyze, warp_detail
from ..model.analysis import LaneExecution, kernel_for
from ..model.grid import GapColumn, GridLayout, SectorColumn, grid_layout
from .scene import Line, Rect, Scene, Shape, Text, text_width
from .themes import DEFAULT_THEME, Theme, mix, theme

KINDS = ("grid", "warp", "overview")

MARGIN = 24.0
ROW_H = 13.0  # one lane row
CELL_MIN, CELL_MAX = 10.0, 96.0  # width of one sector column
GAP_UNITS = 0.6  # width of a gap column, in sector columns
GRID_WIDTH = 900.0  # width the sector columns of a grid (or of all panels) aim to fill
PANEL_GAP = 28.0
STRIP_WIDTH = 700.0  # overview: width of the warp axis
STRIP_ROW = 30.0
MAX_BINS = 350  # overview: at most this many warp cells per instruction


@dataclass(frozen=True)
class DiagramSpec:
    """What to draw: `kind` (grid, warp, overview), 0-based `warp` (launch order),
    `instruction` and `execution` (loop iteration, grid only) indices, theme name and parts."""

    kind: str = "grid"
    warp: int = 0
    instruction: int = 0
    execution: int = 0
    theme: str = DEFAULT_THEME
    legend: bool = True
    caption: bool = True


def diagram_scene(pattern: Pattern, spec: DiagramSpec) -> Scene:
    """The scene of one diagram; PatternError (naming the option) for an index out of range."""
    kernel = kernel_for(pattern)
    if spec.kind not in KINDS:
        raise PatternError("--kind", f"unknown kind {spec.kind!r}; one of {', '.join(KINDS)}")
    if not 0 <= spec.warp < kernel.warps:
        raise PatternError("--warp", f"warp {spec.warp} outside [0, {kernel.warps})")
    if not 0 <= spec.instruction < len(kernel.instructions):
        raise PatternError("--instruction", f"instruction {spec.instruction} outside "
                                            f"[0, {len(kernel.instructions)})")
    th = theme(spec.theme)
    if spec.kind == "overview":
        return _overview(pattern, spec, th)
    detail = warp_detail(pattern, spec.warp)
    if spec.kind == "grid":
        runs = detail.executions[spec.instruction]
        if runs and not 0 <= spec.execution < len(runs):
            raise PatternError("--execution", f"execution {spec.execution} outside "
                                              f"[0, {len(runs)})")
        panels = [_panel(pattern, detail, spec.instruction, spec.execution, titled=False)]
    else:
        panels = [_panel(pattern, detail, k, 0, titled=True)
                  for k in range(len(kernel.instructions))]
    return _grid_scene(pattern, spec, th, panels)


# ------------------------------------------------------------------ grid and warp


@dataclass(frozen=True)
class _Panel:
    """One instruction's grid and the words around it."""

    name: str
    array: str
    layout: GridLayout | None  # None: no lane of the warp runs this instruction
    run: LaneExecution | None
    title: str | None  # above the panel (warp kind)
    iteration: str  # '' or 'k = 3 (iteration 4 of 64)'


def _panel(pattern: Pattern, detail, k: int, execution: int, titled: bool) -> _Panel:
    kernel = kernel_for(pattern)
    ins = kernel.instructions[k]
    runs = detail.executions[k]
    if not runs:
        return _Panel(ins.name, ins.array, None, None, ins.name if titled else None, "")
    run = runs[execution]
    layout = grid_layout(run, ins.width, pattern.sector_bytes,
                         kernel.arrays[ins.array].address0, detail.valid)
    iteration = ""
    if len(runs) > 1:
        values = ", ".join(f"{v} = {_lane_value(x, run.active)}" for v, x in run.iteration.items())
        iteration = f"{values} (iteration {execution + 1} of {len(runs)})"
    title = None
    if titled:
        title = ins.name if len(runs) == 1 else f"{ins.name}, first of {len(runs)}"
    return _Panel(ins.name, ins.array, layout, run, title, iteration)


def _lane_value(x: np.ndarray, active: np.ndarray) -> str:
    """A loop variable of one execution: its value if the active lanes agree, else a range."""
    x = np.asarray(x)
    if x.ndim == 0:
        return str(int(x))
    seen = x[active] if active.any() else x
    lo, hi = int(seen.min()), int(seen.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _ideal(useful: int, sector_bytes: int) -> int:
    return -(-useful // sector_bytes)


def _stats_line(runs: list[LaneExecution], sector_bytes: int) -> str:
    """sectors, ideal sectors and useful % of the drawn executions (caption and titles)."""
    sectors = sum(r.sectors for r in runs)
    useful = sum(r.useful_bytes for r in runs)
    ideal = sum(_ideal(r.useful_bytes, sector_bytes) for r in runs)
    pct = 100 * useful / (sectors * sector_bytes) if sectors else 0.0
    return (f"{sectors} sector{'s' * (sectors != 1)} (ideal {ideal}), useful {pct:.1f}% "
            f"({useful:,} B used of {sectors * sector_bytes:,} B fetched)")


def _lane_colour(layout: GridLayout, lane: int, th: Theme) -> tuple[str, str]:
    """(css class, colour) of a lane's cells: crossing wins over shared."""
    if layout.crossing[lane]:
        return "crossing", th.crossing
    if layout.shared[lane]:
        return "shared", th.shared
    return "plain", th.plain


def _col_width(cw: float, column) -> float:
    return cw if isinstance(column, SectorColumn) else max(cw * GAP_UNITS, 14.0)


def _panel_units(p: _Panel) -> float:
    if p.layout is None:
        return 8.0
    return sum(1.0 if isinstance(c, SectorColumn) else GAP_UNITS for c in p.layout.columns)


def _tags(layout: GridLayout | None) -> list[tuple[float, str, str]]:
    """(lane row, words, css) to the right of a panel: crossing and sharing lanes one by one,
    a run of inactive lanes as one tag at its middle row."""
    if layout is None:
        return []
    tags = []
    for lane in range(32):
        if layout.crossing[lane]:
            tags.append((lane, "crosses", "crossing"))
        elif layout.shared[lane]:
            tags.append((lane, "shares", "shared"))
    lane = 0
    while lane < 32:
        end = lane
        if not layout.active[lane]:
            missing = not layout.valid[lane]
            while end + 1 < 32 and not layout.active[end + 1] \
                    and (not layout.valid[end + 1]) == missing:
                end += 1
            lanes = f"lane {lane}" if end == lane else f"lanes {lane}-{end}"
            tags.append(((lane + end) / 2, f"{lanes} {'no thread' if missing else 'inactive'}",
                         "missing" if missing else "inactive"))
        lane = end + 1
    return tags


def _address_labels(p: _Panel) -> list[tuple[str, str]]:
    """(absolute address in hex, offset from the array's element 0 in bytes) per sector column."""
    if p.layout is None:
        return []
    return [(f"0x{c.address:x}", f"{c.relative:,}") for c in p.layout.columns
            if isinstance(c, SectorColumn)]


def _grid_scene(pattern: Pattern, spec: DiagramSpec, th: Theme, panels: list[_Panel]) -> Scene:
    sb = pattern.sector_bytes
    small, label = th.small_size, th.label_size
    cw = min(CELL_MAX, max(CELL_MIN, GRID_WIDTH / sum(_panel_units(p) for p in panels)))
    labels = [pair for p in panels for pair in _address_labels(p)]
    abs_w = max((text_width(a, small) for a, _ in labels), default=0.0)
    rel_w = max((text_width(r, small) for _, r in labels), default=0.0)
    horizontal = max(abs_w, rel_w) + 6 <= cw
    row_names = ["address", "used B"] + [f"{p.array}[0] +" for p in panels[:1]]
    left = MARGIN + label + 4 + max(text_width(t, small) for t in row_names + ["31"]) + 8

    shapes: list[Shape] = []
    y = MARGIN
    runs = [p.run for p in panels if p.run is not None]
    warp = spec.warp
    kernel = kernel_for(pattern)
    if spec.caption:
        if spec.kind == "grid":
            head = f"{pattern.name}: warp {warp}, {panels[0].name}"
            if panels[0].iteration:
                head += f", {panels[0].iteration}"
        else:
            head = f"{pattern.name}: warp {warp}, {len(kernel.instructions)} instructions"
        active = int(runs[0].active.sum()) if runs else 0
        line2 = (_stats_line(runs, sb) + f", {active} of 32 lanes active, {sb}-byte sectors"
                 if runs else f"no lane of warp {warp} runs this instruction")
        caption = f"{head}; {line2}"
        shapes.append(Text(MARGIN, y + th.title_size, head, th.title_size, th.text,
                           bold=True, css="caption title"))
        y += th.title_size * 1.35
        shapes.append(Text(MARGIN, y + label, line2, label, th.muted, css="caption stats"))
        y += label * 1.35 + 10
    else:
        caption = f"{pattern.name}: warp {warp}"
    if any(p.title for p in panels):
        y += label * 1.5
    title_y = y - 6
    head_h = (2 * small * 1.4 + 4) if horizontal else (abs_w + rel_w + 14)
    header_top = y
    body_top = header_top + head_h
    body_h = 32 * ROW_H
    body_bottom = body_top + body_h

    # header row names, lane numbers, lane axis name
    name_x = left - 8
    if horizontal:
        abs_y, rel_y = header_top + small * 1.1, header_top + small * 2.5
    else:
        abs_y, rel_y = header_top + abs_w, body_top - 6
    shapes.append(Text(name_x, abs_y - (0 if horizontal else abs_w / 2 - small / 2), "address",
                       small, th.muted, anchor="end", css="axis"))
    shapes.append(Text(name_x, rel_y - (0 if horizontal else rel_w / 2 - small / 2),
                       row_names[2], small, th.muted, anchor="end", css="axis"))
    shapes.append(Text(name_x, body_bottom + small * 1.4, "used B", small, th.muted,
                       anchor="end", css="axis"))
    shapes.append(Text(MARGIN + label, body_top + body_h / 2, "lane", label, th.muted,
                       anchor="middle", rotate=True, css="axis"))
    valid = next((p.layout.valid for p in panels if p.layout is not None), np.ones(32, bool))
    active_any = np.zeros(32, dtype=bool)
    for p in panels:
        if p.layout is not None:
            active_any |= p.layout.active
    for lane in range(32):
        ly = body_top + lane * ROW_H + ROW_H / 2 + small * 0.36
        colour = th.text if active_any[lane] else th.muted
        shapes.append(Text(name_x, ly, str(lane), small, colour, anchor="end", css="lane"))

    x = right = grid_right = left
    present: set[str] = set()
    titles = {p.name: f"{p.title}: " + (_stats_line([p.run], sb).split(" (")[0]
                                        if p.run is not None else "not run")
              for p in panels if p.title}
    for p in panels:
        if p.name in titles:
            shapes.append(Text(x, title_y, titles[p.name], label, th.text, bold=True,
                               css="panel-title"))
        width = _draw_panel(shapes, p, x, header_top, body_top, cw, horizontal,
                            (abs_y, rel_y), th, present)
        tags = _tags(p.layout)
        colours = {"crossing": th.crossing, "shared": th.shared}
        for row, words, css in tags:
            ly = body_top + row * ROW_H + ROW_H / 2 + small * 0.36
            shapes.append(Text(x + width + 5, ly, words, small, colours.get(css, th.muted),
                               css=f"tag tag-{css}"))
        tag_w = max((text_width(words, small) + 10 for _, words, _ in tags), default=0.0)
        grid_right = x + width
        right = x + max(width + tag_w, text_width(titles.get(p.name, ""), label))
        x = right + PANEL_GAP
    for k in (8, 16, 24):
        ry = body_top + k * ROW_H
        shapes.append(Line(left - 4, ry, grid_right, ry, th.rule, 0.75, css="lane-group"))
    if not (valid.all() and active_any.all()):
        present.add("inactive")
    y = body_bottom + small * 1.4 + 16
    width = max(right + MARGIN, MARGIN * 2 + text_width(caption.split("; ")[-1], label)
                if spec.caption else 0.0)
    if spec.caption:
        width = max(width, MARGIN * 2 + text_width(caption.split("; ")[0], th.title_size))
    if spec.legend:
        entries = [("box", mix(th.plain, th.background, th.tint), "sector the lane touches"),
                   ("box", th.plain, "bytes the lane uses")]
        if "crossing" in present:
            entries.append(("box", th.crossing, "lane spans two sectors"))
        if "shared" in present:
            entries.append(("box", th.shared, "bytes shared with another lane"))
        if "inactive" in present:
            entries.append(("box", th.inactive, "inactive lane"))
        if "gap" in present:
            entries.append(("dash", th.muted, "untouched sectors skipped"))
        y = _legend(shapes, entries, MARGIN, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 caption, tuple(shapes))


def _draw_panel(shapes: list[Shape], p: _Panel, x0: float, header_top: float,
                body_top: float, cw: float, horizontal: bool, label_y: tuple[float, float],
                th: Theme, present: set[str]) -> float:
    """Draw one panel's header, cells and footer from x0; returns its width."""
    small = th.small_size
    body_h = 32 * ROW_H
    body_bottom = body_top + body_h
    if p.layout is None:
        w = 8 * cw
        shapes.append(Rect(x0, body_top, w, body_h, th.inactive, css="not-run"))
        shapes.append(Text(x0 + w / 2 + small * 0.36, body_top + body_h / 2, "not run by this warp",
                           small, th.muted, anchor="middle", rotate=True, css="note"))
        return w
    layout = p.layout
    sb = layout.sector_bytes
    x = x0
    xs = []
    for column in layout.columns:
        w = _col_width(cw, column)
        xs.append(x)
        x += w
    width = x - x0
    for lane in range(32):
        if not layout.active[lane]:
            css = "inactive" if layout.valid[lane] else "inactive missing"
            shapes.append(Rect(x0, body_top + lane * ROW_H, width, ROW_H, th.inactive, css=css,
                               data=(("lane", str(lane)),)))
    j = 0
    for column, cx in zip(layout.columns, xs):
        if isinstance(column, GapColumn):
            present.add("gap")
            _gap_mark(shapes, column, cx, _col_width(cw, column), body_top, body_bottom, th)
            continue
        inner = cw - 1
        mid = cx + cw / 2
        shapes.append(Rect(cx + 0.5, body_top, inner, body_h, th.cell, css="sector",
                           data=(("sector", str(column.sector)),)))
        for lane in range(32):
            if layout.active[lane]:
                continue
            shapes.append(Rect(cx + 0.5, body_top + lane * ROW_H, inner, ROW_H, th.inactive,
                               css="inactive-cell"))
        for lane in range(32):
            lo, hi = int(layout.cell_lo[lane, j]), int(layout.cell_hi[lane, j])
            if hi <= lo:
                continue
            css, colour = _lane_colour(layout, lane, th)
            present.add(css)
            cy = body_top + lane * ROW_H + 1
            shapes.append(Rect(cx + 0.5, cy, inner, ROW_H - 2, mix(colour, th.background, th.tint),
                               css=f"hit {css}",
                               data=(("lane", str(lane)), ("sector", str(column.sector)),
                                     ("bytes", f"{lo}:{hi}"))))
            shapes.append(Rect(cx + 0.5 + inner * lo / sb, cy, inner * (hi - lo) / sb, ROW_H - 2,
                               colour, css=f"used {css}"))
        absolute, relative = f"0x{column.address:x}", f"{column.relative:,}"
        if horizontal:
            shapes.append(Text(mid, label_y[0], absolute, small, th.text, anchor="middle",
                               css="address"))
            shapes.append(Text(mid, label_y[1], relative, small, th.text, anchor="middle",
                               css="offset"))
        else:
            tx = mid + small * 0.36
            shapes.append(Text(tx, label_y[0], absolute, small, th.text, rotate=True,
                               css="address"))
            shapes.append(Text(tx, label_y[1], relative, small, th.text, rotate=True,
                               css="offset"))
        used = str(column.used_bytes)
        fits = text_width(used, small) + 2 <= cw
        shapes.append(Text(mid + (0 if fits else small * 0.36),
                           body_bottom + small * 1.4 if fits else body_bottom + 4 + text_width(used, small),
                           used, small, th.text,
                           anchor="middle" if fits else "start", rotate=not fits, css="used-bytes"))
        j += 1
    return width


def _gap_mark(shapes: list[Shape], column: GapColumn, x: float, w: float, top: float,
              bottom: float, th: Theme) -> None:
    """A continuation mark: dashed rule broken by the skipped byte count, read upwards."""
    small = th.small_size
    mid = x + w / 2
    text = f"{column.skipped_bytes:,} B"
    half = text_width(text, small) / 2 + 4
    centre = (top + bottom) / 2
    shapes.append(Line(mid, top, mid, centre - half, th.muted, 1.0, dash=True, css="gap"))
    shapes.append(Line(mid, centre + half, mid, bottom, th.muted, 1.0, dash=True, css="gap"))
    shapes.append(Text(mid + small * 0.36, centre, text, small, th.muted, anchor="middle",
                       rotate=True, css="gap-bytes"))


def _legend(shapes: list[Shape], entries: list[tuple[str, str, str]], x0: float, y: float,
            right: float, th: Theme) -> float:
    """Swatch-and-words entries flowing left to right; returns the y below the legend."""
    size = th.label_size
    x = x0
    for kind, colour, words in entries:
        w = 18 + 6 + text_width(words, size) + 18
        if x > x0 and x + w > right:
            x, y = x0, y + size * 1.8
        if kind == "box":
            shapes.append(Rect(x, y, 18, size, colour, css="legend-swatch"))
        else:
            shapes.append(Line(x + 9, y - 2, x + 9, y + size + 2, colour, 1.0, dash=True,
                               css="legend-swatch"))
        shapes.append(Text(x + 24, y + size * 0.85, words, size, th.text, css="legend"))
        x += w
    return y + size * 1.8


# ------------------------------------------------------------------ overview


RAMP_EDGES = (1, 2, 4, 8, 16, 32)  # ramp class i holds sectors per request in [e_i, e_i+1)


def _ramp_class(value: float) -> int:
    return sum(value >= e for e in RAMP_EDGES[1:])


def _overview(pattern: Pattern, spec: DiagramSpec, th: Theme) -> Scene:
    analysis = analyze(pattern, per_warp=True)
    sectors, requests = analysis.per_warp_sectors, analysis.per_warp_requests
    warps = analysis.warps
    bins = min(warps, MAX_BINS)
    edges = np.linspace(0, warps, bins + 1).round().astype(np.int64)
    label, small = th.label_size, th.small_size
    names = [s.name for s in analysis.instructions]
    left = MARGIN + max(text_width(n, label) for n in names) + 12
    stats = [f"{s.sectors_per_request:.2f} per request, ideal "
             f"{s.ideal_sectors / s.requests if s.requests else 0:.2f}"
             for s in analysis.instructions]
    right_w = max(text_width(s, small) for s in stats) + 12
    width = left + STRIP_WIDTH + right_w + MARGIN
    shapes: list[Shape] = []
    y = MARGIN
    t = analysis.totals
    head = f"{pattern.name}: {warps:,} warps, {len(names)} instructions"
    line2 = (f"{t.sectors:,} sectors (ideal {t.ideal_sectors:,}), useful "
             f"{100 * t.useful_fraction:.1f}%, {t.sectors_per_request:.2f} sectors per request")
    if spec.caption:
        shapes.append(Text(MARGIN, y + th.title_size, head, th.title_size, th.text, bold=True,
                           css="caption title"))
        y += th.title_size * 1.35
        shapes.append(Text(MARGIN, y + label, line2, label, th.muted, css="caption stats"))
        y += label * 1.35 + 14
        width = max(width, MARGIN * 2 + text_width(head, th.title_size),
                    MARGIN * 2 + text_width(line2, label))
    scale = STRIP_WIDTH / warps
    for k, name in enumerate(names):
        top = y + k * STRIP_ROW
        shapes.append(Text(left - 12, top + STRIP_ROW / 2 + label * 0.36, name, label, th.text,
                           anchor="end", css="instruction"))
        s = np.add.reduceat(sectors[k], edges[:-1])
        r = np.add.reduceat(requests[k].astype(np.int64), edges[:-1])
        for b in range(bins):
            lo, hi = int(edges[b]), int(edges[b + 1])
            x0, x1 = left + lo * scale, left + hi * scale
            overlap = 0.4 if b + 1 < bins else 0.0  # hides antialiasing seams between cells
            if r[b]:
                value = s[b] / r[b]
                colour, css = th.ramp[_ramp_class(value)], "bin"
                data = (("instruction", str(k)), ("warps", f"{lo}:{hi}"),
                        ("sectors-per-request", f"{value:.2f}"))
            else:
                colour, css = th.idle, "bin idle"
                data = (("instruction", str(k)), ("warps", f"{lo}:{hi}"))
            shapes.append(Rect(x0, top + 2, x1 - x0 + overlap, STRIP_ROW - 4, colour, css=css,
                               data=data))
        shapes.append(Text(left + STRIP_WIDTH + 8, top + STRIP_ROW / 2 + small * 0.36, stats[k],
                           small, th.muted, css="instruction-stats"))
    bottom = y + len(names) * STRIP_ROW
    ticks = sorted({0, warps // 4, warps // 2, 3 * warps // 4, warps - 1})
    for w in ticks:
        tx = left + (w + 0.5) * scale
        shapes.append(Line(tx, bottom, tx, bottom + 4, th.muted, 1.0, css="tick"))
        shapes.append(Text(tx, bottom + 5 + small, f"{w:,}", small, th.muted, anchor="middle",
                           css="tick-label"))
    mark = left + (spec.warp + 0.5) * scale
    shapes.append(Line(mark, y - 4, mark, bottom + 2, th.text, 1.5, css="selected-warp"))
    shapes.append(Text(mark, y - 6, f"warp {spec.warp}", small, th.text, anchor="middle",
                       css="selected-warp"))
    shapes.append(Text(left + STRIP_WIDTH / 2, bottom + 8 + 2.4 * small,
                       "warp (launch order)" + (f", {warps / bins:.1f} warps per cell"
                                                if bins < warps else ""),
                       small, th.muted, anchor="middle", css="axis"))
    y = bottom + 14 + 3.4 * small
    if spec.legend:
        entries = [("box", th.ramp[i], f"{lo}" + (f"-{RAMP_EDGES[i + 1] - 1}"
                                                  if i + 1 < len(RAMP_EDGES) and
                                                  RAMP_EDGES[i + 1] - 1 > lo else
                                                  "+" if i + 1 == len(RAMP_EDGES) else ""))
                   for i, lo in enumerate(RAMP_EDGES)]
        entries.append(("box", th.idle, "no request"))
        shapes.append(Text(MARGIN, y + label * 0.85, "sectors per request:", label, th.text,
                           css="legend"))
        y = _legend(shapes, entries, MARGIN + text_width("sectors per request:", label) + 10, y,
                    width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {line2}", tuple(shapes))
