"""The kernel overview strip: instructions (rows) x warps in launch order (columns), each cell
coloured by the sectors per request of its warps (`analyze(pattern, per_warp=True)`).

With more warps than MAX_BINS, consecutive warps share a cell and its value is their sectors
over their requests. Colour classes are whole numbers of sectors (1, 2, ... 6+) when no cell
needs more than 6, else powers of two (1, 2-3, 4-7, ... 32+). Warps without a request are idle.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..model import Analysis, Pattern, analyze
from .parts import MARGIN, caption, caption_width, legend
from .scene import Line, Rect, Scene, Shape, Text, text_width
from .spec import DiagramSpec
from .themes import Theme

STRIP_WIDTH = 700.0  # the warp axis
STRIP_ROW = 30.0  # one instruction
MAX_BINS = 350  # at most this many cells per instruction
FINE_EDGES = (1, 2, 3, 4, 5, 6)
COARSE_EDGES = (1, 2, 4, 8, 16, 32)
SEAM = 0.4  # cells overlap this much so antialiasing leaves no hairline between them


def ramp_edges(values: np.ndarray) -> tuple[int, ...]:
    """Lower edges of the colour classes for these cell values: class i is [e_i, e_i+1)."""
    return FINE_EDGES if values.size == 0 or values.max() < FINE_EDGES[-1] + 1 else COARSE_EDGES


def ramp_labels(edges: tuple[int, ...]) -> list[str]:
    """'1', '2-3', ..., '32+': the whole numbers of sectors each class holds."""
    labels = [str(lo) if hi - 1 == lo else f"{lo}-{hi - 1}" for lo, hi in zip(edges, edges[1:])]
    return labels + [f"{edges[-1]}+"]


@lru_cache(maxsize=4)
def per_warp_analysis(pattern: Pattern) -> Analysis:
    """analyze(pattern, per_warp=True), kept for the next theme or warp of the same pattern."""
    return analyze(pattern, per_warp=True)


def overview_scene(pattern: Pattern, spec: DiagramSpec, th: Theme) -> Scene:
    """The strip, with spec.warp marked."""
    analysis = per_warp_analysis(pattern)
    warps = analysis.warps
    bins = min(warps, MAX_BINS)
    edges = np.linspace(0, warps, bins + 1).round().astype(np.int64)
    cells = [(np.add.reduceat(s, edges[:-1]), np.add.reduceat(r.astype(np.int64), edges[:-1]))
             for s, r in zip(analysis.per_warp_sectors, analysis.per_warp_requests)]
    ramp = ramp_edges(np.concatenate([s[r > 0] / r[r > 0] for s, r in cells]))
    label, small = th.label_size, th.small_size
    names = [s.name for s in analysis.instructions]
    notes = [f"{s.sectors_per_request:.2f} per request, ideal "
             f"{s.ideal_sectors / s.requests if s.requests else 0:.2f}"
             for s in analysis.instructions]
    left = MARGIN + max(text_width(n, label) for n in names) + 12
    t = analysis.totals
    head = (f"{pattern.name}: {warps:,} warp{'s' * (warps != 1)}, {len(names)} "
            f"instruction{'s' * (len(names) != 1)}")
    stats = (f"{t.sectors:,} sectors (ideal {t.ideal_sectors:,}), useful "
             f"{100 * t.useful_fraction:.1f}%, {t.sectors_per_request:.2f} sectors per request")
    width = left + STRIP_WIDTH + 12 + max(text_width(n, small) for n in notes) + MARGIN
    shapes: list[Shape] = []
    y = MARGIN
    if spec.caption:
        y = caption(shapes, head, stats, y, th)
        width = max(width, caption_width(head, stats, th))
    y += 12 + small  # room for the selected-warp label
    scale = STRIP_WIDTH / warps
    for k, (name, note, (s, r)) in enumerate(zip(names, notes, cells)):
        top = y + k * STRIP_ROW
        mid = top + STRIP_ROW / 2
        shapes.append(Text(left - 12, mid + label * 0.36, name, label, th.text, anchor="end",
                           css="instruction"))
        for b in range(bins):
            lo, hi = int(edges[b]), int(edges[b + 1])
            data = (("instruction", str(k)), ("warps", f"{lo}:{hi}"))
            if r[b]:
                value = s[b] / r[b]
                colour, css = th.ramp[sum(value >= e for e in ramp[1:])], "bin"
                data += (("sectors-per-request", f"{value:.2f}"),)
            else:
                colour, css = th.idle, "bin idle"
            shapes.append(Rect(left + lo * scale, top + 2,
                               (hi - lo) * scale + (SEAM if b + 1 < bins else 0.0),
                               STRIP_ROW - 4, colour, css=css, data=data))
        shapes.append(Text(left + STRIP_WIDTH + 8, mid + small * 0.36, note, small, th.muted,
                           css="instruction-stats"))
    bottom = y + len(names) * STRIP_ROW
    for w in sorted({0, warps // 4, warps // 2, 3 * warps // 4, warps - 1}):
        tx = left + (w + 0.5) * scale
        shapes.append(Line(tx, bottom, tx, bottom + 4, th.muted, 1.0, css="tick"))
        shapes.append(Text(tx, bottom + 5 + small, f"{w:,}", small, th.muted, anchor="middle",
                           css="tick-label"))
    mark = left + (spec.warp + 0.5) * scale
    shapes.append(Line(mark, y - 4, mark, bottom + 2, th.text, 1.5, css="selected-warp"))
    shapes.append(Text(mark, y - 6, f"warp {spec.warp}", small, th.text, anchor="middle",
                       css="selected-warp"))
    per_cell = f", {warps / bins:.1f} warps per cell" if bins < warps else ""
    shapes.append(Text(left + STRIP_WIDTH / 2, bottom + 8 + 2.4 * small,
                       f"warp (launch order){per_cell}", small, th.muted, anchor="middle",
                       css="axis"))
    y = bottom + 14 + 3.4 * small
    if spec.legend:
        title = "sectors per request:"
        shapes.append(Text(MARGIN, y + label * 0.85, title, label, th.text, css="legend"))
        entries = [("box", c, words) for c, words in zip(th.ramp, ramp_labels(ramp))]
        entries.append(("box", th.idle, "no request"))
        y = legend(shapes, entries, MARGIN + text_width(title, label) + 10, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))
