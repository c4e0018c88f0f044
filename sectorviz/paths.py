"""Where bundled resources live: beside the package in a checkout, under _MEIPASS in a bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled:
        return Path(bundled) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def examples_dir() -> Path:
    return resources_dir() / "examples"


def example_paths() -> list[Path]:
    """Every bundled example pattern, sorted by file name."""
    return sorted(examples_dir().glob("*.sectorviz.json"))


def default_example() -> Path:
    return examples_dir() / "vector-add.sectorviz.json"
