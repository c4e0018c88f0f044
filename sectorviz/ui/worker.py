"""The app's slow work in worker processes (ui/jobs.py runs it), out of the UI thread's
reach: a grid-wide analysis (AnalysisRunner) and one warp's details (DetailRunner).

Each runner holds at most one process at a time (spawned, or taken warm from the few kept
idle) and hears from it through a thread that reads its pipe and hands each message to the
UI thread as a queued signal, so nothing on the UI thread waits for a process. An analysis no
longer wanted (an edit, `cancel`, the window closing) ends by killing its process: nothing
waits for its work. A warp asked for while another is computed waits, newest request
winning. Finished analyses and details are kept in the one cache (memo.MEMO: kinds "app
analysis", "app warp details", and "one warp" and "compiler changes" as the model keeps
them), valid while the files the run read are unchanged, so undo and redo show their numbers
at once and an edited `.cu` does not.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection

from PySide6.QtCore import QObject, Signal

from ..model import Analysis, Pattern
from ..model.compiler_changes import KIND as CHANGES_KIND
from ..model.frontend import read_as
from ..model.memo import MEMO, FileStamp
from ..model.values import WarpDetails
from ..sweep.pool import started_ignoring_interrupts
from .jobs import (
    AnalysisJob,
    Detail,
    DetailJob,
    Finished,
    Message,
    Partial,
    Progress,
    current_setting,
    serve,
)

APP_ANALYSIS = "app analysis"  # the memo kind of the runner's analyses
WARP_DETAILS = "app warp details"  # the memo kind of DetailRunner's WarpDetails
ONE_WARP = "one warp"  # the model's memo kind of one warp's (global, shared) details
DIED = "the analysis process ended before its result (out of memory?)"
DETAIL_DIED = "the process working out this warp ended before its result (out of memory?)"
KEPT_IDLE = 2  # warm worker processes kept for the next runner (a new window, a test)


class WorkerProcess(QObject):
    """One spawned process running jobs one at a time; its messages arrive as `message` on
    the UI thread (a thread of its own reads the pipe); `kill` ends it without waiting."""

    message = Signal(object)  # a jobs.Message
    gone = Signal()  # the process ended (killed, or died)

    def __init__(self) -> None:
        super().__init__()
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, os.getpid()), daemon=True,
                                       name="sectorviz worker")
        started_ignoring_interrupts(self.process.start)  # Ctrl-C is the app's to handle
        child.close()
        self.alive = True
        threading.Thread(target=self._read, args=(self._conn,), daemon=True).start()

    def send(self, job: AnalysisJob | DetailJob) -> None:
        self._conn.send(job)

    def kill(self) -> None:
        """End the process now (its reader reaps it)."""
        if self.alive:
            self.alive = False
            self.process.kill()

    def _read(self, conn: Connection) -> None:
        """The reader thread: each message to the UI thread (queued), then `gone` once the
        process ends; nothing is said once Qt has deleted this object (the app is closing)."""
        try:
            while True:
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    break
                self.message.emit(message)
            conn.close()
            self.process.join()
            self.alive = False
            self.gone.emit()
        except RuntimeError:  # "Signal source has been deleted": no one left to tell
            self.alive = False


_IDLE: list[WorkerProcess] = []  # warm processes no runner holds


def _take() -> WorkerProcess:
    """A warm idle process if one is alive, else a new one."""
    while _IDLE:
        worker = _IDLE.pop()
        if worker.alive:
            return worker
    return WorkerProcess()


def _keep(worker: WorkerProcess) -> None:
    """An idle process back for the next runner (past KEPT_IDLE, ended)."""
    if worker.alive and len(_IDLE) < KEPT_IDLE:
        _IDLE.append(worker)
    else:
        worker.kill()


class _Slot(QObject):
    """A runner's hold on one worker process: `start` sends a job (taking a process if none
    is held), `stop` kills the held one, `release` hands an idle one back; the held
    process's messages go to `on_message`, its death during a job to `on_died`."""

    def __init__(self, parent: QObject, on_message: Callable[[Message], None],
                 on_died: Callable[[], None]) -> None:
        super().__init__(parent)
        self.worker: WorkerProcess | None = None
        self.busy = False
        self._on_message, self._on_died = on_message, on_died

    def start(self, job: AnalysisJob | DetailJob) -> None:
        if self.worker is None or not self.worker.alive:
            self.worker = _take()
            self.worker.message.connect(self._on_message)
            self.worker.gone.connect(self._on_gone)
        self.busy = True
        self.worker.send(job)

    def stop(self) -> None:
        """Kill the held process (its job is no longer wanted)."""
        if self.worker is not None:
            self.worker.message.disconnect()
            self.worker.gone.disconnect()
            self.worker.kill()
        self.worker, self.busy = None, False

    def release(self) -> None:
        """Stop a busy process; keep an idle one warm for others."""
        if self.busy or self.worker is None:
            self.stop()
            return
        self.worker.message.disconnect()
        self.worker.gone.disconnect()
        _keep(self.worker)
        self.worker = None

    def _on_gone(self) -> None:
        busy, self.worker, self.busy = self.busy, None, False
        if busy:
            self._on_died()


