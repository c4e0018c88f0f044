"""What a run's memory holds: bytes stored by the kernel, and where nothing was stored, the
pattern's values (global arrays that have them) and the initializers of PTX variables; every
other byte is unknown.

Keys are int64 byte positions in one space: global byte addresses; a block's shared byte
offset + its block-in-chunk * (the shared bytes, rounded up to a page); a thread's local
byte offset + its thread-in-chunk * (the frame's bytes, rounded up to 16). Stored bytes live
in 4 KiB pages, created on first store and found through a table of page numbers (a sorted
index for pages past TABLE_PAGES).
"""

from __future__ import annotations

from typing import cast

import numpy as np

from ...model.kernel import ResolvedArray, Values
from .bits import element_bits, scalar_of

PAGE_SHIFT = 12
PAGE = 1 << PAGE_SHIFT
WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
ALL_MARKED = {n: int("01" * n, 16) for n in WORDS}  # a word whose every byte was written
TABLE_PAGES = 1 << 22  # page numbers below this are looked up in a table (16 GiB of keys)


def span(nbytes: int, grain: int) -> int:
    """Bytes between two blocks' (or threads') memories in the keys."""
    return -(-max(nbytes, 1) // grain) * grain


class ByteStore:
    """Bytes written at int64 keys, with which bytes were written: pages of PAGE bytes in
    the rows of `data` / `written`; page number -> row by `table`, or for high pages by the
    sorted `pages` / `rows`."""

    def __init__(self) -> None:
        self.table = np.full(0, -1, dtype=np.int64)
        self.pages = np.empty(0, dtype=np.int64)  # sorted page numbers >= TABLE_PAGES
        self.rows = np.empty(0, dtype=np.int64)  # their rows
        self.data = np.zeros((0, PAGE), dtype=np.uint8)
        self.written = np.zeros((0, PAGE), dtype=bool)
        self.used = 0

    def _rows_of(self, page: np.ndarray) -> np.ndarray:
        """Page numbers -> rows, -1 for pages never written."""
        low = (page >= 0) & (page < len(self.table))
        if low.all():
            rows: np.ndarray = self.table[page]
            return rows
        out = np.where(low, self.table[np.where(low, page, 0)] if len(self.table) else -1, -1)
        if len(self.pages):
            at = np.minimum(np.searchsorted(self.pages, page), len(self.pages) - 1)
            out = np.where(self.pages[at] == page, self.rows[at], out)
        return out

    def _add_pages(self, page: np.ndarray) -> None:
        page = np.unique(page)
        new = page[self._rows_of(page) < 0]
        if not len(new):
            return
        need = self.used + len(new)
        if need > len(self.data):
            grow = max(need, 2 * len(self.data), 16)
            self.data = np.concatenate([self.data, np.zeros((grow - len(self.data), PAGE),
                                                            dtype=np.uint8)])
            self.written = np.concatenate([self.written, np.zeros(
                (grow - len(self.written), PAGE), dtype=bool)])
        rows = np.arange(self.used, need, dtype=np.int64)
        self.used = need
        low = (new >= 0) & (new < TABLE_PAGES)
        if low.any():
            top = int(new[low].max()) + 1
            if top > len(self.table):
                self.table = np.concatenate([self.table, np.full(
                    max(top, 2 * len(self.table)) - len(self.table), -1, dtype=np.int64)])
            self.table[new[low]] = rows[low]
        if not low.all():
            order = np.argsort(np.concatenate([self.pages, new[~low]]), kind="stable")
            self.pages = np.concatenate([self.pages, new[~low]])[order]
            self.rows = np.concatenate([self.rows, rows[~low]])[order]

    def write(self, key: np.ndarray, nbytes: int, bits: np.ndarray,
              known: np.ndarray | None = None) -> None:
        """Store nbytes little-endian bytes of `bits` (uint64) at each key; lanes whose value
        is not known (known False) make their bytes unknown again."""
        if not key.size:
            return
        k = (key[:, None] + np.arange(nbytes, dtype=np.int64)).ravel()
        b = _unpack(bits, nbytes).ravel()
        page = k >> PAGE_SHIFT
        self._add_pages(page)
        row, col = self._rows_of(page), k & (PAGE - 1)
        self.data[row, col] = b
        self.written[row, col] = True if known is None else np.repeat(known, nbytes)

    def read(self, key: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(uint64 bits of nbytes little-endian bytes at each key, (n, nbytes) bool: which
        bytes were written)."""
        if not self.used:
            return np.zeros(key.shape, dtype=np.uint64), np.zeros(key.shape + (nbytes,), bool)
        col = key & (PAGE - 1)
        if nbytes in WORDS and not np.any(col % nbytes):  # aligned words: one take each
            row = self._rows_of(key >> PAGE_SHIFT)
            have = row >= 0
            at = (np.where(have, row, 0) * PAGE + col) // nbytes
            word = np.take(self.data.reshape(-1).view(WORDS[nbytes]), at)
            marks = np.take(self.written.reshape(-1).view(WORDS[nbytes]), at)
            whole = have & (marks == WORDS[nbytes](ALL_MARKED[nbytes]))
            if whole.all():
                return word.astype(np.uint64), np.ones((len(key), nbytes), dtype=bool)
            written = (marks.view(np.uint8).reshape(-1, nbytes) != 0) & have[:, None]
            if not np.any(marks[~whole]):  # each word whole or not written at all
                return np.where(whole, word, 0).astype(np.uint64), written
            return np.where(whole, word, pack(np.where(
                written, word.view(np.uint8).reshape(-1, nbytes), 0))).astype(np.uint64), written
        if np.all(col + nbytes <= PAGE):  # no access crosses a page: one lookup per lane
            row = self._rows_of(key >> PAGE_SHIFT)[:, None]
            col = col[:, None] + np.arange(nbytes, dtype=np.int64)
        else:
            k = key[:, None] + np.arange(nbytes, dtype=np.int64)
            row, col = self._rows_of(k >> PAGE_SHIFT), k & (PAGE - 1)
        have = row >= 0
        flat = np.where(have, row, 0) * PAGE + col
        written = have & np.take(self.written.reshape(-1), flat)
        byte = np.take(self.data.reshape(-1), flat)
        byte[~written] = 0
        return pack(byte), written


def _unpack(bits: np.ndarray, nbytes: int) -> np.ndarray:
    """n uint64 values -> (n, nbytes) uint8, little-endian."""
    return np.ascontiguousarray(bits, dtype="<u8").view(np.uint8).reshape(-1, 8)[:, :nbytes]


def every_byte(flags: np.ndarray) -> np.ndarray:
    """(n, k) bools -> (n,) whether all k are set (k bytes read as one word when it can)."""
    k = flags.shape[1]
    if k in WORDS:
        words = np.ascontiguousarray(flags).view(np.uint8).view(WORDS[k]).ravel()
        full: np.ndarray = words == WORDS[k](ALL_MARKED[k])
        return full
    return cast(np.ndarray, flags.all(axis=1))  # 2-D with an axis: an array


def pack(byte: np.ndarray) -> np.ndarray:
    """(n, k) bytes (k <= 8) -> n uint64 values, little-endian."""
    n, k = byte.shape
    wide = np.zeros((n, 8), dtype=np.uint8)
    wide[:, :k] = byte
    return wide.view("<u8").ravel().astype(np.uint64)


class ArrayBytes:
    """The launch-time bytes of the pattern's global arrays that have values: an address ->
    its byte, from the element value encoded in the array's scalar dtype (each scalar of a
    vector element holds the element's value, as a pattern's values give them)."""

    def __init__(self, arrays: list[ResolvedArray], values: dict[str, Values]):
        self.arrays = [a for a in arrays if a.spec.name in values
                       and scalar_of(a.spec.dtype) is not None]
        self.values = values
        self.starts = np.array([a.address0 for a in self.arrays], dtype=np.int64)

    def read(self, key: np.ndarray, nbytes: int) -> tuple[np.ndarray, np.ndarray]:
        """(uint64 bits at each address, (n, nbytes) bool: which bytes the values give)."""
        out = np.zeros(key.shape, dtype=np.uint64)
        given = np.zeros(key.shape + (nbytes,), dtype=bool)
        for arr in self.arrays:
            scalar, size = cast("tuple[str, int]", scalar_of(arr.spec.dtype))  # kept: not None
            inside = (key >= arr.address0) & (key + nbytes <= arr.end)
            if not inside.any():
                continue
            offset = key[inside] - arr.address0
            values = self.values[arr.spec.name]
            if nbytes == size and not np.any(offset % size):
                out[inside] = element_bits(values[offset // arr.spec.elem_bytes], scalar)
                given[inside] = True
                continue
            part = np.zeros(offset.shape, dtype=np.uint64)
            for b in range(nbytes):  # byte by byte: reads narrower or wider than a scalar
                at = offset + b
                s_bits = element_bits(values[at // arr.spec.elem_bytes], scalar)
                shift = np.uint64(8) * (at % size).astype(np.uint64)
                part |= ((s_bits >> shift) & np.uint64(0xFF)) << np.uint64(8 * b)
            out[inside] = part
            given[inside] = True
        return out, given
