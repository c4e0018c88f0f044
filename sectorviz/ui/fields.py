"""Form fields bound to one place in a pattern document (a path of keys and list indices).

A binding shows the JSON value at its path and reports edits as (binding, new value); None
deletes an optional key. Its widget's objectName is the place the model's errors name
(`arrays.a.ld`, `accesses[1].index`), and an error label under it shows the message inline.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from PySide6.QtCore import QPointF, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QSizePolicy, QSpinBox, QWidget

Path = tuple  # of str keys and int indices
OnEdit = Callable[["Binding", Any], None]  # (binding, new JSON value or None)
INT_RE = re.compile(r"-?\d{1,20}\Z")  # longer: left as text, refused by the expression parser
INT_MAX = 2**31 - 1
ERROR_COLOUR = "#d62f2f"  # readable on the light and the dark theme
INVALID_STYLE = f"border: 1px solid {ERROR_COLOUR}; border-bottom-width: 2px;"


class OneLineLabel(QLabel):
    """A label that keeps to one line: text wider than the label ends in '…', the whole of
    it in the tooltip; it never widens its pane."""

    def __init__(self, name: str = ""):
        super().__init__(objectName=name)
        self.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def shown_text(self) -> str:
        """The text as drawn: elided to the label's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.ElideRight,
                                             self.contentsRect().width())

    def paintEvent(self, ev) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(self.contentsRect(), Qt.AlignLeft | Qt.AlignVCenter, self.shown_text())


def error_label(name: str = "") -> QLabel:
    """A hidden one-line label for model errors (in the error colour)."""
    label = OneLineLabel(name)
    label.setStyleSheet(f"color: {ERROR_COLOUR};")
    label.hide()
    return label


def place_of(path: Path) -> str:
    """('accesses', 1, 'index') -> 'accesses[1].index', the form PatternError uses."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


FIELD_WORDS = {"sector_bytes": "sector size", "sector_size": "sector size", "dtype": "element",
               "ld": "leading dimension", "offset_bytes": "offset", "base": "base address",
               "at": "(row, col)", "var": "variable",
               "path": "values file"}
PART_WORDS = {"shape": ("rows", "cols"), "at": ("row", "col"),
              "grid": ("grid x", "grid y", "grid z"), "block": ("block x", "block y", "block z")}
SINGULAR = {"loops": "loop"}
SHOWN_CHARS = 24  # of a value in an undo entry


def _part_words(path: Path) -> str:
    """A path inside one object -> words: ('offset_bytes',) -> 'offset', ('shape', 0) ->
    'rows', ('loops', 0, 'stop') -> 'loop 0 stop'."""
    words: list[str] = []
    for prev, part in zip((None,) + tuple(path), path):
        if isinstance(part, int):
            words[-1] = (PART_WORDS[prev][part] if prev in PART_WORDS
                         else f"{SINGULAR.get(prev, prev)} {part}")
        else:
            words.append(FIELD_WORDS.get(part, part))
    return " ".join(words)


def field_words(doc: Any, path: Path) -> str:
    """A place -> what a user calls it: ('params', 'stride') -> 'stride', ('arrays', 'a',
    'offset_bytes') -> 'offset of a', ('launch', 'grid', 0) -> 'grid x', ('accesses', 1,
    'loops', 0, 'stop') -> 'loop 0 stop of load x[i]' (the access by its name)."""
    head = path[0]
    if head in ("params", "let") and len(path) == 2:
        return str(path[1])
    if head == "arrays" and len(path) > 2:
        return f"{_part_words(path[2:])} of {path[1]}"
    if head == "accesses" and len(path) > 2:
        owner = get_in(doc, path[:2], {}).get("name") or f"access {path[1]}"
        return f"{_part_words(path[2:])} of {owner}"
    return _part_words(path[1:] if head == "launch" else path)


def edit_words(doc: Any, path: Path, value: Any) -> str:
    """An edit of the value at `path` of `doc` (before the edit) -> its undo entry:
    'Change stride to 4', 'Change offset of a to 16', 'Clear guard of load x[i]'."""
    subject = field_words(doc, path)
    if value is None:
        return f"Clear {subject}"
    if isinstance(value, dict):
        value = value.get("kind") or (f"{value['bytes']} B" if "bytes" in value else "…")
    text = str(value)
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS - 1] + "…"
    return f"Change {subject} to {text}"


def get_in(doc: Any, path: Path, default: Any = None) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(doc, list) or part >= len(doc):
                return default
        elif not isinstance(doc, dict) or part not in doc:
            return default
        doc = doc[part]
    return doc


def set_in(doc: dict, path: Path, value: Any) -> None:
    """Set (or, for None, delete) the value at `path`, creating objects on the way. A list
    index past the end pads with 1 (launch dimensions); deleting a list's last entry pops it."""
    for i, part in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(doc, dict) and not isinstance(doc.get(part), (dict, list)):
            if value is None:
                return
            doc[part] = [] if isinstance(nxt, int) else {}
        doc = doc[part]
    last = path[-1]
    if isinstance(last, int):
        if value is None:
            if last == len(doc) - 1:
                doc.pop()
            elif last < len(doc):
                doc[last] = 1
            return
        while len(doc) <= last:
            doc.append(1)
        doc[last] = value
    elif value is None:
        doc.pop(last, None)
    else:
        doc[last] = value


