"""A Sheet as rich text for a QTextBrowser, and the cheap way to change what one shows.

`sheet_layout` lays a Sheet out as tables of rows of cells (`Layout`); `html` writes a Layout
as the HTML the browser parses. Parsing and laying out that HTML is the costly part (tens of
ms for a few hundred rows), so `patch` changes a document already showing one Layout into
another of the same shape (the same tables, rows and cell attributes: another warp of the
same kernel, mostly) by rewriting only the text of the cells and headings that differ, each
in its own character format; anything else is for a new `html`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from html import escape

from PySide6.QtGui import QTextCursor, QTextDocument, QTextTable

from ..model.errors import printable
from ..scene.sheet import Row, Sheet
from .theme import Theme
from .visible import html_label


@dataclass(frozen=True)
class Cell:
    """One <td>: its attributes, the columns it spans, the text it shows (printable) and,
    for a cell that is more than one run of text, its markup."""

    attrs: str
    text: str = ""
    span: int = 1
    markup: str | None = None

    def html(self) -> str:
        return f"<td{self.attrs}>{escape(self.text) if self.markup is None else self.markup}</td>"


TableRow = tuple[Cell, ...]


@dataclass(frozen=True)
class Layout:
    """A sheet laid out: its style and title (HTML), then (heading text, table attributes,
    rows) per table: the answer's first (no heading: ""), then each step's."""

    style: str
    title: str
    tables: tuple[tuple[str, str, tuple[TableRow, ...]], ...]


def _code(text: str) -> TableRow:
    """Metrics in monospace on a row of their own across the table, one per line, never
    broken inside a name."""
    names = "<br>".join(html_label(m) for m in text.split(" + "))
    return (Cell(" colspan='2' class='metric' style='white-space: pre'", text, 2,
                 f"<code>{names}</code>"),)


def _rows(r: Row, current: int | None, narrow: bool) -> tuple[TableRow, ...]:
    """One Row: label beside value (label above it when `narrow`), then note and metric."""
    mark = " class='current'" if r.instruction is not None and r.instruction == current else ""
    label = f"{'▸ ' if mark else ''}{printable(r.label)}"
    value = Cell(" class='value'", printable(r.value))
    rows: tuple[TableRow, ...] = (
        ((Cell(f" colspan='2'{mark}", label, 2),), (Cell(" width='4%'"), value)) if narrow
        else ((Cell(f" width='38%'{mark}", label), value),))
    if r.note:
        rows += ((Cell(""), Cell(" class='note'", printable(r.note))),)
    return rows + ((_code(r.code),) if r.code else ())


def sheet_layout(sheet: Sheet, theme: Theme, current: int | None = None,
                 narrow: bool = False) -> Layout:
    """Sheet -> its Layout: the answer in a box, then a heading and an item/value table per
    step (note and metric below the value; `narrow`: each label on a line above its value).
    Rows about instruction `current` get the accent."""
    style = (f"<style>h3 {{ margin: 10px 0 2px 0; }} td {{ padding: 2px 6px; "
             f"vertical-align: top; }} .note {{ color: {theme.muted}; }} "
             f".value {{ font-weight: 600; }} .current {{ color: {theme.accent}; }} "
             f".metric {{ color: {theme.muted}; font-size: small; padding-left: 18px; }} "
             f".answer {{ background: {theme.window}; }}</style>")

    def rows(of: tuple[Row, ...]) -> tuple[TableRow, ...]:
        return tuple(row for r in of for row in _rows(r, current, narrow))

    return Layout(style, f"<p><b>{html_label(sheet.title)}</b></p>", (
        ("", " class='answer' width='100%'", rows(sheet.answer)),
        *((f"{step.number}. {printable(step.title)}", " width='100%'", rows(step.rows))
          for step in sheet.steps)))


def html(layout: Layout) -> str:
    """A Layout as the HTML a QTextBrowser shows."""
    parts = [layout.style, layout.title]
    for heading, attrs, rows in layout.tables:
        parts.append(f"<h3>{escape(heading)}</h3>" * bool(heading) + f"<table{attrs}>")
        parts += ["<tr>" + "".join(cell.html() for cell in row) + "</tr>" for row in rows]
        parts.append("</table>")
    return "".join(parts)


def sheet_html(sheet: Sheet, theme: Theme, current: int | None = None,
               narrow: bool = False) -> str:
    """Sheet -> HTML (sheet_layout, written out)."""
    return html(sheet_layout(sheet, theme, current, narrow))


def _same_shape(old: Layout, new: Layout) -> bool:
    """Whether `new` differs from `old` only in the text of plain cells."""
    if (old.style, old.title) != (new.style, new.title) or len(old.tables) != len(new.tables):
        return False
    for (h0, a0, rows0), (h1, a1, rows1) in zip(old.tables, new.tables):
        if (bool(h0), a0, len(rows0)) != (bool(h1), a1, len(rows1)) or (h0 != h1 and not rows0):
            return False  # (the heading of a table of no rows is not found in a document)
        for row0, row1 in zip(rows0, rows1):
            if len(row0) != len(row1) or any(
                    (c0.attrs, c0.span, c0.markup) != (c1.attrs, c1.span, c1.markup)
                    or (c0.markup is not None and c0.text != c1.text)
                    or (c0.text != c1.text and not c0.text) for c0, c1 in zip(row0, row1)):
                return False
    return True


def patch(document: QTextDocument, old: Layout, new: Layout) -> bool:
    """Change `document`, showing `old`, to show `new` by rewriting the text of the cells
    that differ (each keeps its character format: bold values, muted notes); False, and
    nothing changed, when the shapes differ (a new `html` is needed)."""
    if not _same_shape(old, new):
        return False
    shown = [rows for _, _, rows in old.tables if rows]  # Qt makes no table of no rows
    tables = [f for f in document.rootFrame().childFrames() if isinstance(f, QTextTable)]
    if len(tables) != len(shown) or any(t.rows() != len(rows) for t, rows in zip(tables, shown)):
        return False
    edits: list[tuple[Callable[[], tuple[int, int]], str]] = []  # (its span now, new text)
    pairs = [(t0, t1) for t0, t1 in zip(old.tables, new.tables) if t0[2]]
    for table, ((h0, _, rows0), (h1, _, rows1)) in zip(tables, pairs):
        if h0 != h1:  # the heading: the block just before its table
            edits.append((partial(_heading_span, table), h1))
        for r, (row0, row1) in enumerate(zip(rows0, rows1)):
            column = 0
            for c0, c1 in zip(row0, row1):
                if c0.text != c1.text:
                    edits.append((partial(_cell_span, table, r, column), c1.text))
                column += c0.span
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    for span, text in edits:
        start, end = span()  # found as the document is now: an edit moves what follows
        cursor.setPosition(start + 1)
        look = cursor.charFormat()  # the format of the cell's first character
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(" ".join(text.split()), look)  # as HTML shows a cell's text
    cursor.endEditBlock()
    return True


def _cell_span(table: QTextTable, row: int, column: int) -> tuple[int, int]:
    """The positions of the text of a table's cell."""
    cell = table.cellAt(row, column)
    return cell.firstCursorPosition().position(), cell.lastCursorPosition().position()


def _heading_span(table: QTextTable) -> tuple[int, int]:
    """The positions of the text of the block just before a table (its heading)."""
    block = table.document().findBlock(table.firstPosition() - 1)
    return block.position(), block.position() + len(block.text())
