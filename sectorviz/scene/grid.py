"""The lane-to-sector grid of one warp execution, as a pure layout both the app and exports draw,
and the per-warp values around it (loop caption, sectors against ideal).

(lane, touched sector) -> the byte range [lo, hi) of that sector the lane uses. Columns are the
distinct sectors in address order; a run of untouched sectors between two touched ones becomes
one gap column that says how many bytes it skips.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, cast

import numpy as np

from ..model.sectors import WARP_SIZE
from ..model.values import Executions, LaneExecution

LINE_BYTES = 128  # an L1 cache line: 4 sectors of 32 B


@dataclass(frozen=True)
class SectorColumn:
    sector: int  # absolute sector index: address // sector_bytes
    address: int  # byte address of the sector's first byte
    relative: int  # address - the array's element-0 address (may be negative)
    used_bytes: int  # distinct bytes of this sector that active lanes use
    line_start: bool  # the sector begins a 128-byte line (address % LINE_BYTES == 0)
    unused: tuple[tuple[int, int], ...]  # byte ranges [lo, hi) of the sector no lane uses


@dataclass(frozen=True)
class GapColumn:
    skipped_bytes: int  # untouched bytes between the neighbouring sector columns


Column = SectorColumn | GapColumn


@dataclass(frozen=True)
class GridLayout:
    """Cells are indexed [lane, j] for the j-th sector column (gaps excluded)."""

    sector_bytes: int
    width: int
    columns: tuple[Column, ...]
    sectors: np.ndarray  # (n,) touched sector ids, ascending
    cell_lo: np.ndarray  # (32, n) first used byte offset within the sector, or 0
    cell_hi: np.ndarray  # (32, n) one past the last used byte; == cell_lo where unused
    active: np.ndarray  # (32,) lane takes part in this execution
    valid: np.ndarray  # (32,) lane exists (False past the end of a partial warp)
    crossing: np.ndarray  # (32,) lane's access spans more than one sector
    shared: np.ndarray  # (32,) another active lane uses some of the same bytes

    @property
    def hits(self) -> list[tuple[int, int]]:
        """(lane, absolute sector) for every cell an active lane touches."""
        lanes, cols = np.nonzero(self.cell_hi > self.cell_lo)
        return [(int(lane), int(self.sectors[c])) for lane, c in zip(lanes, cols)]

    def column_of(self, j: int) -> int:
        """Index in `columns` of the j-th sector column."""
        return [i for i, c in enumerate(self.columns) if isinstance(c, SectorColumn)][j]


def grid_layout(run: LaneExecution, width: int, sector_bytes: int, array_address0: int,
                valid: np.ndarray | None = None) -> GridLayout:
    """One execution of one instruction by one warp -> its lane-to-sector grid."""
    active = np.asarray(run.active, dtype=bool)
    start = np.asarray(run.address, dtype=np.int64)
    end = start + width
    first, last = np.asarray(run.first_sector), np.asarray(run.last_sector)
    touched = [np.arange(first[i], last[i] + 1) for i in range(WARP_SIZE) if active[i]]
    sectors = np.unique(np.concatenate(touched)) if touched else np.zeros(0, dtype=np.int64)
    sector_start = sectors * sector_bytes
    lo = np.clip(start[:, None] - sector_start[None, :], 0, sector_bytes)
    hi = np.clip(end[:, None] - sector_start[None, :], 0, sector_bytes)
    hi = np.where(active[:, None] & (hi > lo), hi, lo)
    overlap = (start[:, None] < end[None, :]) & (start[None, :] < end[:, None])
    overlap &= active[:, None] & active[None, :]
    np.fill_diagonal(overlap, False)
    return GridLayout(
        sector_bytes=sector_bytes, width=width,
        columns=_columns(sectors, sector_bytes, array_address0, lo, hi),
        sectors=sectors, cell_lo=lo, cell_hi=hi, active=active,
        valid=np.ones(WARP_SIZE, dtype=bool) if valid is None else np.asarray(valid, dtype=bool),
        crossing=active & (last > first), shared=cast(np.ndarray, overlap.any(axis=1)))


def _columns(sectors: np.ndarray, sector_bytes: int, address0: int, lo: np.ndarray,
             hi: np.ndarray) -> tuple[Column, ...]:
    columns: list[Column] = []
    for j, sector in enumerate(sectors):
        if j and sector - sectors[j - 1] > 1:
            columns.append(GapColumn(int(sector - sectors[j - 1] - 1) * sector_bytes))
        used = np.zeros(sector_bytes, dtype=bool)
        for a, b in zip(lo[:, j], hi[:, j]):
            used[a:b] = True
        address = int(sector) * sector_bytes
        columns.append(SectorColumn(int(sector), address, address - address0, int(used.sum()),
                                    address % LINE_BYTES == 0, _unused_ranges(used)))
    return tuple(columns)




def _unused_ranges(used: np.ndarray) -> tuple[tuple[int, int], ...]:
    """A sector's used-byte mask -> the [lo, hi) runs of bytes no lane uses."""
    flips = np.diff(np.concatenate([[False], ~used, [False]]).astype(np.int8))
    starts, ends = np.flatnonzero(flips == 1), np.flatnonzero(flips == -1)
    return tuple((int(a), int(b)) for a, b in zip(starts, ends))


@dataclass(frozen=True)
class RunTotals:
    """Sums over executions of one warp: sectors, useful (distinct) bytes, ideal sectors (the
    whole sectors those bytes need) and fetched bytes (sectors x sector size)."""

    sectors: int
    useful_bytes: int
    ideal_sectors: int
    fetched_bytes: int

    @property
    def useful_fraction(self) -> float:
        return self.useful_bytes / self.fetched_bytes if self.fetched_bytes else 0.0


def run_totals(runs: Sequence[LaneExecution], sector_bytes: int) -> RunTotals:
    """Executions of one warp -> their RunTotals (Executions.sums: summed without making
    each execution where they come from closed forms)."""
    listed = runs if isinstance(runs, Executions) else Executions(runs)
    sectors, useful, ideal = listed.sums(sector_bytes)
    return RunTotals(sectors, useful, ideal, sectors * sector_bytes)


def loop_caption(run: LaneExecution) -> str:
    """The loop variables of one execution: 'k = 3', or 'k = 3..31' where the active lanes
    disagree; '' outside loops."""
    return ", ".join(f"{v} = {_loop_value(x, run.active)}" for v, x in run.iteration.items())


def _loop_value(x: np.ndarray, active: np.ndarray) -> str:
    x = np.asarray(x)
    if x.ndim == 0:
        return str(int(x))
    seen = x[active] if active.any() else x
    lo, hi = int(seen.min()), int(seen.max())
    return str(lo) if lo == hi else f"{lo}..{hi}"
