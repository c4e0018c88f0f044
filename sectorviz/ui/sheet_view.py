"""The accounting sheet pane: the scene's Sheet (answer first, then the five steps) as HTML,
live, with copy as Markdown or CSV (the same printers as the exported sheets).

Laying out the HTML costs tens of ms on the UI thread, so while a grid analysis streams
partial results the pane redraws at most every PARTIAL_REFRESH_MS, and a hidden pane not
at all until it is shown; an edit, a new selection or the finished analysis redraws at once.
The sheet's rows (for a warp with hundreds of shared instructions, tens of ms more) are
worked out on a thread (ui.background), from values taken on the UI thread; only the HTML
is laid out here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..export.sheets import sheet_csv, sheet_markdown
from ..gather.sheet import accounting_sheet
from ..model.compiler_changes import cached_compiler_changes
from ..scene.sheet import Row, Sheet
from .background import NewestCall
from .document import Change, Document
from .machine_bar import MachineBar
from .measurements import Measurements
from .resolver import compiling
from .sheet_html import Layout, html, patch, sheet_layout
from .theme import LIGHT, Theme

FIRST_FRAME_MS = 50  # a newly shown sheet waits this long, so the window is drawn first
PARTIAL_REFRESH_MS = 500  # a streaming analysis redraws the sheet at most this often
DETAILS_GRACE_MS = 300  # a newly selected warp's sheet waits this long for its details
NARROW_PX = 380  # below this browser width each row stacks its label over its value


def waiting_sheet(name: str, line: str) -> Sheet:
    """The sheet of pattern `name` until its kernel has arrived: `line` says why it is
    empty (the kernel being compiled, or its error)."""
    return Sheet(name, (Row("kernel", line),), ())


class SheetView(QWidget):
    """Shows accounting_sheet(...) of the document's selection and analysis; computes no
    number itself."""

    drawn = Signal()  # the browser shows a new sheet

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.theme = LIGHT
        self._sheet: Sheet | None = None
        self.machine = MachineBar(document)
        self.measurements = Measurements(self)
        self.browser = QTextBrowser(objectName="sheet")
        self.browser.setOpenLinks(False)
        copy_md = QPushButton("Copy Markdown", objectName="copyMarkdown")
        copy_csv = QPushButton("Copy CSV", objectName="copyCsv")
        copy_md.clicked.connect(self.copy_markdown)
        copy_csv.clicked.connect(self.copy_csv)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(copy_md)
        buttons.addWidget(copy_csv)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.machine)
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self._stale = False
        self._narrow = False  # the layout drawn: labels above values
        self._drawn_at = 0.0  # time.monotonic() of the last redraw
        self._throttle = QTimer(self, singleShot=True)
        self._throttle.timeout.connect(self._refresh_if_stale)
        document.changed.connect(self._on_changed)
        self.measurements.changed.connect(self._refresh)
        self._builder = NewestCall(self)  # the rows, worked out on a thread
        self._builder.done.connect(self._on_built)
        self._building = False  # a change's rows are being worked out
        self._layout: Layout | None = None  # what the browser shows
        self.browser.document().setUndoRedoEnabled(False)  # patched, never undone
        self._grace = QTimer(self, singleShot=True, interval=DETAILS_GRACE_MS)
        self._grace.timeout.connect(self._refresh_if_stale)
        self._stale = True  # drawn once shown (showEvent): a slow sheet never delays the window

    @property
    def sheet(self) -> Sheet:
        """The sheet on screen (refreshed first, here and now, if a change is pending or its
        rows are being worked out)."""
        if self._stale or self._building:
            self._refresh()
        return self._sheet

    @property
    def current(self) -> bool:
        """Whether the browser shows the document as it is now (no change waits to be drawn
        and no rows are being worked out)."""
        return not (self._stale or self._building)

    def set_theme(self, theme: Theme) -> None:
        """The sheet on screen in `theme` (the same rows: nothing is recomputed)."""
        self.theme = theme
        if self._sheet is not None:
            self._redraw()

    def copy_markdown(self) -> None:
        QGuiApplication.clipboard().setText(sheet_markdown(self.sheet))

    def copy_csv(self) -> None:
        QGuiApplication.clipboard().setText(sheet_csv(self.sheet))

    def _on_changed(self, flags: int) -> None:
        """Coalesce: the grid draws first; the sheet follows once per event-loop turn, or,
        for a partial result, once PARTIAL_REFRESH_MS have passed since the last redraw;
        a hidden sheet waits until it is shown."""
        if not flags & (Change.PATTERN | Change.SELECTION | Change.ANALYSIS):
            return
        self._stale = True
        if not self.isVisible():
            return
        if (flags & Change.SELECTION and not flags & Change.PATTERN
                and self._sheet is not None and self.document.details_pending):
            if not self._grace.isActive():  # the last warp's sheet stays a moment: the
                self._grace.start()  # details, if they come by then, are one cheap patch
            return
        if flags & (Change.PATTERN | Change.SELECTION) or self.document.partial is None:
            self._throttle.stop()
            self._grace.stop()
            QTimer.singleShot(0, self._refresh_if_stale)
        elif not self._throttle.isActive():
            since_ms = 1000 * (time.monotonic() - self._drawn_at)
            self._throttle.start(max(0, round(PARTIAL_REFRESH_MS - since_ms)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._sheet is not None and self.narrow != self._narrow:
            self._redraw()

    @property
    def narrow(self) -> bool:
        """Whether the pane is too narrow for labels beside values."""
        return self.browser.viewport().width() < NARROW_PX

    def showEvent(self, event) -> None:
        """A stale sheet is drawn just after the window's first frame, never before it."""
        super().showEvent(event)
        QTimer.singleShot(FIRST_FRAME_MS, self, self._refresh_if_stale)

    def _refresh_if_stale(self) -> None:
        """The pending change drawn once its rows are worked out on the thread."""
        if self._stale:
            self._stale = False
            self._drawn_at = time.monotonic()
            self._building = True
            self._builder.run(self._rows())

    def _refresh(self) -> None:
        """The sheet of the document now, worked out and drawn here."""
        self._stale = self._building = False
        self._builder.cancel()
        self._drawn_at = time.monotonic()
        self._show(self._rows()())

    def _rows(self) -> Callable[[], Sheet]:
        """The sheet of the document's values now, to be worked out (on any thread): its
        inputs are read here, on the UI thread."""
        doc, sel = self.document, self.document.selection
        if doc.kernel_pending or doc.kernel_error:
            waiting = waiting_sheet(doc.pattern.name, doc.kernel_error or compiling(doc.pattern))
            return lambda: waiting
        inputs = (doc.pattern, doc.analysis or doc.partial, sel.warp, sel.instruction, sel.run,
                  doc.analysis_error, cached_compiler_changes(doc.pattern), doc.shown_details())
        return lambda: accounting_sheet(*inputs)

    def _on_built(self, token: int, sheet: Sheet | None, error: Exception | None) -> None:
        if token != self._builder.token or not self._building:
            return  # a newer change is on its way, or was drawn here
        self._building = False
        if error is not None:
            raise error  # as if it had been raised here (the app's ErrorReporter says it)
        self._show(sheet)

    def _show(self, sheet: Sheet) -> None:
        """`sheet`, with the imported measurements' step, on screen."""
        doc = self.document
        measured = self.measurements.step(len(sheet.steps) + 1, doc.pattern, doc.analysis)
        self._sheet = sheet if measured is None else \
            replace(sheet, steps=sheet.steps + (measured,))
        self._redraw()

    def _redraw(self) -> None:
        """The sheet on screen, in the layout the pane's width asks for: the cells that
        changed rewritten (ui.sheet_html.patch), or, when its shape changed, new HTML,
        keeping the scroll position."""
        self._narrow = self.narrow
        layout = sheet_layout(self._sheet, self.theme, self.document.selection.instruction,
                              self._narrow)
        if self._layout is None or not patch(self.browser.document(), self._layout, layout):
            bar = self.browser.verticalScrollBar()
            top = bar.value()
            self.browser.setHtml(html(layout))
            bar.setValue(top)
        self._layout = layout
        self.drawn.emit()
