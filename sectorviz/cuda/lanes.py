"""Interpreter nodes beyond plain expressions: warp collectives, atomics, opaque values and
per-thread arrays, run like ir.py's nodes over (warps, 32) lanes.

Warp collectives follow PTX (`shfl.sync`, `vote.sync`, `redux.sync`): a warp is cut into
segments of `width` lanes; a shuffle reads from a source lane of the caller's segment (an
out-of-range source keeps the caller's own value); votes and reductions see only the lanes
that execute them and are named in the member mask. Per-thread arrays are registers: a
(n elements, warps, 32) array per declaration, never a memory access.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import budget
from .ctype import CType, Num
from .ir import Expr, Memory, Run, Site, Stmt, Unknown, convert, fail, first_lane, known, node, pure

LANES = 32
MAX_LOCAL_ELEMENTS = 1024  # per-thread array elements (registers: 255 per thread at most)


def lane_ids() -> np.ndarray:
    return np.arange(LANES, dtype=np.int64)


def full(run: Run, value) -> np.ndarray:
    return np.broadcast_to(value, run.shape)


def source_lanes(kind: str, k, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(source lane, valid) per lane of a shuffle of `kind` with operand k (PTX shfl.sync:
    idx reads lane k of the segment, up lane - k, down lane + k, xor lane ^ k)."""
    lane = lane_ids()
    k = np.asarray(k).astype(np.int64) & 0xFFFFFFFF  # the 32-bit operand, as PTX reads it
    first = lane & ~(width - 1)
    last = first | (width - 1)
    if kind == "idx":
        src = first | (k & (width - 1))
        return src, np.ones(np.shape(src), dtype=bool)
    src = {"up": lambda: lane - k, "down": lambda: lane + k, "xor": lambda: lane ^ k}[kind]()
    valid = src >= first if kind == "up" else src <= last
    return src, valid


def check_width(mask, width, pos: tuple[int, int]):
    """A shuffle's width (a number or per-lane values): a power of 2 up to 32."""
    w = np.asarray(width).astype(np.int64)
    bad = (w < 1) | (w > LANES) | ((w & (w - 1)) != 0)
    if np.any(bad & mask):
        first = int(np.broadcast_to(w, np.shape(bad & mask))[bad & mask].flat[0])
        raise fail(pos, f"a shuffle width of {first}: it must be a power of 2 up to 32")
    return np.where(bad, LANES, w) if np.ndim(w) else w


def evaluated(run: Run, mask, *exprs: Expr):
    """Evaluate `exprs` in order (their memory events pass through) -> (their values, the
    first Unknown among them or None)."""
    values = []
    for e in exprs:
        values.append((yield from e.ev(run, mask)))
    return values, next((x for x in values if isinstance(x, Unknown)), None)


@dataclass
class Shuffle(Expr):
    """__shfl_sync / _up / _down / _xor (and tile.shfl*): each lane reads `value` from a
    source lane of its width-lane segment; a source out of the segment keeps the own value."""

    kind: str  # "idx" | "up" | "down" | "xor"
    value: Expr
    arg: Expr
    width: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        (v, k, width), unknown = yield from evaluated(run, mask, self.value, self.arg,
                                                      self.width)
        if unknown is not None:
            return unknown
        width = check_width(mask, width, self.width.pos)
        src, valid = source_lanes(self.kind, full(run, k), width)
        src = np.where(valid, src, lane_ids())

        def take(c):
            return np.take_along_axis(full(run, c), src, axis=1)
        return tuple(take(c) for c in v) if isinstance(v, tuple) else take(v)


def members(run: Run, mask, member_mask) -> np.ndarray:
    """Lanes that execute the collective and are named in the 32-bit member mask."""
    bits = np.asarray(member_mask).astype(np.uint64) >> lane_ids().astype(np.uint64)
    return mask & ((bits & np.uint64(1)) != 0)


def taking_part(run: Run, mask, member: Expr | None):
    """(warps, 32) lanes that take part in a collective: the executing lanes, less those its
    member mask leaves out; the mask's Unknown if the mask is not known."""
    on = full(run, mask)
    if member is None:
        return on
    m = yield from member.ev(run, mask)
    return m if isinstance(m, Unknown) else members(run, on, m)


@dataclass
class Vote(Expr):
    """__ballot_sync / __any_sync / __all_sync / __activemask (and tile.ballot / any / all):
    one result per width-lane segment, the same in each of its lanes; only executing lanes
    named in the member mask take part (ballot bits count from the segment's first lane)."""

    kind: str  # "ballot" | "any" | "all" | "active"
    member: Expr | None
    pred: Expr | None
    width: int
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        on = yield from taking_part(run, mask, self.member)
        if isinstance(on, Unknown):
            return on
        yes = on
        if self.pred is not None:
            p = yield from self.pred.ev(run, mask)
            if isinstance(p, Unknown):
                return p
            yes = on & (full(run, p) != 0)
        shape = (run.shape[0], LANES // self.width, self.width)
        yes, on = yes.reshape(shape), on.reshape(shape)
        if self.kind in ("ballot", "active"):
            weights = np.left_shift(np.uint64(1), np.arange(self.width, dtype=np.uint64))
            out = (yes.astype(np.uint64) * weights).sum(axis=2)
        elif self.kind == "any":
            out = yes.any(axis=2)
        else:
            out = (yes == on).all(axis=2)
        return convert(np.repeat(out, self.width, axis=1), self.type)


_REDUCE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
           "or": np.bitwise_or, "xor": np.bitwise_xor}
