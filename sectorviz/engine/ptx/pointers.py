"""Which names a register's value may point into, before the entry runs: a flow-insensitive
pass over the PTX. A register derived from a pointer parameter or a variable's address by
moves, conversions and additions points into it; one loaded from memory points anywhere
("?"), but for one loaded from local variables (a -G stack frame: a lambda's captured
pointer, the address of an object a callee was given, a copy of `this`): it points where the
values stored at those bytes of the frame point.

A place is (name, byte offset in it, or None where unknown); offsets are followed in local
variables only (the frame slots -G reads and writes at fixed offsets of %SP), and a register
given more than MAX_OFFSETS offsets of one variable (a pointer stepped in a loop) has any."""

from __future__ import annotations

from typing import Any

from .bits import WIDTH
from .parse import Entry, Instruction, Operand

POINTER_OPS = ("mov", "cvta", "add", "sub", "mad", "selp", "cvt", "and", "or", "slct")
KEEPS_OFFSET = ("mov", "cvta", "cvt", "selp", "slct")  # the value is one of the operands
MAX_OFFSETS = 8
UNKNOWN = "?"

Place = tuple[str, int | None]
Cell = tuple[str, int | None, int]  # local variable, byte offset (None: any), bytes


class _Pass:
    """The places of every register, and of the values stored in local variables' cells."""

    def __init__(self, params: dict[str, str], variables: set[str], local: frozenset[str]):
        self.params, self.variables, self.local = params, variables, local
        self.places: dict[str, set[Place]] = {}
        self.stored: dict[Cell, set[Place]] = {}
        self.cells: dict[str, set[Cell]] = {}  # the stored cells of each variable
        self.changed = False

    def run(self, entry: Entry) -> dict[str, set[Place]]:
        self.changed = True
        while self.changed:
            self.changed = False
            for ins in entry.instructions:
                self.step(ins)
        return self.places

    def step(self, ins: Instruction) -> None:
        if ins.op == "st" and not ins.has("param"):
            self.store(ins)
            return
        if not ins.operands or ins.operands[0].kind != "reg":
            return
        found: set[Place] = set()
        if ins.op == "ld" and ins.has("param"):
            if ins.operands[1].name in self.params:
                found.add((self.params[ins.operands[1].name], None))
        elif ins.op in ("ld", "ldu"):
            found = self.load(ins.operands[1], _width(ins))
        elif ins.op == "atom":
            found.add((UNKNOWN, None))
        elif ins.op in POINTER_OPS:
            found = self.derived(ins)
        self.add(self.places, ins.operands[0].name, found)

    def of(self, op: Operand) -> set[Place]:
        return _of(self.places, self.variables, self.local, op)

    def derived(self, ins: Instruction) -> set[Place]:
        """A pointer op's places: an operand's (mov, cvt, selp), shifted by a constant
        (add, sub of an immediate), else at any offset."""
        sources = [op for op in ins.operands[1:] if op.kind in ("reg", "sym")]
        found = set().union(*(self.of(op) for op in sources))
        constants = [op.value for op in ins.operands[1:] if op.kind == "imm"]
        if ins.op in KEEPS_OFFSET:
            return found
        if ins.op in ("add", "sub") and len(sources) == 1 and len(constants) == 1:
            return _shifted(found, constants[0] if ins.op == "add" else -constants[0])
        return {(name, None) for name, _ in found}

    def frame(self, address: Operand) -> set[Place] | None:
        """The frame places an address operand reaches, or None where it may reach anything
        but local variables."""
        found = reached(self.places, self.variables, self.local, address)
        if found and all(name in self.local for name, _ in found):
            return found
        return None

    def load(self, address: Operand, width: int) -> set[Place]:
        frame = self.frame(address)
        if frame is None:
            return {(UNKNOWN, None)}
        return set().union(*(self.stored[cell] for name, offset in frame
                             for cell in self.cells.get(name, ())
                             if _overlap(cell, (name, offset, width))))

    def store(self, ins: Instruction) -> None:
        if len(ins.operands) < 2:
            return
        frame = self.frame(ins.operands[0])
        if frame is None:
            return
        value = ins.operands[1]
        parts = value.parts if value.kind == "vec" else (value,)
        width = _width(ins)
        for j, part in enumerate(parts):
            for name, offset in frame:
                cell = (name, None if offset is None else offset + j * width, width)
                self.add(self.stored, cell, self.of(part))
                if cell in self.stored:
                    self.cells.setdefault(name, set()).add(cell)

    def add(self, table: dict[Any, set[Place]], key: object, found: set[Place]) -> None:
        old = table.get(key, set())
        if any(p not in old and (p[0], None) not in old for p in found):
            table[key] = _widened(old | found)
            self.changed = True


def _of(places: dict[str, set[Place]], variables: set[str], local: frozenset[str],
        op: Operand) -> set[Place]:
    """The places an operand (a register, or a variable's name) points into."""
    if op.name in variables:
        return {(op.name, 0 if op.name in local else None)}
    return places.get(op.name, set()) if op.kind in ("reg", "addr") else set()


def reached(places: dict[str, set[Place]], variables: set[str], local: frozenset[str],
            address: Operand) -> set[Place]:
    """The places an address operand `[base+offset]` reaches."""
    return _shifted(_of(places, variables, local, address), address.offset)


def _width(ins: Instruction) -> int:
    """Bytes of one part of a memory instruction's data."""
    return next((WIDTH[m] for m in reversed(ins.opcode) if m in WIDTH), 1)


def _shifted(found: set[Place], by: int) -> set[Place]:
    return {(name, None if offset is None else offset + by) for name, offset in found}


def _widened(found: set[Place]) -> set[Place]:
    """A name at any offset in place of its offsets, where it has more than MAX_OFFSETS or
    is already at any offset (so the places only grow, and the pass ends)."""
    counts: dict[str, int] = {}
    for name, offset in found:
        counts[name] = counts.get(name, 0) + (1 if offset is not None else MAX_OFFSETS + 1)
    wide = {name for name, n in counts.items() if n > MAX_OFFSETS}
    return {(name, None) if name in wide else (name, offset) for name, offset in found}


def _overlap(a: Cell, b: Cell) -> bool:
    if a[0] != b[0]:
        return False
    if a[1] is None or b[1] is None:
        return True
    return a[1] < b[1] + b[2] and b[1] < a[1] + a[2]


def pointer_places(entry: Entry, params: dict[str, str], variables: set[str],
                   local: frozenset[str] = frozenset()) -> dict[str, set[Place]]:
    """Register -> the places its value may point into: pattern arrays (from `params`, PTX
    parameter -> array), variables (`local`: those in local memory, with offsets) and "?"
    (anywhere)."""
    return _Pass(params, variables, local).run(entry)


def names(places: set[Place]) -> set[str]:
    return {name for name, _ in places}
