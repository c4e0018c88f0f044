"""The Kernel tab of the pattern editor, for patterns that name a CUDA kernel."""

from sectorviz.model.frontend import kernel_for
from sectorviz.ui.editor import KERNEL_COLUMNS


def test_kernel_tab_edits_inline_code_and_selects_lines(open_window, wait_analysis,
                                                        wait_check):
    window = open_window("vector-add-cuda")
    editor = window.editor
    assert editor.isTabVisible(editor.kernel_tab)
    source = editor.kernel.source()
    assert "__global__" in source
    wait_analysis(window)
    assert editor.kernel.view.notes  # per-line predictions in the gutter
    kernel = window.document.kernel
    line = kernel.instructions[0].line
    on_line = [k for k, ins in enumerate(kernel.instructions) if ins.line == line]
    window.set_instruction(on_line[0])
    editor.kernel.lineActivated.emit(line)  # clicking a line again: its next access
    assert window.document.selection.instruction == on_line[1 % len(on_line)]

    before = window.document.pattern
    editor.kernel.edited.emit(source.replace("__global__", "__global__ garbage(", 1))
    wait_check(window)
    assert window.document.pattern == before
    assert editor.kernel.message.text()

    editor.kernel.edited.emit(source + "\n// edited\n")
    wait_check(window)
    pattern = window.document.pattern
    assert pattern.kernel["code"].endswith("// edited\n")
    assert len(kernel_for(pattern).instructions) == len(kernel.instructions)
    window.document.undo_stack.undo()
    assert window.document.pattern == before


def test_kernel_tab_hidden_for_access_patterns(open_window):
    window = open_window("stride-32B")
    assert not window.editor.isTabVisible(window.editor.kernel_tab)


def test_the_code_keeps_its_columns_and_each_access_its_number(open_window, qtbot,
                                                               wait_analysis):
    """At the default window size (a 1778 x 1089 screen, as docs/make_screenshots.sh) the
    Kernel tab shows KERNEL_COLUMNS of code between the line numbers and the predictions, and the
    transpose's line with a 4-sector load and a 32-sector store ends with both numbers."""
    from PySide6.QtCore import QRect

    window = open_window("transpose-naive-cuda")
    window.fit_to_screen(QRect(0, 0, 1778, 1089))
    assert (window.width(), window.height()) == (1600, 980)
    wait_analysis(window)  # the predictions are in the margin
    view = window.editor.kernel.view
    wanted = view.fontMetrics().horizontalAdvance("x" * KERNEL_COLUMNS)

    def code_width() -> int:
        return view.viewport().width() - round(2 * view.document().documentMargin())

    # the docks take their widths in later layout passes
    qtbot.waitUntil(lambda: code_width() >= wanted, timeout=5000)
    assert view.margin.isVisible()
    assert view.margin.geometry().left() > view.viewport().geometry().right()
    line = window.document.kernel.instructions[0].line
    assert view.notes[line].text == "4 · 32 sec/req"
    block = view.document().findBlockByNumber(line - 1)
    assert [text for _x, text, _c in view.note_spans(block)] == ["4", " · ", "32", " sec/req"]


def test_editing_the_kernel_keeps_its_engine_arch_and_sizes(open_window, wait_check):
    """The edited code replaces the source; the kernel's other keys (engine, arch, dynamic
    shared bytes) stay as the pattern gave them."""
    import json

    from sectorviz.model import pattern_from_dict
    from sectorviz.paths import examples_dir

    path = examples_dir() / "vector-add-cuda.sectorviz.json"
    doc = json.loads(path.read_text())
    doc["kernel"].update({"engine": "source", "arch": "sm_80", "dynamic_shared_bytes": 0})
    window = open_window("vector-add-cuda")
    window.document.set_pattern(pattern_from_dict(doc, path.parent), "test")
    editor = window.editor
    editor.kernel.edited.emit(editor.kernel.source() + "\n// edited\n")
    wait_check(window)
    kernel = window.document.pattern.kernel
    assert kernel["code"].endswith("// edited\n") and "source" not in kernel
    assert (kernel["engine"], kernel["arch"], kernel["dynamic_shared_bytes"]) == (
        "source", "sm_80", 0)
