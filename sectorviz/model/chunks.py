"""How a run cuts the grid into chunks of warps: a memory cap (bytes) -> lanes per chunk,
[lo, hi) warp ranges, and the per-lane limits that keep one chunk's arrays bounded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from .errors import PatternError
from .sectors import WARP_SIZE

if TYPE_CHECKING:
    from .frontend import FrontEnd

CHUNK_LANES = 2**18  # lanes per chunk at the default memory cap (see chunk_lanes)
CHUNK_SHARE = 16  # a chunk's arrays take at most 1/CHUNK_SHARE of the run's memory cap
LANE_BYTES = 384  # bytes a chunk holds per lane: addresses, masks, coordinates, sector ids
MAX_LANE_SECTORS = CHUNK_LANES // WARP_SIZE  # sectors one lane may touch: a warp fills a chunk
CLOSED_CHUNKS = 32  # a front end's closed forms take this many lane-path chunks at a time


def check_widths(kernel: FrontEnd, sector_bytes: int) -> None:
    """Refuse, before allocating, an instruction whose elements are so wide (bytes) that one
    warp's sector ids (up to width / sector_bytes + 1 per lane) would not fit in a chunk."""
    for ins in kernel.instructions:
        most = -(-ins.width // sector_bytes) + 1
        if most > MAX_LANE_SECTORS:
            raise PatternError(f"arrays.{ins.array}.dtype",
                               f"{ins.width}-byte elements touch up to {most} sectors per lane; "
                               f"sectorviz counts at most {MAX_LANE_SECTORS}")


def chunk_lanes(memory: int) -> int:
    """A run's memory cap (bytes) -> lanes per chunk of warps (CHUNK_LANES at the default)."""
    return max(WARP_SIZE, memory // CHUNK_SHARE // LANE_BYTES)


def warp_chunks(total: int, warps_per_chunk: int, start: int = 0) -> Iterator[tuple[int, int]]:
    """[lo, hi) ranges of at most warps_per_chunk warps covering [start, start + total)."""
    for lo in range(start, start + total, warps_per_chunk):
        yield lo, min(start + total, lo + warps_per_chunk)
