"""`python -I -S supervise.py PARENT MEMORY FOLDER PROGRAM ARGS...`: one compiler tool run
under a supervisor that guarantees nothing of it outlives sectorviz (POSIX).

The supervisor (a session leader, started by bounded.run_bounded) starts the tool in a
process group of its own, its address space capped at MEMORY bytes (the soft limit; the hard
limit is never raised). When sectorviz ends in any way (SIGTERM or SIGINT from it, or its
death, even by SIGKILL: a parent-death signal), the supervisor kills the tool's whole group
(nvcc and the sh, gcc and cc1plus it started) and removes FOLDER, the run's private
temporary folder. When the tool ends by itself, whatever it left running in its group is
killed too; the exit status is the tool's (128 + N for a tool ended by signal N).

Only the standard library is used, so that it starts fast with -S.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import shutil
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def die_with_parent() -> None:
    """Ask Linux for SIGTERM when the parent (sectorviz) dies; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)  # this process's own symbols: libc's among them
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def limit_memory(nbytes: int) -> None:
    """Cap this process's address space (and its children's) at `nbytes`, or at the hard
    limit when that is lower: the hard limit is never raised."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        nbytes = min(nbytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (nbytes, hard))


class Supervisor:
    """The tool's process and what to remove when it must stop."""

    def __init__(self, folder: str):
        self.folder = folder
        self.tool: subprocess.Popen[bytes] | None = None

    def end_group(self) -> None:
        """Kill every process of the tool's group (gone already: nothing to do)."""
        if self.tool is not None:
            try:
                os.killpg(self.tool.pid, signal.SIGKILL)
            except OSError:
                pass

    def stop(self, signum: int, _frame: object) -> None:
        """A stop signal: end the tool's group, remove the private folder, exit."""
        self.end_group()
        if self.tool is not None:  # not Popen.wait: the interrupted one holds its lock
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.tool.pid, 0)
        shutil.rmtree(self.folder, ignore_errors=True)
        os._exit(128 + signum)

    def run(self, args: list[str], memory: int) -> int:
        """Run `args` with `memory` bytes of address space to its end -> its exit status
        (128 + N when signal N ended it)."""
        def prepare() -> None:  # in the tool's process, before it starts
            os.setpgid(0, 0)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            limit_memory(memory)
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:  # the tool is known to stop() before a stop signal can arrive
            self.tool = subprocess.Popen(args, preexec_fn=prepare)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        code = self.tool.wait()
        self.end_group()
        return code if code >= 0 else 128 - code


def main(argv: list[str]) -> int:
    """PARENT MEMORY FOLDER PROGRAM ARGS... -> the tool's exit status (PARENT: sectorviz's
    process id)."""
    parent, memory, folder, args = int(argv[0]), int(argv[1]), argv[2], argv[3:]
    supervisor = Supervisor(folder)
    for signum in STOP_SIGNALS:
        signal.signal(signum, supervisor.stop)
    die_with_parent()
    if os.getppid() != parent:  # sectorviz died before the parent-death signal was set
        supervisor.stop(signal.SIGTERM, None)
    try:
        return supervisor.run(args, memory)
    except (OSError, subprocess.SubprocessError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else err
        print(f"cannot run {os.path.basename(args[0])}: {reason}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
