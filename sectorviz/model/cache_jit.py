"""The L2 model of cache.py as a compiled per-touch loop (numba, the optional `fast` extra):
the same semantics touch by touch, a few times faster than the numpy rounds on random traces.

State: one slot per resident line, a 32-byte aligned record (its line id, last use with its
valid and dirty 4-bit masks, and two links): each set is a circular doubly linked list of its
slots from least to most recent. An open-addressing hash table (linear probing, backward-shift
deletion) finds a line's slot: each entry is one int64, the line's home entry (the top bits of
line x HASH) above its slot, so a probe skips other homes without reading their records. A slot,
once used, stays resident: an eviction hands the evicted line's slot to the new line.

A large trace's cost is memory latency, so before every AHEAD touches run, their table entries,
records and the lines their misses would evict are read side by side (_ahead). numba is
imported and the loop compiled on the first use (never at import); the compiled code is cached
on disk next to this file when its folder is writable."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np

SLOT_BYTES = 32  # bytes of state per line slot: four int64, one cache line's half
ENTRY_BYTES = 8  # bytes per hash table entry: the line's home entry and slot in one int64
SET_BYTES = 16  # bytes of state per set: its least recent slot, lines held (int64)
HASH = 0x9E3779B97F4A7C15  # Fibonacci hashing: the top bits of line x HASH
AHEAD = 32  # touches whose memory is read side by side before they run
# a slot's record (4 int64, one 32-byte aligned block: one memory access per slot)
LINE, STAMP, PREV, NEXT = range(4)  # STAMP: last use << 8 | dirty mask << 4 | valid mask


def available() -> bool:
    """Whether numba imports (the `fast` extra is installed and works with this numpy); a
    numba that is missing or fails on import (any error) leaves the numpy engine."""
    try:
        import numba  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken install raises more than ImportError
        return False
    return True


def _lru(line: np.ndarray, mask: np.ndarray, kind: np.ndarray, t0: int, nsets: int, ways: int,
         bits: int, table: np.ndarray, rec: np.ndarray, head: np.ndarray, held: np.ndarray,
         state: np.ndarray) -> None:
    """Touches (line ids, 4-bit masks, kinds: 1 load, 2 store) one at a time through the LRU
    -> state[1:5] += load hits, load misses, store sectors, sectors written back on eviction.
    state[0]: slots in use; rec: slot k's record at 4k; table: 2^bits entries, -1 or a line's
    home entry << (63 - bits) | its slot. state[5:7]: the walk ahead of a fully associative
    L2's next evictions (slot reached, lines left before the evictions catch up)."""
    top = len(table) - 1
    shift = 64 - bits
    low = 63 - bits
    slots = (1 << low) - 1
    n = len(line)
    for i in range(n):
        if i % AHEAD == 0:
            state[7] += _ahead(line, i, min(i + AHEAD, n), nsets, ways, shift, low, slots,
                               table, rec, head, held, state)
        x = line[i]
        s = x % nsets
        home = np.int64((np.uint64(x) * np.uint64(HASH)) >> np.uint64(shift))
        h = home
        k = -1
        while table[h] != -1:
            if table[h] >> low == home and rec[4 * (table[h] & slots) + LINE] == x:
                k = table[h] & slots
                break
            h = (h + 1) & top
        if k >= 0:  # resident: to most recent
            first = head[s]
            if k == first:
                head[s] = rec[4 * k + NEXT]
            elif rec[4 * k + NEXT] != first:
                before, after = rec[4 * k + PREV], rec[4 * k + NEXT]
                rec[4 * before + NEXT] = after
                rec[4 * after + PREV] = before
                last = rec[4 * first + PREV]
                rec[4 * last + NEXT] = k
                rec[4 * k + PREV] = last
                rec[4 * k + NEXT] = first
                rec[4 * first + PREV] = k
            bits_now = rec[4 * k + STAMP] & 255
        else:
            if held[s] == ways:  # evict the least recent: its slot becomes the most recent
                k = head[s]
                d = rec[4 * k + STAMP] >> 4 & 15
                state[4] += (d & 1) + (d >> 1 & 1) + (d >> 2 & 1) + (d >> 3 & 1)
                old = np.int64((np.uint64(rec[4 * k + LINE]) * np.uint64(HASH))
                               >> np.uint64(shift))
                g = old
                while table[g] != (old << low | k):
                    g = (g + 1) & top
                j = g
                while True:  # backward-shift deletion keeps every probe run unbroken
                    j = (j + 1) & top
                    if table[j] == -1:
                        break
                    if (j - (table[j] >> low)) & top >= (j - g) & top:
                        table[g] = table[j]
                        g = j
                table[g] = -1
                head[s] = rec[4 * k + NEXT]
                state[6] -= 1
                h = home
                while table[h] != -1:
                    h = (h + 1) & top
            else:
                k = state[0]
                state[0] += 1
                if held[s] == 0:
                    head[s] = k
                    rec[4 * k + PREV] = k
                    rec[4 * k + NEXT] = k
                else:
                    first = head[s]
                    last = rec[4 * first + PREV]
                    rec[4 * last + NEXT] = k
                    rec[4 * k + PREV] = last
                    rec[4 * k + NEXT] = first
                    rec[4 * first + PREV] = k
                held[s] += 1
            table[h] = home << low | k
            rec[4 * k + LINE] = x
            bits_now = 0
        m = mask[i]
        valid, dirty = bits_now & 15, bits_now >> 4
        if kind[i] & 1:
            hit, miss = m & valid, m & ~valid
            state[1] += (hit & 1) + (hit >> 1 & 1) + (hit >> 2 & 1) + (hit >> 3 & 1)
            state[2] += (miss & 1) + (miss >> 1 & 1) + (miss >> 2 & 1) + (miss >> 3 & 1)
        if kind[i] & 2:
            dirty |= m
            state[3] += (m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)
        rec[4 * k + STAMP] = (t0 + i) << 8 | dirty << 4 | valid | m


