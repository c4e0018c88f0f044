"""The main window: editor (left), warp stepper and grid (centre), accounting sheet (right),
the overview and sectors-per-request histogram under the grid on a tall screen or as tabs
beside the sheet on a short one (a projector), so the grid always shows the whole warp; menus
with a shortcut for every action; files, undo/redo, themes and settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QTabBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..host.kernels import global_functions
from ..host.starter import pattern_path, write_starter
from ..model import Pattern, PatternError, load_pattern, pattern_from_dict, pattern_from_text
from ..model.budget import DEFAULT_WORK, default_work, set_default_work
from ..model.errors import printable
from ..model.frontend import kernel_for
from ..paths import example_paths, examples_dir
from ..scene.grid import GridLayout
from ..scene.overview import next_worst_warp
from .background import NewestCall
from .compare_window import CompareWindow, compare_areas, fit_frame
from .document import Change, Document, checked
from .editor import PatternEditor
from .fields import ERROR_COLOUR
from .files import (
    FILTER,
    OPEN_FILTER,
    SUFFIX,
    add_recent,
    recent_files,
    save_document,
    saves_in_place,
    settings,
)
from .grid_view import ZOOM_STEP, GridPane
from .help import show_about, show_guide
from .histogram_view import HistogramView
from .include_dialog import SETTING as INCLUDE_SETTING
from .include_dialog import IncludeFoldersDialog
from .lessons import example_title, lesson_groups
from .overview import OverviewView
from .present import Presentation
from .resolver import compiling, stand_in
from .sheet_view import SheetView
from .stepper import Stepper
from .stored import StoredSettings
from .sweep_view import SCHEDULER_CHARS, SCHEDULER_SETTING, SweepView
from .theme import THEMES, apply_theme
from .values_fix import ValuesFix

MAX_WORK_MILLIONS = 2**31 - 1  # the Work Budget dialog's largest value, in millions

NEW_PATTERN = """{
  "format": "sectorviz.pattern/1",
  "name": "untitled",
  "params": {"n": 1048576, "threads": 256, "stride": 1},
  "launch": {"grid": ["(n + threads - 1) / threads"], "block": ["threads"]},
  "arrays": {"x": {"dtype": "float32", "length": "n * stride"}},
  "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
  "guard": "i < n",
  "accesses": [{"name": "load x[stride*i]", "op": "load", "array": "x", "index": "stride * i"}]
}"""
DEFAULT_SIZE = (1600, 980)  # pixels, on a screen large enough
SCREEN_FRACTION = 0.9  # at most this much of the available screen, each way
PLOTS_HEIGHT_PERCENT = 30  # of the window, for the overview and histogram under the grid
TALL_SCREEN = 900  # pixels of available height: below, the window fills the screen and the
# overview and histogram are tabs beside the sheet (the grid needs the height for 32 lanes)
EDITOR_MAX_FRACTION = 0.32  # the widest the editor dock opens or widens to, of the window
KERNEL_MAX_FRACTION = 0.42  # ... on the Kernel tab, whose code needs its columns
EDITOR_PERCENT = SHEET_PERCENT = 22  # the least each side dock gets, of the window's width
DOCKS_PERCENT = 46  # editor and sheet together, at least: the grid keeps the rest (>= 36%)
SHOW_PROGRESS_MS = 300  # a grid analysis running this long shows its progress and Cancel
# the docks' full names, for the View menu and the tooltips of their tabs (titled short)
DOCK_NAMES = {"Sheet": "Accounting sheet", "Overview": "Kernel overview",
              "Histogram": "Sectors per request histogram"}
EDITING_KEYS = {Qt.Key_Left, Qt.Key_Right, Qt.Key_Up, Qt.Key_Down, Qt.Key_Home, Qt.Key_End,
                Qt.Key_Space}


def load_checked(path: Path, include_dirs: tuple[str, ...] = (),
                 resolve: bool = True) -> Pattern:
    """A pattern file (which may also read files in `include_dirs`) -> a Pattern whose kernel
    resolves (and, for the file's own affine accesses, whose warp 0 runs: a CUDA kernel's
    warp runs in the details worker, its error shown in the grid); PatternError with the
    file's name (the kernel's .cu for an error in it). `resolve` off: a kernel's launch only
    is checked (the window's Document compiles and reads the kernel on a thread)."""
    try:
        pattern = load_pattern(path, include_dirs)
        if pattern.kernel is not None:
            if resolve:
                kernel_for(pattern)
            else:
                stand_in(pattern)
            return pattern
        return checked(pattern)
    except PatternError as err:
        raise PatternError(err.file or str(path), str(err)) from None


class _EditingKeys(QObject):
    """Arrow keys, Home/End and Space stay with text fields, spin boxes and combo boxes;
    everywhere else they step warps and instructions."""

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        # isinstance first: an application-wide filter can be handed an object PySide does
        # not wrap as an event while widgets are being torn down
        if (isinstance(ev, QKeyEvent) and ev.type() == QEvent.ShortcutOverride
                and ev.key() in EDITING_KEYS
                and not ev.modifiers() & Qt.ControlModifier
                and isinstance(obj, (QLineEdit, QAbstractSpinBox, QComboBox, QPlainTextEdit))):
            ev.accept()
            return True
        return False


class MainWindow(QMainWindow):
    """One document, its panes and its actions."""

    def __init__(self, pattern: Pattern, path: Path | None = None, restore: bool = True,
                 include_dirs: tuple[str, ...] = ()):
        """`restore`: reopen with the saved window layout and theme (off for screenshots,
        which use the default layout and the light theme). `include_dirs`: the command
        line's --include-dir folders; the stored ones (Settings > Include Folders…) follow
        them, for every pattern the window opens."""
        super().__init__()
        self.setObjectName("mainWindow")
        self.store = settings()
        self.given_include_dirs = tuple(include_dirs)
        stored = StoredSettings(self.store)
        self.stored_include_dirs = stored.folders(INCLUDE_SETTING)
        self.document = Document(pattern, path, self)
        self.compare_windows: list[CompareWindow] = []
        self._starter = NewestCall()  # a bare .cu's starting pattern; no parent: see NewestCall
        self._starter.done.connect(self._starter_written)
        self._making: tuple[Path, str, Path] | None = None  # its .cu, kernel and file
        self.presentation: Presentation | None = None
        self.grid_pane = GridPane(self.document)
        self.grid_view = self.grid_pane.view
        self.stepper = Stepper(self.document)
        self.overview = OverviewView(self.document)
        self.histogram = HistogramView(self.document)
        self.sweep = SweepView(self.document)
        self.sweep.scheduler.editingFinished.connect(
            lambda: self.store.setValue(SCHEDULER_SETTING, self.sweep.scheduler.text().strip()))
        self.sheet = SheetView(self.document)
        self.editor = PatternEditor(self.document)
        self.message = QLabel(objectName="statusMessage")
        self.progress = QProgressBar(objectName="analysisProgress", maximumWidth=220)
        self.progress.setFormat("grid analysis %p%")
        self.progress.hide()
        self.cancel = QToolButton(objectName="cancelAnalysis", text="Cancel",
                                  toolTip="Stop the grid analysis (editing stops it too)")
        self.cancel.clicked.connect(self.document.cancel_analysis)
        self.cancel.hide()
        self._build_panes()
        self._build_actions()
        self._keys = _EditingKeys(self)
        QApplication.instance().installEventFilter(self._keys)
        self.setAcceptDrops(True)
        self.document.changed.connect(self._on_changed)
        self.document.progress.connect(self._on_progress)
        self.document.file_changed_on_disk.connect(self.reload_from_disk)
        self.document.kernel_failed.connect(self.show_error)
        self._checking = ""  # the status line of the edit being checked, while it is
        self.document.checking.connect(self._on_checking)
        notes = stored.notes + (self._restore_settings() if restore else [])
        if not restore:
            self.set_theme("light", remember=False)
        self._on_changed(Change.FILE | Change.ANALYSIS)
        if notes:
            self.show_message("; ".join(notes))
        self.grid_view.setFocus()

    # ------------------------------------------------------------ public API

    @property
    def include_dirs(self) -> tuple[str, ...]:
        """The folders besides a pattern's root its files may be read from: --include-dir,
        then the stored include folders."""
        return tuple(dict.fromkeys((*self.given_include_dirs, *self.stored_include_dirs)))

    def set_include_dirs(self, folders: tuple[str, ...]) -> None:
        """Settings > Include Folders…: keep `folders` in the settings, use them for every
        pattern opened from now on and for the current one (whose numbers may change: an
        include found there now)."""
        old = self.include_dirs
        self.stored_include_dirs = tuple(folders)
        self.store.setValue(INCLUDE_SETTING, list(folders))
        pattern = self.document.pattern
        own = tuple(d for d in pattern.include_dirs if d not in old)  # e.g. a moved root
        where = self.document.path or pattern.name
        try:
            again = pattern_from_dict(pattern.to_dict(), pattern.base_dir,
                                      (*self.include_dirs, *own))
        except PatternError as err:
            self.show_error(f"{err.file or where}: {err}")
            return
        self.document.check(again, self._relocated,
                            lambda err: self.show_error(f"{err.file or where}: {err}"), warp=0)

    def _relocated(self, pattern: Pattern) -> None:
        self.document.relocate(pattern)
        self.show_message("include folders: " + (", ".join(self.include_dirs) or "none"))

    @property
    def grid_layout(self) -> GridLayout | None:
        """The lane-to-sector layout the grid shows now."""
        return self.grid_view.layout

    def set_warp(self, n: int) -> None:
        self.document.select(warp=n)

    def set_instruction(self, k: int) -> None:
        self.document.select(instruction=k)

    def next_worst_warp(self) -> None:
        """Select the next warp with the most sectors per request for this instruction."""
        doc = self.document
        if doc.analysis is None or doc.analysis.per_warp_sectors is None:
            self.show_message("the grid analysis is not ready yet")
            return
        k = doc.selection.instruction
        if k >= len(doc.kernel.instructions):
            self.show_message("a shared instruction has no per-warp sector counts")
            return
        warp = next_worst_warp(doc.analysis, k, doc.selection.warp)
        if warp is None:
            self.show_message("no warp runs this instruction")
            return
        doc.select(warp=warp)
        self.show_message(f"warp {warp}: the most sectors per request for "
                          f"{doc.kernel.instructions[k].name}")

    def open_path(self, path: str | Path) -> bool:
        """Open a pattern file, or a bare .cu (open_cuda), all or nothing: a broken file
        (its CUDA not compiling included) leaves the whole window as it was and shows one
        line naming the file and place; a good one replaces the current work after the
        unsaved-changes prompt. Returns whether it opened (a kernel pattern: whether it is
        being compiled; it opens, or shows why not, when that is done: _open_checked)."""
        path = Path(path)
        if path.suffix == ".cu":
            return self.open_cuda(path)
        return self._open_file(path, f"opened {path}")

    def _open_file(self, path: Path, note: str) -> bool:
        """open_path of a pattern file, `note` in the status bar once it opened."""
        try:
            pattern = load_pattern(path, self.include_dirs)
        except PatternError as err:
            self.show_error(f"{path}: {err}")
            return False
        return self._open_checked(pattern, path, path, lambda: (
            add_recent(self.store, path), self.show_message(note)))

    def _open_checked(self, pattern: Pattern, source: Path, path: Path | None,
                      opened: Callable[[], None]) -> bool:
        """Make `pattern`, read from `source`, current as file `path` (None: untitled) once it
        passes Document.check (a kernel pattern's compile runs on a thread, the status bar
        saying so) and the unsaved-changes prompt lets it, then call `opened`; a refusal shows
        one line naming the file and leaves the window as it was. Whether it opened or is
        still being checked."""
        outcome: list[bool] = []

        def accept(good: Pattern) -> None:
            outcome.append(self.maybe_save())
            if outcome[0]:
                self.document.reset(good, path)
                opened()

        def refuse(err: PatternError) -> None:
            outcome.append(False)
            self.show_error(f"{err.file or source}: {err}")

        self.document.check(pattern, accept, refuse, warp=0)
        return outcome[0] if outcome else True

    def reload_from_disk(self) -> bool:
        """The pattern file changed on disk (another editor saved it): read it again, keeping
        the warp and instruction; with unsaved edits here, only if the user agrees. A file
        that no longer loads leaves the current work as it was. Returns whether it reloaded
        (a kernel pattern: whether it is being compiled)."""
        path = self.document.path
        if path is None:
            return False
        if self.document.modified and QMessageBox.question(
                self, "Changed on disk",
                f"{path.name} changed on disk. Reload it and discard your unsaved changes?",
                QMessageBox.Yes | QMessageBox.No, QMessageBox.No) != QMessageBox.Yes:
            return False
        try:
            pattern = load_pattern(path, self.include_dirs)
        except PatternError as err:
            self.show_error(f"{path}: {err}")
            return False
        refused: list[PatternError] = []
        self.document.check(pattern, lambda good: self._reloaded(good, path),
                            lambda err: (refused.append(err),
                                         self.show_error(f"{err.file or path}: {err}")),
                            warp=0)
        return not refused

    def _reloaded(self, pattern: Pattern, path: Path) -> None:
        self.document.reload(pattern)
        self.show_message(f"reloaded {path.name}: it changed on disk")

    def open_cuda(self, cu: Path) -> bool:
        """A bare .cu: pick one of its __global__ functions (asked when it has several) and
        open a starting pattern for it, saved beside the .cu (host/starter.py: it compiles the
        kernel to check the host launch's pattern, so on a thread, then opened as open_path
        does). Whether it is being made."""
        try:
            kernels = global_functions(cu, self.include_dirs)
        except PatternError as err:
            self.show_error(f"{err.file or cu}: {err}")
            return False
        if not kernels:
            self.show_error(f"{cu}: no __global__ function to make a pattern for")
            return False
        names = [k.name for k in kernels]
        name = names[0]
        if len(names) > 1:
            name, ok = QInputDialog.getItem(self, "Make a pattern",
                                            f"{cu.name}: the kernel to look at", names, 0,
                                            False)
            if not ok:
                return False
        kernel, folders = kernels[names.index(name)], self.include_dirs
        self._making = (cu, name, pattern_path(cu, kernel.name))
        self._starter.run(lambda: write_starter(cu, kernel, folders))
        self.show_message(f"making a pattern for {name}: compiling {cu.name}…")
        return True

    def _starter_written(self, token: int, path: Path | None, error: Exception | None) -> None:
        """A bare .cu's starting pattern was written (open it) or could not be (say why)."""
        if token != self._starter.token or self._making is None:
            return
        (cu, name, planned), self._making = self._making, None
        if isinstance(error, OSError):
            self.show_error(f"{planned}: cannot save: {error.strerror or error}")
            return
        if error is not None:
            raise error  # a bug: as it would have been raised on this thread
        assert path is not None
        self._open_file(path, f"made {path.name} for {name} beside {cu.name}: set its "
                              "launch, params and array lengths in the Form tab")

    @property
    def checking(self) -> bool:
        """Whether an edit or a file being opened is still being compiled and checked (a bare
        .cu's starting pattern being written included)."""
        return self._making is not None or self.document.check_pending

    def compare_with(self, path: str | Path) -> CompareWindow | None:
        """Open pattern file B beside this one (its grid steps with this one's); a broken
        file shows its one-line error and opens nothing. B's window, or None when it is not
        opened or not yet: a kernel pattern opens once a thread has compiled it (Document.check;
        `compare_windows` then holds it)."""
        path = Path(path)
        try:
            pattern = load_pattern(path, self.include_dirs)
        except PatternError as err:
            self.show_error(f"{path}: {err}")
            return None
        opened: list[CompareWindow] = []
        self.document.check(pattern, lambda good: opened.append(self._open_comparison(good, path)),
                            lambda err: self.show_error(f"{err.file or path}: {err}"), warp=0)
        return opened[0] if opened else None

    def present(self) -> Presentation:
        """Presentation mode (F5): the answer, the grid and the sheet's lines about the
        instruction, full screen; F5 again (or Esc there) leaves it."""
        if self.presentation is not None:
            self.presentation.close()
            return self.presentation
        self.presentation = Presentation(self.document, lambda: self.sheet.sheet,
                                         THEMES[self._theme_name()])
        self.presentation.closed.connect(self._left_presentation)
        self.presentation.showFullScreen()
        self.presentation.activateWindow()
        return self.presentation

    def _left_presentation(self) -> None:
        self.presentation = None

    def duplicate_as_variant(self) -> CompareWindow:
        """A copy of the current pattern beside it, to edit and compare against the original."""
        return self._open_comparison(self.document.pattern, None)

    def _open_comparison(self, pattern: Pattern, path: Path | None) -> CompareWindow:
        window = CompareWindow(self.document, pattern, path, THEMES[self._theme_name()])
        self.compare_windows.append(window)
        window.show()  # first: its frame is known once shown
        self.place_comparison(window)
        return window

    def place_comparison(self, window: CompareWindow, available: QRect | None = None) -> None:
        """A and B side by side on a wide screen (compare_areas), B over A, inside the
        screen, on a narrow one; `available`: the screen's available geometry by default."""
        if available is None:
            available = (self.screen() or QGuiApplication.primaryScreen()).availableGeometry()
        frame = self.frameGeometry().width() - self.geometry().width()
        mine, theirs = compare_areas(available, self.minimumSizeHint().width() + frame)
        if mine is not None:
            fit_frame(self, mine)
            self._share_docks(self.width() * EDITOR_PERCENT // 100)
        window.fit_into(theirs)

    def import_measurements(self, path: str | Path) -> bool:
        """Nsight Compute's raw CSV beside the predictions (the sheet's last step); a bad file
        shows its one-line error and keeps what was imported before."""
        try:
            self.sheet.measurements.load(path)
        except PatternError as err:
            self.show_error(str(err))
            return False
        self.show_message(f"measurements from {Path(path).name}: see the sheet's last step")
        return True

    def _import_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import Nsight Compute measurements", "",
                                              "ncu --csv --page raw (*.csv);;All files (*)")
        if path:
            self.import_measurements(path)

    def _theme_name(self) -> str:
        return "dark" if self.dark_action.isChecked() else "light"

    def _compare_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with", str(examples_dir()), FILTER)
        if path:
            self.compare_with(path)

    def open_example(self, path: Path) -> bool:
        """An example opens as an untitled copy, so saving never overwrites the bundled file
        (a kernel example once it is compiled: _open_checked)."""
        try:
            pattern = load_pattern(path, self.include_dirs)
        except PatternError as err:
            self.show_error(f"{path}: {err}")
            return False
        return self._open_checked(pattern, path, None, lambda: self.show_message(
            f"example {path.name}: Save As to keep your changes"))

    def new_file(self) -> None:
        if self.maybe_save():
            self.document.reset(checked(pattern_from_text(NEW_PATTERN)), None)

    def save(self) -> bool:
        """Save in place; an untitled pattern or a bundled example asks for a new name."""
        path = self.document.path
        return self._write(path) if saves_in_place(path) else self.save_as()

    def save_as(self) -> bool:
        start = str(self.document.path or Path.cwd() / f"{self.document.pattern.name}{SUFFIX}")
        name, _ = QFileDialog.getSaveFileName(self, "Save pattern as", start, FILTER)
        return bool(name) and self._write(Path(name))

    def maybe_save(self) -> bool:
        """Ask about unsaved changes: True to go on (saved or discarded), False to stay."""
        if not self.document.modified:
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes",
            f"Save the changes to {self._title_name()} first?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if answer == QMessageBox.Save:
            return self.save()
        return answer == QMessageBox.Discard

    def show_message(self, text: str) -> None:
        """One line in the status bar (names from files in it as visible escapes)."""
        self.message.setStyleSheet("")
        self.message.setText(printable(text))

    def _on_checking(self, line: str) -> None:
        """An edit's kernel is being compiled and read: its line in the status bar until the
        check is answered (then cleared, unless something else was shown meanwhile)."""
        if line:
            self.show_message(line)
        elif self.message.text() == self._checking:
            self.show_message("")
        self._checking = self.message.text() if line else ""

    def show_error(self, text: str) -> None:
        """One line in the status bar, in the error colour; never a modal dialog."""
        self.message.setStyleSheet(f"color: {ERROR_COLOUR};")
        self.message.setText(printable(text.splitlines()[0]) if text else "error")

    def set_theme(self, name: str, remember: bool = True) -> None:
        theme = THEMES[name]
        apply_theme(QApplication.instance(), theme)
        views = [self.grid_view, self.overview, self.histogram, self.sheet, self.editor.kernel,
                 self.sweep, *self.compare_windows]
        if self.presentation is not None:
            views.append(self.presentation)
        for view in views:
            view.set_theme(theme)
        self.dark_action.setChecked(name == "dark")
        if remember:
            self.store.setValue("theme", name)

    # ------------------------------------------------------------ building

    def _build_panes(self) -> None:
        centre = QWidget()
        box = QVBoxLayout(centre)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(self.stepper)
        box.addWidget(self.grid_pane, 1)
        self.setCentralWidget(centre)
        for corner, area in ((Qt.BottomLeftCorner, Qt.LeftDockWidgetArea),
                             (Qt.BottomRightCorner, Qt.RightDockWidgetArea)):
            self.setCorner(corner, area)  # the bottom docks sit under the grid only
        self.editor_dock = self._dock("Pattern", "editorDock", self.editor, Qt.LeftDockWidgetArea)
        self.sheet_dock = self._dock("Sheet", "sheetDock", self.sheet, Qt.RightDockWidgetArea)
        self.overview_dock = self._dock("Overview", "overviewDock", self.overview,
                                        Qt.BottomDockWidgetArea)
        self.histogram_dock = self._dock("Histogram", "histogramDock", self.histogram,
                                         Qt.BottomDockWidgetArea)
        self.sweep_dock = self._dock("Sweep", "sweepDock", self.sweep, Qt.BottomDockWidgetArea)
        self.sweep_dock.hide()  # until Tools > Sweep…
        self.statusBar().addWidget(self.message, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel)
        self.statusBar().addPermanentWidget(ValuesFix(self.document, self))
        self.fit_to_screen()
        self.editor.currentChanged.connect(self._widen_editor)

    def fit_to_screen(self, available: QRect | None = None) -> None:
        """Open at DEFAULT_SIZE, or at most SCREEN_FRACTION of the screen's available
        geometry (`available`, else the screen's), centred on it; on a screen shorter than
        TALL_SCREEN (a projector) fill it, frame included, with the overview and histogram
        as tabs beside the sheet. The docks share the width so the grid, the sheet and the
        editor are all on screen."""
        if available is None:
            screen = self.screen() or QGuiApplication.primaryScreen()
            available = screen.availableGeometry()
        frame = self.frameGeometry().size() - self.geometry().size()  # 0 x 0 until shown
        w = min(DEFAULT_SIZE[0], int(available.width() * SCREEN_FRACTION))
        h = min(DEFAULT_SIZE[1], int(available.height() * SCREEN_FRACTION))
        short = available.height() < TALL_SCREEN
        if short:
            w, h = available.width() - frame.width(), available.height() - frame.height()
        self.resize(w, h)
        self.move(available.x() + (available.width() - w - frame.width()) // 2,
                  available.y() + (available.height() - h - frame.height()) // 2)
        self._refit = available if frame.isNull() else None  # again once the frame is known
        self._place_plots(short)
        self._share_docks(w * EDITOR_PERCENT // 100)
        QTimer.singleShot(0, self, self._widen_editor)  # once laid out: the chrome is known

    def _place_plots(self, short: bool) -> None:
        """The overview and histogram docks: tabs behind the sheet on a short screen, else
        side by side under the grid, the overview the wider."""
        for dock in (self.overview_dock, self.histogram_dock):
            dock.setFloating(False)
            dock.show()
        if short:
            self.tabifyDockWidget(self.sheet_dock, self.overview_dock)
            self.tabifyDockWidget(self.overview_dock, self.histogram_dock)
            self.sheet_dock.raise_()
            self.name_dock_tabs()
            return
        self.addDockWidget(Qt.BottomDockWidgetArea, self.overview_dock)
        self.splitDockWidget(self.overview_dock, self.histogram_dock, Qt.Horizontal)
        self.resizeDocks([self.overview_dock, self.histogram_dock], [3, 2], Qt.Horizontal)
        tall = self.height() * PLOTS_HEIGHT_PERCENT // 100  # the grid keeps the rest
        self.resizeDocks([self.overview_dock, self.histogram_dock], [tall, tall], Qt.Vertical)

    def name_dock_tabs(self) -> None:
        """Tabbed docks show their short titles (whole at 1280 x 720); each tab's tooltip is
        the dock's full name (DOCK_NAMES)."""
        for bar in self.findChildren(QTabBar):
            if bar.parent() is not self:
                continue  # a tab widget's own bar (the editor's), not a dock area's
            for i in range(bar.count()):
                full = DOCK_NAMES.get(bar.tabText(i).replace("&", ""))
                if full:
                    bar.setTabToolTip(i, full)

    def _share_docks(self, editor: int) -> None:
        """Editor and sheet dock widths: the editor at least `editor` pixels, wider on the
        Kernel tab, where the sheet gives up to 2% of the window for it; the grid keeps the
        rest, at least 100 - DOCKS_PERCENT - 10 percent of it."""
        w = self.width()
        editor = self._editor_share(editor)
        sheet = max(w * SHEET_PERCENT // 100, w * DOCKS_PERCENT // 100 - editor)
        self.resizeDocks([self.editor_dock, self.sheet_dock], [editor, sheet], Qt.Horizontal)

    def _editor_share(self, share: int) -> int:
        """The editor dock's width: `share`, or what the Kernel or Form tab asks for up to
        KERNEL_MAX_FRACTION (Kernel tab) or EDITOR_MAX_FRACTION of the window."""
        most = KERNEL_MAX_FRACTION if self.editor.currentIndex() == self.editor.kernel_tab \
            else EDITOR_MAX_FRACTION
        return min(self.editor.preferred_width(share, self.editor_dock.width()),
                   int(self.width() * most))

    def _widen_editor(self) -> None:
        """Showing the Kernel or Form tab widens a narrower editor dock to fit it."""
        if self._editor_share(self.editor_dock.width()) > self.editor_dock.width():
            self._share_docks(self.editor_dock.width())

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self, objectName=name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        # docks dragged into tabs get a new tab bar: name its tabs once laid out
        dock.dockLocationChanged.connect(lambda: QTimer.singleShot(0, self, self.name_dock_tabs))
        return dock

    def _action(self, menu: QMenu, text: str, shortcut, slot, name: str = "",
                checkable: bool = False) -> QAction:
        action = QAction(text, self, objectName=name or text, checkable=checkable)
        if shortcut:
            action.setShortcuts(shortcut if isinstance(shortcut, list)
                                else [QKeySequence(shortcut)])
        action.triggered.connect(slot)
        menu.addAction(action)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        bar, doc, step = self.menuBar(), self.document, self.stepper
        file = bar.addMenu("&File")
        self._action(file, "&New", QKeySequence.New, self.new_file, "new")
        self._action(file, "&Open…", QKeySequence.Open, self._open_dialog, "open")
        self.recent_menu = file.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        examples = file.addMenu("E&xamples")
        examples.setObjectName("examplesMenu")
        paths = {p.name.removesuffix(SUFFIX): p for p in example_paths()}
        i = 0
        for lesson, stems in lesson_groups(list(paths)):
            sub = examples.addMenu(lesson)
            sub.setObjectName(f"lesson:{lesson}")
            for stem in stems:
                key = f"Ctrl+Alt+{i + 1}" if i < 9 else None
                i += 1
                path = paths[stem]
                action = self._action(sub, example_title(path).replace("&", "&&"), key,
                                      lambda _=False, p=path: self.open_example(p),
                                      f"example:{path.name}")
                action.setToolTip(path.name)
            sub.setToolTipsVisible(True)
        file.addSeparator()
        self._action(file, "&Save", QKeySequence.Save, self.save, "save")
        self._action(file, "Save &As…", QKeySequence("Ctrl+Shift+S"), self.save_as, "saveAs")
        self._action(file, "&Export…", QKeySequence("Ctrl+E"), self._export, "export")
        self._action(file, "Import &Measurements…", QKeySequence("Ctrl+Shift+I"),
                     self._import_dialog, "importMeasurements")
        file.addSeparator()
        self._action(file, "Compare &With…", QKeySequence("Ctrl+Shift+O"), self._compare_dialog,
                     "compareWith")
        self._action(file, "Duplicate as &Variant", QKeySequence("Ctrl+Shift+D"),
                     self.duplicate_as_variant, "duplicateVariant")
        file.addSeparator()
        self._action(file, "&Quit", QKeySequence("Ctrl+Q"), self.close, "quit")

        edit = bar.addMenu("&Edit")
        undo = doc.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence.Undo)
        redo = doc.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence.Redo, QKeySequence("Ctrl+Y")])
        edit.addActions([undo, redo])
        self.addActions([undo, redo])
        edit.addSeparator()
        self._action(edit, "Copy &Diagram", QKeySequence("Ctrl+Shift+C"), self._copy_diagram,
                     "copyDiagram")
        self._action(edit, "Copy Sheet as &Markdown", QKeySequence("Ctrl+Shift+M"),
                     self.sheet.copy_markdown, "copyMarkdown")
        self._action(edit, "Copy Sheet as &CSV", QKeySequence("Ctrl+Alt+C"),
                     self.sheet.copy_csv, "copyCsv")

        view = bar.addMenu("&View")
        self.dark_action = self._action(
            view, "&Dark Theme", QKeySequence("Ctrl+Shift+T"),
            lambda on: self.set_theme("dark" if on else "light"), "darkTheme", checkable=True)
        grid = self.grid_view
        self._action(view, "Zoom &In", [QKeySequence("Ctrl+="), QKeySequence("Ctrl++")],
                     lambda: grid.zoom_by(ZOOM_STEP), "zoomIn")
        self._action(view, "Zoom &Out", [QKeySequence("Ctrl+-")],
                     lambda: grid.zoom_by(1 / ZOOM_STEP), "zoomOut")
        self._action(view, "&Fit Grid", QKeySequence("Ctrl+0"), grid.fit, "zoomFit")
        self._action(view, "&Present", QKeySequence("F5"), self.present, "present")
        view.addSeparator()
        for dock, key in ((self.editor_dock, "Ctrl+1"), (self.sheet_dock, "Ctrl+2"),
                          (self.overview_dock, "Ctrl+3"), (self.histogram_dock, "Ctrl+4")):
            toggle = dock.toggleViewAction()
            toggle.setText(DOCK_NAMES.get(dock.windowTitle(), dock.windowTitle()))
            toggle.setShortcut(QKeySequence(key))
            view.addAction(toggle)

        nav = bar.addMenu("&Navigate")
        for text, key, slot, name in (
                ("Previous Warp", "Left", lambda: step.step_warp(-1), "prevWarp"),
                ("Next Warp", "Right", lambda: step.step_warp(1), "nextWarp"),
                ("Previous Instruction", "Up", lambda: step.step_instruction(-1),
                 "prevInstruction"),
                ("Next Instruction", "Down", lambda: step.step_instruction(1), "nextInstruction"),
                ("Previous Execution", "Ctrl+Left", lambda: step.step_run(-1), "prevExecution"),
                ("Next Execution", "Ctrl+Right", lambda: step.step_run(1), "nextExecution"),
                ("First Warp", "Home", step.first_warp, "firstWarp"),
                ("Last Warp", "End", step.last_warp, "lastWarp"),
                ("Previous Block", "PgUp", lambda: step.step_warp(-doc.kernel.warps_per_block),
                 "prevBlock"),
                ("Next Block", "PgDown", lambda: step.step_warp(doc.kernel.warps_per_block),
                 "nextBlock")):
            self._action(nav, text, QKeySequence(key), slot, name)
        self._action(nav, "Next Worst Warp", QKeySequence("Ctrl+J"), self.next_worst_warp,
                     "nextWorstWarp")
        nav.addSeparator()
        self._action(nav, "Play / Pause", QKeySequence("Space"), step.play.toggle, "play")
        self._action(nav, "Faster", QKeySequence("Ctrl+]"), lambda: step.speed.stepBy(1), "faster")
        self._action(nav, "Slower", QKeySequence("Ctrl+["), lambda: step.speed.stepBy(-1), "slower")

        tools = bar.addMenu("&Tools")
        self._action(tools, "&Sweep…", QKeySequence("Ctrl+Shift+W"), self.show_sweep, "sweep")

        settings_menu = bar.addMenu("&Settings")
        self._action(settings_menu, "Work &Budget…", None, self._ask_work_budget, "workBudget")
        self._action(settings_menu, "Include &Folders…", None, self._ask_include_dirs,
                     "includeFolders")

        help_ = bar.addMenu("&Help")
        self._action(help_, "&Guide", QKeySequence.HelpContents,
                     lambda: show_guide(self, self.actions()), "guide")
        self._action(help_, "&About sectorviz", None, lambda: show_about(self), "about")

    # ------------------------------------------------------------ handlers

    def show_sweep(self) -> None:
        """Tools > Sweep…: the sweep dock, its values field focused."""
        self.sweep_dock.show()
        self.sweep_dock.raise_()
        self.sweep.values.setFocus()

    def _open_dialog(self) -> None:
        start = str(self.document.path.parent) if self.document.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Open pattern", start, OPEN_FILTER)
        if name:
            self.open_path(name)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for i, path in enumerate(recent_files(self.store)):
            action = self.recent_menu.addAction(f"&{i + 1} {path.name}  —  {path.parent}")
            action.triggered.connect(lambda _=False, p=path: self.open_path(p))
        if self.recent_menu.isEmpty():
            self.recent_menu.addAction("(none)").setEnabled(False)

    def _write(self, path: Path) -> bool:
        """Save to `path` (ui.files.save_document: relative paths follow the new folder)."""
        try:
            moved = save_document(self.document, path)
        except OSError as err:
            self.show_error(f"{path}: cannot save: {err.strerror or err}")
            return False
        add_recent(self.store, path)
        self.show_message(f"saved {path}" + (f"; rewrote {', '.join(moved)}" if moved else ""))
        return True

    def _kernel_known(self, what: str) -> bool:
        """Whether the kernel has arrived, which `what` (Export, Copy Diagram) draws from; if
        not, the status bar says it is still being compiled, or why it failed."""
        doc = self.document
        if doc.kernel_known:
            return True
        if doc.kernel_error:
            self.show_error(f"{what}: {doc.kernel_error}")
        else:
            self.show_message(f"{what}: {compiling(doc.pattern)}")
        return False

    def _export(self) -> None:
        from .export_dialog import ExportDialog  # loaded on first use, not at start-up
        if not self._kernel_known("Export"):
            return
        sel = self.document.selection
        path = self.document.path
        ExportDialog(self.document.pattern, sel.warp, sel.instruction, self,
                     None if path is None else path.parent).exec()

    def _copy_diagram(self) -> None:
        from .export_dialog import copy_diagram  # loaded on first use, not at start-up
        if not self._kernel_known("Copy Diagram"):
            return
        sel = self.document.selection
        try:
            copy_diagram(self.document.pattern, sel.warp, sel.instruction)
        except ValueError as err:  # a diagram too large to draw (PatternError included)
            self.show_error(str(err))
            return
        self.show_message(f"copied warp {sel.warp}, instruction {sel.instruction} as PNG and SVG")

    def _title_name(self) -> str:
        """The file's name; without a file the pattern's name, "(unsaved)" once edited (an
        example or a new pattern opened and not touched has nothing to save)."""
        doc = self.document
        if doc.path:
            return doc.path.name
        return doc.pattern.name + (" (unsaved)" if doc.modified else "")

    def _on_changed(self, flags: int) -> None:
        if flags & Change.FILE:
            self.setWindowTitle(f"{printable(self._title_name())}[*] — sectorviz")
            self.setWindowModified(self.document.modified)
        if flags & Change.ANALYSIS:
            doc = self.document
            if doc.analysis_running and doc.partial is None:  # busy until its first chunk
                self.progress.setRange(0, 0)
            if doc.analysis_running:  # shown once the run outlasts SHOW_PROGRESS_MS
                QTimer.singleShot(SHOW_PROGRESS_MS, self._show_progress)
            else:
                self.progress.hide()
                self.cancel.hide()
            if doc.analysis_error:
                self.show_error(f"grid analysis: {doc.analysis_error}")

    def _show_progress(self) -> None:
        running = self.document.analysis_running
        self.progress.setVisible(running)
        self.cancel.setVisible(running)

    def _ask_work_budget(self) -> None:
        millions, ok = QInputDialog.getInt(
            self, "Work Budget", "Millions of units of work a run may do (lane-executions and "
            f"PTX steps; {DEFAULT_WORK // 10**6} is about 10 s):",
            max(1, default_work() // 10**6), 1, MAX_WORK_MILLIONS)
        if ok:
            self.set_work_budget(millions * 10**6)

    def _ask_include_dirs(self) -> None:
        dialog = IncludeFoldersDialog(self.stored_include_dirs, self)
        if dialog.exec():
            self.set_include_dirs(dialog.folders())

    def set_work_budget(self, units: int) -> None:
        """The work limit of every run from now on, kept in the settings; the pattern is
        analyzed again (a run that stopped at the old limit may now finish)."""
        set_default_work(units)
        self.store.setValue("work_budget", units)
        self.document.reanalyze()
        self.show_message(f"work budget: {units:,} units")

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, total)
        self.progress.setValue(done)

    # ------------------------------------------------------------ window events

    def _restore_settings(self) -> list[str]:
        """The stored layout, theme, speed and work budget, each checked (ui.stored) ->
        notes on the values replaced by their defaults."""
        stored = StoredSettings(self.store)
        geometry = stored.blob("geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
            self._refit = None
        state = stored.blob("state")
        if state is not None:
            self.restoreState(state)
        self.set_theme(stored.choice("theme", THEMES, "light"))
        speed = self.stepper.speed
        speed.setValue(stored.integer("speed", speed.minimum(), speed.maximum(), 4))
        set_default_work(stored.integer("work_budget", 1, MAX_WORK_MILLIONS * 10**6,
                                        DEFAULT_WORK))
        self.sweep.scheduler.setText(stored.line(SCHEDULER_SETTING, SCHEDULER_CHARS, ""))
        return stored.notes

    def resizeEvent(self, ev) -> None:
        """A window grown again gives a dock squeezed by the shrink its width back (the
        editor its tab's, the sheet its share), once the new size is laid out."""
        super().resizeEvent(ev)
        if ev.size().width() > ev.oldSize().width() > 0:
            QTimer.singleShot(0, self, self._widen_editor)

    def moveEvent(self, ev) -> None:
        """Fitted to a short screen before the frame (title bar, borders) was known: fit
        again once it is (a window manager reports it with the move that frames the
        window), so the whole frame, status bar included, is on the screen."""
        super().moveEvent(ev)
        known = self.frameGeometry().size() != self.geometry().size()
        if self._refit is not None and known:
            area, self._refit = self._refit, None
            QTimer.singleShot(0, self, lambda: self.fit_to_screen(area))

    def closeEvent(self, ev) -> None:
        if self.presentation is not None:
            self.presentation.close()
        variants = (w.close() for w in self.compare_windows if w.isVisible())  # each may ask
        if not self.maybe_save() or not all(variants):
            ev.ignore()
            return
        self.store.setValue("geometry", self.saveGeometry())
        self.store.setValue("state", self.saveState())
        self.store.setValue("speed", self.stepper.speed.value())
        self.stepper.play.setChecked(False)
        self.sweep.stop()
        self.document.shutdown()
        QApplication.instance().removeEventFilter(self._keys)
        ev.accept()

    def dragEnterEvent(self, ev) -> None:
        if any(url.isLocalFile() for url in ev.mimeData().urls()):
            ev.acceptProposedAction()

    def dropEvent(self, ev) -> None:
        files = [url.toLocalFile() for url in ev.mimeData().urls() if url.isLocalFile()]
        if files:
            ev.acceptProposedAction()
            if ev.modifiers() & Qt.ShiftModifier:  # Shift: compare with it, beside this one
                self.compare_with(files[0])
            else:
                self.open_path(files[0])
