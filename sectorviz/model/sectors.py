"""The sector primitive: (warp row of 32 lane byte addresses) -> distinct 32-byte sectors.

All functions work on 2-D arrays shaped (rows, lanes): one row per warp execution of an
instruction, one column per lane. Addresses are byte addresses of each lane's first byte;
`width` is the bytes each lane accesses; sectors are aligned blocks of `sector_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike

IntOrArray = TypeVar("IntOrArray", int, np.ndarray)

WARP_SIZE = 32
_INACTIVE = np.iinfo(np.int64).max


def check_sector_bytes(sector_bytes: int) -> int:
    """Return `sector_bytes` as int, or raise ValueError unless it is a positive power of two."""
    sb = int(sector_bytes)
    if sb <= 0 or sb & (sb - 1):
        raise ValueError(f"sector_bytes must be a positive power of two, got {sector_bytes}")
    return sb


def _validated(addresses: ArrayLike, width: int, active: ArrayLike | None, sector_bytes: int
               ) -> tuple[np.ndarray, int, np.ndarray, int]:
    addresses = np.asarray(addresses)
    if addresses.ndim != 2:
        raise ValueError(f"addresses must be a 2-D array (warps, lanes), "
                         f"got shape {addresses.shape}")
    if addresses.size and not np.issubdtype(addresses.dtype, np.integer):
        raise ValueError(f"addresses must be integers, got dtype {addresses.dtype}")
    addresses = addresses.astype(np.int64, copy=False)
    width = int(width)
    if width <= 0:
        raise ValueError(f"width must be a positive number of bytes, got {width}")
    sb = check_sector_bytes(sector_bytes)
    if active is None:
        active = np.ones(addresses.shape, dtype=bool)
    else:
        active = np.asarray(active, dtype=bool)
        if active.shape != addresses.shape:
            raise ValueError(
                f"active has shape {active.shape} but addresses have shape {addresses.shape}")
    if addresses.size and (addresses[active] < 0).any():
        raise ValueError("addresses must not be negative")
    return addresses, width, active, sb


def lane_sector_spans(addresses: np.ndarray, width: int, sector_bytes: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(rows, lanes) byte addresses -> (first, last) sector index each lane touches, inclusive."""
    shift = int(sector_bytes).bit_length() - 1
    first = addresses >> shift
    last = (addresses + (width - 1)) >> shift
    return first, last


