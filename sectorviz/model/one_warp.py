"""One warp's per-lane view: (pattern, global warp index) -> each global instruction's
executions with lane addresses (bytes), sector spans and counts, and each shared
instruction's executions (byte offsets in the block's shared memory), without touching the
other warps, with the bank wavefronts of each shared execution (model/banks.py). Where the
front end gives the warp in closed form (warp_closed), the executions are made when asked
(closed_runs.py) and nothing runs lane by lane; else one lane-path run of the warp's block
lists them. Both are kept in the one cache (memo.MEMO)."""

from __future__ import annotations

from typing import Callable, TypeVar

import numpy as np

from .banks import bank_rows
from .budget import Budget, current, work_budget
from .chunks import check_widths
from .closed_runs import Parts, closed_details, lane_execution
from .errors import PatternError
from .frontend import FrontEnd, kernel_for, read_as
from .kernel import Batch, Threads
from .memo import MEMO
from .pattern import Pattern
from .values import Executions, LaneExecution, Lazy, SharedWarpDetail, WarpDetail, WarpDetails

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
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    closed = kernel.warp_closed(warp, sb)
    if closed is None:
        current().check(*kernel.work_estimate(1), place="warp")
        runs, shared, waves = _lane_path(kernel, warp, threads, sb)
    else:
        runs, shared, waves = closed_details(
            closed, [ins.width for ins in kernel.instructions],
            [ins.width for ins in kernel.shared_instructions], sb)
    block_x, block_y, block_z = (int(b[0, 0]) for b in threads.block)
    detail = WarpDetail(warp, threads.valid[0], tuple(t[0] for t in threads.thread),
                        (block_x, block_y, block_z), runs)
    return detail, SharedWarpDetail(warp, threads.valid[0], shared, waves)


def _lane_path(kernel: FrontEnd, warp: int, threads: Threads, sb: int) -> Parts:
    """The warp's executions, listed from one lane-path run of its block."""
    runs: list[list[LaneExecution]] = [[] for _ in kernel.instructions]
    shared: list[list[Batch]] = [[] for _ in kernel.shared_instructions]
    for space, k, b in kernel.events(warp, warp + 1, threads):
        assert b is not None  # nothing skipped: every execution comes with its batch
        if space == "global":
            runs[k].append(lane_execution(b, kernel.instructions[k].width, sb))
        elif space == "shared":
            shared[k].append(b)
    return (tuple(Executions(r) for r in runs), tuple(Lazy(r) for r in shared),
            tuple(Lazy(_wavefronts(r, ins.width))
                  for r, ins in zip(shared, kernel.shared_instructions)))


def _wavefronts(runs: list[Batch], width: int) -> tuple[int, ...]:
    """Wavefronts of each of one warp's executions of a `width`-byte shared instruction (one
    bank_rows over all of them: a loop of many iterations stays quick)."""
    if not runs:
        return ()
    address = np.stack([np.broadcast_to(b.address, b.active.shape)[0] for b in runs])
    active = np.stack([b.active[0] for b in runs])
    return tuple(int(w) for w in bank_rows(address, width, active).wavefronts)
