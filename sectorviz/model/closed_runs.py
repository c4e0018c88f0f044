"""One warp's executions made when asked from its closed forms (a front end's warp_closed):
the warp's RepeatedBatches, each in the loop runs its symbols name -> execution i of an
instruction (the lane path's numbers: inactive lanes at address 0, element (address - the
array's element 0) // width), the sums over its executions and each shared execution's bank
wavefronts, without making the executions that are not asked for.

Loop runs nest as the events' symbols say: a run's body came out once, in program order, so
execution order is, per iteration of a run, its body's accesses and inner runs in turn (a
loop run an iteration at a time inside a closed one gives one batch per iteration, each over
the outer run: the iterations interleave)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

import numpy as np

from .banks import BANK_BYTES, bank_rows  # a shift by whole words turns the banks only
from .kernel import Batch
from .repeat import RepeatedBatch, WarpAccess, account_repeated, phase_weights
from .sectors import lane_sector_spans, sector_counts, useful_bytes
from .values import Executions, LaneExecution, Lazy

# one warp's details: each global instruction's executions, each shared one's, their wavefronts
Parts = tuple[tuple[Executions, ...], tuple[Lazy[Batch], ...], tuple[Lazy[int], ...]]


@dataclass(frozen=True)
class Piece:
    """One access of the warp over its loop runs: at iteration j_i of each run (outermost
    first) it reaches address + sum of j_i * the run's stride (bytes)."""

    batch: RepeatedBatch  # of the one warp
    address: np.ndarray  # (32,) int64 byte addresses at j = 0 (inactive lanes included)
    active: np.ndarray  # (32,) bool
    origin: int  # the address of element 0 of the array it reaches


def piece(batch: RepeatedBatch, origin: int) -> Piece:
    """A RepeatedBatch of one warp (some lane active) -> its Piece."""
    c = int(batch.cls[0])
    active = batch.valid[c] if batch.full[0] else batch.lanes[0]
    return Piece(batch, batch.base[0] + batch.offsets[c], active, origin)


@dataclass
class Run:
    """A loop run of `trips` iterations (the warp itself: 1), its body in program order:
    inner runs and pieces (their indices)."""

    trips: int
    body: list[Union["Run", int]] = field(default_factory=list)


def nesting(accesses: list[WarpAccess]) -> Run:
    """The warp's accesses -> the run of the whole warp, runs nested as their symbols say."""
    warp = Run(1)
    open_: list[tuple[int, Run]] = []  # (symbol, run) from the outermost
    for i, (_, _, batch, _, symbols) in enumerate(accesses):
        keep = 0
        while keep < min(len(open_), len(symbols)) and open_[keep][0] == symbols[keep]:
            keep += 1
        del open_[keep:]
        for symbol, (trips, _) in zip(symbols[keep:], batch.loops[keep:]):
            run = Run(trips)
            (open_[-1][1] if open_ else warp).body.append(run)
            open_.append((symbol, run))
        (open_[-1][1] if open_ else warp).body.append(i)
    return warp


@dataclass(frozen=True)
class _Counted:
    """A node of the nesting with its count of one instruction's executions in one whole
    run of it, and its children that have some (their running totals in `ends`)."""

    node: Run | int
    count: int
    body: tuple["_Counted", ...]
    ends: np.ndarray


def _counted(node: Run | int, pieces: dict[int, Piece]) -> _Counted:
    if isinstance(node, int):
        return _Counted(node, int(node in pieces), (), np.zeros(0, dtype=np.int64))
    body = tuple(c for c in (_counted(child, pieces) for child in node.body) if c.count)
    ends = np.cumsum([c.count for c in body], dtype=np.int64)
    return _Counted(node, node.trips * int(ends[-1]) if len(ends) else 0, body, ends)


class _Runs:
    """One instruction's executions numbered in execution order over the warp's nesting."""

    def __init__(self, warp: Run, pieces: dict[int, Piece]):
        self.pieces = pieces
        self.tree = _counted(warp, pieces)
        self.total = self.tree.count

    def located(self, i: int) -> tuple[int, int]:
        """Execution i -> (its piece's index, its bytes past the piece's address at j = 0)."""
        at, js = self.tree, []
        while isinstance(at.node, Run):
            j, i = divmod(i, int(at.ends[-1]))
            js.append(j)
            k = int(np.searchsorted(at.ends, i, side="right"))
            i -= int(at.ends[k - 1]) if k else 0
            at = at.body[k]
        loops = self.pieces[at.node].batch.loops
        return at.node, sum(j * stride for j, (_, stride) in zip(js[1:], loops))

    def order(self, at: _Counted | None = None, depth: int = 0
              ) -> tuple[np.ndarray, np.ndarray]:
        """(piece index, shift in bytes mod 4) of every execution in order, as arrays."""
        at = self.tree if at is None else at
        if isinstance(at.node, int):
            return np.array([at.node]), np.zeros(1, dtype=np.int64)
        if not at.body:
            return np.zeros(0, dtype=int), np.zeros(0, dtype=np.int64)
        parts = [self.order(c, depth + 1) for c in at.body]
        ids = np.concatenate([p[0] for p in parts])
        shift = np.concatenate([p[1] for p in parts])
        if depth == 0:
            return ids, shift
        stride = np.array([self.pieces[i].batch.loops[depth - 1][1] % BANK_BYTES for i in ids],
                          dtype=np.int64)
        steps = np.arange(at.node.trips, dtype=np.int64)[:, None] * stride[None, :]
        return np.tile(ids, at.node.trips), ((shift[None, :] + steps) % BANK_BYTES).ravel()


