"""CompiledKernel: a pattern's launch run on the PTX nvcc (or NVRTC) emitted for its kernel,
with the FrontEnd interface (model/frontend.py): `instructions` (global),
`shared_instructions`, `constant_instructions`, `local_instructions`, `assumptions`, and
`events` (and Launch's `trace` / `space_trace`) over any range of warps, and `closed_trace`
(closed.py: the same accesses in closed form, where they have one).

Each static PTX memory instruction is one Instruction, named by the source line of the
`.loc` in force for it, the expression of its array there (source_names.py; else the
statement, which is also its `source`) and its PTX operation
(`line 16: c[col * m + row], st.global.f32`);
its line, column and file are those of the innermost inlined position that lies in a file
the compiler read for the pattern (a CUDA header's inlined code counts at the user's line).
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Collection, Iterator

import numpy as np

from ...model.budget import current
from ...model.errors import PatternError
from ...model.files import read_text
from ...model.kernel import Batch, Instruction, Launch, ResolvedArray, Threads
from ...model.pattern import DTYPE_BYTES, ArraySpec, Pattern
from ...model.repeat import RepeatedBatch, WarpAccess
from ..closed_forms import MAX_SECTOR_BYTES, Box, NotClosed, Varies, block_box, warp_row
from .bits import element_bits, scalar_of
from .calls import inlined
from .closed import nested_events
from .execute import Context, Machine
from .limits import memory_problem
from .loops import Counter, GiveUp, counters, latch_slice, natural_loops, read_first
from .memory import ArrayBytes
from .memory_ops import element_origin
from .parse import Entry, Loc, Module, PtxError, parse_module
from .parse import Instruction as PtxInstruction
from .program import Program, program, used_registers
from .sass_code import SassCode
from .sites import Site, data_type, memory_sites
from .source_names import expression_for

LANE_PATH = "SECTORVIZ_LANE_PATH"  # set (to anything but "" or "0") to turn closed forms off
# the closed forms give way to the lane path (also where a value outgrows their integers, or
# loops nest deeper than their recursion over them takes: ~250 levels)
GIVE_WAY = (NotClosed, Varies, GiveUp, ArithmeticError, RecursionError)
#: (hi, each access of warps [lo, hi): space, index, RepeatedBatch, symbols of its loop runs)
ClosedRuns = tuple[int, list[tuple[str, int, RepeatedBatch, tuple[int, ...]]]]
SLOT_BYTES = 16  # bytes per lane a register and its unknown mask hold in a chunk (at most)
PTX_DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
              "u8": "uint8", "s8": "int8", "b8": "uint8", "u16": "uint16", "s16": "int16",
              "b16": "uint16", "u32": "uint32", "s32": "int32", "b32": "int32",
              "u64": "uint64", "s64": "int64", "b64": "int64", "f16x2": "half2",
              "bf16x2": "__nv_bfloat162"}
SPACE_NAMES = {"global": "global", "shared": "shared", "local": "local", "constant": "const"}

COUNTS_ARE_PTX = ("Counted in PTX: the PTX instructions the compiler emitted ({}); "
                  "ptxas may still merge accesses (four ld.shared.f32 into one LDS.128), "
                  "unroll further or spill registers ({})")
WHY_PTX = {True: "the PTX level was asked",
           False: "its SASS is not read: no ptxas and nvdisasm here, or a Python kernel's",
           "wmma": "wmma's loads and stores are counted as their tiles, in PTX"}
WMMA_TILES = ("wmma: NVIDIA leaves wmma's lane mapping unspecified, so sectorviz counts each "
              "wmma.load / wmma.store as the tile it moves, 16 bytes per lane line by line, "
              "one request per 512 bytes; its sectors are the tile's, its shared-memory "
              "wavefronts those of that assignment (an estimate).")
_WMMA = re.compile(r"^\s*(@!?%\w+\s+)?wmma\.", re.MULTILINE)


def holds_wmma(ptx: str) -> bool:
    """Whether a PTX module has a wmma instruction (counted in PTX: ptxas splits each wmma
    load or store into loads of its own, whose lane mapping is not NVIDIA's to keep)."""
    return _WMMA.search(ptx) is not None
LOCAL_WORDS = ("Local memory: a thread's words interleave across the lanes of its warp (lane "
               "L's byte o of its frame lies at frame + (o / g) * 32 g + L g + o % g, "
               "g = max(4, access width) bytes), so lanes reading the same local offset "
               "are coalesced.")
FRAME_SLOTS = ("As written: {} local memory instruction{} of variables -G keeps in its stack "
               "frame (a fixed frame slot, not indexed at run time) {} left out; the source "
               "keeps them in registers.")
LOCKSTEP = ("The warps of a block run in lockstep and a cp.async completes when issued (a lane "
            "reads its src-size bytes: none where it is 0, as Triton masks a load); a load "
            "sees what its own chunk of blocks stored before it (another chunk's global "
            "stores are not seen: CUDA does not order blocks).")


@dataclass(frozen=True)
class CompiledPtx:
    """What the compiler made of a pattern's kernel: the PTX text, the entry's (mangled)
    name, the kernel's parameter names in order, the compiler's description ("nvcc 13.0 for
    sm_90 at -O3") and the files it read, the kernel's own file first; `texts` holds their
    contents in the same order (or is empty: then they are read when named); `pointees`
    the element type of pointer parameters where the source says it (`S *` -> ("bytes:24",
    24)), for arrays the pattern gives no dtype (else the PTX's access type is used);
    `dynamic_shared_bytes` the launch's dynamic shared memory where the pattern does not
    give it; `others_read`: whether the lines of a file the PTX names beyond `files` are
    read (no for PTX a pattern gives: its `.file` lines are named, never followed);
    `param_values`: parameters the front end knows that the pattern does not name (the
    shape and strides Numba passes with an array, Triton's scratch pointers); `expressions`:
    (line, column) of a call in the kernel's file -> its text, naming an instruction whose
    `.loc` points there (`tl.load(x_ptr + offs, mask=mask)`) instead of its whole line;
    `as_written`: a -G compile for the as-written reading, whose accesses of fixed frame
    slots (variables the source keeps in registers) are run but left out of the counts."""

    ptx: str
    entry: str
    params: tuple[str, ...]
    compiler: str
    files: tuple[str, ...]
    texts: tuple[str, ...] = ()
    pointees: tuple[tuple[str, str, int], ...] = ()  # (pointer parameter, dtype, bytes)
    dynamic_shared_bytes: int | None = None  # the launch's, where the host code shows it
    sass: SassCode | None = None  # the SASS ptxas makes of it; None: not made here
    others_read: bool = True
    param_values: tuple[tuple[str, int], ...] = ()
    expressions: tuple[tuple[int, int, str], ...] = ()
    as_written: bool = False  # a -G compile read as written: frame slots are left out


def _entry(module: Module, name: str) -> Entry:
    if name not in module.entries:
        found = ", ".join(module.entries) or "none"
        raise PatternError("kernel.function", f"the PTX has no entry {name!r} (entries: {found})")
    return module.entries[name]


class SourceLines:
    """File paths of the compile -> their lines; `.file` numbers -> paths."""

    def __init__(self, compiled: CompiledPtx, module: Module):
        self.files = tuple(compiled.files)
        self.main = self.files[0] if self.files else None
        self.texts = dict(zip(self.files, compiled.texts))
        self.others_read = compiled.others_read
        self.table = module.files
        self._files_known: dict[int, str | None] = {}
        self._lines: dict[str, list[str]] = {}

    def _known(self, number: int) -> str | None:
        """A `.file` number -> the compile's file it names (None: not one of them)."""
        if number not in self._files_known:
            path = self.table.get(number)
            self._files_known[number] = None if path is None else next(
                (f for f in self.files if path == f or _same_file(path, f)), None)
        return self._files_known[number]

    def position(self, loc: Loc | None) -> tuple[str | None, int | None, int | None]:
        """A `.loc` -> (file, line, column) of its innermost position in a file the compiler
        read for the pattern (else the innermost one); file None for the kernel's own."""
        if loc is None:
            return None, None, None
        chain = [at for at in loc.chain() if at.line > 0]
        if not chain:
            return None, None, None
        mine = next((at for at in chain if self._known(at.file) is not None), chain[0])
        path = self._known(mine.file) or self.table.get(mine.file)
        return (None if path == self.main else path), mine.line, mine.column or None

    def text(self, file: str | None, line: int | None) -> str:
        """The stripped source text of a line ('' if unknown)."""
        path = self.main if file is None else file
        if path is None or line is None:
            return ""
        if path not in self.texts and not self.others_read:
            return ""
        if path not in self.texts:  # a file the compile read: its text for the names only
            try:
                self.texts[path] = read_text(path, "kernel.source")
            except PatternError:
                self.texts[path] = ""
        if path not in self._lines:
            self._lines[path] = self.texts[path].splitlines()
        lines = self._lines[path]
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _place(file: str | None, line: int | None) -> str:
    where = f"line {line}" if line is not None else "the kernel"
    return f"{Path(file).name} {where}" if file is not None else where


class CompiledKernel(Launch):
    """A pattern's kernel as compiled PTX: instructions and their executions."""

    instructions: tuple[Instruction, ...]
    shared_instructions: tuple[Instruction, ...]
    bare_names: dict[str, tuple[str, ...]]  # space -> its instructions' names before unique_names

    def __init__(self, pattern: Pattern, compiled: CompiledPtx):
        self.compiled = compiled
        self.assembler = "" if compiled.sass is None else compiled.sass.assembler
        try:
            self.module = parse_module(compiled.ptx)
        except PtxError as err:
            raise PatternError("kernel", f"{err.place}: {err.message}") from None
        self.entry = inlined(self.module, _entry(self.module, compiled.entry))
        self.lines = SourceLines(compiled, self.module)
        self._expressions: dict[tuple[int | None, int | None], str] = {
            (line, column): text for line, column, text in compiled.expressions}
        self._places: dict[int, tuple[str, int | None]] = {}
        # closed_runs' runs (the work units each took, its box, the run): shared with the
        # PTX level of a SASS reading
        self._runs: dict[tuple[int, int, bool],
                         tuple[int, tuple[Box | None, ClosedRuns] | None]] = {}
        if len(compiled.params) != len(self.entry.params):
            raise PatternError("kernel", f"the entry has {len(self.entry.params)} parameters, "
                                         f"{len(compiled.params)} names were given")
        self.param_names = dict(zip((p.name for p in self.entry.params), compiled.params))
        pointers = {ptx: name for ptx, name in self.param_names.items()
                    if any(a.name == name and a.space == "global" for a in pattern.arrays)}
        first = program(self.module, self.entry, pointers, 0, 0)
        reads = used_registers(first.entry)  # an atom whose result has no use is a red
        specs = _with_dtypes(pattern, self.entry,
                             memory_sites(first, set(pointers.values()), reads),
                             {p: (d, n) for p, d, n in compiled.pointees})
        super().__init__(pattern, specs)
        self.pattern_arrays = {spec.name for spec in specs}
        end = max((a.end for a in self.arrays.values() if a.spec.space == "global"), default=0)
        dynamic = (pattern.kernel or {}).get("dynamic_shared_bytes",
                                             compiled.dynamic_shared_bytes)
        if dynamic is None and any(v.extern and v.space == "shared" and _names(self.entry, v.name)
                                   for v in (*self.module.variables, *self.entry.variables)):
            raise PatternError("kernel", "extern __shared__ memory needs its size: add "
                                         "\"dynamic_shared_bytes\" to the pattern's kernel "
                                         "(the launch's third argument)")
        dynamic = int(dynamic or 0)
        self.program: Program = program(self.module, self.entry, pointers, end, dynamic, first)
        self._check_memory_limits(dynamic)
        self._add_module_globals()
        self._check_variable_arrays()
        self.sites = memory_sites(self.program, set(self.arrays), reads,
                                  frame_slots=compiled.as_written)
        lay = self.program.layout  # a stored byte costs 2: its value, whether it was stored
        self.lane_bytes = SLOT_BYTES * (len(self.program.reads) + 8) + 2 * lay.local_bytes + \
            2 * -(-lay.shared_bytes // self.threads_per_block)
        self._name_instructions()
        slots = sum(site.slot for site in self.sites)
        wmma = holds_wmma(compiled.ptx)
        why = WHY_PTX["wmma" if wmma else compiled.sass is not None]
        self.assumptions = (COUNTS_ARE_PTX.format(compiled.compiler, why) + ".",
                            LOCKSTEP) + ((WMMA_TILES,) if wmma else ()) + (
            (LOCAL_WORDS,) if self.local_instructions else ()) + (
            (FRAME_SLOTS.format(slots, *(("", "is") if slots == 1 else ("s", "are"))),) if slots
            else ()) + ((compiled.sass.note + ".",) if compiled.sass and compiled.sass.note
                        else ())

    # ------------------------------------------------------------ setup

    def _add_module_globals(self) -> None:
        """Module-scope .global variables (a math function's tables, `__device__` arrays)
        become arrays at the addresses the layout gave them: of bytes, or the pattern's
        array of that name (its values) moved there."""
        for name, (space, start) in self.program.layout.where.items():
            var = self.program.layout.variables[name]
            if space != "global" or not var.size:
                continue
            if name in self.arrays:
                self.arrays[name] = replace(self.arrays[name], address0=start)
            else:
                spec = ArraySpec(name, "uint8", 1, None, None, "row-major", None, start, 0, None)
                self.arrays[name] = ResolvedArray(spec, var.size, None, None, None, start)

    def _name_instructions(self) -> None:
        found: dict[str, list[tuple[Site, Instruction]]] = {
            s: [] for s in (*SPACE_NAMES, "slot")}
        for site in self.sites:
            ins = self.entry.instructions[site.at]
            file, line, column = self.lines.position(ins.loc)
            text = self._expressions.get((line, column)) if file is None else None
            text = text or self.lines.text(file, line)
            op_text = ".".join(ins.opcode)
            if ins.op == "cp":
                op_text += " (global read)" if site.space == "global" else " (shared write)"
            head = _place(file, line)
            arrays = self._array_names(site)
            words = (expression_for(text, arrays[0], site.op) if text and len(arrays) == 1
                     else None) or text
            name = f"{head}: {words}, {op_text}" if words else f"{head}: {op_text}"
            array = ", ".join(arrays)
            found["slot" if site.slot else site.space].append((site, Instruction(
                name, site.op, array, site.width, line, column, words or None, op_text,
                file)))  # source: the access's text, as its name says it
        self._names: dict[int, str] = {id(site): ins.name for site, ins in found.pop("slot")}
        self.bare_names = {space: tuple(ins.name for _, ins in listed)
                           for space, listed in found.items()}
        for space, listed in found.items():
            out = unique_names([ins for _, ins in listed])
            self._names.update((id(site), ins.name) for (site, _), ins in zip(listed, out))
            setattr(self, {"global": "instructions", "shared": "shared_instructions",
                           "local": "local_instructions",
                           "constant": "constant_instructions"}[space], tuple(out))

    def _array_names(self, site: Site) -> list[str]:
        if site.space == "global":
            named = [r for r in site.roots if r in self.arrays]
            pool = named or [n for n, a in self.arrays.items() if a.spec.space == "global"]
            return sorted(pool, key=lambda n: self.arrays[n].address0)
        named = [_variable_name(r) for r in site.roots]
        if named:
            return named
        return [_variable_name(n) for n, (s, _) in self.program.layout.where.items()
                if s == site.space] or [site.space]

    def _context(self) -> Context:
        return Context(self._where, lambda site: self._names[id(site)], self.global_ranges,
                       ArrayBytes(list(self.arrays.values()), self.values),
                       self.param_bytes, self.initial_bytes, self.arrays)

    def _check_memory_limits(self, dynamic: int) -> None:
        """Constant and shared memory within the limits of the PTX's target, before any of
        it is allocated; the error names the first line that uses such a variable."""
        problem = memory_problem(self.program.layout, self.module.target, dynamic)
        if problem is None:
            return
        space, why = problem
        names = [n for n, (s, _) in self.program.layout.where.items() if s == space]
        ins = next((ins for ins in self.entry.instructions
                    if any(_names_in(ins, n) for n in names)), None)
        place, column = self._where(ins) if ins is not None else ("kernel", None)
        raise self._in_source(PatternError(place, why, column))

    def _check_variable_arrays(self) -> None:
        """A pattern array that gives a module-scope variable's values must fill it."""
        for name, (space, _) in self.program.layout.where.items():
            var = self.program.layout.variables[name]
            if space in ("global", "constant") and name in self.pattern_arrays and var.size:
                arr = self.arrays[name]
                if arr.length * arr.spec.elem_bytes != var.size:
                    raise PatternError(f"arrays.{name}", f"{arr.length} elements of "
                                       f"{arr.spec.elem_bytes} bytes, but the kernel's {name} "
                                       f"holds {var.size} bytes")

    @cached_property
    def initial_bytes(self) -> dict[str, bytes]:
        """Module-scope global and constant variables -> their bytes at the launch: the
        values of the pattern's array of that name (in its dtype), else the PTX
        initializer; variables with neither are left out (unknown: the host may copy
        anything there)."""
        out = {}
        for name, (space, _) in self.program.layout.where.items():
            var = self.program.layout.variables[name]
            if space not in ("global", "constant") or not var.size:
                continue
            spec = self.arrays[name].spec if name in self.pattern_arrays else None
            scalar = scalar_of(spec.dtype) if spec is not None and name in self.values else None
            if spec is not None and scalar:
                count = self.arrays[name].length
                bits = element_bits(self.values[name][np.arange(count)], scalar[0])
                out[name] = bits.astype("<u8").view(np.uint8).reshape(count, 8)[
                    :, :spec.elem_bytes].tobytes()
            elif var.init is not None:
                out[name] = var.init
        return out

    def _where(self, ins: PtxInstruction) -> tuple[str, int | None]:
        """An instruction -> (its error place, column), worked out once per instruction."""
        found = self._places.get(id(ins))
        if found is None:
            file, line, column = self.lines.position(ins.loc)
            found = self._places[id(ins)] = (_place(file, line), column)
        return found

    @cached_property
    def natural_loops(self) -> dict[int, int]:
        """Loop header instruction -> its latch (loops.natural_loops), for the closed forms."""
        return natural_loops(self.entry)

    @cached_property
    def loop_reads(self) -> dict[int, set[str]]:
        """Loop header -> the registers its body reads before setting them (loops.read_first):
        those whose entry value the closed forms carry across iterations."""
        return {header: read_first(self.entry, header, latch)
                for header, latch in self.natural_loops.items()}

    @cached_property
    def loop_counters(self) -> dict[int, dict[str, Counter | None] | None]:
        """Loop header -> the counters among the registers it carries (loops.counters)."""
        return {header: counters(self.entry, header, latch, self.loop_reads[header])
                for header, latch in self.natural_loops.items()}

    @cached_property
    def latch_slices(self) -> dict[int, tuple[int, ...] | None]:
        """Loop header -> the instructions computing its latch's predicate
        (loops.latch_slice): what the closed forms run for a do-while loop's trip count."""
        return {header: latch_slice(self.entry, header, latch)
                for header, latch in self.natural_loops.items()}

    @cached_property
    def param_bytes(self) -> dict[str, tuple[bytes, bool, str]]:
        return self._param_bytes()

    @cached_property
    def global_ranges(self) -> list[tuple[int, int, str]]:
        """(first byte, end, name) of each global array, sorted."""
        return sorted((a.address0, a.end, n) for n, a in self.arrays.items()
                      if a.spec.space == "global")

    def where(self, ins: PtxInstruction) -> tuple[str, int | None]:
        """An instruction -> (its error place, column)."""
        return self._where(ins)

    def _param_bytes(self) -> dict[str, tuple[bytes, bool, str]]:
        """PTX parameter -> (its bytes, known, why not): an array's base address, a pattern
        param's value in the parameter's type."""
        out, given = {}, dict(self.compiled.param_values) | dict(self.pattern.params)
        for p in self.entry.params:
            name = self.param_names[p.name]
            why = (f"the kernel parameter '{name}', which the pattern does not give (add it "
                   f"to params, or as an array)")
            if name in self.arrays:
                out[p.name] = (self.arrays[name].address0.to_bytes(8, "little"), True, why)
            elif name in given:
                out[p.name] = (_encode(given[name], p.type, p.size, name), True, why)
            else:
                out[p.name] = (b"", False, why)
        return out

    # ------------------------------------------------------------ running

    @property
    def marks(self) -> frozenset[int]:
        """Instructions whose runs `events` yields (execute.MARK): none at the PTX level."""
        return frozenset()

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """Every (space, instruction index in that space, execution) of warps [lo, hi), in
        program order, with (MARK, instruction index, lanes) for the runs of `marks`: the
        whole blocks that hold them run together, and the rows of warps [lo, hi) are yielded
        (`skip` is always empty: no per-instruction closed forms)."""
        assert not skip, "CompiledKernel has no closed_forms to skip"
        if not 0 <= lo <= hi <= self.warps:
            raise PatternError("warp", f"warp range [{lo}, {hi}) outside [0, {self.warps})")
        if lo == hi:
            return
        wpb = self.warps_per_block
        first, last = lo // wpb * wpb, -(-hi // wpb) * wpb
        run = self.threads(first, last)
        machine = Machine(self.program, self.sites, self._context(), run, self.block,
                          self.grid, current(), self.marks)
        rows = slice(lo - first, hi - first)
        try:
            for space, k, batch in machine.run():
                if first != lo or last != hi:
                    batch = Batch(batch.active[rows], batch.element[rows],
                                  batch.address[rows], None, None, {})
                if batch.active.any():
                    yield space, k, batch
        except PatternError as err:
            raise self._in_source(err) from None

    def closed_trace(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                     ) -> tuple[int, list[tuple[str, int, RepeatedBatch]]] | None:
        """(hi, every global and shared access of warps [lo, hi) in program order, with its
        space and index), each loop run that every active lane runs alike one RepeatedBatch
        (closed.py): all the remaining warps when they form a box of blocks that runs alike
        (a batch row is then a class of warps, unless `per_warp`), else at most `most`
        warps, a row per warp. None where the lane path (`events`) must run these warps, or
        when SECTORVIZ_LANE_PATH is set."""
        found = self.closed_runs(lo, most, sector_bytes, per_warp)
        return None if found is None else (found[0], [e[:3] for e in found[1]])

    def closed_runs(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                    ) -> ClosedRuns | None:
        """closed_trace's accesses, each with the symbols of the loop runs it lies in
        (closed.nested_events)."""
        if not self._closed_allowed(sector_bytes):
            return None
        key = (lo, min(self.warps, lo + most), per_warp)
        budget = current()
        kept = self._runs.get(key)
        if kept is not None and budget.spent + kept[0] <= budget.work:
            budget.charge(kept[0])  # a run kept costs what it cost: the same figures and notes
            found = kept[1]
        else:  # not run yet, or past this budget: run, so that it stops where it does
            before = budget.spent
            try:
                found = self._closed_trace(*key)
            except PatternError as err:
                raise self._in_source(err) from None
            self._runs[key] = (budget.spent - before, found)
        return None if found is None else found[1]

    def warp_closed(self, warp: int, sector_bytes: int) -> list[WarpAccess] | None:
        """(space, index, RepeatedBatch of the one warp, the address of element 0 of the
        array its site reaches, the symbols of its loop runs) of every global and shared
        access of `warp` in program order, run for that warp only (memory contents are not
        tracked, so neither its block nor its barriers are needed); None where the lane
        path must run it. Its executions carry what the lane path's do: no loop variables,
        rows or columns."""
        if not self._closed_allowed(sector_bytes):
            return None
        events = self._warp_of_box(warp)
        try:
            events = events if events is not None else nested_events(self, warp, warp + 1,
                                                                      None)
        except GIVE_WAY:
            return None
        except PatternError as err:
            raise self._in_source(err) from None
        sites = {space: [s for s in self.sites if s.space == space and not s.slot]
                 for space in ("global", "shared")}
        return [(space, k, batch, element_origin(self.program, self.global_ranges,
                                                 sites[space][k], space), symbols)
                for space, k, batch, symbols in events if space in sites]

    @staticmethod
    def _closed_allowed(sector_bytes: int) -> bool:
        """Whether closed forms may run: not under SECTORVIZ_LANE_PATH, sectors they hold."""
        return os.environ.get(LANE_PATH, "") in ("", "0") and \
            sector_bytes <= MAX_SECTOR_BYTES

    def _warp_of_box(self, warp: int
                     ) -> list[tuple[str, int, RepeatedBatch, tuple[int, ...]]] | None:
        """The accesses of `warp` from a closed-form run made so far over a box of blocks
        that holds it: its class's rows where it has an active lane, with its block's
        coordinates put in (the blocks of a box run alike); None where no such run was
        made."""
        for (lo, _, _), (_, found) in self._runs.items():
            if found is None:
                continue
            box, (end, events) = found
            if box is None or not lo <= warp < end:
                continue
            rows = [(space, k, warp_row(batch, box, warp, self.warps_per_block, self.grid),
                     symbols) for space, k, batch, symbols in events]
            if not all(batch is not None for _, _, batch, _ in rows):
                return None
            return [(space, k, batch, symbols) for space, k, batch, symbols in rows
                    if batch is not None and (batch.full.any() or len(batch.mixed))]
        return None

    def _closed_trace(self, lo: int, hi: int, per_warp: bool
                      ) -> tuple[Box | None, ClosedRuns] | None:
        """(the box of blocks the run covers, else None; closed_runs' run)."""
        for end in () if per_warp else (self.warps, hi):
            box = block_box(self, lo, end)
            if box is not None:
                try:
                    return box, (end, nested_events(self, lo, end, box))
                except GIVE_WAY:
                    break
        try:
            return None, (hi, nested_events(self, lo, hi, None))
        except GIVE_WAY:
            return None

    def _in_source(self, err: PatternError) -> PatternError:
        """An error at a line of the kernel's own .cu (`line L`) or of a file it includes
        (`common.h line L`) names that file; one at a pattern key
        or in inline code is kept."""
        found = re.fullmatch(r"(?:(\S+) )?(line \d+)", err.place)
        if err.file is not None or found is None:
            return err
        name, line = found.groups()
        main, *included = self.compiled.files or ("",)
        named = [f for f in included if Path(f).name == name] if name else [main]
        if len(named) != 1 or not Path(named[0]).is_absolute():  # inline code keeps its place
            return err
        return PatternError(line, err.message, err.column, named[0])


def unique_names(listed: list[Instruction]) -> list[Instruction]:
    """Instructions with the names several share made unique: by the array each reaches
    (`[b]`) where those differ, else by their order (`(2 of 16)`). Applied once, to the
    final rows (the PTX's, or the SASS's copies of them named as the PTX's were before it),
    so a name carries at most one such mark."""
    groups: dict[str, list[int]] = {}
    for k, ins in enumerate(listed):
        groups.setdefault(ins.name, []).append(k)
    out = list(listed)
    for name, ks in groups.items():
        arrays = [listed[k].array for k in ks]
        if len(ks) == 1:
            continue
        distinct = len(set(arrays)) == len(ks)
        for j, k in enumerate(ks):
            suffix = f" [{arrays[j]}]" if distinct else f" ({j + 1} of {len(ks)})"
            out[k] = replace(listed[k], name=name + suffix)
    return out


def _variable_name(name: str) -> str:
    """A PTX variable -> the name in the source: `_ZZ9transposePfS_iE4tile` -> tile."""
    if name.startswith("_ZZ") and "E" in name:
        rest = name[name.rindex("E") + 1:]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if digits and rest[digits:]:
            return rest[digits:digits + int(rest[:digits])]
    return name


def _encode(value: int | float, ptx_type: str, size: int, name: str) -> bytes:
    """A pattern param's number -> the parameter's bytes (a float parameter: the value's
    IEEE bits in that float; a float for an integer parameter is refused)."""
    if ptx_type == "f32":
        return struct.pack("<f", float(value))
    if ptx_type == "f64":
        return struct.pack("<d", float(value))
    if isinstance(value, float):
        raise PatternError(f"params.{name}", f"{value} is not an integer, but the kernel's "
                                             f"parameter is .{ptx_type}")
    return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def _names(entry: Entry, name: str) -> bool:
    """Whether an instruction of `entry` names the variable `name` (a module's extern shared
    array is another kernel's when this one never names it; one reached only through a
    called .func is sized at its first access, which then asks for it)."""
    return any(_names_in(ins, name) for ins in entry.instructions)


def _names_in(ins: PtxInstruction, name: str) -> bool:
    """Whether the instruction's text names the variable `name` (as a whole word)."""
    return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", ins.text) is not None


def _with_dtypes(pattern: Pattern, entry: Entry, sites: list[Site],
                 pointees: dict[str, tuple[str, int]]) -> tuple[ArraySpec, ...]:
    """The pattern's arrays, each without a dtype given its parameter's pointee type where
    the compile says it, else the PTX type of the first memory instruction that reaches only
    it (`ld.global.f32` -> float32), else bytes."""
    specs = []
    for spec in pattern.arrays:
        if spec.dtype is None and spec.name in pointees:
            dtype, size = pointees[spec.name]
            spec = replace(spec, dtype=dtype, elem_bytes=size)
        elif spec.dtype is None:  # a pointer parameter's array, or a variable's values
            site = next((s for s in sites if s.roots == (spec.name,)), None)
            # an array no instruction reaches alone is placed as bytes (arrays start at
            # 256-byte boundaries: the element size moves no access relative to a sector)
            dtype = "uint8" if site is None else PTX_DTYPES.get(
                data_type(entry.instructions[site.at]), "uint8")
            spec = replace(spec, dtype=dtype, elem_bytes=DTYPE_BYTES[dtype])
        specs.append(spec)
    return tuple(specs)
