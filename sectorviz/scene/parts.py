"""Pieces every diagram kind shares: margins, the two-line caption and the legend."""

from __future__ import annotations

from .palette import Theme
from .shapes import Line, Rect, Shape, Text, text_width

MARGIN = 24.0
SWATCH = 18.0
ROW_TEXT = 12.0  # the largest text inside a lane row (13 units in grids, 14 in banks)
LABEL_ROOM = 1.0  # labels closer than this many of their sizes are thinned (digits stand 0.72 tall)


def row_text(th: Theme) -> float:
    """The size of text that lies inside one lane row (a tag, a bank word): the theme's
    small size, at most ROW_TEXT however large the labels around the grid grow."""
    return min(th.small_size, ROW_TEXT)


def label_every(size: float, pitch: float) -> int:
    """Label every k-th row or column, k the smallest power of two that spaces labels of
    `size` at least LABEL_ROOM sizes apart when rows or columns are `pitch` units apart (1:
    every one; lanes 0, 4, 8, ... in large type)."""
    every = 1
    while every * pitch < LABEL_ROOM * size and every < 32:
        every *= 2
    return every


def stats_lines(stats: str, width: float, th: Theme) -> list[str]:
    """The stats line broken after commas into lines no wider than `width` units (where the
    pieces allow)."""
    lines: list[str] = []
    for piece in stats.split(", "):
        if lines and text_width(f"{lines[-1]}, {piece}", th.label_size) <= width:
            lines[-1] = f"{lines[-1]}, {piece}"
        else:
            lines.append(piece)
    return [line + ("," if i + 1 < len(lines) else "") for i, line in enumerate(lines)]


def caption(shapes: list[Shape], head: str, stats: str, y: float, th: Theme,
            width: float = float("inf")) -> float:
    """Title (bold) and stats (muted), each wrapped at `width` units, from the top margin;
    returns the y below."""
    for line in wrapped(head, width, th.title_size):
        shapes.append(Text(MARGIN, y + th.title_size, line, th.title_size, th.text, bold=True,
                           css="caption title"))
        y += th.title_size * 1.35
    for line in stats_lines(stats, width, th):
        shapes.append(Text(MARGIN, y + th.label_size, line, th.label_size, th.muted,
                           css="caption stats"))
        y += th.label_size * 1.35
    return y + 10


def wrapped(text: str, width: float, size: float) -> list[str]:
    """`text` broken at spaces into lines no wider than `width` units at `size`."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def paragraph(shapes: list[Shape], text: str, y: float, width: float, th: Theme) -> float:
    """`text` (an explanation) from y under the caption, wrapped to a canvas `width` units
    wide (margins included); returns the y below."""
    for line in wrapped(text, width - 2 * MARGIN, th.label_size):
        shapes.append(Text(MARGIN, y + th.label_size, line, th.label_size, th.text,
                           css="explanation"))
        y += th.label_size * 1.35
    return y + 10


def paragraph_width(text: str, width: float, th: Theme) -> float:
    """Canvas width `paragraph` needs for `text` wrapped to `width`, margins included."""
    return 2 * MARGIN + max(text_width(line, th.label_size)
                            for line in wrapped(text, width - 2 * MARGIN, th.label_size))


def caption_width(head: str, stats: str, th: Theme, width: float = float("inf")) -> float:
    """Canvas width the caption needs, margins included."""
    titles = [text_width(line, th.title_size) for line in wrapped(head, width, th.title_size)]
    return 2 * MARGIN + max(titles + [text_width(line, th.label_size)
                                      for line in stats_lines(stats, width, th)])


def legend(shapes: list[Shape], entries: list[tuple[str, str, str]], x0: float, y: float,
           right: float, th: Theme) -> float:
    """Entries (kind 'box', 'dash' or 'rule', colour, words) flowing left to right and wrapping at
    `right`; returns the y below the legend."""
    size = th.label_size
    swatch, gap = max(SWATCH, 1.6 * size), max(6.0, size / 2)  # both grow with large type
    x = x0
    for kind, colour, words in entries:
        w = swatch + gap + text_width(words, size) + 18
        if x > x0 and x + w > right:
            x, y = x0, y + size * 1.8
        if kind == "box":
            shapes.append(Rect(x, y, swatch, size, colour, css="legend-swatch", stroke=th.rule))
        else:
            shapes.append(Line(x + swatch / 2, y - 2, x + swatch / 2, y + size + 2, colour,
                               1.0 if kind == "dash" else 1.5, dash=kind == "dash",
                               css="legend-swatch"))
        shapes.append(Text(x + swatch + gap, y + size * 0.85, words, size, th.text,
                           css="legend"))
        x += w
    return y + size * 1.8
