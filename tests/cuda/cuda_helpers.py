"""Helpers for the CUDA front end's tests: a kernel pattern from inline code."""

from __future__ import annotations

import numpy as np

from sectorviz.model import analyze, pattern_from_dict
from sectorviz.model.frontend import kernel_for


def kernel_pattern(code: str, function: str = "k", arrays: dict | None = None,
                   params: dict | None = None, grid=(1,), block=(32,)):
    """A pattern whose kernel is `code`; arrays default to one float32 array `a` of 1024."""
    doc = {"format": "sectorviz.pattern/1", "name": "test",
           "launch": {"grid": list(grid), "block": list(block)},
           "params": params or {},
           "arrays": arrays or {"a": {"dtype": "float32", "length": 1024}},
           "kernel": {"code": code, "function": function}}
    return pattern_from_dict(doc)


def run(code: str, **kw):
    """-> (analysis, kernel) of an inline kernel."""
    p = kernel_pattern(code, **kw)
    return analyze(p), kernel_for(p)


def per_request(analysis) -> list:
    return [s.sectors / s.requests if s.requests else 0 for s in analysis.instructions]


def elements(code: str, **kw) -> list[tuple[str, list[list[int]]]]:
    """Every execution of the first warp: (instruction name, active lanes' element indices)."""
    p = kernel_pattern(code, **kw)
    kernel = kernel_for(p)
    out = []
    for k, b in kernel.trace(0, 1):
        out.append((kernel.instructions[k].name,
                    [int(e) for e, on in zip(np.broadcast_to(b.element, b.active.shape)[0],
                                             b.active[0]) if on]))
    return out
