"""The CUDA kernel tab: source with syntax highlighting and, in a margin column right of the code
level with each line, the predicted sectors per request of each global access on that line ("4
· 32 sec/req", like a profiler's source view), each number in the overview's colour for that
access's sectors against its ideal sectors; the line's tooltip says it in words with the useful
%. The gutter holds the line numbers, the error's line white on red. Below the code, a fold-out
pane pairs each line with its memory instructions (ui.instruction_pane: the PTX operations of a
compiled kernel and their sectors per request), behind a fold-out button: open by default for a
compiled kernel (many PTX instructions a line), closed for the source as written (the margin
already names each access), then as the user leaves it.

The widget only shows and reports: `set_source` fills it without echo, `edited` (debounced)
carries new text to whoever owns the document, `lineActivated(line)` says which source line
was clicked, `set_annotations` and `set_error` paint what the model said, `show_line`
scrolls a line into view (an opened kernel: its `__global__` line, kernel_line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPainter,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QTextEdit,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from ..model.errors import printable
from ..scene.palette import LIGHT, waste_classes
from .instruction_pane import InstructionPane, InstructionRow
from .visible import HIDDEN, PLACEHOLDERS, hidden_note, real_source, shown_source

EDIT_DEBOUNCE_MS = 400
ERROR_RED = "#c62828"  # the error's line number, underline and message
LINES_ABOVE = 3  # context kept above a line scrolled to (show_line)

_KEYWORDS = ("if else for while do return break continue switch case default goto sizeof "
             "const constexpr static inline extern volatile struct union enum typedef "
             "template typename namespace using auto unsigned signed __restrict__ "
             "reinterpret_cast static_cast const_cast")
_TYPES = ("void bool char short int long float double size_t half int8_t uint8_t int16_t "
          "uint16_t int32_t uint32_t int64_t uint64_t float2 float3 float4 int2 int3 int4 "
          "uint2 uint4 double2 dim3")
_CUDA = ("__global__ __device__ __host__ __shared__ __constant__ __syncthreads __ldg "
         "threadIdx blockIdx blockDim gridDim warpSize")


@dataclass(frozen=True)
class AccessNote:
    """What the model predicts for one global access (instruction) of a source line."""

    sectors_per_request: float
    useful_fraction: float
    over_ideal: float  # the access's sectors / its ideal sectors

    @property
    def waste(self) -> int:
        """The access's waste class (the overview's rule and colours; -1: none)."""
        return int(waste_classes(np.array([self.over_ideal]))[0])

    @property
    def number(self) -> str:
        return f"{self.sectors_per_request:.4g}"

    @property
    def words(self) -> str:
        return f"{self.number} sectors per request, {100 * self.useful_fraction:.0f}% useful"


@dataclass(frozen=True)
class LineNote:
    """The predictions of a source line's global accesses, in source order."""

    accesses: tuple[AccessNote, ...]

    @property
    def all_pieces(self) -> tuple[tuple[AccessNote, str], ...]:
        """(an access, its margin text) per distinct prediction of the line, in order of
        first appearance: accesses of the same number and waste class are one piece, "2×5"
        (a loop nvcc unrolled gives a line many alike; the tooltip lists each)."""
        groups: dict[tuple[str, int], list[AccessNote]] = {}
        for a in self.accesses:
            groups.setdefault((a.number, a.waste), []).append(a)
        return tuple((alike[0], alike[0].number + (f"×{len(alike)}" if len(alike) > 1 else ""))
                     for alike in groups.values())

    @property
    def pieces(self) -> tuple[tuple[AccessNote, str], ...]:
        """The first MAX_PIECES of `all_pieces`: what the margin shows (the pane below the
        code lists every instruction)."""
        return self.all_pieces[:MAX_PIECES]

    @property
    def more(self) -> str:
        """NOTE_MORE when the margin leaves pieces out, else ""."""
        return NOTE_MORE if len(self.all_pieces) > MAX_PIECES else ""

    @property
    def text(self) -> str:
        """The numbers in the line's margin, e.g. "4 · 32 sec/req" or "2×5 · 2×5 sec/req"."""
        return NOTE_SEPARATOR.join(text for _, text in self.pieces) + self.more + NOTE_UNIT

    @property
    def tooltip(self) -> str:
        return "\n".join(f"access {k + 1}: {a.words}" for k, a in enumerate(self.accesses))


