"""The app's last line of defence (issue 15, item 4): an unexpected failure is one line
'FILE: internal error: KIND; please report' on stderr and in the status bar, the document
stays as it was; before the window opens (or in a --screenshot run) it exits 2."""

import json
import os
import signal
import sys

import pytest
from hostile_helpers import VECTOR_ADD, assert_internal_error, raising
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QWidget

from sectorviz.command import app as launch
from sectorviz.ui import app
from sectorviz.ui.app import ErrorReporter


def test_app_before_the_window_opens(tmp_path, capsys, monkeypatch, qapp):
    monkeypatch.setattr(app.MainWindow, "set_warp", raising(RecursionError()))
    code = launch.main([VECTOR_ADD, "--screenshot", str(tmp_path / "s.png")])
    assert_internal_error(code, capsys.readouterr().err, VECTOR_ADD, "RecursionError")


@pytest.mark.qt_no_exception_capture
def test_app_while_running_exits_2_for_a_screenshot(tmp_path, capsys, monkeypatch, qapp):
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda *_: QTimer.singleShot(0, raising(ZeroDivisionError())) or [])
    hook = sys.excepthook
    code = launch.main([VECTOR_ADD, "--screenshot", str(tmp_path / "s.png")])
    assert_internal_error(code, capsys.readouterr().err, VECTOR_ADD, "ZeroDivisionError")
    assert sys.excepthook is hook


@pytest.mark.qt_no_exception_capture
def test_app_shows_the_line_and_keeps_the_document(open_window, qtbot, capsys, monkeypatch):
    """A failing slot: one line on stderr and in the status bar; pattern, undo history,
    selection and file state are as they were."""
    window = open_window("stride-32B")
    field = window.findChild(QLineEdit, "accesses[0].index")
    field.clear()
    qtbot.keyClicks(field, "stride * threadIdx.x + 1")
    doc = window.document
    before = (doc.pattern, doc.undo_stack.count(), doc.selection, doc.modified, doc.path)
    hook = sys.excepthook
    reporter = ErrorReporter(window, "mine.sectorviz.json")
    try:
        monkeypatch.setattr(window.stepper, "step_warp", raising(IndexError()))
        window.findChild(QAction, "nextWarp").trigger()
    finally:
        sys.excepthook = hook
    line = "mine.sectorviz.json: internal error: IndexError; please report"
    qtbot.waitUntil(lambda: window.message.text() == line)
    assert capsys.readouterr().err == line + "\n" and reporter.failures == 1
    assert (doc.pattern, doc.undo_stack.count(), doc.selection, doc.modified, doc.path) == before


def test_a_long_literal_typed_in_the_form(open_window):
    window = open_window("stride-32B")
    field = window.findChild(QLineEdit, "accesses[0].index")
    before = window.document.pattern
    field.selectAll()
    field.insert("1" * 4301)  # as a paste: an edit by the user
    error = window.findChild(QLabel, "accesses[0].index:error")
    assert "literal 111111111111… (4301 digits) does not fit in 64 bits" in error.text()
    assert window.document.pattern == before


def _long_param(doc):
    name = next(iter(doc["params"]))
    doc["params"][name] = "@@"
    return (json.dumps(doc).replace('"@@"', "7" * 4301),
            f"params.{name}: an integer of 4,301 digits does not fit in a signed 64-bit integer")


@pytest.mark.parametrize("make", [
    _long_param, lambda doc: ("[" * 100000 + "]" * 100000, "invalid JSON, nested too deeply")])
def test_hostile_json_typed_in_the_editor(open_window, qtbot, make):
    """The JSON tab shows the one line and keeps the last good pattern; a later edit in the
    form still goes through with the bad text left in the tab."""
    window = open_window("stride-32B")
    before = window.document.pattern
    text, message = make(before.to_dict())
    window.findChild(QPlainTextEdit, "jsonEdit").setPlainText(text)
    assert window.findChild(QLabel, "jsonError").text() == message
    assert window.document.pattern == before
    field = window.findChild(QLineEdit, "accesses[0].index")
    field.clear()
    qtbot.keyClicks(field, "stride * threadIdx.x + 1")
    assert window.document.pattern.to_dict()["accesses"][0]["index"] == "stride * threadIdx.x + 1"


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_in_a_paint_ends_the_app_with_one_line(qapp, capsys, monkeypatch, signum,
                                                        status):
    """Issue 22, item 3: Ctrl-C or SIGTERM while the event loop runs: 'interrupted' once, the
    app exits with 130 / 143, no traceback; also when the signal lands in Python code Qt
    calls from C++ (a paint), where a raised exception would be dropped and the app go on."""
    exits: list[int] = []
    monkeypatch.setattr(qapp, "exit", exits.append)

    class Painted(QWidget):
        def paintEvent(self, _event):
            os.kill(os.getpid(), signum)
            os.kill(os.getpid(), signum)  # a second one says nothing more
            self.painted = True

    widget = Painted()
    widget.resize(20, 20)
    before = signal.getsignal(signum)
    with app.signals_wake(qapp):
        widget.grab()
        qapp.processEvents()
    assert widget.painted and exits[0] == status
    assert capsys.readouterr().err == "interrupted\n"
    assert signal.getsignal(signum) is before
