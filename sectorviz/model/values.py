"""The immutable values the views are drawn from, besides the Analysis (results.py): a
pattern's Listing (listing.py computes it) and one warp's details (one_warp.py computes them).

Scenes (sectorviz.scene) are pure functions of these, an Analysis and a view spec: the
Listing gives them the instructions of each space (name, op, array, width in bytes per lane,
source place), the arrays' placement (byte addresses, tile shape), the launch's warps and
threads, the engine's reading and which instructions take their index from an array's values
(gathers and scatters); the details give each lane's addresses (bytes), sectors and, for
shared memory, the bank wavefronts of each execution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .errors import PatternError
from .kernel import Batch, Instruction, ResolvedArray
from .pattern import suggest

#: the values a view is drawn from, with the front ends' Instruction, Batch and ResolvedArray
__all__ = ["Batch", "Instruction", "LaneExecution", "Listing", "ResolvedArray",
           "SharedWarpDetail", "WarpDetail", "WarpDetails"]


@dataclass(frozen=True)
class Listing:
    """A pattern's instructions per space and what their labels need: `sector_bytes` (bytes
    per sector), `warps` and `threads` (blocks x threads per block) of the launch, `arrays` by
    name, `reading` (the engine's words, None for a pattern of accesses) and `gathers`, the
    (space, index) of each instruction whose index is read from an array's values."""

    name: str
    sector_bytes: int
    warps: int
    threads: int
    instructions: tuple[Instruction, ...]
    shared_instructions: tuple[Instruction, ...]
    constant_instructions: tuple[Instruction, ...]
    local_instructions: tuple[Instruction, ...]
    arrays: Mapping[str, ResolvedArray]
    reading: str | None
    gathers: frozenset[tuple[str, int]]

    def index(self, key: int | str, space: str = "global") -> int:
        """An instruction by 0-based index or by name -> its index among the `space` ones
        ("global", "shared", or "all": the global ones, then the shared ones, as the app
        counts); PatternError if there is none."""
        listed = {"global": self.instructions, "shared": self.shared_instructions,
                  "all": self.instructions + self.shared_instructions}[space]
        names = [ins.name for ins in listed]
        if isinstance(key, str) and not key.lstrip("-").isdigit():
            if key in names:
                return names.index(key)
            raise PatternError("instruction",
                               f"no instruction named {key!r}" + suggest(key, names))
        k = int(key)
        if not 0 <= k < len(names):
            raise PatternError("instruction", f"instruction {k} outside [0, {len(names)})")
        return k


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


@dataclass(frozen=True)
class SharedWarpDetail:
    """A warp's shared-memory executions: the lanes that have a thread, each shared
    instruction's executions (Batch rows of one warp: byte offsets in the block's shared
    memory) in program order, and the bank wavefronts of each of those executions."""

    warp: int
    valid: np.ndarray
    executions: tuple[tuple[Batch, ...], ...]
    wavefronts: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class WarpDetails:
    """One warp's global and shared detail as a view shows them, each or the error (text)
    that stopped it; `shared` is None for a kernel without shared instructions."""

    warp: int
    detail: WarpDetail | str
    shared: SharedWarpDetail | str | None
