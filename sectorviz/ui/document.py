"""The one document the UI holds: the current Pattern, its undo stack, the selected warp
instruction, and the grid-wide Analysis (computed off the UI thread).

Views never write model arrays: they read `pattern`, `view()` and `analysis`, and call
`set_pattern` (undoable) or `select`. Every change ends in one `changed(flags)` signal;
`batch()` folds nested changes into a single emission.
"""

from __future__ import annotations

import enum
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from ..model import Analysis, Pattern, PatternError, warp_detail
from ..model.errors import printable
from ..model.frontend import FrontEnd, kernel_for, read_as
from ..model.kernel import Instruction
from ..model.memo import MEMO
from ..model.one_warp import shared_warp_detail, warp_details
from ..model.values import LaneExecution, WarpDetail, WarpDetails
from ..scene.grid import GridLayout, grid_layout
from ..scene.sheet import NO_GLOBAL
from .background import NewestCall
from .resolver import KernelResolver, compiling, stand_in
from .watch import DiskWatch
from .worker import AnalysisRunner, DetailRunner


class Change(enum.IntFlag):
    PATTERN = 1  # a new Pattern value (edit, undo, open)
    SELECTION = 2  # warp, instruction or execution
    ANALYSIS = 4  # grid-wide analysis arrived, failed or was started
    FILE = 8  # path or saved/modified state


@dataclass(frozen=True)
class Selection:
    """What the grid shows: global warp (launch order), instruction (program order), and the
    execution of that instruction by that warp (loop iteration, 0 without loops)."""

    warp: int = 0
    instruction: int = 0
    run: int = 0


@dataclass(frozen=True)
class WarpView:
    """Everything the per-warp panes show for one (pattern, selection)."""

    pattern: Pattern
    kernel: FrontEnd
    selection: Selection
    instruction: Instruction | None  # None when the kernel has no global memory instruction
    detail: WarpDetail | None  # None when `error` says why
    runs: int  # executions of the instruction by this warp
    execution: LaneExecution | None  # None when no lane of the warp runs the instruction
    layout: GridLayout | None
    error: str | None = None
    pending: bool = False  # the warp's details are still being worked out (`error` says so)
    kernel_known: bool = True  # False: `kernel` is the launch alone, until the kernel arrives


def instruction_names(kernel: FrontEnd) -> list[str]:
    """What the app selects from, as it shows them (model.errors.printable): the global
    instructions, then the shared ones (none for a kernel without global instructions, which
    the app shows as having none)."""
    if not kernel.instructions:
        return []
    return [printable(ins.name) for ins in kernel.instructions] + [
        printable(f"{ins.name} (shared)") for ins in kernel.shared_instructions]


def warp_view(pattern: Pattern, selection: Selection) -> WarpView:
    """(pattern, selection) -> the current warp instruction, laid out for the grid (a shared
    one: its executions counted, drawn by the banks diagram), kept in the one cache."""
    return MEMO.get("warp view", (read_as(pattern), selection),
                    lambda: _warp_view(pattern, selection))


def _warp_view(pattern: Pattern, selection: Selection) -> WarpView:
    kernel = kernel_for(pattern)
    if not kernel.instructions:
        return WarpView(pattern, kernel, selection, None, None, 0, None, None, NO_GLOBAL)
    shared = selection.instruction - len(kernel.instructions)
    ins = kernel.shared_instructions[shared] if shared >= 0 else \
        kernel.instructions[selection.instruction]
    try:
        detail = warp_detail(pattern, selection.warp)
        if shared >= 0:
            count = len(shared_warp_detail(pattern, selection.warp).executions[shared])
            return WarpView(pattern, kernel, selection, ins, detail, count, None, None)
    except PatternError as err:
        return WarpView(pattern, kernel, selection, ins, None, 0, None, None, str(err))
    runs = detail.executions[selection.instruction]
    execution = runs[selection.run] if runs else None
    layout = None if execution is None else grid_layout(
        execution, ins.width, pattern.sector_bytes, kernel.arrays[ins.first_array].address0,
        detail.valid)
    return WarpView(pattern, kernel, selection, ins, detail, len(runs), execution, layout)