def _ahead(line: np.ndarray, lo: int, hi: int, nsets: int, ways: int, shift: int, low: int,
           slots: int, table: np.ndarray, rec: np.ndarray, head: np.ndarray, held: np.ndarray,
           state: np.ndarray) -> int:
    """Touches [lo, hi): read their table entries, their records and the entries of the
    lines their misses would evict, side by side (independent reads the processor overlaps,
    where the loop's reads wait on each other) -> a checksum the caller keeps, so that the
    reads stay. Reads only: the counts do not depend on it."""
    top = len(table) - 1
    used = max(state[0], 1)
    seen = 0
    for j in range(lo, hi):
        seen += table[np.int64((np.uint64(line[j]) * np.uint64(HASH)) >> np.uint64(shift))]
    for j in range(lo, hi):
        e = table[np.int64((np.uint64(line[j]) * np.uint64(HASH)) >> np.uint64(shift))]
        seen += rec[4 * min(max(e & slots, 0), used - 1)]
    if nsets == 1 and held[0] == ways:  # the next lines to evict, down the list from the LRU
        if state[6] <= 0:
            state[5] = head[0]
            state[6] = 0
        c = state[5]
        while state[6] < hi - lo:
            seen += table[np.int64((np.uint64(rec[4 * c + LINE]) * np.uint64(HASH))
                                   >> np.uint64(shift)) & top]
            c = rec[4 * c + NEXT]
            state[6] += 1
        state[5] = c
    return seen & 1


def _rehash(table: np.ndarray, rec: np.ndarray, used: int, bits: int) -> None:
    """Slots [0, used) -> an empty table (-1 everywhere) filled with their entries."""
    top = len(table) - 1
    shift = 64 - bits
    low = 63 - bits
    for k in range(used):
        home = np.int64((np.uint64(rec[4 * k + LINE]) * np.uint64(HASH)) >> np.uint64(shift))
        h = home
        while table[h] != -1:
            h = (h + 1) & top
        table[h] = home << low | k


