"""Whether a path lies in a folder, links followed: the test for the compiler's own header
folders and the compile's temporary folder (a pattern's root and include folders are
model.files.Roots, the one rule for every file a pattern reads)."""

from __future__ import annotations

import os
from pathlib import Path


def inside(path: str | Path, folder: str | Path) -> bool:
    """Whether `path`, links followed, lies in `folder` (itself a real path)."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(folder)
    except (OSError, ValueError):
        return False
