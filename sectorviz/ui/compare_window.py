"""The comparison window: pattern B beside the main window's A. B has its own document, editor
and grid; its grid follows A's selection (the same warp, A's instruction's match by the rule of
scene.compare); the comparison sheet (scene.compare.comparison_sheet) follows both analyses.
Made by File > Compare With... (B from a file) and File > Duplicate as Variant (B a copy of
A, to edit against the original). B is saved by Save Variant (As...) through ui.files (an
atomic write); closing the window with unsaved changes to B asks first. On a screen wide
enough for two windows, A and B share it side by side (compare_areas); on a narrower one B
fills the screen over A."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRect, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..gather.compare import compare, match_instructions, match_shared
from ..model import Analysis, Pattern, PatternError
from ..model.errors import printable
from ..model.frontend import kernel_for
from ..scene.compare import Comparison, comparison_sheet
from .background import NewestCall
from .document import Change, Document
from .editor import PatternEditor
from .files import FILTER, SUFFIX, save_document, saves_in_place
from .grid_view import GridPane
from .sheet_html import sheet_html
from .theme import LIGHT, Theme

HEAD_SCALE = 1.35  # the headline's font against the window's
B_MIN_WIDTH = 880  # pixels B needs beside A: its editor, grid and sheet readable
A_PERCENT = 56  # of the screen's width for A beside B, B_MIN_WIDTH allowing


def compare_areas(available: QRect, a_min: int) -> tuple[QRect | None, QRect]:
    """(A's area, B's area) on a screen's available geometry: side by side, A on the left
    with A_PERCENT of the width (the "before" usually touches more sectors, so its grid
    needs the room) or its minimum width `a_min` if wider, B the rest but at least
    B_MIN_WIDTH, when both fit; else (None: A stays, the whole screen for B)."""
    if available.width() < a_min + B_MIN_WIDTH:
        return None, QRect(available)
    left = max(min(available.width() * A_PERCENT // 100, available.width() - B_MIN_WIDTH),
               a_min)
    return (QRect(available.x(), available.y(), left, available.height()),
            QRect(available.x() + left, available.y(), available.width() - left,
                  available.height()))


def fit_frame(window: QMainWindow, area: QRect) -> bool:
    """Place `window` so that its frame (title bar and borders, once known) fills `area`;
    whether the frame was known (else call again once it is: CompareWindow.moveEvent)."""
    frame = window.frameGeometry().size() - window.geometry().size()
    window.resize(area.width() - frame.width(), area.height() - frame.height())
    window.move(area.topLeft())
    return not frame.isNull()


def matched_instruction(a: Pattern, b: Pattern, k: int) -> int | None:
    """B's instruction matched with A's instruction k, both counted as the app counts them
    (the global instructions, then the shared ones); None: A's k has no match."""
    first_a = len(kernel_for(a).instructions)
    if k < first_a:
        return next((p.b for p in match_instructions(a, b) if p.a == k), None)
    j = next((p.b for p in match_shared(a, b) if p.a == k - first_a), None)
    return None if j is None else len(kernel_for(b).instructions) + j


def not_comparable(a: Document, b: Document) -> str | None:
    """The line saying why two documents cannot be compared about A's selected warp yet (an
    analysis on its way, the warp outside B), or None."""
    if a.analysis is None or b.analysis is None:
        return "waiting for both grid analyses…"
    warp = a.selection.warp
    if warp >= b.kernel.warps:
        return f"warp {warp} is outside B ({b.kernel.warps:,} warps)"
    return None


def compared(a: Pattern, analysis_a: Analysis, b: Pattern, analysis_b: Analysis,
             warp: int) -> Comparison | str:
    """The Comparison of two analysed patterns about one warp (both warps' details: seconds on
    a large kernel, so the window runs it on a thread), or the line saying why there is none."""
    try:
        return compare(a, analysis_a, b, analysis_b, warp)
    except PatternError as err:
        return str(err)


