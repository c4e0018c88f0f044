"""Helpers for the compiled front end's tests: a pattern folder with a .cu file, the mark
for tests that need nvcc, and an analysis's figures per source line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.model import Pattern, load_pattern

FOUND = find_compiler()
needs_nvcc = pytest.mark.skipif(FOUND is None or FOUND.kind != "nvcc",
                                reason="no nvcc on this machine")

SAXPY = """\
__global__ void saxpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def write_pattern(folder: Path, source: str, function: str, files: dict[str, str] | None = None,
                  **kernel) -> Pattern:
    """A pattern in `folder` whose kernel is `source` (written as kernel.cu), with more
    `files` beside it and more `kernel` keys -> the loaded Pattern."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.cu").write_text(source)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 1024},
           "launch": {"grid": [4], "block": [256]},
           "arrays": {"x": {"dtype": "float32", "length": "n"},
                      "y": {"dtype": "float32", "length": "n"}},
           "kernel": {"source": "kernel.cu", "function": function, **kernel}}
    path = folder / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    return load_pattern(path)


def per_line(run) -> Counter:
    """An analysis -> (space, line, op, "requests" | "sectors" | "wavefronts") -> the sum
    over its rows of that line and op."""
    out: Counter = Counter()
    for space, rows, second in (("global", run.instructions, "sectors"),
                                ("shared", run.shared, "wavefronts"),
                                ("local", run.local, "sectors")):
        for r in rows:
            out[(space, r.line, r.op, "requests")] += r.requests
            out[(space, r.line, r.op, second)] += getattr(r, second)
    return out
