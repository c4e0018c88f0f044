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
(from the header again). Where that fails for the whole run of a do-while loop but holds for
its first iterations (MIN_PREFIX or more: Triton's last iterations prefetch past K with their
masks false), those run so (the most, found by halving) and the rest after them, as code.

A do-while loop that fails so runs again in P copies of the body as one iteration (j counting
runs of them; the copies' latch predicates but the last's hold through the runs, and an
access of the body is P RepeatedBatches, in the order the copies run them; where a copy's
latch leaves in the last run, the iterations from it on run after them): first in pairs
(P = 2: a register that toggles, `cur = 1 - cur`, two buffers or barriers swapped, steps by a
constant over two), then where the body cycles a register through a few values by a select
(Triton's software pipeline: the stage index `s = s + 1 > 1 ? 0 : s + 1`, as `add`, `setp`,
`selp`) by its period P once its first iterations have run as code (`_cycle`: -1, then
0, 1, 0, 1 is 1 peeled and a period of 2). Registers the body sets before it reads them
(loops.read_first) need no hypothesis. Any other failure returns None: the loop runs as
code, an iteration at a time.

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
from .loops import NEGATED, Counter, GiveUp, Switches, first_true, trips, while_exit
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


def compressed(machine: "ClosedMachine", header: int, m: Mask) -> int | None:
    """Run the loop at `header` for its iterations at once over the lanes m -> where the
    lanes go on: after the latch, or the header again where only its first iterations ran
    (a branch inside switches at an iteration, loops.Switches; the rest fails to verify; an
    odd last iteration of the copies); None (state and accesses as before) where it does not
    apply. A do-while loop tries pairs of iterations, then (where a select cycles) its first
    iterations as code and the rest unrolled by the period."""
    saved = dict(machine.regs)
    do_while = machine.code[machine.headers[header]].guard is not None
    for copies in (1, 2) if do_while else (1,):
        resume = _attempt(machine, header, m, saved, copies)
        if resume is not None:
            return resume
    cycle = _cycle(machine, header, m, saved)
    if cycle is None:
        return None
    events, loops = len(machine.events), len(machine.loops)
    peeled, period = cycle
    try:
        if _peel(machine, header, m, peeled):
            resume = _attempt(machine, header, m, dict(machine.regs), period)
            if resume is not None:
                return resume
    except (GiveUp, Varies):
        pass
    machine.regs = saved
    del machine.events[events:], machine.loops[loops:]
    return None


def _attempt(machine: "ClosedMachine", header: int, m: Mask, entry: dict[str, Value],
             copies: int) -> int | None:
    """_run, with the state and accesses put back where it fails."""
    events, loops = len(machine.events), len(machine.loops)
    try:
        resume = _run(machine, header, m, entry, copies)
        if resume is not None:
            return resume
    except (GiveUp, Varies):
        pass
    machine.regs = dict(entry)
    del machine.events[events:], machine.loops[loops:]
    return None


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


def _copies(machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None, copies: int,
            latch_guard: str) -> list[Value]:
    """`copies` iterations back to back -> the latch predicate after each but the last."""
    predicates = []
    for copy in range(copies):
        _body(machine, header, m, exit_at)
        if copy < copies - 1:
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
         copies: int) -> int | None:
    """The loop from `entry`, `copies` iterations as one -> where the lanes go on (see
    compressed); None where it does not apply."""
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
    sym = next(machine.symbols)
    counted = machine.kernel.loop_counters[header] if copies == 1 else None
    found_steps = _probed(machine, header, m, entry, copies, exit_at, sym) if counted is None \
        else _counted(machine, m, entry, counted, sym)
    if found_steps is None:
        return None
    steps, start = found_steps
    del machine.events[events:]
    machine.regs = dict(entry)
    run = _Run(machine, header, m, exit_at, copies, (name, negated), sym, start, steps,
               machine.kernel.loop_reads[header])
    cut = machine.kernel.latch_slices[header] if copies == 1 else None
    # the trip count from j = 0: the latch's predicate alone where it can be, not the body
    found, inner = run.passed(1) if cut is None else (run.sliced(cut), [])
    del machine.events[events:]
    if not found:
        return None
    # the runs of the copies at once: all, or those before a copy's latch leaves the loop
    count = min([found, *(s for s in inner if s is not None)])
    span = run.most(count, found)
    if not span:
        del machine.events[events:]
        span = _longest_prefix(run, count, found, events) if exit_at is None else 0
        if span < MIN_PREFIX:
            return None
    _settle(machine, entry, start, machine.regs, steps, sym, span, m)
    if span < found:
        return header  # the iterations after them run from the header again
    if exit_at is not None:
        _test(machine, header, exit_at, m)  # the test that ends the loop
    return latch + 1


