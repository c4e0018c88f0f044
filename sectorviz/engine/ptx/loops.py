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

from .cfg import BRANCHES
from .parse import Entry


class GiveUp(Exception):
    """A loop is not compressible as it stands (a way out of its body): iterate it."""


def natural_loops(entry: Entry) -> dict[int, int]:
    """Header instruction index -> latch instruction index, for each loop of that shape."""
    code = entry.instructions
    back: dict[int, list[int]] = {}
    for k, ins in enumerate(code):
        if ins.op in BRANCHES and ins.operands:
            target = entry.labels.get(ins.operands[0].name)
            if target is not None and target <= k:
                back.setdefault(target, []).append(k)
    out = {}
    for header, latches in back.items():
        latch = latches[0]
        if len(latches) != 1 or \
                code[latch].guard is None and while_exit(entry, header, latch) is None:
            continue
        entered = any(ins.op in BRANCHES and ins.operands
                      and header < entry.labels.get(ins.operands[0].name, -1) <= latch
                      and not header <= k <= latch for k, ins in enumerate(code))
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


def trips(d0: int, c: int, op: str) -> int | None:
    """Iterations of a do-while loop that goes on while `d0 + c j op 0` (j the iteration
    just run): 1 + the first j where it fails; None if it never fails."""
    first = first_true(d0, c, NEGATED[op])
    return None if first is None else first + 1
