"""A pattern's kernel resolved off the UI thread: compiling it (nvcc and its tools run as
processes, outside the GIL) and reading what they emit happen on a thread of their own, so a
window opens, and answers keys, before its kernel is known.

`KernelResolver.request(pattern)` gives the resolved kernel at once when the one cache
(memo.MEMO, kind "kernel", as model.frontend.kernel_for keeps it) holds it, or a pattern's
own accesses (no `kernel` key: nothing to compile); else None, after starting the thread,
and `resolved(pattern, error)` later, queued to the UI thread. Until then, and after a
failure, `stand_in(pattern)` is the pattern's launch alone: its grid, block and arrays, no
instructions.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from ..model import Pattern, PatternError
from ..model.errors import internal_error
from ..model.frontend import FrontEnd, Reading, kernel_for, read_as
from ..model.kernel import Instruction, Launch
from ..model.memo import MEMO

KERNEL = "kernel"  # the memo kind kernel_for keeps resolved kernels under
STAND_IN = "kernel stand-in"  # the memo kind of the launches shown until a kernel arrives


def compiling(pattern: Pattern) -> str:
    """What the views show while `pattern`'s kernel is being compiled and read."""
    function = (pattern.kernel or {}).get("function")
    named = f" {function}" if function else ""
    return f"compiling and reading the kernel{named}…"


class StandIn(Launch):
    """A pattern's launch alone (grid, block, arrays with every constant evaluated), with no
    instructions: what the views show until its kernel arrives."""

    instructions: tuple[Instruction, ...] = ()
    shared_instructions: tuple[Instruction, ...] = ()


def stand_in(pattern: Pattern) -> FrontEnd:
    """`pattern`'s StandIn (cached); PatternError when the launch itself is wrong."""
    return MEMO.get(STAND_IN, read_as(pattern), lambda: StandIn(pattern))


class KernelResolver(QObject):
    """request(pattern) -> its kernel now, or None and `resolved(pattern, error)` later
    (error "" once it is in the cache, else the line saying why it failed)."""

    resolved = Signal(object, str)

    _done = Signal(object, str)  # pattern, error: from the thread, queued to this one

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._running: set[tuple[Pattern, Reading | None]] = set()
        self._failed: dict[tuple[Pattern, Reading | None], str] = {}
        self._done.connect(self._on_done)

    def request(self, pattern: Pattern) -> FrontEnd | None:
        """The kernel of `pattern` if it is resolved (or needs no compiler), else None; a
        thread resolves it unless one already does or it failed (`error` says why)."""
        if pattern.kernel is None:
            return kernel_for(pattern)
        key = read_as(pattern)
        cached: FrontEnd | None = MEMO.peek(KERNEL, key)
        if cached is not None or key in self._running or key in self._failed:
            return cached
        self._running.add(key)
        threading.Thread(target=self._resolve, args=(pattern,), daemon=True,
                         name="sectorviz kernel").start()
        return None

    def error(self, pattern: Pattern) -> str | None:
        """Why resolving `pattern`'s kernel failed, or None."""
        return self._failed.get(read_as(pattern))

    def forget(self, pattern: Pattern) -> None:
        """Try `pattern` again on its next request (a file it read changed)."""
        self._failed.pop(read_as(pattern), None)

    def _resolve(self, pattern: Pattern) -> None:
        """The thread: resolve, then tell the UI thread (nobody, once Qt deleted us)."""
        try:
            kernel_for(pattern)
            error = ""
        except PatternError as err:
            error = str(err) if err.file is None else f"{err.file}: {err}"
        except Exception as err:  # a bug: shown like bad input
            error = internal_error(err)
        try:
            self._done.emit(pattern, error)
        except RuntimeError:  # "Signal source has been deleted": the window closed
            pass

    def _on_done(self, pattern: Pattern, error: str) -> None:
        key = read_as(pattern)
        self._running.discard(key)
        if error:
            self._failed[key] = error
        self.resolved.emit(pattern, error)
