"""The L2 model of cache.py as a compiled per-touch loop (numba, the optional `fast` extra):
the same semantics touch by touch, a few times faster than the numpy rounds on random traces.

State: one slot per resident line, a 32-byte record (its line id, last use with its valid and
dirty 4-bit masks, and two links): each set is a circular doubly linked list of its slots from
least to most recent; an open-addressing hash table (linear probing, backward-shift deletion)
of (line id, slot) pairs finds a line's slot. A random trace's cost is memory latency: a touch
reads a table entry and a few records, so each is one aligned block. A slot, once used, stays
resident: an eviction hands the evicted line's slot to the new line. numba is imported and the loop compiled on the first use (never at import); the compiled code
is cached on disk next to this file when its folder is writable."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import numpy as np

SLOT_BYTES = 32  # bytes of state per line slot: four int64, one cache line's half
ENTRY_BYTES = 16  # bytes per hash table entry: line id and slot (int64)
SET_BYTES = 16  # bytes of state per set: its least recent slot, lines held (int64)
HASH = 0x9E3779B97F4A7C15  # Fibonacci hashing: the top bits of line x HASH
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


def _lru(line, mask, kind, t0, nsets, ways, shift, table, rec, head, held, state):
    """Touches (line ids, 4-bit masks, kinds: 1 load, 2 store) one at a time through the LRU
    -> state[1:5] += load hits, load misses, store sectors, sectors written back on eviction.
    state[0]: slots in use; rec: slot k's record at 4k; table: (line id, slot) pairs, line
    -1 where empty."""
    top = len(table) // 2 - 1
    for i in range(len(line)):
        x = line[i]
        s = x % nsets
        h = np.int64((np.uint64(x) * np.uint64(HASH)) >> np.uint64(shift))
        while table[2 * h] != -1 and table[2 * h] != x:
            h = (h + 1) & top
        if table[2 * h] == x:  # resident: to most recent
            k = table[2 * h + 1]
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
            bits = rec[4 * k + STAMP] & 255
        else:
            if held[s] == ways:  # evict the least recent: its slot becomes the most recent
                k = head[s]
                d = rec[4 * k + STAMP] >> 4 & 15
                state[4] += (d & 1) + (d >> 1 & 1) + (d >> 2 & 1) + (d >> 3 & 1)
                old = rec[4 * k + LINE]
                g = np.int64((np.uint64(old) * np.uint64(HASH)) >> np.uint64(shift))
                while table[2 * g] != old:
                    g = (g + 1) & top
                j = g
                while True:  # backward-shift deletion keeps every probe run unbroken
                    j = (j + 1) & top
                    if table[2 * j] == -1:
                        break
                    home = np.int64((np.uint64(table[2 * j]) * np.uint64(HASH))
                                    >> np.uint64(shift))
                    if (j - home) & top >= (j - g) & top:
                        table[2 * g] = table[2 * j]
                        table[2 * g + 1] = table[2 * j + 1]
                        g = j
                table[2 * g] = -1
                head[s] = rec[4 * k + NEXT]
                h = np.int64((np.uint64(x) * np.uint64(HASH)) >> np.uint64(shift))
                while table[2 * h] != -1:
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
            table[2 * h] = x
            table[2 * h + 1] = k
            rec[4 * k + LINE] = x
            bits = 0
        m = mask[i]
        valid, dirty = bits & 15, bits >> 4
        if kind[i] & 1:
            hit, miss = m & valid, m & ~valid
            state[1] += (hit & 1) + (hit >> 1 & 1) + (hit >> 2 & 1) + (hit >> 3 & 1)
            state[2] += (miss & 1) + (miss >> 1 & 1) + (miss >> 2 & 1) + (miss >> 3 & 1)
        if kind[i] & 2:
            dirty |= m
            state[3] += (m & 1) + (m >> 1 & 1) + (m >> 2 & 1) + (m >> 3 & 1)
        rec[4 * k + STAMP] = (t0 + i) << 8 | dirty << 4 | valid | m


def _rehash(table, rec, used, shift):
    """Slots [0, used) -> an empty table (line -1 everywhere) filled with their line ids."""
    top = len(table) // 2 - 1
    for k in range(used):
        x = rec[4 * k + LINE]
        h = np.int64((np.uint64(x) * np.uint64(HASH)) >> np.uint64(shift))
        while table[2 * h] != -1:
            h = (h + 1) & top
        table[2 * h] = x
        table[2 * h + 1] = k


def _table_bits(slots: int) -> int:
    """Slots -> log2 of the hash table's entries: at least twice the slots (half empty)."""
    return max(1, (2 * slots - 1).bit_length())


def _aligned(n: int, align: int = 32) -> np.ndarray:
    """n zero int64 starting at an address that is a multiple of `align` bytes."""
    raw = np.zeros(n + align // 8, dtype=np.int64)
    skip = (-raw.ctypes.data % align) // 8
    return raw[skip:skip + n]


@cache
def _kernels():
    """numba's compiled _lru and _rehash (compiled at their first call)."""
    import numba
    disk = os.access(Path(__file__).parent, os.W_OK)
    return (numba.njit(cache=disk, nogil=True)(_lru),
            numba.njit(cache=disk, nogil=True)(_rehash))


class JitLRU:
    """An L2 of `lines` lines in `nsets` sets of `ways` lines (cache.py's semantics), run one
    touch at a time by the compiled loop. Slots grow as lines arrive, up to `lines`."""

    def __init__(self, lines: int, ways: int, nsets: int):
        self.lines, self.ways, self.nsets = lines, ways, nsets
        self.lru, self.rehash = _kernels()
        self.state = np.zeros(5, dtype=np.int64)  # slots used, hits, misses, stored, written
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
        bits = _table_bits(n)
        self.shift = 64 - bits
        self.table = np.full(2 << bits, -1, dtype=np.int64)
        self.rehash(self.table, self.rec, used, self.shift)

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
        before = self.state[1:].copy()
        self.lru(line, mask, kind, t0, self.nsets, self.ways, self.shift, self.table,
                 self.rec, self.head, self.held, self.state)
        return tuple(int(v) for v in self.state[1:] - before)

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
