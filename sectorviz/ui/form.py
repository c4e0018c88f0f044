"""The structured pattern form: one field per place of the pattern format, edits applied as
undoable steps. A bad value leaves the document as it was (the last good state), underlines
the field and shows the model's one-line message under it; never a modal error.

The form is rebuilt only when the document's structure changes (names of params, arrays and
lets, the number of accesses and loops, value kinds); otherwise fields are refreshed in place.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..model import Pattern, PatternError, pattern_from_dict
from ..model.pattern import DTYPE_BYTES
from .document import Change, Document
from .expr_text import cover_grid, cover_n, fresh_name, rename, rename_refusal, uses
from .fields import (
    Binding,
    ChoiceBinding,
    ExprBinding,
    IntBinding,
    OnEdit,
    TextBinding,
    edit_words,
    error_label,
    get_in,
    place_of,
    set_in,
)

VALUE_CHOICES = (
    ("none", lambda: None), ("arange", lambda: {"kind": "arange"}),
    ("expr", lambda: {"kind": "expr", "expr": "i"}),
    ("constant", lambda: {"kind": "constant", "value": 0}),
    ("permutation", lambda: {"kind": "permutation", "seed": 0}),
    ("uniform", lambda: {"kind": "uniform", "low": 0, "high": 1024, "seed": 0}),
    ("file", lambda: {"kind": "file", "path": "values.npy"}),
)
NEW_ARRAY = {"dtype": "float32", "length": 1024}
FROM_KERNEL = "from the kernel"  # a CUDA array's dtype left to its pointer parameter
GRID_X, BLOCK_X = ("launch", "grid", 0), ("launch", "block", 0)


def signature(doc: dict) -> str:
    """What decides which fields the form has (not their values)."""
    doc = normalised(doc)
    arrays = doc.get("arrays", {})
    return json.dumps({
        "cover": launch_cover(doc) is not None,
        "kernel": sorted(doc.get("kernel", {})),
        "params": list(doc.get("params", {})),
        "arrays": [(n, (a.get("values") or {}).get("kind")) for n, a in arrays.items()],
        "let": list(doc.get("let", {})),
        "accesses": [("at" in a, len(a.get("loops", []))) for a in doc.get("accesses", [])],
    })


def normalised(doc: dict) -> dict:
    """A launch dimension given as one value -> a list, so fields can address [x, y, z]."""
    for key in ("grid", "block"):
        value = get_in(doc, ("launch", key))
        if value is not None and not isinstance(value, list):
            doc["launch"][key] = [value]
    return doc


def launch_cover(doc: dict) -> str | None:
    """n when a (normalised) document launches n threads as grid x = (n + b - 1) / b, where
    b is block x; None for a plain grid."""
    return cover_n(get_in(doc, GRID_X), get_in(doc, BLOCK_X))


def field_error(err: PatternError, binding: Binding) -> tuple[str, int | None]:
    """An error as its field shows it: about the field's own text, the column and message
    ('column 10: unknown name 'lane'', the column marked in the field); about another place
    (or text the field shows decoded, as n threads), the whole line."""
    if err.place != binding.place or binding.path == GRID_X:
        return str(err), None
    where = f"column {err.column}: " if err.column is not None else ""
    return where + err.message, err.column


def _button(text: str, tip: str, slot: Callable[[], None], name: str = "") -> QToolButton:
    b = QToolButton(text=text, toolTip=tip, objectName=name)
    b.setAutoRaise(True)
    b.clicked.connect(slot)
    return b


class PatternForm(QWidget):
    """Fields over `document.pattern`; writes go through `document.set_pattern`."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.bindings: list[Binding] = []
        self._refresh: list[Callable[[], None]] = []  # shown text derived from the kernel
        self.message = error_label("formError")
        self.scroll = QScrollArea(widgetResizable=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.message)
        layout.addWidget(self.scroll, 1)
        self._signature = ""
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN)

    # ------------------------------------------------------------ applying edits

    def edit(self, binding: Binding, value: Any) -> None:
        path = binding.path
        if len(path) > 2 and path[-2] == "shape" and value is None:
            path = path[:-1]  # clearing rows or cols removes the shape
        doc = normalised(self.document.pattern.to_dict())
        words = edit_words(doc, path, value)
        set_in(doc, path, value)
        self.apply(doc, words, binding.merge_key, binding)

    def restructure(self, change: Callable[[dict], None], text: str) -> None:
        doc = normalised(self.document.pattern.to_dict())
        change(doc)
        self.apply(doc, text)

    def apply(self, doc: dict, text: str, merge_key: str | None = None,
              origin: Binding | None = None) -> None:
        """Validate `doc` (a kernel pattern's on a thread: Document.check); make it current
        (one undo step) or show why not and keep the old."""
        document = self.document
        try:
            pattern = pattern_from_dict(doc, document.pattern.base_dir,
                                        document.pattern.include_dirs)
        except PatternError as err:
            self._refused(err, origin)
            return
        document.check(pattern, lambda good: self._accepted(good, text, merge_key),
                       lambda err: self._refused(err, origin))

    def _accepted(self, pattern: Pattern, text: str, merge_key: str | None) -> None:
        for b in self.bindings:
            if b.bad:
                b.set_error(None)
        self.message.hide()
        self.document.set_pattern(pattern, text, merge_key)

    def _refused(self, err: PatternError, origin: Binding | None) -> None:
        if origin is None:
            self._rebuild()
        elif isinstance(origin, ChoiceBinding):
            self._sync(keep_bad=False)  # a refused choice snaps back to the document's
        if origin is not None:
            origin.set_error(*field_error(err, origin))
        elsewhere = origin is None or not err.place.startswith(origin.place)
        self.message.setText(str(err))  # the banner names problems away from the field
        self.message.setVisible(elsewhere)

    # ------------------------------------------------------------ document -> form

    def _on_changed(self, flags: int) -> None:
        if not flags & Change.PATTERN or self.document.check_pending:  # the edit stays
            return
        sig = signature(self.document.pattern.to_dict())
        if sig != self._signature:
            self._signature = sig
            self._rebuild()
        else:
            self._sync(keep_bad=True)

    def _sync(self, keep_bad: bool) -> None:
        """Show the document's values; with keep_bad, a bad field being typed in stays."""
        doc = normalised(self.document.pattern.to_dict())
        for b in self.bindings:
            if keep_bad and b.bad and b.widget.hasFocus():
                continue
            if b.bad:
                b.set_error(None)
            b.show(get_in(doc, b.path))
        for refresh in self._refresh:
            refresh()

    def _rebuild(self) -> None:
        doc = normalised(self.document.pattern.to_dict())
        top = self.scroll.verticalScrollBar().value()
        self.bindings, self._refresh = [], []
        body = QWidget()
        box = QVBoxLayout(body)
        box.addWidget(self._pattern_section(doc))
        box.addWidget(self._launch_section(doc))
        box.addWidget(self._params_section(doc))
        for name in doc["arrays"]:
            box.addWidget(self._array_section(name, doc["arrays"][name], "kernel" not in doc))
        if "kernel" in doc:
            box.addWidget(self._kernel_section(doc))
        else:
            box.addWidget(QPushButton("Add array", objectName="addArray", clicked=lambda: (
                self._add_name("arrays", NEW_ARRAY, fresh_name(
                    normalised(self.document.pattern.to_dict()), "arr")))))
            box.addWidget(self._let_section(doc))
            for i, acc in enumerate(doc["accesses"]):
                box.addWidget(self._access_section(doc, i, acc))
            box.addWidget(QPushButton("Add access", objectName="addAccess",
                                      clicked=self._add_access))
        box.addStretch(1)
        self.scroll.setWidget(body)
        self._sync(keep_bad=False)
        self.scroll.verticalScrollBar().setValue(top)

    # ------------------------------------------------------------ building blocks

    def _row(self, form: QFormLayout, label: str, *parts: Any) -> QLabel:
        """A labelled row of widgets (or factories taking the row's error label)."""
        error = error_label()
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        for part in parts:
            widget = part(error) if callable(part) else part
            if isinstance(widget, Binding):
                self.bindings.append(widget)
                if not error.objectName():
                    error.setObjectName(f"{widget.place}:error")
                widget = widget.widget
            line.addWidget(widget, 1 if not isinstance(widget, QToolButton) else 0)
        cell = QWidget()
        col = QVBoxLayout(cell)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(1)
        col.addLayout(line)
        col.addWidget(error)
        form.addRow(label, cell)
        return error

    def _expr(self, path: tuple, tip: str = "", placeholder: str = "",
              on_edit: OnEdit | None = None, decode: Callable[[Any], Any] | None = None):
        return lambda err: ExprBinding(path, err, on_edit or self.edit, tip, placeholder, decode)

    def _int(self, path: tuple, tip: str = "", **kw):
        return lambda err: IntBinding(path, err, self.edit, tip, **kw)

    def _text(self, path: tuple, tip: str = "", optional: bool = False):
        return lambda err: TextBinding(path, err, self.edit, tip, optional)

    def _choice(self, path: tuple, choices, tip: str = "", decode=None):
        return lambda err: ChoiceBinding(path, err, self.edit, choices, tip, decode)

    @staticmethod
    def _group(title: str, name: str = "") -> tuple[QGroupBox, QFormLayout]:
        group = QGroupBox(title, objectName=name)
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        return group, form

    # ------------------------------------------------------------ sections

    def _elem_bytes(self, name: str, dtype: Any) -> int:
        """An array's dtype (a name, {"bytes": k}, or None: the kernel's pointee) -> bytes."""
        if isinstance(dtype, dict):
            return dtype["bytes"]
        return DTYPE_BYTES[dtype] if dtype is not None else self._pointee(name)[1]

    def _pointee(self, name: str) -> tuple[str, int]:
        """A CUDA kernel's array `name` -> (its element type, bytes) as the kernel gives it."""
        spec = self.document.kernel.arrays[name].spec
        return spec.dtype, spec.elem_bytes

    def _show_pointee(self, label: QLabel, name: str) -> None:
        """The type a CUDA array without a dtype takes from the kernel, shown beside its
        element choice: 'from the kernel: float (4 B)'; hidden when a dtype is given."""
        if get_in(self.document.pattern.to_dict(), ("arrays", name, "dtype")) is not None:
            label.hide()
            return
        dtype, size = self._pointee(name)
        label.setText(f"{FROM_KERNEL}: {dtype} ({size} B)" if dtype is not None
                      else f"{FROM_KERNEL} (being read)")
        label.show()

    def _pattern_section(self, doc: dict) -> QGroupBox:
        """Name, notes and the sector size (edited under its old key where the file uses it)."""
        group, form = self._group("Pattern")
        key = "sector_bytes" if "sector_bytes" in doc else "sector_size"
        self._row(form, "name", self._text(("name",)))
        self._row(form, "notes", self._text(("notes",), optional=True))
        self._row(form, "sector", self._int((key,), "sector size in bytes (a power "
                                            "of two; 32 on NVIDIA GPUs)", low=1, high=4096,
                                            suffix=" B", decode=lambda v: v or 32))
        return group

    def _launch_section(self, doc: dict) -> QGroupBox:
        """Grid and block; or, covering n threads, n and the block (grid x follows)."""
        group, form = self._group("Launch")
        cover = launch_cover(doc) is not None
        box = QCheckBox("cover n threads", objectName="launch.cover", checked=cover,
                        toolTip="launch n threads in blocks of block x: "
                                "grid x = (n + block x - 1) / block x")
        box.toggled.connect(self._set_cover)
        form.addRow(box)
        if cover:
            self._row(form, "n threads", self._expr(
                GRID_X, "threads to launch; grid x = (n + block x - 1) / block x",
                on_edit=self._edit_cover,
                decode=lambda _: launch_cover(normalised(self.document.pattern.to_dict()))))
        self._row(form, "grid y, z" if cover else "grid",
                  *(self._expr(("launch", "grid", i), f"gridDim.{a}", "1")
                    for i, a in enumerate("xyz") if not (cover and i == 0)))
        self._row(form, "block", *(self._expr(("launch", "block", i), f"blockDim.{a}", "1",
                                              self._edit_cover if cover and i == 0 else None)
                                   for i, a in enumerate("xyz")))
        return group

    def _params_section(self, doc: dict) -> QGroupBox:
        group, form = self._group("Params (integers)")
        self._named_rows(form, doc, "params", "param",
                         lambda n: self._int(("params", n), f"param {n}"), 1)
        return group

    def _named_rows(self, form, doc: dict, key: str, noun: str, editor, default) -> None:
        """A row per entry of doc[key] (its editor, rename and remove buttons), then
        'Add <noun>'."""
        for name in doc.get(key, {}):
            self._row(form, name, editor(name), *self._name_tools(key, noun, name))
        form.addRow(QPushButton(f"Add {noun}", clicked=lambda: self._add_name(key, default)))

    def _name_tools(self, key: str, noun: str, name: str) -> tuple[Callable, Callable]:
        """Rename and remove buttons for doc[key][name], as row parts: a refusal shows in
        the row's error label."""
        place = place_of((key, name))
        return (lambda err: _button("✎", f"rename {noun} {name}",
                                    lambda: self._rename(key, noun, name, err), f"rename:{place}"),
                lambda err: _button("✕", f"remove {noun} {name}",
                                    lambda: self._remove(key, noun, name, err), f"remove:{place}"))

    def _array_section(self, name: str, spec: dict, named: bool) -> QGroupBox:
        """The fields of one array; `named`: with rename and remove buttons (not for a CUDA
        kernel's arrays, which its pointer parameters name)."""
        group, form = self._group(f"Array {name}", f"array:{name}")
        p = ("arrays", name)
        if named:
            tools = self._name_tools("arrays", "array", name)
            error = self._row(form, "name", QLabel(name), *tools)
            error.setObjectName(f"{place_of(p)}:error")
        width = {}

        def make_width(err):
            width["b"] = IntBinding(p + ("dtype",), err, self.edit,
                                    "element width in bytes (sets a custom dtype)", low=1,
                                    high=4096, suffix=" B",
                                    decode=lambda v: self._elem_bytes(name, v),
                                    encode=lambda k: {"bytes": k})
            return width["b"]

        own = [] if named else [(FROM_KERNEL, None)]  # no dtype: the parameter's pointee type
        dtypes = own + [(d, d) for d in DTYPE_BYTES] + [
            ("custom", lambda: {"bytes": width["b"].widget.value()})]
        error = self._row(form, "element", self._choice(
            p + ("dtype",), dtypes, "element type",
            lambda v: FROM_KERNEL if v is None else "custom" if isinstance(v, dict) else v),
            make_width)
        if not named:
            pointee = QLabel(objectName=f"{place_of(p)}:pointee")
            error.parentWidget().layout().insertWidget(1, pointee)
            self._refresh.append(lambda: self._show_pointee(pointee, name))
        self._row(form, "length", self._expr(p + ("length",), "number of elements",
                                             "from shape and ld"))
        self._row(form, "shape", self._expr(p + ("shape", 0), "rows", "rows"),
                  self._expr(p + ("shape", 1), "cols", "cols"))
        self._row(form, "layout", self._choice(p + ("layout",), [("row-major", "row-major"),
                                                                ("col-major", "col-major")]))
        self._row(form, "ld", self._expr(p + ("ld",), "leading dimension in elements",
                                         "= minor dimension"),
                  self._int(p + ("ld",), "padding: ld minus the minor dimension, in elements",
                            low=0, prefix="pad ", decode=lambda v: self._padding(name),
                            encode=lambda k: self._minor(name) + k))
        self._row(form, "base", self._int(p + ("base",), "byte address of the array "
                                          "(auto: after the previous array, 256 B aligned)",
                                          low=-1, suffix=" B", auto="auto"))
        self._row(form, "offset", self._int(p + ("offset_bytes",), "bytes added to the base "
                                            "(misaligns the array)", low=0, suffix=" B",
                                            decode=lambda v: v or 0))
        self._row(form, "values", self._choice(p + ("values",), VALUE_CHOICES,
                                               "element values, for arrays read as indices",
                                               lambda v: v["kind"] if v else "none"))
        kind = (spec.get("values") or {}).get("kind")
        v = p + ("values",)
        if kind == "expr":
            self._row(form, "value(i)", self._expr(v + ("expr",), "value of element i"))
        elif kind == "constant":
            self._row(form, "value", self._int(v + ("value",)))
        elif kind in ("permutation", "uniform"):
            if kind == "uniform":
                self._row(form, "range", self._int(v + ("low",), "low (inclusive)"),
                          self._int(v + ("high",), "high (exclusive)"))
            self._row(form, "seed", self._int(v + ("seed",), low=0, decode=lambda x: x or 0))
        elif kind == "file":
            self._row(form, "file", self._text(v + ("path",), ".npy or raw int file, "
                                                              "relative to the pattern"))
        return group

    def _resolved(self, name: str):
        return self.document.kernel.arrays[name]

    def _minor(self, name: str) -> int:
        arr = self._resolved(name)
        if arr.rows is None:
            return 0
        return arr.cols if arr.spec.layout == "row-major" else arr.rows

    def _padding(self, name: str) -> int:
        arr = self._resolved(name)
        return 0 if arr.ld is None else arr.ld - self._minor(name)

    def _let_section(self, doc: dict) -> QGroupBox:
        group, form = self._group("Let and guard")
        self._named_rows(form, doc, "let", "let", lambda n: self._expr(("let", n), f"let {n}"), "0")
        self._row(form, "guard", self._expr(("guard",), "threads where this is 0 do nothing",
                                            "none: every thread runs"))
        return group

    def _kernel_section(self, doc: dict) -> QGroupBox:
        group, form = self._group("CUDA kernel")
        self._row(form, "function", self._text(("kernel", "function")))
        if "source" in doc["kernel"]:
            self._row(form, "source", self._text(("kernel", "source"), ".cu file, relative "
                                                                     "to the pattern"))
        else:
            form.addRow(QLabel("The kernel's code is inline: edit it in the Kernel tab."))
        return group

    def _access_section(self, doc: dict, i: int, acc: dict) -> QGroupBox:
        group, form = self._group(f"Access {i}", f"access:{i}")
        p = ("accesses", i)
        n = len(doc["accesses"])
        tools = QHBoxLayout()
        tools.addStretch(1)
        for text, tip, delta, ok in (("▲", "move up", -1, i > 0), ("▼", "move down", 1, i < n - 1)):
            b = _button(text, tip, lambda d=delta: self._move_access(i, d))
            b.setEnabled(ok)
            tools.addWidget(b)
        remove = _button("✕", "remove this access", lambda: self.restructure(
            lambda d: d["accesses"].pop(i), f"Remove access {i}"), f"removeAccess{i}")
        remove.setEnabled(n > 1)
        tools.addWidget(remove)
        form.addRow(tools)
        self._row(form, "name", self._text(p + ("name",), optional=True))
        self._row(form, "op", self._choice(p + ("op",), [("load", "load"), ("store", "store")]),
                  self._choice(p + ("array",), [(a, a) for a in doc["arrays"]], "array"))
        mode = QComboBox(objectName=f"accesses[{i}].mode")
        mode.addItems(["index", "at (row, col)"])
        mode.setCurrentIndex(int("at" in acc))
        mode.setToolTip("address by element index, or by (row, col) of a 2-D array")
        mode.activated.connect(lambda m: self._set_address_mode(i, m))
        form.addRow("address", mode)
        if "at" in acc:
            self._row(form, "(row, col)", self._expr(p + ("at", 0), "row"),
                      self._expr(p + ("at", 1), "col"))
        else:
            self._row(form, "index", self._expr(p + ("index",), "element index"))
        self._row(form, "guard", self._expr(p + ("guard",), "lanes where this is 0 skip this "
                                                            "access", "none"))
        for j in range(len(acc.get("loops", []))):
            lp = p + ("loops", j)
            self._row(form, f"loop {j}", self._text(lp + ("var",), "loop variable"),
                      self._expr(lp + ("start",), "start"), self._expr(lp + ("stop",), "stop"),
                      self._expr(lp + ("step",), "step", "1"),
                      _button("✕", "remove this loop", lambda j=j: self.restructure(
                          lambda d: d["accesses"][i]["loops"].pop(j), "Remove loop")))
        form.addRow(QPushButton("Add loop", clicked=lambda: self.restructure(
            lambda d: d["accesses"][i].setdefault("loops", []).append(
                {"var": f"k{len(d['accesses'][i].get('loops', []))}", "start": 0, "stop": 2}),
            "Add loop")))
        return group

    # ------------------------------------------------------------ structural edits

    def _add_name(self, section: str, value: Any, name: str = "") -> None:
        """doc[section][name] = value as one step; without a name, ask for one."""
        if not name:
            name, ok = QInputDialog.getText(self, f"Add to {section}", "name:")
            name = name if ok else ""
        if name:
            self.restructure(lambda d: d.setdefault(section, {}).__setitem__(name, value),
                             f"Add {place_of((section, name))}")

    def _remove(self, key: str, noun: str, name: str, error: QLabel) -> None:
        """Remove doc[key][name], or say in place what still uses it and leave it."""
        used = uses(normalised(self.document.pattern.to_dict()), name)
        if used:
            more = f" and {len(used) - 1} more" if len(used) > 1 else ""
            self._refuse(error, f"{noun} {name} is still used by {used[0]}{more}")
        else:
            self.restructure(lambda d: d[key].pop(name), f"Remove {noun} {name}")

    def _rename(self, key: str, noun: str, name: str, error: QLabel) -> None:
        """Ask for a new name; rename doc[key][name] and every reference to it as one step."""
        new, ok = QInputDialog.getText(self, f"Rename {noun} {name}", "new name:", text=name)
        new = new.strip()
        if not ok or new == name:
            return
        why = rename_refusal(normalised(self.document.pattern.to_dict()), name, new)
        if why:
            self._refuse(error, why)
        else:
            self.restructure(lambda d: rename(d, key, name, new),
                             f"Rename {noun} {name} to {new}")

    def _refuse(self, error: QLabel, message: str) -> None:
        """A refused structural edit: its message under its row, until the next change."""
        error.setText(message)
        error.show()
        self.document.changed.connect(error.hide, Qt.SingleShotConnection)

    def _set_cover(self, on: bool) -> None:
        """Cover on: grid x = (n + b - 1) / b, n the threads launched now; off: grid x = the
        number of blocks it gives. Either way the launch stays the same."""
        kernel = self.document.kernel
        threads, blocks = kernel.grid[0] * kernel.block[0], kernel.grid[0]
        self.restructure(lambda d: set_in(d, GRID_X, cover_grid(threads, get_in(d, BLOCK_X))
                                          if on else blocks),
                         "Launch n threads" if on else "Launch a plain grid")

    def _edit_cover(self, binding: Binding, value: Any) -> None:
        """n or block x edited while covering n threads: grid x follows both."""
        doc = normalised(self.document.pattern.to_dict())
        value = "" if value is None else value
        n = launch_cover(doc)
        if binding.path == GRID_X:
            n = value
        else:
            set_in(doc, BLOCK_X, value)
        words = (f"Change n threads to {value}" if binding.path == GRID_X
                 else edit_words(doc, BLOCK_X, value))
        set_in(doc, GRID_X, cover_grid(n, get_in(doc, BLOCK_X)))
        self.apply(doc, words, binding.merge_key, binding)

    def _add_access(self) -> None:
        def add(doc: dict) -> None:
            new = dict(doc["accesses"][-1])
            new["name"] = (f"{new.get('name', new['op'] + ' ' + new['array'])} "
                           f"({len(doc['accesses'])})")
            doc["accesses"].append(new)
        self.restructure(add, "Add access")

    def _move_access(self, i: int, delta: int) -> None:
        def move(doc: dict) -> None:
            acc = doc["accesses"]
            acc[i], acc[i + delta] = acc[i + delta], acc[i]
        self.restructure(move, "Move access")

    def _set_address_mode(self, i: int, at: int) -> None:
        def change(doc: dict) -> None:
            acc = doc["accesses"][i]
            if at and "index" in acc:
                acc["at"] = [acc.pop("index"), 0]
            elif not at and "at" in acc:
                acc["index"] = acc.pop("at")[0]
        self.restructure(change, "Change address mode")
