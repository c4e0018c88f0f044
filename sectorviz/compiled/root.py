"""A pattern's root: the folder its kernel source and includes must lie in. That is the
pattern file's folder or, when the pattern lives in a repository, the repository's top folder
(the nearest folder at or above the pattern's that holds `.git`)."""

from __future__ import annotations

import os
from pathlib import Path


def pattern_root(base_dir: str | Path) -> Path:
    """The real path of the root of a pattern whose file lies in `base_dir`."""
    folder = Path(os.path.realpath(base_dir))
    for above in (folder, *folder.parents):
        if (above / ".git").exists():
            return above
    return folder


def inside(path: str | Path, folder: str | Path) -> bool:
    """Whether `path`, links followed, lies in `folder` (itself a real path)."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(folder)
    except (OSError, ValueError):
        return False
