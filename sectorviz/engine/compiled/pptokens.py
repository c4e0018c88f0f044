"""A C/C++ file's preprocessing tokens, as translation phases 1 to 3 make them, for the
include policy (includes.py): line splices joined, comments dropped (a comment between `#`
and `include` is whitespace), string, character and raw string literals kept whole, digraphs
(`%:include`) read as what they stand for, and each token with its physical line.

Trigraphs (`??=` for `#`, `??/` for a backslash) are on in some modes (-std=c++11) and off
in others, so `token_readings` gives both readings of a file: a check that looks at both
cannot be fooled by either.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterator

_TRIGRAPHS = {"=": "#", "/": "\\", "(": "[", ")": "]", "<": "{", ">": "}", "'": "^",
              "!": "|", "-": "~"}
_TRIGRAPH = re.compile(r"\?\?([=/()<>'!-])")
_SPLICE = re.compile(r"\\[ \t\f\v]*\r?\n")
_PREFIX = r"(?:u8|u|U|L)?"
_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))"
    rf"|(?P<raw>{_PREFIX}R\"(?P<delim>[^()\\\s\"]{{0,16}})\(.*?(?:\)(?P=delim)\"|\Z))"
    rf"|(?P<string>{_PREFIX}\"(?:[^\"\\\n]|\\.)*\"?|{_PREFIX}'(?:[^'\\\n]|\\.)*'?)"
    r"|(?P<ident>(?:[^\W\d]|\$)(?:\w|\$)*)"
    r"|(?P<number>\.?\d(?:[eEpP][+-]|[\w.']|\$)*)"
    r"|(?P<newline>\n)"
    r"|(?P<space>[ \t\f\v\r]+)"
    r"|(?P<punct>%:%:|##|%:|<:|:>|<%|%>|\.\.\.|[^\s])",
    re.DOTALL)
DIGRAPHS = {"%:": "#", "%:%:": "##", "<:": "[", ":>": "]", "<%": "{", "%>": "}"}


@dataclass(frozen=True)
class Token:
    """One preprocessing token: its kind ("ident", "string", "number", "punct", "newline"),
    its text (a digraph as what it stands for), its 1-based physical line, and where it
    starts and ends in the file's logical text (`Tokens.text`)."""

    kind: str
    text: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Tokens:
    """A file's logical text (splices joined) and its tokens."""

    text: str
    tokens: tuple[Token, ...]

    def directives(self) -> Iterator[tuple[str, list[Token]]]:
        """(directive name, the tokens after it up to the line's end) of every `#name` line
        (inactive branches included)."""
        at_line_start = True
        for i, tok in enumerate(self.tokens):
            if tok.kind == "newline":
                at_line_start = True
                continue
            if at_line_start and tok.text == "#" and i + 1 < len(self.tokens) \
                    and self.tokens[i + 1].kind == "ident":
                rest = []
                for after in self.tokens[i + 2:]:
                    if after.kind == "newline":
                        break
                    rest.append(after)
                yield self.tokens[i + 1].text, rest
            at_line_start = False


def token_readings(text: str) -> tuple[Tokens, ...]:
    """The file's tokens without trigraphs, and, when it holds any, with them."""
    plain = tokens(text)
    if not _TRIGRAPH.search(text):
        return (plain,)
    return plain, tokens(_TRIGRAPH.sub(lambda m: _TRIGRAPHS[m.group(1)], text))


def tokens(text: str) -> Tokens:
    """The tokens of `text` (comments and spaces dropped)."""
    logical, lines = _join_splices(text)
    found = []
    for match in _TOKEN.finditer(logical):
        kind = match.lastgroup if match.lastgroup != "delim" else "raw"
        if kind in ("comment", "space"):
            continue
        word = match.group()
        found.append(Token("string" if kind == "raw" else str(kind),
                           DIGRAPHS.get(word, word) if kind == "punct" else word,
                           _line_at(lines, match.start()), match.start(), match.end()))
    return Tokens(logical, tuple(found))


def _join_splices(text: str) -> tuple[str, list[int]]:
    """`text` with backslash-newlines removed (the newlines they held put back after the
    logical line, so later lines keep their numbers) -> (logical text, the offset of each
    newline in it that ends a physical line)."""
    out, newlines, carried, at = [], [], 0, 0
    for line in text.splitlines(keepends=True):
        body = _SPLICE.sub("", line) if line.endswith("\n") else line
        if body != line:  # a splice: the logical line goes on
            carried += 1
            out.append(body)
            at += len(body)
            continue
        out.append(body)
        at += len(body)
        if body.endswith("\n"):
            newlines.append(at - 1)
            for _ in range(carried):
                out.append("\n")
                newlines.append(at)
                at += 1
            carried = 0
    return "".join(out), newlines


def _line_at(newlines: list[int], offset: int) -> int:
    """The 1-based physical line of a logical offset (a spliced line counts as its first)."""
    return bisect.bisect_left(newlines, offset) + 1
