"""Grid-wide analysis off the UI thread: Pattern -> Analysis on a QThreadPool, newest job wins.

A job whose pattern is no longer wanted (an edit, or `cancel`) stops at its next chunk of
warps: its progress callback raises `Cancelled`. While it runs, its progress and the analysis
of the warps done so far are sent every PARTIAL_INTERVAL_S. Finished analyses are kept in the
one cache (memo.MEMO, kind "app analysis"), keyed by pattern and valid while the files the run
read are unchanged, so undo and redo show their numbers at once and an edited `.cu` does not.
A compiled kernel's job also computes what the compiler changed against the source as written
(model.compiler_changes, cached there) before it reports the run done.
Whatever goes wrong in a job ends in one error line; the document and the user's work stay as they
were.
"""

from __future__ import annotations

import sys
import time

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from ..model import Analysis, Cancelled, Pattern, PatternError, analyze
from ..model.compiler_changes import compiler_changes
from ..model.errors import internal_error
from ..model.frontend import kernel_for, read_as
from ..model.memo import MEMO, FileStamp, recording, stamps

MAX_PER_WARP_CELLS = 2**26  # (instructions x warps) int64 counts kept for the overview
APP_ANALYSIS = "app analysis"  # the memo kind of the runner's analyses
PARTIAL_INTERVAL_S = 0.5  # progress and partial results at most this often (both redraw)
# the UI thread gives up the GIL in every Qt call and waits this long for it back while a job
# runs (Python's default is 5 ms: a redraw of many calls would stall for tens of them)
SWITCH_INTERVAL_S = 0.0005


class _Relay(QObject):
    """Carries a job's results from the pool thread to the runner (queued connection)."""

    progress = Signal(int, int, int)  # job id, done warps, total warps
    partial = Signal(int, object, object)  # job id, Pattern, Analysis of the warps done
    # job id, Pattern, Analysis or None, error line, stamps of the files the run read
    done = Signal(int, object, object, str, object)


class _Job(QRunnable):
    def __init__(self, job_id: int, pattern: Pattern, runner: "AnalysisRunner"):
        super().__init__()
        self.job_id, self.pattern, self.runner = job_id, pattern, runner
        self.relay = runner._relay
        self._sent = time.monotonic()
        self._done = (0, 1)  # warps done, total warps

    def _progress(self, done: int, total: int) -> None:
        if self.runner._wanted != self.job_id:
            raise Cancelled
        self._done = (done, total)

    def _partial(self, so_far) -> None:
        """Send progress and the analysis so far, PARTIAL_INTERVAL_S after the last ones."""
        if time.monotonic() - self._sent >= PARTIAL_INTERVAL_S:
            self.relay.progress.emit(self.job_id, *self._done)
            self.relay.partial.emit(self.job_id, self.pattern, so_far())
            self._sent = time.monotonic()

    def run(self) -> None:
        read: set[str] = set()
        try:
            with recording() as read:
                kernel = kernel_for(self.pattern)
                per_warp = len(kernel.instructions) * kernel.warps <= MAX_PER_WARP_CELLS
                result, error = analyze(self.pattern, per_warp, self._progress,
                                        partial=self._partial), ""
                compiler_changes(self.pattern, result)  # cached for the sheet
                read.update(str(p) for p in kernel.files_read)
        except Cancelled:
            return
        except (PatternError, MemoryError) as err:
            result, error = None, str(err) or "out of memory"
        except Exception as err:  # a bug: reported like bad input, so the run still ends
            result, error = None, internal_error(err)
        self.relay.done.emit(self.job_id, self.pattern, result, error, stamps(read))


class AnalysisRunner(QObject):
    """request(pattern) -> a cached Analysis now, or None and `finished` later."""

    progress = Signal(int, int)  # done warps, total warps of the wanted job
    partial = Signal(object, object)  # pattern, Analysis so far of the wanted job
    finished = Signal(object, object, str)  # pattern, Analysis or None, error line

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self._relay = _Relay(self)
        self._relay.progress.connect(self._on_progress)
        self._relay.partial.connect(self._on_partial)
        self._relay.done.connect(self._on_done)
        self._wanted = 0
        self._running = False  # the wanted job is queued or running
        self.files: tuple[FileStamp, ...] = ()  # what the last finished run read

    @property
    def busy(self) -> bool:
        return self._running

    def request(self, pattern: Pattern) -> Analysis | None:
        """The cached analysis of `pattern`, or None after queueing a job (stale ones stop)."""
        self._wanted += 1
        cached = MEMO.peek(APP_ANALYSIS, read_as(pattern))
        self._running = cached is None
        if cached is not None:
            self.files = MEMO.files(APP_ANALYSIS, read_as(pattern))
            return cached
        self._pool.start(_Job(self._wanted, pattern, self))
        return None

    def cancel(self) -> None:
        """Stop the wanted job at its next chunk; nothing more is reported for it."""
        self._wanted += 1
        self._running = False

    def shutdown(self) -> None:
        """Cancel every job and wait for the pool thread to stop."""
        self._wanted = -1
        self._pool.waitForDone()

    def _on_progress(self, job_id: int, done: int, total: int) -> None:
        if job_id == self._wanted:
            self.progress.emit(done, total)

    def _on_partial(self, job_id: int, pattern: Pattern, so_far: Analysis) -> None:
        if job_id == self._wanted:
            self.partial.emit(pattern, so_far)

    def _on_done(self, job_id: int, pattern: Pattern, result: Analysis | None, error: str,
                 files: tuple[FileStamp, ...]) -> None:
        if result is not None:
            MEMO.put(APP_ANALYSIS, read_as(pattern), result, files)
        if job_id == self._wanted:
            self._running = False
            self.files = files
            self.finished.emit(pattern, result, error)
