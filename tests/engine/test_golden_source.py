"""The golden numbers (issue 29, Correctness) hold for today's source engine, the C++
interpreter (sectorviz/cuda): every frozen instruction of every CUDA example and every CUDA
test kernel gives the same requests, active lanes, sectors and wavefronts, row for row.
The data were frozen by benchmarks/freeze_golden.py from this engine's own counts (each
test that wrote a kernel derived them by hand); this test guards them until the
interpreter retires and the as-written reading (test_golden_as_written.py) takes over."""

from __future__ import annotations

import pytest
from oracles import frozen_figures, golden_entries, golden_pattern

from sectorviz.model import analyze
from sectorviz.model.memo import MEMO
from sectorviz.paths import examples_dir

EXAMPLES = golden_entries("examples.json")
TEST_KERNELS = golden_entries("test_kernels.json")


def test_golden_set_covers_the_cuda_examples():
    # every example naming a kernel (.cu) is frozen: the 15 *-cuda examples
    assert sorted(e["id"] for e in EXAMPLES) == \
        sorted(p.name for p in examples_dir().glob("*-cuda.sectorviz.json"))
    assert all(e["instructions"] for e in EXAMPLES)


@pytest.mark.parametrize("entry", EXAMPLES + TEST_KERNELS, ids=lambda e: e["id"])
def test_source_engine_reproduces_golden(entry):
    MEMO.clear()
    assert frozen_figures(analyze(golden_pattern(entry))) == entry["instructions"]
