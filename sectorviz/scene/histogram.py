"""One global instruction over all warps: requests (bar height) by sectors per request (bar),
so uneven warps (a partial last warp, divergent loops) show as bars apart from the main one.

Bars come from Analysis.histograms. The ideal is per warp (Analysis.per_warp_ideal over
per_warp_requests: the whole sectors each warp's used bytes need, per request): a dashed line
at the typical one (the ideal of the most requests) and, where warps differ in ideal (boundary
warps), a shaded band over the bars from the lowest warp's ideal to the highest's. Each bar is
coloured by its waste class against the typical ideal (overview.waste_classes). Without
per-warp counts the instruction's average ideal stands for every warp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.results import Analysis
from .palette import WASTE_LABELS, Theme, mix, waste_classes
from .parts import MARGIN, caption, caption_width, legend
from .shapes import Line, Rect, Scene, Shape, Text, text_width
from .sheet import ideal_per_request
from .spec import DiagramSpec
from .words import counted

PLOT_WIDTH = 600.0  # the sectors-per-request axis at least (as wide as the caption), units
PLOT_HEIGHT = 240.0  # the tallest bar, units
AXIS_LEFT = 64.0  # room for the request counts left of the plot
BAR = 0.8  # a bar's width, in sectors per request (the slot between bars is 1)


@dataclass(frozen=True)
class HistogramBars:
    """Bars of one instruction: sectors[i] sectors per request, made by requests[i] requests
    (only counts with a request); waste[i] its class against `ideal`, the typical warp's
    ideal sectors per request; `low` and `high` the lowest and highest warp's (equal to
    `ideal` when every warp has the same)."""

    sectors: np.ndarray  # (bars,) int
    requests: np.ndarray  # (bars,) int
    waste: np.ndarray  # (bars,) int, index into palette.WASTE_LABELS
    ideal: float
    low: float
    high: float

    @property
    def band(self) -> tuple[float, float] | None:
        """The shaded ideal band in sectors per request (bar centres at whole numbers): from
        the left edge of a bar at `low` to the right edge of one at `high`; None when every
        warp has one ideal."""
        return None if self.low == self.high else (self.low - BAR / 2, self.high + BAR / 2)

    @property
    def slots(self) -> int:
        """Slots of the sectors-per-request axis: 0 to the largest bar or ideal, one each."""
        top = int(self.sectors.max()) if len(self.sectors) else 0
        return max(top, math.ceil(self.high)) + 1

    @property
    def tallest(self) -> int:
        """The most requests of one bar (1 without bars): the top of the requests axis,
        which is labelled only at 0 and here (whole requests)."""
        return int(self.requests.max()) if len(self.requests) else 1

    def ticks(self) -> range:
        """The labelled sectors-per-request values: every slot, or a step giving at most 16."""
        return range(0, self.slots, max(1, math.ceil(self.slots / 16)))

    def ideal_words(self) -> str:
        """'ideal 4' or 'ideal 4, warps 1 to 4' (sectors per request)."""
        words = f"ideal {self.ideal:.4g}"
        return words if self.band is None else (f"{words}, warps {self.low:.4g} to "
                                                f"{self.high:.4g}")


def band_colour(th: Theme) -> str:
    """The shaded ideal band: a little of the text colour over the background."""
    return mix(th.text, th.background, 0.07)


def warp_ideals(analysis: Analysis, instruction: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(ideal sectors per request, requests) of each warp that ran the instruction, rounded
    to 0.01 sectors; None without per-warp counts."""
    if analysis.per_warp_ideal is None or analysis.per_warp_requests is None:
        return None
    requests = analysis.per_warp_requests[instruction].astype(np.int64)
    ran = requests > 0
    ideal = np.round(analysis.per_warp_ideal[instruction][ran] / requests[ran], 2)
    return ideal, requests[ran]


def histogram_bars(analysis: Analysis, instruction: int) -> HistogramBars:
    """Analysis.histograms[instruction] -> the bars with a request, classed against the
    typical warp's ideal sectors per request (a bar of 0 sectors is ideal)."""
    counts = analysis.histograms[instruction]
    sectors = np.flatnonzero(counts)
    ideal = low = high = ideal_per_request(analysis.instructions[instruction])
    per_warp = warp_ideals(analysis, instruction)
    if per_warp is not None and len(per_warp[0]):
        values, at = np.unique(per_warp[0], return_inverse=True)
        ideal = float(values[np.argmax(np.bincount(at, weights=per_warp[1]))])
        low, high = float(values[0]), float(values[-1])
    ratio = sectors / ideal if ideal else np.ones(len(sectors))
    return HistogramBars(sectors, counts[sectors], waste_classes(np.maximum(ratio, 1.0)), ideal,
                         low, high)