class AnalysisRunner(QObject):
    """request(pattern) -> a cached Analysis now, or None and `finished` later."""

    progress = Signal(int, int)  # done warps, total warps of the wanted job
    partial = Signal(object, object)  # pattern, Analysis so far of the wanted job
    finished = Signal(object, object, str)  # pattern, Analysis or None, error line

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._slot = _Slot(self, self._on_message, self._on_died)
        self._wanted = 0
        self._pattern: Pattern | None = None  # the wanted job's
        self.files: tuple[FileStamp, ...] = ()  # what the last finished run read

    @property
    def busy(self) -> bool:
        return self._pattern is not None

    def request(self, pattern: Pattern) -> Analysis | None:
        """The cached analysis of `pattern`, or None after starting a job (a stale one is
        killed)."""
        self.cancel()
        cached = MEMO.peek(APP_ANALYSIS, read_as(pattern))
        if cached is not None:
            self.files = MEMO.files(APP_ANALYSIS, read_as(pattern))
            return cached
        self._pattern = pattern
        self._slot.start(AnalysisJob(self._wanted, pattern, current_setting()))
        return None

    def cancel(self) -> None:
        """Kill the wanted job's process; nothing more is reported for it."""
        self._wanted += 1
        if self._pattern is not None:
            self._slot.stop()
        self._pattern = None

    def shutdown(self) -> None:
        """Kill the running job, if any (nothing waits for it); an idle process stays warm."""
        self.cancel()
        self._slot.release()

    def _on_message(self, message: Message) -> None:
        if message.job_id != self._wanted or self._pattern is None:
            return
        if isinstance(message, Progress):
            self.progress.emit(message.done, message.total)
        elif isinstance(message, Partial):
            self.partial.emit(self._pattern, message.so_far)
        elif isinstance(message, Finished):
            self._on_finished(self._pattern, message)

    def _on_died(self) -> None:
        """The process died under the wanted job (killed from outside, out of memory)."""
        if self._pattern is not None:
            self._on_finished(self._pattern, Finished(self._wanted, None, DIED, (), None, ()))

    def _on_finished(self, pattern: Pattern, done: Finished) -> None:
        key = read_as(pattern)
        if done.analysis is not None:
            MEMO.put(APP_ANALYSIS, key, done.analysis, done.files)
        if done.changes is not None:  # the sheet reads them (model.compiler_changes)
            MEMO.put(CHANGES_KIND, key, done.changes, done.changes_files)
        self._pattern, self._slot.busy = None, False
        self.files = done.files
        self.finished.emit(pattern, done.analysis, done.error)


class DetailRunner(QObject):
    """request(pattern, warp) -> its WarpDetails now if cached, else None and `arrived`
    later; a request made while another is computed waits, and a newer one replaces it."""

    arrived = Signal(object, int)  # pattern, warp: their details are in the cache now

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._slot = _Slot(self, self._on_message, self._on_died)
        self._job_id = 0
        self._running: DetailJob | None = None
        self._waiting: DetailJob | None = None

    def request(self, pattern: Pattern, warp: int) -> WarpDetails | None:
        cached: WarpDetails | None = MEMO.peek(WARP_DETAILS, (read_as(pattern), warp))
        if cached is not None:
            return cached
        running = self._running
        if running is not None and (running.pattern, running.warp) == (pattern, warp):
            self._waiting = None
            return None
        self._job_id += 1
        job = DetailJob(self._job_id, pattern, warp, current_setting())
        if running is not None and running.pattern != pattern:
            self._slot.stop()  # a detail of a pattern no longer shown: not worth waiting for
            self._running = None
        if self._running is None:
            self._run(job)
        else:
            self._waiting = job
        return None

    def shutdown(self) -> None:
        self._running = self._waiting = None
        self._slot.release()

    def _run(self, job: DetailJob) -> None:
        self._running, self._waiting = job, None
        self._slot.start(job)

    def _on_died(self) -> None:
        """The process died under a detail: that warp shows why."""
        job = self._running
        if job is not None:
            error = WarpDetails(job.warp, DETAIL_DIED, None)
            self._on_message(Detail(job.job_id, error, None, ()))

    def _on_message(self, message: Message) -> None:
        job = self._running
        if not isinstance(message, Detail) or job is None or message.job_id != job.job_id:
            return
        key = read_as(job.pattern)
        MEMO.put(WARP_DETAILS, (key, job.warp), message.details, message.files)
        if message.one_warp is not None:  # the views' model calls find them cached
            MEMO.put(ONE_WARP, (key, job.warp), message.one_warp, message.files)
        self._running, self._slot.busy = None, False
        if self._waiting is not None:
            self._run(self._waiting)
        self.arrived.emit(job.pattern, job.warp)