def _table_bits(slots: int) -> int:
    """Slots -> log2 of the hash table's entries: at least twice the slots (half empty)."""
    return max(1, (2 * slots - 1).bit_length())


def _aligned(n: int, align: int = 32) -> np.ndarray:
    """n zero int64 starting at an address that is a multiple of `align` bytes."""
    raw = np.zeros(n + align // 8, dtype=np.int64)
    skip = (-raw.ctypes.data % align) // 8
    return raw[skip:skip + n]


@cache
def _kernels() -> tuple[Callable[..., None], Callable[..., None]]:
    """numba's compiled _lru and _rehash (compiled at their first call)."""
    import numba
    disk = os.access(Path(__file__).parent, os.W_OK)
    jit = numba.njit(cache=disk, nogil=True)
    globals()["_ahead"] = jit(_ahead)  # the name _lru calls, compiled before _lru is
    return jit(_lru), jit(_rehash)


class JitLRU:
    """An L2 of `lines` lines in `nsets` sets of `ways` lines (cache.py's semantics), run one
    touch at a time by the compiled loop. Slots grow as lines arrive, up to `lines`."""

    def __init__(self, lines: int, ways: int, nsets: int):
        self.lines, self.ways, self.nsets = lines, ways, nsets
        self.lru, self.rehash = _kernels()
        # slots used, hits, misses, stored, written back, the walk ahead (_lru), checksum
        self.state = np.zeros(8, dtype=np.int64)
        self.head = np.full(nsets, -1, dtype=np.int64)
        self.held = np.zeros(nsets, dtype=np.int64)
        self.rec = np.zeros(0, dtype=np.int64)
        self._grow(0)

    def _grow(self, n: int) -> None:
        """Room for n slots: the records copied into a larger block, the table rebuilt with
        at least twice as many entries."""
        used = int(self.state[0])
        rec = _aligned(4 * n)
        rec[:4 * used] = self.rec[:4 * used]
        self.rec = rec
        self.bits = _table_bits(n)
        self.table = np.full(1 << self.bits, -1, dtype=np.int64)
        self.rehash(self.table, self.rec, used, self.bits)
        self.state[6] = 0  # the walk ahead starts again

    def slots_for(self, touches: int) -> int:
        """Slots needed before `touches` more touches run (each may bring a new line)."""
        need = min(self.lines, int(self.state[0]) + touches)
        have = len(self.rec) // 4
        return have if need <= have else min(self.lines, max(need, 2 * have))

    def nbytes(self, slots: int) -> int:
        """Bytes of state with `slots` slots."""
        return (slots * SLOT_BYTES + (ENTRY_BYTES << _table_bits(slots))
                + self.nsets * SET_BYTES)

    def run(self, line: np.ndarray, mask: np.ndarray, kind: np.ndarray, t0: int
            ) -> tuple[int, int, int, int]:
        """Touches in order (int64 arrays), the first at time t0 -> (load hits, load misses,
        store sectors, sectors written back on eviction) they add."""
        slots = self.slots_for(len(line))
        if slots > len(self.rec) // 4:
            self._grow(slots)
        before = self.state[1:5].copy()
        self.lru(line, mask, kind, t0, self.nsets, self.ways, self.bits, self.table,
                 self.rec, self.head, self.held, self.state)
        hits, misses, stores, written_back = (int(v) for v in self.state[1:5] - before)
        return hits, misses, stores, written_back

    def resident(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(line ids, valid masks, dirty masks) of the resident lines, least recent first."""
        rec = self.rec[:4 * int(self.state[0])].reshape(-1, 4)
        order = np.argsort(rec[:, STAMP] >> 8, kind="stable")
        return rec[order, LINE], rec[order, STAMP] & 15, rec[order, STAMP] >> 4 & 15

    def write_back(self) -> np.ndarray:
        """The dirty masks of every resident line, then all clean (the kernel's end)."""
        stamp = self.rec[:4 * int(self.state[0])].reshape(-1, 4)[:, STAMP]
        dirty = stamp >> 4 & 15
        stamp &= ~np.int64(15 << 4)
        return dirty
