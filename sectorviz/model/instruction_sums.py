"""Running sums of one instruction's requests over batches of warp executions -> its Stats,
and all instructions' sums -> the totals (bytes, sectors of `sector_bytes` bytes, requests)."""

from __future__ import annotations

import numpy as np

from .repeat import RepeatedAccount
from .results import Stats
from .sectors import RowAccount, ideal_sectors
from .unique import SectorSet


class InstructionSums:
    """Running sums for one instruction over batches of warp executions."""

    def __init__(self, width: int, sector_bytes: int):
        self.width, self.sb = width, sector_bytes
        self.requests = self.active_lanes = self.useful = self.sectors = self.ideal = 0
        self.histogram = np.zeros(1, dtype=np.int64)

    def add(self, rows: RowAccount) -> None:
        counts, useful = rows.counts, rows.useful
        if _uniform(counts) and _uniform(useful) and _uniform(rows.requested):
            self._add_alike(int(counts[0]), int(useful[0]), len(counts) if rows.requested[0] else 0,
                            rows.active_lanes)
            return
        if not rows.requested.all():
            counts, useful = counts[rows.requested], useful[rows.requested]
        self.requests += len(counts)
        self.active_lanes += rows.active_lanes
        self.useful += int(useful.sum())
        self.sectors += int(counts.sum())
        self.ideal += int(ideal_sectors(useful, self.sb).sum())
        self._count(np.bincount(counts))

    def add_repeated(self, acc: RepeatedAccount) -> None:
        """Sums of a RepeatedBatch's executions, counted in closed form."""
        self.requests += int(acc.requests.sum())
        self.active_lanes += acc.active_lanes
        self.useful += acc.useful
        self.sectors += int(acc.sectors.sum())
        self.ideal += acc.ideal
        self._count(acc.histogram)

    def _count(self, hist: np.ndarray) -> None:
        """Add requests by sectors per request to the histogram."""
        if len(hist) > len(self.histogram):
            hist[: len(self.histogram)] += self.histogram
            self.histogram = hist
        else:
            self.histogram[: len(hist)] += hist

    def _add_alike(self, count: int, useful: int, requests: int, lanes: int) -> None:
        """`requests` warp executions of `count` sectors and `useful` bytes each."""
        self.requests += requests
        self.active_lanes += lanes
        self.useful += useful * requests
        self.sectors += count * requests
        self.ideal += ideal_sectors(useful, self.sb) * requests
        if count >= len(self.histogram):
            self.histogram = np.pad(self.histogram, (0, count + 1 - len(self.histogram)))
        self.histogram[count] += requests

    def stats(self, unique: int) -> Stats:
        return _stats(self.requests, self.active_lanes, self.active_lanes * self.width,
                      self.useful, self.sectors, self.sb, self.ideal, self.histogram, unique)


def _uniform(values: np.ndarray) -> bool:
    """A non-empty array broadcast from one value (stride 0): the rows of one class."""
    return len(values) > 0 and values.strides == (0,)


def _stats(requests: int, lanes: int, logical: int, useful: int, sectors: int, sb: int,
           ideal: int, histogram: np.ndarray, unique: int) -> Stats:
    """Sums (requests, lanes, bytes, sectors) -> the Stats of an instruction or the kernel."""
    seen = np.nonzero(histogram)[0]
    return Stats(
        requests=requests, active_lanes=lanes, logical_bytes=logical, useful_bytes=useful,
        sectors=sectors, sector_bytes=sb, ideal_sectors=ideal, excess_sectors=sectors - ideal,
        sectors_per_request=sectors / requests if requests else 0.0,
        useful_fraction=useful / (sectors * sb) if sectors else 0.0,
        min=int(seen[0]) if len(seen) else 0, max=int(seen[-1]) if len(seen) else 0,
        mode=int(np.argmax(histogram)) if len(seen) else 0, unique_sectors=unique)


def total_stats(sums: list[InstructionSums], seen: list[SectorSet], sb: int) -> Stats:
    """Every instruction's sums and touched sectors -> the kernel's totals (unique sectors:
    the union over instructions)."""
    width = max((len(a.histogram) for a in sums), default=1)  # a kernel may access nothing
    histogram = np.zeros(width, dtype=np.int64)
    for a in sums:
        histogram[: len(a.histogram)] += a.histogram
    return _stats(sum(a.requests for a in sums), sum(a.active_lanes for a in sums),
                  sum(a.active_lanes * a.width for a in sums), sum(a.useful for a in sums),
                  sum(a.sectors for a in sums), sb, sum(a.ideal for a in sums), histogram,
                  seen[0].union_count(seen) if seen else 0)
