"""What a front end supplies (`FrontEnd`) and which one interprets a pattern (instructions
by name: listing.Listing.index).

A pattern without a `kernel` key is run by the model's own `Kernel`; one with a `kernel` key
by the factory registered here (the model never imports a front end: sectorviz.engine.readings
registers the CUDA ones), with its Reading: the engine that counts it ("compiled": the PTX the
compiler emits; "source": the source as written) and why. Resolved kernels live in the one
cache (memo.MEMO), keyed by the pattern and its reading (engines never mix) and valid while
every file the front end read (source, includes, values, PTX) is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection, Iterator, Mapping, Protocol

from .errors import PatternError
from .kernel import Batch, Instruction, Kernel, ResolvedArray, Threads, Values
from .memo import MEMO
from .pattern import Pattern

if TYPE_CHECKING:
    from .affine import AffinePlan
    from .repeat import RepeatedBatch, WarpAccess

#: (hi, every global and shared access of warps [lo, hi) in program order, as (space,
#: instruction index in that space, closed-form batch))
ClosedStep = tuple[int, list[tuple[str, int, "RepeatedBatch"]]]


class FrontEnd(Protocol):
    """A pattern's launch, its memory instructions per space, and their executions.

    Spaces: "global" (`instructions`, byte addresses), "shared" (byte offsets in the
    block's shared memory), "constant" (offsets in constant memory), "local" (per-thread
    local memory, byte addresses of the interleaved words). `Launch` gives the launch
    attributes and the defaults of the optional parts (no closed forms, no constant or local
    instructions, no assumptions, the pattern's value files as the files read)."""

    pattern: Pattern
    params: dict[str, int]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    threads_per_block: int
    warps_per_block: int
    blocks: int
    warps: int
    arrays: dict[str, ResolvedArray]
    lane_bytes: int
    instructions: tuple[Instruction, ...]
    shared_instructions: tuple[Instruction, ...]

    @property
    def constant_instructions(self) -> tuple[Instruction, ...]: ...

    @property
    def local_instructions(self) -> tuple[Instruction, ...]: ...

    @property
    def assumptions(self) -> tuple[str, ...]: ...

    @property
    def assembler(self) -> str:
        """What made the SASS a compiled kernel carries (`ptxas 13.0 for sm_90`); "": none."""

    @property
    def files_read(self) -> tuple[Path, ...]:
        """Files the front end read other than through files.read_bytes, or reads later."""

    @property
    def values(self) -> dict[str, Values]: ...

    @property
    def closed_forms(self) -> Mapping[int, "AffinePlan"]:
        """Global instructions counted per warp by affine plans (none by default)."""

    def closed_trace(self, lo: int, most: int, sector_bytes: int,
                     per_warp: bool = False) -> ClosedStep | None:
        """Closed-form batches of warps [lo, hi <= lo + most), or None: the lane path."""

    def warp_closed(self, warp: int, sector_bytes: int) -> list["WarpAccess"] | None:
        """One warp's global and shared accesses in closed form, or None: its lane path."""

    def threads(self, lo: int, hi: int) -> Threads: ...

    def whole_values(self) -> None: ...

    def work_estimate(self, warps: int, closed: Collection[int] = ()) -> tuple[int, str]: ...

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """Every (space, index among that space's instructions, execution) of warps
        [lo, hi) in program order; a global instruction in `skip` (one the caller counts
        by its closed form) yields once, with None, where it first executes."""

    def trace(self, lo: int, hi: int, threads: Threads | None = None
              ) -> Iterator[tuple[int, Batch | None]]:
        """The global events of `events`, as (instruction index, execution)."""

    def space_trace(self, space: str, lo: int, hi: int, threads: Threads | None = None
                    ) -> Iterator[tuple[int, Batch]]:
        """The events of one space, as (instruction index, execution)."""


@dataclass(frozen=True)
class Reading:
    """Which reading counts a kernel pattern, and the compile it reads: "compiled" (the
    optimized compile, `compiler`: `nvcc 13.0 for sm_90 at -O3`) or "source" (as written:
    the debug compile, `nvcc 13.0 for sm_90 at -G`)."""

    engine: str
    compiler: str
    assembler: str = ""  # counted in SASS: the assembler (`ptxas 13.0 for sm_90`); "": PTX

    @property
    def level(self) -> str | None:
        """What the compiled reading counts: "sass" or "ptx"; None for the as-written one."""
        if self.engine != "compiled":
            return None
        return "sass" if self.assembler else "ptx"

    @property
    def words(self) -> str:
        """`compiled by nvcc 13.0 for sm_90 at -O3, counted in SASS: ptxas 13.0 for sm_90`
        (or `counted in PTX`), or `as written (debug compile by nvcc 13.0 for sm_90 at -G)`."""
        if self.engine == "compiled":
            counted = f"SASS: {self.assembler}" if self.assembler else "PTX"
            return f"compiled by {self.compiler}, counted in {counted}"
        return f"as written (debug compile by {self.compiler})"


def counted_reading(reading: Reading, kernel: FrontEnd) -> Reading:
    """The reading as `kernel` was counted: a SASS reading whose kernel carries no SASS
    opcode on any instruction (one holding wmma, which the engine counts in PTX) reads as
    PTX; one whose SASS another assembler made than the reading expected (nvJitLink where
    Triton's own cubin could not be read) names that one."""
    instructions = (*kernel.instructions, *kernel.shared_instructions,
                    *kernel.constant_instructions, *kernel.local_instructions)
    if reading.level == "sass" and instructions and not any(i.sass for i in instructions):
        return replace(reading, assembler="")
    if reading.level == "sass" and kernel.assembler not in ("", reading.assembler):
        return replace(reading, assembler=kernel.assembler)
    return reading


KernelFactory = Callable[[Pattern, Reading], FrontEnd]
ReadingRule = Callable[[Pattern], Reading]
_front_end: list[tuple[KernelFactory, ReadingRule]] = []


def register_kernel_factory(factory: KernelFactory, reading: ReadingRule) -> None:
    """Set the front end that turns a pattern with a `kernel` key and its Reading into a
    FrontEnd, and the rule that gives a kernel pattern its Reading (the model never imports a
    front end: sectorviz.engine.readings registers the CUDA front ends here)."""
    _front_end[:] = [(factory, reading)]
    MEMO.clear()


def _registered() -> tuple[KernelFactory, ReadingRule]:
    if not _front_end:
        raise PatternError("kernel", "no front end for kernels is loaded "
                                     "(import sectorviz.engine.readings)")
    return _front_end[0]


def reading_of(pattern: Pattern) -> Reading | None:
    """The Reading of a kernel pattern; None for a pattern of accesses."""
    return None if pattern.kernel is None else _registered()[1](pattern)


def read_as(pattern: Pattern) -> tuple[Pattern, Reading | None]:
    """The key of everything the one cache derives from `pattern`: the pattern and the
    reading its engine gives it (an engine chosen by SECTORVIZ_ENGINE is not in the pattern's
    value, so the two readings of one pattern never share an entry)."""
    return pattern, reading_of(pattern)


def kernel_for(pattern: Pattern) -> FrontEnd:
    """The resolved kernel of a pattern, read by the engine its Reading names, cached while
    the files it read are unchanged."""
    key = read_as(pattern)
    reading = key[1]
    holder: list[FrontEnd] = []

    def build() -> FrontEnd:
        holder.append(Kernel(pattern) if reading is None
                      else _registered()[0](pattern, reading))
        return holder[0]

    return MEMO.get("kernel", key, build, lambda: holder[0].files_read)

