"""The reading as written, worked out in a child process while this one counts the compiled
reading: the report compares the two (model.compiler_changes) and they share no work, so on
a second core the report takes the longer of the two, not their sum (the -G compile
included, where it is not cached).

The child is spawned (a fresh interpreter: nothing of this process's threads or locks is
copied) with the pattern and the default work budget, on Linux; elsewhere, and when the child
fails in any way, the parent reads the kernel as written itself, as before. The child ignores
Ctrl-C (the parent's KeyboardInterrupt ends it), ends when the parent dies (a parent-death
signal, as the compile supervisor's) and is killed when it is not wanted: the pattern
changed (values assumed), or the report failed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from multiprocessing.connection import Connection

from ..engine.compiled.supervise import die_with_parent
from ..model import Pattern
from ..model.budget import default_work, set_default_work
from ..model.compiler_changes import Written, compared, written_reading
from ..model.frontend import read_as


def _child(pattern: Pattern, pipe: Connection, parent: int, work: int) -> None:
    """In the child: the reading as written within the parent's default budget (`work`
    units), sent to the parent; it ends with the parent, however that ends (a SIGKILL too),
    and its compiles with it."""
    die_with_parent()
    if os.getppid() != parent:
        return  # the parent ended before it could be followed
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_default_work(work)
    pipe.send(written_reading(pattern))
    pipe.close()


class WrittenAhead:
    """The reading as written of `pattern`, started in a child process at once."""

    def __init__(self, pattern: Pattern):
        self.pattern = pattern
        self.pipe: Connection | None = None
        if sys.platform != "linux" or not compared(pattern):
            return
        context = multiprocessing.get_context("spawn")
        self.pipe, theirs = context.Pipe(duplex=False)
        self.process = context.Process(target=_child, daemon=True, args=(
            pattern, theirs, os.getpid(), default_work()))
        self.process.start()
        theirs.close()

    def result(self, pattern: Pattern) -> Written | None:
        """The reading as written of `pattern` from the child (None: the caller reads it:
        there is no child, it read another pattern, or it failed)."""
        if self.pipe is None:
            return None
        if read_as(pattern) != read_as(self.pattern):
            self.close()
            return None
        try:
            found: Written | None = self.pipe.recv()
        except (EOFError, OSError):  # the child died (killed, out of memory)
            found = None
        self.close()
        return found

    def close(self) -> None:
        """The child ended, its pipe closed."""
        if self.pipe is None:
            return
        self.pipe.close()
        self.pipe = None
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
