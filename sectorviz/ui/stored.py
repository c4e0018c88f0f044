"""Values kept in the settings file, read so that none can stop the app: each is checked
and, when it is not a value the app can use (a file edited by hand, or written by another
version), replaced by its default with a note saying so (shown in the status bar)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from ..model.errors import printable

NOTE_CHARS = 40  # of a bad stored value, at most this much is quoted in the note
PATH_CHARS = 240  # of a stored folder that is gone (the user's own name for it)


def _shown(value: Any, most: int = NOTE_CHARS) -> str:
    text = printable(str(value))
    return repr(text if len(text) <= most else text[:most] + "...")


class StoredSettings:
    """Reads from `store`; `notes` collects one line per value replaced by its default."""

    def __init__(self, store: QSettings):
        self.store = store
        self.notes: list[str] = []

    def _fallback(self, key: str, value: Any, default: Any, expected: str) -> Any:
        self.notes.append(f"settings: {key} {_shown(value)} is not {expected}; using {default}")
        return default

    def choice(self, key: str, choices: Iterable[str], default: str) -> str:
        """A stored name among `choices` -> it, else `default`."""
        choices = list(choices)
        value = self.store.value(key, default)
        if isinstance(value, str) and value in choices:
            return value
        return self._fallback(key, value, default, f"one of {', '.join(choices)}")

    def integer(self, key: str, low: int, high: int, default: int) -> int:
        """A stored whole number in [low, high] -> it, else `default`."""
        value = self.store.value(key, default)
        text = str(value).strip()
        if isinstance(value, (int, str)) and not isinstance(value, bool) and \
                text.isdigit() and len(text) <= len(str(high)) and low <= int(text) <= high:
            return int(text)
        return self._fallback(key, value, default, f"a whole number in [{low:,}, {high:,}]")

    def line(self, key: str, most: int, default: str) -> str:
        """A stored line of printable text of at most `most` characters -> it, else
        `default`."""
        value = self.store.value(key, default)
        if isinstance(value, str) and len(value) <= most and printable(value) == value:
            return value
        return self._fallback(key, value, default, f"a line of at most {most} characters")

    def blob(self, key: str) -> QByteArray | None:
        """Stored bytes (a window geometry or layout) -> them, None when absent or not bytes."""
        value = self.store.value(key)
        if value is None or isinstance(value, QByteArray):
            return value
        self.notes.append(f"settings: {key} is not a saved window layout; using the default")
        return None

    def folders(self, key: str) -> tuple[str, ...]:
        """A stored list of folders (include folders) -> those that are folders now, each
        absolute, once; a missing folder is left out with a note, a value that is no list of
        names counts as none (with a note)."""
        value = self.store.value(key, [])
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if names is None or not all(isinstance(n, str) for n in names):
            self.notes.append(f"settings: {key} {_shown(value)} is not a list of folders; "
                              "using none")
            return ()
        kept = []
        for name in names:
            if name and "\x00" not in name and os.path.isdir(name):
                kept.append(os.path.abspath(name))
            elif name:
                self.notes.append(f"settings: include folder {_shown(name, PATH_CHARS)} is "
                                  "not a folder; left out")
        return tuple(dict.fromkeys(kept))