NOTE_SEPARATOR, NOTE_UNIT, NOTE_MORE = " · ", " sec/req", " · …"
MAX_PIECES = 3  # numbers a line's margin shows at most (a compiled line can have dozens)
MARGIN_FRACTION = 0.45  # of the code view's width, the most the margin takes
_HIDDEN = re.compile("[" + re.escape("".join(sorted(PLACEHOLDERS | set(HIDDEN)))) + "]")


def _format(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


class CudaHighlighter(QSyntaxHighlighter):
    """CUDA C++ colouring: keywords, types, CUDA built-ins, numbers, strings, preprocessor
    lines and comments (block comments may span lines)."""

    def __init__(self, document):
        super().__init__(document)
        words = lambda names: re.compile(r"\b(?:" + "|".join(names.split()) + r")\b")  # noqa: E731
        self.rules = [
            (words(_KEYWORDS), _format("#8959a8", bold=True)),
            (words(_TYPES), _format("#3e999f")),
            (words(_CUDA), _format("#c82829", bold=True)),
            (re.compile(r"\b(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[uUlLfF]*\b"),
             _format("#f5871f")),
            (re.compile(r'"(?:\\.|[^"\\])*"'), _format("#718c00")),
            (re.compile(r"^\s*#.*$"), _format("#4271ae")),
            (re.compile(r"//.*$"), _format("#8e908c", italic=True)),
        ]
        self.comment = _format("#8e908c", italic=True)
        self.hidden = _format("#ffffff", bold=True)
        self.hidden.setBackground(QColor("#c62828"))

    def highlightBlock(self, text: str) -> None:
        for pattern, fmt in self.rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), fmt)
        self._block_comments(text)
        for m in _HIDDEN.finditer(text):  # last: a placeholder is red in a comment too
            self.setFormat(m.start(), 1, self.hidden)

    def _block_comments(self, text: str) -> None:
        """/* ... */ comments; block state 1 means the line ends inside one."""
        self.setCurrentBlockState(0)
        inside, pos = self.previousBlockState() == 1, 0
        while True:
            start = pos if inside else text.find("/*", pos)
            if start < 0:
                return
            end = text.find("*/", start if inside else start + 2)
            if end < 0:
                self.setFormat(start, len(text) - start, self.comment)
                self.setCurrentBlockState(1)
                return
            self.setFormat(start, end + 2 - start, self.comment)
            inside, pos = False, end + 2


class _Gutter(QWidget):
    """Line numbers, painted beside the text."""

    def __init__(self, editor: "CodeView"):
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_gutter(event)

    def mousePressEvent(self, event) -> None:
        block = self.editor.cursorForPosition(event.position().toPoint()).block()
        self.editor.lineActivated.emit(block.blockNumber() + 1)


class _Margin(QWidget):
    """The predictions column right of the code, each line's numbers level with it."""

    def __init__(self, editor: "CodeView"):
        super().__init__(editor)
        self.editor = editor

    def paintEvent(self, event) -> None:
        self.editor.paint_margin(event)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            return self.editor.show_note_tip(event.pos().y(), event.globalPos())
        return super().event(event)