def complete(details: WarpDetails | None) -> bool:
    """Whether `details` have arrived and neither part failed."""
    return details is not None and not isinstance(details.detail, str) \
        and not isinstance(details.shared, str)


def working_out(warp: int) -> str:
    """What a view shows of warp `warp` while its details are being worked out."""
    return f"warp {warp:,}: working out its lanes…"


def waiting_view(pattern: Pattern, selection: Selection, details: WarpDetails | None
                 ) -> WarpView:
    """The view of a warp whose details are still being worked out (None) or failed (the
    error in `details`): its instruction, no lanes, and a line saying which."""
    kernel = kernel_for(pattern)
    if not kernel.instructions:
        return WarpView(pattern, kernel, selection, None, None, 0, None, None, NO_GLOBAL)
    names = (*kernel.instructions, *kernel.shared_instructions)
    ins = names[selection.instruction]
    if details is None:
        return WarpView(pattern, kernel, selection, ins, None, 0, None, None,
                        working_out(selection.warp), pending=True)
    error = details.detail if isinstance(details.detail, str) else str(details.shared)
    return WarpView(pattern, kernel, selection, ins, None, 0, None, None, error)


def checked(pattern: Pattern, warp: int = 0) -> Pattern:
    """`pattern`, once its kernel resolves and (the file's own accesses) warp `warp` runs (or
    warp 0 past the end); else PatternError naming the first problem, so an editor can keep
    the last good state. A kernel pattern's warp runs in the details worker (Document.details:
    minutes on the lane path for a large kernel), its error shown in the grid."""
    kernel = kernel_for(pattern)
    if pattern.kernel is None:
        warp_detail(pattern, warp if warp < kernel.warps else 0)
    return pattern


@dataclass(frozen=True)
class _Check:
    """A kernel pattern being checked on a thread: what to call with the answer."""

    token: int  # NewestCall's
    pattern: Pattern
    accept: Callable[[Pattern], None]
    refuse: Callable[[PatternError], None]


class SetPattern(QUndoCommand):
    """Replace the pattern; consecutive edits with the same merge key become one step."""

    _ids: dict[str, int] = {}

    def __init__(self, document: "Document", before: Pattern, after: Pattern, text: str,
                 merge_key: str | None):
        super().__init__(text)
        self.document, self.before, self.after = document, before, after
        self._id = -1 if merge_key is None else self._ids.setdefault(merge_key, len(self._ids) + 1)

    def id(self) -> int:
        return self._id

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SetPattern) or other.id() != self.id():
            return False
        self.after = other.after
        self.setText(other.text())  # the entry names the value the field holds now
        self.setObsolete(self.after == self.before)
        return True

    def redo(self) -> None:
        self.document._apply(self.after)

    def undo(self) -> None:
        self.document._apply(self.before)


