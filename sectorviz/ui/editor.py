"""The pattern editor: a structured form and a raw JSON tab over the same document.

JSON typed in the raw tab is checked on every keystroke; a good document becomes the current
pattern (consecutive keystrokes are one undo step), a bad one keeps the last good pattern and
shows the one-line message under the text, with the offending line underlined.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QSignalBlocker
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTabWidget, QTextEdit, QVBoxLayout, QWidget

from ..model import PatternError, pattern_from_text
from .document import Change, Document, checked
from .form import PatternForm


class JsonEditor(QWidget):
    """The pattern file's text, kept in sync with the document both ways."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.text = QPlainTextEdit(objectName="jsonEdit")
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        font = self.text.font()
        font.setFamily("DejaVu Sans Mono")
        font.setStyleHint(font.StyleHint.Monospace)
        self.text.setFont(font)
        self.error = QLabel(objectName="jsonError", wordWrap=True)
        self.error.setProperty("role", "error")
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.error)
        self.text.textChanged.connect(self._edited)
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN)

    def _edited(self) -> None:
        doc = self.document
        try:
            pattern = checked(pattern_from_text(self.text.toPlainText(), "<editor>",
                                                doc.pattern.base_dir), doc.selection.warp)
        except PatternError as err:
            self._show_error(err)
            return
        self._show_error(None)
        doc.set_pattern(pattern, "Edit JSON", merge_key="json")

    def _show_error(self, err: PatternError | None) -> None:
        self.error.setText(str(err) if err else "")
        self.error.setVisible(err is not None)
        marks = []
        place = err.place if err else ""
        if place.startswith("line "):
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.WaveUnderline)
            fmt.setUnderlineColor(QColor("#d62f2f"))
            fmt.setProperty(QTextFormat.FullWidthSelection, True)
            sel = QTextEdit.ExtraSelection()
            sel.format = fmt
            block = self.text.document().findBlockByLineNumber(int(place.split()[1]) - 1)
            sel.cursor = QTextCursor(block)
            sel.cursor.select(QTextCursor.LineUnderCursor)
            marks.append(sel)
        self.text.setExtraSelections(marks)

    def _on_changed(self, flags: int) -> None:
        if not flags & Change.PATTERN:
            return
        try:
            same = json.loads(self.text.toPlainText()) == self.document.pattern.to_dict()
        except ValueError:
            same = False
        if not same:
            blocker = QSignalBlocker(self.text)
            self.text.setPlainText(self.document.pattern.source)
            del blocker
            self._show_error(None)


class PatternEditor(QTabWidget):
    """Tabs: the structured form and the raw JSON."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("patternEditor")
        self.form = PatternForm(document)
        self.json = JsonEditor(document)
        self.addTab(self.form, "Form")
        self.addTab(self.json, "JSON")
