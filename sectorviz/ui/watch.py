"""Files on disk that the open document depends on, watched: a change is reported once, after
the writer has settled (editors write in bursts, or replace the file by a rename).

`watch_pattern(path)` (when the file is opened or saved) and `watch_inputs(stamps)` (as
the analysis read them: kernel source, includes, `.npy` values) set what is watched; each
keeps the stamps it is given, so a change made before the call is still seen. `pattern_changed` and
`inputs_changed` fire SETTLE_MS after the last event; a file replaced by a rename is watched
again under its name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from ..model.memo import FileStamp, stamp

SETTLE_MS = 250


class DiskWatch(QObject):
    """Reports changes to a pattern file and to the files its analysis read."""

    pattern_changed = Signal()
    inputs_changed = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_event)
        self._watcher.directoryChanged.connect(self._on_event)
        self._timer = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._timer.timeout.connect(self._settled)
        self._pattern: FileStamp | None = None
        self._inputs: tuple[FileStamp, ...] = ()

    def watch_pattern(self, path: Path | None) -> None:
        """Watch the pattern file `path` as it is now (None: an unsaved pattern)."""
        self._pattern = None if path is None else stamp(path)
        self._rewatch()

    def watch_inputs(self, inputs: Iterable[FileStamp]) -> None:
        """Watch the files an analysis read, as stamped when it read them."""
        self._inputs = tuple(inputs)
        self._rewatch()

    def _rewatch(self, check: bool = True) -> None:
        """Watch exactly the files followed and their folders (so that a file replaced by a
        rename, or created, is seen), adding and removing only the difference: a path
        removed and added again would lose the events pending for it."""
        files = [s.path for s in self._watched()]
        wanted = {p for p in files + [os.path.dirname(p) or "." for p in files]
                  if os.path.exists(p)}
        old = set(self._watcher.files() + self._watcher.directories())
        if old - wanted:
            self._watcher.removePaths(sorted(old - wanted))
        if wanted - old:
            self._watcher.addPaths(sorted(wanted - old))
        if check:  # a change between the stamps and the watch is seen too
            self._timer.start()

    def _watched(self) -> tuple[FileStamp, ...]:
        return self._inputs + (() if self._pattern is None else (self._pattern,))

    def _inputs_moved(self) -> bool:
        mine = None if self._pattern is None else self._pattern.path
        return any(stamp(s.path) != s for s in self._inputs if s.path != mine)

    def _on_event(self, _path: str) -> None:
        self._timer.start()

    def _settled(self) -> None:
        """Compare the stamps now with the ones followed; report what changed."""
        pattern_moved = self._pattern is not None and stamp(self._pattern.path) != self._pattern
        inputs_moved = self._inputs_moved()
        if self._pattern is not None:
            self._pattern = stamp(self._pattern.path)
        self._inputs = tuple(stamp(s.path) for s in self._inputs)
        self._rewatch(check=False)
        if pattern_moved:
            self.pattern_changed.emit()
        elif inputs_moved:
            self.inputs_changed.emit()
