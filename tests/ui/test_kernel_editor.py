"""The kernel tab widget: debounced edits, no echo, per-line notes, clicks, errors."""

from sectorviz.model import analyze, load_pattern
from sectorviz.paths import examples_dir
from sectorviz.scene.palette import WASTE_LABELS
from sectorviz.ui.kernel_editor import KernelEditor, line_notes
from sectorviz.ui.theme import DARK, LIGHT

EXAMPLES = examples_dir()


def test_line_notes_from_the_cuda_transpose():
    """Both accesses of the transpose's one line keep their own numbers: the coalesced load
    (4 sectors, ideal) and the strided store (32 sectors, 8x its ideal 4)."""
    a = analyze(load_pattern(EXAMPLES / "transpose-naive-cuda.sectorviz.json"))
    notes = line_notes(a.instructions)
    (line, note), = notes.items()  # both accesses sit on one source line
    assert line == a.instructions[0].line
    load, store = note.accesses
    assert (load.sectors_per_request, load.useful_fraction, load.over_ideal) == (4, 1.0, 1.0)
    assert (store.sectors_per_request, store.useful_fraction, store.over_ideal) == (32, 1 / 8, 8)
    assert (load.waste, store.waste) == (WASTE_LABELS.index("ideal"), WASTE_LABELS.index("8x+"))
    assert note.text == "4 · 32 sec/req"
    assert note.tooltip == ("access 1: 4 sectors per request, 100% useful\n"
                            "access 2: 32 sectors per request, 12% useful")


def _colours(image) -> set[str]:
    return {image.pixelColor(x, y).name() for x in range(image.width())
            for y in range(image.height())}


def test_each_access_is_drawn_beside_its_line_in_its_own_waste_colour(qtbot):
    """One colour rule: each number has the overview's colour for its access's sectors / ideal
    (the load "ideal", the store "8x+"), in the window's theme, in the margin column right of
    the code, level with its line even when the line is longer than the pane."""
    a = analyze(load_pattern(EXAMPLES / "transpose-naive-cuda.sectorviz.json"))
    notes = line_notes(a.instructions)
    (line,) = notes
    editor = KernelEditor()
    qtbot.addWidget(editor)
    editor.resize(700, 300)
    editor.show()
    qtbot.waitExposed(editor)
    code = "out[j * n + i] = in[i * n + j];" + " // a long trailing comment" * 8
    editor.set_source("\n" * (line - 1) + code + "\n")
    editor.set_annotations(notes)
    view = editor.view
    block = view.document().findBlockByNumber(line - 1)
    spans = view.note_spans(block)
    assert [text for _x, text, _c in spans] == ["4", " · ", "32", " sec/req"]
    margin, code_box = view.margin.geometry(), view.viewport().geometry()
    assert margin.left() > code_box.right() and margin.right() < view.width()
    bar = view.verticalScrollBar()
    editor.set_source("\n" * 200 + "\n" * (line - 1) + code + "\n")  # a scroll bar appears
    editor.set_annotations(notes)
    qtbot.waitUntil(bar.isVisible)
    assert not view.margin.geometry().intersects(bar.geometry())  # never under the bar
    editor.set_source("\n" * (line - 1) + code + "\n")
    editor.set_annotations(notes)
    assert margin.width() >= view.fontMetrics().horizontalAdvance("4 · 32 sec/req")
    for theme in (LIGHT, DARK):
        editor.set_theme(theme)
        colours = _colours(view.margin.grab().toImage())
        waste = theme.diagram.waste
        assert {waste[WASTE_LABELS.index("ideal")], waste[WASTE_LABELS.index("8x+")]} <= colours
        assert not colours & {waste[i] for i in (1, 2, 3)}
        assert not _colours(view.gutter.grab().toImage()) & set(waste)  # numbers only


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


def test_alike_accesses_of_a_line_share_one_piece_of_the_margin():
    """A loop nvcc unrolled puts many alike loads on one line: accesses of the same number
    and waste class are one piece ("2×5"), in order of first appearance; the tooltip still
    names each access."""
    from sectorviz.ui.kernel_editor import AccessNote, LineNote
    ideal, twice = AccessNote(2, 1.0, 1.0), AccessNote(2, 0.5, 2.0)
    note = LineNote((ideal, twice) * 5 + (AccessNote(32, 0.125, 8.0),))
    assert note.text == "2×5 · 2×5 · 32 sec/req"
    assert [a for a, _ in note.pieces] == [ideal, twice, note.accesses[-1]]
    assert note.tooltip.count("\n") == 10


def test_a_line_of_many_distinct_accesses_shows_three_numbers_then_an_ellipsis(qtbot):
    """A compiled line can carry dozens of instructions of different costs: the margin shows
    the first MAX_PIECES (3) and "…", so the code keeps its width; the pane below lists all."""
    from sectorviz.ui.kernel_editor import AccessNote, LineNote
    note = LineNote(tuple(AccessNote(n, 1.0, 1.0) for n in (1, 2, 4, 8, 16)))
    assert note.text == "1 · 2 · 4 · … sec/req"
    editor = KernelEditor()
    qtbot.addWidget(editor)
    editor.set_source("x;\n")
    editor.set_annotations({1: note})
    block = editor.view.document().findBlockByNumber(0)
    assert [t for _x, t, _c in editor.view.note_spans(block)] == [
        "1", " · ", "2", " · ", "4", " · …", " sec/req"]
