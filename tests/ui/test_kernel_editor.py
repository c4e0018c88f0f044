"""The kernel tab widget: debounced edits, no echo, per-line notes, clicks, errors."""

from sectorviz.model import analyze, load_pattern
from sectorviz.paths import examples_dir
from sectorviz.scene.palette import WASTE_LABELS
from sectorviz.ui.theme import DARK, LIGHT
from sectorviz.ui.kernel_editor import KernelEditor, line_notes

EXAMPLES = examples_dir()


def test_line_notes_from_the_cuda_transpose():
    a = analyze(load_pattern(EXAMPLES / "transpose-naive-cuda.sectorviz.json"))
    notes = line_notes(a.instructions)
    (line, note), = notes.items()  # both accesses sit on one source line
    assert note.accesses == 2 and note.sectors_per_request == 18
    assert note.text == "18 sec/req · 22%"
    assert line == a.instructions[0].line
    assert note.over_ideal == 36 / 8 and note.waste == WASTE_LABELS.index("4-8x")


def test_a_line_is_marked_in_the_overview_colour_of_its_waste(qtbot):
    """One colour rule: a line's box has the overview's colour for its sectors / ideal
    (4.5: "4-8x"), in the window's theme."""
    a = analyze(load_pattern(EXAMPLES / "transpose-naive-cuda.sectorviz.json"))
    notes = line_notes(a.instructions)
    editor = KernelEditor()
    qtbot.addWidget(editor)
    editor.resize(700, 300)
    editor.show()
    qtbot.waitExposed(editor)
    editor.set_source("\n" * (max(notes) + 2))
    editor.set_annotations(notes)
    for theme in (LIGHT, DARK):
        editor.set_theme(theme)
        image = editor.view.gutter.grab().toImage()
        colours = {image.pixelColor(x, y).name() for x in range(image.width())
                   for y in range(image.height())}
        assert theme.diagram.waste[WASTE_LABELS.index("4-8x")] in colours
        assert not colours & {c for i, c in enumerate(theme.diagram.waste) if i != 3}


def test_edits_are_debounced_and_set_source_does_not_echo(qtbot):
    editor = KernelEditor()
    qtbot.addWidget(editor)
    seen = []
    editor.edited.connect(seen.append)
    editor.set_source("__global__ void k() {}\n")
    qtbot.wait(600)
    assert seen == []
    editor.view.insertPlainText("// x\n")
    qtbot.waitUntil(lambda: len(seen) == 1, timeout=2000)
    assert seen[0].startswith("// x")


def test_clicking_the_gutter_reports_the_line(qtbot):
    from PySide6.QtCore import QPoint, Qt
    editor = KernelEditor()
    qtbot.addWidget(editor)
    editor.resize(600, 300)
    editor.show()
    editor.set_source("a\nb\nc\n")
    lines = []
    editor.lineActivated.connect(lines.append)
    view = editor.view
    second = view.document().findBlockByNumber(1)
    y = view.blockBoundingGeometry(second).translated(view.contentOffset()).center().y()
    qtbot.mouseClick(view.gutter, Qt.MouseButton.LeftButton, pos=QPoint(5, int(y)))
    assert lines == [2]


def test_error_underlines_and_shows_message(qtbot):
    editor = KernelEditor()
    qtbot.addWidget(editor)
    editor.set_source("int x;\nfoo bar;\n")
    editor.set_error("line 2, column 5: unknown name 'bar'", 2, 5)
    assert editor.findChild(type(editor.message), "kernelMessage").text().endswith("'bar'")
    (selection,) = editor.view.extraSelections()
    assert selection.cursor.selectedText() == "bar"
    editor.set_error(None)
    assert editor.view.extraSelections() == [] and editor.message.text() == ""
