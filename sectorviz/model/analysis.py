"""Accounting: Pattern -> per-instruction and total sector demand, streamed over warps.

Units: bytes for *_bytes, 32-byte (sector_bytes) sectors for *sectors, one request per warp
execution of an instruction with at least one active lane. `analyze` is a pure function of
the pattern; it walks the grid in chunks of warps so memory stays bounded, and `warp_detail`
computes one warp's per-lane view without touching the rest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np

from .budget import BATCH_UNITS, Budget, current, work_budget
from .cache import CacheResult, floor_words, simulation
from .errors import PatternError
from .kernel import Kernel
from .pattern import Pattern, suggest
from .affine import WarpCoordinates, account_affine
from .repeat import RepeatedAccount, account_repeated
from .sectors import RowAccount, WARP_SIZE, account_rows, lane_sector_spans, sector_counts, useful_bytes
from .shared_stats import SharedCounter, SharedInstructionStats, SharedStats
from .unique import SectorSet

CHUNK_LANES = 2**18  # lanes per chunk at the default memory cap (see chunk_lanes)
CHUNK_SHARE = 16  # a chunk's arrays take at most 1/CHUNK_SHARE of the run's memory cap
LANE_BYTES = 384  # bytes a chunk holds per lane: addresses, masks, coordinates, sector ids
MAX_LANE_SECTORS = CHUNK_LANES // WARP_SIZE  # sectors one lane may touch: a warp fills a chunk
MAX_PER_WARP_CELLS = 2**27  # (instruction, warp) counts kept by per_warp: 2.5 GiB at most
CLOSED_CHUNKS = 32  # a front end's closed forms take this many lane-path chunks at a time

LOAD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
STORE_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
LOAD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
STORE_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
ATOM_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"
RED_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
ATOM_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
RED_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
L2_SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum + lts__t_sectors_srcunit_tex_op_write.sum"
DRAM_BYTES = "dram__bytes_read.sum + dram__bytes_write.sum"


class Cancelled(Exception):
    """Raised by a progress callback to stop an analysis early."""


@dataclass(frozen=True)
class Stats:
    """Accounting of one instruction (or of all of them, for the totals)."""

    requests: int
    active_lanes: int
    logical_bytes: int
    useful_bytes: int
    sectors: int
    sector_bytes: int
    ideal_sectors: int
    excess_sectors: int
    sectors_per_request: float
    useful_fraction: float
    min: int
    max: int
    mode: int
    unique_sectors: int

    @property
    def sector_traffic_bytes(self) -> int:
        return self.sectors * self.sector_bytes

    def to_json(self) -> dict:
        """The JSON figures: the fields, with `sector_size` the granularity (bytes) and
        `sector_bytes` the sector traffic in bytes (sectors x sector size)."""
        doc = asdict(self)
        doc["sector_size"] = doc.pop("sector_bytes")
        doc["sector_bytes"] = self.sector_traffic_bytes
        return doc


@dataclass(frozen=True)
class InstructionStats(Stats):
    name: str = ""
    op: str = ""
    array: str = ""
    width: int = 0
    line: int | None = None
    column: int | None = None
    source: str | None = None


@dataclass(frozen=True)
class Boundary:
    """Traffic at a named boundary, with the assumption it rests on and the metric that measures it."""

    name: str
    bytes: int
    sectors: int
    assumption: str
    metric: str


@dataclass(frozen=True)
class ConstantStats:
    """One instruction reading a `__constant__` array, over the whole launch: the constant
    cache serves one address per pass, so a request costs as many passes as it has distinct
    addresses (summed over requests); never global sectors."""

    name: str  # the __constant__ array
    line: int | None
    requests: int
    distinct_addresses: int
    instruction: str
    column: int | None
    source: str | None


@dataclass(frozen=True)
class Analysis:
    pattern_name: str
    sector_bytes: int
    warps: int
    threads: int
    instructions: tuple[InstructionStats, ...]
    totals: Stats
    boundaries: tuple[Boundary, ...]
    per_warp_sectors: np.ndarray | None = field(default=None, compare=False)
    per_warp_requests: np.ndarray | None = field(default=None, compare=False)
    warps_done: int | None = field(default=None, compare=False)  # set while a run is partial
    constant: tuple[ConstantStats, ...] = ()
    per_warp_ideal: np.ndarray | None = field(default=None, compare=False)  # like sectors
    shared: tuple[SharedInstructionStats, ...] = ()  # set once the run is complete
    shared_totals: SharedStats | None = None
    # with per_warp: (3, shared instructions, warps) wavefronts, ideal wavefronts, requests
    per_warp_shared: np.ndarray | None = field(default=None, compare=False)
    cache: CacheResult | None = None  # the L2 model's estimate, when the pattern sets a machine
    shared_note: str | None = None  # why the shared instructions were not counted, if not
    # per global instruction: requests by sectors per request (entry s: requests of s sectors)
    histograms: tuple[np.ndarray, ...] = field(default=(), compare=False)

    def to_json(self) -> dict:
        """The `--json` document: `sector_size` (bytes), `instructions` (a list), `totals`
        (both with `sector_size` and `sector_bytes` = sectors x sector size), `boundaries`,
        `constant` (reads of __constant__ arrays); `shared` and `shared_totals` (banks)."""
        return {
            "pattern": self.pattern_name,
            "sector_size": self.sector_bytes,
            "warps": self.warps,
            "threads": self.threads,
            "instructions": [s.to_json() for s in self.instructions],
            "totals": self.totals.to_json(),
            "boundaries": [asdict(b) for b in self.boundaries],
            "constant": [asdict(c) for c in self.constant],
            "shared": [asdict(s) for s in self.shared],
            "shared_totals": None if self.shared_totals is None else asdict(self.shared_totals),
            "shared_note": self.shared_note,
        } | ({"cache": self.cache.to_json()} if self.cache is not None else {})


class _Accumulator:
    """Running sums for one instruction over batches of warp executions."""

    def __init__(self, width: int, sector_bytes: int):
        self.width, self.sb = width, sector_bytes
        self.requests = self.active_lanes = self.useful = self.sectors = self.ideal = 0
        self.histogram = np.zeros(1, dtype=np.int64)

    def add(self, rows: RowAccount) -> None:
        counts, useful = rows.counts, rows.useful
        if _uniform(counts) and _uniform(useful) and _uniform(rows.requested):
            self._add_alike(int(counts[0]), int(useful[0]), len(counts) if rows.requested[0] else 0,
                            rows.active_lanes)
            return
        if not rows.requested.all():
            counts, useful = counts[rows.requested], useful[rows.requested]
        self.requests += len(counts)
        self.active_lanes += rows.active_lanes
        self.useful += int(useful.sum())
        self.sectors += int(counts.sum())
        self.ideal += int((-(-useful // self.sb)).sum())
        self._count(np.bincount(counts))

    def add_repeated(self, acc: RepeatedAccount) -> None:
        """Sums of a RepeatedBatch's executions, counted in closed form."""
        self.requests += int(acc.requests.sum())
        self.active_lanes += acc.active_lanes
        self.useful += acc.useful
        self.sectors += int(acc.sectors.sum())
        self.ideal += acc.ideal
        self._count(acc.histogram)

    def _count(self, hist: np.ndarray) -> None:
        """Add requests by sectors per request to the histogram."""
        if len(hist) > len(self.histogram):
            hist[: len(self.histogram)] += self.histogram
            self.histogram = hist
        else:
            self.histogram[: len(hist)] += hist

    def _add_alike(self, count: int, useful: int, requests: int, lanes: int) -> None:
        """`requests` warp executions of `count` sectors and `useful` bytes each."""
        self.requests += requests
        self.active_lanes += lanes
        self.useful += useful * requests
        self.sectors += count * requests
        self.ideal += -(-useful // self.sb) * requests
        if count >= len(self.histogram):
            self.histogram = np.pad(self.histogram, (0, count + 1 - len(self.histogram)))
        self.histogram[count] += requests

    def stats(self, unique: int) -> Stats:
        return _stats(self.requests, self.active_lanes, self.active_lanes * self.width,
                      self.useful, self.sectors, self.sb, self.ideal, self.histogram, unique)


def _uniform(values: np.ndarray) -> bool:
    """A non-empty array broadcast from one value (stride 0): the rows of one class."""
    return len(values) > 0 and values.strides == (0,)


def _stats(requests, lanes, logical, useful, sectors, sb, ideal, histogram, unique) -> Stats:
    seen = np.nonzero(histogram)[0]
    return Stats(
        requests=requests, active_lanes=lanes, logical_bytes=logical, useful_bytes=useful,
        sectors=sectors, sector_bytes=sb, ideal_sectors=ideal, excess_sectors=sectors - ideal,
        sectors_per_request=sectors / requests if requests else 0.0,
        useful_fraction=useful / (sectors * sb) if sectors else 0.0,
        min=int(seen[0]) if len(seen) else 0, max=int(seen[-1]) if len(seen) else 0,
        mode=int(np.argmax(histogram)) if len(seen) else 0, unique_sectors=unique)


KernelFactory = Callable[[Pattern], Kernel]
_kernel_factories: list[KernelFactory] = []


def register_kernel_factory(factory: KernelFactory) -> None:
    """Set the front end that turns a pattern with a `kernel` key into a Kernel (the model
    never imports one: sectorviz.frontends registers the CUDA front end here)."""
    _kernel_factories[:] = [factory]
    kernel_for.cache_clear()


@lru_cache(maxsize=8)
def kernel_for(pattern: Pattern) -> Kernel:
    """The resolved kernel of a pattern (cached: patterns are immutable values). A pattern
    with a `kernel` key is interpreted by the registered front end, which has Kernel's
    interface."""
    if pattern.kernel is not None:
        if not _kernel_factories:
            raise PatternError("kernel", "no front end for kernels is loaded "
                                         "(import sectorviz.frontends)")
        return _kernel_factories[0](pattern)
    return Kernel(pattern)


def instruction_index(pattern: Pattern, key: int | str, space: str = "global") -> int:
    """An instruction by 0-based index or by name -> its index among the `space` ones
    ("global", "shared", or "all": the global ones, then the shared ones, as the app counts);
    PatternError if there is none."""
    kernel = kernel_for(pattern)
    listed = {"global": kernel.instructions, "shared": kernel.shared_instructions,
              "all": kernel.instructions + kernel.shared_instructions}[space]
    names = [ins.name for ins in listed]
    if isinstance(key, str) and not key.lstrip("-").isdigit():
        if key in names:
            return names.index(key)
        raise PatternError("instruction", f"no instruction named {key!r}" + suggest(key, names))
    k = int(key)
    if not 0 <= k < len(names):
        raise PatternError("instruction", f"instruction {k} outside [0, {len(names)})")
    return k


def check_widths(kernel: Kernel, sector_bytes: int) -> None:
    """Refuse, before allocating, an instruction whose elements are so wide (bytes) that one
    warp's sector ids (up to width / sector_bytes + 1 per lane) would not fit in a chunk."""
    for ins in kernel.instructions:
        most = -(-ins.width // sector_bytes) + 1
        if most > MAX_LANE_SECTORS:
            raise PatternError(f"arrays.{ins.array}.dtype",
                               f"{ins.width}-byte elements touch up to {most} sectors per lane; "
                               f"sectorviz counts at most {MAX_LANE_SECTORS}")


def closed_form_units(rows: RowAccount) -> int:
    """What counting a chunk of warps in closed form costs: one execution (BATCH_UNITS) and a
    unit per sector id and run of sectors it hands to the unique count; a chunk counted as a
    whole costs little however many warps it stands for."""
    runs = 0 if rows.touched_ranges is None else len(rows.touched_ranges[0])
    return BATCH_UNITS + runs + sum(t.size for t in rows.touched)


def chunk_lanes(memory: int) -> int:
    """A run's memory cap (bytes) -> lanes per chunk of warps (CHUNK_LANES at the default)."""
    return max(WARP_SIZE, memory // CHUNK_SHARE // LANE_BYTES)


def warp_chunks(total: int, warps_per_chunk: int, start: int = 0):
    """[lo, hi) ranges of at most warps_per_chunk warps covering [start, start + total)."""
    for lo in range(start, start + total, warps_per_chunk):
        yield lo, min(start + total, lo + warps_per_chunk)


def analyze(pattern: Pattern, per_warp: bool = False,
            progress: Callable[[int, int], None] | None = None,
            partial: Callable[[Callable[[], Analysis]], None] | None = None,
            budget: Budget | None = None) -> Analysis:
    """Pattern -> Analysis. `per_warp` keeps (instructions, warps) sector, request and ideal
    sector counts;
    `progress(done_warps, total_warps)` is called after each chunk and may raise Cancelled;
    `partial(so_far)` too, where so_far() is the Analysis of the warps done (`warps_done`
    set, per-warp counts of those warps only). The run spends `budget` (None: the one
    already open, or a default one); work it can size up front is refused before it
    starts. Memory: chunks of warps sized from the budget's memory cap, per-warp counts and
    unique-sector stores held against it."""
    with work_budget(budget) as spend:
        try:
            return _analyze(pattern, per_warp, progress, partial, spend)
        finally:
            spend.progress = None


def _analyze(pattern: Pattern, per_warp: bool, progress: Callable[[int, int], None] | None,
             partial: Callable[[Callable[[], Analysis]], None] | None,
             budget: Budget) -> Analysis:
    kernel = kernel_for(pattern)
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    n = len(kernel.instructions)
    widths = [ins.width for ins in kernel.instructions]
    plans = getattr(kernel, "closed_forms", {})
    closed = getattr(kernel, "closed_trace", None)
    sim = simulation(pattern.machine, kernel, sb)
    if sim is not None:  # the cache model takes every request's sectors: the lane path
        plans, closed = {}, None
    if closed is None:
        budget.check(*kernel.work_estimate(kernel.warps, plans), place="launch")
    accs = [_Accumulator(w, sb) for w in widths]
    seen = [SectorSet() for _ in range(n)]
    if per_warp and n * kernel.warps > MAX_PER_WARP_CELLS:
        raise PatternError("launch", f"{n} instructions x {kernel.warps} warps is too many "
                                     f"per-warp counts to keep (at most {MAX_PER_WARP_CELLS}); "
                                     "shrink the grid")
    if per_warp:
        budget.reserve(20 * n * kernel.warps, f"per-warp counts of {n} instructions x "
                                              f"{kernel.warps:,} warps", "launch")
    per_sectors = np.zeros((n, kernel.warps), dtype=np.int64) if per_warp else None
    per_requests = np.zeros((n, kernel.warps), dtype=np.int32) if per_warp else None
    per_ideal = np.zeros((n, kernel.warps), dtype=np.int64) if per_warp else None
    kernel.whole_values()  # read by most warps: built once, not per chunk

    def record(k: int, lo: int, hi: int, rows: RowAccount) -> None:
        accs[k].add(rows)
        for touched in rows.touched:
            seen[k].add(touched)
        if rows.touched_ranges is not None:
            seen[k].add_runs(*rows.touched_ranges)
        if per_warp:
            per_sectors[k, lo:hi] += rows.counts
            per_requests[k, lo:hi] += rows.requested
            per_ideal[k, lo:hi] += -(-rows.useful // sb) * rows.requested

    def record_repeated(k: int, lo: int, hi: int, batch) -> None:
        acc = account_repeated(batch, widths[k], sb)
        accs[k].add_repeated(acc)
        for first, last in acc.runs:
            seen[k].add_runs(first, last)
        if per_warp:
            per_sectors[k, lo:hi] += acc.sectors
            per_requests[k, lo:hi] += acc.requests
            per_ideal[k, lo:hi] += acc.ideals

    # closed forms work per warp, not per lane: they take chunks 32 times larger; an element
    # wider than a sector touches up to width / sector_bytes + 1 sectors per lane: fewer warps
    # a CUDA kernel's variables hold kernel.lane_bytes more per lane: fewer lanes per chunk
    lanes = chunk_lanes(budget.memory * LANE_BYTES // (LANE_BYTES + kernel.lane_bytes))
    shared = SharedCounter(kernel, lanes // WARP_SIZE, per_warp)  # run lane by lane
    all_closed = len(plans) == n and not shared.instructions
    chunk = lanes if all_closed else max(1, lanes // WARP_SIZE)
    chunk = max(1, chunk // max([1] + [-(-w // sb) for w in widths]))
    chunk = sim.chunk_warps(chunk) if sim is not None else chunk
    # a CUDA kernel's closed forms count whole loop runs, a multiple of the lane path's
    # chunks at a time; where they do not apply, the lane path takes over from that chunk

    def chunk_done(hi: int) -> None:
        budget.progress = (hi, kernel.warps)
        if progress is not None:
            progress(hi, kernel.warps)
        if partial is not None and hi < kernel.warps:
            partial(lambda hi=hi: _analysis(pattern, kernel, accs, seen, per_sectors,
                                            per_requests, per_ideal, hi))

    start = 0
    while closed is not None and start < kernel.warps:
        step = closed(start, chunk * CLOSED_CHUNKS, sb, per_warp)
        if step is None:
            break
        hi, events = step
        for k, batch in events:
            record_repeated(k, start, hi, batch)
        start = hi
        chunk_done(hi)
    if closed is not None and start < kernel.warps:  # the lane path takes over: size it
        budget.check(*kernel.work_estimate(kernel.warps - start, plans), place="launch")
    for lo, hi in warp_chunks(kernel.warps - start, chunk, start):
        coords = WarpCoordinates(kernel, lo, hi) if plans else None
        # in program order, so that the first error is the one the lane path would raise
        steps = ((k, None) for k in range(n)) if all_closed else \
            shared.global_steps(lo, hi, plans)
        for k, batch in steps:
            if batch is None:
                rows = account_affine(plans[k], coords, sb)
                budget.charge(closed_form_units(rows), "this access", plans[k].place)
                record(k, lo, hi, rows)
            else:
                record(k, lo, hi, account_rows(batch.address, widths[k], batch.active, sb))
                if sim is not None:
                    sim.add(lo, kernel.instructions[k].op, widths[k], batch.address,
                            batch.active)
        if sim is not None:
            sim.flush(hi)
        chunk_done(hi)
    return shared.added_to(_analysis(pattern, kernel, accs, seen, per_sectors, per_requests,
                                     per_ideal, kernel.warps,
                                     sim.result() if sim is not None else None))


def _analysis(pattern: Pattern, kernel: Kernel, accs: list[_Accumulator],
              seen: list[SectorSet], per_sectors: np.ndarray | None,
              per_requests: np.ndarray | None, per_ideal: np.ndarray | None,
              done: int, cache: CacheResult | None = None) -> Analysis:
    """The Analysis of warps [0, done): complete when done is every warp."""
    sb = pattern.sector_bytes
    instructions = tuple(
        InstructionStats(**asdict(acc.stats(s.count())), name=ins.name, op=ins.op,
                         array=ins.array, width=ins.width, line=ins.line, column=ins.column,
                         source=ins.source)
        for acc, s, ins in zip(accs, seen, kernel.instructions))
    totals = _totals(accs, seen, sb)
    if done < kernel.warps and per_sectors is not None:
        per_sectors, per_requests = per_sectors[:, :done], per_requests[:, :done]
        per_ideal = per_ideal[:, :done]
    boundaries = _boundaries(instructions, totals, sb, getattr(kernel, "assumptions", ()), cache)
    return Analysis(pattern.name, sb, kernel.warps, kernel.blocks * kernel.threads_per_block,
                    instructions, totals, boundaries, per_sectors, per_requests,
                    None if done == kernel.warps else done,
                    constant_listing(kernel) if done == kernel.warps else (), per_ideal,
                    cache=cache, histograms=tuple(acc.histogram.copy() for acc in accs))


def distinct_per_row(address: np.ndarray, active: np.ndarray) -> np.ndarray:
    """(rows, 32) addresses -> (rows,) number of distinct addresses among active lanes."""
    keyed = np.where(active, address, np.iinfo(np.int64).max)
    keyed.sort(axis=1)
    distinct = np.ones(keyed.shape, dtype=bool)
    distinct[:, 1:] = keyed[:, 1:] != keyed[:, :-1]
    return (distinct & (keyed != np.iinfo(np.int64).max)).sum(axis=1)


def constant_listing(kernel: Kernel) -> tuple[ConstantStats, ...]:
    """A kernel's reads of __constant__ arrays (`constant_instructions`, traced by
    `space_trace("constant", ...)`) -> requests and distinct addresses per instruction."""
    instructions = getattr(kernel, "constant_instructions", ())
    sums = np.zeros((len(instructions), 2), dtype=np.int64)  # requests, distinct addresses
    if instructions:
        for lo, hi in warp_chunks(kernel.warps, max(1, CHUNK_LANES // WARP_SIZE)):
            for k, batch in kernel.space_trace("constant", lo, hi):
                address = np.broadcast_to(batch.address, batch.active.shape)
                sums[k] += (batch.active.any(axis=1).sum(),
                            distinct_per_row(address, batch.active).sum())
    return tuple(ConstantStats(ins.array, ins.line, int(r), int(d), ins.name, ins.column,
                               ins.source) for ins, (r, d) in zip(instructions, sums))


def _totals(accs: list[_Accumulator], seen: list[SectorSet], sb: int) -> Stats:
    width = max((len(a.histogram) for a in accs), default=1)  # a kernel may access nothing
    histogram = np.zeros(width, dtype=np.int64)
    for a in accs:
        histogram[: len(a.histogram)] += a.histogram
    return _stats(sum(a.requests for a in accs), sum(a.active_lanes for a in accs),
                  sum(a.active_lanes * a.width for a in accs), sum(a.useful for a in accs),
                  sum(a.sectors for a in accs), sb, sum(a.ideal for a in accs), histogram,
                  seen[0].union_count(seen) if seen else 0)


def _boundaries(instructions, totals: Stats, sb: int, assumptions: tuple[str, ...] = (),
                cache: CacheResult | None = None) -> tuple[Boundary, ...]:
    """The named boundaries; `assumptions` (the front end's, e.g. about per-thread arrays)
    are added to the request side's. Atomics and reductions get their own request-side
    boundary when the kernel has them; a cache model's estimate sits between the bounds,
    which then carry their time floors too."""
    def floor(n: int) -> str:
        return f"; {floor_words(n * sb, cache.machine)}" if cache is not None else ""

    def side(op: str) -> int:
        return sum(s.sectors for s in instructions if s.op == op)

    extra = "".join(f"; {a}" for a in assumptions)
    loads, stores, atoms, reds = side("load"), side("store"), side("atom"), side("red")
    rmw = tuple(
        Boundary(f"L1 request side, {what}", n * sb, n,
                 f"every warp {kind} instruction's distinct sectors, counted per request like "
                 f"loads (requests: {requests})", metric)
        for what, kind, n, requests, metric in (
            ("atomics", "atomic (result used)", atoms, ATOM_REQUESTS, ATOM_SECTORS),
            ("reductions", "reduction (atomic, result unused)", reds, RED_REQUESTS,
             RED_SECTORS))
        if any(s.op == ("atom" if what == "atomics" else "red") for s in instructions))
    return (
        Boundary("L1 request side, loads", loads * sb, loads,
                 "every warp load instruction's distinct sectors, counted per request "
                 f"(requests: {LOAD_REQUESTS}){extra}", LOAD_SECTORS),
        Boundary("L1 request side, stores", stores * sb, stores,
                 "every warp store instruction's distinct sectors, counted per request "
                 f"(requests: {STORE_REQUESTS})", STORE_SECTORS),
        *rmw,
        Boundary("below L1, no reuse", totals.sectors * sb, totals.sectors,
                 "upper bound: no cache serves any sector twice, so every requested sector "
                 "crosses (equals the request-side demand)" + floor(totals.sectors), L2_SECTORS),
        *(Boundary(*row) for row in (cache.boundary_rows() if cache is not None else ())),
        Boundary("below L1, perfect reuse", totals.unique_sectors * sb, totals.unique_sectors,
                 "lower bound: each distinct sector crosses once; caches keep everything "
                 "for the whole kernel" + floor(totals.unique_sectors), DRAM_BYTES),
    )


# ---------------------------------------------------------------- one warp


@dataclass(frozen=True)
class LaneExecution:
    """One execution of one instruction by one warp: arrays of 32 lanes."""

    iteration: dict[str, np.ndarray]
    active: np.ndarray
    element: np.ndarray
    row: np.ndarray | None
    col: np.ndarray | None
    address: np.ndarray
    first_sector: np.ndarray
    last_sector: np.ndarray
    sectors: int
    useful_bytes: int


@dataclass(frozen=True)
class WarpDetail:
    """A warp's lanes: thread and block coordinates, and each instruction's executions."""

    warp: int
    valid: np.ndarray
    thread: tuple[np.ndarray, np.ndarray, np.ndarray]
    block: tuple[int, int, int]
    executions: tuple[tuple[LaneExecution, ...], ...]  # per instruction, in program order


def warp_detail(pattern: Pattern, warp: int, budget: Budget | None = None) -> WarpDetail:
    """(pattern, global warp index) -> per-lane detail for that warp only, spending `budget`
    (None: the one already open, or a default one)."""
    with work_budget(budget):
        return _warp_detail(pattern, warp)


@lru_cache(maxsize=256)
def _warp_detail(pattern: Pattern, warp: int) -> WarpDetail:
    kernel = kernel_for(pattern)
    threads = kernel.threads(warp, warp + 1)
    current().check(*kernel.work_estimate(1), place="warp")
    sb = pattern.sector_bytes
    check_widths(kernel, sb)
    runs: list[list[LaneExecution]] = [[] for _ in kernel.instructions]
    for k, b in kernel.trace(warp, warp + 1, threads):
        width = kernel.instructions[k].width
        address = np.broadcast_to(b.address, b.active.shape)
        first, last = lane_sector_spans(address, width, sb)
        runs[k].append(LaneExecution(
            iteration={v: np.asarray(x)[0] for v, x in b.iteration.items()},
            active=b.active[0], element=np.broadcast_to(b.element, b.active.shape)[0],
            row=None if b.row is None else b.row[0], col=None if b.col is None else b.col[0],
            address=address[0], first_sector=first[0], last_sector=last[0],
            sectors=int(sector_counts(address, width, b.active, sb)[0]),
            useful_bytes=int(useful_bytes(address, width, b.active)[0])))
    return WarpDetail(warp, threads.valid[0], tuple(t[0] for t in threads.thread),
                      tuple(int(b[0, 0]) for b in threads.block), tuple(tuple(r) for r in runs))
