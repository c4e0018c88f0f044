"""The SASS reading: what the GPU issues, carried from the PTX engine's executions onto the
machine code ptxas made of that PTX (sass_code.SassCode). A value-level transform: the PTX
engine runs as ever; each of its events is handed on to the SASS instruction that carries it.

Each SASS memory instruction names the PTX line it was made from (the cubin's SASS-to-PTX
line table); the PTX memory instruction (site) at that line and in that space is its
counterpart. Then, per PTX site:
- named by one SASS instruction of its width: one to one, its events unchanged;
- named by a wider one (`LDS.128` for an `ld.shared.f32`): ptxas merged it with the PTX
  accesses of the same kind, base and width at the following (or preceding) offsets that no
  SASS instruction names; the group's lowest access is counted once per execution at the SASS
  width (each lane's bytes: the union of its merged accesses), the others not at all;
- named by several SASS copies (ptxas unrolled or duplicated it): its executions shared out
  among the copies in program order (execution i of a chunk, or iteration i of a loop run in
  closed form, to copy i mod copies), so the line's totals stay the PTX's;
- named by several copies inside a loop whose lanes diverge (a branch in it depends on the
  thread index or on loaded data, so ptxas's unrolling may group lanes into requests
  differently): counted as the PTX has it, on the first copy, and said with both counts;
- named by none and merged into none: counted as the PTX has it, and said.
SASS `LDL`/`STL` with no PTX counterpart are spills: each runs whenever its PTX basic block
runs (the block's first instruction is marked: execute.MARK), with the lanes that run it,
each lane at its interleaved local address (consecutive 4-byte words for consecutive lanes at
one stack offset).
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace
from math import gcd, prod
from typing import Callable, Collection, Iterator, TypeVar

import numpy as np

from ...model.kernel import Batch, Instruction, Threads
from ...model.pattern import Pattern
from ...model.ptxas_changes import SPILL_ARRAY
from ...model.repeat import RepeatedBatch, WarpAccess
from .cfg import FlowGraph
from .execute import MARK
from .kernel import CompiledKernel, CompiledPtx, unique_names
from .memory_ops import LOCAL_GRAIN
from .parse import Entry
from .sass_code import SASS_SPACES, SPILLS, WIDENS, SassCode, SassOp
from .sites import Site

WARP = 32
SPACES = ("global", "shared", "local", "constant")
T = TypeVar("T")  # what goes with an event carried onto the SASS rows
COPY_SYMBOLS = 1 << 40  # symbols of copies' own runs: above any a closed-form run numbers
ATTRIBUTES = {"global": "instructions", "shared": "shared_instructions",
              "local": "local_instructions", "constant": "constant_instructions"}
SPILL_BASE = 1 << 44  # spill frames lie apart from the PTX's own local frames
_ADDRESS = re.compile(r"\[\s*([^\]\s+]+)\s*(?:\+\s*(-?(?:0x[0-9a-fA-F]+|\d+)))?\s*\]")
MERGE_RULE = ("A SASS access ptxas widened (LDS.128 for four ld.shared.f32) is one request "
              "per warp execution, each lane's bytes the union of its merged PTX accesses; "
              "its sectors are the distinct 32-byte sectors of those bytes, its shared "
              "wavefronts those of an access of that width (8 bytes: two half-warp phases, "
              "16 bytes: four quarter-warp phases, each as many wavefronts as the most "
              "distinct 4-byte words one bank serves).")


@dataclass(frozen=True)
class Spill:
    """A spill (`STL`/`LDL` ptxas added): its local row, stack offset and width in bytes."""

    row: int
    stack: int
    width: int


@dataclass
class SassPlan:
    """Where each PTX event goes: (space, PTX index) -> the rows of that space it is shared
    out among (empty: merged into another); `spills`: the first instruction of a PTX basic
    block -> the spills that run with it; `rows` the SASS reading's instructions per space;
    `notes` what ptxas did, in words."""

    routes: dict[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)
    spills: dict[int, list[Spill]] = field(default_factory=dict)
    rows: dict[str, list[Instruction]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def lane_path(self) -> bool:
        """Whether events must run lane by lane (spills: local accesses have no closed form)."""
        return bool(self.spills)


def _address(text: str) -> tuple[str, int] | None:
    """A PTX memory instruction's address operand -> (base, byte offset)."""
    found = _ADDRESS.search(text)
    return None if found is None else (found.group(1), int(found.group(2) or "0", 0))


