"""Running a compiler tool as a bounded child process: an argument list (never a shell), a
wall-clock limit, an address-space limit per process on POSIX (inherited by every program
nvcc starts), and the whole process group ended when the time is up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass

if sys.platform != "win32":
    import resource  # imported here: the forked child only calls setrlimit

from ..model.errors import PatternError

COMPILE_SECONDS = 120.0  # wall-clock seconds one compiler run may take
COMPILE_MEMORY_BYTES = 8 * 2**30  # address space of each process of a compiler run


@dataclass(frozen=True)
class Finished:
    """A compiler run that ended in time: its exit status and its output as text."""

    returncode: int
    stdout: str
    stderr: str


def _limit_memory(nbytes: int):
    """A preexec function that caps the child's address space at `nbytes` (POSIX only)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return limit


def run_bounded(args: list[str], place: str, what: str, cwd: str | None = None,
                seconds: float | None = None, memory: int | None = None,
                stdin: bytes | None = None) -> Finished:
    """Run `args` (args[0] the program; `stdin` its input) with its output captured ->
    Finished; PatternError at `place` in one line when it runs past `seconds` (its process
    group is killed) or cannot start. `what` names the run in those lines ("the compile")."""
    seconds = COMPILE_SECONDS if seconds is None else seconds
    memory = COMPILE_MEMORY_BYTES if memory is None else memory
    posix = sys.platform != "win32"
    try:
        proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=posix,
                                preexec_fn=_limit_memory(memory) if posix else None)
    except OSError as err:
        raise PatternError(place, f"cannot run {os.path.basename(args[0])}: "
                                  f"{err.strerror or err}") from None
    try:
        out, err = proc.communicate(stdin, timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(proc, posix)
        raise PatternError(place, f"{what} took over {seconds:g} s and was stopped (a template "
                                  "or macro expansion that does not end?)") from None
    return Finished(proc.returncode, out.decode("utf-8", "replace"),
                    err.decode("utf-8", "replace"))


def _kill(proc: subprocess.Popen, posix: bool) -> None:
    """End `proc` and, on POSIX, every process it started; wait for it."""
    try:
        if posix:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except OSError:
        pass
    proc.communicate()
