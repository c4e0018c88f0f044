"""The PTX cache: one JSON file per compile, in SECTORVIZ_CACHE_DIR, else
$XDG_CACHE_HOME/sectorviz/ptx, else ~/.cache/sectorviz/ptx (%LOCALAPPDATA% on Windows).

An entry's file name is the SHA-256 of what the compile was asked (compiler and release,
architecture, flags, kernel function, the main source's bytes); the entry lists every file of
the pattern's root the compile read with the SHA-256 of its bytes, and is used only while all
of them still hold those bytes. Entries are written atomically; an unreadable one is a miss.
The folder keeps the MAX_ENTRIES most recently used entries (a hit touches its entry).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..atomic import write_atomic
from ..model.errors import PatternError
from ..model.files import MAX_TEXT_BYTES, read_bytes

CACHE_FORMAT = 1
CACHE_DIR_VAR = "SECTORVIZ_CACHE_DIR"
MAX_ENTRIES = 512  # entries kept; storing one more removes the least recently used


def cache_dir() -> Path:
    """The folder PTX entries live in (not created here)."""
    if os.environ.get(CACHE_DIR_VAR):
        return Path(os.environ[CACHE_DIR_VAR])
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    return Path(base or Path.home() / ".cache") / "sectorviz" / "ptx"


def request_key(parts: dict) -> str:
    """The hex SHA-256 naming the entry of a compile asked `parts` (JSON-able)."""
    text = json.dumps({"format": CACHE_FORMAT, **parts}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digest(path: str) -> str | None:
    """The hex SHA-256 of a file's bytes, None when it cannot be read."""
    try:
        return hashlib.sha256(read_bytes(path, MAX_TEXT_BYTES, "cache")).hexdigest()
    except PatternError:
        return None


def load(key: str) -> dict | None:
    """The stored compile under `key` whose read files are all unchanged, else None."""
    path = cache_dir() / f"{key}.json"
    try:
        entry = json.loads(read_bytes(path, 16 * MAX_TEXT_BYTES, "cache"))
        files = entry["files"]
    except (PatternError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, dict) or any(file_digest(f) != d for f, d in files.items()):
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return entry


def store(key: str, entry: dict) -> None:
    """Keep `entry` (with "files": {path: digest}) under `key`; a cache that cannot be
    written is no error (the next run compiles again)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / f"{key}.json", json.dumps(entry))
        _prune(folder)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    """Remove the least recently used entries beyond MAX_ENTRIES."""
    entries = []
    for path in folder.glob("*.json"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True)[MAX_ENTRIES:]:
        path.unlink(missing_ok=True)
