"""What the app's worker processes run (Qt-free; ui/worker.py starts them): jobs read off a
pipe one at a time, each answered by messages on the same pipe, all of them plain values of
our own (Pattern, Analysis, WarpDetails) pickled between our own processes.

- AnalysisJob -> Progress and Partial (the warps done so far) every PARTIAL_INTERVAL_S, then
  Finished: the grid-wide Analysis or its error line, what the compiler changed against the
  source as written (model.compiler_changes), and the stamps of the files the run read.
- DetailJob -> Detail: one warp's WarpDetails (an error kept as its text) and the stamps.

A job runs with the app's settings at the time it was asked for (Setting: the SECTORVIZ_
environment and the work budget). A process ends when its pipe closes or its parent goes.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Callable

from ..model import Analysis, Pattern, PatternError, analyze
from ..model.budget import default_work, set_default_work
from ..model.compiler_changes import KIND as CHANGES_KIND
from ..model.compiler_changes import compiler_changes
from ..model.errors import internal_error
from ..model.frontend import FrontEnd, kernel_for, read_as
from ..model.memo import MEMO, FileStamp, recording, stamps
from ..model.one_warp import shared_warp_detail, warp_detail, warp_details
from ..model.values import CompilerChanges, SharedWarpDetail, WarpDetail, WarpDetails

MAX_PER_WARP_CELLS = 2**26  # (global and shared instructions x warps) counts kept for the overview
PARTIAL_INTERVAL_S = 0.5  # progress and partial results at most this often (both redraw)
ENV_PREFIX = "SECTORVIZ_"  # the environment a job sees as the app had it (engine, lane path)
PARENT_POLL_S = 0.5  # how often a worker checks that the app is still there
NICENESS = 10  # workers yield the CPU to the app's UI thread (and to other programs)


@dataclass(frozen=True)
class Setting:
    """The app's settings a job runs under: SECTORVIZ_* variables, the work budget (units)."""

    env: tuple[tuple[str, str], ...]
    work: int


def current_setting() -> Setting:
    """The settings in force in this process now."""
    return Setting(tuple(sorted((k, v) for k, v in os.environ.items()
                                if k.startswith(ENV_PREFIX))), default_work())


def _apply(setting: Setting) -> None:
    for name in [k for k in os.environ if k.startswith(ENV_PREFIX)]:
        del os.environ[name]
    os.environ.update(setting.env)
    set_default_work(setting.work)


@dataclass(frozen=True)
class AnalysisJob:
    job_id: int
    pattern: Pattern
    setting: Setting


@dataclass(frozen=True)
class DetailJob:
    job_id: int
    pattern: Pattern
    warp: int
    setting: Setting


@dataclass(frozen=True)
class Progress:
    job_id: int
    done: int  # warps
    total: int  # warps


@dataclass(frozen=True)
class Partial:
    job_id: int
    so_far: Analysis  # of the warps done


@dataclass(frozen=True)
class Finished:
    job_id: int
    analysis: Analysis | None  # None: `error` says why
    error: str
    files: tuple[FileStamp, ...]  # what the run read
    changes: CompilerChanges | None  # what the compiler changed (compiled readings only)
    changes_files: tuple[FileStamp, ...]


@dataclass(frozen=True)
class Detail:
    job_id: int
    details: WarpDetails
    one_warp: tuple[WarpDetail, SharedWarpDetail] | None  # both, when neither failed
    files: tuple[FileStamp, ...]


Message = Progress | Partial | Finished | Detail


def per_warp_fits(kernel: FrontEnd) -> bool:
    """Whether the analysis keeps per-warp counts (the overview's picture): global and
    shared instructions x warps at most MAX_PER_WARP_CELLS (else the counts alone would pass
    the memory cap, and the whole count would fail)."""
    rows = len(kernel.instructions) + len(kernel.shared_instructions)
    return rows * kernel.warps <= MAX_PER_WARP_CELLS


def serve(conn: Connection, parent: int) -> None:
    """A worker process's life: run each job read from `conn`, answering on it, until the
    pipe closes or process `parent` (the app) is gone."""
    threading.Thread(target=_leave_with, args=(parent,), daemon=True).start()
    os.nice(NICENESS)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        _apply(job.setting)
        if isinstance(job, AnalysisJob):
            run_analysis(job, conn.send)
        else:
            conn.send(run_detail(job))


def _leave_with(parent: int) -> None:
    """End this process once its parent has gone (it is then adopted by another)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def run_analysis(job: AnalysisJob, send: Callable[[Message], None]) -> None:
    """The grid-wide analysis of job.pattern, its progress and partial results sent as they
    come, then Finished (whatever goes wrong ends in its error line)."""
    sent, done = [time.monotonic()], [(0, 1)]

    def progress(warps: int, total: int) -> None:
        done[0] = (warps, total)

    def partial(so_far: Callable[[], Analysis]) -> None:
        if time.monotonic() - sent[0] >= PARTIAL_INTERVAL_S:
            send(Progress(job.job_id, *done[0]))
            send(Partial(job.job_id, so_far()))
            sent[0] = time.monotonic()

    read: set[str] = set()
    changes = None
    try:
        with recording() as read:
            kernel = kernel_for(job.pattern)
            per_warp = per_warp_fits(kernel)
            result, error = analyze(job.pattern, per_warp, progress, partial=partial), ""
            changes = compiler_changes(job.pattern, result)
            read.update(str(p) for p in kernel.files_read)
    except (PatternError, MemoryError) as err:
        result, error = None, str(err) or "out of memory"
    except Exception as err:  # a bug: reported like bad input, so the run still ends
        result, error = None, internal_error(err)
    changes_files = () if changes is None else MEMO.files(CHANGES_KIND, read_as(job.pattern))
    send(Finished(job.job_id, result, error, stamps(read), changes, changes_files))


def run_detail(job: DetailJob) -> Detail:
    """One warp's details (each error kept as its text), and both of its values when they
    did not fail, for the app's cache."""
    read: set[str] = set()
    try:
        with recording() as read:
            details = warp_details(job.pattern, job.warp)
            read.update(str(p) for p in kernel_for(job.pattern).files_read)
    except PatternError as err:  # the kernel itself: both details are its error
        details = WarpDetails(job.warp, str(err), str(err))
    except Exception as err:  # a bug: shown like bad input
        details = WarpDetails(job.warp, internal_error(err), None)
    both = None
    if isinstance(details.detail, WarpDetail):
        both = (warp_detail(job.pattern, job.warp), shared_warp_detail(job.pattern, job.warp))
    return Detail(job.job_id, details, both, stamps(read))

