"""The driver: Pattern -> per-instruction and total sector demand, streamed over warps.

Units: bytes for *_bytes, 32-byte (sector_bytes) sectors for *sectors, one request per warp
execution of an instruction with at least one active lane. `analyze` is a pure function of
the pattern; it walks the grid in chunks of warps (chunks.py) so memory stays bounded, spends
a work budget and reports progress; the sums live in tally.py, the values in results.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping

from .affine import WarpCoordinates, affine_batch
from .boundaries import with_local
from .budget import Budget, work_budget
from .cache import simulation
from .chunks import (
    CLOSED_CHUNKS,
    LANE_BYTES,
    check_widths,
    chunk_lanes,
    warp_chunks,
)
from .frontend import kernel_for, read_as
from .memo import MEMO
from .pattern import Pattern
from .results import Analysis
from .sectors import WARP_SIZE, account_rows
from .shared_stats import SharedCounter
from .tally import Tally

if TYPE_CHECKING:
    from .affine import AffinePlan


class Cancelled(Exception):
    """Raised by a progress callback to stop an analysis early."""


def analyze(pattern: Pattern, per_warp: bool = False,
            progress: Callable[[int, int], None] | None = None,
            partial: Callable[[Callable[[], Analysis]], None] | None = None,
            budget: Budget | None = None) -> Analysis:
    """Pattern -> Analysis. `per_warp` keeps (instructions, warps) sector, request and ideal
    sector counts;
    `progress(done_warps, total_warps)` is called after each chunk and may raise Cancelled;
    `partial(so_far)` too, where so_far() is the Analysis of the warps done (`warps_done`
    set, per-warp counts of those warps only). The run spends `budget` (None: the one
    already open, or a default one); work it can size up front is refused before it
    starts. Memory: chunks of warps sized from the budget's memory cap, per-warp counts and
    unique-sector stores held against it."""
    with work_budget(budget) as spend:
        try:
            return _analyze(pattern, per_warp, progress, partial, spend)
        finally:
            spend.progress = None


def analyzed(pattern: Pattern, per_warp: bool = False, budget: Budget | None = None
             ) -> Analysis:
    """analyze(pattern, per_warp) within `budget` (default: the default budget), kept in the
    one cache while the files it read are unchanged (the next theme, warp or view of the same
    pattern; a run that finishes gives the same Analysis under any budget)."""
    kind = "per-warp analysis" if per_warp else "analysis"
    return MEMO.get(kind, read_as(pattern), lambda: analyze(pattern, per_warp, budget=budget))


def _analyze(pattern: Pattern, per_warp: bool, progress: Callable[[int, int], None] | None,
             partial: Callable[[Callable[[], Analysis]], None] | None,
             budget: Budget) -> Analysis:
    kernel = kernel_for(pattern)
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    n = len(kernel.instructions)
    plans: Mapping[int, AffinePlan] = kernel.closed_forms
    sim = simulation(pattern.machine, kernel, sb)
    closed = sim is None  # the cache model takes every request's sectors: the lane path
    if not closed:
        plans = {}
    tally = Tally(pattern, kernel, per_warp, budget)

    # closed forms work per warp, not per lane: they take chunks 32 times larger; an element
    # wider than a sector touches up to width / sector_bytes + 1 sectors per lane: fewer warps
    # a CUDA kernel's variables hold kernel.lane_bytes more per lane: fewer lanes per chunk
    lanes = chunk_lanes(budget.memory * LANE_BYTES // (LANE_BYTES + kernel.lane_bytes))
    shared = SharedCounter(kernel, lanes // WARP_SIZE, per_warp, sb)  # run lane by lane
    all_closed = len(plans) == n and not shared.instructions and not shared.local.instructions
    chunk = lanes if all_closed else max(1, lanes // WARP_SIZE)
    chunk = max(1, chunk // max([1] + [-(-w // sb) for w in tally.widths]))
    chunk = sim.chunk_warps(chunk) if sim is not None else chunk
    # a CUDA kernel's closed forms count whole loop runs, a multiple of the lane path's
    # chunks at a time; where they do not apply, the lane path takes over from that chunk

    def chunk_done(hi: int) -> None:
        budget.progress = (hi, kernel.warps)
        if progress is not None:
            progress(hi, kernel.warps)
        if partial is not None and hi < kernel.warps:
            def analysis_so_far(done: int = hi) -> Analysis:
                return tally.analysis(done)
            partial(analysis_so_far)

    start = 0
    while closed and start < kernel.warps:
        step = kernel.closed_trace(start, chunk * CLOSED_CHUNKS, sb, per_warp)
        if step is None:
            break
        hi, events = step
        for space, k, repeated in events:
            if space == "global":
                tally.record_repeated(k, start, hi, repeated)
        shared.closed_step(start, hi, events)
        start = hi
        chunk_done(hi)
    if start < kernel.warps:  # the lane path takes over (or runs every warp): size it
        budget.check(*kernel.work_estimate(kernel.warps - start, plans), place="launch")
        kernel.whole_values()  # read by most warps: built once, not per chunk
    for lo, hi in warp_chunks(kernel.warps - start, chunk, start):
        coords = WarpCoordinates(kernel, lo, hi) if plans else None
        # in program order, so that the first error is the one the lane path would raise
        steps = ((k, None) for k in range(n)) if all_closed else \
            shared.global_steps(lo, hi, plans)
        for k, batch in steps:
            if batch is None:
                assert coords is not None  # a skipped instruction has a plan
                tally.record_repeated(k, lo, hi, affine_batch(plans[k], coords, not per_warp),
                                      plans[k].place)
            else:
                width = tally.widths[k]
                tally.record(k, lo, hi, account_rows(batch.address, width, batch.active, sb))
                if sim is not None:
                    sim.add(lo, kernel.instructions[k].op, width, batch.address, batch.active)
        if sim is not None:
            sim.flush(hi)
        chunk_done(hi)
    return with_local(shared.added_to(tally.analysis(
        kernel.warps, sim.result() if sim is not None else None)))
