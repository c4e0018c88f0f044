"""Local-memory accounting per instruction: a front end's ("local", k, Batch) events -> the
requests and 32-byte sectors of each local load and store, over the whole launch.

Units: one request per warp execution with an active lane; sectors are the distinct
`sector_bytes` sectors of a request's active lanes, as for global memory. Batch addresses are
the front end's interleaved local addresses (the hardware places the same per-thread word of
consecutive threads in consecutive words, so a warp's uniform access to its frames is
coalesced); the front end states its layout in its assumptions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .kernel import Batch, Instruction, InstructionNamed, instruction_fields
from .repeat import RepeatedBatch, account_repeated
from .sectors import account_rows


@dataclass(frozen=True)
class LocalStats:
    """Local-memory accounting of one instruction (or of all of them, for the totals)."""

    requests: int
    active_lanes: int
    logical_bytes: int
    sectors: int


@dataclass(frozen=True)
class LocalInstructionStats(InstructionNamed, LocalStats):
    """Local-memory accounting of one instruction, with its name and place."""


class LocalCounter:
    """Running sums of a kernel's local instructions: requests, lanes, bytes, sectors."""

    def __init__(self, instructions: tuple[Instruction, ...], sector_bytes: int):
        self.instructions = instructions
        self.sector_bytes = sector_bytes
        self._sums = np.zeros((len(instructions), 4), dtype=np.int64)

    def add(self, k: int, batch: Batch) -> None:
        """Count one execution of local instruction k by a chunk of warps."""
        width = self.instructions[k].width
        address = np.broadcast_to(batch.address, batch.active.shape)
        rows = account_rows(address, width, batch.active, self.sector_bytes)
        lanes = int(batch.active.sum())
        self._sums[k] += (int(batch.active.any(axis=1).sum()), lanes, lanes * width,
                          int(rows.counts.sum()))

    def add_repeated(self, k: int, batch: RepeatedBatch) -> None:
        """Count local instruction k's executions in `batch` (closed forms), as `add` counts
        each of them."""
        width = self.instructions[k].width
        acc = account_repeated(batch, width, self.sector_bytes)
        active = batch.valid[batch.cls] & batch.full[:, None]
        active[batch.mixed] = batch.lanes
        lanes = int(active.sum()) * batch.executions
        self._sums[k] += (int(acc.requests.sum()), lanes, lanes * width, int(acc.sectors.sum()))

    def listing(self) -> tuple[LocalInstructionStats, ...]:
        """Each local instruction's figures, in program order."""
        return tuple(LocalInstructionStats(**asdict(LocalStats(*map(int, sums))),
                                           **instruction_fields(ins))
                     for sums, ins in zip(self._sums, self.instructions))
