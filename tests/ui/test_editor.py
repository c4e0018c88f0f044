"""Form and JSON tab: view edits reach the model, model changes reach the views, typos keep
the last good state with the message inline, and every edit can be undone."""

import json

from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QSpinBox

from sectorviz.model import pattern_from_dict
from sectorviz.ui.fields import MarkedEdit, OneLineLabel


def test_expression_typed_in_the_form_reaches_the_model(open_window, qtbot):
    window = open_window("stride-32B")
    field = window.findChild(QLineEdit, "accesses[0].index")
    field.clear()
    qtbot.keyClicks(field, "threadIdx.x * 2")
    assert window.document.pattern.to_dict()["accesses"][0]["index"] == "threadIdx.x * 2"
    assert len(window.grid_layout.sectors) == 8
    assert ('"index": "threadIdx.x * 2"'
            in window.findChild(QPlainTextEdit, "jsonEdit").toPlainText())


def test_bad_expression_keeps_last_good_state_and_shows_message_inline(open_window, qtbot):
    window = open_window("stride-32B")
    field = window.findChild(QLineEdit, "accesses[0].index")
    field.setFocus()
    field.clear()
    qtbot.keyClicks(field, "stride * lane")
    # live: 'stride' was good, 'stride *' .. 'stride * lane' are not; the document keeps 'stride'
    assert window.document.pattern.to_dict()["accesses"][0]["index"] == "stride"
    assert field.text() == "stride * lane"
    assert field.property("invalid") is True
    error = window.findChild(QLabel, "accesses[0].index:error")
    # at the field, on one line: the column, marked in the text typed
    assert not error.isHidden() and error.text() == "column 10: unknown name 'lane'"
    assert isinstance(error, OneLineLabel) and not error.wordWrap()
    assert isinstance(field, MarkedEdit) and field.mark_span() == (9, 13)  # 'lane'
    error.resize(60, error.height())
    assert error.shown_text().endswith("…") and error.toolTip() == error.text()
    assert window.document.undo_stack.count() == 1  # one field, one undo step
    qtbot.keyClicks(field, "x")
    assert "unknown name 'lanex'" in error.text()
    qtbot.keyClicks(field, " +")  # a missing value: the place after the end
    assert error.text().startswith("column 17: expected a value")
    assert field.mark_span() == (16, 17)
    field.clear()
    qtbot.keyClicks(field, "stride * threadIdx.x + 1")
    assert field.property("invalid") is False and error.isHidden()
    assert field.mark_span() is None
    assert window.document.pattern.to_dict()["accesses"][0]["index"] == "stride * threadIdx.x + 1"


def test_model_change_updates_form_and_json(open_window):
    window = open_window("stride-32B")
    doc = window.document.pattern.to_dict()
    doc["params"]["stride"] = 2
    doc["arrays"]["x"]["offset_bytes"] = 64
    window.document.set_pattern(pattern_from_dict(doc, window.document.pattern.base_dir), "test")
    assert window.findChild(QSpinBox, "params.stride").value() == 2
    assert window.findChild(QSpinBox, "arrays.x.offset_bytes").value() == 64
    text = json.loads(window.findChild(QPlainTextEdit, "jsonEdit").toPlainText())
    assert text["params"]["stride"] == 2 and text["arrays"]["x"]["offset_bytes"] == 64


def test_json_tab_edits_and_errors(open_window):
    window = open_window("stride-32B")
    editor = window.findChild(QPlainTextEdit, "jsonEdit")
    error = window.findChild(QLabel, "jsonError")
    before = window.document.pattern
    editor.setPlainText(editor.toPlainText().replace('"stride": 8', '"stride": 1,'))
    assert window.document.pattern == before
    assert not error.isHidden() and "invalid JSON" in error.text()
    assert editor.extraSelections()  # the offending line is underlined
    editor.setPlainText(editor.toPlainText().replace('"stride": 1,', '"stride": 1'))
    assert error.isHidden()
    assert window.document.pattern.to_dict()["params"]["stride"] == 1
    assert window.findChild(QSpinBox, "params.stride").value() == 1
    assert len(window.grid_layout.sectors) == 4


def test_undo_and_redo(open_window):
    window = open_window("stride-32B")
    stack = window.document.undo_stack
    spin = window.findChild(QSpinBox, "params.stride")
    spin.setValue(4)
    spin.setValue(2)  # same field: merged into one step
    assert stack.count() == 1 and window.document.modified
    window.findChild(QSpinBox, "arrays.x.offset_bytes").setValue(32)
    assert stack.count() == 2
    stack.undo()
    assert window.document.pattern.to_dict()["arrays"]["x"]["offset_bytes"] == 0
    assert spin.value() == 2
    stack.undo()
    assert spin.value() == 8 and len(window.grid_layout.sectors) == 32
    assert not window.document.modified
    stack.redo()
    assert spin.value() == 2 and len(window.grid_layout.sectors) == 8


def test_structural_edits(open_window):
    window = open_window("vector-add")
    form = window.editor.form
    n = len(window.document.kernel.instructions)
    form._add_access()
    assert len(window.document.kernel.instructions) == n + 1
    form._move_access(n, -1)
    assert window.document.kernel.instructions[n - 1].name.endswith(f"({n})")
    form.restructure(lambda d: d["accesses"].pop(0), "Remove access 0")
    assert len(window.document.kernel.instructions) == n
    form.restructure(lambda d: d["params"].pop("n"), "Remove param n")  # still used: refused
    assert "n" in window.document.pattern.to_dict()["params"]
    assert "unknown name 'n'" in window.findChild(QLabel, "formError").text()


def test_refused_choice_snaps_back_with_the_message_inline(open_window):
    from PySide6.QtWidgets import QComboBox
    window = open_window("stride-32B")
    before = window.document.pattern
    combo = window.findChild(QComboBox, "arrays.x.layout")
    combo.setCurrentText("col-major")
    combo.textActivated.emit("col-major")
    assert window.document.pattern == before
    assert combo.currentText() == "row-major"
    error = window.findChild(QLabel, "arrays.x.layout:error")
    assert not error.isHidden() and "needs a 'shape'" in error.text()
