"""DiagramSpec: the small value every diagram is a pure function of (with the model's values)."""

from __future__ import annotations

from dataclasses import dataclass

from .palette import DEFAULT_THEME

KINDS = ("grid", "warp", "overview", "banks", "histogram")
GRID_KINDS = ("overview", "histogram")  # drawn from the analysis of every warp
GRID_WIDTH = 900.0  # width the sector columns of all panels aim to fill together, units


@dataclass(frozen=True)
class DiagramSpec:
    """What to draw: `kind` (grid: one instruction of one warp; warp: all its instructions;
    overview: the kernel strip; histogram: one instruction's requests by sectors per request
    over all warps; banks: one shared instruction's lanes against banks), 0-based `warp` in
    launch order, `instruction` (of the shared instructions for banks) and `execution` (loop
    iteration, grid and banks only) indices, theme name, whether to draw legend and caption
    and (grid, warp and banks) why each instruction costs what it costs under the caption,
    and the width (diagram units) the sector columns aim to fill (the window fits it to its pane;
    the exports keep GRID_WIDTH); `text_scale` enlarges the small and label text (lane and
    bank numbers, addresses, tags, legend) up to what one lane row holds, so a window that
    draws the diagram small keeps its text readable (the exports keep 1)."""

    kind: str = "grid"
    warp: int = 0
    instruction: int = 0
    execution: int = 0
    theme: str = DEFAULT_THEME
    legend: bool = True
    caption: bool = True
    explain: bool = False
    grid_width: float = GRID_WIDTH
    text_scale: float = 1.0
