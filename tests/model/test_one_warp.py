"""One warp's details (model/one_warp.py): the global and the shared detail of a warp come
from one run of its block, and match what each memory space's own trace gives."""

from __future__ import annotations

import numpy as np

from sectorviz.model import load_pattern
from sectorviz.model.frontend import kernel_for
from sectorviz.model.memo import MEMO
from sectorviz.model.one_warp import shared_warp_detail, warp_detail
from sectorviz.paths import examples_dir


def test_both_details_of_a_warp_come_from_one_run(monkeypatch):
    """The tiled multiply reads global memory and shared tiles: asking for both details of
    warp 3 runs its block once; each matches the trace of its own space."""
    pattern = load_pattern(examples_dir() / "shared-matmul-tile.sectorviz.json")
    kernel = kernel_for(pattern)
    runs = []
    events = type(kernel).events

    def counted(self, *args, **kwargs):
        runs.append(args[:2])
        return events(self, *args, **kwargs)

    MEMO.clear()
    monkeypatch.setattr(type(kernel), "events", counted)
    detail, shared = warp_detail(pattern, 3), shared_warp_detail(pattern, 3)
    assert runs == [(3, 4)]
    monkeypatch.undo()
    by_instruction = [[np.broadcast_to(b.address, b.active.shape)[0].tolist()
                       for j, b in kernel.trace(3, 4) if j == k]
                      for k in range(len(kernel.instructions))]
    assert [[e.address.tolist() for e in r] for r in detail.executions] == by_instruction
    shared_runs = [b for _, b in kernel.space_trace("shared", 3, 4)]
    assert sum(len(r) for r in shared.executions) == len(shared_runs) > 0


def test_a_kernel_without_shared_memory_has_an_empty_shared_detail():
    pattern = load_pattern(examples_dir() / "row-sum-loop.sectorviz.json")
    assert shared_warp_detail(pattern, 0).executions == ()
    assert warp_detail(pattern, 0).executions
