"""The comparison window: pattern B beside the main window's A. B has its own document, editor
and grid; its grid follows A's selection (the same warp, A's instruction's match by the rule of
scene.compare); the comparison sheet (scene.compare.comparison_sheet) follows both analyses.
Made by File > Compare With... (B from a file) and File > Duplicate as Variant (B a copy of
A, to edit against the original)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QMainWindow, QSplitter, QTextBrowser

from ..model import Pattern, PatternError
from ..model.frontend import kernel_for
from ..scene.compare import Comparison, compare, comparison_sheet, match_instructions
from .document import Change, Document
from .editor import PatternEditor
from .grid_view import GridView
from .sheet_view import sheet_html
from .theme import LIGHT, Theme


def matched_instruction(a: Pattern, b: Pattern, k: int) -> int | None:
    """B's instruction matched with A's instruction k (None: A's k has no match)."""
    return next((p.b for p in match_instructions(a, b) if p.a == k), None)


def window_comparison(a: Document, b: Document) -> Comparison | str:
    """The Comparison of two documents' finished analyses about A's selected warp, or the
    line saying why there is none yet."""
    if a.analysis is None or b.analysis is None:
        return "waiting for both grid analyses…"
    warp = a.selection.warp
    if warp >= kernel_for(b.pattern).warps:
        return f"warp {warp} is outside B ({kernel_for(b.pattern).warps:,} warps)"
    try:
        return compare(a.pattern, a.analysis, b.pattern, b.analysis, warp)
    except PatternError as err:
        return str(err)


class CompareWindow(QMainWindow):
    """B's editor and grid, stepping with A, and the comparison sheet."""

    def __init__(self, a: Document, pattern: Pattern, path: Path | None, theme: Theme = LIGHT):
        super().__init__()
        self.setObjectName("compareWindow")
        self.a = a
        self.b = Document(pattern, path, self)
        self.theme = theme
        self.grid_view = GridView(self.b)
        self.grid_view.set_theme(theme)
        self.editor = PatternEditor(self.b)
        self.sheet = QTextBrowser(objectName="comparisonSheet")
        self.status = QLabel(objectName="compareStatus")
        split = QSplitter(Qt.Horizontal, objectName="compareSplit")
        for widget in (self.editor, self.grid_view, self.sheet):
            split.addWidget(widget)
        split.setSizes([360, 760, 480])
        self.setCentralWidget(split)
        self.statusBar().addWidget(self.status, 1)
        self.setWindowTitle(f"B: {pattern.name} — compared with A: {a.pattern.name}")
        self.resize(1600, 900)
        self._stale = False
        a.changed.connect(self._on_a_changed)
        a.changed.connect(self._on_changed)
        self.b.changed.connect(self._on_changed)
        self._follow()
        self._refresh()

    def _on_a_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION):
            self._follow()

    def _follow(self) -> None:
        """B's grid shows A's warp and the match of A's instruction (B's first without one)."""
        s = self.a.selection
        k = matched_instruction(self.a.pattern, self.b.pattern, s.instruction)
        self.b.select(warp=s.warp, instruction=k or 0, run=s.run if k is not None else 0)

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION | Change.ANALYSIS) and not self._stale:
            self._stale = True
            QTimer.singleShot(0, self._refresh)

    def _refresh(self) -> None:
        self._stale = False
        c = window_comparison(self.a, self.b)
        if isinstance(c, str):
            self.status.setText(c)
            return
        self.status.setText(c.headline)
        bar = self.sheet.verticalScrollBar()
        top = bar.value()
        self.sheet.setHtml(sheet_html(comparison_sheet(c), self.theme))
        bar.setValue(top)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.grid_view.set_theme(theme)
        self._refresh()

    def closeEvent(self, ev) -> None:
        self.b.shutdown()
        ev.accept()
