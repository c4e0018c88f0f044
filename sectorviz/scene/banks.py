"""The lane-to-bank grid of one warp execution of a shared-memory instruction: 32 lanes against
32 banks, each cell the 4-byte word (shared byte offset / 4) a lane uses in that bank, coloured
by the wavefront in which its bank serves it; conflicts and broadcasts marked.

Wavefronts follow model/banks.py: per phase, a bank serves its distinct words one per
wavefront, in address order here (the hardware's order is not documented; only the count is
modelled). `bank_grid` is the layout, `bank_scene` the diagram (kind "banks").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model.banks import BANK_BYTES, BANKS, bank_rows, phase_lanes
from ..model.errors import PatternError
from ..model.sectors import WARP_SIZE
from ..model.values import Listing, SharedWarpDetail
from .palette import Theme, mix
from .parts import MARGIN, caption, caption_width, label_every, legend, paragraph, row_text
from .shapes import Line, Rect, Scene, Shape, Text, text_width
from .spec import GRID_WIDTH, DiagramSpec
from .words import NOT_RUN, counted

CELL_W, ROW_H = 30.0, 14.0  # one bank column, one lane row (diagram units)
FAINT = 0.6  # a cell showing less of its colour than this gets its word number in text ink
WORD_SIZE = 0.9  # a cell's word number against the small text


@dataclass(frozen=True)
class BankCell:
    """A word that one lane uses in one bank."""

    lane: int
    bank: int
    word: int  # shared byte offset / 4
    phase: int
    wavefront: int  # 0-based: the pass of its phase in which the bank serves this word
    conflict: bool  # the bank serves more than one distinct word in this phase
    broadcast: bool  # another active lane of the phase uses the same word


@dataclass(frozen=True)
class BankGrid:
    cells: tuple[BankCell, ...]
    active: np.ndarray  # (32,) bool
    phase_lanes: int  # lanes per phase: 32, 16 or 8
    wavefronts: int
    ideal: int
    ways: int  # the worst phase's wavefronts (n-way conflict); 0 without an active lane


def bank_grid(address: np.ndarray, width: int, active: np.ndarray) -> BankGrid:
    """(32,) shared byte offsets of `width`-byte lanes and active lanes -> BankGrid; the
    counts are model/banks.py's."""
    per_phase = phase_lanes(width)
    words = {lane: range(int(address[lane]) // BANK_BYTES,
                         (int(address[lane]) + width - 1) // BANK_BYTES + 1)
             for lane in range(WARP_SIZE) if active[lane]}
    cells = []
    for first in range(0, WARP_SIZE, per_phase):
        lanes = [lane for lane in range(first, first + per_phase) if lane in words]
        users: dict[int, int] = {}
        for lane in lanes:
            for w in words[lane]:
                users[w] = users.get(w, 0) + 1
        served: dict[int, list[int]] = {}
        for w in sorted(users):
            served.setdefault(w % BANKS, []).append(w)
        for lane in lanes:
            for w in words[lane]:
                bank = w % BANKS
                cells.append(BankCell(lane, bank, w, first // per_phase, served[bank].index(w),
                                      len(served[bank]) > 1, users[w] > 1))
    rows = bank_rows(np.asarray(address)[None, :], width, np.asarray(active)[None, :])
    return BankGrid(tuple(cells), np.asarray(active, dtype=bool), per_phase,
                    int(rows.wavefronts[0]), int(rows.ideal[0]), int(rows.ways[0]))


def bank_scene(listing: Listing, shared: SharedWarpDetail, spec: DiagramSpec,
               th: Theme) -> Scene:
    """The lane-to-bank grid of execution spec.execution of shared instruction
    spec.instruction by the warp of `shared` (spec.warp)."""
    ins = listing.shared_instructions[spec.instruction]
    runs = shared.executions[spec.instruction]
    if runs and not 0 <= spec.execution < len(runs):
        raise PatternError("--execution", f"execution {spec.execution} outside [0, {len(runs)})")
    which = f", execution {spec.execution + 1} of {len(runs)}" if len(runs) > 1 else ""
    head = f"{ins.name} (shared), warp {spec.warp}{which}"
    if runs:
        b = runs[spec.execution]
        grid = bank_grid(np.broadcast_to(b.address, b.active.shape)[0], ins.width, b.active[0])
        stats = (f"{counted(grid.wavefronts, 'wavefront')}, ideal "
                 f"{grid.ideal}, {grid.wavefronts - grid.ideal} bank conflicts, "
                 f"{grid.ways}-way, {ins.width} B per lane in phases of {grid.phase_lanes} lanes")
    else:
        grid, stats = None, NOT_RUN
    shapes: list[Shape] = []
    y = caption(shapes, head, stats, MARGIN, th) if spec.caption else MARGIN
    cw = cell_width(grid, spec.grid_width, th)
    right = MARGIN + text_width("lane 31", th.small_size) + 8 + BANKS * cw
    why = _why(listing, shared, spec) if spec.explain and runs else ""
    if why:
        y = paragraph(shapes, why, y, right + MARGIN, th)
    left = MARGIN + text_width("lane 31", th.small_size) + 8
    top = y + th.label_size * 1.4 + th.small_size + 6  # the axis title, then bank numbers
    _axes(shapes, left, top, th, cw)
    present = _cells(shapes, grid, left, top, th, cw) if grid else set()
    if grid and grid.phase_lanes < WARP_SIZE:
        present.add("phase")
    bottom = top + WARP_SIZE * ROW_H
    right = left + BANKS * cw
    if grid:
        for lane in range(grid.phase_lanes, WARP_SIZE, grid.phase_lanes):
            shapes.append(Line(left - 4, top + lane * ROW_H, right, top + lane * ROW_H,
                               th.text, 1.0, css="phase"))
    width = max(right + MARGIN, caption_width(head, stats, th) if spec.caption else 0.0)
    y = bottom + 18
    if spec.legend:
        y = legend(shapes, _legend_entries(present, th), MARGIN, y, width - MARGIN, th)
    return Scene(math.ceil(width), math.ceil(y + MARGIN - 10), th.background, th.font_family,
                 f"{head}; {stats}", tuple(shapes))


def _why(listing: Listing, shared: SharedWarpDetail, spec: DiagramSpec) -> str:
    """Why the drawn execution takes its wavefronts (scene.explain, which draws on this
    module's layout: imported here)."""
    from .explain import shared_explanations
    return shared_explanations(listing, shared, spec.instruction,
                               spec.execution)[spec.instruction]


def cell_width(grid: BankGrid | None, grid_width: float, th: Theme) -> float:
    """A bank column's width: CELL_W for the exports' GRID_WIDTH, narrower in proportion for
    a narrower pane (the window), never narrower than its widest word number needs."""
    words = max((text_width(str(c.word), row_text(th) * WORD_SIZE) for c in grid.cells),
                default=0.0) if grid else 0.0
    return max(CELL_W * min(1.0, grid_width / GRID_WIDTH), words + 4, row_text(th) * 2)


def _axes(shapes: list[Shape], left: float, top: float, th: Theme, cw: float) -> None:
    """Bank numbers above the columns under the title 'bank', lane numbers left of the rows
    beside the title 'lane' (reading upwards), the empty cells."""
    shapes.append(Rect(left, top, BANKS * cw, WARP_SIZE * ROW_H, th.cell, css="banks"))
    shapes.append(Text(left + BANKS * cw / 2, top - th.small_size - 8, "bank (4-byte word "
                       "address mod 32)", th.label_size, th.muted, anchor="middle",
                       css="axis-title"))
    shapes.append(Text(MARGIN - 4, top + WARP_SIZE * ROW_H / 2, "lane", th.label_size,
                       th.muted, anchor="middle", rotate=True, css="axis-title"))
    numbered = label_every(text_width("31", th.small_size), cw)
    for bank in range(BANKS):
        if bank % numbered == 0:
            shapes.append(Text(left + (bank + 0.5) * cw, top - 4, str(bank), th.small_size,
                               th.muted, anchor="middle", css="bank-label"))
        shapes.append(Line(left + bank * cw, top, left + bank * cw,
                           top + WARP_SIZE * ROW_H, th.rule, 0.5, css="bank-rule"))
    for lane in range(0, WARP_SIZE, label_every(th.small_size, ROW_H)):
        shapes.append(Text(left - 6, top + (lane + 0.8) * ROW_H, str(lane), th.small_size,
                           th.muted, anchor="end", css="lane-label"))


def _cells(shapes: list[Shape], grid: BankGrid, left: float, top: float, th: Theme,
           cw: float) -> set[str]:
    """Draw each lane's words; returns the kinds drawn ('plain', 'conflict', 'broadcast',
    'inactive') for the legend."""
    present = set()
    for lane in np.nonzero(~grid.active)[0]:
        shapes.append(Rect(left, top + lane * ROW_H, BANKS * cw, ROW_H, th.inactive,
                           css="inactive", data=(("lane", str(lane)),)))
        present.add("inactive")
    for c in grid.cells:
        kind = "conflict" if c.conflict else "broadcast" if c.broadcast else "plain"
        present.add(kind)
        colour = _colour(c, th)
        shapes.append(Rect(left + c.bank * cw + 1, top + c.lane * ROW_H + 1, cw - 2,
                           ROW_H - 2, colour, css=f"hit {kind}",
                           data=(("lane", str(c.lane)), ("bank", str(c.bank)),
                                 ("word", str(c.word)), ("phase", str(c.phase)),
                                 ("wavefront", str(c.wavefront)))))
        ink = th.background if _strength(c) >= FAINT else th.text  # readable on a faint cell
        shapes.append(Text(left + (c.bank + 0.5) * cw, top + (c.lane + 0.78) * ROW_H,
                           str(c.word), row_text(th) * WORD_SIZE, ink, anchor="middle",
                           css="word"))
    return present


def _strength(c: BankCell) -> float:
    """How much of its colour a cell shows over the background: a conflict's later
    wavefronts fade towards the background (lighter on light, darker on dark)."""
    if not c.conflict or c.wavefront == 0:
        return 1.0
    return max(0.35, 0.75 - 0.04 * c.wavefront)


def _colour(c: BankCell, th: Theme) -> str:
    """Conflict colour, fading into the background for later wavefronts; broadcast; plain."""
    if c.conflict:
        return mix(th.crossing, th.background, _strength(c))
    return th.shared if c.broadcast else th.plain


def _legend_entries(present: set[str], th: Theme) -> list[tuple[str, str, str]]:
    entries = [("box", colour, words) for kind, colour, words in (
        ("plain", th.plain, "word served in one wavefront"),
        ("broadcast", th.shared, "word shared by lanes (broadcast)"),
        ("conflict", th.crossing, "bank serves several words: one wavefront each (fading "
                                  "into the background: later)"),
        ("inactive", th.inactive, "inactive lane")) if kind in present]
    return entries + [("rule", th.text, "phase boundary")] * ("phase" in present)
