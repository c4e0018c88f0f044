"""Shared-memory accounting per instruction, counted alongside the global pass.

Units: one request per warp execution of a shared instruction with an active lane; wavefronts
and ideal wavefronts as banks.py defines them, summed over requests; `min`, `max` and `mode`
are of the requests' n-way conflicts (the worst phase's wavefronts: 1 is conflict-free).
A front end's kernel yields ("shared", k, Batch) events, Batch addresses being byte offsets in
the block's shared memory; global events pass through to the sector accounting, and
("local", k, Batch) events are counted by local_stats.LocalCounter in the same pass.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Collection, Iterator

import numpy as np

from .banks import BANK_BYTES, BankRows, bank_rows
from .budget import current, reserve
from .kernel import Batch, InstructionNamed, instruction_fields
from .local_stats import LocalCounter
from .repeat import RepeatedBatch

if TYPE_CHECKING:
    from .frontend import FrontEnd
    from .results import Analysis


def bank_shift_invariant(batch: RepeatedBatch) -> bool:
    """Whether every iteration of `batch` shifts its lanes by a multiple of 4 bytes (a bank
    word), so that each execution of a row has its first one's wavefronts."""
    return all(stride % BANK_BYTES == 0 for _, stride in batch.loops)


class SharedTooCostly(Exception):
    """Counting the shared accesses on the lane path would pass the work budget."""


