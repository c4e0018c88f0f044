"""Closed-form accounting of one access executed by a chunk of warps over whole runs of loop
iterations (a front end that carries addresses symbolically yields these instead of Batches).

A RepeatedBatch stands for prod(trips) executions by each active warp: warp w, lane l and
iteration vector j (0 <= j_i < trips_i) access the byte address

    base[w] + offsets[cls[w], l] + sum_i j_i * strides[i]

with the same lanes active in every iteration: every valid lane (valid[cls[w]]) of a `full`
warp, the `lanes` row of a `mixed` warp. A warp's sector count depends only on its class and on
its address mod sector_bytes, so counts come from (class, phase) tables weighted by how many
iteration vectors shift the phase by each amount; sums, the histogram of sectors per request
and runs of distinct sectors follow without visiting iterations one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Iterator

import numpy as np

from .budget import WARP_UNITS, charge
from .errors import PatternError
from .sectors import WARP_SIZE, account_rows, ideal_sectors

MAX_RUNS_PER_PIECE = 2**22  # runs of distinct sectors handed over at a time
MAX_MERGED_SPANS = 2**16  # spans sorted and merged before loops stretch or repeat them
_NO_LANE = np.iinfo(np.int64).min  # the offset _distinct gives a lane that is not valid


@dataclass(frozen=True)
class RepeatedBatch:
    """Executions of one access by warps [lo, hi) of a chunk, over whole loop runs."""

    base: np.ndarray  # (warps,) int64 byte address of lane offset 0 at j = 0
    offsets: np.ndarray  # (classes, 32) int64 byte offsets of the lanes
    cls: np.ndarray  # (warps,) int class of each warp (its index in its block)
    valid: np.ndarray  # (classes, 32) bool: lanes that exist
    full: np.ndarray  # (warps,) bool: every valid lane active
    mixed: np.ndarray  # (m,) int warp indices with some lanes active
    lanes: np.ndarray  # (m, 32) bool: active lanes of the mixed warps
    loops: tuple[tuple[int, int], ...]  # (trips, stride in bytes) of each enclosing run

    @property
    def executions(self) -> int:
        """Executions per active warp: the product of the trips."""
        n = 1
        for trips, _ in self.loops:
            n *= trips
        return n


# one warp's access: space, index, its batch, its element 0's address, its loop runs' symbols
WarpAccess = tuple[str, int, RepeatedBatch, int, tuple[int, ...]]


@dataclass(frozen=True)
class RepeatedAccount:
    """A RepeatedBatch's accounting: per-warp sums over its executions, and totals."""

    sectors: np.ndarray  # (warps,) int64 sectors summed over the executions
    requests: np.ndarray  # (warps,) int64 requests (executions with an active lane)
    ideals: np.ndarray  # (warps,) int64 ideal sectors (the useful bytes' whole sectors)
    active_lanes: int
    useful: int  # bytes
    ideal: int  # sectors
    histogram: np.ndarray  # requests by sectors per request
    runs: Iterator[tuple[np.ndarray, np.ndarray]]  # pieces of (first, last) sector runs


def phase_weights(loops: tuple[tuple[int, int], ...], sb: int) -> np.ndarray:
    """(sb,) int64: how many iteration vectors shift the address by r mod sb, for each r."""
    h = np.zeros(sb, dtype=np.int64)
    h[0] = 1
    for trips, stride in loops:
        step = stride % sb
        period = sb // gcd(step, sb)
        whole, rest = divmod(trips, period)
        shift = np.arange(period, dtype=np.int64) * step % sb
        per = np.zeros(sb, dtype=np.int64)
        per[shift] += whole
        per[shift[:rest]] += 1
        nz = np.flatnonzero(per)
        out = np.zeros(sb, dtype=np.int64)
        for r in nz.tolist():  # circular convolution over the shifts that occur
            out += np.roll(h, r) * per[r]
        h = out
    return h