class Planner:
    """A compiled kernel and its SASS -> the SassPlan (see the module's rules)."""

    def __init__(self, kernel: CompiledKernel, code: SassCode):
        self.kernel, self.code = kernel, code
        self.code_of = kernel.entry.instructions
        self.blocks = FlowGraph(kernel.entry)
        self.index: dict[int, tuple[str, int]] = {}  # site number -> (space, PTX index)
        counters = dict.fromkeys(SPACES, 0)
        for n, site in enumerate(kernel.sites):
            self.index[n] = (site.space, counters[site.space])
            counters[site.space] += 1
        self.ptx = {s: getattr(kernel, ATTRIBUTES[s]) for s in SPACES}
        self.plan = SassPlan(rows={s: [] for s in SPACES})
        varying = divergent_branches(kernel.entry)
        loops = [(h, latch) for h, latch in kernel.natural_loops.items()
                 if any(h <= b <= latch for b in varying)]
        self.divergent = [any(h <= site.at <= latch for h, latch in loops)
                          for site in kernel.sites]
        # (line, PTX operation, SASS opcode) of the copies of a divergent loop (a dict: ordered)
        self.unrolled: dict[tuple[str, str, str], None] = {}

    def site(self, n: int) -> Site:
        return self.kernel.sites[n]

    def build(self) -> SassPlan:
        named, spills, unmatched = self._counterparts()
        merged = self._merges(named)
        followers = {m for _, group in merged.values() for m in group[1:]}
        for n in range(len(self.kernel.sites)):
            if n in merged:
                self._merged(n, merged[n])
            elif n not in followers:
                self._named(n, named.get(n, []))
        self._spills(spills)
        self.plan.notes += [self._unrolled_words(key, named) for key in self.unrolled]
        if unmatched:
            self.plan.notes.append(
                f"{unmatched} SASS memory instruction{'s' if unmatched > 1 else ''} name no "
                "PTX memory instruction of their space and are not counted")
        for space, listed in self.plan.rows.items():
            self.plan.rows[space] = unique_names(listed)
        return self.plan

    def _counterparts(self) -> tuple[dict[int, list[SassOp]], list[SassOp], int]:
        """(site number -> the SASS instructions naming it, the spills, how many SASS memory
        instructions name no counterpart and are no spill)."""
        at_line: dict[int, list[int]] = {}
        for n, site in enumerate(self.kernel.sites):
            at_line.setdefault(self.code_of[site.at].ptx_line, []).append(n)
        named: dict[int, list[SassOp]] = {}
        spills, unmatched = [], 0
        for op in self.code.ops:
            spaces = SASS_SPACES[op.name]
            found = [n for n in at_line.get(op.ptx_line, ())
                     if "generic" in spaces or self.site(n).space in spaces]
            for n in found:
                named.setdefault(n, []).append(op)
            if not found and op.name in SPILLS:
                spills.append(op)
            elif not found:
                unmatched += 1
        return named, spills, unmatched

    def _merges(self, named: dict[int, list[SassOp]]
                ) -> dict[int, tuple[list[SassOp], list[int]]]:
        """Leader site -> (the wider SASS instruction's copies, its group of sites, lowest
        first)."""
        out: dict[int, tuple[list[SassOp], list[int]]] = {}
        taken: set[int] = set()
        for n, ops in named.items():
            site = self.site(n)
            if len({op.opcode for op in ops}) != 1 or ops[0].name not in WIDENS or \
                    ops[0].width <= site.width:
                continue
            group = self._group(n, ops[0].width, set(named) | taken)
            if group is not None:
                taken.update(group)
                out[group[0]] = (ops, group)
        return out

    def _group(self, n: int, width: int, busy: set[int]) -> list[int] | None:
        """The sites ptxas merged with site n into one `width`-byte access: same space, op,
        width, base and basic block, at contiguous offsets, named by no SASS instruction."""
        site, ins = self.site(n), self.code_of[self.site(n).at]
        where = _address(ins.text)
        if where is None or width % site.width:
            return None
        by_offset = {where[1]: n}
        for m, other in enumerate(self.kernel.sites):
            mine = self.code_of[other.at]
            there = _address(mine.text)
            if m != n and m not in busy and there is not None and there[0] == where[0] and \
                    (other.space, other.op, other.width) == (site.space, site.op, site.width) \
                    and self.blocks.of(other.at) == self.blocks.of(site.at) \
                    and mine.guard == ins.guard:
                by_offset.setdefault(there[1], m)
        step, count = site.width, width // site.width
        for start in range(where[1], where[1] - width, -step):
            offsets = [start + step * i for i in range(count)]
            if all(o in by_offset for o in offsets):
                return [by_offset[o] for o in offsets]
        return None

    def _row(self, n: int, op: SassOp | None, width: int | None = None) -> int:
        """Add the SASS row of site n (named with op's opcode) -> its index in its space."""
        space, k = self.index[n]
        ptx, bare = self.ptx[space][k], self.kernel.bare_names[space][k]
        name = bare if op is None else _with_opcode(bare, ptx.ptx, op.shown)
        row = replace(ptx, name=name, width=width or ptx.width,
                      sass=None if op is None else op.shown,
                      sass_offset=None if op is None else op.offset)
        self.plan.rows[space].append(row)
        return len(self.plan.rows[space]) - 1

    def _merged(self, leader: int, found: tuple[list[SassOp], list[int]]) -> None:
        ops, group = found
        op, space = ops[0], self.index[leader][0]
        self.plan.routes[self.index[leader]] = self._copies(leader, ops, op.width)
        for m in group[1:]:
            self.plan.routes[self.index[m]] = ()
        ptx = self.ptx[space][self.index[leader][1]]
        self.plan.notes.append(
            f"{_head(ptx)}: ptxas merged {len(group)} {_kind(ptx)}s of {ptx.array}"
            f" into one {op.width * 8}-bit {_kind(ptx)} ({op.shown})")

    def _named(self, n: int, ops: list[SassOp]) -> None:
        space, k = self.index[n]
        ptx = self.ptx[space][k]
        if not ops:
            self.plan.routes[(space, k)] = (self._row(n, None),)
            self.plan.notes.append(f"{ptx.name}: no SASS instruction names it; counted as in "
                                   "the PTX")
        else:
            self.plan.routes[(space, k)] = self._copies(n, ops, None)

    def _copies(self, n: int, ops: list[SassOp], width: int | None) -> tuple[int, ...]:
        """The rows of site n's SASS copies: one per copy, its executions shared out among
        them; in a loop whose lanes diverge, the first copy only, counted as in the PTX."""
        if len(ops) > 1 and self.divergent[n]:
            ptx = self.ptx[self.index[n][0]][self.index[n][1]]
            self.unrolled.setdefault((_head(ptx), ptx.ptx or "", ops[0].shown))
            return (self._row(n, ops[0], width),)
        return tuple(self._row(n, op, width) for op in ops)

    def _unrolled_words(self, key: tuple[str, str, str], named: dict[int, list[SassOp]]
                        ) -> str:
        """A line's instructions of one PTX operation in a divergent loop ptxas unrolled
        further, with both instruction counts."""
        head, ptx_op, opcode = key
        sites = [n for n, (space, k) in self.index.items()
                 if _head(self.ptx[space][k]) == head and self.ptx[space][k].ptx == ptx_op]
        copies = sum(len(named.get(n, ())) for n in sites)
        return (f"{head}: ptxas unrolled a divergent loop further: {len(sites)} {ptx_op} in the "
                f"PTX, {copies} {opcode} in the SASS; counted as in the PTX (its lanes may group "
                "into requests differently)")

    def _spills(self, spills: list[SassOp]) -> None:
        """Each spill run with the PTX basic block of the first PTX instruction at or after
        its PTX line (keyed by the block's first instruction)."""
        lines = sorted((ins.ptx_line, k) for k, ins in enumerate(self.code_of))
        keys = [line for line, _ in lines]
        for op in spills:
            at = lines[min(bisect_right(keys, op.ptx_line - 1), len(lines) - 1)][1]
            position = self.kernel.lines.position(self.code_of[at].loc)
            text = self.kernel.lines.text(position[0], position[1])
            place = f"line {position[1]}" if position[1] is not None else "the kernel"
            row = Instruction(f"{place}: register spill, {op.shown}",
                              "load" if op.name == "LDL" else "store", SPILL_ARRAY,
                              op.width, position[1], position[2], text or None, None,
                              position[0], op.shown, op.offset)
            self.plan.rows["local"].append(row)
            self.plan.spills.setdefault(self.blocks.starts[self.blocks.of(at)], []).append(
                Spill(len(self.plan.rows["local"]) - 1, op.stack or 0, op.width))
        if spills:
            self.plan.notes.append(
                f"ptxas spilled registers: {len(spills)} local instruction"
                f"{'s' if len(spills) > 1 else ''} (LDL/STL) the PTX does not have, each run "
                "whenever its PTX basic block runs, with the lanes that run it")


