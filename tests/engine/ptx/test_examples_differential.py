"""Differential tests: every CUDA example counted on nvcc's optimized code gives the numbers
of its as-written reading (the debug compile). Where nvcc changes nothing, instruction by
instruction; where it only unrolls a loop (the same accesses split over more instructions),
per op in total."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from ptx_helpers import analyze_compiled, compiled_for_file, needs_nvcc

from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model import analyze, load_pattern

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"
CUDA_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*-cuda.sectorviz.json"))
# nvcc unrolls these loops (matmul-naive by 4 with a remainder loop, the tiles' inner loops
# fully): the same requests and sectors, on more PTX instructions
UNROLLED = {"matmul-naive-cuda.sectorviz.json": ("global",),
            "matmul-tiled-cuda.sectorviz.json": ("shared",),
            "stencil-1d-cuda.sectorviz.json": ("shared",)}


def _readings(name: str):
    pattern = load_pattern(EXAMPLES / name)  # read as written (tests/conftest.py)
    as_written = analyze(pattern)
    compiled, _ = analyze_compiled(
        pattern, compiled_for_file(EXAMPLES / pattern.kernel["source"],
                                   pattern.kernel["function"]))
    return as_written, compiled


def _global_rows(a):
    return Counter((s.op, s.requests, s.sectors) for s in a.instructions)


def _shared_rows(a):
    return Counter((s.op, s.requests, s.wavefronts, s.bank_conflicts) for s in a.shared)


def _per_op(rows: Counter) -> dict:
    out: dict = {}
    for (op, *figures), times in rows.items():
        total = out.setdefault(op, [0] * len(figures))
        for j, f in enumerate(figures):
            total[j] += f * times
    return out


@needs_nvcc
@pytest.mark.parametrize("name", CUDA_EXAMPLES)
def test_an_example_counts_as_its_as_written_reading(name):
    as_written, compiled = _readings(name)
    for space, rows in (("global", _global_rows), ("shared", _shared_rows)):
        a, b = rows(as_written), rows(compiled)
        if space in UNROLLED.get(name, ()):
            assert _per_op(b) == _per_op(a), space
            assert sum(b.values()) > sum(a.values())  # the unrolled copies
        else:
            assert b == a, space
    assert compiled.totals.sectors == as_written.totals.sectors
    assert compiled.totals.requests == as_written.totals.requests


@needs_nvcc
def test_compiled_instructions_carry_their_line_and_ptx_operation():
    pattern = load_pattern(EXAMPLES / "transpose-naive-cuda.sectorviz.json")
    kernel = CompiledKernel(pattern, compiled_for_file(EXAMPLES / "transpose.cu",
                                                       pattern.kernel["function"]))
    store = next(i for i in kernel.instructions if i.op == "store")
    assert store.name == "line 16: c[col * m + row], st.global.f32"
    assert (store.line, store.ptx, store.file, store.array, store.width) == \
        (16, "st.global.f32", None, "c", 4)