def _row_distinct(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Distinct active values per row of a (rows, k) int64 array."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0], dtype=np.int64)
    ordered = values[:, 1:] >= values[:, :-1]
    fast = active.all(axis=1) & ordered.all(axis=1)
    counts = np.empty(values.shape[0], dtype=np.int64)
    if fast.any():
        v = values[fast]
        counts[fast] = 1 + (v[:, 1:] != v[:, :-1]).sum(axis=1)
    slow = ~fast
    if slow.any():
        v = np.where(active[slow], values[slow], _INACTIVE)
        v.sort(axis=1)
        live = v != _INACTIVE
        change = np.ones(v.shape, dtype=bool)
        change[:, 1:] = v[:, 1:] != v[:, :-1]
        counts[slow] = (change & live).sum(axis=1)
    return counts


def touched_sector_ids(addresses: np.ndarray, width: int, sector_bytes: int
                       ) -> tuple[np.ndarray, int]:
    """(rows, lanes) addresses -> ((rows, lanes * k) sector ids, k), lane-major, k per lane.

    k is 1 when no lane crosses a sector boundary (every naturally aligned access). Otherwise
    a lane touching fewer than k sectors repeats its last one, so lane order is kept and
    repeats never add distinct sectors.
    """
    first, last = lane_sector_spans(addresses, width, sector_bytes)
    if width == 1 or np.array_equal(first, last):
        return first, 1
    k = (width - 1) // sector_bytes + 2
    steps = np.arange(k, dtype=np.int64)
    ids = np.minimum(first[:, :, None] + steps, last[:, :, None])
    return ids.reshape(addresses.shape[0], -1), k


def distinct_sector_counts(ids: np.ndarray, k: int, active: np.ndarray) -> np.ndarray:
    """Sector ids from touched_sector_ids and the (rows, lanes) active mask -> counts per row."""
    return _row_distinct(ids, np.repeat(active, k, axis=1) if k > 1 else active)


def sector_counts(addresses: ArrayLike, width: int, active: ArrayLike | None = None,
                  sector_bytes: int = 32) -> np.ndarray:
    """Distinct aligned sectors touched by each row's active lanes -> int64 array (rows,).

    A lane reads bytes [address, address + width); an access crossing a sector boundary counts
    every sector it touches, a sector shared by many lanes counts once, inactive lanes count
    nothing, and a row with no active lane counts 0.
    """
    addresses, width, active, sb = _validated(addresses, width, active, sector_bytes)
    ids, k = touched_sector_ids(addresses, width, sb)
    return distinct_sector_counts(ids, k, active)


def useful_bytes(addresses: ArrayLike, width: int, active: ArrayLike | None = None
                 ) -> np.ndarray:
    """Distinct bytes requested per row: the length of the union of [address, address + width)."""
    addresses = np.asarray(addresses, dtype=np.int64)
    active = np.ones(addresses.shape, dtype=bool) if active is None else \
        np.asarray(active, dtype=bool)
    width = int(width)
    if addresses.shape[1] == 0:
        return np.zeros(addresses.shape[0], dtype=np.int64)
    gaps_ok = (addresses[:, 1:] - addresses[:, :-1]) >= width
    fast = active.all(axis=1) & gaps_ok.all(axis=1)
    result = np.empty(addresses.shape[0], dtype=np.int64)
    result[fast] = addresses.shape[1] * width
    slow = ~fast
    if slow.any():
        starts = np.where(active[slow], addresses[slow], _INACTIVE)
        starts.sort(axis=1)
        live = starts != _INACTIVE
        ends = np.where(live, starts + width, np.iinfo(np.int64).min)
        covered_to = np.maximum.accumulate(ends, axis=1)
        previous = np.concatenate(
            [np.full((starts.shape[0], 1), np.iinfo(np.int64).min), covered_to[:, :-1]], axis=1)
        begin = np.maximum(starts, previous)
        gain = np.where(live, np.clip(starts + width - begin, 0, None), 0)
        result[slow] = gain.sum(axis=1)
    return result


@dataclass(frozen=True)
class RowAccount:
    """Per-row accounting of a (rows, lanes) batch of warp executions."""

    counts: np.ndarray  # (rows,) distinct sectors
    useful: np.ndarray  # (rows,) distinct bytes requested
    requested: np.ndarray  # (rows,) bool: at least one lane active
    active_lanes: int
    # arrays of sector ids touched by active lanes (repeats allowed)
    touched: tuple[np.ndarray, ...]
    touched_ranges: tuple[np.ndarray, np.ndarray] | None = None  # (first, last) runs of sectors


def account_rows(addresses: np.ndarray, width: int, active: np.ndarray,
                 sector_bytes: int) -> RowAccount:
    """(rows, lanes) byte addresses and active lanes -> counts, useful bytes, touched sectors.

    Rows whose lanes are all active and evenly spaced (the common case) are counted once per
    distinct (stride, address mod sector) class, since those two fix the row's counts.
    """
    if addresses.shape[0] == 0:
        empty = np.zeros(0, dtype=np.int64)
        return RowAccount(empty, empty, np.zeros(0, dtype=bool), 0, ())
    if addresses.shape[1] > 1 and active.all():
        fast = _progression_rows(addresses, width, sector_bytes)
        if fast is not None:
            return fast
    ids, k = touched_sector_ids(addresses, width, sector_bytes)
    lane_active = np.repeat(active, k, axis=1) if k > 1 else active
    return RowAccount(
        counts=_row_distinct(ids, lane_active), useful=useful_bytes(addresses, width, active),
        requested=cast(np.ndarray, active.any(axis=1)), active_lanes=int(np.count_nonzero(active)),
        touched=(ids[lane_active],))


_MAX_CLASS_STRIDE = 2**40


def _progression_rows(addresses: np.ndarray, width: int, sb: int) -> RowAccount | None:
    """Account rows that are arithmetic progressions over lanes; None if some row is not."""
    steps = addresses[:, 1:] - addresses[:, :-1]
    stride = steps[:, 0]
    if not (steps == stride[:, None]).all() or np.abs(stride).max() >= _MAX_CLASS_STRIDE:
        return None
    key = stride * sb + (addresses[:, 0] & (sb - 1))
    _, representative, inverse = np.unique(key, return_index=True, return_inverse=True)
    reps = addresses[representative]
    rep_ids, k = touched_sector_ids(reps, width, sb)
    counts = _row_distinct(rep_ids, np.ones(rep_ids.shape, dtype=bool))[inverse]
    useful = useful_bytes(reps, width)[inverse]
    first = addresses >> (sb.bit_length() - 1)
    if k == 1:
        touched = (first,)
    else:
        last = (addresses + (width - 1)) >> (sb.bit_length() - 1)
        touched = tuple(np.minimum(first + j, last) for j in range(k))
    return RowAccount(counts, useful, np.ones(len(addresses), dtype=bool), addresses.size, touched)


def ideal_sectors(useful_bytes: IntOrArray, sector_bytes: int) -> IntOrArray:
    """Useful bytes of a request (an int or an array of them) -> the fewest whole sectors
    that could hold them: the ideal every sector count is measured against."""
    return -(-useful_bytes // sector_bytes)
