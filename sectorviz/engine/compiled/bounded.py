"""Running a compiler tool as a bounded child process that no shell can read and nothing of
which outlives sectorviz.

- An argument list, never a shell; and because nvcc hands parts of its own command line to a
  shell when it runs its sub-tools, every path sectorviz puts there is checked to hold only
  characters no shell or nvcc splits or expands (`shell_safe`): the private folder, include
  folders, the tools' folders on PATH.
- A clean, fixed environment (`tool_environment`): the tool's own folder and the host
  compiler's on PATH, a private temporary folder as TMPDIR and HOME, nothing of the user's
  variables (NVCC_PREPEND_FLAGS, a TMPDIR holding `$(...)`, secrets a compile error could
  echo).
- A private temporary folder per run (`private_folder`, mode 0700), removed afterwards.
- On POSIX the tool runs under supervise.py (a session of its own, its own process group, a
  parent-death signal): a time-out, Ctrl-C, SIGTERM or SIGKILL of sectorviz, or the app
  closing, ends the tool's whole group and removes its private folder.
- An address-space limit per process (inherited by every program nvcc starts), lowered to
  the session's hard limit when that is lower (`memory_limit`, said in the error).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

if sys.platform != "win32":
    import resource

from ...model.errors import PatternError

COMPILE_SECONDS = 120.0  # wall-clock seconds one compiler run may take
COMPILE_MEMORY_BYTES = 8 * 2**30  # address space of each process of a compiler run
STOP_SECONDS = 5.0  # how long a stopped supervisor may take to end its tool's group
SUPERVISE_ARG = "--supervise"  # the packaged app's executable supervises when given this
SUPERVISOR = Path(__file__).resolve().with_name("supervise.py")
HOST_COMPILERS = ("g++", "gcc", "c++", "cc", "clang++", "cl")  # what nvcc may look for
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
WINDOWS_VARIABLES = ("SYSTEMROOT", "WINDIR", "COMSPEC", "PATHEXT", "INCLUDE", "LIB", "LIBPATH")
_SAFE = re.compile(r"[\w./+@\\:-]+" if os.name == "nt" else r"[\w./+@-]+")
POSIX = sys.platform != "win32"


@dataclass(frozen=True)
class Finished:
    """A compiler run that ended in time: its exit status and its output as text."""

    returncode: int
    stdout: str
    stderr: str


def shell_safe(text: str) -> bool:
    """Whether `text` (a path) holds only letters, digits and `_ . / + @ -`: nothing that a
    shell expands or splits ($, backticks, quotes, spaces) and no comma, where nvcc splits a
    list."""
    return bool(_SAFE.fullmatch(text))


def memory_limit() -> int:
    """The address space each process of a compile gets: COMPILE_MEMORY_BYTES, or the
    session's hard limit (`ulimit -Hv`) when that is lower."""
    if not POSIX:
        return COMPILE_MEMORY_BYTES
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    return COMPILE_MEMORY_BYTES if hard == resource.RLIM_INFINITY else \
        min(COMPILE_MEMORY_BYTES, hard)


def memory_words(nbytes: int) -> str:
    """`8 GiB per process`, or with the reason when the session's hard limit lowered it."""
    said = f"{nbytes / 2**30:.3g} GiB per process"
    if nbytes < COMPILE_MEMORY_BYTES:
        said += (f": this session's hard limit (ulimit -Hv), below sectorviz's "
                 f"{COMPILE_MEMORY_BYTES / 2**30:g} GiB")
    return said


def _temporary_base() -> str:
    """Where private folders are made: the system's temporary folder when its real path is
    shell-safe (a TMPDIR holding `$(...)` is not), else the first safe fallback."""
    for base in (tempfile.gettempdir(), "/tmp", "/var/tmp", str(Path.home())):
        real = os.path.realpath(base)
        if shell_safe(real) and os.path.isdir(real) and os.access(real, os.W_OK):
            return real
    raise PatternError("kernel", "no temporary folder whose path a compiler can be given "
                                 "safely (set TMPDIR to a folder without spaces, quotes or $)")


@contextlib.contextmanager
def private_folder(prefix: str = "sectorviz-") -> Iterator[Path]:
    """A new folder only this user can enter, on a shell-safe path, removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=_temporary_base()))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _program_folders(program: str) -> list[str]:
    """The folder of `program` as found and the folder of the file it links to."""
    return [os.path.dirname(program), os.path.dirname(os.path.realpath(program))]


def tool_environment(folder: Path, program: str) -> dict[str, str]:
    """The whole environment a tool runs with: PATH of the tool's folders, the host
    compiler's (as found on the user's PATH) and the system's, each shell-safe; `folder` as
    TMPDIR, TMP, TEMP and HOME; the C locale. On Windows also the variables the host compiler
    needs (INCLUDE, LIB, ...)."""
    found = _program_folders(program)
    for compiler in HOST_COMPILERS:
        where = shutil.which(compiler)
        if where:
            found += _program_folders(where)
    path = [p for p in dict.fromkeys([*found, *SYSTEM_PATH]) if p and shell_safe(p)]
    env = {"PATH": os.pathsep.join(path), "LC_ALL": "C", "LANG": "C",
           **{name: str(folder) for name in ("TMPDIR", "TMP", "TEMP", "HOME")}}
    if not POSIX:
        env.update({k: os.environ[k] for k in WINDOWS_VARIABLES if k in os.environ})
    return env


def _supervised(args: list[str], folder: Path, memory: int) -> list[str]:
    """`args` run under supervise.py (its parent, memory cap and private folder first)."""
    if getattr(sys, "frozen", False):
        head = [sys.executable, SUPERVISE_ARG]
    else:
        head = [sys.executable, "-I", "-S", str(SUPERVISOR)]
    return [*head, str(os.getpid()), str(memory), str(folder), *args]


def run_bounded(args: list[str], place: str, what: str, folder: Path | None = None,
                cwd: str | None = None, seconds: float | None = None,
                stdin: bytes | None = None) -> Finished:
    """Run `args` (args[0] the program; `stdin` its input) with its output captured, in the
    environment tool_environment gives for `folder` (a private folder of its own when None)
    -> Finished; PatternError at `place` in one line when it runs past `seconds` (its process
    group is killed) or cannot start. `what` names the run in those lines ("the compile")."""
    if folder is None:
        with private_folder() as own:
            return run_bounded(args, place, what, own, cwd, seconds, stdin)
    seconds = COMPILE_SECONDS if seconds is None else seconds
    command = _supervised(args, folder, memory_limit()) if POSIX else args
    try:
        proc = subprocess.Popen(command, cwd=cwd or str(folder),
                                env=tool_environment(folder, args[0]),
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=POSIX)
    except OSError as err:
        raise PatternError(place, f"cannot run {os.path.basename(args[0])}: "
                                  f"{err.strerror or err}") from None
    try:
        out, err = proc.communicate(stdin, timeout=seconds)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise PatternError(place, f"{what} took over {seconds:g} s and was stopped (a template "
                                  "or macro expansion that does not end?)") from None
    except BaseException:  # Ctrl-C, or the app closing: the tool's group goes with us
        _stop(proc)
        raise
    return Finished(proc.returncode, out.decode("utf-8", "replace"),
                    err.decode("utf-8", "replace"))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a run: on POSIX its supervisor ends the tool's group and removes its folder; wait
    for it (kill it when it does not end in STOP_SECONDS)."""
    with contextlib.suppress(OSError):
        proc.send_signal(signal.SIGTERM) if POSIX else proc.kill()
    try:
        proc.communicate(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
