"""Closed forms of the front ends that carry values symbolically (the PTX engine's
model/ptx/closed.py; pattern files' affine accesses): over a chunk of warps an integer is

    value[w, l] = base[w] + off[cls[w], l] + sum_s coef_s * j_s

(`Aff`: `cls[w]` is warp w's index in its block, `base` per warp, j_s the iteration index of a
loop run counted whole, or a block coordinate over a box of blocks); active lanes are a
`Mask` (whole warps plus explicit lanes of the rest); `Chunk` holds the chunk's classes,
thread and block coordinates and answers bounds, extents and comparisons. `NotClosed`: the
lane path runs the chunk; `Varies`: a value needs a compressed loop's iteration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ..model.budget import CLOSED_LANES, charge
from ..model.repeat import RepeatedBatch
from ..model.sectors import WARP_SIZE

if TYPE_CHECKING:
    from ..model.kernel import Launch

Box = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # (start, count) per grid axis
MAX_SECTOR_BYTES = 256  # the (class, phase) tables are sector_bytes wide


class NotClosed(Exception):
    """The closed forms do not cover this chunk; the lane path runs it. `work` (units) and
    `place` ((line, column)): a lower bound on what the lane path will spend in the counted
    loop around where they stopped (refused at once when over the budget: sized_work)."""

    work: int = 0
    place: tuple[int, int] | None = None


class Varies(Exception):
    """A value or branch needs a compressed loop's iteration: iterate that loop instead."""


class Aff:
    """base[w] + off[cls[w], l] + sum(coef * j): exact integers (no C wrap has happened)."""

    __slots__ = ("base", "off", "coef")

    def __init__(self, base: int | np.ndarray, off: np.ndarray | None = None,
                 coef: tuple[tuple[int, int], ...] = ()):
        self.base = int(base) if np.ndim(base) == 0 else base
        self.off = off
        self.coef = coef  # ((symbol, coefficient), ...) sorted, no zeros

    @property
    def scalar(self) -> bool:
        return self.off is None and not self.coef and isinstance(self.base, int)

    def __add__(self, other: "Aff") -> "Aff":
        off = self.off if other.off is None else other.off if self.off is None else \
            self.off + other.off
        coef = dict(self.coef)
        for s, c in other.coef:
            coef[s] = coef.get(s, 0) + c
        return Aff(self.base + other.base, off,
                   tuple(sorted((s, c) for s, c in coef.items() if c)))

    def scaled(self, k: int) -> "Aff":
        if k == 0:
            return Aff(0)
        return Aff(self.base * k, None if self.off is None else self.off * k,
                   tuple((s, c * k) for s, c in self.coef))


def _uniform(values: np.ndarray) -> int | np.ndarray:
    """A per-warp array, or the one int every warp has."""
    return int(values[0]) if len(values) and values.min() == values.max() else values


class Mask:
    """Active lanes of a chunk: `full` warps (every valid lane) and `lanes` rows of `mixed`."""

    __slots__ = ("full", "mixed", "lanes")

    def __init__(self, full: np.ndarray, mixed: np.ndarray, lanes: np.ndarray):
        self.full, self.mixed, self.lanes = full, mixed, lanes

    def any(self) -> bool:
        return bool(len(self.mixed)) or bool(self.full.any())


