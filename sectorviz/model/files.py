"""Reading files users hand us: regular files only, never blocking, never past a size cap.

Every file sectorviz reads (pattern, `.npy` values, kernel source, `#include`s) goes through
`read_bytes`: the path is checked (no NUL byte, encodable), stat-ed to be a regular file (a
device such as /dev/zero or a named pipe is refused before it is opened), opened with
O_NONBLOCK (a pipe swapped in after the check still cannot hang the open), checked again with
fstat, and read up to `limit + 1` bytes so a file that grows while read is still refused.

Errors are PatternErrors at the caller's `place` that say "cannot read NAME: reason",
naming the file's base name. Every file read is remembered (`was_read`), so that no output
of the same run replaces it.

The one rule for paths inside a pattern (its kernel `source`, its `#include`s, its `.npy`
values files): `Roots`. A pattern reads only inside its root (the pattern file's folder or,
in a repository, the nearest folder above it holding `.git`) and the include folders the
user named (`--include-dir DIR`); links are followed before the check. A path that leaves
them is refused before anything touches it (never opened nor probed), in a line that names
the path as the pattern wrote it, so no message tells whether it exists or quotes from it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .errors import PatternError
from .memo import note_read

MAX_TEXT_BYTES = 16 * 2**20  # pattern files and kernel sources
_read_files: dict[tuple[int, int], str] = {}  # (device, inode) of each file read -> its path
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


def root_of(folder: str | Path) -> Path:
    """A pattern's folder -> its root: the nearest folder at or above it holding `.git` (a
    repository's top folder), else the folder itself; links resolved."""
    folder = Path(os.path.realpath(folder))
    for above in (folder, *folder.parents):
        if os.path.lexists(above / ".git"):
            return above
    return folder


def lies_in(path: str | Path, folder: str | Path) -> bool:
    """Whether `path`, links followed, lies in `folder` (itself a real path)."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(folder)
    except (OSError, ValueError):
        return False


@dataclass(frozen=True)
class Roots:
    """Where a pattern's files may be read from: `base` (the pattern's folder, where
    relative paths start), its root (root_of) and the user's include folders."""

    base: Path
    folders: tuple[Path, ...]  # resolved: the root first, then the include folders

    def allows(self, path: str | Path) -> bool:
        """Whether `path`, links followed, lies inside one of the folders."""
        return any(lies_in(path, folder) for folder in self.folders)

    def refusal(self, typed: str, place: str, column: int | None = None) -> PatternError:
        """The one line for a path outside: it names the path as typed, nothing more."""
        return PatternError(place, f"{typed} lies outside the pattern's root {self.folders[0]}"
                                   " (only files there or in an --include-dir are read)",
                            column)

    def resolve(self, typed: str, place: str) -> Path:
        """A path as a pattern writes it (relative to `base`, or absolute) -> the path to
        read; PatternError (refusal) when it leaves the folders."""
        path = self.base / _checked_path(typed, place)
        if not self.allows(path):
            raise self.refusal(typed, place)
        return path


def pattern_roots(base_dir: str | Path, include_dirs: tuple[str, ...] = ()) -> Roots:
    """The Roots of a pattern in `base_dir` with the user's `include_dirs`."""
    return Roots(Path(base_dir), (root_of(base_dir),
                                  *(Path(os.path.realpath(d)) for d in include_dirs)))


def read_error(path: str | Path, place: str, reason: str) -> PatternError:
    """'cannot read NAME: reason' at `place`."""
    name = Path(os.fspath(path)).name or os.fspath(path)
    return PatternError(place, f"cannot read {name}: {reason}")


def _opened(fd: int, path: Path) -> str:
    """The path of the file open as `fd` (Linux names it in /proc), else `path` resolved."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def read_bytes(path: str | Path, limit: int, place: str, whole: bool = True,
               roots: Roots | None = None) -> bytes:
    """The bytes of the regular file `path` -> bytes (at most `limit`).

    `whole`: a file over `limit` bytes is an error; otherwise its first `limit` bytes are
    returned (a header and the data it announces). PatternError at `place` when the path
    names no regular file or cannot be read, or (with `roots`) when the file opened lies
    outside them after all (a link swapped in after Roots.resolve checked the path)."""
    path = _checked_path(path, place)
    note_read(path)  # the cache's stamps: a change to this file invalidates what used it
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # devices and pipes are never opened
            raise read_error(path, place, _kind(mode))
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as err:
        raise read_error(path, place, err.strerror or "error") from None
    try:
        if roots is not None and not roots.allows(_opened(fd, path)):
            raise roots.refusal(os.fspath(path), place)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise read_error(path, place, _kind(info.st_mode))
        _read_files[(info.st_dev, info.st_ino)] = os.fspath(path)
        if whole and info.st_size > limit:
            raise read_error(path, place, f"it is {info.st_size:,} bytes; at most {limit:,} "
                                          "are read")
        chunks, total = [], 0
        want = limit + 1 if whole else limit
        while total < want:
            chunk = os.read(fd, min(1 << 20, want - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise read_error(path, place, f"it is over {limit:,} bytes")
        return b"".join(chunks)
    except OSError as err:
        raise read_error(path, place, err.strerror or "error") from None
    finally:
        os.close(fd)


def was_read(path: str | Path) -> bool:
    """Whether `path` (links followed, hard links too) is a file this process has read and
    that still is where it was read (an inode number reused by a new file does not count)."""
    try:
        info = os.stat(path)
        key = (info.st_dev, info.st_ino)
        read = os.stat(_read_files[key])
    except (OSError, ValueError, KeyError):
        return False
    return (read.st_dev, read.st_ino) == key


def _kind(mode: int) -> str:
    return "it is a folder" if stat.S_ISDIR(mode) else "not a regular file"


def read_text(path: str | Path, place: str, limit: int = MAX_TEXT_BYTES,
              roots: Roots | None = None) -> str:
    """A regular UTF-8 text file (at most `limit` bytes) -> its text; PatternError at
    `place` otherwise (including a NUL byte, which no pattern or source may hold)."""
    data = read_bytes(path, limit, place, roots=roots)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise read_error(path, place, f"not UTF-8 text (byte {err.start})") from None
    if "\x00" in text:
        raise read_error(path, place, f"it holds a NUL byte (at character "
                                      f"{text.index(chr(0))})")
    return text
