"""Named boundaries: an analysis's per-instruction and total sectors -> the traffic (bytes,
sectors) at the L1 request side and below L1, each with its assumption and Nsight metric."""

from __future__ import annotations

from .cache import CacheResult, floor_words
from .metrics import (ATOM_REQUESTS, ATOM_SECTORS, DRAM_BYTES, L2_SECTORS, LOAD_REQUESTS,
                      LOAD_SECTORS, RED_REQUESTS, RED_SECTORS, STORE_REQUESTS, STORE_SECTORS)
from .results import Boundary, InstructionStats, Stats


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
