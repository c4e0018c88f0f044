"""Where a sweep's points and a batch's or check's files run: the one seam the three commands
(and the benchmark) share. An Executor takes the task function, the tasks, the progress bar's
unit and the `quiet` flag, and returns the results in task order; Ctrl-C raises
KeyboardInterrupt in the caller with nothing left running.

- LocalPool: this machine's process pool (pool.py), `jobs` processes;
- cluster.Cluster: a Dask distributed cluster (`--scheduler ADDRESS`), or a LocalCluster of
  worker processes on this machine (`--scheduler local`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

from .pool import Task, run_tasks

TaskFn = Callable[[Task], dict]
Done = Callable[[int, dict], None]
LOCAL = "local"  # --scheduler local: a LocalCluster on this machine


class Executor(Protocol):
    """fn(task) for every task -> the results in task order, one progress bar of `unit`s
    (none when `quiet`); done(index, result) as each finishes (it may raise to stop)."""

    def __call__(self, fn: TaskFn, tasks: Sequence[Task], unit: str, quiet: bool = False,
                 done: Done | None = None) -> list[dict]: ...


@dataclass(frozen=True)
class LocalPool:
    """The tasks on this machine's process pool, `jobs` processes (one: in this process)."""

    jobs: int

    def __call__(self, fn: TaskFn, tasks: Sequence[Task], unit: str, quiet: bool = False,
                 done: Done | None = None) -> list[dict]:
        return run_tasks(fn, tasks, self.jobs, unit, quiet, done)


def executor_for(scheduler: str | None, jobs: int, prog: str) -> Executor:
    """No scheduler: the local pool of `jobs` processes; else the Dask cluster at `scheduler`
    (LOCAL: a LocalCluster of `jobs` worker processes). UsageError (one line naming `prog`)
    when Dask's distributed scheduler is not installed."""
    if scheduler is None:
        return LocalPool(jobs)
    from .cluster import Cluster, require_distributed
    require_distributed(prog)
    return Cluster(scheduler, jobs, prog)