def _probed(machine: "ClosedMachine", header: int, m: Mask, entry: dict[str, Value],
            copies: int, exit_at: int | None, sym: int
            ) -> tuple[dict[str, int], dict[str, Value]] | None:
    """The `copies` iterations run once from `entry` (the probe; a copy after another only
    where every lane goes on) -> (the constant step of each carried register that steps,
    the registers at iteration j of loop symbol sym: those stepping affine in j, the others
    the body changes Carried); None where a copy's latch leaves the loop on some lane."""
    ck, latch = machine.ck, machine.headers[header]
    for copy in range(copies):
        if copy and ck.minus(m, machine.guarded(machine.code[latch], m)).any():
            return None
        _body(machine, header, m, exit_at)
    probe = machine.regs
    steps: dict[str, int] = {}
    start: dict[str, Value] = dict(entry)
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
    return steps, start


def _counted(machine: "ClosedMachine", m: Mask, entry: dict[str, Value],
             counted: dict[str, Counter | None], sym: int
             ) -> tuple[dict[str, int], dict[str, Value]]:
    """_probed's steps and registers, from the loop's counters (loops.counters) read at
    `entry` without running an iteration: a counter whose entry value and step are known
    steps by that step, any other register the loop writes is Carried."""
    steps: dict[str, int] = {}
    start: dict[str, Value] = dict(entry)
    for reg, counter in counted.items():
        before = entry.get(reg)
        a = machine.resolved(before, m)
        step = _step(machine, counter, m) if isinstance(a, Aff) else None
        if isinstance(a, Aff) and step is not None:
            steps[reg] = step
            start[reg] = _on(machine, a + symbol_term(sym, step), before, m)
        elif before is not None:
            start[reg] = _on(machine, CARRIED, before, m)
    return steps, start


def _step(machine: "ClosedMachine", counter: Counter | None, m: Mask) -> int | None:
    """A counter's step, where its operand holds one value on every lane of m."""
    if counter is None:
        return None
    entry = machine.regs
    machine.regs = dict(entry)
    try:
        for pc in counter.computed:  # the step computed from values the loop keeps
            machine.execute(machine.code[pc], pc, m)
        by = machine.resolved(machine.read(counter.operand, counter.type, m), m)
    finally:
        machine.regs = entry
    step = machine.ck.constant(by, m) if isinstance(by, Aff) else None
    return None if step is None else counter.sign * step


def _longest_prefix(run: "_Run", count: int, found: int, events: int) -> int:
    """The most iterations (of count - 1 at most) that verify, found by halving, with their
    accesses and end state in the machine; 0 where none does."""
    good, bad = 0, count
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if run.verified(mid, found) else (good, mid)
        del run.machine.events[events:]
    return good if good and run.verified(good, found) else 0


