"""Below L1: an L2 cache model, GPU presets and execution orders -> DRAM bytes under stated
assumptions (an estimate between the no-reuse and perfect-reuse bounds, never a measurement).

The model, exactly (a test replays it by hand):
- The L2 holds `l2_bytes // 128` lines of 128 bytes, each four 32-byte sectors; line L holds
  sectors 4L .. 4L+3 (sector s = byte address // 32). Lines sit in `sets = lines // ways`
  sets (line L in set L % sets); `ways` 0 means one set of every line (fully associative).
  Each set is least-recently-used over lines.
- A warp request touches its distinct sectors in address order, grouped by line: each line
  it touches moves to most-recent in its set; a line that is not resident is inserted
  (evicting the set's least-recent line when the set is full) with no sector valid.
- A load of a valid sector hits; otherwise it is a miss that reads 32 bytes from DRAM and
  makes the sector valid. A store makes its sectors valid and dirty without reading DRAM
  (byte masks are not modelled: a partial store counts as covering its whole sector). An
  atomic or reduction ("atom", "red") is a load of its sectors, then a store of them.
- Evicting a line writes back its dirty sectors (32 bytes each); at the end of the kernel
  every dirty sector still resident is written back.
- No L1 is modelled: every request reaches the L2. DRAM is read 32 bytes at a time (the
  fetch granularity hint cudaLimitMaxL2FetchGranularity is not modelled).

Execution orders (the order requests reach the L2):
- "warp-serial": blocks in linear order, warps in block order; each warp issues all its
  requests (program order) before the next warp starts.
- "waves": blocks run in waves of sms x resident blocks per SM, in linear order; resident
  blocks per SM = min(threads_per_sm // (warps per block x 32), 32), at least 1 (occupancy
  limited by threads only: registers and shared memory are not considered). Within a wave,
  warps take turns one request at a time: every warp's 1st request in warp order, then
  every warp's 2nd, and so on (a warp that has run out is skipped).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from . import cache_jit
from .budget import charge, reserve
from .errors import PatternError
from .sectors import WARP_SIZE, touched_sector_ids

if TYPE_CHECKING:
    from .frontend import FrontEnd

SECTOR_BYTES = 32
LINE_BYTES = 128
SECTORS_PER_LINE = LINE_BYTES // SECTOR_BYTES
ORDERS = ("warp-serial", "waves")
MAX_BLOCKS_PER_SM = 32
MIB = 2**20
TOUCH_UNITS = 2  # work units per line touch simulated
ROUND_UNITS = 2048  # work units per round of the simulation (a few sorts of the L2's lines)
RUN_LENGTH = 64  # keys whose ascending runs average this long are merged, not radix sorted
WINDOW_WAYS = 64  # up to this many ways a round's counts compare each touch with its set's others
BATCH_TOUCHES = 2**21  # line touches buffered before they run (any split gives the same counts)
LINE_STATE_BYTES = 160  # bytes a resident line takes: 4 int64 and the sorts' temporaries
ENGINE_VARIABLE = "SECTORVIZ_CACHE_ENGINE"  # "numpy" or "numba" forces an engine
JIT_MIN_TOUCHES = 2**21  # fewer line touches in a kernel stay on numpy (at most about a second
# there, less than importing numba and loading or compiling its loop costs)
JIT_MAX_SETS = 2**22  # the compiled loop keeps per-set state: more sets stay on numpy
LOAD, STORE = 1, 2
OP_KINDS = {"load": LOAD, "store": STORE, "atom": LOAD | STORE, "red": LOAD | STORE}
_POPS = np.array([bin(m).count("1") for m in range(16)], dtype=np.int64)  # bits of a mask
_INACTIVE = np.iinfo(np.int64).max

DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
L2_READ_SECTORS = "lts__t_sectors_srcunit_tex_op_read.sum"
L2_READ_HITS = "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"
L2_READ_MISSES = "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"


@dataclass(frozen=True)
class Preset:
    """A GPU's numbers: SMs, L2 bytes, peak DRAM bytes per second, threads per SM."""

    sms: int
    l2_bytes: int
    dram_bytes_per_s: float
    threads_per_sm: int
    source: str


