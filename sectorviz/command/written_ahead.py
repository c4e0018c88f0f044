"""The reading as written, worked out in a forked process while this one counts the compiled
reading: the report compares the two (model.compiler_changes) and they share no work, so on
a second core the report takes the longer of the two, not their sum (the -G compile
included, where it is not cached).

Only where processes fork (Linux), no other thread runs, and the pattern is compared at all;
elsewhere, and when the child fails in any way, the parent reads the kernel as written
itself, as before. The
child ignores Ctrl-C (the parent's KeyboardInterrupt ends it), ends when the parent dies (a
parent-death signal, as the compile supervisor's) and is killed when it is not wanted: the
pattern changed (values assumed), or the report failed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from multiprocessing.connection import Connection

from ..engine.compiled.supervise import die_with_parent
from ..model import Pattern
from ..model.compiler_changes import Written, compared, written_reading
from ..model.frontend import read_as


def _child(pattern: Pattern, pipe: Connection, parent: int) -> None:
    """In the forked process: the reading as written, sent to the parent; it ends with the
    parent, however that ends (a SIGKILL too), and its compiles with it."""
    die_with_parent()
    if os.getppid() != parent:
        return  # the parent ended before it could be followed
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    pipe.send(written_reading(pattern))
    pipe.close()


class WrittenAhead:
    """The reading as written of `pattern`, started in a forked process at once."""

    def __init__(self, pattern: Pattern):
        self.pattern = pattern
        self.pipe: Connection | None = None
        if sys.platform != "linux" or threading.active_count() > 1 or not compared(pattern):
            return  # (a fork copies no other thread: one holding a lock would leave it held)
        context = multiprocessing.get_context("fork")
        self.pipe, theirs = context.Pipe(duplex=False)
        self.process = context.Process(target=_child, args=(pattern, theirs, os.getpid()),
                                       daemon=True)
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
