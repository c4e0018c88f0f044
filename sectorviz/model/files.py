"""Reading files users hand us: regular files only, never blocking, never past a size cap.

Every file sectorviz reads (pattern, `.npy` values, kernel source, `#include`s) goes through
`read_bytes`: opened with O_NONBLOCK (a named pipe cannot hang the open), checked with fstat
to be a regular file (a device such as /dev/zero is refused before any byte is read), and
read up to `limit + 1` bytes so a file that grows while read is still refused. Errors are
PatternErrors at the caller's `place` that say "cannot read NAME" and the reason, naming only
the file's base name.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import PatternError

MAX_TEXT_BYTES = 16 * 2**20  # pattern files and kernel sources


def _checked_path(path: str | Path, place: str) -> Path:
    text = os.fspath(path)
    if "\x00" in text:
        raise PatternError(place, "the file name contains a NUL byte")
    return Path(text)


def read_bytes(path: str | Path, limit: int, place: str) -> bytes:
    """The bytes of the regular file `path` (at most `limit` bytes) -> bytes.

    PatternError at `place` when the path names no regular file, cannot be opened or read,
    or holds more than `limit` bytes."""
    path = _checked_path(path, place)
    name = path.name or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise PatternError(place, f"cannot read {name}: {err.strerror or 'error'}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise PatternError(place, f"cannot read {name}: {kind}")
        if info.st_size > limit:
            raise PatternError(place, f"{name} is {info.st_size:,} bytes; at most "
                                      f"{limit:,} are read")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise PatternError(place, f"{name} is over {limit:,} bytes")
        return b"".join(chunks)
    except OSError as err:
        raise PatternError(place, f"cannot read {name}: {err.strerror or 'error'}") from None
    finally:
        os.close(fd)


def read_text(path: str | Path, place: str, limit: int = MAX_TEXT_BYTES) -> str:
    """A regular UTF-8 text file (at most `limit` bytes) -> its text; PatternError at
    `place` otherwise (including a NUL byte, which no pattern or source may hold)."""
    data = read_bytes(path, limit, place)
    name = Path(os.fspath(path)).name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PatternError(place, f"cannot read {name}: not UTF-8 text (byte {err.start})"
                           ) from None
    if "\x00" in text:
        raise PatternError(place, f"cannot read {name}: it holds a NUL byte "
                                  f"(at character {text.index(chr(0))})")
    return text
