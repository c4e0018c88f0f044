"""Writing a file all at once: saves, exports and screenshots go through a temporary file
beside the target, then a rename, so readers see the old file or the new one, never half of
one.

The rename replaces a link at the target rather than writing through it (no link is
followed). Refused before anything is written, as a RefusedOutput naming the path as given:
a folder, a named pipe, a device or a socket (the target or a link's target: only regular
files are written), a read-only file (as `cp` refuses it) and, unless `over_input`, a file
this run read (the pattern, its kernel source, includes or values: files.was_read) or will
read (`inputs`). Every failure is an OutputError whose str() is the one line 'PATH: reason'
(a missing folder, a full disk). check_output refuses a target before a long run. Temporary
files are
named `.NAME.sectorviz-PID-XXXXXXXX.tmp`: an interrupted run removes its own; one left by a
run that was killed (its PID no longer alive) is removed by the next write to that folder.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Sequence

from .model.files import was_read

TEMP_TAG = ".sectorviz-"
_LEFTOVER = re.compile(r"\..+\.sectorviz-(\d+)-[^.]+\.tmp\Z", re.DOTALL)


class OutputError(OSError):
    """A file sectorviz could not write: (errno, reason, the path as given); str() is the
    one line 'PATH: reason'."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class RefusedOutput(OutputError):
    """A target sectorviz will not write (see the module notes)."""


SPECIAL_FILES = {stat.S_ISFIFO: "a named pipe", stat.S_ISCHR: "a character device",
                 stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket"}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (or cannot be told apart from one that does)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True
    return True


def remove_leftovers(folder: Path) -> None:
    """Delete the temporary files in `folder` that runs now dead left behind."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        found = _LEFTOVER.match(entry.name)
        if found and not _alive(int(found.group(1))):
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _special_kind(path: Path) -> str | None:
    """What `path` is when it, or the file its link names, is a named pipe, a device or a
    socket ('a named pipe', 'a link to a socket', ...), else None."""
    for info, said in ((os.lstat, ""), (os.stat, "a link to ")):
        try:
            mode = info(path).st_mode
        except OSError:
            return None
        for test, kind in SPECIAL_FILES.items():
            if test(mode):
                return said + kind
    return None


def _is_input(path: Path, inputs: Sequence[str | Path]) -> bool:
    """Whether `path` (links followed) is one of the files `inputs` names."""
    def key(p: str | Path) -> tuple[int, int] | None:
        try:
            info = os.stat(p)
        except (OSError, ValueError):
            return None
        return info.st_dev, info.st_ino
    target = key(path)
    return target is not None and any(key(p) == target for p in inputs)


def _checked_target(path: Path, over_input: bool, inputs: Sequence[str | Path] = ()) -> int:
    """The mode the new file gets (the old file's, or 0o666 less the umask); RefusedOutput
    for a folder, a pipe, device or socket, a read-only file or (unless `over_input`) a file
    this run read or will read (`inputs`)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0o666 & ~_umask()
    if stat.S_ISDIR(info.st_mode):
        raise RefusedOutput(errno.EISDIR, "it is a folder", str(path))
    special = _special_kind(path)
    if special is not None:
        raise RefusedOutput(errno.EINVAL, f"it is {special}; sectorviz writes regular files "
                                          "only", str(path))
    if not over_input and (was_read(path) or _is_input(path, inputs)):
        raise RefusedOutput(errno.EPERM, "it is a file this run read (the pattern or one of "
                                         "its files); choose another name", str(path))
    if stat.S_ISLNK(info.st_mode):
        return 0o666 & ~_umask()  # the link is replaced, its target left alone
    if not info.st_mode & 0o222 or not os.access(path, os.W_OK):
        raise RefusedOutput(errno.EACCES, "it is read-only", str(path))
    return stat.S_IMODE(info.st_mode)


def check_output(path: str | Path, inputs: Sequence[str | Path] = ()) -> None:
    """Refuse `path` before a long run: what write_atomic would refuse (an input among
    `inputs`, the files the run will read in other processes, included), or a folder to
    write in that is no folder (OutputError 'PATH: No such file or directory')."""
    path = Path(path)
    _checked_target(path, False, inputs)
    if not path.parent.is_dir():
        code = errno.ENOTDIR if path.parent.exists() else errno.ENOENT
        raise OutputError(code, os.strerror(code), str(path))


def write_atomic(path: str | Path, data: str | bytes, over_input: bool = False) -> None:
    """Write `data` (text as UTF-8) to `path` through a temporary file and a rename (see the
    module notes for what is refused). The file gets the mode a new file would (0o666 less
    the umask), or keeps the old file's mode. An OutputError names `path`, never the
    temporary file; the temporary file is removed on any failure or interruption."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    mode = _checked_target(path, over_input)
    remove_leftovers(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}{TEMP_TAG}"
                                                          f"{os.getpid()}-", suffix=".tmp")
    except OSError as err:
        raise OutputError(err.errno, err.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(err.errno, err.strerror, str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
