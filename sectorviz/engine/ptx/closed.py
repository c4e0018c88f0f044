"""Closed forms on PTX: the entry run over a chunk of warps with integer registers carried
symbolically (symbolic.py), so that a row is a warp, or a class of warps over a box of whole
blocks (block coordinates are symbols), and a loop's iterations run once (loops.py,
compress.py): every access of the chunk comes out as a RepeatedBatch.

The SIMT stack is execute.Machine's, over Masks: a branch whose predicate splits the active
lanes pushes both paths, which meet at the branch's immediate post-dominator. Register
instructions are closed_ops.py's, memory instructions closed_memory.py's: loads give Opaque
values (memory contents are never tracked: a loaded value may flow into data and stores,
never into an address, a branch or a guard); ld.param reads the parameter's bytes.
Anything else stops the chunk (NotClosed: the lane path runs it and decides the numbers and
errors); Varies stops a box (a value depends on a block symbol where it may not).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

import numpy as np

from ...model.budget import CLOSED_STEP_UNITS, DIVERGED, PTX_STEP_LANES, charge
from ...model.repeat import RepeatedBatch
from ...model.sectors import WARP_SIZE
from ..closed_forms import Aff, Chunk, Mask, NotClosed, Varies, repeated
from . import closed_memory, closed_ops
from .bits import INT_DTYPES, WIDTH, immediate
from .compress import compressed
from .execute import UNKNOWN_SPECIALS, cluster_constant, diverge
from .loops import GiveUp, Switches, first_change
from .parse import Instruction, Operand
from .refuse import NO_OPS
from .sites import Site, numbered
from .symbolic import (
    CARRIED,
    OPAQUE,
    Carried,
    Guarded,
    Opaque,
    SymPred,
    Value,
    concrete,
    from_typed,
    wrapped,
)

if TYPE_CHECKING:
    from .kernel import CompiledKernel

Event = tuple[str, int, Aff, Mask, tuple[tuple[int, int], ...]]
SPECIAL_AXES = ("%tid", "%ctaid", "%ntid", "%nctaid")
MOST_SWITCHING_VALUES = 64  # distinct lane values of a varying predicate solved for its switch


class ClosedMachine:
    """One closed-form run of a CompiledKernel's entry over a Chunk -> its access events."""

    def __init__(self, kernel: "CompiledKernel", chunk: Chunk):
        self.kernel, self.ck = kernel, chunk
        self.prog = kernel.program
        self.code = self.prog.entry.instructions
        self.regs: dict[str, Value] = {}
        self.events: list[Event] = []
        self.loops: list[tuple[int, int]] = list(chunk.block_loops)
        self.symbols = itertools.count()
        self.headers = kernel.natural_loops
        self.falls_through: set[int] = set()  # exit tests of while loops run in closed form
        self.step = CLOSED_STEP_UNITS + chunk.n * WARP_SIZE // PTX_STEP_LANES
        self.sites: dict[int, list[tuple[int, Site]]] = numbered(kernel.sites)

    def run(self) -> list[Event]:
        self.region(0, len(self.code) + 1, self.ck.all, True)
        return self.events

    # ------------------------------------------------------------------ control

    def region(self, start: int, stop: int, mask: Mask, outermost: bool) -> None:
        """Run from `start` until every lane of mask reaches `stop` (the whole entry when
        outermost; else the body of the loop whose header is `start`, run as code, which
        lanes may not leave: GiveUp)."""
        n = len(self.code)
        stack: list[list[Any]] = [[start, stop, mask, -1 if outermost else start]]
        while stack:
            top = stack[-1]
            pc, rpc, m, skip = top
            if skip >= 0 and not skip <= pc <= self.headers[skip]:
                top[3] = skip = -1
            if pc == rpc or not m.any():
                stack.pop()
                continue
            if pc >= n:
                self._leave(stack, m, outermost)
                continue
            if pc in self.headers and skip != pc:
                resume = compressed(self, pc, m)
                if resume is not None:
                    top[0] = resume
                    continue
                top[3] = pc  # iterated: the header runs as code from here on
            ins = self.code[pc]
            self._charge(ins, m)
            if pc in self.falls_through:  # j < trips: the test does not exit
                top[0] = pc + 1
                continue
            act = self.guarded(ins, m)
            if ins.op == "bra":
                self._branch(stack, top, pc, act, (start, stop, outermost))
                continue
            top[0] = pc + 1
            if ins.op in ("ret", "exit"):
                if act.any():
                    self._leave(stack, act, outermost)
                continue
            if act.any():
                self.execute(ins, pc, act)

    def straight(self, pcs: Iterable[int], m: Mask) -> None:
        """Run the instructions pcs in order over the lanes m (each where its guard holds),
        no branch among them (a loop's latch slice, loops.latch_slice)."""
        for pc in pcs:
            ins = self.code[pc]
            self._charge(ins, m)
            act = self.guarded(ins, m)
            if act.any():
                self.execute(ins, pc, act)

    def _charge(self, ins: Instruction, m: Mask) -> None:
        """One instruction's work over the lanes m (more where they diverge)."""
        charge(self.step if self.whole(m) else self.step * DIVERGED,
               "running the compiled kernel", *self.kernel.where(ins))

    def _leave(self, stack: list[list[Any]], lanes: Mask, outermost: bool) -> None:
        if not outermost:
            raise GiveUp()
        for entry in stack:
            entry[2] = self.ck.minus(entry[2], lanes)

    def _branch(self, stack: list[list[Any]], top: list[Any], pc: int, taken: Mask,
                bounds: tuple[int, int, bool]) -> None:
        start, stop, outermost = bounds
        target = self.prog.entry.labels.get(self.code[pc].operands[0].name)
        if target is None:
            raise NotClosed("a branch to an unknown label")
        fall = self.ck.minus(top[2], taken)
        if taken.any() and not outermost and not start <= target <= stop:
            raise GiveUp()  # a way out of the loop's body
        if not fall.any():
            top[0] = target
            return
        if not taken.any():
            top[0] = pc + 1
            return
        meet = self.prog.reconverge.get(pc, len(self.code) + 1)
        if not outermost and not start <= meet <= stop:
            raise GiveUp()
        diverge(stack, top, (pc + 1, fall), (target, taken), meet)

    def guarded(self, ins: Instruction, m: Mask) -> Mask:
        if ins.guard is None:
            return m
        name, negated = ins.guard
        p = self.lanes_of(self.regs.get(name), m)
        return self.ck.minus(m, p) if negated else p

    def lanes_of(self, v: Value, m: Mask) -> Mask:
        """The lanes of m where predicate value v is true."""
        ck = self.ck
        if isinstance(v, Guarded):
            inside = ck.combine(m, v.mask, np.logical_and)
            outside = ck.minus(m, v.mask)
            parts = [self.lanes_of(x, part) for x, part in ((v.new, inside), (v.old, outside))
                     if part.any()]
            return parts[0] if len(parts) == 1 else ck.combine(parts[0], parts[1], np.logical_or)
        if isinstance(v, Mask):
            return ck.combine(m, v, np.logical_and)
        if isinstance(v, SymPred):
            try:
                return ck.holds(v.d, v.op, m)
            except Varies:
                raise self._switch(v, m) from None
        if isinstance(v, Carried):
            raise Varies()
        raise NotClosed("a predicate without a closed form")

    def _switch(self, p: SymPred, m: Mask) -> Varies:
        """Why a predicate varies over the lanes of m: Switches where it depends on one
        loop's symbol alone (with the first iteration where it changes on some lane),
        else Varies."""
        if len(p.d.coef) != 1:
            return Varies()
        (symbol, c), = p.d.coef
        ck = self.ck
        idx = np.sort(np.concatenate([np.flatnonzero(m.full), m.mixed]))
        values = np.unique(ck.lane_values(Aff(p.d.base, p.d.off), idx)[ck.rows(m, idx)])
        at = first_change([int(v) for v in values], c, p.op) \
            if len(values) <= MOST_SWITCHING_VALUES else None
        return Varies() if at is None else Switches(symbol, at)

    # ------------------------------------------------------------------ registers

    def whole(self, m: Mask) -> bool:
        return not len(m.mixed) and bool(m.full.all())

    def aligned(self, m: Mask) -> bool:
        """Whether each warp of m runs with all 32 lanes (what .sync.aligned requires)."""
        return not len(m.mixed) and bool(self.ck.valid[self.ck.cls[m.full]].all())

    def assign(self, name: str, value: Value, m: Mask) -> None:
        old = self.regs.get(name)
        if self.whole(m):
            self.regs[name] = value
            return
        if isinstance(old, Guarded) and not self.ck.minus(old.mask, m).any():
            old = old.old
        self.regs[name] = Guarded(m, value, old)

    def resolved(self, v: Value, m: Mask) -> Value:
        """A register's value on the lanes of m (Opaque where m splits a partial write,
        unless both sides are concrete: then their lanes, merged)."""
        while isinstance(v, Guarded):
            if not self.ck.minus(m, v.mask).any():
                v = v.new
            elif not self.ck.combine(m, v.mask, np.logical_and).any():
                v = v.old
            else:
                return self._merged(v, m)
        return v

    def _merged(self, v: Guarded, m: Mask) -> Value:
        ck = self.ck
        a = self.resolved(v.new, ck.combine(m, v.mask, np.logical_and))
        b = self.resolved(v.old, ck.minus(m, v.mask))
        if not (isinstance(a, Aff) and isinstance(b, Aff) and concrete(a) and concrete(b)):
            return CARRIED if isinstance(a, Carried) or isinstance(b, Carried) else OPAQUE
        idx = np.arange(ck.n)
        lanes = ck.rows(v.mask, idx)
        return from_typed(ck, np.where(lanes, ck.lane_values(a, idx), ck.lane_values(b, idx)),
                          "s64")

    def register_bits(self, name: str) -> int | None:
        t = self.prog.entry.register_type(name)
        return 8 * WIDTH[t] if t in INT_DTYPES else None

    def special(self, name: str) -> Aff | Opaque | None:
        """A special register's closed form (Opaque where the launch does not fix it, or
        for the lane masks); None if `name` is not one."""
        base, _, axis = name.partition(".")
        k = "xyz".find(axis) if axis else -1
        ck, kernel = self.ck, self.kernel
        if base in SPECIAL_AXES and k >= 0:
            if base == "%tid":
                table = ck.thread[k]
                return Aff(0, None if table is None else np.asarray(table, dtype=np.int64))
            if base == "%ctaid":
                return ck.block[k]
            return Aff((kernel.block if base == "%ntid" else kernel.grid)[k])
        if name == "%laneid":
            return Aff(0, np.broadcast_to(np.arange(WARP_SIZE, dtype=np.int64),
                                          ck.valid.shape).copy())
        if name == "%warpid":
            return Aff(ck.cls.copy())
        if name == "%nwarpid":
            return Aff(kernel.warps_per_block)
        if name == "%dynamic_smem_size":
            return Aff(self.prog.layout.dynamic_shared_bytes)
        constant = cluster_constant(name, self.prog.entry.cluster, kernel.grid)
        if constant is not None:
            return Aff(constant)
        if name.startswith(UNKNOWN_SPECIALS + ("%lanemask",)):
            return OPAQUE
        return None

    def read(self, op: Operand, t: str, m: Mask) -> Value:
        """An operand as type t over the lanes of m: an exact Aff, or Opaque."""
        if op.kind == "imm":
            if t == "pred":  # mov.pred %p, 0 (debug code): every lane, or none
                return self.ck.all if int(immediate(op.value, op.ftype, "u32")) else \
                    self.ck.minus(self.ck.all, self.ck.all)
            if t not in INT_DTYPES:
                return OPAQUE
            return Aff(int(immediate(op.value, op.ftype, t)))
        if op.kind == "sym":
            where = self.prog.layout.where.get(op.name)
            if where is None:
                raise NotClosed("the address of something that is not a variable")
            return Aff(where[1] + op.offset)
        if op.kind != "reg":
            return OPAQUE
        if t == "pred":
            return self.resolved(self.regs.get(op.name), m)
        sp = self.special(op.name) if op.name not in self.regs else None
        v = sp if sp is not None else self.resolved(self.regs.get(op.name), m)
        if not isinstance(v, Aff) or t not in INT_DTYPES:
            return v if isinstance(v, Carried) else OPAQUE
        return wrapped(self.ck, v, t, self.register_bits(op.name) if sp is None else None)

    def write(self, op: Operand, value: Value, t: str, m: Mask) -> None:
        """Set a destination on the lanes of m: an integer checked to fit t (wrapped as the
        lane path wraps it where it is concrete)."""
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise NotClosed("a destination that is not a register")
        if isinstance(value, Aff):
            value = wrapped(self.ck, value, t) if t in INT_DTYPES else OPAQUE
        self.assign(op.name, value, m)

    # ------------------------------------------------------------------ dispatch

    def execute(self, ins: Instruction, pc: int, m: Mask) -> None:
        op = ins.op
        if op in NO_OPS:
            return
        if op in ("bar", "barrier"):
            if "red" in ins.opcode:
                raise NotClosed("a block reduction")
            return
        handler = _HANDLERS.get(op)
        if handler is None or ins.problem is not None:
            raise NotClosed(f"`{ins.text}` has no closed form")
        handler(self, ins, pc, m)


