"""The pattern editor: a structured form, the CUDA kernel (for kernel patterns) and the raw
JSON, all over the same document.

JSON typed in the raw tab is checked on every keystroke; a good document becomes the current
pattern (consecutive keystrokes are one undo step), a bad one keeps the last good pattern and
shows the one-line message under the text, with the offending line underlined. Kernel edits
(debounced by the kernel tab) are kept inline in the pattern as `kernel.code`; a `.cu` file
the pattern names is never written.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QSignalBlocker
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTabWidget, QTextEdit, QVBoxLayout, QWidget

from ..model import Pattern, PatternError, pattern_from_dict, pattern_from_text
from ..model.frontend import reading_of
from .document import Change, Document
from .fields import ERROR_COLOUR, error_label
from .form import PatternForm
from .instruction_pane import instruction_rows
from .kernel_editor import KernelEditor, kernel_line, line_notes


def error_line(err: PatternError, own: str | None = None) -> int | None:
    """'line 12' places (JSON and CUDA errors) -> 12; also '`own` line 12' (the compiler
    names the file: `kernel.code` for the Kernel tab's text), never another file's line."""
    place = err.place
    if own and place.startswith(own + " "):
        place = place[len(own) + 1:]
    head, _, number = place.partition(" ")
    return int(number) if head == "line" and number.isdigit() else None


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
        self.error = error_label("jsonError")
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
            pattern = pattern_from_text(self.text.toPlainText(), "<editor>",
                                        doc.pattern.base_dir, doc.pattern.include_dirs)
        except PatternError as err:
            self._show_error(err)
            return
        doc.check(pattern, self._accept, self._show_error)

    def _accept(self, pattern: Pattern) -> None:
        self._show_error(None)
        self.document.set_pattern(pattern, "Edit JSON", merge_key="json")

    def _show_error(self, err: PatternError | None) -> None:
        self.error.setText(str(err) if err else "")
        self.error.setVisible(err is not None)
        marks = []
        line = error_line(err) if err else None
        if line is not None:
            fmt = QTextCharFormat()
            fmt.setUnderlineStyle(QTextCharFormat.WaveUnderline)
            fmt.setUnderlineColor(QColor(ERROR_COLOUR))
            fmt.setProperty(QTextFormat.FullWidthSelection, True)
            sel = QTextEdit.ExtraSelection()
            sel.format = fmt
            block = self.text.document().findBlockByLineNumber(line - 1)
            sel.cursor = QTextCursor(block)
            sel.cursor.select(QTextCursor.LineUnderCursor)
            marks.append(sel)
        self.text.setExtraSelections(marks)

    def _on_changed(self, flags: int) -> None:
        if not flags & Change.PATTERN or self.document.check_pending:  # the edit stays
            return
        try:
            same = json.loads(self.text.toPlainText()) == self.document.pattern.to_dict()
        except (ValueError, RecursionError):  # the tab holds text that is not a pattern
            same = False
        if not same:
            blocker = QSignalBlocker(self.text)
            self.text.setPlainText(self.document.pattern.source)
            del blocker
            self._show_error(None)


KERNEL_COLUMNS = 60  # the code width the Kernel tab asks for (characters), beside the
# predictions margin; longer lines scroll, their predictions stay in the margin


class PatternEditor(QTabWidget):
    """Tabs: the structured form, the CUDA kernel (only for kernel patterns), the raw JSON."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("patternEditor")
        self.document = document
        self.form = PatternForm(document)
        self.kernel = KernelEditor()
        self.json = JsonEditor(document)
        self.addTab(self.form, "Form")
        self.kernel_tab = self.addTab(self.kernel, "Kernel")
        self.addTab(self.json, "JSON")
        self.kernel.edited.connect(self._kernel_edited)
        self.kernel.lineActivated.connect(self._line_activated)
        self.kernel.instructionActivated.connect(
            lambda k: self.document.select(instruction=k))
        self._has_kernel: bool | None = None
        self._opened: int | None = None  # the document.opened whose kernel was scrolled to
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN | Change.ANALYSIS)

    def preferred_width(self, share: int, dock_width: int) -> int:
        """The dock width (pixels) for this editor given the window's `share` and the dock's
        present `dock_width`: on the Kernel tab wide enough for KERNEL_COLUMNS characters of
        code, on the Form tab for the form's narrowest layout (no sideways scrolling); what
        the dock adds around the tab's viewport (frames, gutter, scroll bar) is measured."""
        if self.currentIndex() == self.kernel_tab:
            view = self.kernel.view.viewport()
            need = self.kernel.code_width(KERNEL_COLUMNS)
        elif self.currentWidget() is self.form:
            view = self.form.scroll.viewport()
            need = self.form.scroll.widget().minimumSizeHint().width()
        else:
            return share
        return max(share, need + dock_width - view.width())

    def _on_changed(self, flags: int) -> None:
        pattern = self.document.pattern
        has_kernel = pattern.kernel is not None
        if has_kernel != self._has_kernel:  # a kernel pattern opens on its Kernel tab
            self._has_kernel = has_kernel
            self.setTabVisible(self.kernel_tab, has_kernel)
            self.setCurrentIndex(self.kernel_tab if has_kernel else 0)
        if not has_kernel:
            return
        opened = self._opened != self.document.opened
        if flags & Change.PATTERN and (opened or not (self.document.check_pending
                                                      or self.kernel.typing)):
            # an edit being checked, or typed after the one just taken, stays
            from ..engine.kernel_text import kernel_source  # the text as it is, before the compile
            source = kernel_source(pattern)
            self.kernel.set_source(source)
            self.kernel.set_error(None)
            if opened:  # a file opened: at its kernel, not
                self._opened = self.document.opened  # the licence above it
                line = kernel_line(source, pattern.kernel.get("function"))
                if line is not None:
                    self.kernel.show_line(line)
        if flags & Change.ANALYSIS:
            analysis = self.document.analysis
            self.kernel.set_annotations(line_notes(analysis.instructions) if analysis else {})
        if flags & (Change.PATTERN | Change.ANALYSIS):
            reading = reading_of(pattern)
            self.kernel.set_instructions(instruction_rows(self.document.kernel,
                                                          self.document.analysis),
                                         reading is not None and reading.engine == "compiled")
        if flags & (Change.PATTERN | Change.ANALYSIS | Change.SELECTION):
            self.kernel.instructions.show_instruction(self.document.selection.instruction)

    def _kernel_edited(self, text: str) -> None:
        doc = self.document
        base = doc.pattern
        d = base.to_dict()
        kept = {key: value for key, value in d["kernel"].items() if key not in ("source", "code")}
        d["kernel"] = {**kept, "code": text}  # the engine, arch, flags and sizes stay
        try:
            pattern = pattern_from_dict(d, base.base_dir, base.include_dirs)
        except PatternError as err:
            self._kernel_refused(err)
            return
        doc.check(pattern, self._kernel_accepted, self._kernel_refused)

    def _kernel_accepted(self, pattern: Pattern) -> None:
        self.kernel.set_error(None)
        self.document.set_pattern(pattern, "Edit kernel", merge_key="kernel.code")

    def _kernel_refused(self, err: PatternError) -> None:
        self.kernel.set_error(str(err), error_line(err, "kernel.code"), err.column)

    def _line_activated(self, line: int) -> None:
        """A clicked source line selects its first access; clicking again, the next one."""
        on_line = [k for k, ins in enumerate(self.document.kernel.instructions)
                   if ins.line == line]
        if on_line:
            current = self.document.selection.instruction
            nxt = on_line[(on_line.index(current) + 1) % len(on_line)] if current in on_line \
                else on_line[0]
            self.document.select(instruction=nxt)
