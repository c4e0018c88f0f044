"""The sweep chart: one metric against a parameter, one line per instruction plus the total,
each with its ideal dashed; a second parameter gives one panel per value. 16:9 (1280 x 720
units, a 1920 x 1080 PNG at scale 1.5), in any theme.

Input is what `sectorviz sweep --json` prints in "points": {"params": {name: value},
"report": a `report --json` document} or {"params", "error"}. A failed point is a gap in
every line, marked with a cross on the axis (its reason is in the table).

Metrics (what each line's value and ideal are, from the report's figures):
- sectors_per_request: sectors / requests; ideal: ideal sectors / requests;
- useful: useful bytes / sector bytes fetched, in %; ideal: useful bytes / ideal sector bytes;
- sector_bytes: sectors x sector size; ideal: ideal sectors x sector size;
- wavefronts (the shared instructions and their total): wavefronts; ideal: ideal wavefronts;
- dram_bytes: distinct sectors x sector size (each sector crossing once); the total is the
  L2 model's DRAM read + write bytes when the pattern sets a machine; no ideal.
The sector metrics draw the global instructions, wavefronts the shared ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from .palette import Theme
from .parts import MARGIN, caption, legend
from .shapes import Line, Rect, Scene, Shape, Text, text_width
from .words import counted

Doc = dict[str, Any]  # a JSON document: a `report --json` one, or a part of it

WIDTH, HEIGHT = 1280.0, 720.0  # 16:9, units
AXIS_LEFT = 64.0  # room for the value ticks left of a panel
AXIS_BELOW = 44.0  # room for the parameter ticks and name below a panel
PANEL_GAP = 28.0  # between panels
MARKER = 5.0  # a point's square, units
TAG_ADVANCE = 0.9  # a line's tag (1, 2, T) at its end, side by side where lines meet: font sizes
MAX_TICKS = 12  # labelled parameter values per panel at most
MAX_STEPS = 5  # value-axis steps at most
HEADROOM = 1.08  # the value axis reaches this much above the largest value
SERIES_COLOURS = {  # per theme; lines also carry their number, so print needs no hue
    "light": ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"),
    "dark": ("#56b4e9", "#e69f00", "#009e73", "#e08fc0", "#f0e442", "#0072b2"),
    "print": ("#555555", "#888888", "#333333", "#aaaaaa", "#666666", "#999999"),
}

Figure = float | None


@dataclass(frozen=True)
class Series:
    """One line: `name` (an instruction's, or 'total'), its value and ideal at each point
    (None where the point failed or has no such instruction)."""

    name: str
    values: tuple[Figure, ...]
    ideals: tuple[Figure, ...]


@dataclass(frozen=True)
class Metric:
    label: str  # the value axis, with its unit
    shared: bool  # reads the shared instructions (wavefronts), not the global ones
    value: Callable[[Doc], Figure]  # an instruction's (or the totals') figures -> value
    ideal: Callable[[Doc], Figure]


def _per(a: str, b: str, scale: float = 1.0) -> Callable[[Doc], Figure]:
    """figures -> scale x figures[a] / figures[b] (None when b is 0)."""
    return lambda s: scale * s[a] / s[b] if s[b] else None


def _times(a: str, b: str) -> Callable[[Doc], Figure]:
    return lambda s: s[a] * s[b]


def _useful_ideal(s: Doc) -> Figure:
    return 100.0 * s["useful_bytes"] / (s["ideal_sectors"] * s["sector_size"]) \
        if s["ideal_sectors"] else None


METRICS = {
    "sectors_per_request": Metric("sectors per request", False,
                                  _per("sectors", "requests"), _per("ideal_sectors", "requests")),
    "useful": Metric("useful bytes (% of the sector bytes)", False,
                     lambda s: 100.0 * s["useful_fraction"], _useful_ideal),
    "sector_bytes": Metric("sector bytes (B)", False, lambda s: s["sector_bytes"],
                           _times("ideal_sectors", "sector_size")),
    "wavefronts": Metric("shared-memory wavefronts", True, lambda s: s["wavefronts"],
                         lambda s: s["ideal_wavefronts"]),
    "dram_bytes": Metric("DRAM bytes (B), each distinct sector once", False,
                         _times("unique_sectors", "sector_size"), lambda s: None),
}
DEFAULT_METRIC = "sectors_per_request"


def _lines_of(report: Doc, metric: Metric) -> dict[str, tuple[Figure, Figure]]:
    """One report -> {line name: (value, ideal)}: its instructions, then 'total'."""
    rows = report["shared"] if metric.shared else report["instructions"]
    out = {s["name"]: (metric.value(s), metric.ideal(s)) for s in rows}
    totals = report["shared_totals"] if metric.shared else report["totals"]
    if totals is not None:
        out["total"] = (metric.value(totals), metric.ideal(totals))
    if metric is METRICS["dram_bytes"] and "cache" in report:
        cache = report["cache"]
        out["total"] = (cache["dram_read_bytes"] + cache["dram_write_bytes"], None)
    return out


def metric_series(points: list[Doc], metric: str) -> list[Series]:
    """The lines of `metric` over the points, in the order the instructions first appear,
    'total' last."""
    per_point = [_lines_of(p["report"], METRICS[metric]) if "report" in p else {}
                 for p in points]
    names = list(dict.fromkeys(n for lines in per_point for n in lines if n != "total"))
    names += ["total"] * any("total" in lines for lines in per_point)
    return [Series(n, tuple(lines.get(n, (None, None))[0] for lines in per_point),
                   tuple(lines.get(n, (None, None))[1] for lines in per_point)) for n in names]


def nice_top(value: float) -> tuple[float, float]:
    """The value axis for data up to `value`: (top, tick step), the step the smallest of 1,
    2, 2.5 or 5 x 10^k that reaches `value` in at most MAX_STEPS steps."""
    if value <= 0:
        return 1.0, 0.25
    power = 10 ** math.floor(math.log10(value / MAX_STEPS))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if value / (m * power) <= MAX_STEPS)
    return step * math.ceil(value / step - 1e-9), step


def tick_text(v: float) -> str:
    """A tick value in few characters: 4, 0.25, 12k, 1.5M, 2G."""
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= size:
            return f"{v / size:.3g}{suffix}"
    return f"{v:.3g}"


def labelled_points(xs: list[float], series: list[Series], px: Callable[[float], float],
                    size: float) -> set[int]:
    """The indices of the parameter values that get a tick label: the first and last, then
    each line's lowest and highest points (ties included: the values a reader looks for),
    then every
    k-th value (at most MAX_TICKS in all), each kept only where its label (at `size`) does
    not touch one already kept (x from `px`, in units)."""
    every = max(1, math.ceil(len(xs) / MAX_TICKS))
    extremes = [j for s in series for pick in (min, max) for j in _extreme_points(s.values, pick)]
    kept: list[tuple[float, float]] = []  # (left, right) of each kept label
    chosen: set[int] = set()
    for j in dict.fromkeys([0, len(xs) - 1, *extremes, *range(0, len(xs), every)]):
        half = text_width(f"{xs[j]:,}", size) / 2 + size / 2
        x = px(xs[j])
        if all(x + half <= a or x - half >= b for a, b in kept):
            kept.append((x - half, x + half))
            chosen.add(j)
    return chosen


def _extreme_points(values: tuple[float | None, ...],
                    pick: Callable[[list[float]], float]) -> list[int]:
    """Indices where a line takes its `pick` (min or max) value, every tie; none for a line
    without values or where it holds at over a quarter of the points (nothing stands out)."""
    present = [v for v in values if v is not None]
    ties = [j for j, v in enumerate(values) if present and v == pick(present)]
    return ties if len(ties) <= max(1, len(values) // 4) else []


def _panel_grid(panels: int) -> tuple[int, int]:
    """(columns, rows) for `panels` panels on a 16:9 canvas."""
    cols = min(panels, max(1, math.ceil(math.sqrt(panels * 16 / 9))))
    return cols, math.ceil(panels / cols)


def series_colour(i: int, name: str, th: Theme) -> str:
    """Line i's colour: the text colour for the total, else the theme's i-th series colour."""
    if name == "total":
        return th.text
    colours = SERIES_COLOURS.get(th.name, SERIES_COLOURS["light"])
    return colours[i % len(colours)]


def series_tag(i: int, name: str) -> str:
    """The short label at a line's end and in the legend: 1, 2, ... or T for the total."""
    return "T" if name == "total" else str(i + 1)


def sweep_chart_scene(title: str, params: list[str], points: list[Doc], metric: str,
                      th: Theme) -> Scene:
    """The chart of `metric` over the points of a sweep of one or two `params` (the first
    along x, the second one panel per value); ValueError for more than two."""
    if not 1 <= len(params) <= 2:
        raise ValueError(f"the chart draws one or two parameters, not {len(params)}; "
                         "write the table (.csv, .md) or --json for more")
    m = METRICS[metric]
    series = metric_series(points, metric)
    failed = sum("error" in p for p in points)
    head = f"{title}: {m.label} by {' and '.join(params)}"
    words = f"{counted(len(points), 'point')}, {failed:,} failed" if failed else \
        counted(len(points), "point")
    shapes: list[Shape] = []
    y = caption(shapes, head, words, MARGIN, th, WIDTH - 2 * MARGIN)
    entries = [("rule", series_colour(i, s.name, th), f"{series_tag(i, s.name)}  {s.name}")
               for i, s in enumerate(series)]
    entries.append(("dash", th.muted, "ideal of each line (same colour)"))
    if failed:
        entries.append(("box", th.background, "x  failed point (the reason is in the table)"))
    y = legend(shapes, entries, MARGIN, y, WIDTH - MARGIN, th) + 6
    figures = [v for s in series for v in (*s.values, *s.ideals) if v is not None]
    top, step = nice_top(HEADROOM * max(figures, default=0.0))
    panel_values = list(dict.fromkeys(p["params"][params[1]] for p in points)) \
        if len(params) == 2 else [None]
    cols, rows = _panel_grid(len(panel_values))
    cell_w = (WIDTH - 2 * MARGIN + PANEL_GAP) / cols
    cell_h = (HEIGHT - MARGIN - y + PANEL_GAP) / rows
    for k, value in enumerate(panel_values):
        at = sorted((i for i, p in enumerate(points)
                     if value is None or p["params"][params[1]] == value),
                    key=lambda i: points[i]["params"][params[0]])
        box = (MARGIN + (k % cols) * cell_w + AXIS_LEFT, y + (k // cols) * cell_h + 1.6 *
               th.small_size, cell_w - PANEL_GAP - AXIS_LEFT,
               cell_h - PANEL_GAP - AXIS_BELOW - 1.6 * th.small_size)
        name = None if value is None else f"{params[1]} = {value}"
        _panel(shapes, box, name, params[0], [points[i] for i in at],
               [Series(s.name, tuple(s.values[i] for i in at), tuple(s.ideals[i] for i in at))
                for s in series], (top, step), m.label, th)
    return Scene(WIDTH, HEIGHT, th.background, th.font_family, f"{head}; {words}", tuple(shapes))


def _panel(shapes: list[Shape], box: tuple[float, float, float, float], name: str | None,
           param: str, points: list[Doc], series: list[Series], axis: tuple[float, float],
           label: str, th: Theme) -> None:
    """One panel: value axis 0..top at the left, `param`'s values along the bottom, the lines
    (a gap at each failed point, a cross on the axis there) and their ideals dashed."""
    left, top_y, w, h = box
    w -= MARKER + TAG_ADVANCE * th.small_size * len(series)  # room for the tags at the right
    top, step = axis
    xs = [p["params"][param] for p in points]
    lo, hi = min(xs), max(xs)

    def px(v: float) -> float:
        return left + w / 2 if hi == lo else left + w * (v - lo) / (hi - lo)

    def py(v: float) -> float:
        return top_y + h - h * v / top

    small = th.small_size
    if name is not None:
        shapes.append(Text(left + w / 2, top_y - 0.6 * small, name, th.label_size, th.text,
                           anchor="middle", bold=True, css="panel-title"))
    for i in range(round(top / step) + 1):
        v = i * step
        shapes.append(Line(left, py(v), left + w, py(v), th.rule if i else th.muted, 0.5 if i
                           else 1.0, css="grid" if i else "axis"))
        shapes.append(Text(left - 6, py(v) + small * 0.36, tick_text(v), small, th.muted,
                           anchor="end", css="tick-label"))
    shapes.append(Text(left - AXIS_LEFT + small, top_y + h / 2, label, small, th.muted,
                       anchor="middle", rotate=True, css="axis"))
    labelled = labelled_points(xs, series, px, small)
    for j, v in enumerate(xs):
        shapes.append(Line(px(v), py(0), px(v), py(0) + 4, th.muted, 1.0, css="tick"))
        if j in labelled:
            shapes.append(Text(px(v), py(0) + 5 + small, f"{v:,}", small, th.muted,
                               anchor="middle", css="tick-label"))
        if "error" in points[j]:
            shapes.append(Text(px(v), py(0) - 3, "x", th.label_size, th.muted, anchor="middle",
                               bold=True, css="failed"))
    shapes.append(Text(left + w / 2, py(0) + 8 + 2.4 * small, param, small, th.muted,
                       anchor="middle", css="axis"))
    tags: dict[int, int] = {}  # tags already at a height (rounded): the next goes right of them
    for i, s in enumerate(series):
        colour = series_colour(i, s.name, th)
        width = 2.0 if s.name == "total" else 1.5
        _polyline(shapes, xs, s.ideals, px, py, colour, 1.0, True, "ideal")
        _polyline(shapes, xs, s.values, px, py, colour, width, False, "line")
        for v, f in zip(xs, s.values):
            if f is not None:
                shapes.append(Rect(px(v) - MARKER / 2, py(f) - MARKER / 2, MARKER, MARKER,
                                   colour, css="point",
                                   data=(("series", s.name), (param, str(v)),
                                         ("value", f"{f:g}"))))
        last = next((j for j in range(len(xs) - 1, -1, -1) if s.values[j] is not None), None)
        if last is not None:
            value = s.values[last]
            assert value is not None  # `last` is the last point with a value
            x, y = px(xs[last]), py(value)
            at = round(y / small)
            shapes.append(Text(x + MARKER + tags.get(at, 0) * small * TAG_ADVANCE, y - MARKER,
                               series_tag(i, s.name), small, colour, bold=True, css="series-tag"))
            tags[at] = tags.get(at, 0) + 1


def _polyline(shapes: list[Shape], xs: list[int], ys: tuple[Figure, ...],
              px: Callable[[float], float], py: Callable[[float], float], colour: str,
              width: float, dash: bool, css: str) -> None:
    """Segments between neighbouring points that both have a value (a gap elsewhere)."""
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if y0 is not None and y1 is not None:
            shapes.append(Line(px(x0), py(y0), px(x1), py(y1), colour, width, dash, css))