_IDENTITY = {"add": lambda t: 0, "and": lambda t: -1 if t.signed else np.iinfo(t.dtype).max,
             "or": lambda t: 0, "xor": lambda t: 0,
             "min": lambda t: np.inf if t.floating else np.iinfo(t.dtype).max,
             "max": lambda t: -np.inf if t.floating else np.iinfo(t.dtype).min}


@dataclass
class SegmentReduce(Expr):
    """cg::reduce(tile, v, op) and __reduce_*_sync: `op` over the executing (and member)
    lanes of each width-lane segment, the result in every lane of the segment."""

    op: str  # "add" | "min" | "max" | "and" | "or" | "xor"
    value: Expr
    member: Expr | None
    width: int
    type: Num
    pos: tuple[int, int]

    def ev(self, run, mask):
        on = yield from taking_part(run, mask, self.member)
        if isinstance(on, Unknown):
            return on
        v = yield from self.value.ev(run, mask)
        if isinstance(v, Unknown):
            return v
        ident = self.type.dtype.type(_IDENTITY[self.op](self.type))
        parts = np.where(on, full(run, v), ident).reshape(run.shape[0], -1, self.width)
        out = _REDUCE[self.op].reduce(parts, axis=2, dtype=self.type.dtype)
        return np.repeat(out, self.width, axis=1).astype(self.type.dtype)


def mask_bits(m) -> np.ndarray:
    """(warps, 32) 32-bit lane masks -> (warps, 32, 32) booleans: lane j is in lane i's mask."""
    m = np.asarray(m).astype(np.uint64)
    return ((m[..., None] >> lane_ids().astype(np.uint64)) & np.uint64(1)) != 0


@dataclass
class GroupShuffle(Expr):
    """coalesced_group::shfl(v, rank) (also of a labeled or binary partition): each lane reads
    `value` from the member of its group whose rank (the count of members below it) is
    `rank`; `mask` is each lane's member mask."""

    value: Expr
    mask: Expr
    rank: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        (v, m, k), unknown = yield from evaluated(run, mask, self.value, self.mask, self.rank)
        if unknown is not None:
            return unknown
        inside = mask_bits(full(run, m))
        ranks = np.cumsum(inside, axis=2) - 1  # rank of member j in lane i's group
        k = full(run, np.asarray(k).astype(np.int64))
        hit = inside & (ranks == k[..., None])
        bad = mask & ~hit.any(axis=2)
        if bad.any():
            w, lane = map(int, np.argwhere(bad)[0])
            raise fail(self.pos, f"shfl from rank {int(k[w, lane])} of a group of "
                                 f"{int(inside[w, lane].sum())} threads (warp {w} lane {lane})")
        src = np.where(bad, lane_ids(), hit.argmax(axis=2))

        def take(c):
            return np.take_along_axis(full(run, c), src, axis=1)
        return tuple(take(c) for c in v) if isinstance(v, tuple) else take(v)


@dataclass
class GroupReduce(Expr):
    """cg::reduce over a coalesced group or a labeled / binary partition: `op` over the
    executing lanes in each lane's member `mask`, the result in each member."""

    op: str  # "add" | "min" | "max" | "and" | "or" | "xor"
    value: Expr
    mask: Expr
    type: Num
    pos: tuple[int, int]

    def ev(self, run, mask):
        (m, v), unknown = yield from evaluated(run, mask, self.mask, self.value)
        if unknown is not None:
            return unknown
        inside = mask_bits(full(run, m)) & full(run, mask)[:, None, :]
        ident = self.type.dtype.type(_IDENTITY[self.op](self.type))
        parts = np.where(inside, full(run, v).astype(self.type.dtype)[:, None, :], ident)
        return _REDUCE[self.op].reduce(parts, axis=2, dtype=self.type.dtype)


@pure
@dataclass
class Opaque(Expr):
    """A value the model cannot know before running (clock(), clock64())."""

    why: str
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        return Unknown(self.why)
        yield


@dataclass
class Atomic(Expr):
    """atomicAdd(&a[i], v) and friends: one read-modify-write access of `mem`; the operands
    run for their accesses, and the old value it returns is unknown."""

    name: str
    mem: Memory
    site: Site
    args: list[Expr]
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        address = known((yield from self.mem.addr.ev(run, mask)), self.pos, "an address")
        for a in self.args:
            yield from a.ev(run, mask)
        yield self.mem.space, self.site.index, self.mem._batch(run, mask, address, self.site)[1]
        return Unknown(f"the value {self.name} returns (line {self.pos[0]}), which is only "
                       "known at run time")