class CompareWindow(QMainWindow):
    """B's editor and grid, stepping with A, and the comparison sheet."""

    refreshed = Signal()  # the headline and sheet on screen are up to date

    def __init__(self, a: Document, pattern: Pattern, path: Path | None, theme: Theme = LIGHT):
        super().__init__()
        self.setObjectName("compareWindow")
        self.a = a
        self.b = Document(pattern, path, self)
        self.theme = theme
        self.grid_pane = GridPane(self.b)
        self.grid_view = self.grid_pane.view
        self.grid_view.set_theme(theme)
        self.editor = PatternEditor(self.b)
        self.sheet = QTextBrowser(objectName="comparisonSheet")
        self.names = QLabel(objectName="compareNames")
        self.status = QLabel(objectName="compareStatus", wordWrap=True)  # the headline
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # never widens
        head = QHBoxLayout()
        head.setContentsMargins(8, 6, 8, 6)
        head.setSpacing(16)
        for label in (self.names, self.status):
            font = label.font()
            font.setPointSizeF(font.pointSizeF() * HEAD_SCALE)
            font.setBold(label is self.names)
            label.setFont(font)
            head.addWidget(label, label is self.status)
        self.split = split = QSplitter(Qt.Horizontal, objectName="compareSplit")
        for widget in (self.editor, self.grid_pane, self.sheet):
            split.addWidget(widget)
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(head)
        layout.addWidget(split, 1)
        self.setCentralWidget(central)
        file = self.menuBar().addMenu("&File")
        for text, keys, slot, name in (
                ("&Save Variant", QKeySequence.Save, self.save_variant, "saveVariant"),
                ("Save Variant &As…", QKeySequence("Ctrl+Shift+S"), self.save_variant_as,
                 "saveVariantAs"),
                ("&Close", QKeySequence.Close, self.close, "closeVariant")):
            action = file.addAction(text)
            action.setShortcut(keys)
            action.setObjectName(name)
            action.triggered.connect(slot)
        self._stale = False
        self._comparing = NewestCall()  # the comparison, on a thread; no parent: see NewestCall
        self._comparing.done.connect(self._compared)
        self._computing = False  # a comparison is being worked out
        self._refit: QRect | None = None  # the area to fill once the frame is known
        a.changed.connect(self._on_a_changed)
        a.changed.connect(self._on_changed)
        self.b.changed.connect(self._on_changed)
        self.b.changed.connect(self._on_b_file)
        self.b.changed.connect(self._on_b_changed)
        self._on_b_file(Change.FILE)
        self._follow()
        self._refresh()

    @property
    def ready(self) -> bool:
        """Both analyses are in and the comparison on screen is of them."""
        return self.a.analysis is not None and self.b.analysis is not None and not self._stale \
            and not self._computing

    def fit_into(self, area: QRect) -> None:
        """The window's frame fills `area` (again once a window manager has framed it);
        editor, grid and sheet share its width."""
        self._refit = None if fit_frame(self, area) else QRect(area)
        w = area.width()
        self.split.setSizes([w * 24 // 100, w * 46 // 100, w * 30 // 100])

    def moveEvent(self, ev) -> None:
        """Placed before its frame was known: placed again with it (a window manager reports
        the frame with the move that frames the window), so B's foot stays on the screen."""
        super().moveEvent(ev)
        if self._refit is not None and self.frameGeometry().size() != self.geometry().size():
            area, self._refit = self._refit, None
            QTimer.singleShot(0, self, lambda: self.fit_into(area))

    def _on_a_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION):
            self._follow()
        if flags & Change.PATTERN:
            self._on_b_file(Change.PATTERN)  # A's name

    def _on_b_changed(self, flags: int) -> None:
        if flags & Change.PATTERN:  # an edit of B, or its kernel arrived
            self._follow()

    def _follow(self) -> None:
        """B's grid shows A's warp and the match of A's instruction (B's first without one);
        until both kernels have arrived (compiled on a thread), A's warp alone."""
        s = self.a.selection
        if not (self.a.kernel_known and self.b.kernel_known):
            self.b.select(warp=s.warp)
            return
        k = matched_instruction(self.a.pattern, self.b.pattern, s.instruction)
        self.b.select(warp=s.warp, instruction=k or 0, run=s.run if k is not None else 0)

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION | Change.ANALYSIS) and not self._stale:
            self._stale = True
            QTimer.singleShot(0, self._refresh)

    def _refresh(self) -> None:
        """The comparison of the documents as they are now: worked out on a thread (the newest
        wins), shown by _compared."""
        self._stale = False
        why = not_comparable(self.a, self.b)
        if why is not None:
            self._comparing.cancel()
            self._computing = False
            self.status.setText(printable(why))
            return
        a, b, warp = self.a, self.b, self.a.selection.warp
        inputs = (a.pattern, a.analysis, b.pattern, b.analysis, warp)
        self._computing = True
        self._comparing.run(lambda: compared(*inputs))

    def _compared(self, token: int, c: Comparison | str | None,
                  error: Exception | None) -> None:
        if token != self._comparing.token:
            return
        self._computing = False
        if error is not None:
            raise error  # a bug: as it would have been raised on this thread
        assert c is not None
        if isinstance(c, str):
            self.status.setText(printable(c))
            return
        self.status.setText(printable(c.headline))
        bar = self.sheet.verticalScrollBar()
        top = bar.value()
        self.sheet.setHtml(sheet_html(comparison_sheet(c), self.theme))
        bar.setValue(top)
        self.refreshed.emit()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.grid_view.set_theme(theme)
        self._refresh()

    # ------------------------------------------------------------ B's file

    def _b_name(self) -> str:
        path = self.b.path
        return path.name if path else f"{self.b.pattern.name} (unsaved variant)"

    def _on_b_file(self, flags: int) -> None:
        if flags & (Change.FILE | Change.PATTERN):
            self.setWindowTitle(printable(f"B: {self._b_name()}[*] — compared with A: "
                                          f"{self.a.pattern.name}"))
            self.names.setText(printable(f"A: {self.a.pattern.name} → B: {self.b.pattern.name}"
                                         f"{' *' if self.b.modified else ''}"))
            self.setWindowModified(self.b.modified)

    def save_variant(self) -> bool:
        """Save B in place; an unsaved variant or a bundled example asks for a name."""
        path = self.b.path
        return self._write(path) if saves_in_place(path) else self.save_variant_as()

    def save_variant_as(self) -> bool:
        """Ask for a file name and save B there (False when cancelled or it failed); an
        unsaved variant is offered beside A's file."""
        folder = (self.b.path or self.a.path or Path.cwd() / "x").parent
        start = self.b.path or folder / f"{self.b.pattern.name} variant{SUFFIX}"
        name, _ = QFileDialog.getSaveFileName(self, "Save variant as", str(start), FILTER)
        return bool(name) and self._write(Path(name))

    def _write(self, path: Path) -> bool:
        try:
            moved = save_document(self.b, path)
        except OSError as err:
            self.statusBar().showMessage(f"{path}: cannot save: {err.strerror or err}")
            return False
        self.statusBar().showMessage(f"saved {path}" + (f"; rewrote {', '.join(moved)}"
                                                        if moved else ""), 5000)
        return True

    def maybe_save(self) -> bool:
        """Ask about unsaved changes to B: True to go on (saved or discarded), False to stay."""
        if not self.b.modified:
            return True
        answer = QMessageBox.question(
            self, "Unsaved variant", f"Save the changes to {self._b_name()} first?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)
        if answer == QMessageBox.Save:
            return self.save_variant()
        return answer == QMessageBox.Discard

    def closeEvent(self, ev) -> None:
        if self.isVisible() and not self.maybe_save():  # once closed, it never asks again
            ev.ignore()
            return
        self.b.shutdown()
        ev.accept()
