"""One error type for every bad pattern: it names the place (`accesses[1].index`) and column."""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every character that is not printable (newlines, control and format
    characters, lone surrogates) written as its Python escape: an error stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


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