def _rest_cost(probes: list[tuple[int, int]], warps: int, chunk: int) -> int:
    """Units that `warps` more warps in chunks of `chunk` would take, from the (warps, units)
    of the last two chunks run: a fixed cost per chunk plus a cost per warp."""
    (w0, u0), (w1, u1) = probes
    per_warp = max((u1 - u0) / (w1 - w0) if w1 != w0 else u1 / w1, 0.0)
    fixed = max(u1 - per_warp * w1, 0.0)
    return int(-(-warps // chunk) * fixed + warps * per_warp)


@dataclass(frozen=True)
class SharedStats:
    """Bank accounting of one shared instruction (or of all of them, for the totals)."""

    requests: int
    active_lanes: int
    wavefronts: int
    ideal_wavefronts: int
    bank_conflicts: int  # wavefronts - ideal_wavefronts
    wavefronts_per_request: float
    min: int  # n-way of the best request
    max: int  # n-way of the worst request
    mode: int  # the most common n-way


@dataclass(frozen=True)
class SharedInstructionStats(InstructionNamed, SharedStats):
    """Bank accounting of one shared instruction, with its name and place."""


class _Sums:
    """Running sums of one shared instruction: requests, lanes, wavefronts, ideal, n-ways."""

    def __init__(self) -> None:
        self.requests = self.active_lanes = self.wavefronts = self.ideal = 0
        self.ways = np.zeros(1, dtype=np.int64)

    def add(self, batch: Batch, width: int) -> tuple[np.ndarray, BankRows] | None:
        """Count one batch; (its rows that made a request, their BankRows), None if none."""
        requested = batch.active.any(axis=1)
        if not requested.any():
            return None
        active = batch.active[requested]
        address = np.broadcast_to(batch.address, batch.active.shape)[requested]
        rows = bank_rows(address, width, active)
        self.requests += int(requested.sum())
        self.active_lanes += int(active.sum())
        self.wavefronts += int(rows.wavefronts.sum())
        self.ideal += int(rows.ideal.sum())
        self.merge_ways(np.bincount(rows.ways))
        return np.flatnonzero(requested), rows

    def merge_ways(self, counts: np.ndarray) -> None:
        if len(counts) > len(self.ways):
            counts = counts.copy()
            counts[: len(self.ways)] += self.ways
            self.ways = counts
        else:
            self.ways[: len(counts)] += counts

    def stats(self) -> SharedStats:
        seen = np.nonzero(self.ways)[0]
        return SharedStats(
            requests=self.requests, active_lanes=self.active_lanes, wavefronts=self.wavefronts,
            ideal_wavefronts=self.ideal, bank_conflicts=self.wavefronts - self.ideal,
            wavefronts_per_request=self.wavefronts / self.requests if self.requests else 0.0,
            min=int(seen[0]) if len(seen) else 0, max=int(seen[-1]) if len(seen) else 0,
            mode=int(np.argmax(self.ways)) if len(seen) else 0)


def _alike_rows(batch: RepeatedBatch, rows: np.ndarray, active: np.ndarray, width: int
                ) -> BankRows:
    """BankRows of the batch's `rows` at j = 0: full rows of one class whose bases agree mod 4
    bytes differ by whole words, which turns the banks and keeps the counts, so each such
    group is counted once (a mixed row on its own)."""
    full = batch.full[rows]
    keys = np.where(full, batch.cls[rows] * BANK_BYTES + batch.base[rows] % BANK_BYTES,
                    -1 - np.arange(len(rows)))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    picked = rows[first]
    counted = bank_rows(batch.base[picked, None] + batch.offsets[batch.cls[picked]], width,
                        active[first])
    return BankRows(counted.wavefronts[inverse], counted.ideal[inverse],
                    counted.ways[inverse])


class SharedCounter:
    """The shared instructions of a kernel, counted over the warps the analysis streams.

    `global_steps(lo, hi)` runs the kernel's events of warps [lo, hi) once, counting the
    shared ones and yielding the global ones; a front end's closed forms give shared batches
    too (`closed_step`: one bank count per row, times its executions); warps counted by
    closed forms whose shared side those cannot count are run here for their shared accesses
    before the totals are read, `chunk` warps at a time, so the figures are exact either way. With
    `per_warp`, (3, shared instructions, warps) counts are kept too: wavefronts, ideal, requests.
    """

    def __init__(self, kernel: "FrontEnd", chunk: int, per_warp: bool = False,
                 sector_bytes: int = 32):
        self.kernel = kernel
        self.instructions = kernel.shared_instructions
        self.local = LocalCounter(kernel.local_instructions, sector_bytes)  # run alongside
        self.chunk = max(1, chunk)
        self.done = 0  # warps [0, done) are counted
        self._sums = [_Sums() for _ in self.instructions]
        self.per_warp = None
        if per_warp and self.instructions:
            m = len(self.instructions)
            reserve(24 * m * kernel.warps, f"per-warp wavefronts of {m} shared instructions x "
                                           f"{kernel.warps:,} warps", "launch")
            self.per_warp = np.zeros((3, m, kernel.warps), dtype=np.int64)

    def _add(self, k: int, lo: int, batch: Batch) -> None:
        """Count execution `batch` of shared instruction k by warps lo, lo + 1, ..."""
        counted = self._sums[k].add(batch, self.instructions[k].width)
        if counted is not None and self.per_warp is not None:
            rows, banks = counted
            self.per_warp[:, k, lo + rows] += np.stack(
                [banks.wavefronts, banks.ideal, np.ones_like(banks.ideal)])

    def closed_step(self, lo: int, hi: int, events: list[tuple[str, int, RepeatedBatch]]
                    ) -> None:
        """Count the shared and local batches of a closed-form step of warps [lo, hi) (a
        batch row is a warp, or a class of warps whose blocks the batch's loops repeat; the
        step's (space, index, batch) events), when no warp before is pending and every
        shared batch can be counted in closed form; else they are left to the lane path
        (`_catch_up`), which counts them from `done` on."""
        shared = [(k, b) for space, k, b in events if space == "shared"]
        if self.done != lo or not all(bank_shift_invariant(b) for _, b in shared):
            return
        for k, batch in shared:
            self._add_repeated(k, lo, batch)
        for space, k, batch in events:
            if space == "local":
                self.local.add_repeated(k, batch)
        self.done = hi

    def _add_repeated(self, k: int, lo: int, batch: RepeatedBatch) -> None:
        """Shared instruction k's executions in `batch`: each row's wavefronts, ideal and
        n-way at its first iteration, times its executions (every iteration shifts all lanes
        by the same multiple of 4 bytes, which rotates the banks and keeps the counts)."""
        active = batch.valid[batch.cls] & batch.full[:, None]
        active[batch.mixed] = batch.lanes
        requested = active.any(axis=1)
        if not requested.any():
            return
        rows = np.flatnonzero(requested)
        counted = _alike_rows(batch, rows, active[rows], self.instructions[k].width)
        n = batch.executions
        sums = self._sums[k]
        sums.requests += len(rows) * n
        sums.active_lanes += int(active[rows].sum()) * n
        sums.wavefronts += int(counted.wavefronts.sum()) * n
        sums.ideal += int(counted.ideal.sum()) * n
        sums.merge_ways(np.bincount(counted.ways) * n)
        if self.per_warp is not None:
            self.per_warp[:, k, lo + rows] += n * np.stack(
                [counted.wavefronts, counted.ideal, np.ones_like(counted.ideal)])

    def global_steps(self, lo: int, hi: int, skip: Collection[int] = ()
                     ) -> Iterator[tuple[int, Batch | None]]:
        """The kernel's global (instruction index, execution) of warps [lo, hi), in program
        order (an index in `skip` once, with None), its shared executions counted here."""
        self._catch_up(lo)
        events = self.kernel.events(lo, hi, skip=skip) if skip else self.kernel.events(lo, hi)
        for space, k, batch in events:
            if space == "shared":
                assert batch is not None  # only a skipped global execution comes without
                self._add(k, lo, batch)
            elif space == "local":
                assert batch is not None
                self.local.add(k, batch)
            elif space == "global":
                yield k, batch
        self.done = hi

    def _catch_up(self, hi: int) -> None:
        """Count the shared accesses of warps [done, hi) that no global pass ran (the lane
        path), in chunks that grow from one warp. SharedTooCostly, before the budget runs
        out, when the chunks run so far (a fixed cost per chunk plus a cost per warp, fitted
        to the last two) say the rest would pass it: the closed-form global figures stand."""
        if not self.instructions and not self.local.instructions:
            self.done = max(self.done, hi)
        budget = current()
        start, step, probes = self.done, 1, [(0, 0)]  # (warps, units) of the last chunks
        while self.done < hi:
            top = min(hi, self.done + step)
            before = budget.spent
            for space, k, batch in self.kernel.events(self.done, top):
                if space == "shared":
                    assert batch is not None  # only a skipped global execution comes without
                    self._add(k, self.done, batch)
                elif space == "local":
                    assert batch is not None
                    self.local.add(k, batch)
            probes = [probes[-1], (top - self.done, budget.spent - before)]
            self.done, step = top, min(self.chunk, 8 * step)
            rest = _rest_cost(probes, hi - top, step) if probes[0][0] else 0  # two to fit
            if budget.spent + rest > budget.work:
                raise SharedTooCostly(
                    f"not counted: the shared accesses of {hi - start:,} warps need the lane "
                    f"path, about {budget.spent + rest:,} units of work in all, over the "
                    f"budget of {budget.work:,} (--budget N raises it); the global figures "
                    "above are exact")

    def added_to(self, analysis: "Analysis") -> "Analysis":
        """`analysis` of the whole launch with its shared instructions and totals (or, where
        counting them would pass the work budget, the note that says so)."""
        try:
            self._catch_up(analysis.warps)
        except SharedTooCostly as why:
            return replace(analysis, shared_note=str(why))
        listing = tuple(
            SharedInstructionStats(**asdict(s.stats()), **instruction_fields(ins))
            for s, ins in zip(self._sums, self.instructions))
        return replace(analysis, shared=listing, shared_totals=self.totals(),
                       per_warp_shared=self.per_warp, local=self.local.listing())

    def totals(self) -> SharedStats:
        total = _Sums()
        for s in self._sums:
            total.requests += s.requests
            total.active_lanes += s.active_lanes
            total.wavefronts += s.wavefronts
            total.ideal += s.ideal
            total.merge_ways(s.ways)
        return total.stats()