class Chunk:
    """Warps [lo, hi) of a launch: classes, thread-coordinate tables, block coordinates."""

    def __init__(self, launch: Launch, lo: int, hi: int, box: Box | None = None):
        wpb = launch.warps_per_block
        self.trips: dict[int, int] = {}  # symbol -> trips (loops, and blocks in a box)
        self.block_loops: list[tuple[int, int]] = []
        if box is None:  # a row per warp
            warp = np.arange(lo, hi, dtype=np.int64)
            self.n = hi - lo
            self.cls = warp % wpb if wpb > 1 else np.zeros(self.n, dtype=np.int64)
            block = warp // wpb
            gx, gy, _ = launch.grid
            self.block = tuple(Aff(_uniform(b)) for b in
                               (block % gx, block // gx % gy, block // (gx * gy)))
        else:  # a row per class; block coordinates are symbols over the box
            self.n = wpb
            self.cls = np.arange(wpb, dtype=np.int64)
            coords = []
            for axis, (start, count) in enumerate(box):
                sym = -1 - axis
                coords.append(Aff(start, None, ((sym, 1),) if count > 1 else ()))
                if count > 1:
                    self.trips[sym] = count
                    self.block_loops.append((sym, count))
            self.block = tuple(coords)
        t = np.arange(wpb, dtype=np.int64)[:, None] * WARP_SIZE + np.arange(WARP_SIZE)
        bx, by, bz = launch.block
        self.valid = t < bx * by * bz
        self.thread: tuple[np.ndarray | None, ...] = (t, None, None)
        if not by == bz == 1:
            rest, tx = np.divmod(t, bx)
            tz, ty = np.divmod(rest, by)
            self.thread = tuple(x if x.any() else None for x in (tx, ty, tz))
        self.all = Mask(np.ones(self.n, dtype=bool), np.zeros(0, dtype=np.int64),
                        np.zeros((0, WARP_SIZE), dtype=bool))

    # ------------------------------------------------------------ masks

    def rows(self, m: Mask, idx: np.ndarray) -> np.ndarray:
        """(len(idx), 32) active lanes of warps idx."""
        out = m.full[idx][:, None] & self.valid[self.cls[idx]]
        if len(m.mixed):
            at = np.searchsorted(m.mixed, idx).clip(max=len(m.mixed) - 1)
            hit = m.mixed[at] == idx
            out[hit] = m.lanes[at[hit]]
        return np.asarray(out)

    def build(self, full: np.ndarray, idx: np.ndarray, lanes: np.ndarray) -> Mask:
        """A Mask from whole warps `full` and explicit lanes of warps idx (sorted)."""
        lanes = lanes & self.valid[self.cls[idx]]
        count = lanes.sum(axis=1)
        whole = count == self.valid[self.cls[idx]].sum(axis=1)
        if whole.any():
            full = full.copy()
            full[idx[whole]] = True
        keep = (count > 0) & ~whole
        return Mask(full, idx[keep], lanes[keep])

    def combine(self, a: Mask, b: Mask, fn: Callable[..., np.ndarray]) -> Mask:
        """Lane-wise fn (np.logical_and, ...) of two masks."""
        full = fn(a.full, b.full)
        if not len(a.mixed) and not len(b.mixed):
            return Mask(full, a.mixed, a.lanes)
        idx = np.union1d(a.mixed, b.mixed)
        full[idx] = False
        return self.build(full, idx, fn(self.rows(a, idx), self.rows(b, idx)))

    def minus(self, a: Mask, b: Mask | None) -> Mask:
        if b is None:
            return a
        return self.combine(a, b, lambda x, y: x & ~y)

    def empty(self, m: Mask) -> bool:
        return not m.any()

    def constant(self, v: Aff, m: Mask) -> int | None:
        """v's one value over the active lanes of m, if it has only one."""
        if v.coef:
            return None
        span = self.extent(v, m)
        return span[0] if span is not None and span[0] == span[1] else None

    # ------------------------------------------------------------ values

    def lane_values(self, v: Aff, idx: np.ndarray) -> np.ndarray:
        """(len(idx), 32) values of warps idx (no symbols)."""
        base = v.base[idx] if isinstance(v.base, np.ndarray) else np.full(len(idx), v.base)
        out = base[:, None] + np.zeros((1, WARP_SIZE), dtype=np.int64)
        return out if v.off is None else out + v.off[self.cls[idx]]

    def off_extremes(self, off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(classes,) least and greatest offsets over valid lanes."""
        big = np.iinfo(np.int64).max
        return (np.where(self.valid, off, big).min(axis=1),
                np.where(self.valid, off, -big).max(axis=1))

    def symbol_span(self, v: Aff) -> tuple[int, int]:
        lo = hi = 0
        for s, c in v.coef:
            end = c * (self.trips[s] - 1)
            lo, hi = lo + min(0, end), hi + max(0, end)
        return lo, hi

    def bounds(self, v: Aff) -> tuple[int, int]:
        """Least and greatest value over every warp of the chunk (valid lanes, all j); a
        warp's base and its class's offsets taken together (`threadIdx.x % 32` is 0..31)."""
        if v.off is None:
            lo, hi = (int(v.base.min()), int(v.base.max())) if isinstance(v.base, np.ndarray) \
                else (v.base, v.base)
        else:
            omin, omax = self.off_extremes(v.off)
            if isinstance(v.base, np.ndarray):
                lo, hi = int((v.base + omin[self.cls]).min()), int((v.base + omax[self.cls]).max())
            else:
                lo, hi = v.base + int(omin.min()), v.base + int(omax.max())
        slo, shi = self.symbol_span(v)
        return lo + slo, hi + shi

    def extent(self, v: Aff, m: Mask) -> tuple[int, int] | None:
        """Least and greatest value over the active lanes of m (all j); None if none."""
        lows, highs = [], []
        full = np.flatnonzero(m.full)
        if len(full):
            base = v.base[full] if isinstance(v.base, np.ndarray) else v.base
            if v.off is None:
                lows.append(np.min(base))
                highs.append(np.max(base))
            else:
                omin, omax = self.off_extremes(v.off)
                cls = self.cls[full]
                lows.append((base + omin[cls]).min())
                highs.append((base + omax[cls]).max())
        if len(m.mixed):
            values = self.lane_values(v, m.mixed)[m.lanes]
            lows.append(values.min())
            highs.append(values.max())
        if not lows:
            return None
        slo, shi = self.symbol_span(v)
        return int(min(lows)) + slo, int(max(highs)) + shi

    def decomposed(self, values: np.ndarray) -> Aff | None:
        """(rows, 32) int64 lane values -> base[w] + off[cls[w], l] where they have that
        form (on valid lanes), else None."""
        base = values[:, 0].copy()
        rel = values - base[:, None]
        off = np.zeros((len(self.valid), values.shape[1]), dtype=np.int64)
        _, first = np.unique(self.cls, return_index=True)
        off[self.cls[first]] = rel[first]
        valid = self.valid[self.cls]
        if not np.array_equal(np.where(valid, rel, 0), np.where(valid, off[self.cls], 0)):
            return None
        uniform = len(base) and int(base.min()) == int(base.max())
        return Aff(int(base[0]) if uniform else base, off if off[self.valid].any() else None)

    def quotient(self, v: Aff, d: int, remainder: bool) -> Aff | None:
        """v / d or v % d (d > 0, v >= 0 everywhere: C's truncation is floor) where every
        symbol's coefficient is a multiple of d: v = d q + r with r = base % d + off, so
        v / d = q + r / d and v % d = r % d, r's parts computed on its lane values; None
        where that does not apply."""
        lo, hi = self.bounds(v)
        if d > 0 and 0 <= lo and hi < d:  # (the sign of a non-negative value, for one)
            return v if remainder else Aff(0)
        if d <= 0 or any(c % d for _, c in v.coef) or lo < 0:
            return None
        low = v.base % d
        r = self.lane_values(Aff(low, v.off), np.arange(self.n))
        part = self.decomposed(r % d if remainder else r // d)
        if remainder or part is None:
            return part
        q = Aff((v.base - low) // d, None, tuple((s, c // d) for s, c in v.coef))
        return q + part

    def holds(self, d: Aff, op: str, m: Mask) -> Mask:
        """Lanes of m where `d op 0`; Varies if that changes over a symbol's range."""
        ck = self
        slo, shi = ck.symbol_span(d)
        full = np.flatnonzero(m.full)
        base = d.base[full] if isinstance(d.base, np.ndarray) else np.full(len(full), d.base)
        if d.off is None:
            lo, hi = base + slo, base + shi
        else:
            omin, omax = ck.off_extremes(d.off)
            cls = ck.cls[full]
            lo, hi = base + omin[cls] + slo, base + omax[cls] + shi
        every, never = classify(lo, hi, op)
        result = np.zeros(ck.n, dtype=bool)
        result[full[every]] = True
        split = full[~every & ~never]
        idx = np.concatenate([split, m.mixed])
        if not len(idx):
            return Mask(result, m.mixed[:0], m.lanes[:0])
        if d.coef and len(split):
            raise Varies()
        idx = np.sort(idx, kind="stable")
        active = ck.rows(m, idx)
        values = ck.lane_values(Aff(d.base, d.off), idx)
        lanes, never = classify(values + slo, values + shi, op)
        if d.coef and np.any(active & ~lanes & ~never):
            raise Varies()
        charge(WARP_SIZE * len(idx) // CLOSED_LANES, "the kernel's code", "kernel")
        return ck.build(result, idx, lanes & active)

COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}
def classify(lo: np.ndarray, hi: np.ndarray, op: str) -> tuple[np.ndarray, np.ndarray]:
    """For values anywhere in [lo, hi]: where `value op 0` surely holds, surely fails."""
    if op == "==":
        return (lo == 0) & (hi == 0), (hi < 0) | (lo > 0)
    if op == "!=":
        return (hi < 0) | (lo > 0), (lo == 0) & (hi == 0)
    fn = COMPARE[op]
    at_lo, at_hi = fn(lo, 0), fn(hi, 0)
    return at_lo & at_hi, ~at_lo & ~at_hi


FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

def block_box(launch: Launch, lo: int, hi: int) -> Box | None:
    """Warps [lo, hi) as a box of whole blocks: ((start, count) per grid axis), or None."""
    wpb = launch.warps_per_block
    if lo % wpb or hi % wpb:
        return None
    gx, gy, _ = launch.grid
    first, last = lo // wpb, hi // wpb - 1
    x0, r0, x1, r1 = first % gx, first // gx, last % gx, last // gx
    if r0 == r1:
        return (x0, x1 - x0 + 1), (r0 % gy, 1), (r0 // gy, 1)
    if x0 or x1 != gx - 1:
        return None
    (z0, y0), (z1, y1) = divmod(r0, gy), divmod(r1, gy)
    if z0 == z1:
        return (0, gx), (y0, y1 - y0 + 1), (z0, 1)
    if y0 or y1 != gy - 1:
        return None
    return (0, gx), (0, gy), (z0, z1 - z0 + 1)


def repeated(chunk: Chunk, address: Aff, m: Mask, loops: tuple[tuple[int, int], ...]
             ) -> RepeatedBatch:
    """An access at `address` by the lanes of m inside the runs `loops` ((symbol, trips),
    outermost first) -> its RepeatedBatch (a loop's stride: the address's coefficient of its
    symbol)."""
    base = address.base if isinstance(address.base, np.ndarray) else \
        np.full(chunk.n, address.base, dtype=np.int64)
    off = address.off if address.off is not None else np.zeros_like(chunk.valid, dtype=np.int64)
    coef = dict(address.coef)
    return RepeatedBatch(base, off, chunk.cls, chunk.valid, m.full, m.mixed, m.lanes,
                         tuple((t, coef.get(s, 0)) for s, t in loops))


def warp_row(batch: RepeatedBatch, box: Box, warp: int, wpb: int,
             grid: tuple[int, int, int]) -> RepeatedBatch | None:
    """A RepeatedBatch of a run over `box` (a row per class, its first loops the box's
    block coordinates) -> the same access by `warp` alone: its class's row with its block's
    coordinates put in; None where the warp's block lies outside the box."""
    cls, block = warp % wpb, warp // wpb
    gx, gy, _ = grid
    coords = (block % gx, block // gx % gy, block // (gx * gy))
    if not all(start <= c < start + count for c, (start, count) in zip(coords, box)):
        return None
    moved = [c - start for c, (start, count) in zip(coords, box) if count > 1]
    base = int(batch.base[cls]) + sum(j * stride for j, (_, stride) in
                                      zip(moved, batch.loops))
    mixed = np.flatnonzero(batch.mixed == cls)
    return RepeatedBatch(np.array([base], dtype=np.int64), batch.offsets,
                         np.array([cls], dtype=np.int64), batch.valid, batch.full[[cls]],
                         np.zeros(len(mixed), dtype=np.int64), batch.lanes[mixed],
                         batch.loops[len(moved):])
