"""The running state of one analysis: per-instruction sums, touched sectors and (optionally)
per-warp counts, fed chunk by chunk -> the Analysis of the warps counted so far."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np

from .boundaries import boundaries
from .budget import Budget
from .cache import CacheResult
from .constant_reads import constant_listing
from .errors import PatternError
from .instruction_sums import InstructionSums, total_stats
from .kernel import instruction_fields
from .pattern import Pattern
from .repeat import RepeatedBatch, account_repeated
from .results import Analysis, InstructionStats
from .sectors import RowAccount, ideal_sectors
from .unique import SectorSet

if TYPE_CHECKING:
    from .frontend import FrontEnd

MAX_PER_WARP_CELLS = 2**27  # (instruction, warp) counts kept by per_warp: 2.5 GiB at most


class Tally:
    """Sums and touched sectors per instruction; with `per_warp`, (instructions, warps)
    sector, request and ideal-sector counts, reserved against `budget`."""

    def __init__(self, pattern: Pattern, kernel: FrontEnd, per_warp: bool, budget: Budget):
        self.pattern, self.kernel, self.sb = pattern, kernel, pattern.sector_bytes
        n, warps = len(kernel.instructions), kernel.warps
        self.widths = [ins.width for ins in kernel.instructions]
        self.sums = [InstructionSums(w, self.sb) for w in self.widths]
        self.seen = [SectorSet() for _ in range(n)]
        self.per_warp = per_warp
        if per_warp and n * warps > MAX_PER_WARP_CELLS:
            raise PatternError("launch", f"{n} instructions x {warps} warps is too many "
                                         f"per-warp counts to keep (at most "
                                         f"{MAX_PER_WARP_CELLS}); shrink the grid")
        if per_warp:
            budget.reserve(20 * n * warps, f"per-warp counts of {n} instructions x "
                                           f"{warps:,} warps", "launch")
        self.per_sectors = np.zeros((n, warps), dtype=np.int64) if per_warp else None
        self.per_requests = np.zeros((n, warps), dtype=np.int32) if per_warp else None
        self.per_ideal = np.zeros((n, warps), dtype=np.int64) if per_warp else None

    def record(self, k: int, lo: int, hi: int, rows: RowAccount) -> None:
        """Instruction k's requests by warps [lo, hi), one row per warp execution."""
        self.sums[k].add(rows)
        for touched in rows.touched:
            self.seen[k].add(touched)
        if rows.touched_ranges is not None:
            self.seen[k].add_runs(*rows.touched_ranges)
        if self.per_warp:
            assert self.per_sectors is not None and self.per_requests is not None
            assert self.per_ideal is not None  # kept with per_warp
            self.per_sectors[k, lo:hi] += rows.counts
            self.per_requests[k, lo:hi] += rows.requested
            self.per_ideal[k, lo:hi] += ideal_sectors(rows.useful, self.sb) * rows.requested

    def record_repeated(self, k: int, lo: int, hi: int, batch: RepeatedBatch,
                        place: str = "budget") -> None:
        """Instruction k's repeated executions by warps [lo, hi), counted in closed form (a
        row per warp, or with `per_warp` off, any rows standing for them)."""
        acc = account_repeated(batch, self.widths[k], self.sb, place)
        self.sums[k].add_repeated(acc)
        for first, last in acc.runs:
            self.seen[k].add_runs(first, last)
        if self.per_warp:
            assert self.per_sectors is not None and self.per_requests is not None
            assert self.per_ideal is not None  # kept with per_warp
            self.per_sectors[k, lo:hi] += acc.sectors
            self.per_requests[k, lo:hi] += acc.requests
            self.per_ideal[k, lo:hi] += acc.ideals

    def analysis(self, done: int, cache: CacheResult | None = None) -> Analysis:
        """The Analysis of warps [0, done): complete when done is every warp."""
        kernel, sb = self.kernel, self.sb
        instructions = tuple(
            InstructionStats(**asdict(acc.stats(s.count())), **instruction_fields(ins))
            for acc, s, ins in zip(self.sums, self.seen, kernel.instructions))
        totals = total_stats(self.sums, self.seen, sb)
        per_sectors, per_requests, per_ideal = self.per_sectors, self.per_requests, self.per_ideal
        if done < kernel.warps and per_sectors is not None:
            assert per_requests is not None and per_ideal is not None  # kept with per_sectors
            per_sectors, per_requests = per_sectors[:, :done], per_requests[:, :done]
            per_ideal = per_ideal[:, :done]
        bounds = boundaries(instructions, totals, sb, kernel.assumptions, cache)
        complete = done == kernel.warps
        return Analysis(self.pattern.name, sb, kernel.warps,
                        kernel.blocks * kernel.threads_per_block, instructions, totals, bounds,
                        per_sectors, per_requests, None if complete else done,
                        constant_listing(kernel) if complete else (), per_ideal,
                        cache=cache, histograms=tuple(acc.histogram.copy() for acc in self.sums))
