"""Pattern files on disk: atomic saves and the recent-files list (kept in QSettings)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QSettings

MAX_RECENT = 8
SUFFIX = ".sectorviz.json"
FILTER = "sectorviz patterns (*.sectorviz.json *.json);;All files (*)"


def settings() -> QSettings:
    """The app's settings: an INI file in the user's config folder."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, "sectorviz", "sectorviz")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: readers see
    the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def recent_files(store: QSettings) -> list[Path]:
    value = store.value("recent", []) or []
    return [Path(p) for p in ([value] if isinstance(value, str) else value) if p]


def add_recent(store: QSettings, path: Path) -> None:
    paths = [str(path.resolve())] + [str(p) for p in recent_files(store)
                                     if p != path.resolve()]
    store.setValue("recent", paths[:MAX_RECENT])