VARYING_SPECIALS = ("%tid", "%laneid", "%clock", "%globaltimer", "%lanemask")


def divergent_branches(entry: Entry) -> set[int]:
    """Instruction indices of the conditional branches whose predicate may differ between
    the lanes of a warp: derived (through any instruction, to a fixed point) from the thread
    index, the lane, or a value loaded from memory other than a parameter."""
    varying: set[str] = set()
    code = entry.instructions
    changed = True
    while changed:
        changed = False
        for ins in code:
            if not ins.operands or ins.op in ("st", "bra", "bar", "red", "ret", "exit"):
                continue
            dest, sources = ins.operands[0], ins.operands[1:]
            names = {p.name for o in sources for p in (o, *o.parts)}
            seeded = (ins.op == "ld" and not ins.has("param", "const")) or ins.op == "atom" \
                or any(n.startswith(VARYING_SPECIALS) for n in names)
            targets = {p.name for p in (dest, *dest.parts) if p.kind == "reg"} - varying
            if targets and (seeded or names & varying):
                varying |= targets
                changed = True
    return {k for k, ins in enumerate(code)
            if ins.op == "bra" and ins.guard is not None and ins.guard[0] in varying}


def _with_opcode(name: str, ptx_op: str | None, shown: str) -> str:
    """A PTX row's name before it was made unique, its PTX operation `ptx_op` replaced by the
    SASS opcode `shown`: `line 23: As[ty][k], ld.shared.f32` -> `line 23: As[ty][k], LDS.128`,
    `line 4: ld.global.f32` (a line without its text) -> `line 4: LDG.E`."""
    for mark in (f", {ptx_op}", f": {ptx_op}"):
        if ptx_op and mark in name:
            head, _, tail = name.rpartition(mark)
            return f"{head}{mark[:2]}{shown}{tail}"
    return f"{name}, {shown}"


