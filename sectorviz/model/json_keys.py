"""Duplicate keys in a JSON document: refused, not silently resolved to the last value.

`unique_pairs` is an `object_pairs_hook` for json.loads that raises DuplicateKey on a key seen
twice in one object (at any depth). Only then, on the error path, `first_duplicate` parses
the text again with the pure-Python scanner, walking each object's pairs itself, to find
the first key (in reading order) whose second occurrence starts at (line, column), 1-based.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from typing import Any, Callable


class DuplicateKey(ValueError):
    """A key that appears twice in one JSON object."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The pairs of one JSON object -> a dict; DuplicateKey on a key given twice."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


class _Found(Exception):
    def __init__(self, key: str, index: int):
        super().__init__(key, index)
        self.key, self.index = key, index


def _skip(s: str, i: int) -> int:
    # typeshed's json stubs leave out the module's undocumented names used here
    end: int = json.decoder.WHITESPACE.match(s, i).end()  # type: ignore[attr-defined]
    return end


def _walk_object(s_and_end: tuple[str, int], strict: bool,
                 scan_once: Callable[[str, int], tuple[Any, int]], *_rest: object
                 ) -> tuple[dict[str, Any], int]:
    """JSONObject's grammar for a text already known to parse: raises _Found at the first
    key seen twice in this object; values are skipped through `scan_once`."""
    s, i = s_and_end
    i = _skip(s, i)
    if s[i] == "}":
        return {}, i + 1
    seen: set[str] = set()
    while True:
        start = i
        key, i = json.decoder.scanstring(s, i + 1, strict)  # type: ignore[attr-defined]
        if key in seen:
            raise _Found(key, start)
        seen.add(key)
        i = _skip(s, _skip(s, i) + 1)  # past ':'
        _, i = scan_once(s, i)
        i = _skip(s, i)
        if s[i] == "}":
            return {}, i + 1
        i = _skip(s, i + 1)  # past ','


def first_duplicate(text: str) -> tuple[str, int, int] | None:
    """The first key given twice in one object of `text` -> (key, line, column of its
    second occurrence); None when it cannot be found (nesting too deep for this pass)."""
    decoder = json.JSONDecoder(parse_int=lambda _: 0, parse_float=lambda _: 0.0,
                               parse_constant=lambda _: 0)
    decoder.parse_object = _walk_object  # type: ignore[attr-defined]  # not in typeshed
    scan = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        scan(text, _skip(text, 0))
    except _Found as found:
        line = text.count("\n", 0, found.index) + 1
        return found.key, line, found.index - (text.rfind("\n", 0, found.index) + 1) + 1
    except (RecursionError, ValueError, IndexError, StopIteration):
        return None
    return None
