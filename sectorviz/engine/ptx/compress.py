"""A natural loop (loops.py) of the closed-form machine run once for all its iterations.

At the header, one probe iteration (its accesses discarded) gives each register's change;
the hypothesis is that at iteration j every register whose change is a constant holds its
entry value + j * change (the others are Carried: untracked, never an address or a branch).
The body then runs with j symbolic over the lanes that entered: the trip count comes from
the latch's predicate (`d0 + c j op 0`, d0 and c alike on every active lane), the body runs
again with j ranging over [0, trips) (every value checked to fit its type over that range,
every branch inside invariant in j), and the hypothesis is verified: at the back edge each
register holds its value at j + 1. Each access in the body is then one RepeatedBatch over the
loop (stride: its address's coefficient of j). Where that fails for the whole run but holds
for its first iterations (MIN_PREFIX or more: Triton's last iterations prefetch past K with
their masks false), those run so (the most, found by halving) and the rest as code.
Any other failure returns False: the loop runs as code, an iteration at a time.

A do-while loop whose body cycles a register through a few values by a select (Triton's
software pipeline: the stage index `s = s + 1 > 1 ? 0 : s + 1`, as `add`, `setp`, `selp`)
is not affine in j, but P iterations back to back are, for its period P once its first
iterations have run (`_cycle`: -1, then 0, 1, 0, 1 is 1 peeled and a period of 2): those
run as code, then the rest as above with P copies of the body as one iteration (registers
the body sets before it reads them need no hypothesis), with up to P - 1 more run as code
first so that the iterations left are a multiple of P (each copy's latch predicate but the
last's holds on every iteration; an access of the body is then P RepeatedBatches, in the
order the copies run them).

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
from .cfg import BRANCHES
from .loops import NEGATED, GiveUp, first_true, trips, while_exit
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


MIN_PREFIX = 2  # iterations a loop's first run in closed form must have, the rest as code
MAX_CYCLE = 8  # iterations within which a cycling select must repeat a value (peeled + period)


def compressed(machine: "ClosedMachine", header: int, m: Mask) -> bool:
    """Run the loop at `header` for every iteration at once over the lanes m (where a select
    cycles: its first iterations run as code, the rest unrolled by the period); False where
    it does not apply: the state and accesses as before, or (where only its first iterations
    could) those after them, and the rest runs as code."""
    saved = dict(machine.regs)
    done = _attempt(machine, header, m, saved, 1)
    if done is not False:
        return bool(done)
    cycle = _cycle(machine, header, m, saved)
    if cycle is None:
        return False
    events, loops = len(machine.events), len(machine.loops)
    peeled, period = cycle
    fresh = _written_first(machine, header, machine.headers[header])
    try:  # the iterations left a multiple of the period: one of `period` more peeled ones
        if _peel(machine, header, m, peeled):
            for _ in range(period):
                entry = {r: v for r, v in machine.regs.items() if r not in fresh}
                done = _attempt(machine, header, m, entry, period)
                if done is not False:
                    return bool(done)
                if not _peel(machine, header, m, 1):
                    break
    except (GiveUp, Varies):
        pass
    machine.regs = saved
    del machine.events[events:], machine.loops[loops:]
    return False


def _attempt(machine: "ClosedMachine", header: int, m: Mask, entry: dict[str, Value],
             period: int) -> bool | None:
    """_run, with the state and accesses put back where it fails."""
    events, loops = len(machine.events), len(machine.loops)
    try:
        done = _run(machine, header, m, entry, period)
        if done is not False:
            return done
    except (GiveUp, Varies):
        pass
    machine.regs = dict(entry)
    del machine.events[events:], machine.loops[loops:]
    return False


def _cycle(machine: "ClosedMachine", header: int, m: Mask, entry: dict[str, Value]
           ) -> tuple[int, int] | None:
    """(iterations peeled, period) of a do-while loop whose selects cycle the registers they
    write: the least peeled + period <= MAX_CYCLE after which each holds the value it held
    after `peeled` iterations (found by running the body from `entry`, its accesses
    discarded); None for any other loop, or no cycle that short."""
    latch = machine.headers[header]
    cycling = _cycling_selects(machine, header, latch)
    if not cycling or not cycling <= set(entry) or machine.code[latch].guard is None:
        return None
    events, loops = len(machine.events), len(machine.loops)
    machine.regs = dict(entry)
    states = [entry]
    try:
        for n in range(1, MAX_CYCLE + 1):
            _body(machine, header, m, None)
            states.append(dict(machine.regs))
            for peeled in range(n):
                if (peeled, n) != (0, 1) and all(
                        _same(machine, states[peeled].get(r), machine.regs.get(r), m)
                        for r in cycling):
                    return peeled, n - peeled
    except (GiveUp, Varies):
        pass
    finally:
        machine.regs = dict(entry)
        del machine.events[events:], machine.loops[loops:]
    return None


NO_DESTINATION = ("st", "red", "bra", "bar", "ret", "exit", "cp", "stmatrix", "prefetch")


def _written_first(machine: "ClosedMachine", header: int, latch: int) -> set[str]:
    """Registers the loop [header, latch] sets, unguarded, before it reads them and before
    its first branch: what they held before an iteration never matters (after peeled
    iterations they hold the last one's values, which no hypothesis needs to explain)."""
    read: set[str] = set()
    out: set[str] = set()
    for ins in machine.code[header:latch + 1]:
        if ins.op in BRANCHES:
            break
        sources = ins.operands if ins.op in NO_DESTINATION else ins.operands[1:]
        read.update(p.name for o in sources for p in (o, *o.parts))
        read.update(ins.guard[:1] if ins.guard else ())
        if ins.guard is None and ins.operands and ins.op not in NO_DESTINATION:
            dest = ins.operands[0]
            out.update(p.name for p in (dest, *dest.parts)
                       if p.kind == "reg" and p.name not in read)
    return out


def _peel(machine: "ClosedMachine", header: int, m: Mask, iterations: int) -> bool:
    """Run `iterations` of the loop as code, its accesses kept; False where a lane of m
    leaves the loop after one of them."""
    latch = machine.code[machine.headers[header]]
    for _ in range(iterations):
        _body(machine, header, m, None)
        if machine.ck.minus(m, machine.guarded(latch, m)).any():
            return False
    return True


def _cycling_selects(machine: "ClosedMachine", header: int, latch: int) -> set[str]:
    """Registers a `selp` in the loop [header, latch] writes that the loop reads before it
    (at or above that selp: a value carried from one iteration to the next)."""
    code = machine.code[header:latch + 1]
    out = set()
    for k, ins in enumerate(code):
        if ins.op == "selp" and ins.operands:
            name = ins.operands[0].name
            if any(p.name == name for earlier in code[:k + 1] for o in earlier.operands[1:]
                   for p in (o, *o.parts)):
                out.add(name)
    return out


def _body(machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None) -> None:
    """One iteration from the header to the latch (a while loop's exit test falls through)."""
    if exit_at is not None:
        machine.falls_through.add(exit_at)
    try:
        machine.region(header, machine.headers[header], m, False)
    finally:
        machine.falls_through.discard(exit_at)


def _copies(machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None, period: int,
            latch_guard: str) -> list[Value]:
    """`period` iterations back to back -> the latch predicate after each but the last."""
    predicates = []
    for copy in range(period):
        _body(machine, header, m, exit_at)
        if copy < period - 1:
            predicates.append(machine.regs.get(latch_guard))
    return predicates


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
         period: int) -> bool | None:
    """True where the whole loop ran in closed form; None where its first iterations did
    (MIN_PREFIX or more: the machine is at the header of the next one, and the rest runs as
    code); False where it does not apply."""
    ck = machine.ck
    latch = machine.headers[header]
    exit_at = None if machine.code[latch].guard is not None else \
        while_exit(machine.prog.entry, header, latch)
    name, negated = machine.code[latch if exit_at is None else exit_at].guard or ("", False)
    if exit_at is not None and period > 1:
        return False
    if exit_at is not None:
        leaving = _test(machine, header, exit_at, m)
        if not ck.minus(m, leaving).any():
            return True  # no iteration: the test ran, every lane goes on after the latch
        if leaving.any():
            return False
        machine.regs = dict(entry)
    events = len(machine.events)
    _copies(machine, header, m, exit_at, period, name)  # the probe
    probe = machine.regs
    del machine.events[events:]
    steps: dict[str, int] = {}
    start: dict[str, Value] = dict(entry)
    sym = next(machine.symbols)
    for reg, after in probe.items():
        before = entry.get(reg)
        if after is before:
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
    ck.trips[sym] = 1  # the trip count from j = 0
    machine.regs = dict(start)
    machine.loops.append((sym, 1))
    _copies(machine, header, m, exit_at, period, name)
    machine.loops.pop()
    found = _trips(machine, machine.regs.get(name), negated, sym, m, exit_at is not None)
    del machine.events[events:]
    if not found:
        return False
    run = _Run(machine, header, m, exit_at, period, (name, negated), sym, start, steps)
    if run.verified(found, found):
        _settle(machine, entry, start, machine.regs, steps, sym, found, m)
        if exit_at is not None:
            _test(machine, header, exit_at, m)  # the test that ends the loop
        return True
    del machine.events[events:]
    done = _longest_prefix(run, found, events) if exit_at is None else 0
    if done < MIN_PREFIX:
        return False
    _settle(machine, entry, start, machine.regs, steps, sym, done, m)
    return None


