"""A diagram as a flat list of shapes, in diagram units (CSS pixels at scale 1, y down).

Diagrams are built once as a Scene and written out by svg.py and tikz.py, so every format shows
the same drawing. `css` classes and `data` attributes travel to the SVG for restyling and tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    css: str = ""
    data: tuple[tuple[str, str], ...] = ()
    stroke: str | None = None  # a hairline outline (legend swatches)


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0
    dash: bool = False
    css: str = ""


@dataclass(frozen=True)
class Text:
    """`y` is the baseline; `anchor` is start, middle or end; `rotate` turns it -90 degrees
    (reading upwards) about (x, y)."""

    x: float
    y: float
    text: str
    size: float
    fill: str
    anchor: str = "start"
    bold: bool = False
    rotate: bool = False
    css: str = ""


Shape = Rect | Line | Text


@dataclass(frozen=True)
class Scene:
    width: float
    height: float
    background: str
    font_family: str
    title: str  # one line: the caption's text, also written as the SVG <title>
    shapes: tuple[Shape, ...] = field(default=())


def num(v: float) -> str:
    """A coordinate as fixed text: at most two decimals, no trailing zeros, no '-0'."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


CHAR_WIDTH = 0.6  # average advance of a sans-serif glyph, in font sizes (layout estimate)


def text_width(text: str, size: float) -> float:
    """Estimated advance of `text` at `size`: layout needs no font engine, so it stays pure."""
    return CHAR_WIDTH * size * len(text)
