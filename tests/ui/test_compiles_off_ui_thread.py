"""No user action compiles a CUDA kernel on the UI thread (nvcc or NVRTC take seconds): an
edit in the form, the JSON tab or the kernel tab, File > Open of a pattern or a bare .cu,
Compare With and Export each leave the compile to a thread, the window saying so meanwhile,
and take its result when it arrives. The compile's entry point notes the thread it ran on."""

import shutil
import threading

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QLabel, QPlainTextEdit, QSpinBox

from sectorviz.engine.compiled import compile as compile_module
from sectorviz.model.memo import MEMO
from sectorviz.paths import examples_dir
from sectorviz.ui import export_dialog

EXAMPLES = examples_dir()


@pytest.fixture
def on_ui_thread(monkeypatch):
    """The list of compiles since, each True where it ran on the UI (main) thread."""
    calls: list[bool] = []
    real = compile_module.compile_kernel

    def noted(*args, **kwargs):
        calls.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(compile_module, "compile_kernel", noted)
    return calls


@pytest.fixture
def vector_add(open_window, on_ui_thread):
    """The vector-add CUDA example open and counted; the compiles noted from then on."""
    window = open_window("vector-add-cuda")
    on_ui_thread.clear()
    return window


def trigger(window, name: str) -> None:
    window.findChild(QAction, name).trigger()


def status(window) -> str:
    return window.findChild(QLabel, "statusMessage").text()


def test_a_form_edit_compiles_on_a_thread(vector_add, on_ui_thread, wait_check):
    window = vector_add
    window.findChild(QSpinBox, "params.threads").setValue(128)
    assert window.document.check_pending  # the old pattern stays until the compile answers
    assert status(window) == "compiling and reading the kernel vectorAdd…"
    wait_check(window)
    assert window.document.pattern.integer_params["threads"] == 128
    assert on_ui_thread and not any(on_ui_thread)
    window.document.undo_stack.undo()  # the edit is one undo step, as before
    assert window.document.pattern.integer_params["threads"] == 256


def test_a_json_edit_compiles_on_a_thread(vector_add, on_ui_thread, wait_check):
    window = vector_add
    text = window.findChild(QPlainTextEdit, "jsonEdit")
    text.setPlainText(text.toPlainText().replace('"threads": 256', '"threads": 64'))
    wait_check(window)
    assert window.document.pattern.integer_params["threads"] == 64
    assert on_ui_thread and not any(on_ui_thread)


def test_a_kernel_edit_compiles_on_a_thread_and_a_bad_one_shows_its_line(
        vector_add, on_ui_thread, wait_check, qtbot):
    window = vector_add
    source = window.findChild(QPlainTextEdit, "kernelSource")
    message = window.findChild(QLabel, "kernelMessage")
    before = window.document.pattern
    source.setPlainText(source.toPlainText().replace("c[i] = a[i] + b[i];", "c[i] = ;"))
    qtbot.waitUntil(lambda: window.document.check_pending, timeout=10_000)  # debounced
    wait_check(window)
    # nvcc's one line where it showed before: the kernel tab's message; the pattern stays
    assert message.text().startswith("kernel.code line") and "expected an expression" \
        in message.text()
    assert window.document.pattern == before
    source.setPlainText(source.toPlainText().replace("c[i] = ;", "c[i] = a[i] + b[i]; // ok"))
    qtbot.waitUntil(lambda: window.document.check_pending, timeout=10_000)
    wait_check(window)
    assert message.text() == "" and "// ok" in window.document.pattern.kernel["code"]
    assert on_ui_thread and not any(on_ui_thread)


def test_opening_a_pattern_and_a_bare_cu_compiles_on_a_thread(open_window, on_ui_thread,
                                                              wait_check, monkeypatch,
                                                              tmp_path):
    window = open_window("stride-32B")
    chosen = [str(EXAMPLES / "transpose-naive-cuda.sectorviz.json")]
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (chosen[0], ""))
    before = window.document.path
    trigger(window, "open")
    assert window.document.path == before  # the example stays until the kernel compiled
    wait_check(window)
    assert window.document.path == EXAMPLES / "transpose-naive-cuda.sectorviz.json"
    assert window.document.kernel_known
    cu = tmp_path / "vector-add.cu"
    shutil.copy(EXAMPLES / "vector-add.cu", cu)
    chosen[0] = str(cu)
    trigger(window, "open")
    wait_check(window)
    assert window.document.path == tmp_path / "vector-add-vectorAdd.sectorviz.json"
    assert window.document.kernel_known
    assert len(on_ui_thread) >= 2 and not any(on_ui_thread)


def test_compare_with_compiles_on_a_thread_and_steps_with_a(vector_add, on_ui_thread,
                                                            wait_check, monkeypatch, qtbot):
    window = vector_add
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (
        str(EXAMPLES / "matmul-naive-cuda.sectorviz.json"), ""))
    trigger(window, "compareWith")
    wait_check(window)
    compare = window.compare_windows[-1]
    MEMO.clear()  # A's and B's kernels compiled again, as after an edit of both
    window.document.reanalyze()
    compare.b.reanalyze()
    trigger(window, "nextWarp")  # Right: B follows A's warp meanwhile
    assert compare.b.selection.warp == window.document.selection.warp == 1
    qtbot.waitUntil(lambda: compare.ready, timeout=60_000)
    assert on_ui_thread and not any(on_ui_thread)
    compare.close()


def test_export_waits_for_the_kernel_and_draws_on_a_thread(vector_add, on_ui_thread,
                                                            monkeypatch, qtbot):
    window = vector_add
    drawn_on_ui_thread: list[bool] = []
    real = export_dialog.diagram_svg
    monkeypatch.setattr(export_dialog, "diagram_svg", lambda *a: (
        drawn_on_ui_thread.append(threading.current_thread() is threading.main_thread()),
        real(*a))[1])
    dialogs = []
    monkeypatch.setattr(export_dialog.ExportDialog, "exec", lambda self: dialogs.append(self))
    MEMO.clear()  # the kernel is being compiled again (a file it read changed)
    window.document.reanalyze()
    trigger(window, "export")
    assert not dialogs and status(window) == \
        "Export: compiling and reading the kernel vectorAdd…"
    qtbot.waitUntil(lambda: window.document.kernel_known, timeout=60_000)
    trigger(window, "export")
    dialog = dialogs[0]
    qtbot.waitUntil(lambda: not dialog.drawing, timeout=60_000)
    assert 'data-sector="' in dialog.svg
    assert drawn_on_ui_thread and not any(drawn_on_ui_thread)
    assert on_ui_thread and not any(on_ui_thread)
    dialog.deleteLater()
