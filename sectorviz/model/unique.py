"""Distinct sectors of a run: sector ids -> their union, kept as runs, counted exactly.

Memory follows the number of distinct runs, not the span of the arrays: the union is a set
of disjoint rectangles in (q, r) space, where sector s = q * period + r. With period 1 a
rectangle is an interval of sectors; a strided run (first, count, stride) -- the sectors of a
warp whose lanes are `stride` sectors apart -- is one rectangle once the period is `stride`,
and the runs of many warps coalesce into a few. Scattered ids (gathers) go to a bitmap over
the span they touch. A set holds its high-water mark of memory (what it keeps, plus what a
merge or a bitmap is about to allocate) against the run's memory cap (budget.reserve).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from .budget import reserve

RUNNY = 8  # ids are kept as runs when they form at most 1/RUNNY as many runs as ids
MIN_PENDING = 2**16  # rectangles buffered before they are merged with the kept ones
_RECT_BYTES = 4 * 8  # q0, q1, r0, r1 as int64


class SectorSet:
    """The distinct sector ids added so far: add(ids), add_runs(first, last),
    add_strided(first, count, stride), count(), union_count(sets)."""

    def __init__(self) -> None:
        self.period = 1
        self._rects = _empty_rects()  # disjoint, canonical after _merge
        self._pending: list[tuple[np.ndarray, ...]] = []
        self._pending_count = 0
        self._bits: np.ndarray | None = None  # bool, sector lo + i; one False past the end
        self._lo = 0
        self._held = 0  # bytes held against the run's memory cap: the most this set needed

    # ------------------------------------------------------------ adding

    def add(self, ids: np.ndarray) -> None:
        """Sector ids of any shape (repeats allowed). A (rows, lanes) array whose rows step
        by one common stride is taken as strided runs; other ids as runs when they are
        mostly consecutive, else into the bitmap."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size == 0:
            return
        if ids.ndim == 2 and ids.shape[1] > 1:
            steps = ids[:, 1:] - ids[:, :-1]
            stride = int(steps[0, 0])
            if (steps == stride).all():
                if abs(stride) <= 1:
                    self.add_runs(np.minimum(ids[:, 0], ids[:, -1]),
                                  np.maximum(ids[:, 0], ids[:, -1]))
                else:
                    self.add_strided(ids[:, 0] if stride > 0 else ids[:, -1], ids.shape[1],
                                     abs(stride))
                return
        self._add_flat(ids.ravel())

    def _add_flat(self, ids: np.ndarray) -> None:
        """1-D ids: as runs when mostly consecutive, else into the bitmap."""
        steps = np.diff(ids)
        breaks = np.flatnonzero((steps < 0) | (steps > 1))
        if (len(breaks) + 1) * RUNNY <= len(ids):
            self.add_runs(ids[np.concatenate(([0], breaks + 1))],
                          ids[np.concatenate((breaks, [len(ids) - 1]))])
        else:
            self._mark(ids)

    def add_runs(self, first: np.ndarray, last: np.ndarray) -> None:
        """Every sector of each run [first, last] (inclusive ids, arrays of one shape)."""
        first = np.asarray(first, dtype=np.int64).ravel()
        last = np.asarray(last, dtype=np.int64).ravel()
        if self.period == 1 and _ascends(first) and _ascends(last):  # no sort: merge now
            self._push(*_merged_intervals(first, last + 1), merged=True)
        elif self.period == 1:
            self._push(first, last + 1, 0, 1)
        else:
            self._push(*_intervals_as_rects(first, last + 1, self.period))

    def add_strided(self, first: np.ndarray, count: int, stride: int) -> None:
        """For each f in `first`: sectors f, f + stride, ..., f + (count - 1) * stride."""
        first = np.asarray(first, dtype=np.int64).ravel()
        if self.period == 1:
            self._set_period(stride)
        if stride != self.period:  # another lattice: its sectors one by one
            self._add_flat((first[:, None] + stride * np.arange(count, dtype=np.int64)).ravel())
            return
        q, r = np.divmod(first, stride)
        self._push(q, q + count, r, r + 1)

    # ------------------------------------------------------------ counting

    def count(self) -> int:
        """Distinct sectors added so far."""
        self._merge()
        q0, q1, r0, r1 = self._rects
        total = int(((q1 - q0) * (r1 - r0)).sum())
        if self._bits is None:
            return total
        return total + int(np.count_nonzero(self._bits)) - self._bits_in_rects()

    def union_count(self, sets: list["SectorSet"]) -> int:
        """Distinct sectors in the union of `sets` (this set is one of them or not)."""
        if len(sets) == 1:
            return sets[0].count()
        union = SectorSet()
        periods = {s.period for s in sets if s.period > 1}
        union._set_period(periods.pop() if len(periods) == 1 else 1)
        for s in sets:
            s._merge()
            union._absorb(s)
        return union.count()

    # ------------------------------------------------------------ internals

    def _push(self, q0: ArrayLike, q1: ArrayLike, r0: ArrayLike, r1: ArrayLike,
              *, merged: bool = False) -> None:
        """Rectangles to add; `merged` ones (disjoint, canonical) become the kept ones of a
        set that holds none."""
        q0, q1, r0, r1 = np.broadcast_arrays(q0, q1, r0, r1)
        if merged and not len(self._rects[0]) and not self._pending:
            self._rects = (q0, q1, r0, r1)
            self._hold(0, "counting unique sectors")
            return
        self._pending.append((q0, q1, r0, r1))
        self._pending_count += len(q0)
        if self._pending_count > max(MIN_PENDING, len(self._rects[0])):
            self._merge()

    def _merge(self) -> None:
        """Fold the pending rectangles into the kept ones (disjoint, canonical)."""
        if not self._pending:
            return
        parts = [self._rects] + self._pending
        self._pending, self._pending_count = [], 0
        self._hold(2 * _RECT_BYTES * sum(len(p[0]) for p in parts), "counting unique sectors")
        if self.period == 1:  # r is always [0, 1): intervals of q
            self._rects = _merged_intervals(*(np.concatenate([p[i] for p in parts])
                                              for i in range(2)))
        else:
            q0, q1, r0, r1 = (np.concatenate([p[i] for p in parts]) for i in range(4))
            self._rects = _merged_rects(q0, q1, r0, r1, self._hold)

    def _set_period(self, period: int) -> None:
        """Re-express the kept runs (period 1) as rectangles of `period`."""
        if period == self.period:
            return
        self._merge()
        q0, q1, _, _ = self._rects
        self.period, self._rects = period, _empty_rects()
        if len(q0):
            self._push(*_intervals_as_rects(q0, q1, period))

    def _absorb(self, other: "SectorSet") -> None:
        """Add every sector of `other` (merged) to this set."""
        q0, q1, r0, r1 = other._rects
        if other.period == self.period:
            self._push(q0, q1, r0, r1, merged=True)
        elif other.period == 1:
            self.add_runs(q0, q1 - 1)
        else:  # a lattice of another period: row by row
            rows = q1 - q0
            self._hold(2 * 8 * int(rows.sum()), "counting unique sectors")
            q = np.repeat(q0, rows) + _ramp(rows)
            self.add_runs(q * other.period + np.repeat(r0, rows),
                          q * other.period + np.repeat(r1, rows) - 1)
        if other._bits is not None:
            self._mark_span(other._lo, other._bits)

    def _hold(self, transient: int, what: str) -> None:
        """Hold what this set keeps plus `transient` bytes it is about to allocate, when
        that passes the most it held before; PatternError past the run's memory cap."""
        kept = _RECT_BYTES * (len(self._rects[0]) + self._pending_count)
        need = kept + transient + (0 if self._bits is None else len(self._bits))
        if need > self._held:
            reserve(need - self._held, what, "arrays")
            self._held = need

    def _mark(self, ids: np.ndarray) -> None:
        lo, hi = int(ids.min()), int(ids.max()) + 1
        self._grow(lo, hi)
        assert self._bits is not None
        self._bits[ids - self._lo] = True

    def _mark_span(self, lo: int, bits: np.ndarray) -> None:
        self._grow(lo, lo + len(bits) - 1)
        assert self._bits is not None
        self._bits[lo - self._lo: lo - self._lo + len(bits)] |= bits

    def _grow(self, lo: int, hi: int) -> None:
        """Make the bitmap cover sectors [lo, hi), keeping what it holds."""
        if self._bits is not None:
            old_lo, old_hi = self._lo, self._lo + len(self._bits) - 1
            if old_lo <= lo and hi <= old_hi:
                return
            lo, hi = min(lo, old_lo), max(hi, old_hi)
        self._hold(hi - lo + 1, f"a bitmap of the {hi - lo:,} sectors that scattered "
                                f"accesses span (one byte per sector)")
        bits = np.zeros(hi - lo + 1, dtype=bool)
        if self._bits is not None:
            bits[self._lo - lo: self._lo - lo + len(self._bits)] = self._bits
        self._bits, self._lo = bits, lo

    def _bits_in_rects(self) -> int:
        """Bitmap sectors that the rectangles also hold."""
        assert self._bits is not None
        q0, q1, r0, r1 = self._rects
        p, lo, n = self.period, self._lo, len(self._bits) - 1
        if p == 1:
            a, b = np.clip(q0, lo, lo + n) - lo, np.clip(q1, lo, lo + n) - lo
            keep = b > a
            if not keep.any():
                return 0
            edges = np.stack([a[keep], b[keep]], axis=1).ravel()
            return int(np.add.reduceat(self._bits, edges, dtype=np.int64)[::2].sum())
        first = lo // p
        rows = -(-(lo + n) // p) - first
        self._hold(rows * p, "counting unique sectors")
        grid: np.ndarray = np.zeros(rows * p, dtype=bool)
        grid[lo - first * p: lo - first * p + n] = self._bits[:n]
        grid = grid.reshape(rows, p)
        inside = (q1 > first) & (q0 < first + rows)
        return sum(int(np.count_nonzero(grid[max(a - first, 0):b - first, c:d]))
                   for a, b, c, d in zip(*(x[inside].tolist() for x in self._rects)))


def _empty_rects() -> tuple[np.ndarray, ...]:
    return tuple(np.zeros(0, dtype=np.int64) for _ in range(4))


def _ramp(lengths: np.ndarray) -> np.ndarray:
    """[0, 1, ..., l - 1] for each l in `lengths`, concatenated."""
    starts = np.cumsum(lengths) - lengths
    ramp: np.ndarray = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    return ramp


def _intervals_as_rects(a: np.ndarray, b: np.ndarray, p: int) -> tuple[np.ndarray, ...]:
    """Intervals [a, b) of sectors -> rectangles of period p: a partial first row, whole
    rows, a partial last row (empty ones dropped)."""
    qa, ra = np.divmod(a, p)
    qb, rb = np.divmod(b, p)
    one = qa == qb
    full = np.full(len(a), p, dtype=np.int64)
    zero = np.zeros(len(a), dtype=np.int64)
    q0 = np.concatenate([qa, qa + 1, qb])
    q1 = np.concatenate([qa + 1, np.maximum(qb, qa + 1), qb + 1])
    r0 = np.concatenate([ra, zero, zero])
    r1 = np.concatenate([np.where(one, rb, full), full, np.where(one, 0, rb)])
    keep = (q1 > q0) & (r1 > r0)
    return q0[keep], q1[keep], r0[keep], r1[keep]


def _merged_intervals(q0: np.ndarray, q1: np.ndarray) -> tuple[np.ndarray, ...]:
    """Intervals [q0, q1) -> the fewest disjoint, ascending intervals with the same union.

    Starts and ends are sorted apart (a merge of sorted runs, or nothing where they ascend):
    a point with as many ends as starts at or below it lies in no interval, so the union has
    a gap after the i-th smallest end exactly where the (i+1)-th smallest start lies past it.
    r is [0, 1) throughout: stride-0 views."""
    keep = q1 > q0
    if not keep.all():
        q0, q1 = q0[keep], q1[keep]
    if not len(q0):
        return _empty_rects()
    q0, q1 = _ascending(q0), _ascending(q1)
    gaps = np.flatnonzero(q0[1:] > q1[:-1])
    first = q0[np.concatenate(([0], gaps + 1))]
    r0, r1, _ = np.broadcast_arrays(np.int64(0), np.int64(1), first)
    return first, q1[np.append(gaps, len(q1) - 1)], r0, r1


def _ascends(values: np.ndarray) -> bool:
    """Whether `values` never decrease."""
    return bool((values[1:] >= values[:-1]).all())


def _ascending(values: np.ndarray) -> np.ndarray:
    """`values` sorted: as they are where they ascend, else by a stable sort (a merge of
    the ascending runs it finds, such as the sets concatenated by a union)."""
    return values if _ascends(values) else np.sort(values, kind="stable")


def _merged_rects(q0: np.ndarray, q1: np.ndarray, r0: np.ndarray, r1: np.ndarray,
                  hold: Callable[[int, str], None]) -> tuple[np.ndarray, ...]:
    """Rectangles -> disjoint ones with the same union: r is cut at every rectangle edge,
    and each slice of r keeps its merged intervals of q. `hold(nbytes, what)` is told the
    memory the slices take before they are made."""
    keep = (q1 > q0) & (r1 > r0)
    q0, q1, r0, r1 = q0[keep], q1[keep], r0[keep], r1[keep]
    if not len(q0):
        return _empty_rects()
    edges = np.unique(np.concatenate([r0, r1]))
    a, b = np.searchsorted(edges, r0), np.searchsorted(edges, r1)
    slices = b - a
    hold(4 * _RECT_BYTES * int(slices.sum()), "counting unique sectors")
    which = np.repeat(np.arange(len(q0)), slices)
    cut = np.repeat(a, slices) + _ramp(slices)
    q0, q1 = q0[which], q1[which]
    order = np.lexsort((q0, cut))
    cut, q0, q1 = cut[order], q0[order], q1[order]
    values = np.unique(np.concatenate([q0, q1]))  # q ranks: a running max per slice of r
    key = cut * len(values) + np.searchsorted(values, q1)
    reach = values[np.maximum.accumulate(key) - cut * len(values)]
    new = np.ones(len(q0), dtype=bool)
    new[1:] = (cut[1:] != cut[:-1]) | (q0[1:] > reach[:-1])
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:] - 1, len(q0) - 1)
    return q0[starts], reach[ends], edges[cut[starts]], edges[cut[starts] + 1]
