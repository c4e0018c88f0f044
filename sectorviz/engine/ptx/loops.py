"""Natural loops of an entry, as nvcc lays them out, and their trip counts in closed form.

A loop is a contiguous range [header, latch] whose last instruction is the only branch back
to its header, and that no branch from outside enters except at the header. Two shapes:
a do-while, `@%p bra header` at the latch (the body runs, then the latch decides: -O3's
rotated loops), and a while loop, an unconditional `bra header` at the latch with the test
at the top, a straight run of the header's instructions ending in `@%p bra EXIT` to the
instruction after the latch (`while_exit`: the debug compile, -G, lays loops out so). Its
trip count, when the deciding predicate is `d0 + c * j op 0` in the iteration j with d0 and
c the same on every active lane, is solved exactly (`trips`, `first_true`).
"""

from __future__ import annotations

from typing import NamedTuple

from ..closed_forms import Varies
from .bits import INT_DTYPES
from .cfg import BRANCHES, EXITS
from .parse import Entry, Instruction, Operand
from .program import NO_DESTINATION, set_registers, source_registers


class GiveUp(Exception):
    """A loop is not compressible as it stands (a way out of its body): iterate it."""


class Switches(Varies):
    """A branch inside a compressed loop whose predicate, the same on every lane over
    iterations [0, at) of the loop with symbol `symbol`, changes at iteration `at` (a
    `bkIdx + BK < K` test that fails only in the last one): those iterations still run at
    once, the rest after them."""

    def __init__(self, symbol: int, at: int):
        super().__init__()
        self.symbol, self.at = symbol, at


def natural_loops(entry: Entry) -> dict[int, int]:
    """Header instruction index -> latch instruction index, for each loop of that shape."""
    code = entry.instructions
    branches = [(k, entry.labels.get(ins.operands[0].name, -1)) for k, ins in enumerate(code)
                if ins.op in BRANCHES and ins.operands]
    back: dict[int, list[int]] = {}
    for k, target in branches:
        if 0 <= target <= k:
            back.setdefault(target, []).append(k)
    out = {}
    for header, latches in back.items():
        latch = latches[0]
        if len(latches) != 1 or \
                code[latch].guard is None and while_exit(entry, header, latch) is None:
            continue
        entered = any(header < target <= latch and not header <= k <= latch
                      for k, target in branches)
        if not entered:
            out[header] = latch
    return out


def while_exit(entry: Entry, header: int, latch: int) -> int | None:
    """The exit test of a while loop [header, latch] (module doc): the index of the first
    branch from the header on, when it is guarded, goes to latch + 1 and only instructions
    that are no branch come before it; None for any other shape."""
    for k in range(header, latch):
        ins = entry.instructions[k]
        if ins.op in BRANCHES:
            target = entry.labels.get(ins.operands[0].name) if ins.operands else None
            return k if ins.guard is not None and target == latch + 1 else None
    return None


def read_first(entry: Entry, header: int, latch: int) -> set[str]:
    """Registers that some path through the loop [header, latch] (from its header, inner
    branches and back edges followed, its own back edge not) reads before it sets them: the
    only registers whose value at the header an iteration sees. The others (a value the
    body computes afresh each iteration) need no hypothesis across iterations."""
    code = entry.instructions
    successors: list[list[int]] = []
    for k in range(header, latch + 1):
        ins = code[k]
        target = entry.labels.get(ins.operands[0].name, -1) \
            if ins.op in BRANCHES and ins.operands else -1
        after = [] if ins.op in EXITS + BRANCHES and ins.guard is None else [k + 1]
        inside = [t for t in after + [target] if header <= t <= latch]
        successors.append([t for t in inside if (k, t) != (latch, header)])
    reads = [source_registers(code[k]) for k in range(header, latch + 1)]
    sets = [set_registers(code[k]) for k in range(header, latch + 1)]
    live: list[set[str]] = [set() for _ in reads]
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(live))):
            later = set().union(*(live[t - header] for t in successors[k]))
            now = reads[k] | (later - sets[k])
            if now != live[k]:
                live[k], changed = now, True
    return live[0]


class Counter(NamedTuple):
    """A register that one unguarded `add` / `sub` of type `type` steps by `operand` once
    per iteration (an immediate, or a register the loop does not write or computes from
    such registers alone: `computed`, the instructions that do, in order); sign -1 for
    sub."""

    operand: Operand
    sign: int
    type: str
    computed: tuple[int, ...] = ()


# what an iteration may compute a counter's step with: integer arithmetic, no memory
STEP_OPS = ("add", "sub", "mul", "mad", "shl", "shr", "cvt", "mov", "neg", "and", "or")