class CodeView(QPlainTextEdit):
    """A plain-text editor with a gutter of line numbers on the left and, on the right, a
    margin column of each annotated line's predictions, level with the line whatever its
    length: one number per access in its waste colour (the words are the line's tooltip)."""

    lineActivated = Signal(int)  # 1-based source line

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.notes: dict[int, LineNote] = {}
        self.theme = LIGHT  # the diagram palette (scene.palette.Theme)
        self.error_line: int | None = None
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.gutter = _Gutter(self)
        self.margin = _Margin(self)
        self.blockCountChanged.connect(lambda _n: self.fit_gutter())
        self.updateRequest.connect(self._scroll_gutter)
        self.fit_gutter()

    def gutter_width(self) -> int:
        """Room for the line numbers and a gap (pixels)."""
        digits = len(str(max(1, self.blockCount())))
        return self.fontMetrics().horizontalAdvance("9" * digits + "  ")

    def margin_width(self) -> int:
        """Room for the widest line's predictions and a gap each side (0 without any), at
        most MARGIN_FRACTION of the view (the code keeps the rest; the tooltip and the pane
        below say what a cut line holds)."""
        if not self.notes:
            return 0
        metrics = self.fontMetrics()
        widest = max(metrics.horizontalAdvance(n.text) for n in self.notes.values()) + \
            metrics.horizontalAdvance("  ")
        return min(widest, int(self.width() * MARGIN_FRACTION))

    def set_notes(self, notes: dict[int, LineNote]) -> None:
        self.notes = dict(notes)
        self.fit_gutter()
        self.margin.update()

    def fit_gutter(self) -> None:
        """Make room for the gutter and the predictions margin at their current widths."""
        width, right = self.gutter_width(), self.margin_width()
        self.setViewportMargins(width, 0, right, 0)
        r, code = self.contentsRect(), self.viewport().geometry()
        self.gutter.setGeometry(QRect(r.left(), r.top(), width, r.height()))
        self.margin.setGeometry(QRect(code.right() + 1, r.top(), right, r.height()))

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        for side in (self.gutter, self.margin):
            if dy:
                side.scroll(0, dy)
            else:
                side.update(0, rect.y(), side.width(), rect.height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_gutter()

    def mouseDoubleClickEvent(self, event) -> None:
        super().mouseDoubleClickEvent(event)
        self.lineActivated.emit(self.textCursor().blockNumber() + 1)

    def show_note_tip(self, y: int, at) -> bool:
        """The tooltip of the line at viewport height `y`: its predictions in words."""
        line = self.cursorForPosition(QPoint(0, y)).blockNumber() + 1
        note = self.notes.get(line)
        if note is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(at, note.tooltip, self)
        return True

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            return self.show_note_tip(self.viewport().mapFrom(self, event.pos()).y(),
                                      event.globalPos())
        return super().event(event)

    def note_spans(self, block) -> list[tuple[int, str, str]]:
        """(x in margin pixels, text, colour) of the pieces of `block`'s predictions: each
        access's number in its waste colour, then the separators and unit."""
        note = self.notes.get(block.blockNumber() + 1)
        if note is None:
            return []
        metrics = self.fontMetrics()
        x = metrics.horizontalAdvance(" ")
        plain = self.palette().placeholderText().color().name()
        spans = []
        for k, (access, text) in enumerate(note.pieces):
            if k:
                spans.append((x, NOTE_SEPARATOR, plain))
                x += metrics.horizontalAdvance(NOTE_SEPARATOR)
            colour = self.theme.waste[access.waste] if access.waste >= 0 else self.theme.idle
            spans.append((x, text, colour))
            x += metrics.horizontalAdvance(text)
        if note.more:
            spans.append((x, note.more, plain))
            x += metrics.horizontalAdvance(note.more)
        spans.append((x, NOTE_UNIT, plain))
        return spans

    def paint_margin(self, event) -> None:
        painter = QPainter(self.margin)
        painter.fillRect(event.rect(), self.palette().alternateBase())
        block = self.firstVisibleBlock()
        while block.isValid():
            geometry = self.blockBoundingGeometry(block).translated(self.contentOffset())
            if geometry.top() > event.rect().bottom():
                break
            for x, text, colour in self.note_spans(block):
                painter.setPen(QColor(colour))
                painter.drawText(x, round(geometry.top()), 10_000, round(geometry.height()),
                                 Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                                 text)
            block = block.next()
        painter.end()

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        palette = self.palette()
        painter.fillRect(event.rect(), palette.alternateBase())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        number_width = self.fontMetrics().horizontalAdvance(
            "9" * len(str(max(1, self.blockCount()))))
        plain, red = palette.placeholderText().color(), QColor(ERROR_RED)
        while block.isValid() and top <= event.rect().bottom():
            height = round(self.blockBoundingRect(block).height())
            error = block.blockNumber() + 1 == self.error_line
            if error:  # the error's line: its number white on red
                painter.fillRect(0, top, self.gutter.width(), height, red)
            painter.setPen(QColor("white") if error else plain)
            painter.drawText(0, top, number_width, height, Qt.AlignmentFlag.AlignRight,
                             str(block.blockNumber() + 1))
            block = block.next()
            top += height
        painter.end()


class KernelEditor(QWidget):
    """The kernel tab: CUDA source, per-line predictions, each line's memory instructions
    below it, and the model's one-line error."""

    edited = Signal(str)  # debounced new source text
    lineActivated = Signal(int)  # a clicked source line (1-based)
    instructionActivated = Signal(int)  # a clicked instruction of the pane (the app's index)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("kernelEditor")
        self.view = CodeView(self)
        self.view.setObjectName("kernelSource")
        self.highlighter = CudaHighlighter(self.view.document())
        self.message = QLabel(self)
        self.message.setObjectName("kernelMessage")
        self.message.setWordWrap(True)
        self.hidden = QLabel(self, objectName="kernelHidden", wordWrap=True)
        self.hidden.setStyleSheet("color: #c62828;")
        self.hidden.hide()
        self._placeholders = False  # whether the view shows placeholders (ui.visible)
        self.instructions = InstructionPane(self)
        self.fold = QToolButton(self, objectName="kernelInstructionsToggle", checkable=True,
                                text="Memory instructions by line")
        self.fold.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.fold.setAutoRaise(True)
        self.fold.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # no min
        self.fold.toggled.connect(self._unfold)
        self.fold.clicked.connect(self._fold_clicked)
        self._fold_chosen = False  # the user opened or closed the pane: keep it so
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 3)
        layout.addWidget(self.hidden)
        layout.addWidget(self.fold)
        layout.addWidget(self.instructions, 1)
        layout.addWidget(self.message)
        self.fold.hide()  # until there are instructions to list
        self._unfold(False)
        self.instructions.instructionActivated.connect(self.instructionActivated)
        self.view.cursorPositionChanged.connect(
            lambda: self.instructions.show_line(self.view.textCursor().blockNumber() + 1))
        self._timer = QTimer(self, singleShot=True, interval=EDIT_DEBOUNCE_MS)
        self._timer.timeout.connect(lambda: self.edited.emit(self.source()))
        self.view.textChanged.connect(self._timer.start)
        self.view.lineActivated.connect(self.lineActivated)

    @property
    def typing(self) -> bool:
        """Whether text typed here waits for its debounce (not yet reported as `edited`)."""
        return self._timer.isActive()

    def source(self) -> str:
        """The source text, its invisible characters as they are (not their placeholders)."""
        text = self.view.toPlainText()
        return real_source(text) if self._placeholders else text

    def code_width(self, columns: int) -> int:
        """Pixels of the code viewport that show `columns` characters of code."""
        view = self.view
        return (view.fontMetrics().horizontalAdvance("x" * columns)
                + round(2 * view.document().documentMargin()))

    def set_source(self, text: str) -> None:
        """Show `text` without reporting it back as an edit (no echo); its invisible
        characters as red placeholders (ui.visible), named under the code."""
        if text == self.source():
            return
        shown, self._placeholders = shown_source(text)
        note = hidden_note(text)
        self.hidden.setText(note)
        self.hidden.setVisible(bool(note))
        self.view.blockSignals(True)
        try:
            self.view.setPlainText(shown)
        finally:
            self.view.blockSignals(False)
        self.view.fit_gutter()  # blockCountChanged was blocked with the rest
        self.view.gutter.update()

    def show_line(self, line: int) -> None:
        """Put the cursor on `line` (1-based) and scroll it to the top of the view, with
        LINES_ABOVE lines of context above it."""
        block = self.view.document().findBlockByNumber(max(line - 1, 0))
        if not block.isValid():
            return
        self.view.setTextCursor(QTextCursor(block))
        # no wrapping: the scroll bar counts lines, its value the first one shown
        self.view.verticalScrollBar().setValue(max(block.blockNumber() - LINES_ABOVE, 0))

    def set_theme(self, theme) -> None:
        """The window theme (ui.theme.Theme): its diagram palette colours the notes."""
        self.view.theme = theme.diagram
        self.view.margin.update()
        self.instructions.set_theme(theme.diagram)

    def set_annotations(self, notes: dict[int, LineNote]) -> None:
        self.view.set_notes(notes)

    def set_instructions(self, rows: tuple[InstructionRow, ...], compiled: bool) -> None:
        """Each source line's memory instructions, in the pane below the code (the button
        shows while there are any; unless the user chose, the pane is open for a
        `compiled` kernel)."""
        self.instructions.set_rows(rows, self.view.toPlainText())
        self.fold.setVisible(bool(rows))
        if not self._fold_chosen:
            self.fold.setChecked(compiled)
        self._unfold(self.fold.isChecked())

    def _fold_clicked(self) -> None:
        self._fold_chosen = True

    def _unfold(self, open_: bool) -> None:
        arrow = Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow
        self.fold.setArrowType(arrow)
        self.instructions.setVisible(open_ and bool(self.instructions.rows))

    def set_error(self, message: str | None, line: int | None = None,
                  column: int | None = None) -> None:
        """Show the model's one-line error, underline its place and mark its line in the
        gutter; None clears it. The view does not move (the user may be typing elsewhere)."""
        self.message.setText(printable(message or ""))
        self.message.setStyleSheet(f"color: {ERROR_RED};" if message else "")
        self.view.error_line = line if message and line is not None else None
        self.view.gutter.update()
        selections = []
        if message and line is not None:
            block = self.view.document().findBlockByNumber(line - 1)
            cursor = QTextCursor(block)
            cursor.movePosition(QTextCursor.MoveOperation.Right, n=max(0, (column or 1) - 1))
            cursor.movePosition(QTextCursor.MoveOperation.EndOfWord,
                                QTextCursor.MoveMode.KeepAnchor)
            if not cursor.hasSelection():
                cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock,
                                    QTextCursor.MoveMode.KeepAnchor)
            selection = QTextEdit.ExtraSelection()
            selection.cursor = cursor
            selection.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            selection.format.setUnderlineColor(QColor(ERROR_RED))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, False)
            selections.append(selection)
        self.view.setExtraSelections(selections)