def _longest_prefix(run: "_Run", found: int, events: int) -> int:
    """The most iterations (of found - 1 at most) that verify, found by halving, with their
    accesses and end state in the machine; 0 where none does."""
    good, bad = 0, found
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if run.verified(mid, found) else (good, mid)
        del run.machine.events[events:]
    return good if good and run.verified(good, found) else 0


class _Run:
    """A loop's body (its copies, for a period) run with j over [0, span) from the state at
    iteration j: its registers at j = 0 and the constant change of those that step."""

    def __init__(self, machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None,
                 period: int, latch: tuple[str, bool], sym: int, start: dict[str, Value],
                 steps: dict[str, int]):
        self.machine, self.header, self.m, self.exit_at = machine, header, m, exit_at
        self.period, self.latch, self.sym = period, latch, sym
        self.start, self.steps = start, steps

    def verified(self, span: int, found: int) -> bool:
        """Whether every j in [0, span) runs the body alike (its branches, selects and
        values invariant or affine in j), the loop goes on through it (its last iteration
        may end the loop where span = found, the trip count) and at the back edge each
        register holds its value at j + 1; the machine's state is then the body's at j."""
        machine, m, sym = self.machine, self.m, self.sym
        (name, negated), ck = self.latch, machine.ck
        ck.trips[sym] = span
        machine.regs = dict(self.start)
        machine.loops.append((sym, span))
        try:
            inner = _copies(machine, self.header, m, self.exit_at, self.period, name)
        except (GiveUp, Varies):
            return False
        finally:
            machine.loops.pop()
        last = machine.regs.get(name)
        if span == found:
            ends = _trips(machine, last, negated, sym, m, self.exit_at is not None) == found
        else:
            ends = _holds_for(machine, last, negated, sym, m, span)
        if not ends or not all(_holds_for(machine, p, negated, sym, m, span) for p in inner):
            return False
        end = machine.regs
        for reg, step in self.steps.items():
            was = machine.resolved(self.start[reg], m)
            now = machine.resolved(end.get(reg), m)
            if not isinstance(now, Aff) or not isinstance(was, Aff) or \
                    not zero(ck, now + was.scaled(-1) + Aff(-step), m):
                return False
        return all(reg in self.steps or end.get(reg) is v or _same(machine, v, end.get(reg), m)
                   or isinstance(machine.resolved(v, m), Carried)
                   for reg, v in self.start.items())  # registers held invariant


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


