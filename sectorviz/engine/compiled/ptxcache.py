"""The PTX cache: one JSON file per compile, in SECTORVIZ_CACHE_DIR, else
$XDG_CACHE_HOME/sectorviz/ptx, else ~/.cache/sectorviz/ptx (%LOCALAPPDATA% on Windows).

An entry's file name is the SHA-256 of what the compile was asked (compiler and release,
architecture, flags, kernel function, the main source's bytes, the pattern's root). The entry
holds the SHA-256 of its own PTX, every file of the pattern's root the compile read with the
SHA-256 of its bytes, and every path of the root it looked up (an include or `__has_include`
candidate) with whether it was a file; it is used only while its PTX has that digest, every
file still holds those bytes and every lookup would answer the same (a header created since
is a miss).
An entry of the wrong shape is a miss too, never a number or an internal error. Entries are
written atomically, readable by their owner only, in a folder only the owner can enter. The
folder keeps the MAX_ENTRIES most recently used entries (a hit touches an entry last touched
over TOUCH_AFTER_S ago: an entry's file is an input of what was computed from it, so a touch
at every hit would make another process's results stale, such as the app's worker processes',
each of which reads the entry).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from ...atomic import write_atomic
from ...model.errors import PatternError
from ...model.files import MAX_TEXT_BYTES, read_bytes
from .includes import holds_file

CACHE_FORMAT = 5  # 3: "sass", the SASS memory instructions (sass.code_json); 4: names
# demangled in process, "struct_bytes" and "launch_shared_bytes" (hostfacts.py); 5: the
# include policy checks the -D values (an entry made before may have let one through)
CACHE_DIR_VAR = "SECTORVIZ_CACHE_DIR"
MAX_ENTRIES = 512  # entries kept; storing one more removes the least recently used
TOUCH_AFTER_S = 24 * 3600  # a hit marks its entry used again at most this often


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
    """The stored compile under `key` whose PTX, read files and lookups are all unchanged,
    else None (a missing, malformed or stale entry)."""
    path = cache_dir() / f"{key}.json"
    try:
        entry = json.loads(read_bytes(path, 16 * MAX_TEXT_BYTES, "cache"))
    except (PatternError, ValueError):
        return None
    if not _well_formed(entry) or not _still_holds(entry):
        return None
    try:
        if time.time() - path.stat().st_mtime > TOUCH_AFTER_S:
            os.utime(path)
    except OSError:
        pass
    return entry


_SHAPE = {"ptx": str, "ptx_sha256": str, "entry": str, "name": str, "params": list,
          "files": dict, "lookups": dict, "host_code_left_out": bool}


def _well_formed(entry: object) -> bool:
    """Whether `entry` has every field of a stored compile, each of its type."""
    if not isinstance(entry, dict) or any(not isinstance(entry.get(k), t)
                                          for k, t in _SHAPE.items()):
        return False
    return all(isinstance(p, str) for p in entry["params"]) and \
        all(isinstance(f, str) and (d is None or isinstance(d, str))
            for f, d in entry["files"].items()) and \
        all(isinstance(p, str) and isinstance(b, bool) for p, b in entry["lookups"].items()) \
        and _sass_well_formed(entry.get("sass"))


def _sass_well_formed(code: object) -> bool:
    """Whether an entry's "sass" is null or sass.code_json's form."""
    if code is None:
        return True
    return isinstance(code, dict) and isinstance(code.get("assembler"), str) and \
        isinstance(code.get("note", ""), str) and isinstance(code.get("ops"), list) and all(
            isinstance(op, list) and len(op) == 4 and isinstance(op[0], int) and
            isinstance(op[1], str) and isinstance(op[2], int) and
            (op[3] is None or isinstance(op[3], int)) for op in code["ops"])


def _still_holds(entry: dict) -> bool:
    """Whether the entry's PTX, files and lookups are as they were when it was stored."""
    return ptx_digest(entry["ptx"]) == entry["ptx_sha256"] and \
        all(file_digest(f) == d for f, d in entry["files"].items()) and \
        all(holds_file(p) == b for p, b in entry["lookups"].items())


def ptx_digest(ptx: str) -> str:
    """The hex SHA-256 of a PTX text's UTF-8 bytes."""
    return hashlib.sha256(ptx.encode("utf-8")).hexdigest()


def store(key: str, entry: dict) -> None:
    """Keep `entry` (with "files" and "lookups", see load) under `key` with its PTX's
    digest; a cache that cannot be written is no error (the next run compiles again)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / f"{key}.json"
        write_atomic(path, json.dumps({**entry, "ptx_sha256": ptx_digest(entry["ptx"])}),
                     over_input=True)  # an entry this run loaded, now with its SASS
        path.chmod(0o600)  # the folder, 0700 when made here, keeps it private till then
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