def counters(entry: Entry, header: int, latch: int, carried: set[str]
             ) -> dict[str, Counter | None] | None:
    """The registers of `carried` that the loop [header, latch] writes -> the Counter of
    each, or None for a float register (its value carried, not known); None where one is
    neither: the closed forms then find the steps by running an iteration."""
    code = entry.instructions
    writes = _writes(code, header, latch + 1)
    branches = _branches(entry, header, latch)
    out: dict[str, Counter | None] = {}
    for reg in sorted(carried & writes.keys()):
        if (entry.register_type(reg) or "").startswith("f"):
            out[reg] = None
            continue
        found = _counter(code, reg, writes)
        if found is None or \
                not all(_once_per_iteration(k, header, latch, branches) for k in found[1]):
            return None
        out[reg] = found[0]
    return out


# what the instructions computing a latch's predicate may be: arithmetic, no memory
SLICE_OPS = STEP_OPS + ("setp", "selp", "min", "max", "xor", "not", "div", "rem", "abs",
                        "bfe", "bfi")


def latch_slice(entry: Entry, header: int, latch: int) -> tuple[int, ...] | None:
    """The instructions of the loop [header, latch] that compute the predicate deciding
    whether an iteration goes on, in program order. A do-while loop's latch predicate: each
    instruction unguarded, of SLICE_OPS, run once in every iteration, and every register it
    reads set before it in the iteration by such instructions alone, or not at all (it holds
    its value at the iteration's start); a while loop's exit test: the header's run up to it
    (_exit_test). Run from an iteration's start they give that predicate without the rest of
    the body (its inner loops above all); None where it is not so computed."""
    code = entry.instructions
    guard = code[latch].guard
    if guard is None:
        return _exit_test(entry, header, latch)
    writes = _writes(code, header, latch)
    branches = _branches(entry, header, latch)
    found: set[int] = set()
    todo = [(guard[0], latch)]
    while todo:
        reg, before = todo.pop()
        for k in writes.get(reg, []):
            ins = code[k]
            if k >= before or k in found:
                continue
            if ins.guard is not None or ins.op not in SLICE_OPS or \
                    not _once_per_iteration(k, header, latch, branches):
                return None
            found.add(k)
            todo += [(name, k) for name in source_registers(ins)]
    return tuple(sorted(found))


def _exit_test(entry: Entry, header: int, latch: int) -> tuple[int, ...] | None:
    """A while loop's header run up to its exit test (while_exit), where nothing after the
    test sets the test's predicate; else None."""
    code = entry.instructions
    exit_at = while_exit(entry, header, latch)
    guard = None if exit_at is None else code[exit_at].guard
    if exit_at is None or guard is None or \
            any(guard[0] in _written(code[k]) for k in range(exit_at + 1, latch + 1)):
        return None
    return tuple(range(header, exit_at))


def _writes(code: list[Instruction], start: int, stop: int) -> dict[str, list[int]]:
    """Register -> the instructions of [start, stop) that may set it, in order."""
    writes: dict[str, list[int]] = {}
    for k in range(start, stop):
        for name in _written(code[k]):
            writes.setdefault(name, []).append(k)
    return writes


def _branches(entry: Entry, header: int, latch: int) -> list[tuple[int, int]]:
    """(instruction, target) of each branch of the loop [header, latch) (-1: no label)."""
    code = entry.instructions
    return [(k, entry.labels.get(code[k].operands[0].name, -1))
            for k in range(header, latch) if code[k].op in BRANCHES and code[k].operands]


def _written(ins: Instruction) -> set[str]:
    """Registers an instruction may set (guarded or not)."""
    if ins.op in NO_DESTINATION or not ins.operands:
        return set()
    dest = ins.operands[0]
    return {p.name for p in (dest.parts if dest.kind == "vec" else (dest,)) if p.kind == "reg"}


