"""One work budget for every run: lane-executions plus PTX steps, counted as it goes.

A run (`analyze`, `warp_detail`, a command of the CLI) opens a budget with `work_budget`;
code that does work charges the units it spends, and refuses up front (`check`) work it
can size before starting. Past the limit, a PatternError says how much work was asked for
and how to raise the limit (`--budget N`, or Settings > Work Budget in the app).

Units (measured on a 2020s x86 core with numpy 2, see benchmarks/bench_budget.py): one unit
is one lane-execution of a memory access, about 20 to 60 ns (a gather 17 M/s, a strided
access 44 M/s). Each execution (batch) over a chunk of warps costs BATCH_UNITS more, its
fixed Python cost (about 90 us); a PTX instruction run over a chunk of lanes costs
PTX_STEP_UNITS plus one unit per PTX_STEP_LANES lanes on the lane path, CLOSED_STEP_UNITS in
closed form, DIVERGED times that under a divergent mask (what they cost in Python); a
closed-form comparison that splits lanes charges a unit per CLOSED_LANES lanes it sorts; a
chunk of warps counted in closed form costs BATCH_UNITS and a unit per sector id and run of
sectors it hands to the unique count: what it costs to compute, not what it stands for.
DEFAULT_WORK = 2^28 units is 5 to 15 s of a laptop core.

Memory is capped likewise: `reserve(nbytes, what)` is called before allocating what a run
keeps (readable values, bitmaps of unique sectors, per-warp counts); the reservations of a
run add up. Chunked work (traces of a chunk of warps) is bounded by the chunk size instead.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator

from .errors import PatternError

DEFAULT_WORK = 2**28  # units; 5 to 15 s of a laptop core
DEFAULT_MEMORY = 3 * 2**29  # bytes: 1.5 GiB for one run's arrays, bitmaps and counts
BATCH_UNITS = 2048  # one execution (batch) of an access, whatever its lanes
CLOSED_LANES = 64  # a closed-form comparison splitting lanes: a unit per this many lanes
PTX_STEP_UNITS = 768  # one PTX instruction run over a chunk by the lane machine (~25 us) ...
PTX_STEP_LANES = 16  # ... plus one unit per this many lanes (or closed-form lanes) of it
CLOSED_STEP_UNITS = 2048  # one PTX instruction in closed form (~75 us of mask algebra) ...
DIVERGED = 2  # ... times this under a divergent mask (registers set on some lanes only)
WARP_UNITS = 2  # one warp of a repeated access counted in closed form (repeat.py)
RAISE = "raise it with --budget N (in the app: Settings > Work Budget)"

_default_work = DEFAULT_WORK


def set_default_work(units: int) -> None:
    """The work limit of budgets opened without one (the app's Settings > Work Budget)."""
    global _default_work
    _default_work = check_units(units)


def default_work() -> int:
    return _default_work


def check_units(units: int) -> int:
    """A work limit -> itself; ValueError unless it is a positive integer."""
    if isinstance(units, bool) or not isinstance(units, int) or units < 1:
        raise ValueError(f"a work budget is a positive number of units, got {units!r}")
    return units


def parse_units(text: str) -> int:
    """Command-line text ('268435456', '1e9', '2^30', '1_000_000') -> units; ValueError."""
    t = text.strip().replace("_", "")
    if "^" in t:
        base, _, power = t.partition("^")
        if not (base.isdigit() and power.isdigit()) or len(power) > 3:
            raise ValueError(f"{text!r} is not a number of units")
        return check_units(int(base) ** int(power))
    if t.isdigit() and len(t) <= 30:
        return check_units(int(t))
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of units") from None
    if not 1 <= value < 2**100 or value != int(value):
        raise ValueError(f"{text!r} is not a whole number of units of at least 1")
    return check_units(int(value))


@dataclass
class Budget:
    """Work units (lane-executions + PTX steps) and bytes a run may use.

    `progress` (warps done, warps in all), set by the analysis between chunks, lets the
    message past the limit say how much work the whole run would take at this rate."""

    work: int = field(default_factory=default_work)
    memory: int = DEFAULT_MEMORY
    spent: int = 0
    held: int = 0
    progress: tuple[int, int] | None = None

    def charge(self, units: int, what: str = "the run", place: str = "budget",
               column: int | None = None) -> None:
        """Spend `units`; past the limit, a PatternError at `place` naming `what`."""
        self.spent += units
        if self.spent > self.work:
            raise PatternError(place, f"{what} passes the work budget of {self.work:,} units "
                                      f"(lane-executions and PTX steps)"
                                      f"{self._at_this_rate()}; {RAISE}", column)

    def check(self, units: int, what: str, place: str = "budget",
              column: int | None = None) -> None:
        """Refuse, before starting, work of `units` that would pass the limit."""
        if self.spent + units > self.work:
            raise PatternError(place, f"{what} asks for {units:,} units of work (lane-"
                                      f"executions and PTX steps), over the budget "
                                      f"of {self.work - self.spent:,} left"
                                      f"{self._at_this_rate()}; {RAISE}", column)

    def reserve(self, nbytes: int, what: str = "the run", place: str = "budget") -> None:
        """Hold `nbytes` for the rest of the run, or refuse before allocating them."""
        if self.held + nbytes > self.memory:
            raise PatternError(place, f"{what} needs {nbytes / 2**30:.2f} GiB, with "
                                      f"{self.held / 2**30:.2f} GiB already held past the "
                                      f"memory cap of {self.memory / 2**30:.2f} GiB for one "
                                      "run; use smaller lengths or a smaller grid")
        self.held += nbytes

    def _at_this_rate(self) -> str:
        if self.progress is None or not self.progress[0]:
            return ""
        done, total = self.progress
        return (f" after {done:,} of {total:,} warps; all of them would take about "
                f"{self.spent * total // done:,}")


_current: ContextVar[Budget | None] = ContextVar("sectorviz_budget", default=None)


def current() -> Budget:
    """The budget of the run in progress; without one, a fresh default budget (which a
    caller keeps for the work it is about to do, like a trace of a range of warps)."""
    return _current.get() or Budget()


@contextlib.contextmanager
def work_budget(budget: Budget | None = None) -> Iterator[Budget]:
    """Run the `with` block under `budget`; None keeps the budget already open, or opens a
    default one (so a command's analysis and warp detail share the command's budget)."""
    budget = budget or _current.get() or Budget()
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def charge(units: int, what: str = "the run", place: str = "budget",
           column: int | None = None) -> None:
    """Spend `units` of the open budget (see Budget.charge)."""
    current().charge(units, what, place, column)


def reserve(nbytes: int, what: str = "the run", place: str = "budget") -> None:
    """Hold `nbytes` of the open budget's memory (see Budget.reserve)."""
    current().reserve(nbytes, what, place)
