"""Pure computations that would hold the UI thread too long (an accounting sheet of a warp
with hundreds of shared instructions) run on a thread instead, the newest call winning.

The thread takes the GIL in the interpreter's short turns, so the UI thread still answers
keys and paints between them; what the call returns comes back as a queued signal. Made
without a parent where its owner may be deleted while a call runs (a dialog, a window being
closed): its thread keeps it alive, and the answer queued to a deleted receiver is dropped,
where a child deleted with its parent would be emitted from mid-deletion.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal


class NewestCall(QObject):
    """run(call) -> a token; call() runs on a thread (one call at a time; a call not yet
    started when a newer one comes is dropped) and `done(token, result, error)` follows on
    this object's thread (error: the exception the call raised, else None)."""

    done = Signal(int, object, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lock = threading.Lock()
        self._next: tuple[int, Callable[[], Any]] | None = None
        self._running = False
        self.token = 0  # the newest call's

    def run(self, call: Callable[[], Any]) -> int:
        """Hand `call` to the thread (started when none runs) -> its token."""
        with self._lock:
            self.token += 1
            self._next = (self.token, call)
            start, self._running = not self._running, True
        if start:
            threading.Thread(target=self._drain, daemon=True, name="sectorviz newest").start()
        return self.token

    def cancel(self) -> None:
        """Drop the call not yet started; a running one's result comes with an old token."""
        with self._lock:
            self.token += 1
            self._next = None

    def _drain(self) -> None:
        """The thread: the newest call, until none waits; then it ends."""
        while True:
            with self._lock:
                if self._next is None:
                    self._running = False
                    return
                (token, call), self._next = self._next, None
            try:
                result, error = call(), None
            except Exception as err:  # raised again where the result is taken
                result, error = None, err
            try:
                self.done.emit(token, result, error)
            except RuntimeError:  # "Signal source has been deleted": nobody is waiting
                with self._lock:
                    self._running = False
                return
