"""The window opens before its kernel is compiled and read (a thread does that): its pattern
editor is filled and the grid and the sheet say the kernel is being compiled; once the kernel
arrives every view shows it; a kernel that fails shows its one line in the status bar."""

import json
import threading

import pytest
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QTextBrowser

from sectorviz.model import load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir
from sectorviz.ui import app, resolver
from sectorviz.ui.main_window import MainWindow

EXAMPLE = examples_dir() / "vector-add-cuda.sectorviz.json"


@pytest.fixture
def held_compile(monkeypatch):
    """The kernel thread waits for the returned event before it resolves anything, and
    notes whether it ran on the UI thread."""
    release = threading.Event()
    threads = []
    real = resolver.kernel_for

    def held(pattern):
        threads.append(threading.current_thread())
        assert release.wait(60)
        return real(pattern)

    monkeypatch.setattr(resolver, "kernel_for", held)
    yield release, threads
    release.set()


def window_on(qtbot, pattern, path=None):
    window = MainWindow(pattern, path, restore=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_window_shows_before_the_kernel_and_fills_in_when_it_arrives(qtbot,
                                                                           held_compile):
    release, threads = held_compile
    window = window_on(qtbot, load_pattern(EXAMPLE), EXAMPLE)
    doc = window.document
    sheet = window.findChild(QTextBrowser, "sheet")
    names = window.findChild(QComboBox, "instructionCombo")
    assert doc.kernel_pending and doc.analysis_running and doc.analysis is None
    assert threads and threads[0] is not threading.main_thread()
    assert '"vectorAdd"' in window.findChild(QPlainTextEdit, "jsonEdit").toPlainText()
    assert window.grid_view.item.error == "compiling and reading the kernel vectorAdd…"
    qtbot.waitUntil(lambda: "compiling and reading the kernel" in sheet.toPlainText())
    # the launch is known before the kernel: 2^20 threads in blocks of 256 = 32,768 warps
    assert doc.kernel.warps == 32768 and names.count() == 0
    window.set_warp(7)  # keys are answered meanwhile
    assert doc.selection.warp == 7
    release.set()
    qtbot.waitUntil(lambda: not doc.kernel_pending and not doc.details_pending,
                    timeout=60_000)
    assert names.count() == 3  # a[i], b[i] loaded, c[i] stored
    assert window.grid_view.item.error == "" and len(window.grid_layout.sectors) == 4
    qtbot.waitUntil(lambda: "compiling" not in sheet.toPlainText() and "warp 7"
                    in sheet.toPlainText())


BROKEN = {
    "format": "sectorviz.pattern/1", "name": "broken",
    "launch": {"grid": [2], "block": [64]}, "arrays": {"out": {"dtype": "float32", "length": 128}},
    "kernel": {"function": "k",
               "code": "__global__ void k(float *out)\n{ out[threadIdx.x] = ; }\n"}}


def test_a_kernel_that_fails_shows_its_line_in_the_status_bar(qtbot, tmp_path):
    path = tmp_path / "broken.sectorviz.json"
    path.write_text(json.dumps(BROKEN))
    window = window_on(qtbot, pattern_from_dict(BROKEN, tmp_path))
    doc = window.document
    failed = []
    doc.kernel_failed.connect(failed.append)
    qtbot.waitUntil(lambda: bool(failed), timeout=60_000)
    status = window.findChild(QLabel, "statusMessage").text()
    # nvcc's first message, at the ';' where an expression was due: column 22 of line 2
    assert failed[0] == "kernel.code line 2, column 22: expected an expression"
    assert failed[0] in status
    assert not doc.kernel_pending and doc.kernel_error == failed[0]
    assert window.grid_view.item.error == failed[0]


def test_a_launch_whose_kernel_fails_falls_back_to_the_default_example(qtbot, tmp_path,
                                                                         capsys):
    path = tmp_path / "broken.sectorviz.json"
    path.write_text(json.dumps(BROKEN))
    window = window_on(qtbot, pattern_from_dict(BROKEN, tmp_path), path)
    app._fall_back(window, "broken.cu: line 2: expected an expression")
    assert capsys.readouterr().err == "broken.cu: line 2: expected an expression\n"
    assert window.document.pattern.name == "Vector add" and window.document.path is None
    assert window.findChild(QLabel, "statusMessage").text() == \
        "broken.cu: line 2: expected an expression"
