"""One warp's per-lane view: (pattern, global warp index) -> each global instruction's
executions with lane addresses (bytes), sector spans and counts, and each shared
instruction's executions (byte offsets in the block's shared memory), without touching the
other warps. Both are kept in the one cache (memo.MEMO)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .budget import Budget, current, work_budget
from .chunks import check_widths
from .frontend import kernel_for, read_as
from .kernel import Batch
from .memo import MEMO
from .pattern import Pattern
from .sectors import lane_sector_spans, sector_counts, useful_bytes


@dataclass(frozen=True)
class LaneExecution:
    """One execution of one instruction by one warp: arrays of 32 lanes."""

    iteration: dict[str, np.ndarray]
    active: np.ndarray
    element: np.ndarray
    row: np.ndarray | None
    col: np.ndarray | None
    address: np.ndarray
    first_sector: np.ndarray
    last_sector: np.ndarray
    sectors: int
    useful_bytes: int


@dataclass(frozen=True)
class WarpDetail:
    """A warp's lanes: thread and block coordinates, and each instruction's executions."""

    warp: int
    valid: np.ndarray
    thread: tuple[np.ndarray, np.ndarray, np.ndarray]
    block: tuple[int, int, int]
    executions: tuple[tuple[LaneExecution, ...], ...]  # per instruction, in program order


def warp_detail(pattern: Pattern, warp: int, budget: Budget | None = None) -> WarpDetail:
    """(pattern, global warp index) -> per-lane detail for that warp only, spending `budget`
    (None: the one already open, or a default one)."""
    with work_budget(budget):
        return MEMO.get("warp detail", (read_as(pattern), warp),
                        lambda: _warp_detail(pattern, warp))


def shared_warp_detail(pattern: Pattern, warp: int, budget: Budget | None = None
                       ) -> tuple[tuple[Batch, ...], ...]:
    """(pattern, global warp index) -> every shared instruction's executions by that warp
    (one row each), in program order, spending `budget` (None: the one open, or a default)."""
    with work_budget(budget):
        return MEMO.get("shared warp detail", (read_as(pattern), warp),
                        lambda: _shared_warp_detail(pattern, warp))


def _shared_warp_detail(pattern: Pattern, warp: int) -> tuple[tuple[Batch, ...], ...]:
    kernel = kernel_for(pattern)
    runs: list[list[Batch]] = [[] for _ in kernel.shared_instructions]
    for k, b in kernel.space_trace("shared", warp, warp + 1):
        runs[k].append(b)
    return tuple(tuple(r) for r in runs)


def _warp_detail(pattern: Pattern, warp: int) -> WarpDetail:
    kernel = kernel_for(pattern)
    threads = kernel.threads(warp, warp + 1)
    current().check(*kernel.work_estimate(1), place="warp")
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    runs: list[list[LaneExecution]] = [[] for _ in kernel.instructions]
    for k, b in kernel.trace(warp, warp + 1, threads):
        assert b is not None  # nothing skipped: every execution comes with its batch
        width = kernel.instructions[k].width
        address = np.broadcast_to(b.address, b.active.shape)
        first, last = lane_sector_spans(address, width, sb)
        runs[k].append(LaneExecution(
            iteration={v: np.asarray(x)[0] for v, x in b.iteration.items()},
            active=b.active[0], element=np.broadcast_to(b.element, b.active.shape)[0],
            row=None if b.row is None else b.row[0], col=None if b.col is None else b.col[0],
            address=address[0], first_sector=first[0], last_sector=last[0],
            sectors=int(sector_counts(address, width, b.active, sb)[0]),
            useful_bytes=int(useful_bytes(address, width, b.active)[0])))
    block_x, block_y, block_z = (int(b[0, 0]) for b in threads.block)
    return WarpDetail(warp, threads.valid[0], tuple(t[0] for t in threads.thread),
                      (block_x, block_y, block_z), tuple(tuple(r) for r in runs))