def expr_value(text: str) -> int | str | None:
    """Text in an expression field -> JSON value: an integer literal stays an integer."""
    text = text.strip()
    if not text:
        return None
    return int(text) if INT_RE.match(text) else text


class MarkedEdit(QLineEdit):
    """A line edit that can point at a column of its text: a red wavy underline from that
    character to the end of its word (an error's place in what the user typed)."""

    mark: int | None = None  # 0-based character index, None: no mark

    def set_mark(self, column: int | None) -> None:
        """Underline from the 1-based `column` (None: clear)."""
        self.mark = None if column is None else max(column - 1, 0)
        self.update()

    def mark_span(self) -> tuple[int, int] | None:
        """[start, end) characters the mark underlines: the word at the column, at least one
        character (past the end: the place where something is missing)."""
        if self.mark is None:
            return None
        text, start = self.text(), min(self.mark, len(self.text()))
        end = start
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        return start, max(end, start + 1)

    def paintEvent(self, ev) -> None:
        super().paintEvent(ev)
        span = self.mark_span()
        if span is None:
            return
        x0 = self.cursorRect().center().x()  # offsets of the characters, as drawn now
        cursor = self.cursorPosition()
        left = x0 + self.fontMetrics().horizontalAdvance(self.text()[:span[0]]) - \
            self.fontMetrics().horizontalAdvance(self.text()[:cursor])
        width = max(self.fontMetrics().horizontalAdvance(self.text()[span[0]:span[1]]),
                    self.fontMetrics().averageCharWidth())
        y = self.rect().bottom() - 4
        painter = QPainter(self)
        painter.setPen(QPen(QColor(ERROR_COLOUR), 1.5))
        step = 2
        points = [QPointF(left + i * step, y + (i % 2) * 2) for i in range(int(width // step) + 1)]
        painter.drawPolyline(points)


class ExprEdit(MarkedEdit):
    """An expression line edit; when it holds an integer, Up/Down and the wheel step it."""

    def _step(self, delta: int) -> bool:
        text = self.text().strip()
        if not INT_RE.match(text):
            return False
        self.setText(str(int(text) + delta))
        self.textEdited.emit(self.text())
        return True

    def keyPressEvent(self, ev) -> None:
        delta = {Qt.Key_Up: 1, Qt.Key_Down: -1,
                 Qt.Key_PageUp: 10, Qt.Key_PageDown: -10}.get(ev.key())
        if delta is None or not self._step(delta):
            super().keyPressEvent(ev)

    def wheelEvent(self, ev) -> None:
        if not (self.hasFocus() and self._step(1 if ev.angleDelta().y() > 0 else -1)):
            super().wheelEvent(ev)


class StepSpinBox(QSpinBox):
    """A spin box that says when an arrow, a key or the wheel steps it (`stepping`, just
    before and just after the step): each step is an edit of its own."""

    stepping = Signal()

    def stepBy(self, steps: int) -> None:
        self.stepping.emit()
        super().stepBy(steps)
        self.stepping.emit()


class Binding:
    """One widget <-> the value at `path`; subclasses convert and connect. `merge_key`
    names the edit in progress: keystrokes in the field merge into one undo step until the
    edit is committed (Enter, leaving the field, a spin box's step), then a new one starts."""

    widget: QWidget

    def __init__(self, path: Path, error: QLabel, on_edit: OnEdit):
        self.path, self.error, self.on_edit = path, error, on_edit
        self.place = place_of(path)
        self.bad = False
        self.edits = 0  # committed edits of this field so far

    @property
    def merge_key(self) -> str:
        return f"{self.place}#{self.edits}"

    def commit(self) -> None:
        """The edit in progress is done: the next change is a new undo step."""
        self.edits += 1

    def setup(self, widget: QWidget, tip: str = "") -> QWidget:
        self.widget = widget
        widget.setObjectName(self.place)
        if tip:
            widget.setToolTip(tip)
        if isinstance(widget, (QLineEdit, QSpinBox)):
            widget.editingFinished.connect(self.commit)
        if isinstance(widget, StepSpinBox):
            widget.stepping.connect(self.commit)
        return widget

    def show(self, value: Any) -> None:
        """Display `value` without reporting an edit."""
        blocker = QSignalBlocker(self.widget)
        self._show(value)
        del blocker

    def _show(self, value: Any) -> None:
        raise NotImplementedError

    def set_error(self, message: str | None, column: int | None = None) -> None:
        """Underline the field and show `message` under it, on one line; `column` (1-based,
        in the field's text) points at the place; None clears all."""
        self.bad = message is not None
        self.widget.setProperty("invalid", self.bad)
        self.widget.setStyleSheet(INVALID_STYLE if self.bad else "")
        if isinstance(self.widget, MarkedEdit):
            self.widget.set_mark(column if self.bad else None)
        self.error.setText(message or "")
        self.error.setVisible(self.bad)


class ExprBinding(Binding):
    """An expression field; `decode` maps the document value to the text shown."""

    def __init__(self, path, error, on_edit, tip: str = "", placeholder: str = "",
                 decode: Callable[[Any], Any] | None = None):
        super().__init__(path, error, on_edit)
        edit = self.setup(ExprEdit(), tip)
        edit.setPlaceholderText(placeholder)
        self.decode = decode or (lambda v: v)
        edit.textEdited.connect(lambda t: on_edit(self, expr_value(t)))

    def _show(self, value: Any) -> None:
        value = self.decode(value)
        text = "" if value is None else str(value)
        if self.widget.text() != text:
            self.widget.setText(text)


class TextBinding(Binding):
    def __init__(self, path, error, on_edit, tip: str = "", optional: bool = False):
        super().__init__(path, error, on_edit)
        edit = self.setup(MarkedEdit(), tip)
        edit.textEdited.connect(lambda t: on_edit(self, None if optional and not t else t))

    def _show(self, value: Any) -> None:
        text = "" if value is None else str(value)
        if self.widget.text() != text:
            self.widget.setText(text)


class IntBinding(Binding):
    """A spin box. `decode`/`encode` convert between the JSON value and the shown integer;
    with `auto`, the minimum shows that text and means "key absent"."""

    def __init__(self, path, error, on_edit, tip: str = "", low: int = -INT_MAX - 1,
                 high: int = INT_MAX, suffix: str = "", prefix: str = "", auto: str = "",
                 decode: Callable[[Any], int] | None = None,
                 encode: Callable[[int], Any] | None = None):
        super().__init__(path, error, on_edit)
        spin = self.setup(StepSpinBox(), tip)
        spin.setRange(low, high)
        spin.setSuffix(suffix)
        spin.setPrefix(prefix)
        spin.setAccelerated(True)
        if auto:
            spin.setSpecialValueText(auto)
        self.auto = auto
        self.decode = decode or (lambda v: int(v) if isinstance(v, int) else spin.minimum())
        self.encode = encode or (lambda n: n)
        spin.valueChanged.connect(self._edited)

    def _edited(self, n: int) -> None:
        self.on_edit(self, None if self.auto and n == self.widget.minimum() else self.encode(n))

    def _show(self, value: Any) -> None:
        self.widget.setValue(self.widget.minimum() if value is None and self.auto
                             else self.decode(value))


class ChoiceBinding(Binding):
    """A combo box of (label, JSON value or a function making it); `decode` maps a document
    value to a label."""

    def __init__(self, path, error, on_edit, choices: Sequence[tuple[str, Any]], tip: str = "",
                 decode: Callable[[Any], str] | None = None):
        super().__init__(path, error, on_edit)
        combo = self.setup(QComboBox(), tip)
        self.values = dict(choices)
        combo.addItems([label for label, _ in choices])
        self.decode = decode or (lambda v: next((k for k, x in choices if x == v), choices[0][0]))
        combo.textActivated.connect(self._edited)

    def _edited(self, label: str) -> None:
        value = self.values[label]
        self.on_edit(self, value() if callable(value) else value)

    def _show(self, value: Any) -> None:
        self.widget.setCurrentText(self.decode(value))
