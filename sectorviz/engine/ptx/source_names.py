"""A memory instruction's short name from its source line: the subscript expression of its
array there (`As[ty][k]` in `sum += As[ty][k] * Bs[k][tx];`), where the line names that
array in exactly one such expression the instruction can be (a store: one being assigned;
a load: one being read; an atomic: either), else None (the caller names the statement).

nvcc's `.loc` columns point at the statement, not the expression, so the expression is found
by the array the instruction reaches, as the source writes it: `name[...]` with any further
`[...]` and a `.field` or `->field` after them. Texts only: no C++ is parsed."""

from __future__ import annotations

import re

ASSIGNMENT = re.compile(r"\s*(?:<<=|>>=|[-+*/%&|^]?=(?!=))")
COMPOUND = re.compile(r"\s*(?:<<=|>>=|[-+*/%&|^]=|\+\+|--)")
FIELD = re.compile(r"\s*(?:\.|->)\s*[A-Za-z_]\w*")
MAX_LINE = 400  # characters of a line searched (longer lines: the statement names it)


def expression_for(line: str, array: str, op: str) -> str | None:
    """The expression of `array` on `line` that an access of `op` ('load', 'store', or an
    atomic's op) reaches, where exactly one text qualifies; None otherwise."""
    if not array or len(line) > MAX_LINE or not array.isidentifier():
        return None
    found = _subscripts(line, array)
    if op == "store":
        fits = [t for t, end in found if ASSIGNMENT.match(line, end)]
    elif op == "load":
        fits = [t for t, end in found
                if not ASSIGNMENT.match(line, end) or COMPOUND.match(line, end)]
    else:
        fits = [t for t, _ in found]
    distinct = set(fits)
    return distinct.pop() if len(distinct) == 1 else None


def _subscripts(line: str, array: str) -> list[tuple[str, int]]:
    """(text, end index) of each `array[...]...` on `line`, whitespace collapsed."""
    out = []
    for match in re.finditer(rf"(?<![\w.>]){re.escape(array)}\s*\[", line):
        end = _closed(line, match.end() - 1)
        while end is not None:
            more = re.compile(r"\s*\[").match(line, end)
            if more is None:
                break
            end = _closed(line, more.end() - 1)
        if end is None:
            continue
        field = FIELD.match(line, end)
        end = field.end() if field else end
        out.append((" ".join(line[match.start():end].split()), end))
    return out


def _closed(line: str, open_at: int) -> int | None:
    """The index after the `]` closing the `[` at `open_at`; None when the line ends first."""
    depth = 0
    for k in range(open_at, len(line)):
        if line[k] == "[":
            depth += 1
        elif line[k] == "]":
            depth -= 1
            if depth == 0:
                return k + 1
    return None
