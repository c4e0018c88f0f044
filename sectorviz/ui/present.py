"""Presentation mode (View > Present, F5; `sectorviz FILE --present`): full screen, the
answer first in large type, the grid of the selected warp instruction, and under it what the
accounting sheet says about that instruction, for a projector at 1280 x 720 or a 1920 x 1080
screen. Left/Right step warps, Up/Down instructions, Home/End the first and last warp,
PgUp/PgDown blocks, with the focus anywhere (the grid never scrolls on them); Esc (or F5)
leaves. It follows the document: the main window and it always show one selection.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from ..scene.sheet import Sheet
from .document import Change, Document, Selection
from .grid_view import GridPane
from .theme import LIGHT, Theme
from .visible import html_label

HEADLINE_SCALE = 1.7  # the answer's type against the window's
TEXT_SCALE = 1.35  # the caption and the sheet's lines against the window's
STEP_ROWS = 3  # the sheet rows about the instruction shown under the grid: the last ones


def answer_html(sheet: Sheet) -> str:
    """The sheet's answer on one line: 'sector demand 36 MiB ..., 4.50x the ideal · useful
    22.2% ... · worst instruction store c[col][row]: 32.00 sectors per request ...'."""
    parts = [f"<b>{html_label(r.label)}</b> {html_label(r.value)}"
             + (f" <span style='opacity:0.75'>({html_label(r.note)})</span>" if r.note else "")
             for r in sheet.answer]
    return " &nbsp;·&nbsp; ".join(parts)


def step_html(sheet: Sheet, instruction: int) -> str:
    """The sheet's last STEP_ROWS rows about `instruction` (address expansion, sectors per
    request in this warp and over the grid, ...), each with its step's title."""
    rows = [(step, r) for step in sheet.steps for r in step.rows if r.instruction == instruction]
    return "<br>".join(f"<b>{step.number}. {html_label(step.title)}</b>: {html_label(r.label)} — "
                       f"{html_label(r.value)}" + (f"; {html_label(r.note)}" if r.note else "")
                       for step, r in rows[-STEP_ROWS:])


def _scaled(label: QLabel, scale: float) -> QLabel:
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * scale)
    label.setFont(font)
    return label


class Presentation(QWidget):
    """The full-screen view of a document: answer, grid, the sheet's lines about the
    instruction. `sheet` gives the document's current Sheet (the sheet pane's)."""

    closed = Signal()

    def __init__(self, document: Document, sheet, theme: Theme = LIGHT):
        super().__init__(None, Qt.Window)
        self.setAttribute(Qt.WA_DeleteOnClose)  # its grid stops following the document
        self.setObjectName("presentation")
        self.setWindowTitle("sectorviz — presentation")
        self.document, self._sheet = document, sheet
        self.headline = _scaled(QLabel(objectName="presentHeadline", wordWrap=True),
                                HEADLINE_SCALE)
        self.grid_pane = GridPane(document)
        self.grid_view = self.grid_pane.view
        _scaled(self.grid_pane.caption, TEXT_SCALE)
        self.step = _scaled(QLabel(objectName="presentStep", wordWrap=True), TEXT_SCALE)
        for label in (self.headline, self.step):
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
            label.setContentsMargins(16, 8, 16, 8)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.headline)
        layout.addWidget(self.grid_pane, 1)
        layout.addWidget(self.step)
        self.set_theme(theme)
        self._stale = False
        document.changed.connect(self._on_changed)
        self._build_keys()
        self.grid_view.setFocus()  # where a click on the picture leaves it too
        self._refresh()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.grid_view.set_theme(theme)
        self.setStyleSheet(f"QWidget#presentation {{ background: {theme.base}; }}"
                           f"QLabel {{ color: {theme.text}; background: {theme.base}; }}")

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION | Change.ANALYSIS) and not self._stale:
            self._stale = True
            QTimer.singleShot(0, self, self._refresh)

    def _refresh(self) -> None:
        self._stale = False
        sheet = self._sheet()
        self.headline.setText(answer_html(sheet))
        self.step.setText(step_html(sheet, self.document.selection.instruction))

    def _build_keys(self) -> None:
        """The README's keys as window shortcuts, so they step whatever has the focus (the
        grid, a scroll area, would otherwise scroll the picture with the arrows): Left/Right
        warps, Up/Down instructions, Home/End the first and last warp, PgUp/PgDown blocks,
        Esc or F5 leaves."""
        doc = self.document

        def select(**move: Callable[[Selection], int]) -> Callable[[], None]:
            return lambda: doc.select(**{k: f(doc.selection) for k, f in move.items()})

        keys: list[tuple[str, str, Callable[[], None]]] = [
            ("prevWarp", "Left", select(warp=lambda s: s.warp - 1)),
            ("nextWarp", "Right", select(warp=lambda s: s.warp + 1)),
            ("prevInstruction", "Up", select(instruction=lambda s: s.instruction - 1)),
            ("nextInstruction", "Down", select(instruction=lambda s: s.instruction + 1)),
            ("firstWarp", "Home", select(warp=lambda s: 0)),
            ("lastWarp", "End", select(warp=lambda s: doc.kernel.warps - 1)),
            ("prevBlock", "PgUp", select(warp=lambda s: s.warp - doc.kernel.warps_per_block)),
            ("nextBlock", "PgDown", select(warp=lambda s: s.warp + doc.kernel.warps_per_block)),
            ("leave", "Esc", self.close), ("leaveF5", "F5", self.close)]
        for name, key, slot in keys:
            action = QAction(self, objectName=f"present:{name}")
            action.setShortcut(QKeySequence(key))
            action.setShortcutContext(Qt.WindowShortcut)
            action.triggered.connect(slot)
            self.addAction(action)

    def closeEvent(self, ev) -> None:
        self.document.changed.disconnect(self._on_changed)
        self.closed.emit()
        super().closeEvent(ev)
