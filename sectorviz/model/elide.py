"""A long name in one short line, for the terminal (`report`, `check`, `batch`) and the
messages that name an instruction. An instruction's name `line N: <expression>, <op> (k of
n)` keeps its place, its marks ("(global read)", "(k of n)", "[b]") and as much of its op as
it can: the expression gives way first, then the op, each keeping its start; any other text
is elided in its middle, its ends kept."""

from __future__ import annotations

import re

from .errors import printable

NAME_WIDTH = 50  # an instruction's name in a line of terminal text, at most
ELLIPSIS = "…"
TAIL_MARK = ", "  # before a compiled instruction's op and copy mark ('ld.shared.f32 (3 of 4)')
PLACE = re.compile(r"(?:\S+ )?line \d+: |the kernel: ")  # an instruction name's start
# its marks: the role of a copy's side, its copy number, the array it reaches
MARK = re.compile(r"(?: \([^()]*\)| \[[^\]]*\])+$")
OP_SHARE = 2 / 3  # of the room left by the place and marks, the op takes at most this much


def elided(text: str, width: int = NAME_WIDTH) -> str:
    """`text`, printable and at most `width` characters: an instruction's name (`line 22:
    tl.load(a_tile, ...), cp.async.cg.shared.global (global read) (10 of 12)`) elided in its
    expression, then its op, its place and marks kept whole; any other text in its middle."""
    text = printable(text)
    if len(text) <= width:
        return text
    place, mark = PLACE.match(text), MARK.search(text)
    body = text[place.end() if place else 0:mark.start() if mark else len(text)]
    room = width - (len(text) - len(body))
    cut = body.rfind(TAIL_MARK)
    if place is None or cut <= 0 or room < 2 * len(TAIL_MARK) + 4:
        return _middle_elided(text, width)
    words, op = body[:cut], body[cut + len(TAIL_MARK):]
    op_room = min(len(op), max(int(OP_SHARE * room) - len(TAIL_MARK), 1))
    words_room = room - len(TAIL_MARK) - op_room
    return text[:place.end()] + _start_kept(words, words_room) + TAIL_MARK + \
        _start_kept(op, op_room) + (mark.group() if mark else "")


def _middle_elided(text: str, width: int) -> str:
    """`text` at most `width` characters: its middle replaced by '…', as much of its start
    kept as of its end."""
    if len(text) <= width:
        return text
    room = width - len(ELLIPSIS)
    tail = room - room // 2
    return text[:room - tail] + ELLIPSIS + text[len(text) - tail:]


def _start_kept(text: str, width: int) -> str:
    """`text` at most `width` characters, its end replaced by '…'."""
    return text if len(text) <= width else text[:max(width - len(ELLIPSIS), 0)] + ELLIPSIS