def _batch(p: Piece, shift: int, width: int) -> Batch:
    """The piece's execution at `shift` as the lane path's one-warp Batch."""
    address = np.where(p.active, p.address + shift, 0)[None, :]
    return Batch(p.active[None, :], (address - p.origin) // max(1, width), address, None,
                 None, {})


def lane_execution(b: Batch, width: int, sector_bytes: int) -> LaneExecution:
    """One execution of a `width`-byte global instruction by a warp (row 0 of b)."""
    address = np.broadcast_to(b.address, b.active.shape)
    first, last = lane_sector_spans(address, width, sector_bytes)
    return LaneExecution(
        iteration={v: np.asarray(x)[0] for v, x in b.iteration.items()},
        active=b.active[0], element=np.broadcast_to(b.element, b.active.shape)[0],
        row=None if b.row is None else b.row[0], col=None if b.col is None else b.col[0],
        address=address[0], first_sector=first[0], last_sector=last[0],
        sectors=int(sector_counts(address, width, b.active, sector_bytes)[0]),
        useful_bytes=int(useful_bytes(address, width, b.active)[0]))


class ClosedExecutions(Executions):
    """A global instruction's executions by one warp, each made when asked; their sums
    from account_repeated (model/repeat.py), as the totals are counted."""

    def __init__(self, runs: _Runs, width: int, sector_bytes: int):
        super().__init__()
        self._runs, self._width, self._sb = runs, width, sector_bytes

    def __len__(self) -> int:
        return self._runs.total

    def _at(self, i: int) -> LaneExecution:
        index, shift = self._runs.located(i)
        return lane_execution(_batch(self._runs.pieces[index], shift, self._width),
                              self._width, self._sb)

    def sums(self, sector_bytes: int) -> tuple[int, int, int]:
        sectors = useful = ideal = 0
        for p in self._runs.pieces.values():
            acc = account_repeated(p.batch, self._width, sector_bytes)
            sectors += int(acc.sectors[0])
            useful, ideal = useful + acc.useful, ideal + acc.ideal
        return sectors, useful, ideal


    def sector_range(self, sector_bytes: int) -> tuple[int, int]:
        """From each piece's rows at the shifts mod sector_bytes its loops reach."""
        counts = []
        for p in self._runs.pieces.values():
            shifts = np.flatnonzero(phase_weights(p.batch.loops, sector_bytes))
            rows = np.where(p.active, p.address[None, :] + shifts[:, None], 0)
            counts.extend(sector_counts(rows, self._width, np.broadcast_to(p.active, rows.shape),
                                        sector_bytes).tolist())
        return (min(counts), max(counts)) if counts else (0, 0)


class ClosedShared(Lazy[Batch]):
    """A shared instruction's executions by one warp (one-row Batches of byte offsets in
    the block's shared memory), each made when asked."""

    def __init__(self, runs: _Runs, width: int):
        super().__init__()
        self._runs, self._width = runs, width

    def __len__(self) -> int:
        return self._runs.total

    def _at(self, i: int) -> Batch:
        index, shift = self._runs.located(i)
        return _batch(self._runs.pieces[index], shift, self._width)


class ClosedWavefronts(Lazy[int]):
    """The bank wavefronts of each execution of a shared instruction by one warp: a piece's
    executions differ by whole words but for their shift mod 4 bytes, so four rows per
    piece give them all."""

    def __init__(self, runs: _Runs, width: int):
        super().__init__()
        self._runs = runs
        self._tables = {i: self._table(p, width) for i, p in runs.pieces.items()}

    @staticmethod
    def _table(p: Piece, width: int) -> np.ndarray:
        rows = p.address[None, :] + np.arange(BANK_BYTES, dtype=np.int64)[:, None]
        active = np.broadcast_to(p.active, rows.shape)
        return bank_rows(np.where(active, rows, 0), width, active).wavefronts

    def __len__(self) -> int:
        return self._runs.total

    def _at(self, i: int) -> int:
        index, shift = self._runs.located(i)
        return int(self._tables[index][shift % BANK_BYTES])

    def __iter__(self) -> Iterator[int]:
        """Every execution's wavefronts in order, from one array of (piece, shift mod 4)."""
        ids, shift = self._runs.order()
        out = np.zeros(len(ids), dtype=np.int64)
        for index, table in self._tables.items():
            on = ids == index
            out[on] = table[shift[on]]
        yield from out.tolist()


def instruction_runs(accesses: list[WarpAccess], warp: Run, space: str, k: int) -> _Runs:
    """Instruction k of `space`'s executions over the warp's nesting."""
    return _Runs(warp, {i: piece(b, origin) for i, (s, j, b, origin, _) in enumerate(accesses)
                        if (s, j) == (space, k)})


def closed_details(accesses: list[WarpAccess], global_widths: list[int],
                   shared_widths: list[int], sector_bytes: int) -> Parts:
    """(each global instruction's executions, each shared one's, their wavefronts)."""
    warp = nesting(accesses)
    glob = [instruction_runs(accesses, warp, "global", k) for k in range(len(global_widths))]
    shared = [instruction_runs(accesses, warp, "shared", k) for k in range(len(shared_widths))]
    return (tuple(ClosedExecutions(r, w, sector_bytes) for r, w in zip(glob, global_widths)),
            tuple(ClosedShared(r, w) for r, w in zip(shared, shared_widths)),
            tuple(ClosedWavefronts(r, w) for r, w in zip(shared, shared_widths)))
