"""Open is all or nothing: a file that fails to open leaves the whole window as it was (title,
Form, JSON, grid, sheet and Kernel tab all of the same document), its one-line error naming
the file and place; a kernel opens scrolled to its `__global__` line, an error in the Kernel
tab is marked in the gutter and underlined; File > Open offers .cu files by default."""

import fnmatch
import re
import shutil

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QFileDialog, QLabel, QPlainTextEdit

from sectorviz.paths import examples_dir
from sectorviz.ui.kernel_editor import EDIT_DEBOUNCE_MS, ERROR_RED

EX = examples_dir()
LICENCE = "".join(f"// Licence line {k}: permission is granted, provided ...\n"
                  for k in range(1, 31))  # 30 lines


BROKEN = 'vector-add.cu line 22, column 5: expected a ";"'  # nvcc's, at the next token '}'


def vector_add(folder, licence="", broken=False):
    """vector-add-cuda's pattern and .cu copied to `folder`, the .cu after `licence` and,
    when `broken`, missing the ';' of its store (line 21 of the original: BROKEN, nvcc's
    first message)."""
    text = (EX / "vector-add.cu").read_text()
    if broken:
        text = text.replace("c[i] = a[i] + b[i];", "c[i] = a[i] + b[i]")
    (folder / "vector-add.cu").write_text(licence + text)
    pattern = folder / ("broken.sectorviz.json" if broken else "vadd.sectorviz.json")
    shutil.copy(EX / "vector-add-cuda.sectorviz.json", pattern)
    return folder / "vector-add.cu", pattern


def shown(window):
    """What the window shows of its document: title, JSON tab, Kernel tab, Form's name."""
    return (window.windowTitle(),
            window.findChild(QPlainTextEdit, "jsonEdit").toPlainText(),
            window.findChild(QPlainTextEdit, "kernelSource").toPlainText(),
            window.document.pattern, window.document.path, window.document.opened)


def first_visible_line(view) -> int:
    return view.firstVisibleBlock().blockNumber() + 1


def line_visible(view, line: int) -> bool:
    block = view.document().findBlockByNumber(line - 1)
    rect = view.blockBoundingGeometry(block).translated(view.contentOffset())
    return rect.top() >= 0 and rect.bottom() <= view.viewport().height()


def test_a_broken_cu_pattern_leaves_the_whole_window_as_it_was(open_window, tmp_path,
                                                                 wait_analysis, wait_check):
    (tmp_path / "good").mkdir()
    _cu, good = vector_add(tmp_path / "good")
    window = open_window("stride-32B")
    assert window.open_path(good)
    wait_check(window)
    wait_analysis(window)
    before = shown(window)
    assert "vadd.sectorviz.json" in before[0] and "c[i] = a[i] + b[i];" in before[2]
    _, broken = vector_add(tmp_path, broken=True)
    assert window.open_path(broken)  # being compiled on a thread: refused when it answers
    wait_check(window)
    status = window.findChild(QLabel, "statusMessage").text()
    assert status == f"{broken}: {BROKEN}"
    assert "\n" not in status
    assert shown(window) == before  # title, JSON, Kernel tab, the document: all unchanged
    editor = window.editor
    assert editor.kernel.message.text() == "" and editor.kernel.view.error_line is None
    assert window.findChild(QPlainTextEdit, "jsonEdit").toPlainText() == \
        window.document.pattern.source


def test_a_broken_bare_cu_leaves_the_window_as_it_was(open_window, tmp_path, wait_check):
    window = open_window("stride-32B")
    before = shown(window)
    cu, _ = vector_add(tmp_path, broken=True)
    assert window.open_path(cu)  # its starting pattern is made beside it, then refused
    wait_check(window)
    assert window.findChild(QLabel, "statusMessage").text() == \
        f"{tmp_path / 'vector-add-vectorAdd.sectorviz.json'}: {BROKEN}"
    assert shown(window) == before
    assert not window.editor.isTabVisible(window.editor.kernel_tab)  # still no kernel


