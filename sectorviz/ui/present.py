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

HEADLINE_SHARE = 0.1  # of the screen's height for the answer, in HEADLINE_LINES lines
HEADLINE_LINES = 2
SHORT_NOTE = 24  # characters: an answer's note this short goes into the headline
LINE_SPACING = 1.3  # a line's height against its type's pixel size
TEXT_DIVISOR = 36  # the caption, the sheet's line and the grid's text: the height over this
SMALLEST_TEXT = 18  # pixels, for every text: read from the back of a room at 1280 x 720


def present_sizes(height: int) -> tuple[int, int]:
    """(headline, text) pixel sizes of the type for a screen `height` pixels tall: the
    answer in two lines filling about a tenth of it, the rest at least SMALLEST_TEXT."""
    headline = int(height * HEADLINE_SHARE / (HEADLINE_LINES * LINE_SPACING))
    text = max(SMALLEST_TEXT, height // TEXT_DIVISOR)
    return max(headline, text + 4), text


def answer_html(sheet: Sheet) -> str:
    """The sheet's answer, its values with only their short notes (the ratio to the ideal),
    to fit two lines in large type: 'sector demand 36 MiB ..., 4.50x the ideal · useful
    22.2% ... · worst instruction store c[col][row]'."""
    return " &nbsp;·&nbsp; ".join(
        f"<b>{html_label(r.label)}</b> {html_label(r.value)}"
        + (f", {html_label(r.note)}" if r.note and len(r.note) <= SHORT_NOTE else "")
        for r in sheet.answer)


def step_html(sheet: Sheet, instruction: int) -> str:
    """What the sheet says about `instruction`: its row with the longest note (sectors per
    request in this warp and why), with the step's title."""
    rows = [(step, r) for step in sheet.steps for r in step.rows if r.instruction == instruction]
    said = sorted(rows, key=lambda sr: len(sr[1].note or ""))[-1:]
    return "<br>".join(f"<b>{step.number}. {html_label(step.title)}</b>: {html_label(r.value)}"
                       + (f"; {html_label(r.note)}" if r.note else "") for step, r in said)


def _sized(widget: QWidget, pixels: int) -> None:
    font = widget.font()
    font.setPixelSize(pixels)
    widget.setFont(font)


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
        self.headline = QLabel(objectName="presentHeadline", wordWrap=True)
        self.grid_pane = GridPane(document)
        self.grid_view = self.grid_pane.view
        self.grid_view.fit_legend = True  # the legend always on the screen
        self.step = QLabel(objectName="presentStep", wordWrap=True)
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
        self.size_type(720)
        self._stale = False
        document.changed.connect(self._on_changed)
        self._build_keys()
        self.grid_view.setFocus()  # where a click on the picture leaves it too
        self._refresh()

    def size_type(self, height: int) -> None:
        """Type sized for a screen `height` pixels tall (present_sizes)."""
        headline, text = present_sizes(height)
        _sized(self.headline, headline)
        for widget in (self.grid_pane.caption, self.step, self.grid_view):
            _sized(widget, text)  # the grid's small text grows towards the view's font

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self.size_type(ev.size().height())

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