class _Run:
    """A loop's body (its copies, run as one iteration) run with j over [0, span) from the
    state at iteration j: its registers at j = 0, the constant change of those that step and
    the registers an iteration reads before it sets them."""

    def __init__(self, machine: "ClosedMachine", header: int, m: Mask, exit_at: int | None,
                 copies: int, latch: tuple[str, bool], sym: int, start: dict[str, Value],
                 steps: dict[str, int], carried: set[str]):
        self.machine, self.header, self.m, self.exit_at = machine, header, m, exit_at
        self.copies, self.latch, self.sym = copies, latch, sym
        self.start, self.steps, self.carried = start, steps, carried

    def passed(self, span: int) -> tuple[int | None, list[int | None]]:
        """The copies with j over [0, span) -> (the trip count from the last copy's latch
        predicate, the first j where each other copy's leaves the loop: None for never, 0
        where not the same on every lane)."""
        machine, (name, negated), sym = self.machine, self.latch, self.sym
        machine.ck.trips[sym] = span
        machine.regs = dict(self.start)
        machine.loops.append((sym, span))
        try:
            inner = _copies(machine, self.header, self.m, self.exit_at, self.copies, name)
        finally:
            machine.loops.pop()
        found = _trips(machine, machine.regs.get(name), negated, sym, self.m,
                       self.exit_at is not None)
        return found, [_leaves_at(machine, p, negated, sym, self.m) for p in inner]

    def sliced(self, cut: tuple[int, ...]) -> int | None:
        """The trip count from j = 0, as passed(1) finds it, from the instructions that
        compute the latch's predicate (loops.latch_slice) run from the loop's start."""
        machine, (name, negated), sym = self.machine, self.latch, self.sym
        machine.ck.trips[sym] = 1
        machine.regs = dict(self.start)
        machine.loops.append((sym, 1))
        try:
            machine.straight(cut, self.m)
        finally:
            machine.loops.pop()
        return _trips(machine, machine.regs.get(name), negated, sym, self.m,
                      self.exit_at is not None)

    def most(self, span: int, found: int) -> int:
        """The iterations [0, span) verified (see verified), or those before a branch inside
        switches (loops.Switches) -> how many ran so, their accesses and end state in the
        machine; 0 where none did (the accesses then discarded by the caller)."""
        events = len(self.machine.events)
        while span:
            try:
                return span if self.verified(span, found, strict=True) else 0
            except Switches as switch:
                if switch.symbol != self.sym or not 0 < switch.at < span:
                    return 0
                del self.machine.events[events:]
                span = switch.at
        return 0

    def verified(self, span: int, found: int, strict: bool = False) -> bool:
        """Whether every j in [0, span) runs the body alike (its branches, selects and
        values invariant or affine in j), the loop goes on through it (its last iteration
        may end the loop where span = found, the trip count) and at the back edge each
        register holds its value at j + 1; the machine's state is then the body's at j.
        A branch that switches raises loops.Switches where `strict`."""
        machine, m, sym = self.machine, self.m, self.sym
        (name, negated), ck = self.latch, machine.ck
        try:
            last, inner = self.passed(span)
        except Switches:
            if strict:
                raise
            return False
        except (GiveUp, Varies):
            return False
        ends = last == found if span == found else _goes_on(
            _leaves_at(machine, machine.regs.get(name), negated, sym, m,
                       self.exit_at is not None), span)
        if not ends or not all(_goes_on(s, span) for s in inner):
            return False
        end = machine.regs
        for reg, step in self.steps.items():
            was = machine.resolved(self.start[reg], m)
            now = machine.resolved(end.get(reg), m)
            if not isinstance(now, Aff) or not isinstance(was, Aff) or \
                    not zero(ck, now + was.scaled(-1) + Aff(-step), m):
                return False
        return all(reg not in self.carried or reg in self.steps or end.get(reg) is v
                   or _same(machine, v, end.get(reg), m)
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


def _leaves_at(machine: "ClosedMachine", predicate: Value, negated: bool, sym: int, m: Mask,
               exits: bool = False) -> int | None:
    """The first j where a latch predicate (a while loop's exit test, `exits`: taken, it
    leaves) leaves the loop on every lane of m: None where it never does, 0 where that is
    not the same on every lane (no iteration is sure to go on)."""
    found = _condition(machine, predicate, negated, sym, m)
    if found is None:
        return 0
    d0, c, op = found
    return first_true(d0, c, op if exits else NEGATED[op])


def _goes_on(leaves: int | None, count: int) -> bool:
    """Whether a latch that leaves at iteration `leaves` (_leaves_at) goes on through every
    j in [0, count)."""
    return leaves is None or leaves >= count


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