def test_a_kernel_opens_scrolled_to_its_global_line(open_window, tmp_path, wait_analysis,
                                                    wait_check):
    cu, pattern = vector_add(tmp_path, licence=LICENCE)
    window = open_window("stride-32B")
    assert window.open_path(pattern)
    wait_check(window)
    view = window.findChild(QPlainTextEdit, "kernelSource")
    assert window.editor.currentWidget() is window.editor.kernel
    kernel = 30 + 16  # __global__ void vectorAdd(... after the 30 lines of licence
    assert view.document().findBlockByNumber(kernel - 1).text().startswith("__global__")
    assert line_visible(view, kernel) and first_visible_line(view) > 1
    assert view.textCursor().blockNumber() == kernel - 1  # typing starts at the kernel


def test_an_error_in_the_kernel_tab_is_marked_in_the_gutter_and_underlined(
        open_window, tmp_path, qtbot, wait_analysis, wait_check):
    cu, pattern = vector_add(tmp_path, licence=LICENCE)
    window = open_window("stride-32B")
    assert window.open_path(pattern)
    wait_check(window)
    wait_analysis(window)
    view = window.findChild(QPlainTextEdit, "kernelSource")
    store = 30 + 21
    cursor = QTextCursor(view.document().findBlockByNumber(store - 1))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    view.setTextCursor(cursor)  # the user clicks after the ';' of the store and deletes it
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Backspace)
    message = window.findChild(QLabel, "kernelMessage")
    qtbot.waitUntil(lambda: "expected" in message.text(),  # after nvcc: seconds under load
                    timeout=EDIT_DEBOUNCE_MS + 60_000)
    # the tab's text is the pattern's kernel.code now; nvcc misses the ';' at the next
    # token, the '}' closing the if: the line after the store, column 5
    error = store + 1
    assert message.text() == f'kernel.code line {error}, column 5: expected a ";"'
    marks = [m for m in view.extraSelections()
             if m.format.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline]
    assert [m.cursor.blockNumber() for m in marks] == [error - 1]
    assert view.error_line == error and line_visible(view, error)
    block = view.document().findBlockByNumber(error - 1)
    y = round(view.blockBoundingGeometry(block).translated(view.contentOffset()).center().y())
    picture = view.gutter.grab().toImage()
    # the gutter marks the line, right of its number (white text, anti-aliased at its edge)
    assert QColor(picture.pixel(picture.width() - 1, y)) == QColor(ERROR_RED)
    qtbot.keyClick(view, Qt.Key.Key_Semicolon)  # fixed: the marks go
    qtbot.waitUntil(lambda: message.text() == "", timeout=EDIT_DEBOUNCE_MS + 60_000)
    assert view.error_line is None


def test_the_open_dialog_shows_cu_files_by_default(open_window, monkeypatch):
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda parent, caption, start, filters, *a: (asked.append(filters),
                                                                     ("", ""))[1])
    window = open_window("stride-32B")
    window.findChild(type(window.actions()[0]), "open").trigger()
    (filters,) = asked
    default = filters.split(";;")[0]
    patterns = re.search(r"\((.*)\)", default).group(1).split()
    for name in ("kernel.cu", "mine.sectorviz.json", "other.json"):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), (name, default)


def test_the_compilers_place_of_the_kernel_tabs_text_is_its_line():
    """nvcc's errors name the file ('kernel.code line 52'); an include's line is not the
    Kernel tab's."""
    from sectorviz.model import PatternError
    from sectorviz.ui.editor import error_line
    assert error_line(PatternError("kernel.code line 52", "expected a ';'", 5),
                      "kernel.code") == 52
    assert error_line(PatternError("line 21", "syntax error", 27), "kernel.code") == 21
    assert error_line(PatternError("inc/util.h line 3", "oops", 1), "kernel.code") is None
