"""Reading files users hand us: regular files only, never blocking, never past a size cap.

Every file sectorviz reads (pattern, `.npy` values, kernel source, `#include`s) goes through
`read_bytes`: the path is checked (no NUL byte, encodable), stat-ed to be a regular file (a
device such as /dev/zero or a named pipe is refused before it is opened), opened with
O_NONBLOCK (a pipe swapped in after the check still cannot hang the open), checked again with
fstat, and read up to `limit + 1` bytes so a file that grows while read is still refused.

Errors are PatternErrors at the caller's `place` that say "cannot read NAME", naming only the
file's base name. The reason (missing, a folder, too big, not UTF-8) is added for files the
user named or that lie in the pattern's own `folder`; a file outside that folder (a path in
a pattern file someone else wrote) gets only "cannot read NAME", so an error never tells
whether an unrelated path exists.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import PatternError
from .memo import note_read

MAX_TEXT_BYTES = 16 * 2**20  # pattern files and kernel sources
_OPEN_FLAGS = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0))


def _checked_path(path: str | Path, place: str) -> Path:
    text = os.fspath(path)
    if "\x00" in text:
        raise PatternError(place, "the file name contains a NUL byte")
    try:
        os.fsencode(text)
    except UnicodeError:
        raise PatternError(place, f"cannot read {Path(text).name}: the file name cannot be "
                                  "encoded for this system") from None
    return Path(text)


def outside(path: str | Path, folder: str | Path | None) -> bool:
    """Whether `path` (after following links) lies outside `folder`; None: no folder, so
    nothing is outside. Errors about files outside give no reason."""
    if folder is None:
        return False
    try:
        return not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))
    except (OSError, ValueError):
        return True


def read_error(path: str | Path, place: str, reason: str, hidden: bool) -> PatternError:
    """'cannot read NAME: reason' at `place`, or just 'cannot read NAME' when `hidden`."""
    name = Path(os.fspath(path)).name or os.fspath(path)
    return PatternError(place, f"cannot read {name}" + ("" if hidden else f": {reason}"))


def read_bytes(path: str | Path, limit: int, place: str, folder: str | Path | None = None,
               whole: bool = True) -> bytes:
    """The bytes of the regular file `path` -> bytes (at most `limit`).

    `whole`: a file over `limit` bytes is an error; otherwise its first `limit` bytes are
    returned (a header and the data it announces). PatternError at `place` when the path
    names no regular file or cannot be read; see the module notes for `folder`."""
    path = _checked_path(path, place)
    hidden = outside(path, folder)
    note_read(path)  # the cache's stamps: a change to this file invalidates what used it
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # devices and pipes are never opened
            raise read_error(path, place, _kind(mode), hidden)
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as err:
        raise read_error(path, place, err.strerror or "error", hidden) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise read_error(path, place, _kind(info.st_mode), hidden)
        if whole and info.st_size > limit:
            raise read_error(path, place, f"it is {info.st_size:,} bytes; at most {limit:,} "
                                          "are read", hidden)
        chunks, total = [], 0
        want = limit + 1 if whole else limit
        while total < want:
            chunk = os.read(fd, min(1 << 20, want - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise read_error(path, place, f"it is over {limit:,} bytes", hidden)
        return b"".join(chunks)
    except OSError as err:
        raise read_error(path, place, err.strerror or "error", hidden) from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    return "it is a folder" if stat.S_ISDIR(mode) else "not a regular file"


def read_text(path: str | Path, place: str, limit: int = MAX_TEXT_BYTES,
              folder: str | Path | None = None) -> str:
    """A regular UTF-8 text file (at most `limit` bytes) -> its text; PatternError at
    `place` otherwise (including a NUL byte, which no pattern or source may hold)."""
    data = read_bytes(path, limit, place, folder)
    hidden = outside(path, folder)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise read_error(path, place, f"not UTF-8 text (byte {err.start})", hidden) from None
    if "\x00" in text:
        raise read_error(path, place, f"it holds a NUL byte (at character "
                                      f"{text.index(chr(0))})", hidden)
    return text