class Document(QObject):
    """The current pattern, its file, its undo stack, the selection and the analysis."""

    changed = Signal(int)  # Change flags
    progress = Signal(int, int)  # analysis progress: done warps, total warps
    kernel_failed = Signal(str)  # the current pattern's kernel did not resolve: the line why
    file_changed_on_disk = Signal()  # the pattern's own file: the window decides to reload
    checking = Signal(str)  # an edit's kernel is being compiled and read: the line saying so
    # ("" once it is answered)

    def __init__(self, pattern: Pattern, path: Path | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self._pattern, self._path, self._selection = pattern, path, Selection()
        self.opened = 0  # counts the files opened (resets): which file a view's picture is of
        self._analysis: Analysis | None = None
        self.analysis_error: str | None = None
        self._partial: Analysis | None = None  # the warps done so far while a run goes on
        self._depth, self._pending = 0, Change(0)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._runner = AnalysisRunner(self)
        self._runner.progress.connect(self.progress)
        self._runner.finished.connect(self._on_analysis)
        self._runner.partial.connect(self._on_partial)
        self._details = DetailRunner(self)
        self._details.arrived.connect(self._on_details)
        self._kernels = KernelResolver(self)  # compiles and reads a kernel on a thread
        self._kernels.resolved.connect(self._on_kernel)
        self._kernels.request(pattern)
        self._checks = NewestCall()  # an edited kernel pattern's check(); no parent: see
        # NewestCall
        self._checks.done.connect(self._on_checked)
        self._check: _Check | None = None  # the newest check not yet answered
        # an input the analysis read (kernel source, include, values) changed on disk: the
        # same pattern means new numbers; the pattern file itself: the window asks first
        self._watch = DiskWatch(self)
        self._watch.inputs_changed.connect(self.reanalyze)
        self._watch.pattern_changed.connect(self.file_changed_on_disk)
        self._watch.watch_pattern(path)
        self._request_analysis()

    # ------------------------------------------------------------ reading

    @property
    def pattern(self) -> Pattern:
        return self._pattern

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def selection(self) -> Selection:
        return self._selection

    @property
    def modified(self) -> bool:
        return not self.undo_stack.isClean()

    @property
    def analysis(self) -> Analysis | None:
        """The grid-wide analysis, once both it and the kernel have arrived."""
        return None if self._resolved() is None else self._analysis

    @analysis.setter
    def analysis(self, analysis: Analysis | None) -> None:
        self._analysis = analysis

    @property
    def partial(self) -> Analysis | None:
        """The warps counted so far while an analysis runs (once the kernel has arrived)."""
        return None if self._resolved() is None else self._partial

    @partial.setter
    def partial(self, so_far: Analysis | None) -> None:
        self._partial = so_far

    @property
    def analysis_running(self) -> bool:
        """Whether the grid-wide analysis, or the kernel it is shown against, is on its way."""
        return self._runner.busy or self.kernel_pending

    @property
    def kernel(self) -> FrontEnd:
        """The pattern's resolved kernel; until it arrives (a thread compiles and reads it:
        `changed` says when) or when it failed, its launch alone, without instructions."""
        return self._resolved() or stand_in(self._pattern)

    @property
    def kernel_known(self) -> bool:
        """Whether the pattern's kernel has arrived (or needs no compiler: its own accesses)."""
        return self._resolved() is not None

    @property
    def kernel_pending(self) -> bool:
        """Whether the pattern's kernel is still being compiled and read."""
        return self._resolved() is None and self.kernel_error is None

    @property
    def kernel_error(self) -> str | None:
        """Why the pattern's kernel did not resolve, or None."""
        return self._kernels.error(self._pattern)

    def _resolved(self) -> FrontEnd | None:
        return self._kernels.request(self._pattern)

    def view(self) -> WarpView:
        """The selected warp instruction, or a view saying its details are on their way
        (computed by a worker process; `changed` says when they arrive) or why they failed;
        until the kernel has arrived, its launch with a line saying it is being compiled
        (or why it failed)."""
        if self._resolved() is None:
            error = self.kernel_error
            return WarpView(self._pattern, self.kernel, self._selection, None, None, 0, None,
                            None, error or compiling(self._pattern), pending=error is None,
                            kernel_known=False)
        details = self.details()
        if not complete(details):
            return waiting_view(self._pattern, self._selection, details)
        return warp_view(self._pattern, self._selection)

    def details(self, warp: int | None = None) -> WarpDetails | None:
        """The details of `warp` (None: the selected one) if they have arrived, else None
        after asking the worker for them (once the kernel has arrived; a kernel that failed
        gives its error); a pattern whose accesses are the file's own affine expressions (no
        `kernel`) has them at once, worked out on this thread."""
        warp = self._selection.warp if warp is None else warp
        if self._pattern.kernel is None:
            return warp_details(self._pattern, warp)
        if self._resolved() is None:
            error = self.kernel_error
            return None if error is None else WarpDetails(warp, error, None)
        return self._details.request(self._pattern, warp)

    def shown_details(self) -> WarpDetails:
        """The selected warp's details, or, until they arrive, ones whose every part says
        they are being worked out (the sheet shows that line in their rows)."""
        warp = self._selection.warp
        text = working_out(warp) if self._resolved() else compiling(self._pattern)
        return self.details() or WarpDetails(
            warp, text, text if self.kernel.shared_instructions else None, pending=True)

    @property
    def details_pending(self) -> bool:
        """Whether the selected warp's details are still being worked out."""
        return self.details() is None

    # ------------------------------------------------------------ writing

    def set_pattern(self, pattern: Pattern, text: str, merge_key: str | None = None) -> None:
        """Make `pattern` current as one undoable step named `text`."""
        if pattern != self._pattern:
            self.undo_stack.push(SetPattern(self, self._pattern, pattern, text, merge_key))

    def check(self, pattern: Pattern, accept: Callable[[Pattern], None],
              refuse: Callable[[PatternError], None], warp: int | None = None) -> None:
        """checked(pattern, warp (None: the selected one)), then accept(pattern) or
        refuse(error) on the UI thread: at once for a pattern of the file's own accesses; for a
        kernel pattern once a thread has compiled and read its kernel (`checking` says so
        meanwhile). A newer check drops an older one, and so does a
        change of the pattern (undo, another file)."""
        self._drop_check()
        warp = self._selection.warp if warp is None else warp
        if pattern.kernel is None:
            try:
                checked(pattern, warp)
            except PatternError as err:
                refuse(err)
                return
            accept(pattern)
            return
        token = self._checks.run(lambda: checked(pattern, warp))
        self._check = _Check(token, pattern, accept, refuse)
        self.checking.emit(compiling(pattern))

    @property
    def check_pending(self) -> bool:
        """Whether an edit's check is still on its way."""
        return self._check is not None

    def reset(self, pattern: Pattern, path: Path | None) -> None:
        """A new or opened file: new pattern, empty undo history, first warp."""
        with self.batch():
            self._path = path
            self._watch.watch_pattern(path)
            self._selection = Selection()
            self.opened += 1
            self._apply(pattern)
            self.undo_stack.clear()
            self._notify(Change.FILE | Change.SELECTION)

    def reload(self, pattern: Pattern) -> None:
        """The pattern file as it is now on disk: current, with a fresh undo history and the
        same warp and instruction where they still exist."""
        with self.batch():
            self.opened += 1
            self._watch.watch_pattern(self._path)
            self._apply(pattern)
            self.undo_stack.clear()
            self._notify(Change.FILE)

    def relocate(self, pattern: Pattern) -> None:
        """The current pattern as saved in another folder (its `base_dir`, its relative paths
        rewritten to name the same files): current without an undo step, as it changes
        nothing the pattern computes."""
        if pattern != self._pattern:
            self._apply(pattern)

    def mark_saved(self, path: Path) -> None:
        with self.batch():
            self._path = path
            self._watch.watch_pattern(path)  # our own write is no change
            self.undo_stack.setClean()
            self._notify(Change.FILE)

    def select(self, warp: int | None = None, instruction: int | None = None,
               run: int | None = None) -> None:
        """Move the selection; values are clamped to the kernel's warps and instructions."""
        s = self._selection
        new = self._clamped(replace(
            s, warp=s.warp if warp is None else warp,
            instruction=s.instruction if instruction is None else instruction,
            run=s.run if run is None else run))
        if new != s:
            self._selection = new
            self._notify(Change.SELECTION)

    def cancel_analysis(self) -> None:
        """Stop the grid analysis in progress; the pattern and its undo history stay."""
        if self._runner.busy:
            self._runner.cancel()
            self.partial = None
            self.analysis_error = "cancelled; edit the pattern to run it again"
            self._notify(Change.ANALYSIS)

    def shutdown(self) -> None:
        """Stop background work, waiting for none of it (call before the window goes away)."""
        self._runner.shutdown()
        self._details.shutdown()
        self._drop_check()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Changes inside the block are emitted once, when the outermost block ends."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if not self._depth and self._pending:
                flags, self._pending = self._pending, Change(0)
                self.changed.emit(int(flags))

    # ------------------------------------------------------------ internals

    def _notify(self, flags: Change) -> None:
        with self.batch():
            self._pending |= flags

    def _on_clean_changed(self, _clean: bool) -> None:
        self._notify(Change.FILE)

    def _clamped(self, s: Selection) -> Selection:
        kernel = self.kernel
        warp = min(max(s.warp, 0), kernel.warps - 1)
        if self._resolved() is None:  # instruction and run: clamped once the kernel arrives
            return Selection(warp, max(s.instruction, 0), max(s.run, 0))
        k = max(min(s.instruction, len(instruction_names(kernel)) - 1), 0)
        details = self.details(warp)
        if details is None:
            return Selection(warp, k, max(s.run, 0))  # clamped once its details arrive
        if not complete(details):
            return Selection(warp, k, 0)
        runs = warp_view(self._pattern, Selection(warp, k)).runs
        return Selection(warp, k, min(max(s.run, 0), max(runs - 1, 0)))

    def _apply(self, pattern: Pattern) -> None:
        if pattern != self._pattern:  # undo, open: an edit of the pattern before is dropped
            self._drop_check()
        with self.batch():
            self._pattern = pattern
            selection = self._clamped(self._selection)
            if selection != self._selection:
                self._selection = selection
                self._pending |= Change.SELECTION
            self._pending |= Change.PATTERN
            self._request_analysis()

    def reanalyze(self) -> None:
        """Analyze the pattern again, and redraw its views (the work budget changed, or a
        file it read); a kernel that failed is compiled again."""
        self._kernels.forget(self._pattern)
        self._apply(self._pattern)

    def _request_analysis(self) -> None:
        self.analysis = self._runner.request(self._pattern)
        self.analysis_error = self.partial = None
        if self._analysis is not None:
            self._watch.watch_inputs(self._runner.files)
        self._notify(Change.ANALYSIS)

    def _on_partial(self, pattern: Pattern, so_far: Analysis) -> None:
        if pattern == self._pattern and self._analysis is None:
            self.partial = so_far
            self._notify(Change.ANALYSIS)

    def _on_kernel(self, pattern: Pattern, error: str) -> None:
        """The kernel arrived (or failed, `error` saying why): every view redraws."""
        if pattern != self._pattern:
            return
        with self.batch():
            self._selection = self._clamped(self._selection)
            self._notify(Change.PATTERN | Change.SELECTION | Change.ANALYSIS)
        if error:
            self.kernel_failed.emit(error)

    def _drop_check(self) -> None:
        """Forget the check on its way, if any (its answer is not taken)."""
        if self._check is not None:
            self._checks.cancel()
            self._check = None
            self.checking.emit("")

    def _on_checked(self, token: int, _pattern: Pattern | None,
                    error: Exception | None) -> None:
        """A check answered: its accept or refuse, if it is the newest (and the pattern it
        was made from is still current: _apply drops it otherwise)."""
        check = self._check
        if check is None or token != check.token:
            return
        self._check = None
        self.checking.emit("")
        if error is None:
            check.accept(check.pattern)
        elif isinstance(error, PatternError):
            check.refuse(error)
        else:
            raise error  # a bug: as it would have been raised on this thread

    def _on_details(self, pattern: Pattern, warp: int) -> None:
        """A warp's details arrived: the views redraw if it is the one selected."""
        if pattern == self._pattern and warp == self._selection.warp:
            self._selection = self._clamped(self._selection)
            self._notify(Change.SELECTION)

    def _on_analysis(self, pattern: Pattern, analysis: Analysis | None, error: str) -> None:
        if pattern == self._pattern:
            self.analysis, self.analysis_error = analysis, error or None
            self.partial = None
            self._watch.watch_inputs(self._runner.files)
            self._notify(Change.ANALYSIS)
