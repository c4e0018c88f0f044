"""Run independent tasks (one sweep point, one batch file) on `jobs` processes, with one
progress bar on stderr for the whole run; Ctrl-C stops every worker and raises
KeyboardInterrupt in the caller.

Workers are spawned (a fresh interpreter each: safe beside a running Qt app) with SIGINT
ignored from their first instruction (an ignored signal stays ignored across exec), so the
Ctrl-C a terminal sends to the whole process group reaches only the parent, which terminates
the pool: no worker is left behind and none prints a traceback. With one job the tasks run in
this process.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import threading
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")

Task = Any  # picklable: a task's function is a module-level function of one argument


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity; else os.cpu_count), at least 1:
    the default and the most jobs a command runs."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run_tasks(fn: Callable[[Task], dict], tasks: Sequence[Task], jobs: int, unit: str,
              quiet: bool = False,
              done: Callable[[int, dict], None] | None = None) -> list[dict]:
    """fn(task) for every task, on min(jobs, tasks) processes -> the results in task order.
    A progress bar counts finished tasks in `unit`s (unless `quiet` or stderr is not a
    terminal); done(index, result) is called here as each task finishes, and may raise to
    stop the run (the app's Stop), which terminates the workers."""
    results: dict[int, dict] = {}
    jobs = min(jobs, len(tasks))
    with Progress(len(tasks), unit, quiet) as step:
        def finished(i: int, result: dict) -> None:
            results[i] = result
            step()
            if done is not None:
                done(i, result)
        if jobs <= 1:
            for i, task in enumerate(tasks):
                finished(i, fn(task))
        else:
            pool = _spawn_pool(jobs)
            try:
                for i, result in pool.imap_unordered(_Indexed(fn), list(enumerate(tasks))):
                    finished(i, result)
                pool.close()
            except BaseException:  # Ctrl-C (or a bug): stop the workers now
                pool.terminate()
                raise
            finally:
                pool.join()
    return [results[i] for i in range(len(tasks))]


class _Indexed:
    """(i, task) -> (i, fn(task)): a picklable wrapper keeping each result's index."""

    def __init__(self, fn: Callable[[Task], dict]):
        self.fn = fn

    def __call__(self, item: tuple[int, Task]) -> tuple[int, dict]:
        return item[0], self.fn(item[1])


def _spawn_pool(jobs: int) -> multiprocessing.pool.Pool:
    """A pool of `jobs` spawned workers that ignore SIGINT: the parent ignores it while it
    starts them (from the main thread; from another, Python cannot change signals), and a
    worker the pool starts later to replace one ignores it once its initializer runs."""
    return started_ignoring_interrupts(lambda: multiprocessing.get_context("spawn").Pool(
        jobs, initializer=_ignore_interrupt))


def started_ignoring_interrupts(start: Callable[[], T]) -> T:
    """start() with SIGINT ignored while it runs (from the main thread; from another, Python
    cannot change signals), so the worker processes it starts inherit the ignoring."""
    if threading.current_thread() is not threading.main_thread():
        return start()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return start()
    finally:
        signal.signal(signal.SIGINT, previous)


def _ignore_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Progress:
    """A context manager yielding step(): one tqdm bar of `total` tasks on stderr, or a
    step that does nothing when `quiet` or stderr is not a terminal (the pool's and the
    cluster's one bar)."""

    def __init__(self, total: int, unit: str, quiet: bool):
        self.bar = None
        if not quiet and sys.stderr.isatty():
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit=f" {unit}", file=sys.stderr, leave=False)

    def __enter__(self) -> Callable[[], None]:
        bar = self.bar
        return (lambda: bar.update(1)) if bar is not None else (lambda: None)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
