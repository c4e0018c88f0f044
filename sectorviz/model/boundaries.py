"""Named boundaries: an analysis's per-instruction and total sectors -> the traffic (bytes,
sectors) at the L1 request side and below L1, each with its assumption and Nsight metric."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .cache import CacheResult, floor_words
from .metrics import (
    ATOM_REQUESTS,
    ATOM_SECTORS,
    DRAM_BYTES,
    L2_SECTORS,
    LOAD_REQUESTS,
    LOAD_SECTORS,
    LOCAL_LOAD_SECTORS,
    LOCAL_STORE_SECTORS,
    RED_REQUESTS,
    RED_SECTORS,
    STORE_REQUESTS,
    STORE_SECTORS,
)
from .results import Analysis, Boundary, InstructionStats, Stats

if TYPE_CHECKING:
    from .local_stats import LocalInstructionStats


def with_assumptions(text: str, assumptions: tuple[str, ...]) -> str:
    """`text` and the front end's assumptions after it, as one piece of prose: a clause
    ('collectives of ... are not counted') after '; ', a sentence (ending in '.') after a
    full stop, never both ('them.; ptxas')."""
    for a in assumptions:
        joint = " " if text.endswith(".") else ". " if a.endswith(".") else "; "
        text += joint + a
    return text


def boundaries(instructions: tuple[InstructionStats, ...], totals: Stats, sb: int,
               assumptions: tuple[str, ...] = (),
               cache: CacheResult | None = None) -> tuple[Boundary, ...]:
    """The named boundaries; `assumptions` (the front end's, e.g. about per-thread arrays)
    are added to the request side's. Atomics and reductions get their own request-side
    boundary when the kernel has them; a cache model's estimate sits between the bounds,
    which then carry their time floors too."""
    def floor(n: int) -> str:
        return f"; {floor_words(n * sb, cache.machine)}" if cache is not None else ""

    def side(op: str) -> int:
        return sum(s.sectors for s in instructions if s.op == op)

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
                 with_assumptions("every warp load instruction's distinct sectors, counted per "
                                  f"request (requests: {LOAD_REQUESTS})", assumptions),
                 LOAD_SECTORS),
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


def local_boundaries(local: tuple["LocalInstructionStats", ...], sb: int
                     ) -> tuple[Boundary, ...]:
    """The local-memory boundary rows (loads, stores) of a kernel that has local accesses."""
    rows = []
    for op, metric in (("load", LOCAL_LOAD_SECTORS), ("store", LOCAL_STORE_SECTORS)):
        mine = [s for s in local if s.op == op]
        if mine:
            n = sum(s.sectors for s in mine)
            requests = sum(s.requests for s in mine)
            rows.append(Boundary(
                f"L1 request side, local {op}s", n * sb, n,
                f"every warp local {op} instruction's distinct sectors ({requests:,} "
                "requests), per-thread words interleaved across the warp's lanes; these "
                "usually hit in L1, and the bounds below L1 count global accesses only",
                metric))
    return tuple(rows)


def with_local(analysis: Analysis) -> Analysis:
    """`analysis` with its local-memory rows among the request-side boundaries."""
    rows = local_boundaries(analysis.local, analysis.sector_bytes)
    if not rows:
        return analysis
    bounds = analysis.boundaries
    below = next((i for i, b in enumerate(bounds) if b.name.startswith("below L1")), len(bounds))
    return replace(analysis, boundaries=bounds[:below] + rows + bounds[below:])
