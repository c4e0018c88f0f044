"""Themes: theme name -> the colours and font sizes every picture uses (window and exports).

Sizes are in diagram units (CSS pixels at scale 1; a 2x PNG of a 960-unit diagram fills a
1920-pixel slide). Lane colours come from the Okabe-Ito palette, which stays distinct under
the common forms of colour blindness; the print theme uses grey levels alone, and every
colour also has words (a tag on the lane row, a legend entry), so no meaning rests on hue.

Waste classes colour a request by its excess over the ideal: sectors fetched / ideal sectors
(the whole sectors its used bytes need). WASTE_EDGES are the lower edges of the classes; the
first class is "ideal" (a perfectly coalesced load of any width).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WASTE_EDGES = (1.0, 1.125, 2.0, 4.0, 8.0)  # sectors / ideal sectors
WASTE_LABELS = ("ideal", "<2x", "2-4x", "4-8x", "8x+")


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str
    muted: str  # secondary text: axis names, units, tags of inactive lanes
    rule: str  # column separators and lane-group rules
    cell: str  # a sector column's empty cells
    inactive: str  # band behind an inactive or missing lane
    plain: str  # bytes used by an ordinary lane
    crossing: str  # bytes used by a lane whose access spans two or more sectors
    shared: str  # bytes used by a lane that shares bytes with another lane
    tint: float  # how much of a lane colour fills the bytes of its sector other lanes use
    wasted: str  # bytes of a fetched sector that no lane uses
    waste: tuple[str, ...]  # one colour per waste class, ideal first
    idle: str  # overview cells of warps that make no request
    font_family: str = "DejaVu Sans, Arial, Helvetica, sans-serif"
    title_size: float = 18.0
    label_size: float = 11.0
    small_size: float = 9.5


LIGHT = Theme(
    name="light", background="#ffffff", text="#1a1a1a", muted="#666666", rule="#b8b8b8",
    cell="#f3f3f3", inactive="#dcdcdc", plain="#0072b2", crossing="#d55e00", shared="#cc79a7",
    tint=0.28, wasted="#eda29e", idle="#e6e6e6",
    waste=("#1a9850", "#a6d96a", "#fee08b", "#fc8d59", "#d73027"))

DARK = Theme(
    name="dark", background="#16181d", text="#f0f0f0", muted="#a8a8a8", rule="#4a4d55",
    cell="#23262d", inactive="#33363d", plain="#56b4e9", crossing="#e69f00", shared="#e08fc0",
    tint=0.42, wasted="#8a3b38", idle="#2c2f36",
    waste=("#1a9850", "#8cc863", "#f2d06b", "#f46d43", "#e0332a"))

PRINT = Theme(  # grey levels: a lane's own bytes darkest, fetched waste lighter, others' lightest
    name="print", background="#ffffff", text="#000000", muted="#555555", rule="#999999",
    cell="#f4f4f4", inactive="#e6e6e6", plain="#5a5a5a", crossing="#000000", shared="#808080",
    tint=0.22, wasted="#a8a8a8", idle="#ffffff",
    waste=("#f0f0f0", "#bdbdbd", "#969696", "#636363", "#252525"))

THEMES = {t.name: t for t in (LIGHT, DARK, PRINT)}
DEFAULT_THEME = "light"


def theme(name: str) -> Theme:
    """Theme by name ('light', 'dark', 'print'); KeyError for others."""
    return THEMES[name]


def mix(colour: str, background: str, amount: float) -> str:
    """`amount` of `colour` over `background`, as #rrggbb (opaque, so every format agrees)."""
    a = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    b = [int(background[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x * amount + y * (1 - amount)):02x}" for x, y in zip(a, b))


def waste_classes(ratio: np.ndarray | list[float]) -> np.ndarray:
    """The one colour rule: sectors / ideal sectors -> waste class, an index into
    WASTE_LABELS and Theme.waste (-1 where the ratio is NaN: no request)."""
    ratio = np.asarray(ratio, dtype=float)
    waste = np.searchsorted(np.array(WASTE_EDGES[1:]), np.nan_to_num(ratio, nan=1.0),
                            side="right")
    return np.where(np.isnan(ratio), -1, waste)
