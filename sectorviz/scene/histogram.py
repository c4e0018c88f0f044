"""One global instruction over all warps: requests (bar height) by sectors per request (bar),
so uneven warps (a partial last warp, divergent loops) show as bars apart from the main one.

Bars come from Analysis.histograms; each is coloured by its waste class (its sectors over the
instruction's ideal sectors per request, overview.waste_classes), and the ideal is a dashed line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import Analysis, Pattern
from .overview import per_warp_analysis, waste_classes
from .palette import WASTE_LABELS, Theme
from .parts import MARGIN, caption, caption_width, legend
from .shapes import Line, Rect, Scene, Shape, Text
from .sheet import ideal_per_request
from .spec import DiagramSpec
from .words import counted

PLOT_WIDTH = 600.0  # the sectors-per-request axis, units
PLOT_HEIGHT = 240.0  # the tallest bar, units
AXIS_LEFT = 64.0  # room for the request counts left of the plot


@dataclass(frozen=True)
class HistogramBars:
    """Bars of one instruction: sectors[i] sectors per request, made by requests[i] requests
    (only counts with a request); waste[i] its class; ideal: ideal sectors per request."""

    sectors: np.ndarray  # (bars,) int
    requests: np.ndarray  # (bars,) int
    waste: np.ndarray  # (bars,) int, index into palette.WASTE_LABELS
    ideal: float


def histogram_bars(analysis: Analysis, instruction: int) -> HistogramBars:
    """Analysis.histograms[instruction] -> the bars with a request, classed against the
    instruction's ideal sectors per request (a bar of 0 sectors is ideal)."""
    counts = analysis.histograms[instruction]
    sectors = np.flatnonzero(counts)
    ideal = ideal_per_request(analysis.instructions[instruction])
    ratio = sectors / ideal if ideal else np.ones(len(sectors))
    return HistogramBars(sectors, counts[sectors], waste_classes(np.maximum(ratio, 1.0)), ideal)


def histogram_scene(pattern: Pattern, spec: DiagramSpec, th: Theme) -> Scene:
    """The bars of spec.instruction, x: sectors per request 0..max, y: requests."""
    analysis = per_warp_analysis(pattern)
    stats = analysis.instructions[spec.instruction]
    bars = histogram_bars(analysis, spec.instruction)
    label, small = th.label_size, th.small_size
    head = (f"{pattern.name}: {stats.name}, sectors per request over "
            f"{counted(analysis.warps, 'warp')}")
    words = (f"{counted(stats.requests, 'request')}, {stats.sectors_per_request:.2f} sectors per "
             "request "
             f"(ideal {bars.ideal:.2f}), min {stats.min}, mode {stats.mode}, max {stats.max}")
    width = 2 * MARGIN + AXIS_LEFT + PLOT_WIDTH
    shapes: list[Shape] = []
    y = MARGIN
    if spec.caption:
        y = caption(shapes, head, words, y, th)
        width = max(width, caption_width(head, words, th))
    top, left = y + 2.6 * small, MARGIN + AXIS_LEFT
    bottom = top + PLOT_HEIGHT
    slots = max(int(bars.sectors.max()) if len(bars.sectors) else 0, math.ceil(bars.ideal)) + 1
    slot = PLOT_WIDTH / slots
    tallest = int(bars.requests.max()) if len(bars.requests) else 1
    for s, r, w in zip(bars.sectors.tolist(), bars.requests.tolist(), bars.waste.tolist()):
        h = PLOT_HEIGHT * r / tallest
        shapes.append(Rect(left + s * slot + slot * 0.1, bottom - h, slot * 0.8, h, th.waste[w],
                           css="bar", data=(("sectors", str(s)), ("requests", str(r)),
                                            ("waste", WASTE_LABELS[w]))))
        shapes.append(Text(left + (s + 0.5) * slot, bottom - h - 3, f"{r:,}", small, th.text,
                           anchor="middle", css="bar-label"))
    shapes.append(Line(left, bottom, left + PLOT_WIDTH, bottom, th.muted, 1.0, css="axis"))
    step = max(1, math.ceil(slots / 16))
    for s in range(0, slots, step):
        x = left + (s + 0.5) * slot
        shapes.append(Line(x, bottom, x, bottom + 4, th.muted, 1.0, css="tick"))
        shapes.append(Text(x, bottom + 5 + small, str(s), small, th.muted, anchor="middle",
                           css="tick-label"))
    shapes.append(Text(left - 8, top + small * 0.36, f"{tallest:,}", small, th.muted,
                       anchor="end", css="tick-label"))
    shapes.append(Text(left - 8, bottom, "0", small, th.muted, anchor="end", css="tick-label"))
    shapes.append(Text(left - 8, top + PLOT_HEIGHT / 2, "requests", small, th.muted,
                       anchor="end", css="axis"))
    ideal_x = left + (bars.ideal + 0.5) * slot
    shapes.append(Line(ideal_x, top - 1.4 * small, ideal_x, bottom, th.text, 1.0, dash=True,
                       css="ideal"))
    shapes.append(Text(ideal_x, top - 1.6 * small, f"ideal {bars.ideal:.2f}", small, th.text,
                       anchor="middle", css="ideal"))
    shapes.append(Text(left + PLOT_WIDTH / 2, bottom + 8 + 2.4 * small, "sectors per request",
                       small, th.muted, anchor="middle", css="axis"))
    y = bottom + 14 + 3.4 * small
    if spec.legend:
        entries = [("box", c, w) for c, w in zip(th.waste, WASTE_LABELS)]
        entries.append(("dash", th.text, "ideal sectors per request"))
        y = legend(shapes, entries, MARGIN, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {words}", tuple(shapes))
