"""Pattern files on disk: saving a document, the files a pattern names relative to its folder,
and the recent-files list (kept in QSettings). Saves are written by sectorviz.atomic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings

from ..atomic import write_atomic
from ..model import Pattern, pattern_from_dict
from ..model.files import pattern_roots
from ..paths import examples_dir

if TYPE_CHECKING:
    from .document import Document

MAX_RECENT = 8
SUFFIX = ".sectorviz.json"
FILTER = ("sectorviz patterns (*.sectorviz.json *.json);;CUDA sources: make a pattern (*.cu);;"
          "All files (*)")
OPEN_FILTER = ("sectorviz patterns and CUDA sources (*.sectorviz.json *.json *.cu);;"
               "sectorviz patterns (*.sectorviz.json *.json);;"
               "CUDA sources: make a pattern (*.cu);;All files (*)")
# File > Open's: a bare .cu opens too (main_window.open_cuda). A .ptx opens only as named by
# a pattern ("kernel": {"ptx": ...}), never alone, so no filter offers it.


def saves_in_place(path: Path | None) -> bool:
    """Whether Save may write `path` as it is: False for an untitled document or a bundled
    example (those ask for a name)."""
    return path is not None and not path.resolve().is_relative_to(examples_dir().resolve())


def settings() -> QSettings:
    """The app's settings: an INI file in the user's config folder."""
    return QSettings(QSettings.IniFormat, QSettings.UserScope, "sectorviz", "sectorviz")


def relocate(doc: dict, old_dir: str | Path, new_dir: Path) -> list[str]:
    """Rewrite the relative paths of a pattern document (`values` files of arrays, the
    kernel's `source`), which name files from `old_dir`, to name the same files from
    `new_dir` (absolute where no relative path leads there, as on another drive). Returns
    'place old → new' for each one rewritten."""
    refs = [(f"arrays.{name}.values.path", spec["values"], "path")
            for name, spec in doc["arrays"].items()
            if (spec.get("values") or {}).get("kind") == "file"]
    if "source" in doc.get("kernel", {}):
        refs.append(("kernel.source", doc["kernel"], "source"))
    changes = []
    for place, holder, key in refs:
        old = holder[key]
        if os.path.isabs(old):
            continue
        target = os.path.abspath(os.path.join(old_dir, old))
        try:
            new = Path(os.path.relpath(target, os.path.abspath(new_dir))).as_posix()
        except ValueError:  # another drive
            new = target
        if new != old:
            holder[key] = new
            changes.append(f"{place} {old} → {new}")
    return changes


def relocated(pattern: Pattern, folder: Path) -> tuple[Pattern, list[str]]:
    """`pattern` as it is to be saved in `folder` (its relative paths rewritten to name the
    same files from there), and what was rewritten. When a rewritten path leads out of the
    new folder's root, the old root stays readable in this session (an include folder of
    the pattern's own); opened anew from `folder`, such files need --include-dir."""
    if Path(pattern.base_dir).resolve() == folder.resolve():
        return pattern, []
    doc = pattern.to_dict()
    moved = relocate(doc, pattern.base_dir, folder)
    old_root = pattern.roots.folders[0]
    keep = moved and not pattern_roots(folder, pattern.include_dirs).allows(old_root)
    include_dirs = (*pattern.include_dirs, str(old_root)) if keep else pattern.include_dirs
    return pattern_from_dict(doc, folder, include_dirs), moved


def save_document(document: "Document", path: Path) -> list[str]:
    """Write the document's pattern to `path` (atomically: a temporary file and a rename) and
    mark it saved there; saved into another folder, its relative paths are rewritten, in the
    file and in the document. Returns what was rewritten; OSError leaves the document as it
    was."""
    pattern, moved = relocated(document.pattern, path.parent)
    write_atomic(path, pattern.source + "\n", over_input=True)  # Save replaces what it opened
    with document.batch():
        document.relocate(pattern)
        document.mark_saved(path)
    return moved


def recent_files(store: QSettings) -> list[Path]:
    """The stored recent files; a stored value that is no list of paths counts as none."""
    value = store.value("recent", []) or []
    paths = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [Path(p) for p in paths if isinstance(p, str) and p and "\x00" not in p]


def add_recent(store: QSettings, path: Path) -> None:
    paths = [str(path.resolve())] + [str(p) for p in recent_files(store)
                                     if p != path.resolve()]
    store.setValue("recent", paths[:MAX_RECENT])