def histogram_scene(analysis: Analysis, spec: DiagramSpec, th: Theme) -> Scene:
    """The bars of spec.instruction, x: sectors per request 0..max, y: requests."""
    stats = analysis.instructions[spec.instruction]
    bars = histogram_bars(analysis, spec.instruction)
    small = th.small_size
    head = (f"{analysis.pattern_name}: {stats.name}, sectors per request over "
            f"{counted(analysis.warps, 'warp')}")
    words = (f"{counted(stats.requests, 'request')}, {stats.sectors_per_request:.2f} sectors per "
             f"request ({bars.ideal_words()}), min {stats.min}, mode {stats.mode}, max {stats.max}")
    width = 2 * MARGIN + AXIS_LEFT + PLOT_WIDTH
    shapes: list[Shape] = []
    y = MARGIN
    if spec.caption:
        y = caption(shapes, head, words, y, th)
        width = max(width, caption_width(head, words, th))
    plot_w = width - 2 * MARGIN - AXIS_LEFT  # the plot widens with a wider caption
    top, left = y + 3.4 * small, MARGIN + AXIS_LEFT
    bottom = top + PLOT_HEIGHT
    slot = plot_w / bars.slots
    tallest = bars.tallest
    if bars.band is not None:
        lo, hi = bars.band
        shapes.append(Rect(left + (lo + 0.5) * slot, top, (hi - lo) * slot, PLOT_HEIGHT,
                           band_colour(th), css="ideal-band",
                           data=(("low", f"{bars.low:g}"), ("high", f"{bars.high:g}"))))
    ideal_x = left + (bars.ideal + 0.5) * slot  # under the bars, over the band
    shapes.append(Line(ideal_x, top, ideal_x, bottom, th.text, 1.0, dash=True,
                       css="ideal"))
    half = text_width(bars.ideal_words(), small) / 2  # the label stays over the plot
    shapes.append(Text(min(max(ideal_x, left + half), left + plot_w - half), top - 2.4 * small,
                       bars.ideal_words(), small, th.text, anchor="middle", css="ideal"))
    for s, r, w in zip(bars.sectors.tolist(), bars.requests.tolist(), bars.waste.tolist()):
        h = PLOT_HEIGHT * r / tallest
        shapes.append(Rect(left + (s + 0.5 - BAR / 2) * slot, bottom - h, slot * BAR, h,
                           th.waste[w],
                           css="bar", data=(("sectors", str(s)), ("requests", str(r)),
                                            ("waste", WASTE_LABELS[w]))))
        shapes.append(Text(left + (s + 0.5) * slot, bottom - h - 3, f"{r:,}", small, th.text,
                           anchor="middle", css="bar-label"))
    shapes.append(Line(left, bottom, left + plot_w, bottom, th.muted, 1.0, css="axis"))
    for s in bars.ticks():
        x = left + (s + 0.5) * slot
        shapes.append(Line(x, bottom, x, bottom + 4, th.muted, 1.0, css="tick"))
        shapes.append(Text(x, bottom + 5 + small, str(s), small, th.muted, anchor="middle",
                           css="tick-label"))
    shapes.append(Text(left - 8, top + small * 0.36, f"{tallest:,}", small, th.muted,
                       anchor="end", css="tick-label"))
    shapes.append(Text(left - 8, bottom, "0", small, th.muted, anchor="end", css="tick-label"))
    shapes.append(Text(left - 8, top + PLOT_HEIGHT / 2, "requests", small, th.muted,
                       anchor="end", css="axis"))
    shapes.append(Text(left + plot_w / 2, bottom + 8 + 2.4 * small, "sectors per request",
                       small, th.muted, anchor="middle", css="axis"))
    y = bottom + 14 + 3.4 * small
    if spec.legend:
        entries = [("box", c, w) for c, w in zip(th.waste, WASTE_LABELS)]
        entries.append(("dash", th.text, "ideal sectors per request (typical warp)"))
        if bars.band is not None:
            entries.append(("box", band_colour(th),
                            "range of the warps' ideals (boundary warps)"))
        y = legend(shapes, entries, MARGIN, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {words}", tuple(shapes))
