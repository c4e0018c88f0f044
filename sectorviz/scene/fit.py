"""Terminal text that fits TEXT_WIDTH columns: a long line wrapped under its own indentation
(a long name is elided first: model.elide). Text is made printable (model.errors.printable)
before it is measured."""

from __future__ import annotations

import textwrap

from ..model.errors import printable

TEXT_WIDTH = 100  # columns of every line `report`, `check` and `batch` print


def wrapped(line: str, indent: int | None = None, width: int = TEXT_WIDTH) -> list[str]:
    """A printable `line` as lines of at most `width` columns, broken at spaces (a word
    longer than a line is broken too); continuation lines start at column `indent` (default:
    the line's own indentation)."""
    line = printable(line).rstrip()
    if len(line) <= width:
        return [line]
    lead = len(line) - len(line.lstrip(" ")) if indent is None else indent
    return textwrap.wrap(line, width, subsequent_indent=" " * lead, drop_whitespace=True,
                         break_on_hyphens=False) or [line[:width]]


def fitted(lines: list[str]) -> str:
    """Lines of terminal output -> one text, each line `wrapped`, joined by newlines."""
    return "\n".join(part for line in lines for part in wrapped(line))
