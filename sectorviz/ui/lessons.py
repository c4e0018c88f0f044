"""The Examples menu's lessons, Qt-free: bundled example file stems grouped by what they
teach, in menu order. Every `*-cuda` example is under CUDA kernels; a stem no lesson lists
goes to OTHER, so a new example is never left out of the menu."""

from __future__ import annotations

import json
from pathlib import Path

CUDA = "CUDA kernels"
OTHER = "Other"
CUDA_SUFFIX = "-cuda"
LESSONS: dict[str, tuple[str, ...]] = {
    "Coalescing": ("aligned", "shifted", "stride-32B", "partial-warp", "vector-add"),
    "Alignment and crossing": ("struct12-crossing", "float2-load", "float4-load"),
    "Strides and layouts": ("col-major", "transpose-naive", "row-sum-loop"),
    "Gathers": ("gather-distinct", "gather-repeated"),
    "Shared memory and banks": ("shared-strides", "shared-wide", "shared-tile-column",
                                "shared-reduction", "shared-matmul-tile", "transpose-tiled"),
    "Python kernels (Triton, Numba)": ("triton-vector-add", "triton-softmax",
                                       "triton-layer-norm", "triton-matmul", "numba-vector-add",
                                       "numba-transpose-naive", "numba-transpose-tiled"),
}


def lesson_groups(stems: list[str]) -> list[tuple[str, list[str]]]:
    """Example file stems -> [(lesson, its stems)], lessons in LESSONS order, then CUDA (every
    stem ending in -cuda, sorted), then OTHER (the stems no lesson lists, sorted); each stem
    exactly once, empty lessons left out."""
    present = set(stems)
    listed = {s for group in LESSONS.values() for s in group}
    groups = [(lesson, [s for s in group if s in present]) for lesson, group in LESSONS.items()]
    groups.append((CUDA, sorted(s for s in present if s.endswith(CUDA_SUFFIX))))
    groups.append((OTHER, sorted(s for s in present
                                 if s not in listed and not s.endswith(CUDA_SUFFIX))))
    return [(lesson, group) for lesson, group in groups if group]


def example_title(path: Path) -> str:
    """An example's menu label: its pattern's "name", else (unreadable, no name) its stem."""
    stem = path.name.split(".", 1)[0]
    try:
        name = json.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return stem
    return name.strip() if isinstance(name, str) and name.strip() else stem
