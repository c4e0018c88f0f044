"""One cache for everything derived from a pattern, valid while the files it read are unchanged.

A pattern is an immutable value, but what it means depends on files: its kernel source and
`#include`s, `.npy` values, compiled PTX. An entry is keyed by what it is (`kind`), the
pattern and the arguments, and remembers the stamps (path, size, modification time in ns) of
every file its front end read; a lookup re-stats those files and recomputes on any change,
so editing a `.cu` in another editor gives new numbers for the same pattern. Entries of one
kind are evicted least recently used past that kind's limit; `clear()` empties everything.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Iterator, TypeVar

T = TypeVar("T")

#: most entries kept per kind; a kind not listed keeps DEFAULT_LIMIT
LIMITS = {"kernel": 8, "analysis": 8, "per-warp analysis": 4}
DEFAULT_LIMIT = 64


@dataclass(frozen=True)
class FileStamp:
    """A file as it was when read: its path, size in bytes and modification time in ns
    (-1, -1 for a file that did not exist, so that its appearing counts as a change)."""

    path: str
    size: int
    mtime_ns: int


def stamp(path: str | Path) -> FileStamp:
    """The stamp of `path` now."""
    text = os.fspath(path)
    try:
        info = os.stat(text)
    except (OSError, ValueError):
        return FileStamp(text, -1, -1)
    return FileStamp(text, info.st_size, info.st_mtime_ns)


def stamps(paths: Iterable[str | Path]) -> tuple[FileStamp, ...]:
    """Stamps of `paths` now, each path once, in a stable order."""
    return tuple(stamp(p) for p in sorted(dict.fromkeys(os.fspath(p) for p in paths)))


def changed(recorded: tuple[FileStamp, ...]) -> bool:
    """Whether any file of `recorded` differs from its stamp now."""
    return any(stamp(s.path) != s for s in recorded)


_reads: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("reads", default=None)


def note_read(path: str | Path) -> None:
    """Record that `path` was read (files.read_bytes calls this for every file)."""
    seen = _reads.get()
    if seen is not None:
        seen.add(os.fspath(path))


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """Collect the paths of every file read inside the block (nested blocks see their own)."""
    seen: set[str] = set()
    token = _reads.set(seen)
    try:
        yield seen
    finally:
        _reads.reset(token)
        outer = _reads.get()
        if outer is not None:
            outer.update(seen)


@dataclass
class _Entry:
    value: Any
    files: tuple[FileStamp, ...]


class Memo:
    """(kind, key) -> value, recomputed when a file the value was computed from changed."""

    def __init__(self) -> None:
        self._kinds: dict[str, OrderedDict[Hashable, _Entry]] = {}
        self._lock = threading.RLock()

    def get(self, kind: str, key: Hashable, compute: Callable[[], T],
            files: Callable[[], Iterable[str | Path]] = tuple) -> T:
        """The value of `compute()` for (kind, key), cached; `files()` (called after a
        compute) names files read other than through files.read_bytes (a compiler's)."""
        entry = self.peek_entry(kind, key)
        if entry is not None:
            for s in entry.files:  # a value computed from this one depends on its files
                note_read(s.path)
            value: T = entry.value
            return value
        with recording() as read:
            value = compute()
        self.put(kind, key, value, stamps([*read, *files()]))
        return value

    def peek_entry(self, kind: str, key: Hashable) -> _Entry | None:
        """The valid entry of (kind, key), or None (a stale one is dropped)."""
        with self._lock:
            entries = self._kinds.get(kind)
            if entries is None or key not in entries:
                return None
            entry = entries[key]
            if changed(entry.files):
                del entries[key]
                return None
            entries.move_to_end(key)
            return entry

    def peek(self, kind: str, key: Hashable) -> Any | None:
        """The cached value of (kind, key) if it is still valid, else None."""
        entry = self.peek_entry(kind, key)
        return None if entry is None else entry.value

    def put(self, kind: str, key: Hashable, value: Any, files: tuple[FileStamp, ...]) -> None:
        """Keep `value` for (kind, key), valid while `files` keep their stamps."""
        with self._lock:
            entries = self._kinds.setdefault(kind, OrderedDict())
            entries[key] = _Entry(value, files)
            entries.move_to_end(key)
            while len(entries) > LIMITS.get(kind, DEFAULT_LIMIT):
                entries.popitem(last=False)

    def files(self, kind: str, key: Hashable) -> tuple[FileStamp, ...]:
        """The stamps the entry of (kind, key) was computed from (() if none is cached)."""
        with self._lock:
            entries = self._kinds.get(kind)
            if entries is None or key not in entries:
                return ()
            return entries[key].files

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._kinds.clear()


#: the process's one cache
MEMO = Memo()
