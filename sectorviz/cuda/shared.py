"""Shared-memory accounting of a CUDA kernel: wavefronts and bank conflicts per instruction.

The model (CUDA Programming Guide, "Shared Memory"; see shared/domain-notes.md): 32 banks of
4 bytes, bank = (byte address / 4) mod 32. One request is served in as many wavefronts as the
largest number of distinct 4-byte words any one bank must deliver; lanes reading the same
word share it (broadcast). The ideal is ceil(distinct words / 32) wavefronts (1 for 4-byte
lanes, 2 for 8-byte, 4 for 16-byte); bank conflicts are the wavefronts beyond it, as Nsight
Compute's l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum (and _op_st) count them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.analysis import CHUNK_LANES, kernel_for, warp_chunks
from ..model.budget import Budget, work_budget
from ..model.pattern import Pattern
from ..model.sectors import WARP_SIZE, touched_sector_ids

BANKS = 32
BANK_BYTES = 4
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"


@dataclass(frozen=True)
class SharedStats:
    """One shared-memory instruction over the whole launch (counts are sums over requests)."""

    name: str
    op: str
    array: str
    width: int  # bytes per lane
    line: int | None
    column: int | None
    source: str | None
    requests: int
    wavefronts: int
    ideal_wavefronts: int
    bank_conflicts: int  # wavefronts - ideal_wavefronts
    max_ways: int  # the worst request's wavefronts


def bank_wavefronts(address: np.ndarray, width: int, active: np.ndarray):
    """(rows, 32) shared byte addresses -> (wavefronts, ideal wavefronts) per row."""
    words, per_lane = touched_sector_ids(address, width, BANK_BYTES)
    on = np.repeat(active, per_lane, axis=1) if per_lane > 1 else active
    rows = words.shape[0]
    keyed = np.where(on, words, np.iinfo(np.int64).max)
    keyed.sort(axis=1)
    distinct = np.ones(keyed.shape, dtype=bool)
    distinct[:, 1:] = keyed[:, 1:] != keyed[:, :-1]
    distinct &= keyed != np.iinfo(np.int64).max
    banks = np.where(distinct, keyed % BANKS, 0) + BANKS * np.arange(rows)[:, None]
    per_bank = np.bincount(banks.ravel(), weights=distinct.ravel(),
                           minlength=rows * BANKS).reshape(rows, BANKS)
    wavefronts = per_bank.max(axis=1).astype(np.int64)
    ideal = -(-distinct.sum(axis=1) // BANKS)
    return wavefronts, ideal


def shared_analysis(pattern: Pattern, budget: Budget | None = None) -> tuple[SharedStats, ...]:
    """Pattern with a CUDA kernel -> SharedStats per shared instruction (empty without any),
    spending `budget` (None: the one already open, or a default one)."""
    kernel = kernel_for(pattern)
    instructions = getattr(kernel, "shared_instructions", ())
    sums = np.zeros((len(instructions), 4), dtype=np.int64)  # requests, waves, ideal, max
    if not instructions:
        return ()
    with work_budget(budget):
        for lo, hi in warp_chunks(kernel.warps, max(1, CHUNK_LANES // WARP_SIZE)):
            for k, batch in kernel.shared_trace(lo, hi):
                requested = batch.active.any(axis=1)
                waves, ideal = bank_wavefronts(batch.address[requested],
                                               instructions[k].width, batch.active[requested])
                sums[k, :3] += (len(waves), waves.sum(), ideal.sum())
                sums[k, 3] = max(sums[k, 3], waves.max(initial=0))
    return tuple(
        SharedStats(ins.name, ins.op, ins.array, ins.width, ins.line, ins.column, ins.source,
                    int(r), int(w), int(i), int(w - i), int(m))
        for ins, (r, w, i, m) in zip(instructions, sums))
