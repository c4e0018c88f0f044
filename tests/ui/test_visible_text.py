"""Issue 22, item 4, in the app: names, notes and source text from a file never hide or
reorder what the window shows. Labels (title, instruction selector, sheet, headline, status
and error lines) show controls, CR, newlines, bidi controls and zero-width characters as the
terminal's escapes ('\\u202e'); the Kernel tab keeps the source's characters but draws each
invisible one as a placeholder of its own, named under the code."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QComboBox, QLabel, QTextBrowser

from sectorviz.model import load_pattern
from sectorviz.ui.main_window import MainWindow
from sectorviz.ui.visible import HIDDEN, hidden_note, real_source, shown_source

RLO, LRI, PDI, ZWSP = "\u202e", "\u2066", "\u2069", "\u200b"
NAME = f"evil{RLO}DAOL\nsector demand 0 B"
NAME_SHOWN = "evil\\u202eDAOL\\nsector demand 0 B"
ACCESS = f"load{LRI}x{ZWSP}\r"
ACCESS_SHOWN = "load\\u2066x\\u200b\\r"
RAW = (RLO, LRI, PDI, ZWSP, "\n", "\r")


def write_pattern(folder, name: str = NAME, file: str = "p.sectorviz.json"):
    doc = {"format": "sectorviz.pattern/1", "name": name, "notes": f"see{RLO} me",
           "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 8192}},
           "accesses": [{"name": ACCESS, "op": "load", "array": "a", "index": "threadIdx.x * 8"}]}
    path = folder / file
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture
def window_on(qtbot, wait_analysis):
    """window_on(pattern, path) -> a shown MainWindow with its analysis done."""
    windows = []

    def make(pattern, path=None):
        window = MainWindow(pattern, path)
        window.show()
        qtbot.waitExposed(window)
        wait_analysis(window)
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.document.undo_stack.setClean()
        window.close()


def clean(text: str) -> bool:
    return not any(c in text for c in RAW)


def test_labels_show_names_as_escapes(tmp_path, window_on):
    window = window_on(load_pattern(write_pattern(tmp_path)))  # untitled: its name is the title
    assert window.windowTitle() == f"{NAME_SHOWN}[*] — sectorviz"
    combo = window.findChild(QComboBox, "instructionCombo")
    assert [combo.itemText(i) for i in range(combo.count())] == [f"0: {ACCESS_SHOWN}"]
    sheet = window.findChild(QTextBrowser, "sheet").toPlainText()
    assert NAME_SHOWN in sheet and ACCESS_SHOWN in sheet and clean(sheet.replace("\n", ""))
    caption = window.findChild(QLabel, "gridCaption").text()
    assert ACCESS_SHOWN in caption and clean(caption)
    window.next_worst_warp()
    status = window.findChild(QLabel, "statusMessage").text()
    assert status == f"warp 0: the most sectors per request for {ACCESS_SHOWN}"


def test_a_file_name_and_an_error_line_show_escapes(tmp_path, window_on):
    path = write_pattern(tmp_path, file=f"ev{RLO}il\n.sectorviz.json")
    window = window_on(load_pattern(path), path)
    assert window.windowTitle() == "ev\\u202eil\\n.sectorviz.json[*] — sectorviz"
    missing = tmp_path / f"no{LRI}ne.sectorviz.json"
    assert not window.open_path(missing)
    status = window.findChild(QLabel, "statusMessage").text()
    assert "no\\u2066ne.sectorviz.json" in status and clean(status)


def test_presentation_headline_shows_escapes(tmp_path, window_on):
    window = window_on(load_pattern(write_pattern(tmp_path)))
    shown = window.present()
    try:
        for name in ("presentHeadline", "presentStep"):
            assert clean(shown.findChild(QLabel, name).text())
        assert ACCESS_SHOWN in shown.findChild(QLabel, "presentHeadline").text()
    finally:
        shown.close()


KERNEL = (f"// {RLO}evil comment{LRI} x{PDI}\n"
          f"__global__ void k(float *a) {{\n    int i = threadIdx.x;  // i{ZWSP}\n"
          f"    a[i] = 0;\n}}\n")


def kernel_pattern(tmp_path):
    doc = {"format": "sectorviz.pattern/1", "name": "k", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 1024}},
           "kernel": {"code": KERNEL, "function": "k"}}
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return load_pattern(path), path


def test_the_kernel_tab_keeps_the_source_and_shows_its_invisible_characters(
        tmp_path, window_on, qtbot):
    window = window_on(*kernel_pattern(tmp_path))
    kernel = window.editor.kernel
    on_screen = kernel.view.toPlainText()
    assert clean(on_screen.replace("\n", "")) and on_screen.count("\n") == KERNEL.count("\n")
    assert [len(line) for line in on_screen.split("\n")] == \
        [len(line) for line in KERNEL.split("\n")]  # one placeholder each: columns stay
    assert kernel.source() == KERNEL
    note = kernel.findChild(QLabel, "kernelHidden")
    assert note.isVisibleTo(kernel) and note.text() == (
        "invisible characters, shown in red: U+202E right-to-left override (line 1), "
        "U+2066 left-to-right isolate (line 1), U+2069 pop directional isolate (line 1) "
        "and 1 more")
    cursor = kernel.view.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    kernel.view.setTextCursor(cursor)
    qtbot.keyClicks(kernel.view, "// edited")
    # the edited text becomes the pattern once nvcc has compiled it (about a second alone,
    # many on a loaded machine): the compile's wait, as for any kernel the window reads
    qtbot.waitUntil(lambda: window.document.pattern.kernel["code"] == KERNEL + "// edited",
                    timeout=60_000)


def test_an_error_in_the_kernel_tab_is_one_visible_line(tmp_path, window_on):
    window = window_on(*kernel_pattern(tmp_path))
    window.editor.kernel.set_error(f"k.cu: line 1: bad{RLO}\nname")
    assert window.editor.kernel.message.text() == "k.cu: line 1: bad\\u202e\\nname"


@pytest.mark.parametrize("text", ["plain", KERNEL, "a\r\nb\rc", "".join(HIDDEN),
                                  "x\u2028y\u2029z"])
def test_placeholders_go_back_to_the_characters(text):
    shown, mapped = shown_source(text)
    assert mapped and not set(HIDDEN) & set(shown.replace("\r\n", "").replace("\n", ""))
    assert real_source(shown) == text


def test_a_source_holding_a_placeholder_is_shown_as_it_is():
    text = f"// \u241b is ESC's picture {RLO}"
    assert shown_source(text) == (text, False)
    assert hidden_note(text) == ("invisible characters, shown in red: U+202E right-to-left "
                                 "override (line 1)")