def kernel_line(source: str, function: str | None) -> int | None:
    """The 1-based line of `function`'s `__global__` in `source` (its declaration may span
    lines), or of the first `__global__` when `function` is not found; None without any."""
    starts = [m.start() for m in re.finditer(r"\b__global__\b", source)]
    if not starts:
        return None
    found = starts[0]
    if function:
        name = re.compile(r"\b" + re.escape(function) + r"\s*\(")
        for start, end in zip(starts, [*starts[1:], len(source)]):
            head = re.split(r"[;{]", source[start:end], maxsplit=1)[0]  # up to its body
            if name.search(head):
                found = start
                break
    return source.count("\n", 0, found) + 1


def line_notes(instructions) -> dict[int, LineNote]:
    """InstructionStats with `line` set -> per-line predictions, one AccessNote per access
    (instruction) on the line, in instruction order."""
    by_line: dict[int, list[AccessNote]] = {}
    for s in instructions:
        if s.line is not None and s.requests:
            fetched = s.sectors * s.sector_bytes
            by_line.setdefault(s.line, []).append(AccessNote(
                s.sectors / s.requests, s.useful_bytes / fetched if fetched else 0.0,
                s.sectors / s.ideal_sectors if s.ideal_sectors else float("nan")))
    return {line: LineNote(tuple(accesses)) for line, accesses in by_line.items()}