_HANDLERS: Mapping[str, Callable[["ClosedMachine", Instruction, int, Mask], None]] = {
    op: closed_ops.arith for op in (
        "add", "sub", "mul", "mad", "div", "rem", "min", "max", "shl", "shr", "neg", "abs",
        "fma", "sqrt", "rsqrt", "rcp", "sin", "cos", "lg2", "ex2", "tanh", "copysign")} | {
    "and": closed_ops.bits_op, "or": closed_ops.bits_op, "xor": closed_ops.bits_op,
    "not": closed_ops.bits_op, "setp": closed_ops.setp, "selp": closed_ops.selp,
    "mov": closed_ops.mov, "cvt": closed_ops.convert, "cvta": closed_ops.cvta,
    "mbarrier": closed_ops.mbarrier,
    "bfi": closed_ops.bit_insert, "bfe": closed_ops.bit_extract, "shfl": closed_ops.shuffle,
    "mma": closed_ops.matrix_product,
    "ld": closed_memory.load, "ldu": closed_memory.load, "st": closed_memory.store,
    "atom": closed_memory.atom, "red": closed_memory.atom, "cp": closed_memory.cp_async,
    "ldmatrix": closed_memory.matrix_rows, "stmatrix": closed_memory.matrix_rows,
    "wmma": closed_memory.wmma_access}


def nested_events(kernel: "CompiledKernel", lo: int, hi: int, box: tuple[Any, ...] | None
                  ) -> list[tuple[str, int, RepeatedBatch, tuple[int, ...]]]:
    """(space, instruction index, RepeatedBatch) of every global and shared access of warps
    [lo, hi) in program order, a row per warp (or per class over `box`, a box of blocks),
    each with the symbols of the loop runs it lies in (outermost first; not the box's block
    coordinates): a run's events come together, in the order the body
    runs them once (a body unrolled by its period: each copy's in turn)."""
    chunk = Chunk(kernel, lo, hi, box)
    machine = ClosedMachine(kernel, chunk)
    with np.errstate(all="ignore"):
        events = machine.run()
    blocks = {s for s, _ in chunk.block_loops}
    return [(space, k, repeated(chunk, address, m, loops),
             tuple(s for s, _ in loops if s not in blocks))
            for space, k, address, m, loops in events if m.any()]