def _lifted(offsets: np.ndarray, valid: np.ndarray, sb: int) -> np.ndarray:
    """Offsets shifted by a multiple of sb so that every valid one is non-negative."""
    low = int(offsets[valid].min()) if valid.any() else 0
    return offsets + (-(low // sb) * sb if low < 0 else 0)


def _class_tables(batch: RepeatedBatch, width: int, sb: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(classes, sb) sector counts of a full warp of each class at each phase, and
    (classes,) useful bytes of one full request. Classes whose valid offsets differ by a
    whole number of sectors count alike: each distinct one is a block of sb rows (one per
    phase) of a single account_rows call."""
    kinds, which = _distinct(_sector_aligned(batch.offsets, batch.valid, sb), batch.valid)
    valid = kinds != _NO_LANE
    phases = np.arange(sb, dtype=np.int64)[None, :, None]
    rows = account_rows((np.where(valid, kinds, 0)[:, None, :] + phases).reshape(-1, WARP_SIZE),
                        width, np.repeat(valid, sb, axis=0), sb)
    return rows.counts.reshape(-1, sb)[which], rows.useful[::sb][which]


def _sector_aligned(offsets: np.ndarray, valid: np.ndarray, sb: int) -> np.ndarray:
    """(classes, 32) lane offsets -> each class's offsets shifted by a multiple of sb so
    that its lowest valid one lies in [0, sb)."""
    low = np.where(valid, offsets, np.iinfo(np.int64).max).min(axis=1, keepdims=True)
    return offsets - np.where(valid.any(axis=1, keepdims=True), low // sb * sb, 0)


def _distinct(offsets: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(classes, 32) lane offsets and valid lanes -> (kinds, 32) distinct rows of valid
    offsets (_NO_LANE elsewhere), and the (classes,) kind of each class."""
    kinds, which = np.unique(np.where(valid, offsets, _NO_LANE), axis=0, return_inverse=True)
    return kinds, which.reshape(-1)


def account_repeated(batch: RepeatedBatch, width: int, sb: int,
                     place: str = "budget") -> RepeatedAccount:
    """RepeatedBatch -> per-warp sector and request sums, totals, histogram and runs; the
    work is charged to the open budget at `place` (the access, where known)."""
    n = len(batch.base)
    charge(n * WARP_UNITS + WARP_SIZE * len(batch.mixed) * sb, "an access in closed form",
           place)
    most = batch.executions * max(n, 1) * WARP_SIZE * (width // sb + 2)  # sectors, at most
    if most >= 2**63:
        raise PatternError("kernel", f"{batch.executions:,} executions of an access by each "
                                     "warp: its sector counts would pass 64-bit integers; "
                                     "shrink the loop")
    h = phase_weights(batch.loops, sb)
    shifts = np.flatnonzero(h)
    executions = batch.executions
    sectors = np.zeros(n, dtype=np.int64)
    requests = np.zeros(n, dtype=np.int64)
    ideals = np.zeros(n, dtype=np.int64)
    histogram = np.zeros(1, dtype=np.int64)
    lanes_on = useful = ideal = 0
    full = np.flatnonzero(batch.full)
    if len(full):
        counts, per_useful = _class_tables(batch, width, sb)
        classes = len(counts)
        cls = batch.cls[full]
        phase = batch.base[full] & (sb - 1)
        spread = np.arange(sb, dtype=np.int64)
        turned = counts[:, (spread[:, None] + spread[None, :]) % sb]  # (c, phase, shift)
        totals = turned @ h  # (c, phase)
        sectors[full] = totals[cls, phase]
        requests[full] = executions
        groups = np.bincount(cls * sb + phase, minlength=classes * sb).reshape(classes, sb)
        histogram = _add(histogram, turned[..., shifts], groups[..., None] * h[shifts])
        per_class = np.bincount(cls, minlength=classes)
        lanes_on += int((per_class * batch.valid.sum(axis=1)).sum()) * executions
        useful += int((per_class * per_useful).sum()) * executions
        ideal += int((per_class * ideal_sectors(per_useful, sb)).sum()) * executions
        ideals[full] = ideal_sectors(per_useful[cls], sb) * executions
    if len(batch.mixed):
        w = batch.mixed
        offsets = _lifted(batch.offsets[batch.cls[w]], batch.lanes, sb)
        start = (batch.base[w] & (sb - 1))[:, None] + offsets  # (m, 32)
        rows = start[:, None, :] + shifts[None, :, None]  # (m, shifts, 32)
        on = np.broadcast_to(batch.lanes[:, None, :], rows.shape)
        acc = account_rows(rows.reshape(-1, WARP_SIZE), width, on.reshape(-1, WARP_SIZE), sb)
        counts = acc.counts.reshape(len(w), len(shifts))
        sectors[w] = counts @ h[shifts]
        asked = batch.lanes.any(axis=1)
        requests[w] = asked * executions
        histogram = _add(histogram, counts[asked], np.broadcast_to(h[shifts], counts.shape)[asked])
        per_useful = acc.useful.reshape(len(w), len(shifts))[:, 0]
        lanes_on += int(batch.lanes.sum()) * executions
        useful += int(per_useful.sum()) * executions
        ideal += int((ideal_sectors(per_useful, sb)).sum()) * executions
        ideals[w] = ideal_sectors(per_useful, sb) * executions
    return RepeatedAccount(sectors, requests, ideals, lanes_on, useful, ideal, histogram,
                           sector_runs(batch, width, sb))


def _add(histogram: np.ndarray, bins: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """histogram + weights counted at bins (int64, grown as needed)."""
    bins, weights = bins.ravel(), np.broadcast_to(weights, bins.shape).ravel()
    if not len(bins):
        return histogram
    size = max(len(histogram), int(bins.max()) + 1)
    out = np.zeros(size, dtype=np.int64)
    out[:len(histogram)] = histogram
    np.add.at(out, bins, weights)
    return out


def _clusters(offsets: np.ndarray, valid: np.ndarray, width: int, sb: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """A class's valid lane offsets -> (starts, byte lengths) of groups whose sectors are
    contiguous for any base: sorted offsets at most width - 1 + sb apart."""
    o = np.unique(offsets[valid])
    if not len(o):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cut = np.flatnonzero(np.diff(o) > width - 1 + sb) + 1
    first = np.concatenate(([0], cut))
    last = np.concatenate((cut - 1, [len(o) - 1]))
    return o[first], o[last] - o[first] + width


def _spans(batch: RepeatedBatch, width: int, sb: int) -> tuple[np.ndarray, np.ndarray]:
    """(start byte, byte length) of groups with contiguous sectors, for j = 0, warp order."""
    starts, lengths = [], []
    full = np.flatnonzero(batch.full)
    if len(full):
        kinds, which = _distinct(batch.offsets, batch.valid)
        groups = [_clusters(offsets, offsets != _NO_LANE, width, sb) for offsets in kinds]
        most = max(len(g[0]) for g in groups)
        lo = np.zeros((len(groups), most), dtype=np.int64)
        size = np.zeros((len(groups), most), dtype=np.int64)  # 0: no such group
        for c, (group_lo, group_size) in enumerate(groups):
            lo[c, :len(group_lo)], size[c, :len(group_size)] = group_lo, group_size
        cls = which[batch.cls[full]]
        keep = size[cls] > 0
        starts.append((batch.base[full][:, None] + lo[cls])[keep])
        lengths.append(size[cls][keep])
    if len(batch.mixed):
        w = batch.mixed
        address = batch.base[w][:, None] + batch.offsets[batch.cls[w]]
        starts.append(address[batch.lanes])
        lengths.append(np.full(int(batch.lanes.sum()), width, dtype=np.int64))
    if not starts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(starts), np.concatenate(lengths)


def _merged_spans(starts: np.ndarray, lengths: np.ndarray, sb: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Spans -> the fewest spans whose sectors are contiguous, covering the same sectors."""
    if len(starts) < 2:
        return starts, lengths
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], starts[order] + lengths[order]
    reach = np.maximum.accumulate(ends)
    new = np.ones(len(starts), dtype=bool)
    new[1:] = starts[1:] > reach[:-1] - 1 + sb
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(starts) - 1)
    return starts[first], reach[last] - starts[first]


def sector_runs(batch: RepeatedBatch, width: int, sb: int
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Pieces of (first, last) sector runs covering every sector the batch touches, each
    piece ascending.

    A loop whose stride is at most a group's span (bytes) - 1 + sb only stretches the group's
    run; a longer stride repeats the run once per iteration (distinct starts only)."""
    shift = sb.bit_length() - 1
    starts, lengths = _spans(batch, width, sb)
    if len(starts) <= MAX_MERGED_SPANS:
        starts, lengths = _merged_spans(starts, lengths, sb)
    loops = sorted(((t, s) for t, s in batch.loops if t > 1 and s), key=lambda ts: abs(ts[1]))
    for length in np.unique(lengths).tolist():
        start = starts[lengths == length]
        repeat = []
        for trips, stride in loops:
            if abs(stride) <= length - 1 + sb:
                start = start + min(0, (trips - 1) * stride)
                length += abs(stride) * (trips - 1)
            else:
                repeat.append((trips, stride))
        if repeat:
            start = np.unique(start)
            grid = np.zeros(1, dtype=np.int64)
            for trips, stride in reversed(repeat):  # longest outermost: ascends when nested
                grid = (grid[:, None] + stride * np.arange(trips, dtype=np.int64)).ravel()
            step = max(1, MAX_RUNS_PER_PIECE // len(grid))
            for i in range(0, len(start), step):
                first = (start[i:i + step, None] + grid[None, :]).ravel()
                first.sort(kind="stable")
                charge(len(first), "an access's distinct sectors in closed form")
                yield first >> shift, (first + (length - 1)) >> shift
        elif len(start):  # in warp order where the spans were too many to merge
            start = np.sort(start, kind="stable")
            yield start >> shift, (start + (length - 1)) >> shift