# ------------------------------------------------------------------ per-thread arrays


class Registers:
    """One per-thread array's values in every lane: (n, warps, 32), with which are set."""

    def __init__(self, run: Run, n: int, t: Num, name: str):
        budget.reserve(n * run.shape[0] * LANES * (t.dtype.itemsize + 1),
                       f"the per-thread array '{name}'")
        self.values = np.zeros((n, *run.shape), dtype=t.dtype)
        self.set = np.zeros((n, *run.shape), dtype=bool)
        self.why = f"an element of '{name}' that was never set"


@dataclass
class LocalDeclare(Stmt):
    """`float acc[8][8] = {...};`: a fresh register array; `init` lists (element, value)."""

    slot: int
    n: int
    elem: Num
    name: str
    init: list[tuple[int, Expr]] | None  # None: uninitialized; else unlisted elements are 0

    def run(self, run, mask):
        regs = Registers(run, self.n, self.elem, self.name)
        run.slots[self.slot] = regs
        if self.init is None:
            return
        regs.set[:] = True
        for i, e in self.init:
            v = yield from e.ev(run, mask)
            if isinstance(v, Unknown):
                regs.set[i] = False
                regs.why = v.why
            else:
                regs.values[i] = convert(v, self.elem)


@pure
@node
@dataclass
class Local:
    """An lvalue element of a per-thread array: Load and Assign use it like a Memory (its
    `addr` is the flat element index; it yields no accesses)."""

    slot: int
    addr: Expr
    n: int
    type: Num
    name: str
    pos: tuple[int, int]

    def _index(self, run: Run, mask, index):
        """Flat element index: a scalar when every lane of the mask uses the same one (loop
        counters, usually), else (1, warps, 32) with 0 off the mask; checked in range."""
        index = np.asarray(index)
        used = index[mask] if np.ndim(index) else index
        if np.size(used) == 0:
            return 0
        lo, hi = int(np.min(used)), int(np.max(used))
        if lo < 0 or hi >= self.n:
            bad = full(run, mask & ((index < 0) | (index >= self.n)))
            w, lane = np.argwhere(bad)[0]
            raise fail(self.pos, f"element index {int(full(run, index)[w, lane])} of "
                                 f"{self.name!r} outside [0, {self.n}) at {first_lane(run, bad)}")
        if lo == hi:
            return lo
        return np.where(mask, index, 0).astype(np.int64)[None]

    def load(self, run: Run, mask, index):
        regs: Registers = run.slots[self.slot]
        i = self._index(run, mask, index)
        if np.ndim(i) == 0:
            values, ok = regs.values[i], regs.set[i]
        else:
            values = np.take_along_axis(regs.values, i, axis=0)[0]
            ok = np.take_along_axis(regs.set, i, axis=0)[0]
        if np.any(mask & ~ok):
            return Unknown(regs.why)
        return values
        yield

    def store(self, run: Run, mask, index, value):
        regs: Registers = run.slots[self.slot]
        i = self._index(run, mask, index)
        on = full(run, mask)
        if isinstance(value, Unknown):
            regs.why = value.why
        if np.ndim(i) == 0:
            if isinstance(value, Unknown):
                regs.set[i] &= ~on
            else:
                regs.values[i] = np.where(on, value, regs.values[i])
                regs.set[i] |= on
            return
        w, lane = np.nonzero(on)
        k = i[0][w, lane]
        regs.set[k, w, lane] = not isinstance(value, Unknown)
        if not isinstance(value, Unknown):
            regs.values[k, w, lane] = full(run, value)[w, lane]
        return
        yield


@pure
@dataclass
class Switch(Stmt):
    """switch: a lane enters at its case (or default) and runs on through the following
    sections (fall-through) until it leaves by `break`, `continue` or `return`."""

    value: Expr
    sections: list[tuple[int | None, Stmt]]  # (case label, or None for default; statements)

    def run(self, run, mask):
        v = known((yield from self.value.ev(run, mask)), self.value.pos, "a switch")
        labels = [label for label, _ in self.sections if label is not None]
        matched = np.isin(v, labels)
        saved, run.brk = run.brk, None
        entered = np.zeros(run.shape, dtype=bool)
        for label, body in self.sections:
            entered = entered | (mask & (~matched if label is None else v == label))
            live = run.live(entered)
            if live.any():
                yield from body.run(run, live)
        run.brk = saved


@dataclass
class Match(Expr):
    """__match_any_sync(mask, value): in each lane, the lanes (executing, in the mask) whose
    value equals its own, as a 32-bit mask."""

    member: Expr
    value: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        (m, v), unknown = yield from evaluated(run, mask, self.member, self.value)
        if unknown is not None:
            return unknown
        on = members(run, full(run, mask), m)
        v = full(run, v)
        same = (v[:, :, None] == v[:, None, :]) & on[:, None, :]
        weights = np.left_shift(np.uint64(1), lane_ids().astype(np.uint64))
        return convert((same.astype(np.uint64) * weights).sum(axis=2), self.type)
