"""CudaKernel: a pattern whose `kernel` names a CUDA function, with Kernel's interface.

Launch, params and array placement come from the pattern (`Launch`, shared with pattern-file
kernels); the instructions and their executions come from interpreting the function for all
lanes of a chunk of warps at once. Global accesses are the `instructions` that `trace`
yields; accesses to `__shared__` arrays are `shared_instructions`, yielded by `shared_trace`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import numpy as np

from ..model.errors import PatternError
from ..model.kernel import Batch, Instruction, Launch, Threads
from ..model.pattern import MAX_FILE_BYTES, ArraySpec, Pattern
from ..model.repeat import RepeatedBatch
from . import ctype as C
from .closed import NotClosed, Varies, block_box, closed_events
from .compile import Compiler
from .ir import Run, Site

LANE_PATH = "SECTORVIZ_LANE_PATH"  # set (to anything but "" or "0") to turn closed forms off
from .source import Unit


def kernel_source(pattern: Pattern) -> str:
    """The CUDA text of a kernel pattern: inline `code`, or the `source` file (relative to
    the pattern's folder)."""
    spec = pattern.kernel
    if "code" in spec:
        return spec["code"]
    path = Path(pattern.base_dir) / spec["source"]
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise PatternError("kernel.source", f"{path.name} is over {MAX_FILE_BYTES} bytes")
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PatternError("kernel.source", f"cannot read {path.name}: "
                                            f"{getattr(err, 'strerror', None) or err}") from None


def _instructions(sites: list[Site]) -> tuple[Instruction, ...]:
    """Sites -> Instructions named `line L: source`, made unique by op, then column."""
    names = [f"line {s.line}: {s.source}" for s in sites]
    for extra in (lambda s: f" ({s.op})", lambda s: f" (column {s.column})",
                  lambda s: f" [{s.array}]"):
        dup = {n for n in names if names.count(n) > 1}
        names = [n + extra(s) if n in dup else n for n, s in zip(names, sites)]
    return tuple(Instruction(n, s.op, s.array, s.width, s.line, s.column, s.source)
                 for n, s in zip(names, sites))


def _with_pointee_dtypes(pattern: Pattern, unit: Unit, fn) -> tuple[ArraySpec, ...]:
    """The pattern's arrays, each without a dtype given its pointer parameter's pointee type."""
    pointees = Compiler(unit, {}, dict(pattern.params)).pointee_types(fn)
    specs = []
    for spec in pattern.arrays:
        if spec.dtype is None:
            if spec.name not in pointees:
                raise PatternError(f"arrays.{spec.name}", f"no dtype, and {spec.name!r} is not a "
                                                          "pointer parameter of the kernel")
            name, size = pointees[spec.name]
            spec = replace(spec, dtype=name, elem_bytes=size)
        specs.append(spec)
    return tuple(specs)


class CudaKernel(Launch):
    """A CUDA kernel with the pattern's launch and arrays: instructions and their traces."""

    def __init__(self, pattern: Pattern):
        unit = Unit(kernel_source(pattern))
        fn = unit.kernel(pattern.kernel["function"])
        super().__init__(pattern, _with_pointee_dtypes(pattern, unit, fn))
        self.program = Compiler(unit, self.arrays, self.params).kernel(fn, list(self.arrays))
        self.instructions = _instructions(self.program.sites["global"])
        self.shared_instructions = _instructions(self.program.sites["shared"])
        self.loop_shapes: dict = {}  # id(ir.Loop) -> closed.LoopShape, filled on first use

    def space_of(self, space: str, root: str) -> tuple[int, int]:
        """An array's (first byte address, size in bytes) in its memory space."""
        if space == "shared":
            return self.program.shared[root]
        arr = self.arrays[root]
        return arr.address0, arr.length * arr.spec.elem_bytes

    def readable(self, space: str, root: str, t: C.CType) -> np.ndarray | None:
        """The configured values of a global array read as `t`, if the model has them."""
        if space != "global" or root not in self.values or not isinstance(t, C.Num) or \
                t.size != self.arrays[root].spec.elem_bytes:
            return None
        return self.values[root]

    def events(self, lo: int, hi: int, threads: Threads | None = None
               ) -> Iterator[tuple[str, int, Batch]]:
        """Every (space, site index, execution) of warps [lo, hi), in program order."""
        threads = threads or self.threads(lo, hi)
        steps = self.program.run(Run(self, threads, self.program.slots))
        while True:
            with np.errstate(all="ignore"):  # C wraps; float overflow is not an error
                try:
                    event = next(steps)
                except StopIteration:
                    return
            yield event

    def closed_trace(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                     ) -> tuple[int, list[tuple[int, RepeatedBatch]]] | None:
        """(hi, every global access of warps [lo, hi) in program order), with each loop run
        that every active lane runs alike as one RepeatedBatch: all the remaining warps when
        they form a box of blocks that runs alike (then a batch row is a class of warps,
        unless `per_warp`), else at most `most` warps, a row per warp. None where the lane
        path (`trace`) must run these warps, or when SECTORVIZ_LANE_PATH is set."""
        if os.environ.get(LANE_PATH, "") not in ("", "0"):
            return None
        hi = min(self.warps, lo + most)
        with np.errstate(all="ignore"):
            for end in () if per_warp else (self.warps, hi):
                box = block_box(self, lo, end)
                if box is not None:
                    try:
                        return end, closed_events(self, lo, end, sector_bytes, box)
                    except (NotClosed, Varies):
                        break
            try:
                return hi, closed_events(self, lo, hi, sector_bytes)
            except (NotClosed, Varies):
                return None

    def trace(self, lo: int, hi: int, threads: Threads | None = None
              ) -> Iterator[tuple[int, Batch]]:
        """Every (global instruction index, execution) of warps [lo, hi)."""
        for space, k, batch in self.events(lo, hi, threads):
            if space == "global":
                yield k, batch

    def shared_trace(self, lo: int, hi: int, threads: Threads | None = None
                     ) -> Iterator[tuple[int, Batch]]:
        """Every (shared instruction index, execution) of warps [lo, hi); addresses are byte
        offsets in the block's shared memory."""
        for space, k, batch in self.events(lo, hi, threads):
            if space == "shared":
                yield k, batch