def _counter(code: list[Instruction], reg: str, writes: dict[str, list[int]]
             ) -> tuple[Counter, list[int]] | None:
    """`reg`'s Counter and the instructions that step it: its one write `add r, r, x` /
    `add r, x, r` / `sub r, r, x` (x an immediate or a register the loop does not write),
    or, as -G writes `i++` (`mov %r6, %r73; ...; add %r7, %r6, 1; mov %r73, %r7`), its one
    write a copy of a register written so once before it, from reg or a copy of reg made
    before that; None for any other writes."""
    at = writes[reg]
    if len(at) != 1:
        return None
    source = _copy_of(code[at[0]])
    steps = [at[0]] if source is None else writes.get(source, [])
    if len(steps) != 1 or steps[0] > at[0]:
        return None
    ins = code[steps[0]]
    t = ins.opcode[-1]
    if ins.guard is not None or ins.op not in ("add", "sub") or len(ins.operands) != 3 or \
            t not in INT_DTYPES or len(ins.opcode) != 2:
        return None
    a, b = ins.operands[1:]
    mine = [(k, copy) for k, op in enumerate((a, b))
            if (copy := _start_value(code, op, reg, writes, steps[0])) is not None]
    if len(mine) != 1 or (ins.op == "sub" and mine[0][0] != 0):
        return None
    other = (b, a)[mine[0][0]]
    if other.kind not in ("reg", "imm"):
        return None
    computed = _invariant(code, other.name, writes, steps[0]) if other.kind == "reg" else []
    if computed is None:
        return None
    return Counter(other, -1 if ins.op == "sub" else 1, t, tuple(computed)), \
        sorted({at[0], steps[0], *mine[0][1], *computed})


def _invariant(code: list[Instruction], reg: str, writes: dict[str, list[int]], before: int
               ) -> list[int] | None:
    """The instructions of the loop that compute `reg` for instruction `before` from
    registers the loop does not write (each written once, unguarded, by integer arithmetic
    of STEP_OPS, before its use), in program order: [] for a register the loop does not
    write; None where it is not so computed."""
    at = writes.get(reg)
    if at is None:
        return []
    ins = code[at[0]]
    if len(at) != 1 or at[0] >= before or ins.guard is not None or ins.op not in STEP_OPS or \
            len(ins.operands) < 2 or ins.opcode[-1] not in INT_DTYPES:
        return None
    found = [at[0]]
    for op in ins.operands[1:]:
        if op.kind not in ("reg", "imm"):
            return None
        inner = _invariant(code, op.name, writes, at[0]) if op.kind == "reg" else []
        if inner is None:
            return None
        found += inner
    return sorted(set(found))


def _copy_of(ins: Instruction) -> str | None:
    """The register an unguarded `mov r, s` copies, else None."""
    if ins.op != "mov" or ins.guard is not None or len(ins.operands) != 2 or \
            ins.operands[1].kind != "reg":
        return None
    return ins.operands[1].name


def _start_value(code: list[Instruction], op: Operand, reg: str,
                 writes: dict[str, list[int]], at: int) -> list[int] | None:
    """Whether operand `op` of instruction `at` holds reg's value at the iteration's start
    -> the copies that make it so ([] for reg itself; the one `mov op, reg` before `at`),
    else None."""
    if op.kind != "reg":
        return None
    if op.name == reg:
        return []
    copies = writes.get(op.name, [])
    return copies if len(copies) == 1 and copies[0] < at and \
        _copy_of(code[copies[0]]) == reg else None


def _once_per_iteration(pc: int, header: int, latch: int, branches: list[tuple[int, int]]
                        ) -> bool:
    """Whether instruction pc of the loop [header, latch] runs once in every iteration: in
    no inner loop (a branch back over it) and jumped over by no branch inside the loop."""
    return not any(header <= target <= pc <= k or k < pc < target <= latch
                   for k, target in branches)


def _holds(x: int, op: str) -> bool:
    return {"<": x < 0, "<=": x <= 0, ">": x > 0, ">=": x >= 0, "==": x == 0,
            "!=": x != 0}[op]


NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def first_true(d0: int, c: int, op: str) -> int | None:
    """The least j >= 0 with `d0 + c j op 0`, None if there is none."""
    if _holds(d0, op):
        return 0
    if op == "==":
        return -d0 // c if c and -d0 % c == 0 and -d0 // c >= 0 else None
    if op == "!=":
        return 1 if c else None
    if op in (">", ">="):
        d0, c, op = -d0, -c, {">": "<", ">=": "<="}[op]
    if c >= 0:  # d0 + c j only grows or stays: < and <= never start to hold
        return None
    # d0 + c j < 0  <=>  j > d0 / -c ;  d0 + c j <= 0  <=>  j >= d0 / -c
    k = -c
    return d0 // k + 1 if op == "<" else -(-d0 // k)


def first_change(values: list[int], c: int, op: str) -> int | None:
    """The least j > 0 where `v + c j op 0` differs from j = 0 for one of the values v, None
    if it never does."""
    changes = [first_true(v, c, NEGATED[op] if _holds(v, op) else op) for v in values]
    return min((j for j in changes if j is not None), default=None)


def trips(d0: int, c: int, op: str) -> int | None:
    """Iterations of a do-while loop that goes on while `d0 + c j op 0` (j the iteration
    just run): 1 + the first j where it fails; None if it never fails."""
    first = first_true(d0, c, NEGATED[op])
    return None if first is None else first + 1
