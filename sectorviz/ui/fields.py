"""Form fields bound to one place in a pattern document (a path of keys and list indices).

A binding shows the JSON value at its path and reports edits as (binding, new value); None
deletes an optional key. Its widget's objectName is the place the model's errors name
(`arrays.a.ld`, `accesses[1].index`), and an error label under it shows the message inline.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QSpinBox, QWidget

Path = tuple  # of str keys and int indices
OnEdit = Callable[["Binding", Any], None]  # (binding, new JSON value or None)
INT_RE = re.compile(r"^-?\d{1,20}$")  # longer: left as text, refused by the expression parser
INT_MAX = 2**31 - 1
ERROR_COLOUR = "#d62f2f"  # readable on the light and the dark theme
INVALID_STYLE = f"border: 1px solid {ERROR_COLOUR}; border-bottom-width: 2px;"


def error_label(name: str = "") -> QLabel:
    """A hidden, word-wrapped label for one-line model errors."""
    label = QLabel(objectName=name, wordWrap=True)
    label.setStyleSheet(f"color: {ERROR_COLOUR};")
    label.hide()
    return label


def place_of(path: Path) -> str:
    """('accesses', 1, 'index') -> 'accesses[1].index', the form PatternError uses."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


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


class ExprEdit(QLineEdit):
    """An expression line edit; when it holds an integer, Up/Down and the wheel step it."""

    def _step(self, delta: int) -> bool:
        text = self.text().strip()
        if not INT_RE.match(text):
            return False
        self.setText(str(int(text) + delta))
        self.textEdited.emit(self.text())
        return True

    def keyPressEvent(self, ev) -> None:
        delta = {Qt.Key_Up: 1, Qt.Key_Down: -1, Qt.Key_PageUp: 10, Qt.Key_PageDown: -10}.get(ev.key())
        if delta is None or not self._step(delta):
            super().keyPressEvent(ev)

    def wheelEvent(self, ev) -> None:
        if not (self.hasFocus() and self._step(1 if ev.angleDelta().y() > 0 else -1)):
            super().wheelEvent(ev)


class Binding:
    """One widget <-> the value at `path`; subclasses convert and connect."""

    widget: QWidget

    def __init__(self, path: Path, error: QLabel, on_edit: OnEdit):
        self.path, self.error, self.on_edit = path, error, on_edit
        self.place = place_of(path)
        self.bad = False

    def setup(self, widget: QWidget, tip: str = "") -> QWidget:
        self.widget = widget
        widget.setObjectName(self.place)
        if tip:
            widget.setToolTip(tip)
        return widget

    def show(self, value: Any) -> None:
        """Display `value` without reporting an edit."""
        blocker = QSignalBlocker(self.widget)
        self._show(value)
        del blocker

    def _show(self, value: Any) -> None:
        raise NotImplementedError

    def set_error(self, message: str | None) -> None:
        """Underline the field and show `message` under it; None clears both."""
        self.bad = message is not None
        self.widget.setProperty("invalid", self.bad)
        self.widget.setStyleSheet(INVALID_STYLE if self.bad else "")
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
        edit = self.setup(QLineEdit(), tip)
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
        spin = self.setup(QSpinBox(), tip)
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
