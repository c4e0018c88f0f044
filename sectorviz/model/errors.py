"""One error type for every bad pattern: it names the place (`accesses[1].index`) and column."""

from __future__ import annotations


class PatternError(ValueError):
    """A problem in a pattern, named by its place, e.g. `accesses[1].index, column 7: ...`."""

    def __init__(self, place: str, message: str, column: int | None = None):
        self.place = place
        self.message = message
        self.column = column
        where = ", ".join(p for p in (place, "" if column is None else f"column {column}") if p)
        super().__init__(f"{where}: {message}" if where else message)


def internal_error(err: BaseException) -> str:
    """The one line shown for a failure no input check foresaw (a bug, not bad input):
    'internal error: <exception kind>; please report'. The caller puts the file in front."""
    return f"internal error: {type(err).__name__}; please report"
