"""What an analysis returns: immutable values of sector demand per instruction, in total and
at each named boundary (bytes for *_bytes, sectors of `sector_bytes` bytes for *sectors)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cache import CacheResult
from .kernel import InstructionNamed
from .shared_stats import SharedInstructionStats, SharedStats

if TYPE_CHECKING:
    from .local_stats import LocalInstructionStats


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

    def to_json(self) -> dict[str, Any]:
        """The JSON figures: the fields, with `sector_size` the granularity (bytes) and
        `sector_bytes` the sector traffic in bytes (sectors x sector size)."""
        doc = asdict(self)
        doc["sector_size"] = doc.pop("sector_bytes")
        doc["sector_bytes"] = self.sector_traffic_bytes
        return doc


@dataclass(frozen=True)
class InstructionStats(InstructionNamed, Stats):
    """Accounting of one instruction, with the instruction's name and place."""


@dataclass(frozen=True)
class Boundary:
    """Traffic at a named boundary (bytes, sectors), with the assumption it rests on and the
    metric that measures it."""

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
    local: tuple["LocalInstructionStats", ...] = ()  # per-thread local memory, once complete

    def to_json(self) -> dict[str, Any]:
        """The `--json` document: `sector_size` (bytes), `instructions` (a list), `totals`
        (both with `sector_size` and `sector_bytes` = sectors x sector size), `boundaries`,
        `constant` (reads of __constant__ arrays); `shared` and `shared_totals` (banks);
        `local` (per-thread local memory: requests and sectors per instruction)."""
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
            "local": [asdict(s) for s in self.local],
        } | ({"cache": self.cache.to_json()} if self.cache is not None else {})
