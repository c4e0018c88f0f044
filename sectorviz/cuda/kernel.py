"""CudaKernel: a pattern whose `kernel` names a CUDA function, with Kernel's interface.

Launch, params and array placement come from the pattern (`Launch`, shared with pattern-file
kernels); the instructions and their executions come from interpreting the function for all
lanes of a chunk of warps at once. Global accesses are the `instructions` that `trace`
yields; accesses to `__shared__` arrays are `shared_instructions`, yielded by
`space_trace("shared", ...)`.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Collection, Iterator

import numpy as np

from ..host.kernel_text import kernel_source, source_path
from ..host.preprocess import Source, preprocess
from ..model.closed_forms import NotClosed, Varies, block_box
from ..model.errors import PatternError
from ..model.kernel import Batch, Instruction, Launch, Threads
from ..model.pattern import ArraySpec, Pattern
from ..model.repeat import RepeatedBatch
from .closed import closed_events, refuse_sized
from .compile import Compiler
from .ir import Run, Site
from .source import Function, Unit
from .templates import kernel_instance, launch_shared_bytes

LANE_PATH = "SECTORVIZ_LANE_PATH"  # set (to anything but "" or "0") to turn closed forms off
# the closed forms give way to the lane path (which decides the numbers and errors) when they
# do not apply, and also when a value outgrows their integers or a table lookup
GIVE_WAY = (NotClosed, Varies, ArithmeticError, LookupError)


@contextlib.contextmanager
def _located(source: Source, path: Path | None) -> Iterator[None]:
    """Errors at lines of the combined text -> at the line of the file they came from, in
    the kernel's .cu file `path` (None: the pattern's inline code); errors at a pattern key
    (launch.grid[0], arrays.p) stay the pattern file's."""
    try:
        yield
    except PatternError as err:
        raise _in_file(source.relocate(err), err.place, path) from None


def _in_file(err: PatternError, place: str, path: Path | None) -> PatternError:
    """`err` (at `place` before it was relocated) in the kernel's .cu `path` when `place` is
    a line of the source (not a pattern key's) and no other file is named."""
    in_source = re.fullmatch(r"line \d+", place) is not None
    if path is None or not in_source or err.file is not None:
        return err
    return PatternError(err.place, err.message, err.column, str(path))


def _instructions(sites: list[Site], source: Source) -> tuple[Instruction, ...]:
    """Sites -> Instructions named `line L: source` (`file.h line L: ...` in an included
    file, which has no line in the kernel's own text), made unique by op, then column."""
    names = [f"{source.place(s.line)}: {s.source}" for s in sites]
    for extra in (lambda s: f" ({s.op})", lambda s: f" (column {s.column})",
                  lambda s: f" [{s.array}]"):
        dup = {n for n in names if names.count(n) > 1}
        names = [n + extra(s) if n in dup else n for n, s in zip(names, sites)]
    out = []
    for n, s in zip(names, sites):
        file, line = source.where(s.line)
        at = (line, s.column) if file is None else (None, None)
        out.append(Instruction(n, s.op, s.array, s.width, *at, s.source))
    return tuple(out)


def _with_pointee_dtypes(pattern: Pattern, unit: Unit, fn: Function) -> tuple[ArraySpec, ...]:
    """The pattern's arrays, each without a dtype given its pointer parameter's pointee type
    (after template substitution: `T *` with T = double is 8 bytes)."""
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


SLOT_BYTES = 16  # bytes per lane one variable may hold (8; a vector's components, more)


@contextlib.contextmanager
def too_deep(what: str) -> Iterator[None]:
    """The last line of defence behind the nesting limits: a RecursionError becomes one line."""
    try:
        yield
    except RecursionError:
        raise PatternError("kernel", f"the kernel nests too deeply to {what} (device functions "
                                     "and macros expanded in place count); flatten it") from None


class CudaKernel(Launch):
    """A CUDA kernel with the pattern's launch and arrays: instructions and their traces."""

    def __init__(self, pattern: Pattern):
        path = self.source_path = source_path(pattern)
        try:
            self.source = preprocess(kernel_source(pattern), path, pattern.roots)
        except PatternError as err:  # at a line of the .cu: its #include or #if
            raise _in_file(err, err.place, path) from None
        # constants fold as the device computes them: an overflow or a NaN is no warning
        with _located(self.source, path), too_deep("compile"), np.errstate(all="ignore"):
            unit = Unit(self.source)
            fn = kernel_instance(Compiler(unit, {}, {}), unit, pattern.kernel["function"])
            super().__init__(pattern, _with_pointee_dtypes(pattern, unit, fn))
            compiler = Compiler(unit, self.arrays, dict(self.pattern.params))
            compiler.dynamic_shared = pattern.kernel.get("dynamic_shared_bytes",
                                                         launch_shared_bytes(compiler, unit, fn))
            self.program = compiler.kernel(fn, list(self.arrays))
        self.lane_bytes = SLOT_BYTES * self.program.slots
        self.instructions = _instructions(self.program.sites["global"], self.source)
        self.shared_instructions = _instructions(self.program.sites["shared"], self.source)
        self.constant_instructions = _instructions(self.program.sites["constant"], self.source)
        self.assumptions = self.program.assumptions
        self.loop_shapes: dict = {}  # id(ir.Loop) -> closed.LoopShape, filled on first use

    def space_of(self, space: str, root: str) -> tuple[int, int]:
        """An array's (first byte address, size in bytes) in its memory space."""
        if space == "shared":
            return self.program.shared[root]
        if space == "constant":
            return self.program.constants[root]
        arr = self.arrays[root]
        return arr.address0, arr.length * arr.spec.elem_bytes

    def readable(self, space: str, root: str, nbytes: int) -> tuple[np.ndarray, int] | None:
        """(element values, element bytes) of a global or __constant__ array, for a scalar
        of `nbytes` read inside one of its elements, if the model has them: the pattern's,
        else a __constant__ array's initializer in the source. An element wider than the
        read (a vector's component, a struct's member) gives its value to each scalar."""
        if space not in ("global", "constant"):
            return None
        if root in self.values:
            values, width = self.values[root], self.arrays[root].spec.elem_bytes
        elif space == "constant" and root in self.program.constant_values:
            values = self.program.constant_values[root]
            width = values.dtype.itemsize
        else:
            return None
        return (values, width) if width % nbytes == 0 else None

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """Every (space, site index, execution) of warps [lo, hi), in program order (`skip`
        is always empty: this front end has no per-instruction closed forms)."""
        assert not skip, "CudaKernel has no closed_forms to skip"
        threads = threads or self.threads(lo, hi)
        steps = self.program.run(Run(self, threads, self.program.slots))
        while True:
            with np.errstate(all="ignore"), too_deep("run"), \
                    _located(self.source, self.source_path):
                try:  # C wraps; float overflow is fine
                    event = next(steps)
                except StopIteration:
                    return
            yield event

    def closed_trace(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                     ) -> tuple[int, list[tuple[str, int, RepeatedBatch]]] | None:
        """(hi, every global and shared access of warps [lo, hi) in program order, with its
        space and index), with each loop run that every active lane runs alike as one
        RepeatedBatch: all the remaining warps when
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
                    except GIVE_WAY:
                        break
            try:
                return hi, closed_events(self, lo, hi, sector_bytes)
            except NotClosed as err:  # the lane path runs them: refused now if sized over
                with _located(self.source, self.source_path):
                    refuse_sized(err.work, err.place)
                return None
            except GIVE_WAY:
                return None
