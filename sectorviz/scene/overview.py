"""The kernel overview strip: instructions (rows) x warps in launch order (columns), each cell
coloured by its waste: sectors per request against the ideal (an Analysis with per-warp
figures).

With more warps than bins, consecutive warps share a cell and its value is their sectors over
their requests, against their own ideal sectors per request (the analysis keeps each warp's
ideal: an odd-pitch warp whose ideal is 4 is measured against 4, not the grid's average). A
cell is "ideal" when it fetches no more
sectors than the bytes need, so a coalesced float4 load (16 sectors, ideal 16) is ideal; the
classes are palette.WASTE_LABELS. Warps without a request are idle. Shared instructions follow
the global ones as rows of wavefronts per request against their ideal (per-warp ideals are
kept for them), blank until the run completes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.results import Analysis
from .palette import WASTE_LABELS, Theme, waste_classes
from .parts import MARGIN, caption, caption_width, legend
from .shapes import Line, Rect, Scene, Shape, Text, text_width
from .sheet import ideal_per_request
from .spec import DiagramSpec
from .words import counted

STRIP_WIDTH = 700.0  # the warp axis
STRIP_ROW = 30.0  # one instruction
MAX_BINS = 350  # at most this many cells per instruction
SEAM = 0.4  # cells overlap this much so antialiasing leaves no hairline between them


@dataclass(frozen=True)
class OverviewBins:
    """Instructions (rows) x bins of consecutive warps: bin b holds warps edges[b]..edges[b+1]-1.

    ratio: the bin's sectors per request over its warps' ideal sectors per request, i.e. its
    sectors over its ideal sectors (NaN where its warps make no request); waste: its waste class
    (-1: no request)."""

    edges: np.ndarray  # (bins + 1,) warp indices
    sectors_per_request: np.ndarray  # (instructions, bins) float, NaN: no request
    ratio: np.ndarray  # (instructions, bins) float, NaN: no request
    waste: np.ndarray  # (instructions, bins) int, -1: no request


def overview_bins(analysis: Analysis, bins: int, shared: int = 0) -> OverviewBins:
    """The one binning rule of the window and the exports: a bin's value is its sectors over
    its requests, against its warps' ideal sectors per request; then `shared` rows (the
    kernel's shared instructions): wavefronts over requests, against the ideal wavefronts of
    the same warps. Warps a running analysis has not reached yet make no request."""
    assert analysis.per_warp_sectors is not None and analysis.per_warp_requests is not None
    assert analysis.per_warp_ideal is not None  # a per-warp analysis
    warps = analysis.warps
    bins = max(1, min(bins, warps))
    edges = np.linspace(0, warps, bins + 1).round().astype(np.int64)
    rest = ((0, 0), (0, warps - analysis.per_warp_sectors.shape[1]))  # a run not done yet
    sectors = np.add.reduceat(np.pad(analysis.per_warp_sectors, rest), edges[:-1], axis=1)
    requests = np.add.reduceat(np.pad(analysis.per_warp_requests.astype(np.int64), rest),
                               edges[:-1], axis=1)
    ideal = np.add.reduceat(np.pad(analysis.per_warp_ideal, rest), edges[:-1], axis=1)
    per = np.where(requests > 0, sectors / np.maximum(requests, 1), np.nan)
    ratio = np.where((requests > 0) & (ideal > 0), sectors / np.maximum(ideal, 1), np.nan)
    if shared:
        per_s, ratio_s = _shared_bins(analysis, shared, edges)
        per, ratio = np.concatenate([per, per_s]), np.concatenate([ratio, ratio_s])
    return OverviewBins(edges, per, ratio, waste_classes(ratio))


def _shared_bins(analysis: Analysis, rows: int, edges: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(wavefronts per request, wavefronts over ideal) of `rows` shared instructions per bin;
    NaN where no request, and everywhere while the run is not complete."""
    blank = np.full((rows, len(edges) - 1), np.nan)
    if analysis.per_warp_shared is None:
        return blank, blank
    waves, ideal, requests = np.add.reduceat(analysis.per_warp_shared, edges[:-1], axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(requests > 0, waves / np.maximum(requests, 1), np.nan),
                np.where(ideal > 0, waves / np.maximum(ideal, 1), np.nan))


def overview_scene(analysis: Analysis, spec: DiagramSpec, th: Theme) -> Scene:
    """The strip, with spec.warp marked."""
    warps = analysis.warps
    cells = overview_bins(analysis, MAX_BINS, len(analysis.shared))
    edges, bins = cells.edges, len(cells.edges) - 1
    label, small = th.label_size, th.small_size
    n = len(analysis.instructions)
    names = [s.name for s in analysis.instructions] + [
        f"{s.name} (shared)" for s in analysis.shared]
    notes = [f"{s.sectors_per_request:.2f} per request, ideal {ideal_per_request(s):.2f}"
             for s in analysis.instructions] + [
        f"{s.wavefronts_per_request:.2f} wavefronts per request, ideal "
        f"{s.ideal_wavefronts / max(s.requests, 1):.2f}" for s in analysis.shared]
    left = MARGIN + max(text_width(n, label) for n in names) + 12
    t = analysis.totals
    head = (f"{analysis.pattern_name}: {counted(warps, 'warp')}, "
            f"{counted(len(names), 'instruction')}")
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
    for k, (name, note) in enumerate(zip(names, notes)):
        top = y + k * STRIP_ROW
        mid = top + STRIP_ROW / 2
        shapes.append(Text(left - 12, mid + label * 0.36, name, label, th.text, anchor="end",
                           css="instruction"))
        for b in range(bins):
            lo, hi = int(edges[b]), int(edges[b + 1])
            data: tuple[tuple[str, str], ...] = (("instruction", str(k)),
                                                 ("warps", f"{lo}:{hi}"))
            waste = int(cells.waste[k, b])
            if waste >= 0:
                colour, css = th.waste[waste], "bin"
                per = "sectors-per-request" if k < n else "wavefronts-per-request"
                data += ((per, f"{cells.sectors_per_request[k, b]:.2f}"),
                         ("over-ideal", f"{cells.ratio[k, b]:.2f}"))
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
        title = ("sectors (shared: wavefronts) / ideal:" if analysis.shared
                 else "sectors fetched / ideal:")
        shapes.append(Text(MARGIN, y + label * 0.85, title, label, th.text, css="legend"))
        entries = [("box", c, words) for c, words in zip(th.waste, WASTE_LABELS)]
        entries.append(("box", th.idle, "no request"))
        y = legend(shapes, entries, MARGIN + text_width(title, label) + 10, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))


def next_worst_warp(analysis: Analysis, instruction: int, after: int) -> int | None:
    """The first warp after `after` (in launch order, wrapping around) whose sectors per
    request for `instruction` are the largest of the grid; None when no warp makes a request."""
    assert analysis.per_warp_sectors is not None and analysis.per_warp_requests is not None
    sectors = analysis.per_warp_sectors[instruction]
    requests = analysis.per_warp_requests[instruction].astype(np.int64)
    per = np.where(requests > 0, sectors / np.maximum(requests, 1), -1.0)
    if per.max() < 0:
        return None
    worst = np.flatnonzero(per == per.max())
    later = worst[worst > after]
    return int(later[0] if len(later) else worst[0])
