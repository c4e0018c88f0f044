"""The immutable values the views are drawn from, besides the Analysis (results.py): a
pattern's Listing (listing.py computes it) and one warp's details (one_warp.py computes them).

Scenes (sectorviz.scene) are pure functions of these, an Analysis and a view spec: the
Listing gives them the instructions of each space (name, op, array, width in bytes per lane,
source place), the arrays' placement (byte addresses, tile shape), the launch's warps and
threads, the engine's reading and which instructions take their index from an array's values
(gathers and scatters); the details give each lane's addresses (bytes), sectors and, for
shared memory, the bank wavefronts of each execution; CompilerChanges what the compiler
changed against the source as written (compiler_changes.py computes them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence, TypeVar, overload

import numpy as np

from .errors import PatternError
from .kernel import Batch, Instruction, ResolvedArray
from .pattern import suggest
from .sectors import ideal_sectors

#: the values a view is drawn from, with the front ends' Instruction, Batch and ResolvedArray
__all__ = ["Batch", "Executions", "Instruction", "LaneExecution", "Lazy", "Listing",
           "ResolvedArray", "SharedWarpDetail", "WarpDetail", "WarpDetails"]

T = TypeVar("T")


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


class Lazy(Sequence[T]):
    """A sequence whose items are made when asked (`_at`), each index at most once per ask:
    one warp's executions of one instruction, in program order, or a figure of each."""

    def __init__(self, listed: Sequence[T] = ()):
        self._listed = tuple(listed)

    def __len__(self) -> int:
        return len(self._listed)

    def _at(self, i: int) -> T:
        """Item i, 0 <= i < len(self)."""
        return self._listed[i]

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        n = len(self)
        if isinstance(i, slice):
            return tuple(self._at(j) for j in range(*i.indices(n)))
        if not -n <= i < n:
            raise IndexError(f"execution {i} outside [0, {n})")
        return self._at(i + n if i < 0 else i)


class Executions(Lazy[LaneExecution]):
    """One global instruction's executions by one warp, listed (the lane path) or made when
    asked (one_warp.py, from closed forms), with their sums."""

    def sums(self, sector_bytes: int) -> tuple[int, int, int]:
        """(sectors, useful bytes, ideal sectors) summed over the executions."""
        return (sum(r.sectors for r in self), sum(r.useful_bytes for r in self),
                sum(ideal_sectors(r.useful_bytes, sector_bytes) for r in self))

    def sector_range(self, sector_bytes: int) -> tuple[int, int]:
        """(fewest, most) sectors one of the executions takes; (0, 0) for none."""
        counts = [r.sectors for r in self]
        return (min(counts), max(counts)) if counts else (0, 0)


@dataclass(frozen=True)
class WarpDetail:
    """A warp's lanes: thread and block coordinates, and each instruction's executions."""

    warp: int
    valid: np.ndarray
    thread: tuple[np.ndarray, np.ndarray, np.ndarray]
    block: tuple[int, int, int]
    executions: tuple[Executions, ...]  # per instruction, in program order


@dataclass(frozen=True)
class SharedWarpDetail:
    """A warp's shared-memory executions: the lanes that have a thread, each shared
    instruction's executions (Batch rows of one warp: byte offsets in the block's shared
    memory) in program order, and the bank wavefronts of each of those executions."""

    warp: int
    valid: np.ndarray
    executions: tuple[Lazy[Batch], ...]
    wavefronts: tuple[Lazy[int], ...]


@dataclass(frozen=True)
class WarpDetails:
    """One warp's global and shared detail as a view shows them, each or the error (text)
    that stopped it; `shared` is None for a kernel without shared instructions. `pending`:
    they are being worked out, and the texts say so (no error)."""

    warp: int
    detail: WarpDetail | str
    shared: SharedWarpDetail | str | None
    pending: bool = False


@dataclass(frozen=True)
class Change:
    """One difference between the readings at a source line: its kind, the written and
    compiled (requests, sectors), the line the compiled instructions carry, the compiled
    global instructions whose explanation says it, and the sentence."""

    kind: str
    file: str | None
    line: int | None
    op: str
    array: str
    source: str
    written: tuple[int, int]
    compiled: tuple[int, int]
    compiled_line: int | None
    instructions: tuple[int, ...]
    words: str

    @property
    def sentence(self) -> str:
        """`words` as a sentence: capitalised (not a tool's name: "ptxas ..."), with its full
        stop."""
        if self.words.startswith("ptxas"):
            return self.words + "."
        return self.words[0].upper() + self.words[1:] + "."

    def to_json(self) -> dict[str, object]:
        """The `report --json` "compiler_changes" entry."""
        return {"kind": self.kind, "file": self.file, "line": self.line, "op": self.op,
                "array": self.array, "source": self.source, "compiled_line": self.compiled_line,
                "written": {"requests": self.written[0], "sectors": self.written[1]},
                "compiled": {"requests": self.compiled[0], "sectors": self.compiled[1]},
                "instructions": list(self.instructions), "explanation": self.words}


@dataclass(frozen=True)
class CompilerChanges:
    """Every change of a compiled kernel against its source as written, or why none were
    computed (`note`: the as-written reading cannot be made, or the run is over budget)."""

    changes: tuple[Change, ...]
    note: str | None = None

    def words_for(self, k: int) -> str:
        """The sentences of the changes compiled global instruction k explains ("" if none)."""
        return " ".join(c.sentence for c in self.changes if k in c.instructions)
