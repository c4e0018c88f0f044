"""One error type for every bad pattern: it names the place (`accesses[1].index`) and column;
`printable`, the one escaping of text from files on its way to a terminal."""

from __future__ import annotations

from collections.abc import Iterable


def printable(text: str) -> str:
    """`text` as one line that cannot drive a terminal: every character Python does not call
    printable is written as its Python escape ('\\n', '\\r', '\\x1b', '\\x9b', '\\u202e').
    That covers C0 and C1 controls, DEL, CR and newlines, bidi embeddings, overrides and
    isolates (U+202A-U+202E, U+2066-U+2069), zero-width characters (U+200B-U+200F, U+2060,
    U+FEFF), line and paragraph separators and lone surrogates. Every name, note and source
    text that reaches stdout or stderr goes through it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def printable_lines(lines: Iterable[str]) -> str:
    """Lines of terminal output -> one text: each line `printable` (a newline inside a value
    cannot start a line of its own), joined by newlines."""
    return "\n".join(printable(line) for line in lines)


class PatternError(ValueError):
    """A problem in a pattern, named by its place, e.g. `accesses[1].index, column 7: ...`.
    Place and message hold only printable characters (see `printable`). `file`: the file
    the place is in when it is not the pattern file (a kernel's .cu), else None."""

    def __init__(self, place: str, message: str, column: int | None = None,
                 file: str | None = None):
        self.place = printable(place)
        self.message = printable(message)
        self.column = column
        self.file = None if file is None else printable(file)
        where = ", ".join(p for p in (self.place, "" if column is None else f"column {column}")
                          if p)
        super().__init__(f"{where}: {self.message}" if where else self.message)


def internal_error(err: BaseException) -> str:
    """The one line shown for a failure no input check foresaw (a bug, not bad input):
    'internal error: <exception kind>; please report'. The caller puts the file in front."""
    return f"internal error: {type(err).__name__}; please report"
