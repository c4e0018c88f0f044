"""The banks diagram: the export command and dialog list the shared instructions for it."""

from PySide6.QtWidgets import QApplication, QComboBox

from sectorviz.cli import main
from sectorviz.export.formats import diagram_svg
from sectorviz.paths import examples_dir
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.ui.export_dialog import SVG_MIME, ExportDialog, copy_diagram


def test_command_names_a_shared_instruction(tmp_path, example):
    out = tmp_path / "t.svg"
    assert main(["export", str(examples_dir() / "transpose-tiled.sectorviz.json"), "-o",
                 str(out), "--kind", "banks", "--instruction", "load tile[tx][ty]",
                 "--warp", "5"]) == 0
    svg = out.read_text()
    assert svg == diagram_svg(example("transpose-tiled"),
                              DiagramSpec(kind="banks", warp=5, instruction=1))
    assert svg.count('class="hit plain"') == 32 and 'data-wavefront="1"' not in svg


def test_dialog_lists_shared_instructions_for_banks(qtbot, example, drawn):
    dialog = ExportDialog(example("transpose-tiled"), warp=0, instruction=1)
    qtbot.addWidget(dialog)
    combo = dialog.findChild(QComboBox, "exportInstruction")
    names = lambda: [combo.itemText(i) for i in range(combo.count())]  # noqa: E731
    assert names() == ["load a[row][col]", "store c[out_row][out_col]"]
    dialog.findChild(QComboBox, "exportKind").setCurrentText("banks")
    assert names() == ["store tile[ty][tx]", "load tile[tx][ty]"] and combo.isEnabled()
    combo.setCurrentIndex(1)
    assert dialog.spec().kind == "banks" and dialog.spec().instruction == 1
    drawn(dialog)
    assert 'data-bank="' in dialog.svg and dialog.save_button.isEnabled()
    dialog.findChild(QComboBox, "exportKind").setCurrentText("grid")
    assert names() == ["load a[row][col]", "store c[out_row][out_col]"]


def test_dialog_and_copy_follow_a_shared_selection(qtbot, example):
    """The app counts the shared instructions after the global ones (2 here)."""
    p = example("transpose-tiled")
    dialog = ExportDialog(p, warp=2, instruction=3)
    qtbot.addWidget(dialog)
    assert dialog.spec() == DiagramSpec(kind="banks", warp=2, instruction=1)
    copy_diagram(p, 2, 3)
    svg = bytes(QApplication.clipboard().mimeData().data(SVG_MIME)).decode()
    assert svg == diagram_svg(p, DiagramSpec(kind="banks", warp=2, instruction=1))
