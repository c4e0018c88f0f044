"""The accounting sheet pane: the five steps of accounting.py as HTML tables, live, with
copy as Markdown or CSV."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from .accounting import Step, accounting_steps, to_csv, to_markdown
from .document import Change, Document
from .theme import LIGHT, Theme


def steps_html(steps: tuple[Step, ...], theme: Theme, current: int | None = None) -> str:
    """Steps -> HTML: a heading and a two-column table (item, value; note below) per step.
    Rows about instruction `current` are marked with the accent colour."""
    parts = [f"<style>h3 {{ margin: 10px 0 2px 0; }} td {{ padding: 2px 6px; "
             f"vertical-align: top; }} .note {{ color: {theme.muted}; }} "
             f".value {{ font-weight: 600; }} .current {{ color: {theme.accent}; }}</style>"]
    for step in steps:
        parts.append(f"<h3>{step.number}. {escape(step.title)}</h3><table width='100%'>")
        for r in step.rows:
            mark = " class='current'" if r.instruction is not None and r.instruction == current else ""
            parts.append(f"<tr><td{mark}>{'▸ ' if mark else ''}{escape(r.label)}</td>"
                         f"<td class='value'>{escape(r.value)}</td></tr>")
            if r.note:
                parts.append(f"<tr><td></td><td class='note'>{escape(r.note)}</td></tr>")
        parts.append("</table>")
    return "".join(parts)


class SheetView(QWidget):
    """Shows accounting_steps(document.view(), document.analysis); never computes numbers."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.theme = LIGHT
        self._steps: tuple[Step, ...] = ()
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
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self._stale = False
        document.changed.connect(self._on_changed)
        self._refresh()

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps on screen (refreshed first if a change is pending)."""
        if self._stale:
            self._refresh()
        return self._steps

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._refresh()

    def copy_markdown(self) -> None:
        QGuiApplication.clipboard().setText(to_markdown(self.steps))

    def copy_csv(self) -> None:
        QGuiApplication.clipboard().setText(to_csv(self.steps))

    def _on_changed(self, flags: int) -> None:
        """Coalesce: the grid draws first; the sheet follows once per event-loop turn."""
        if flags & (Change.PATTERN | Change.SELECTION | Change.ANALYSIS) and not self._stale:
            self._stale = True
            QTimer.singleShot(0, self._refresh)

    def _refresh(self) -> None:
        self._stale = False
        doc = self.document
        self._steps = accounting_steps(doc.view(), doc.analysis or doc.partial,
                                       doc.analysis_error)
        bar = self.browser.verticalScrollBar()
        top = bar.value()
        self.browser.setHtml(steps_html(self._steps, self.theme, doc.selection.instruction))
        bar.setValue(top)
