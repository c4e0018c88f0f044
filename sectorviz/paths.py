"""Where bundled resources live: under _MEIPASS in a bundle, inside the package in a wheel
install (setup.py maps the checkout's resources/ to sectorviz/resources), beside the package in
a checkout or an editable install (<repo>/resources, the one copy)."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled:
        return Path(bundled) / "resources"
    package = Path(__file__).resolve().parent
    installed = package / "resources"
    if installed.is_dir():
        return installed
    return package.parent / "resources"


def examples_dir() -> Path:
    return resources_dir() / "examples"


def example_paths() -> list[Path]:
    """Every bundled example pattern, sorted by file name."""
    return sorted(examples_dir().glob("*.sectorviz.json"))


def default_example() -> Path:
    return examples_dir() / "vector-add.sectorviz.json"