PRESETS: dict[str, Preset] = {
    "V100": Preset(80, 6 * MIB, 900e9, 2048,
                   "NVIDIA Tesla V100 datasheet and Volta whitepaper (SXM2): 80 SMs, 6 MB L2, "
                   "900 GB/s HBM2"),
    "A100-40GB": Preset(108, 40 * MIB, 1555e9, 2048,
                        "NVIDIA A100 datasheet and Ampere whitepaper: 108 SMs, 40 MB L2, "
                        "1,555 GB/s HBM2"),
    "A100-80GB": Preset(108, 40 * MIB, 2039e9, 2048,
                        "NVIDIA A100 80GB SXM datasheet: 108 SMs, 40 MB L2, 2,039 GB/s HBM2e"),
    "H100-SXM": Preset(132, 50 * MIB, 3.35e12, 2048,
                       "NVIDIA H100 datasheet and Hopper whitepaper (SXM5): 132 SMs, 50 MB "
                       "L2, 3.35 TB/s HBM3"),
    "H200-SXM": Preset(132, 50 * MIB, 4.8e12, 2048,
                       "NVIDIA H200 datasheet (SXM): 132 SMs, 50 MB L2, 4.8 TB/s HBM3e"),
    "RTX-4090": Preset(128, 72 * MIB, 1008e9, 1536,
                       "NVIDIA Ada Lovelace whitepaper (GeForce RTX 4090): 128 SMs, 72 MB L2, "
                       "1,008 GB/s GDDR6X, 1,536 threads per SM"),
    "L40S": Preset(142, 96 * MIB, 864e9, 1536,
                   "NVIDIA L40S datasheet and Ada whitepaper: 142 SMs, 96 MB L2, 864 GB/s "
                   "GDDR6, 1,536 threads per SM"),
}
MACHINE_KEYS = {"preset", "l2_bytes", "ways", "order", "sms", "dram_bytes_per_s",
                "threads_per_sm"}
CUSTOM_KEYS = ("l2_bytes", "sms", "dram_bytes_per_s")  # what a machine without preset needs


