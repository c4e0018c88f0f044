"""A natural loop (loops.py) of the closed-form machine run once for all its iterations.

At the header, one probe iteration (its accesses discarded) gives each register's change;
the hypothesis is that at iteration j every register the body reads before setting it
(loops.read_first: the others it computes afresh) whose change is a constant holds its
entry value + j * change (the others are Carried: untracked, never an address or a branch).
The body then runs with j symbolic over the lanes that entered: the trip count comes from
the latch's predicate (`d0 + c j op 0`, d0 and c alike on every active lane), the body runs
again with j ranging over [0, trips) (every value checked to fit its type over that range,
every branch inside invariant in j), and the hypothesis is verified: at the back edge each
register holds its value at j + 1. Each access in the body is then one RepeatedBatch over the
loop (stride: its address's coefficient of j). A branch inside whose predicate changes at
iteration s (loops.Switches) splits the loop: iterations [0, s) run so, the rest after them
(from the header again). A do-while loop that fails so runs again in pairs of iterations
(the body twice in a row, j counting pairs; the odd last iteration after them): a register
that toggles (`cur = 1 - cur`, two buffers or barriers swapped) steps by a constant over two.
Any failure returns None: the loop runs as code, an iteration at a time.

A while loop (loops.while_exit: the test at the top, as a debug compile lays loops out) runs
the same way with its exit test made to fall through inside the body (j < trips, where it
does not hold): the trip count is the first j where the test exits (zero when every lane
exits at once), and after the last iteration the header's straight run up to the test runs
once more, as the exiting lanes run it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..closed_forms import Aff, Mask, Varies
from .loops import GiveUp, Switches, first_true, trips, while_exit
from .symbolic import (
    CARRIED,
    Carried,
    Guarded,
    SymPred,
    Value,
    same_mask,
    substituted,
    symbol_term,
    zero,
)

if TYPE_CHECKING:
    from .closed import ClosedMachine


def compressed(machine: "ClosedMachine", header: int, m: Mask) -> int | None:
    """Run the loop at `header` for its iterations at once over the lanes m -> where the
    lanes go on: after the latch, or the header again where a branch inside switches at an
    iteration (loops.Switches: the iterations before it ran); None (state and accesses as
    before) where it does not apply."""
    saved, events, loops = dict(machine.regs), len(machine.events), len(machine.loops)
    do_while = machine.code[machine.headers[header]].guard is not None
    for copies in (1, 2) if do_while else (1,):
        try:
            resume = _run(machine, header, m, saved, copies)
            if resume is not None:
                return resume
        except (GiveUp, Varies):
            pass
        machine.regs = dict(saved)
        del machine.events[events:], machine.loops[loops:]
    return None


def _body(machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None,
          copies: int = 1) -> None:
    """`copies` iterations from the header to the latch (a while loop's exit test falls
    through)."""
    if exit_at is not None:
        machine.falls_through.add(exit_at)
    try:
        for _ in range(copies):
            machine.region(header, machine.headers[header], m, False)
    finally:
        machine.falls_through.discard(exit_at)


def _test(machine: "ClosedMachine", header: int, exit_at: int, m: Mask) -> Mask:
    """Run a while loop's header up to its exit test (no memory access, no branch) over m ->
    the lanes that exit."""
    for pc in range(header, exit_at):
        ins = machine.code[pc]
        if pc in machine.sites:
            raise GiveUp()
        act = machine.guarded(ins, m)
        if act.any():
            machine.execute(ins, pc, act)
    return machine.guarded(machine.code[exit_at], m)


def _run(machine: "ClosedMachine", header: int, m: Mask, entry: dict[str, Value],
         copies: int) -> int | None:
    ck = machine.ck
    latch = machine.headers[header]
    exit_at = None if machine.code[latch].guard is not None else \
        while_exit(machine.prog.entry, header, latch)
    name, negated = machine.code[latch if exit_at is None else exit_at].guard or ("", False)
    if exit_at is not None:
        leaving = _test(machine, header, exit_at, m)
        if not ck.minus(m, leaving).any():
            return latch + 1  # no iteration: the test ran, every lane goes on after it
        if leaving.any():
            return None
        machine.regs = dict(entry)
    events = len(machine.events)
    _body(machine, header, m, exit_at)  # the probe
    if copies > 1:  # a second iteration only where every lane goes on to it
        if ck.minus(m, machine.guarded(machine.code[latch], m)).any():
            return None
        _body(machine, header, m, exit_at, copies - 1)
    probe = machine.regs
    del machine.events[events:]
    steps: dict[str, int] = {}
    start: dict[str, Value] = dict(entry)
    sym = next(machine.symbols)
    carried = machine.kernel.loop_reads[header]
    for reg, after in probe.items():
        before = entry.get(reg)
        if after is before or reg not in carried:  # the others: set afresh each iteration
            continue
        a, b = machine.resolved(before, m), machine.resolved(after, m)
        if isinstance(a, Aff) and isinstance(b, Aff):
            step = ck.constant(b + a.scaled(-1), m)
            if step is not None:
                steps[reg] = step
                start[reg] = _on(machine, a + symbol_term(sym, step), before, m)
                continue
        if isinstance(a, Mask) and isinstance(b, Mask) and same_mask(a, b):
            continue
        if before is not None:
            start[reg] = _on(machine, CARRIED, before, m)
    loop = (header, exit_at, name, negated)
    count, leaves = _pass(machine, loop, m, start, sym, 1, copies)  # trip count from j = 0
    if not count or copies > 1 and leaves not in (count, count - 1):
        return None
    del machine.events[events:]
    # the iterations (runs of the copies) at once: all, or those before a branch switches,
    # or before the odd last iteration of a loop run in pairs
    run = count if leaves in (None, count) else count - 1
    while run:
        try:
            if _pass(machine, loop, m, start, sym, run, copies) != (count, leaves):
                return None
            break
        except Switches as switch:
            if switch.symbol != sym or not 0 < switch.at < run:
                raise
            del machine.events[events:]
            run = switch.at
    if not run:
        return None
    end = machine.regs
    for reg, step in steps.items():
        was = machine.resolved(start[reg], m)
        now = machine.resolved(end.get(reg), m)
        if not isinstance(now, Aff) or not isinstance(was, Aff) or \
                not zero(ck, now + was.scaled(-1) + Aff(-step), m):
            return None
    for reg, v in start.items():  # registers the hypothesis holds invariant
        if reg in carried and reg not in steps and end.get(reg) is not v and \
                not _same(machine, v, end.get(reg), m):
            if not isinstance(machine.resolved(v, m), Carried):
                return None
    _settle(machine, entry, start, end, steps, sym, run, m)
    if run < count:
        return header  # the iterations from the switch (or the odd last one) on
    if exit_at is not None:
        _test(machine, header, exit_at, m)  # the test that ends the loop
    return latch + 1


def _pass(machine: "ClosedMachine", loop: tuple[int, int | None, str, bool], m: Mask,
          start: dict[str, Value], sym: int, span: int, copies: int
          ) -> tuple[int | None, int | None]:
    """`copies` iterations of the body in a row from `start`, with j (a run of them) over
    [0, span) -> (the loop's trip count in runs, from the last copy's latch predicate; the
    run j where the first copy's latch leaves the loop, for two copies, else None) (loop:
    header, a while loop's exit test, the latch's predicate and whether it is negated)."""
    header, exit_at, name, negated = loop
    machine.ck.trips[sym] = span
    machine.regs = dict(start)
    machine.loops.append((sym, span))
    leaves = None
    try:
        _body(machine, header, m, exit_at)
        if copies > 1:
            first = _trips(machine, name, negated, sym, m, False)
            leaves = -1 if first is None else first - 1
            _body(machine, header, m, exit_at, copies - 1)
    finally:
        machine.loops.pop()
    return _trips(machine, name, negated, sym, m, exit_at is not None), leaves


def _on(machine: "ClosedMachine", value: Value, before: Value, m: Mask) -> Value:
    """`value` on the lanes of m, `before` elsewhere."""
    return value if machine.whole(m) else Guarded(m, value, before)


def _same(machine: "ClosedMachine", a: Value, b: Value, m: Mask) -> bool:
    x, y = machine.resolved(a, m), machine.resolved(b, m)
    if isinstance(x, Aff) and isinstance(y, Aff):
        return zero(machine.ck, x + y.scaled(-1), m)
    if isinstance(x, Mask) and isinstance(y, Mask):
        return same_mask(machine.ck.combine(x, m, np.logical_and),
                         machine.ck.combine(y, m, np.logical_and))
    return x is y


def _trips(machine: "ClosedMachine", name: str, negated: bool, sym: int, m: Mask,
           exits: bool) -> int | None:
    """The loop's trip count from its latch predicate (a while loop's exit test, `exits`),
    if the same for every lane of m."""
    p = machine.resolved(machine.regs.get(name), m)
    if not isinstance(p, SymPred):
        return None
    coef = dict(p.d.coef)
    c = coef.pop(sym, 0)
    if coef:
        return None
    d0 = machine.ck.constant(Aff(p.d.base, p.d.off), m)
    if d0 is None:
        return None
    op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}[p.op] \
        if negated else p.op
    return first_true(d0, c, op) if exits else trips(d0, c, op)


def _settle(machine: "ClosedMachine", entry: dict[str, Value], start: dict[str, Value],
            end: dict[str, Value], steps: dict[str, int], sym: int, count: int, m: Mask
            ) -> None:
    """The registers after the loop: entry + trips * step for the counted ones, the last
    iteration's value (j = trips - 1) for the others the body set, Carried ones untracked."""
    out = dict(entry)
    for reg, v in end.items():
        if v is entry.get(reg):
            continue
        if reg in steps:
            was = machine.resolved(entry.get(reg), m)
            assert isinstance(was, Aff)
            value: Value = was + Aff(steps[reg] * count)
        else:
            value = _last(machine.resolved(v, m), sym, count - 1)
        out[reg] = value if machine.whole(m) else Guarded(m, value, entry.get(reg))
    machine.regs = out


def _last(v: Value, sym: int, at: int) -> Value:
    if isinstance(v, Aff):
        return substituted(v, sym, at)
    if isinstance(v, SymPred):
        return SymPred(substituted(v.d, sym, at), v.op)
    if isinstance(v, Guarded):
        return CARRIED
    return v
