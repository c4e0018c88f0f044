"""Local memory (a thread's stack frame: `ld.local` / `st.local`, spilled and runtime-indexed
per-thread arrays) counted like global memory: one request per warp execution with an active
lane, the distinct 32-byte sectors its lanes touch, with the frames' words interleaved across
the lanes of each warp as CompiledKernel.events lays them out. Nsight Compute names the sums
l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum and _op_st.sum."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chunks import CHUNK_LANES, warp_chunks
from ..kernel import Batch, InstructionNamed, instruction_fields
from ..sectors import WARP_SIZE, account_rows

METRICS = {"load": "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
           "store": "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"}


@dataclass(frozen=True)
class LocalFigures:
    requests: int
    sectors: int
    active_lanes: int
    useful_bytes: int  # distinct bytes the active lanes asked for


@dataclass(frozen=True)
class LocalInstructionStats(InstructionNamed, LocalFigures):
    """One local instruction's figures, with its name and place."""


class LocalCounter:
    """Running sums of a kernel's local instructions over the batches given to `add`."""

    def __init__(self, kernel, sector_bytes: int = 32):
        self.instructions = tuple(getattr(kernel, "local_instructions", ()))
        self.sector_bytes = sector_bytes
        self.sums = np.zeros((len(self.instructions), 4), dtype=np.int64)

    def add(self, k: int, batch: Batch) -> None:
        """Count one execution of local instruction k."""
        rows = account_rows(np.broadcast_to(batch.address, batch.active.shape),
                            self.instructions[k].width, batch.active, self.sector_bytes)
        self.sums[k] += (int(rows.requested.sum()), int(rows.counts.sum()),
                         rows.active_lanes, int(rows.useful.sum()))

    def stats(self) -> tuple[LocalInstructionStats, ...]:
        return tuple(LocalInstructionStats(**instruction_fields(ins), requests=int(r),
                                           sectors=int(s), active_lanes=int(a),
                                           useful_bytes=int(u))
                     for ins, (r, s, a, u) in zip(self.instructions, self.sums))


def local_listing(kernel, sector_bytes: int = 32) -> tuple[LocalInstructionStats, ...]:
    """A kernel's local instructions -> their figures over the whole launch (a pass of its
    own over the warps, in chunks; nothing to run where the kernel has none)."""
    counter = LocalCounter(kernel, sector_bytes)
    if counter.instructions:
        for lo, hi in warp_chunks(kernel.warps, max(1, CHUNK_LANES // WARP_SIZE)):
            for k, batch in kernel.space_trace("local", lo, hi):
                counter.add(k, batch)
    return counter.stats()
