"""One warp's per-lane view: (pattern, global warp index) -> each global instruction's
executions with lane addresses (bytes), sector spans and counts, and each shared
instruction's executions (byte offsets in the block's shared memory), without touching the
other warps, with the bank wavefronts of each shared execution (model/banks.py). Both are
kept in the one cache (memo.MEMO)."""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from .banks import bank_rows
from .budget import Budget, current, work_budget
from .chunks import check_widths
from .errors import PatternError
from .frontend import kernel_for, read_as
from .kernel import Batch
from .memo import MEMO
from .pattern import Pattern
from .sectors import lane_sector_spans, sector_counts, useful_bytes
from .values import LaneExecution, SharedWarpDetail, WarpDetail, WarpDetails

T = TypeVar("T")


def warp_details(pattern: Pattern, warp: int) -> WarpDetails:
    """(pattern, global warp index) -> its WarpDetails, a PatternError kept as its text."""
    def either(detail: Callable[[Pattern, int], T]) -> T | str:
        try:
            return detail(pattern, warp)
        except PatternError as err:
            return str(err)
    return WarpDetails(warp, either(warp_detail), either(shared_warp_detail)
                       if kernel_for(pattern).shared_instructions else None)


def warp_detail(pattern: Pattern, warp: int, budget: Budget | None = None) -> WarpDetail:
    """(pattern, global warp index) -> per-lane detail for that warp only, spending `budget`
    (None: the one already open, or a default one)."""
    return _one_warp(pattern, warp, budget)[0]


def shared_warp_detail(pattern: Pattern, warp: int, budget: Budget | None = None
                       ) -> SharedWarpDetail:
    """(pattern, global warp index) -> every shared instruction's executions by that warp
    (one row each) and their wavefronts, in program order, spending `budget` (None: the one
    open, or a default)."""
    return _one_warp(pattern, warp, budget)[1]


def _one_warp(pattern: Pattern, warp: int, budget: Budget | None
              ) -> tuple[WarpDetail, SharedWarpDetail]:
    """Both details of one warp from one run of its block (kept: a loop of many iterations
    runs the lane path once, not once per memory space)."""
    with work_budget(budget):
        return MEMO.get("one warp", (read_as(pattern), warp),
                        lambda: _details(pattern, warp))


def _details(pattern: Pattern, warp: int) -> tuple[WarpDetail, SharedWarpDetail]:
    kernel = kernel_for(pattern)
    threads = kernel.threads(warp, warp + 1)
    current().check(*kernel.work_estimate(1), place="warp")
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    runs: list[list[LaneExecution]] = [[] for _ in kernel.instructions]
    shared: list[list[Batch]] = [[] for _ in kernel.shared_instructions]
    for space, k, b in kernel.events(warp, warp + 1, threads):
        assert b is not None  # nothing skipped: every execution comes with its batch
        if space == "global":
            runs[k].append(_execution(b, kernel.instructions[k].width, sb))
        elif space == "shared":
            shared[k].append(b)
    block_x, block_y, block_z = (int(b[0, 0]) for b in threads.block)
    detail = WarpDetail(warp, threads.valid[0], tuple(t[0] for t in threads.thread),
                        (block_x, block_y, block_z), tuple(tuple(r) for r in runs))
    return detail, SharedWarpDetail(warp, threads.valid[0], tuple(tuple(r) for r in shared),
                                    tuple(_wavefronts(r, ins.width) for r, ins in
                                          zip(shared, kernel.shared_instructions)))


def _execution(b: Batch, width: int, sector_bytes: int) -> LaneExecution:
    """One execution of a `width`-byte global instruction by the warp (row 0 of b)."""
    address = np.broadcast_to(b.address, b.active.shape)
    first, last = lane_sector_spans(address, width, sector_bytes)
    return LaneExecution(
        iteration={v: np.asarray(x)[0] for v, x in b.iteration.items()},
        active=b.active[0], element=np.broadcast_to(b.element, b.active.shape)[0],
        row=None if b.row is None else b.row[0], col=None if b.col is None else b.col[0],
        address=address[0], first_sector=first[0], last_sector=last[0],
        sectors=int(sector_counts(address, width, b.active, sector_bytes)[0]),
        useful_bytes=int(useful_bytes(address, width, b.active)[0]))


def _wavefronts(runs: list[Batch], width: int) -> tuple[int, ...]:
    """Wavefronts of each of one warp's executions of a `width`-byte shared instruction (one
    bank_rows over all of them: a loop of many iterations stays quick)."""
    if not runs:
        return ()
    address = np.stack([np.broadcast_to(b.address, b.active.shape)[0] for b in runs])
    active = np.stack([b.active[0] for b in runs])
    return tuple(int(w) for w in bank_rows(address, width, active).wavefronts)
