"""Helpers for the as-written reading's tests (issue 29: the C++ interpreter's tests, ported
to the kernel's debug compile read by the PTX engine): a kernel pattern from inline code,
its analysis through the product's own path (`analyze` of the pattern, read as written by
tests/conftest.py's default), and per-line sums of what it counts."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from sectorviz.model import analyze, pattern_from_dict
from sectorviz.model.frontend import kernel_for


def kernel_pattern(code: str, function: str = "k", arrays: dict | None = None,
                   params: dict | None = None, grid=(1,), block=(32,), **kernel):
    """A pattern whose kernel is `code` (`kernel` adds keys: engine, flags, ...); arrays
    default to one float32 array `a` of 1024."""
    doc = {"format": "sectorviz.pattern/1", "name": "test",
           "launch": {"grid": list(grid), "block": list(block)},
           "params": params or {},
           "arrays": arrays or {"a": {"dtype": "float32", "length": 1024}},
           "kernel": {"code": code, "function": function, **kernel}}
    return pattern_from_dict(doc)


def run(code: str, **kw):
    """-> (analysis, kernel) of an inline kernel."""
    p = kernel_pattern(code, **kw)
    return analyze(p), kernel_for(p)


def per_line(stats) -> dict[int, tuple[int, int]]:
    """Global (or local) instruction stats -> {source line: (requests, sectors)}, summed over
    the instructions of a line (a debug compile may split one access into several, or name
    two accesses of one statement by the same line)."""
    out: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for s in stats:
        out[s.line][0] += s.requests
        out[s.line][1] += s.sectors
    return {line: (r, n) for line, (r, n) in sorted(out.items())}


def shared_per_line(stats) -> dict[int, tuple[int, int]]:
    """Shared instruction stats -> {source line: (requests, wavefronts)}, summed."""
    out: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for s in stats:
        out[s.line][0] += s.requests
        out[s.line][1] += s.wavefronts
    return {line: (r, n) for line, (r, n) in sorted(out.items())}


def elements(code: str, **kw) -> list[tuple[int, str, list[int]]]:
    """Every global execution of the first warp, in the order the debug compile runs them:
    (source line, op "load" / "store" / "atom" / ..., active lanes' element indices)."""
    p = kernel_pattern(code, **kw)
    kernel = kernel_for(p)
    out = []
    for k, b in kernel.trace(0, 1):
        inst = kernel.instructions[k]
        out.append((inst.line, inst.op,
                    [int(e) for e, on in zip(np.broadcast_to(b.element, b.active.shape)[0],
                                             b.active[0]) if on]))
    return out