def _trips(machine: "ClosedMachine", predicate: Value, negated: bool, sym: int, m: Mask,
           exits: bool) -> int | None:
    """The loop's trip count from its latch predicate (a while loop's exit test, `exits`),
    if the same for every lane of m."""
    found = _condition(machine, predicate, negated, sym, m)
    if found is None:
        return None
    d0, c, op = found
    return first_true(d0, c, op) if exits else trips(d0, c, op)


def _holds_for(machine: "ClosedMachine", predicate: Value, negated: bool, sym: int, m: Mask,
               count: int) -> bool:
    """Whether a latch predicate (a copy's but the last, of a loop unrolled by its period)
    goes on looping for every j in [0, count) on every lane of m."""
    found = _condition(machine, predicate, negated, sym, m)
    if found is None:
        return False
    d0, c, op = found
    stop = first_true(d0, c, NEGATED[op])
    return stop is None or stop >= count


def _condition(machine: "ClosedMachine", predicate: Value, negated: bool, sym: int, m: Mask
               ) -> tuple[int, int, str] | None:
    """A latch predicate -> (d0, c, op): the branch is taken where `d0 + c j op 0`; None
    where that is not the same on every lane of m."""
    p = machine.resolved(predicate, m)
    if not isinstance(p, SymPred):
        return None
    coef = dict(p.d.coef)
    c = coef.pop(sym, 0)
    if coef:
        return None
    d0 = machine.ck.constant(Aff(p.d.base, p.d.off), m)
    if d0 is None:
        return None
    return d0, c, NEGATED[p.op] if negated else p.op


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
