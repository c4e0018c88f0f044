"""The accounting sheet pane: the scene's Sheet (answer first, then the five steps) as HTML,
live, with copy as Markdown or CSV (the same printers as the exported sheets).

Laying out the HTML costs tens of ms on the UI thread, so while a grid analysis streams
partial results the pane redraws at most every PARTIAL_REFRESH_MS, and a hidden pane not
at all until it is shown; an edit, a new selection or the finished analysis redraws at once.
"""

from __future__ import annotations

import time
from dataclasses import replace

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ..export.sheets import sheet_csv, sheet_markdown
from ..gather.sheet import accounting_sheet
from ..model.compiler_changes import cached_compiler_changes
from ..scene.sheet import Row, Sheet
from .document import Change, Document
from .machine_bar import MachineBar
from .measurements import Measurements
from .resolver import compiling
from .theme import LIGHT, Theme
from .visible import html_label

FIRST_FRAME_MS = 50  # a newly shown sheet waits this long, so the window is drawn first
PARTIAL_REFRESH_MS = 500  # a streaming analysis redraws the sheet at most this often
NARROW_PX = 380  # below this browser width each row stacks its label over its value


def _code(text: str) -> str:
    """Metrics in monospace on a row of their own across the table, one per line, never
    broken inside a name."""
    names = "<br>".join(html_label(m) for m in text.split(" + "))
    return (f"<tr><td colspan='2' class='metric' style='white-space: pre'>"
            f"<code>{names}</code></td></tr>")


def _row(r: Row, current: int | None, narrow: bool) -> str:
    """One row: label beside value (label above it when `narrow`), then note and metric."""
    mark = " class='current'" if r.instruction is not None and r.instruction == current else ""
    label = f"{'▸ ' if mark else ''}{html_label(r.label)}"
    if narrow:
        out = (f"<tr><td colspan='2'{mark}>{label}</td></tr>"
               f"<tr><td width='4%'></td><td class='value'>{html_label(r.value)}</td></tr>")
    else:
        out = (f"<tr><td width='38%'{mark}>{label}</td>"
               f"<td class='value'>{html_label(r.value)}</td></tr>")
    if r.note:
        out += f"<tr><td></td><td class='note'>{html_label(r.note)}</td></tr>"
    return out + (_code(r.code) if r.code else "")


def sheet_html(sheet: Sheet, theme: Theme, current: int | None = None,
               narrow: bool = False) -> str:
    """Sheet -> HTML: the answer in a box, then a heading and an item/value table per step
    (note and metric below the value; `narrow`: each label on a line above its value). Rows
    about instruction `current` get the accent."""
    parts = [f"<style>h3 {{ margin: 10px 0 2px 0; }} td {{ padding: 2px 6px; "
             f"vertical-align: top; }} .note {{ color: {theme.muted}; }} "
             f".value {{ font-weight: 600; }} .current {{ color: {theme.accent}; }} "
             f".metric {{ color: {theme.muted}; font-size: small; padding-left: 18px; }} "
             f".answer {{ background: {theme.window}; }}</style>",
             f"<p><b>{html_label(sheet.title)}</b></p><table class='answer' width='100%'>"]
    parts += [_row(r, current, narrow) for r in sheet.answer]
    parts.append("</table>")
    for step in sheet.steps:
        parts.append(f"<h3>{step.number}. {html_label(step.title)}</h3><table width='100%'>")
        parts += [_row(r, current, narrow) for r in step.rows]
        parts.append("</table>")
    return "".join(parts)


def waiting_sheet(name: str, line: str) -> Sheet:
    """The sheet of pattern `name` until its kernel has arrived: `line` says why it is
    empty (the kernel being compiled, or its error)."""
    return Sheet(name, (Row("kernel", line),), ())


class SheetView(QWidget):
    """Shows accounting_sheet(...) of the document's selection and analysis; computes no
    number itself."""

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
        self._stale = True  # drawn once shown (showEvent): a slow sheet never delays the window

    @property
    def sheet(self) -> Sheet:
        """The sheet on screen (refreshed first if a change is pending)."""
        if self._stale:
            self._refresh()
        return self._sheet

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
        if flags & (Change.PATTERN | Change.SELECTION) or self.document.partial is None:
            self._throttle.stop()
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
        if self._stale:
            self._refresh()

    def _refresh(self) -> None:
        self._stale = False
        self._drawn_at = time.monotonic()
        doc, sel = self.document, self.document.selection
        if doc.kernel_pending or doc.kernel_error:
            self._sheet = waiting_sheet(doc.pattern.name,
                                        doc.kernel_error or compiling(doc.pattern))
            self._redraw()
            return
        self._sheet = accounting_sheet(doc.pattern, doc.analysis or doc.partial, sel.warp,
                                       sel.instruction, sel.run, doc.analysis_error,
                                       cached_compiler_changes(doc.pattern),
                                       doc.shown_details())
        measured = self.measurements.step(len(self._sheet.steps) + 1, doc.pattern, doc.analysis)
        if measured is not None:
            self._sheet = replace(self._sheet, steps=self._sheet.steps + (measured,))
        self._redraw()

    def _redraw(self) -> None:
        """The sheet on screen as HTML, in the layout the pane's width asks for, keeping the
        scroll position."""
        self._narrow = self.narrow
        bar = self.browser.verticalScrollBar()
        top = bar.value()
        current = self.document.selection.instruction
        self.browser.setHtml(sheet_html(self._sheet, self.theme, current, self._narrow))
        bar.setValue(top)
