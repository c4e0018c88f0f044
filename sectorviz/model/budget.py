"""One work budget for every run: lane-executions plus interpreter steps, counted as it goes.

A run (`analyze`, `warp_detail`, a CUDA interpretation) opens a budget with `work_budget`;
code that does work calls `charge(units, what)` with the units it is about to spend:
lanes x executions of memory accesses, and interpreter steps (one per statement or
expression node executed per chunk of lanes). Closed-form work is charged what it costs to
compute (the lanes actually evaluated), not what it stands for. Past the limit, `charge`
raises a PatternError that says how much work was asked for and how to raise the limit.
Memory is capped likewise: `reserve(nbytes, what)` is called before allocating.
Without an open budget (a unit test calling a helper directly) charges go to the default.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Iterator

from .errors import PatternError

DEFAULT_WORK = 4 * 10**9  # units; a laptop finishes this in about 10 s
DEFAULT_MEMORY = 3 * 2**29  # bytes: 1.5 GiB for one run's arrays, bitmaps and traces


@dataclass
class Budget:
    """Work units (lane-executions + interpreter steps) and bytes a run may use."""

    work: int = DEFAULT_WORK
    memory: int = DEFAULT_MEMORY
    spent: int = 0

    def charge(self, units: int, what: str = "the run") -> None:
        self.spent += int(units)
        if self.spent > self.work:
            raise PatternError("budget", f"{what} needs more than {self.work:,} units of work "
                                         f"(lane-executions and interpreter steps); raise the "
                                         f"limit with --budget N (or Settings > Work budget)")

    def reserve(self, nbytes: int, what: str = "the run") -> None:
        if nbytes > self.memory:
            raise PatternError("budget", f"{what} needs {nbytes / 2**30:.2f} GiB; the memory "
                                         f"cap is {self.memory / 2**30:.2f} GiB "
                                         f"(--memory-cap BYTES raises it)")


_current: ContextVar[Budget | None] = ContextVar("sectorviz_budget", default=None)


def current() -> Budget:
    """The budget of the run in progress (a fresh default one if none is open)."""
    budget = _current.get()
    if budget is None:
        budget = Budget()
        _current.set(budget)
    return budget


@contextlib.contextmanager
def work_budget(budget: Budget | None = None) -> Iterator[Budget]:
    """Open `budget` (default limits) for the code in the `with` block."""
    budget = budget or Budget()
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def charge(units: int, what: str = "the run") -> None:
    current().charge(units, what)


def reserve(nbytes: int, what: str = "the run") -> None:
    current().reserve(nbytes, what)
