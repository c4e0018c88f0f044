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

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .budget import charge, reserve
from .errors import PatternError
from .sectors import WARP_SIZE, touched_sector_ids

SECTOR_BYTES = 32
LINE_BYTES = 128
SECTORS_PER_LINE = LINE_BYTES // SECTOR_BYTES
ORDERS = ("warp-serial", "waves")
MAX_BLOCKS_PER_SM = 32
MIB = 2**20
TOUCH_UNITS = 8  # work units per line touch simulated (about 0.3 us in the Python loop)
LOAD, STORE = 1, 2
OP_KINDS = {"load": LOAD, "store": STORE, "atom": LOAD | STORE, "red": LOAD | STORE}
_POP = [bin(m).count("1") for m in range(16)]
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


def _whole(value: Any, place: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise PatternError(place, f"expected an integer of at least {low}, got {value!r}")
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
    l2 = _whole(spec.get("l2_bytes", base.l2_bytes), f"{place}.l2_bytes", LINE_BYTES)
    ways = _whole(spec.get("ways", 0), f"{place}.ways", 0)
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
    return Machine(name, _whole(spec.get("sms", base.sms), f"{place}.sms", 1), l2,
                   float(bandwidth),
                   _whole(spec.get("threads_per_sm", base.threads_per_sm),
                          f"{place}.threads_per_sm", WARP_SIZE), ways, order,
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


class L2:
    """The L2 of the module's doc. `touch(lines, masks, kinds)` runs line touches in order:
    line ids, 4-bit masks of the line's sectors the request touches (bit i: sector 4L + i),
    and kinds (LOAD, STORE or both); `counts()` after `finish()` is the result."""

    def __init__(self, l2_bytes: int, ways: int = 0):
        lines = l2_bytes // LINE_BYTES
        self.ways = ways or lines
        self.nsets = lines // self.ways
        # line -> valid bits | dirty bits << 4, least-recent first
        self.sets: list[OrderedDict[int, int]] = [OrderedDict() for _ in range(self.nsets)]
        self.hits = self.misses = self.stored = self.written = 0

    def touch(self, lines, masks, kinds) -> None:
        """Line touches in order (sequences or arrays of ints), see the class doc."""
        sets, nsets, ways, pop = self.sets, self.nsets, self.ways, _POP
        hits = misses = stored = written = 0
        for line, mask, kind in zip(_ints(lines), _ints(masks), _ints(kinds)):
            lru = sets[line % nsets]
            state = lru.pop(line, None)
            if state is None:
                state = 0
                if len(lru) >= ways:
                    written += pop[lru.popitem(last=False)[1] >> 4]
            if kind & LOAD:
                missed = mask & ~state
                misses += pop[missed]
                hits += pop[mask] - pop[missed]
            if kind & STORE:
                stored += pop[mask]
                state |= mask | mask << 4
            else:
                state |= mask
            lru[line] = state
        self.hits += hits
        self.misses += misses
        self.stored += stored
        self.written += written

    def finish(self) -> None:
        """End of the kernel: every dirty sector is written back (lines stay resident)."""
        for lru in self.sets:
            for line, state in lru.items():
                self.written += _POP[state >> 4]
                lru[line] = state & 15

    def counts(self) -> CacheCounts:
        return CacheCounts(self.hits, self.misses, self.stored, self.misses * SECTOR_BYTES,
                           self.written * SECTOR_BYTES)


def _ints(values) -> list[int]:
    return values.tolist() if isinstance(values, np.ndarray) else list(values)


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

    def to_json(self) -> dict:
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


def simulation(m: Machine | None, kernel, sector_bytes: int) -> "Simulation | None":
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
                order = np.lexsort((seq, warp))
            else:
                order = np.lexsort((warp, seq, warp // self.wave_warps))
            starts = np.concatenate(([0], np.cumsum(per)[:-1]))
            # every entry of request r, in request order
            entry = (np.repeat(starts[order] - np.cumsum(np.concatenate(([0], per[order][:-1]))),
                               per[order]) + np.arange(int(per.sum())))
            request = np.repeat(np.arange(len(order)), per[order])
            lines, masks, first = line_touches(sectors[entry], request)
            charge(len(lines) * TOUCH_UNITS, "the cache simulation", "machine")
            self.l2.touch(lines, masks, kind[order][request[first]])
        self._parts.clear()
        self._buffered = 0
        self._seq_next = np.zeros(0, dtype=np.int64)
        self._lo = hi

    def result(self) -> CacheResult:
        """End of the kernel: write back dirty sectors -> the result."""
        self.l2.finish()
        return CacheResult(self.machine, self.assumption, self.l2.counts())
