"""Reads of `__constant__` arrays: a kernel's constant instructions -> requests and distinct
addresses per instruction over the whole launch (the constant cache's passes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .chunks import CHUNK_LANES, warp_chunks
from .results import ConstantStats
from .sectors import WARP_SIZE

if TYPE_CHECKING:
    from .frontend import FrontEnd


def distinct_per_row(address: np.ndarray, active: np.ndarray) -> np.ndarray:
    """(rows, 32) addresses -> (rows,) number of distinct addresses among active lanes."""
    keyed = np.where(active, address, np.iinfo(np.int64).max)
    keyed.sort(axis=1)
    distinct = np.ones(keyed.shape, dtype=bool)
    distinct[:, 1:] = keyed[:, 1:] != keyed[:, :-1]
    counts: np.ndarray = (distinct & (keyed != np.iinfo(np.int64).max)).sum(axis=1)
    return counts


def constant_listing(kernel: FrontEnd) -> tuple[ConstantStats, ...]:
    """A kernel's reads of __constant__ arrays (`constant_instructions`, traced by
    `space_trace("constant", ...)`) -> requests and distinct addresses per instruction."""
    instructions = kernel.constant_instructions
    sums = np.zeros((len(instructions), 2), dtype=np.int64)  # requests, distinct addresses
    if instructions:
        for lo, hi in warp_chunks(kernel.warps, max(1, CHUNK_LANES // WARP_SIZE)):
            for k, batch in kernel.space_trace("constant", lo, hi):
                address = np.broadcast_to(batch.address, batch.active.shape)
                sums[k] += (batch.active.any(axis=1).sum(),
                            distinct_per_row(address, batch.active).sum())
    return tuple(ConstantStats(ins.array, ins.line, int(r), int(d), ins.name, ins.column,
                               ins.source) for ins, (r, d) in zip(instructions, sums))