def _head(ptx: Instruction) -> str:
    return ptx.name.split(":")[0]


def _kind(ptx: Instruction) -> str:
    return "load" if ptx.op == "load" else "store" if ptx.op == "store" else "access"


class SassKernel(CompiledKernel):
    """A compiled kernel counted in SASS: the PTX engine's events carried onto the SASS
    instructions (SassPlan); its instructions are the SASS reading's."""

    def __init__(self, pattern: Pattern, compiled: CompiledPtx, code: SassCode):
        super().__init__(pattern, compiled)
        self.code = code
        self.ptx_assumptions = self.assumptions
        self.ptx_rows = {space: getattr(self, ATTRIBUTES[space]) for space in SPACES}
        self.plan = Planner(self, code).build()
        for space in SPACES:
            setattr(self, ATTRIBUTES[space], tuple(self.plan.rows[space]))
        self.assumptions = (
            f"Counted in SASS: {code.assembler}, each memory instruction carried from the "
            f"PTX {compiled.compiler} emits (the cubin's SASS-to-PTX line table).",
            MERGE_RULE, *(note + "." for note in dict.fromkeys(self.plan.notes)),
            *self.assumptions[1:])

    def ptx_level(self) -> CompiledKernel:
        """This kernel counted in PTX (the PTX instructions and assumptions), sharing what
        it has parsed, laid out and run in closed form: the PTX level of the same compile
        without reading it a second time."""
        view = CompiledKernel.__new__(CompiledKernel)
        view.__dict__.update(self.__dict__)
        for space, rows in self.ptx_rows.items():
            setattr(view, ATTRIBUTES[space], rows)
        view.assumptions = self.ptx_assumptions
        return view

    @property
    def marks(self) -> frozenset[int]:
        """The first instructions of the PTX blocks that hold spills: their runs are events."""
        return frozenset(self.plan.spills)

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """The PTX engine's events of warps [lo, hi) carried onto the SASS rows, the spills
        of a block when it runs."""
        done: dict[tuple[str, int], int] = {}
        frame = self.frame
        for space, k, batch in super().events(lo, hi, threads, skip):
            if space == MARK:
                assert batch is not None
                for spill in self.plan.spills[k]:
                    yield "local", spill.row, _spill_batch(batch, spill, lo, frame)
                continue
            rows = self.plan.routes.get((space, k), (k,))
            if rows:
                n = done[(space, k)] = done.get((space, k), -1) + 1
                yield space, rows[n % len(rows)], batch

    @property
    def frame(self) -> int:
        """Bytes of a thread's spill frame (its highest stack offset's end, 16-byte units)."""
        ends = [op.stack + op.width for op in self.code.ops if op.stack is not None]
        return -(-max(ends, default=16) // 16) * 16

    def closed_trace(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                     ) -> tuple[int, list[tuple[str, int, RepeatedBatch]]] | None:
        """The PTX engine's closed forms carried onto the SASS rows (merged ones dropped,
        copies given their share: shared_out, counting a site's executions in program
        order as the lane path does); None where the plan needs executions one by one
        (spills)."""
        if self.plan.lane_path:
            return None
        found = self.closed_runs(lo, most, sector_bytes, per_warp)
        if found is None:
            return None
        hi, events = found
        return hi, [(space, row, batch) for space, row, batch, _ in
                    self._onto_rows([(space, k, batch, runs, None)
                                     for space, k, batch, runs in events])]

    def warp_closed(self, warp: int, sector_bytes: int) -> list[WarpAccess] | None:
        """The PTX engine's closed forms of one warp carried onto the SASS rows, as
        closed_trace carries them; a copy's share of a loop run (shared_out) is a run of
        its own (a symbol no run has), which closed_runs nests apart. None where the plan
        needs executions one by one."""
        if self.plan.lane_path:
            return None
        found = super().warp_closed(warp, sector_bytes)
        if found is None:
            return None
        copies = itertools.count(COPY_SYMBOLS)

        def own_run(batch: RepeatedBatch, symbols: tuple[int, ...]) -> tuple[int, ...]:
            runs = [i for i, (trips, _) in enumerate(batch.loops) if trips > 1]
            return symbols if not runs else \
                symbols[:runs[-1]] + (next(copies),) + symbols[runs[-1] + 1:]

        return [(space, row, batch, origin, symbols) for space, row, batch, (origin, symbols)
                in self._onto_rows([(space, k, batch, symbols, (origin, symbols))
                                    for space, k, batch, origin, symbols in found],
                                   lambda part, extra: (extra[0], own_run(part, extra[1])))]

    def _onto_rows(self, events: list[tuple[str, int, RepeatedBatch, tuple[int, ...], T]],
                   copied: Callable[[RepeatedBatch, T], T] = lambda part, extra: extra
                   ) -> list[tuple[str, int, RepeatedBatch, T]]:
        """(space, PTX site index, batch, the symbols of its loop runs, what goes with it) in
        program order -> (space, SASS row, batch, what goes with it): merged sites dropped,
        a site ptxas copied shared out among its copies (shared_out, counting a site's
        executions in program order as the lane path does), what goes with each share made
        by `copied`."""
        copies = Counter((space, k, runs[-1]) for space, k, _, runs, _ in events if runs)
        done: dict[tuple[str, int], int] = {}  # executions of a site so far
        first: dict[tuple[str, int, int], tuple[int, int]] = {}  # a run's: (before it, copy)
        out = []
        for space, k, batch, runs, extra in events:
            rows = self.plan.routes.get((space, k), (k,))
            if len(rows) == 1:
                out.append((space, rows[0], batch, extra))
            elif rows:
                n, period = done.get((space, k), 0), 1
                if runs:  # copy r of a body unrolled by `period`: executions n0 + r + period j
                    run = (space, k, runs[-1])
                    n0, r = first.get(run, (n, -1))
                    first[run] = n0, r + 1
                    n, period = n0 + r + 1, copies[run]
                out += [(space, row, part, copied(part, extra))
                        for row, part in shared_out(batch, rows, n, period)]
                done[(space, k)] = done.get((space, k), 0) + prod(  # per warp: not a box's
                    t for t, _ in batch.loops[len(batch.loops) - len(runs):])  # blocks
        return out


def shared_out(batch: RepeatedBatch, rows: tuple[int, ...], n: int, period: int = 1
               ) -> Iterator[tuple[int, RepeatedBatch]]:
    """A closed-form run of executions shared out among copies in program order, its first
    execution the n-th of its site in this chunk: over the innermost loop that repeats,
    iteration j (execution n + period j) goes to copy (n + period j) mod copies; a single
    execution to copy n mod copies."""
    runs = [i for i, (trips, _) in enumerate(batch.loops) if trips > 1]
    if not runs:
        yield rows[n % len(rows)], batch
        return
    i, c = runs[-1], len(rows)
    trips, stride = batch.loops[i]
    cycle = c // gcd(period, c)  # iterations after which the copy repeats
    for j in range(min(trips, cycle)):
        loops = batch.loops[:i] + ((-(-(trips - j) // cycle), stride * cycle),) + \
            batch.loops[i + 1:]
        yield rows[(n + period * j) % c], replace(batch, base=batch.base + j * stride,
                                                  loops=loops)


def _spill_batch(block: Batch, spill: Spill, lo: int, frame: int) -> Batch:
    """A spill's execution in a run of its block (`block`: the lanes that run it): lane L
    of warp w at stack offset o is at SPILL_BASE + w * 32 frame + (o / g) * 32 g + L g +
    o % g, g = max(4, width) bytes."""
    grain = max(LOCAL_GRAIN, spill.width)
    warps = lo + np.arange(block.active.shape[0], dtype=np.int64)[:, None]
    lane = np.arange(WARP, dtype=np.int64)[None, :]
    address = SPILL_BASE + warps * (frame * WARP) + (spill.stack // grain) * (grain * WARP) + \
        lane * grain + spill.stack % grain
    address = np.where(block.active, address, 0)
    return Batch(block.active, address // spill.width, address, None, None, {})
