"""Text from files as the app shows it, so nothing in a file can hide or reorder what is on
screen.

Labels (window title, instruction names, sheet, headline, error and status lines) use the
terminal's escaping, `model.errors.printable`: C0 and C1 controls, DEL, CR, newlines inside
a value, bidi embeddings, overrides and isolates and zero-width characters become visible
escapes ('\\u202e'), as on the command line; `html_label` is that for rich text.

The Kernel tab edits the source, so it keeps its characters: `shown_source` puts each
HIDDEN character (a control, a bidi control, a zero-width character, a line or paragraph
separator) on screen as a placeholder of its own (a Control Picture such as '␛' for C0 and
DEL, a private-use character, drawn as a red box, for the rest), which cannot reorder the
line, and `real_source` turns placeholders back. A source that already holds a placeholder
character is shown as it is (the mapping would not be one-to-one). Tab and newline are kept,
and CR LF is a line end, as before.
"""

from __future__ import annotations

import unicodedata
from html import escape

from ..model.errors import printable

HIDDEN = "".join([*(chr(c) for c in range(32) if chr(c) not in "\t\n"), "\x7f",
                  *(chr(c) for c in range(0x80, 0xA0)),  # C1
                  *(chr(c) for c in range(0x200B, 0x2010)),  # zero width, LRM, RLM
                  *(chr(c) for c in range(0x2028, 0x202F)),  # separators, embeddings
                  *(chr(c) for c in range(0x2060, 0x2065)),  # word joiner, invisible ops
                  *(chr(c) for c in range(0x2066, 0x206A)),  # isolates
                  "\ufeff"])  # zero-width no-break space (BOM)
PRIVATE_START = 0xE000  # the placeholders of HIDDEN past C0 and DEL: U+E000 on, in order
_PLACEHOLDERS = "".join(chr(0x2400 + ord(c)) if c < " " else "\u2421" if c == "\x7f" else
                        chr(PRIVATE_START + k) for k, c in enumerate(HIDDEN))
_SHOW = str.maketrans(HIDDEN, _PLACEHOLDERS)
_REAL = str.maketrans(_PLACEHOLDERS, HIDDEN)
PLACEHOLDERS = frozenset(_PLACEHOLDERS)


def html_label(text: str) -> str:
    """Text from a file -> rich text: `printable`, then HTML-escaped."""
    return escape(printable(text))


def shown_source(text: str) -> tuple[str, bool]:
    """Source text -> (what the editor shows, whether placeholders stand for HIDDEN
    characters in it); CR LF stays a line end."""
    if not PLACEHOLDERS.isdisjoint(text):
        return text, False
    return "\r\n".join(part.translate(_SHOW) for part in text.split("\r\n")), True


def real_source(shown: str) -> str:
    """What the editor holds (placeholders) -> the source text (their HIDDEN characters)."""
    return shown.translate(_REAL)


def hidden_note(text: str, most: int = 3) -> str:
    """A line naming the HIDDEN characters of `text` by code and name, with the 1-based line
    of the first of each ('' when there are none), at most `most` kinds."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        for c in line:
            if c in HIDDEN:
                found.setdefault(c, number)
    if not found:
        return ""
    named = [f"U+{ord(c):04X} {unicodedata.name(c, 'control').lower()} (line {line})"
             for c, line in list(found.items())[:most]]
    more = f" and {len(found) - most} more" if len(found) > most else ""
    return f"invisible characters, shown in red: {', '.join(named)}{more}"
