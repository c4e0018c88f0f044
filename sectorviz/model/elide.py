"""A long name in one short line: elided in the middle, its ends kept (a CUDA instruction's
line, and its op and copy number), for the terminal (`report`, `check`, `batch`) and the
messages that name an instruction."""

from __future__ import annotations

from .errors import printable

NAME_WIDTH = 50  # an instruction's name in a line of terminal text, at most
ELLIPSIS = "…"
TAIL_MARK = ", "  # before a compiled instruction's op and copy number ('ld.shared.f32 (3 of 4)')


def elided(text: str, width: int = NAME_WIDTH) -> str:
    """`text`, printable and at most `width` characters: its middle replaced by '…', as much
    of the start as of the end kept, the end at least from its last ', ' where that is at most
    two thirds of the width ('line 26: acc += As[ty]…[tx], ld.shared.f32 (3 of 4)')."""
    text = printable(text)
    if len(text) <= width:
        return text
    room = width - len(ELLIPSIS)
    tail = room - room // 2
    mark = text.rfind(TAIL_MARK)
    if mark > 0 and len(text) - mark <= 2 * room // 3:
        tail = max(tail, len(text) - mark)
    return text[:room - tail] + ELLIPSIS + text[len(text) - tail:]