@dataclass(frozen=True)
class Machine:
    """The machine an estimate assumes: a preset (or "custom") with any overrides."""

    name: str
    sms: int
    l2_bytes: int
    dram_bytes_per_s: float
    threads_per_sm: int
    ways: int  # 0: fully associative
    order: str
    source: str

    @property
    def lines(self) -> int:
        return self.l2_bytes // LINE_BYTES

    def resident_blocks(self, threads_per_block: int) -> int:
        """Blocks one SM holds at once, by threads only (see the module's doc)."""
        threads = -(-threads_per_block // WARP_SIZE) * WARP_SIZE
        return max(1, min(MAX_BLOCKS_PER_SM, self.threads_per_sm // threads))

    def wave_blocks(self, threads_per_block: int) -> int:
        """Blocks in one wave: sms x resident blocks per SM."""
        return self.sms * self.resident_blocks(threads_per_block)

    def describe(self, threads_per_block: int) -> str:
        """The assumptions in words, for the sheet and the boundaries' notes."""
        assoc = "fully associative" if self.ways == 0 else f"{self.ways}-way set associative"
        order = ("warp-serial order: each warp runs all its requests before the next warp"
                 if self.order == "warp-serial" else
                 f"waves of {self.sms} SMs x {self.resident_blocks(threads_per_block)} "
                 f"resident blocks (by {self.threads_per_sm} threads per SM), warps taking "
                 "turns one request at a time")
        return (f"{self.name}: {_mib(self.l2_bytes)} L2, LRU over 128 B lines of four 32 B "
                f"sectors, {assoc}; loads miss to 32 B DRAM reads, stores write whole "
                f"sectors without reading (byte masks not modelled), dirty sectors written "
                f"back on eviction and at the end; no L1; {order}")


def _mib(n: int) -> str:
    return f"{n / MIB:g} MiB" if n % (MIB // 4) == 0 else f"{n:,} B"


MAX_L2_BYTES = 2**40  # physical bounds a machine's sizes must keep (1 TiB of L2)
MAX_SMS = 2**16
MAX_THREADS_PER_SM = 2**16


def _whole(value: Any, place: str, low: int, high: int) -> int:
    """A machine size: an integer in [low, high] (a physical bound), else PatternError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise PatternError(place, f"expected an integer of at least {low}, got {value!r}")
    if value > high:
        raise PatternError(place, f"{value:,} is over the physical bound of {high:,}")
    return value


def machine(spec: Any, place: str = "machine") -> Machine:
    """The `machine` object of a pattern ({"preset", "l2_bytes", "ways", "order", "sms",
    "dram_bytes_per_s", "threads_per_sm"}; any key overrides the preset) -> Machine;
    PatternError naming the key otherwise."""
    if not isinstance(spec, dict):
        raise PatternError(place, "expected an object {preset, l2_bytes, ways, order}")
    for key in spec:
        if key not in MACHINE_KEYS:
            raise PatternError(f"{place}.{key}", f"unknown key; expected one of "
                                                 f"{', '.join(sorted(MACHINE_KEYS))}")
    name = spec.get("preset")
    if name is None:
        missing = [k for k in CUSTOM_KEYS if k not in spec]
        if missing:
            raise PatternError(place, f"a machine without 'preset' needs {', '.join(missing)} "
                                      f"(presets: {', '.join(PRESETS)})")
        base = Preset(0, 0, 0.0, 2048, "custom values")
        name = "custom"
    elif name not in PRESETS:
        raise PatternError(f"{place}.preset", f"unknown preset {name!r}; presets: "
                                              f"{', '.join(PRESETS)}")
    else:
        base = PRESETS[name]
    l2 = _whole(spec.get("l2_bytes", base.l2_bytes), f"{place}.l2_bytes", LINE_BYTES,
                MAX_L2_BYTES)
    ways = _whole(spec.get("ways", 0), f"{place}.ways", 0, MAX_L2_BYTES // LINE_BYTES)
    if ways and (ways > l2 // LINE_BYTES or (l2 // LINE_BYTES) % ways):
        raise PatternError(f"{place}.ways", f"{ways} ways must divide the L2's "
                                            f"{l2 // LINE_BYTES:,} lines")
    order = spec.get("order", "warp-serial")
    if order not in ORDERS:
        raise PatternError(f"{place}.order", f"expected one of {', '.join(ORDERS)}, "
                                             f"got {order!r}")
    bandwidth = spec.get("dram_bytes_per_s", base.dram_bytes_per_s)
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)) or not (
            0 < bandwidth < 1e18):
        raise PatternError(f"{place}.dram_bytes_per_s", f"expected bytes per second, got "
                                                        f"{bandwidth!r}")
    custom = any(k in spec for k in MACHINE_KEYS - {"preset", "order"})
    return Machine(name, _whole(spec.get("sms", base.sms), f"{place}.sms", 1, MAX_SMS), l2,
                   float(bandwidth),
                   _whole(spec.get("threads_per_sm", base.threads_per_sm),
                          f"{place}.threads_per_sm", WARP_SIZE, MAX_THREADS_PER_SM), ways,
                   order,
                   base.source + (" (with overrides)" if custom else ""))


# ---------------------------------------------------------------- the L2


@dataclass(frozen=True)
class CacheCounts:
    """What the L2 model saw: load sectors hit and missed, store sectors, DRAM bytes."""

    load_hits: int
    load_misses: int
    store_sectors: int
    dram_read_bytes: int
    dram_write_bytes: int


def cache_engine(touches: int, nsets: int) -> str:
    """Line touches of a kernel's first run (all of them when fewer than a batch) and the L2's
    sets -> the engine that runs them: "numba" (cache_jit's compiled loop) when numba imports,
    the kernel has at least JIT_MIN_TOUCHES touches and at most JIT_MAX_SETS sets, else
    "numpy" (the rounds). SECTORVIZ_CACHE_ENGINE=numpy|numba forces one (numba at any size,
    still only up to JIT_MAX_SETS sets; PatternError naming the variable for another value, or
    numba when it does not import); both give the same counts."""
    forced = os.environ.get(ENGINE_VARIABLE, "")
    if forced not in ("", "numpy", "numba"):
        raise PatternError(ENGINE_VARIABLE, f"expected numpy or numba, got {forced!r}")
    if forced == "numpy" or nsets > JIT_MAX_SETS or (not forced and touches < JIT_MIN_TOUCHES):
        return "numpy"
    if cache_jit.available():
        return "numba"
    if forced:
        raise PatternError(ENGINE_VARIABLE, "numba is asked for but does not import; install "
                                            "it with pip install sectorviz[fast]")
    return "numpy"


class L2:
    """The L2 of the module's doc. `touch(lines, masks, kinds)` takes line touches in order:
    line ids, 4-bit masks of the line's sectors the request touches (bit i: sector 4L + i),
    and kinds (LOAD, STORE or both); `finish()` ends the kernel; then `counts()`.

    Vectorized by rounds: touches are buffered, then each set's touches run in rounds of at
    most `ways` of them. Within a round a line touched again hits (fewer than `ways` lines
    came between); a line's first touch in the round hits when it was resident with rank r
    (lines more recent than it) and r + (lines first touched in the round before it that
    were less recent than it, or absent) < ways -- LRU keeps the `ways` most recently used
    lines of a set. Each line has one residency per round (it can only miss at its first
    touch), so valid and dirty bits follow from prefix ORs; after the round a set keeps its
    `ways` most recent lines and the others write back their dirty sectors.

    The first run picks the engine (cache_engine): with "numba" every run goes through
    cache_jit's per-touch loop instead of the rounds, and `line`, `valid`, `dirty` stay empty
    (`resident()` reads either)."""

    def __init__(self, l2_bytes: int, ways: int = 0):
        lines = l2_bytes // LINE_BYTES
        self.ways = ways or lines
        self.nsets = lines // self.ways
        self.batch = BATCH_TOUCHES  # touches buffered before a run of rounds
        self._held = 0  # bytes of resident-line state reserved from the run's memory cap
        empty = np.zeros(0, dtype=np.int64)
        # resident lines, least recently used first: line, last use, valid and dirty bits
        self.line, self.time, self.valid, self.dirty = empty, empty, empty, empty
        self.clock = 0  # touches so far: a touch's time
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._count = 0
        self.hits = self.misses = self.stored = self.written = 0
        self.engine: str | None = None  # chosen at the first run
        self._jit: cache_jit.JitLRU | None = None

    def touch(self, lines: ArrayLike, masks: ArrayLike, kinds: ArrayLike) -> None:
        """Line touches in order (sequences or arrays of ints), see the class doc."""
        line, mask, kind = (np.asarray(a, dtype=np.int64).ravel() for a in (lines, masks, kinds))
        self._pending.append((line, mask, kind))
        self._count += len(line)
        if self._count >= self.batch:
            self._run()

    def finish(self) -> None:
        """End of the kernel: every dirty sector is written back (lines stay resident)."""
        self._run()
        if self._jit is not None:
            self.written += int(_POPS[self._jit.write_back()].sum())
        self.written += int(_POPS[self.dirty].sum())
        self.dirty = np.zeros_like(self.dirty)

    def resident(self) -> np.ndarray:
        """The resident lines' ids, least recently used first."""
        return self.line if self._jit is None else self._jit.resident()[0]

    def counts(self) -> CacheCounts:
        return CacheCounts(self.hits, self.misses, self.stored, self.misses * SECTOR_BYTES,
                           self.written * SECTOR_BYTES)

    def _run(self) -> None:
        """The buffered touches, round by round."""
        if not self._count:
            return
        line, mask, kind = (np.concatenate(a) for a in zip(*self._pending))
        self._pending.clear()
        self._count = 0
        if self.engine is None:
            self.engine = cache_engine(len(line), self.nsets)
        if self.engine == "numba":
            self._run_jit(line, mask, kind)
            return
        t = self.clock + np.arange(len(line), dtype=np.int64)
        self.clock += len(line)
        if self.nsets == 1:  # rounds are runs of `ways` touches
            sets = np.zeros(len(line), dtype=np.int64)
            pieces: list[slice] | list[np.ndarray] = [
                slice(lo, lo + self.ways) for lo in range(0, len(line), self.ways)]
        else:
            sets = line % self.nsets
            by_set = stable_order(sets)
            counts = np.bincount(sets, minlength=self.nsets)
            starts = np.cumsum(counts) - counts
            rnd = np.empty(len(line), dtype=np.int64)
            rnd[by_set] = (np.arange(len(line)) - starts[sets[by_set]]) // self.ways
            order = by_set[stable_order(rnd[by_set])]  # by round, then set, then time
            pieces = np.split(order, np.flatnonzero(np.diff(rnd[order])) + 1)
        charge(len(pieces) * ROUND_UNITS + len(line) * TOUCH_UNITS, "the cache simulation",
               "machine")
        for piece in pieces:
            self._round(line[piece], mask[piece], kind[piece], t[piece], sets[piece])

    def _run_jit(self, line: np.ndarray, mask: np.ndarray, kind: np.ndarray) -> None:
        """The buffered touches through the compiled loop, its slots held against the cap."""
        if self._jit is None:
            self._jit = cache_jit.JitLRU(self.nsets * self.ways, self.ways, self.nsets)
        charge(len(line) * TOUCH_UNITS, "the cache simulation", "machine")
        slots = self._jit.slots_for(len(line))
        more = self._jit.nbytes(slots) - self._held
        if more > 0:
            reserve(more, f"the cache model's {slots:,} line slots", "machine")
            self._held += more
        hits, misses, stored, written = self._jit.run(line, mask, kind, self.clock)
        self.clock += len(line)
        self.hits += hits
        self.misses += misses
        self.stored += stored
        self.written += written

    def _round(self, line: np.ndarray, mask: np.ndarray, kind: np.ndarray, t: np.ndarray,
               sets: np.ndarray) -> None:
        """One round: touches sorted by (set, time), at most `ways` per set."""
        by_line = stable_order(line)  # a line's touches share a set: time order
        resident, at, rank = self._lookup(line, by_line)
        head = np.ones(len(line), dtype=bool)  # in line order: a line's first touch
        head[1:] = line[by_line][1:] != line[by_line][:-1]
        first = np.zeros(len(line), dtype=bool)
        first[by_line] = head
        hit = _line_hits(first, resident, rank, sets, self.ways, self.nsets)
        # one residency per line in the round: carried over when its first touch hits
        heads = np.flatnonzero(head)
        carried, old, was = hit[by_line][heads], at[by_line][heads], resident[by_line][heads]
        valid0 = np.where(carried, self.valid[old] if len(self.valid) else 0, 0)
        dirty0 = np.where(carried, self.dirty[old] if len(self.dirty) else 0, 0)
        self.written += int(_POPS[self.dirty[old[was & ~carried]]].sum())  # evicted earlier
        valid, dirty = self._sectors(mask[by_line], kind[by_line], head, valid0, dirty0)
        last = by_line[np.append(heads[1:], len(line)) - 1]  # each line's last touch
        group = np.full(len(line), -1)
        group[last] = np.arange(len(heads))
        recent = group[group >= 0]  # lines by last touch: touches are in time order in a set
        if self.nsets > 1:
            recent = recent[stable_order(t[last][recent])]
        untouched = np.ones(len(self.line), dtype=bool)
        untouched[old[was]] = False
        new_line, new_time, new_valid, new_dirty = (
            a[recent] for a in (line[by_line][heads], t[last], valid, dirty))
        self._keep(new_line, new_time, new_valid, new_dirty, untouched)

    def _lookup(self, line: np.ndarray, by_line: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Touched lines (and the order that sorts them) -> (resident, index in the state,
        rank in its set; `ways` when not resident)."""
        if not len(self.line):
            return (np.zeros(len(line), dtype=bool), np.zeros(len(line), dtype=np.int64),
                    np.full(len(line), self.ways, dtype=np.int64))
        by_old = stable_order(self.line)
        known = self.line[by_old]
        at = np.empty(len(line), dtype=np.int64)  # sorted needles: a faster search
        at[by_line] = np.minimum(np.searchsorted(known, line[by_line]), len(known) - 1)
        resident = known[at] == line
        at = by_old[at]
        rank = _rank_in_set(self.line % self.nsets, self.nsets)[at]
        return resident, at, np.where(resident, rank, self.ways)

    def _sectors(self, mask: np.ndarray, kind: np.ndarray, head: np.ndarray, valid0: np.ndarray,
                 dirty0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A round's touches grouped by line (a group starts where `head`; its line starts
        with valid and dirty bits valid0, dirty0) -> counts added; each line's valid and
        dirty bits at the end."""
        heads = np.flatnonzero(head)
        group = np.cumsum(head) - 1
        seen = valid0[group] | _or_before(mask, heads, group)
        loads = np.where((kind & LOAD) != 0, mask, 0)
        missed = _POPS[loads & ~seen].sum()
        self.misses += int(missed)
        self.hits += int(_POPS[loads].sum() - missed)
        stores = np.where((kind & STORE) != 0, mask, 0)
        self.stored += int(_POPS[stores].sum())
        return (valid0 | np.bitwise_or.reduceat(mask, heads),
                dirty0 | np.bitwise_or.reduceat(stores, heads))

    def _keep(self, line: np.ndarray, time: np.ndarray, valid: np.ndarray, dirty: np.ndarray,
              untouched: np.ndarray) -> None:
        """The new state: untouched resident lines and the round's lines (by last use);
        each set keeps its `ways` most recent, the others write back their dirty sectors."""
        parts = [np.concatenate((old[untouched], new)) for old, new in (
            (self.line, line), (self.time, time), (self.valid, valid), (self.dirty, dirty))]
        merged = np.argsort(parts[1], kind="stable")  # two runs in time order: merged
        line, time, valid, dirty = (a[merged] for a in parts)
        keep = _rank_in_set(line % self.nsets, self.nsets) < self.ways
        self.written += int(_POPS[dirty[~keep]].sum())
        self.line, self.time, self.valid, self.dirty = (
            a[keep] for a in (line, time, valid, dirty))
        if len(self.line) * LINE_STATE_BYTES > self._held:
            more = len(self.line) * LINE_STATE_BYTES - self._held
            reserve(more, f"the cache model's {len(self.line):,} resident lines", "machine")
            self._held += more


def _line_hits(first: np.ndarray, resident: np.ndarray, rank: np.ndarray, sets: np.ndarray,
               ways: int, nsets: int) -> np.ndarray:
    """A round's touches (sorted by set, then time) -> whether each finds its line
    resident: a repeat in the round always does; a first touch when its rank plus the lines
    first touched before it in the round that were less recent (or absent) is below `ways`.
    Bounds decide most first touches; the rest are counted exactly (_above)."""
    if nsets == 1:
        set_start = np.zeros(len(sets), dtype=np.int64)
    else:  # the index of the set's first touch
        starts = np.ones(len(sets), dtype=bool)
        starts[1:] = sets[1:] != sets[:-1]
        set_start = np.maximum.accumulate(np.where(starts, np.arange(len(sets)), 0))
    before_all = _before_in_set(first, set_start)
    before_new = _before_in_set(first & ~resident, set_start)
    hit = ~first | (resident & (rank + before_all < ways))
    unsure = np.flatnonzero(first & resident & ~hit & (rank + before_new < ways))
    if len(unsure):
        above = _above(first & resident, rank, unsure, set_start, ways)
        hit[unsure] = rank[unsure] + before_new[unsure] + above < ways
    return np.asarray(hit, dtype=bool)


def _above(points: np.ndarray, rank: np.ndarray, at: np.ndarray, set_start: np.ndarray,
           ways: int) -> np.ndarray:
    """For each index in `at`: how many `points` (flags) before it in its set in the round
    have a greater rank. A round holds at most `ways` touches of a set: with few ways the ways - 1
    touches before each are compared directly, else by _prefix_greater."""
    if ways <= WINDOW_WAYS:
        out = np.zeros(len(at), dtype=np.int64)
        for back in range(1, ways):
            j = np.maximum(at - back, 0)
            out += (at - back >= set_start[at]) & points[j] & (rank[j] > rank[at])
        return out
    where = np.flatnonzero(points)
    r = rank[where]
    above: np.ndarray = (_prefix_greater(r, np.searchsorted(where, at), rank[at])
                         - _prefix_greater(r, np.searchsorted(where, set_start[at]), rank[at]))
    return above


def _rank_in_set(sets: np.ndarray, nsets: int) -> np.ndarray:
    """The sets of lines in order of last use (least recent first) -> how many lines of the
    same set were used later."""
    if nsets == 1:
        return np.arange(len(sets) - 1, -1, -1, dtype=np.int64)
    order = stable_order(sets)
    counts = np.bincount(sets, minlength=nsets)
    starts = np.cumsum(counts) - counts
    rank = np.empty(len(sets), dtype=np.int64)
    in_set = sets[order]
    rank[order] = counts[in_set] - 1 - (np.arange(len(sets)) - starts[in_set])
    return rank


def _before_in_set(flags: np.ndarray, set_start: np.ndarray) -> np.ndarray:
    """Flags sorted by set -> how many flags come before each entry in its set."""
    before = np.cumsum(flags) - flags
    counts: np.ndarray = before - before[set_start]
    return counts


def _or_before(masks: np.ndarray, heads: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Masks in groups starting at `heads` -> OR of the masks before each one in its group."""
    out = np.zeros(len(masks), dtype=np.int64)
    for bit in range(SECTORS_PER_LINE):
        on = (masks >> bit) & 1
        before = np.cumsum(on) - on
        out |= ((before - before[heads][group]) > 0).astype(np.int64) << bit
    return out


def stable_order(*keys: np.ndarray) -> np.ndarray:
    """Non-negative integer keys, the last primary (as np.lexsort takes them) -> the stable
    order that sorts by them, by 16-bit least-significant-digit passes: numpy sorts 16-bit
    keys by radix, a few times faster than a comparison sort of 64-bit ones on random keys.
    A key in few ascending runs (streams of lines) is merged by numpy's own stable sort, and
    a key already in order costs one comparison pass: every way gives the same order."""
    order = np.arange(len(keys[0]), dtype=np.int64)
    for key in keys:
        key = key[order]
        descents = np.count_nonzero(key[1:] < key[:-1])
        if descents == 0:
            continue
        if descents * RUN_LENGTH < len(key):
            order = order[np.argsort(key, kind="stable")]
            continue
        top = int(key.max())
        for shift in range(0, top.bit_length(), 16):
            step = np.argsort((key >> shift).astype(np.uint16), kind="stable")
            order, key = order[step], key[step]
    return order


def _prefix_greater(values: np.ndarray, ends: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """#{k < ends[i] : values[k] > limits[i]} for each i (values, limits in [0, 2^31)), by
    the blocks of a merge-sort tree: one sort and two searches per power of two."""
    out = np.zeros(len(ends), dtype=np.int64)
    index = np.arange(len(values), dtype=np.int64)
    level = 0
    while (1 << level) <= len(values):
        keys = ((index >> level) << 32) | values
        order = np.argsort(keys, kind="stable")  # merges the sorted runs of the level below
        index, values, keys = index[order], values[order], keys[order]
        block = (ends >> level) - 1  # the block of this size in [0, end), if bit level is set
        has = ((ends >> level) & 1) == 1
        top = np.searchsorted(keys, (block + 1) << 32)
        low = np.searchsorted(keys, (block << 32) | limits, side="right")
        out += np.where(has, top - low, 0)
        level += 1
    return out


def line_touches(sectors: np.ndarray, request: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sector ids in request order (each request's distinct sectors ascending) and the
    request each belongs to -> (lines, 4-bit sector masks, index of the first entry) of one
    touch per (request, line), in order."""
    if not len(sectors):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    lines = sectors >> 2
    bits = np.left_shift(1, sectors & 3)
    new = np.ones(len(sectors), dtype=bool)
    new[1:] = (lines[1:] != lines[:-1]) | (request[1:] != request[:-1])
    starts = np.flatnonzero(new)
    return lines[starts], np.bitwise_or.reduceat(bits, starts), starts


# ---------------------------------------------------------------- a run


@dataclass(frozen=True)
class CacheResult:
    """A kernel's run through the model: the machine, its assumptions and the counts."""

    machine: Machine
    assumption: str
    counts: CacheCounts

    @property
    def time_floor_s(self) -> float:
        """Seconds the DRAM bytes (read + written) take at least at peak bandwidth."""
        return time_floor(self.counts.dram_read_bytes + self.counts.dram_write_bytes,
                          self.machine)

    def boundary_rows(self) -> tuple[tuple[str, int, int, str, str], ...]:
        """(name, bytes, sectors, assumption, metric) of the L2 -> DRAM reads and writes."""
        c, m = self.counts, self.machine
        read, written = c.load_misses, c.dram_write_bytes // SECTOR_BYTES
        return (
            ("L2 -> DRAM reads, cache model", c.dram_read_bytes, read,
             f"estimate, not a bound: load sectors that miss in the model ({c.load_hits:,} "
             f"hit, {c.load_misses:,} missed; {L2_READ_HITS}, {L2_READ_MISSES}); "
             f"{floor_words(c.dram_read_bytes, m)}; model: {m.name}, {m.order} order (the "
             "cache model row states it)", DRAM_READ),
            ("L2 -> DRAM writes, cache model", c.dram_write_bytes, written,
             f"estimate, not a bound: dirty sectors written back on eviction and at the end "
             f"({c.store_sectors:,} sectors stored); {floor_words(c.dram_write_bytes, m)}",
             DRAM_WRITE),
        )

    def to_json(self) -> dict[str, Any]:
        c = self.counts
        return {"machine": self.machine.name, "l2_bytes": self.machine.l2_bytes,
                "ways": self.machine.ways, "order": self.machine.order,
                "l2_sector_hits": c.load_hits, "l2_sector_misses": c.load_misses,
                "dram_read_bytes": c.dram_read_bytes, "dram_write_bytes": c.dram_write_bytes,
                "time_floor_s": self.time_floor_s}


def time_floor(nbytes: int, m: Machine) -> float:
    """Bytes -> the seconds they take at least at the machine's peak DRAM bandwidth."""
    return nbytes / m.dram_bytes_per_s


def time_text(seconds: float) -> str:
    """Seconds -> '11 us', '2.5 ms' (a lower bound's words)."""
    for unit, size in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def floor_words(nbytes: int, m: Machine) -> str:
    """'at 3.35 TB/s these take at least 11 us (a lower bound, not a runtime)'."""
    return (f"at {m.dram_bytes_per_s / 1e12:.3g} TB/s these take at least "
            f"{time_text(time_floor(nbytes, m))} (a lower bound, not a runtime)")


def simulation(m: Machine | None, kernel: FrontEnd, sector_bytes: int) -> "Simulation | None":
    """A kernel's (Launch's) simulation on machine `m`; None without a machine. The model
    counts 32-byte sectors: another sector size is refused."""
    if m is None:
        return None
    if sector_bytes != SECTOR_BYTES:
        raise PatternError("machine", f"the cache model counts {SECTOR_BYTES}-byte sectors; "
                                      f"this pattern has sector_bytes {sector_bytes}")
    return Simulation(m, kernel.warps_per_block, kernel.threads_per_block)


class Simulation:
    """Requests of a kernel fed in chunks of whole warps (whole waves for "waves"), put in
    the machine's execution order at each chunk's end and run through the L2.

    `add(lo, op, width, address, active)` takes one execution of one instruction by warps
    [lo, lo + rows) of the chunk (a Batch's (rows, 32) byte addresses and active lanes);
    `flush()` runs the chunk; `result()` ends the kernel."""

    def __init__(self, m: Machine, warps_per_block: int, threads_per_block: int):
        self.machine = m
        self.wave_warps = m.wave_blocks(threads_per_block) * warps_per_block
        self.assumption = m.describe(threads_per_block)
        self.l2 = L2(m.l2_bytes, m.ways)
        self._parts: list[tuple[np.ndarray, ...]] = []
        self._seq_next = np.zeros(0, dtype=np.int64)  # chunk's warp -> requests so far
        self._lo = 0  # the chunk's first warp
        self._buffered = self._held = 0  # bytes of requests buffered, bytes reserved

    def chunk_warps(self, warps: int) -> int:
        """Warps per chunk near `warps`, in whole waves for the "waves" order."""
        if self.machine.order == "warp-serial":
            return warps
        return max(1, warps // self.wave_warps) * self.wave_warps

    def add(self, lo: int, op: str, width: int, address: np.ndarray,
            active: np.ndarray) -> None:
        """One execution by warps [lo, lo + rows): each row with an active lane is a request."""
        rows = active.shape[0]
        if lo + rows - self._lo > len(self._seq_next):
            grown = np.zeros(lo + rows - self._lo, dtype=np.int64)
            grown[:len(self._seq_next)] = self._seq_next
            self._seq_next = grown
        address = np.broadcast_to(address, active.shape)
        ids, k = touched_sector_ids(address, width, SECTOR_BYTES)
        on = np.repeat(active, k, axis=1) if k > 1 else active
        ids = np.where(on, ids, _INACTIVE)
        ids.sort(axis=1)
        keep = ids != _INACTIVE
        keep[:, 1:] &= ids[:, 1:] != ids[:, :-1]
        requested = np.flatnonzero(active.any(axis=1))
        slot = lo - self._lo + requested
        seq = self._seq_next[slot].copy()
        self._seq_next[slot] += 1
        kept = keep[requested]
        per = kept.sum(axis=1)
        self._parts.append((lo + requested, seq, np.full(len(requested), OP_KINDS[op]),
                            ids[requested][kept], per))
        self._hold(sum(a.nbytes for a in self._parts[-1]))

    def _hold(self, nbytes: int) -> None:
        """Reserve memory as the chunk's buffered requests pass their largest size so far."""
        self._buffered += nbytes
        if self._buffered * 3 > self._held:  # sorting takes about twice the buffer again
            reserve(self._buffered * 3 - self._held, "the requests buffered for the cache "
                                                     "simulation", "machine")
            self._held = self._buffered * 3

    def flush(self, hi: int) -> None:
        """Run the chunk's requests (warps up to `hi`) through the L2 in execution order."""
        if self._parts:
            warp, seq, kind, sectors, per = (np.concatenate(a) for a in zip(*self._parts))
            if self.machine.order == "warp-serial":
                order = stable_order(seq, warp)
            else:
                order = stable_order(warp, seq, warp // self.wave_warps)
            starts = np.concatenate(([0], np.cumsum(per)[:-1]))
            # every entry of request r, in request order
            entry = (np.repeat(starts[order] - np.cumsum(np.concatenate(([0], per[order][:-1]))),
                               per[order]) + np.arange(int(per.sum())))
            request = np.repeat(np.arange(len(order)), per[order])
            lines, masks, first = line_touches(sectors[entry], request)
            self.l2.touch(lines, masks, kind[order][request[first]])
        self._parts.clear()
        self._buffered = 0
        self._seq_next = np.zeros(0, dtype=np.int64)
        self._lo = hi

    def result(self) -> CacheResult:
        """End of the kernel: write back dirty sectors -> the result."""
        self.l2.finish()
        return CacheResult(self.machine, self.assumption, self.l2.counts())
