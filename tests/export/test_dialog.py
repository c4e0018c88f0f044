"""The export dialog previews, saves what the command line writes, and copies PNG + SVG."""

from pathlib import Path

from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QFileDialog, QLabel

from sectorviz.export.formats import diagram_bytes
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.ui.export_dialog import SVG_MIME, ExportDialog, copy_diagram


def test_dialog_previews_and_saves(qtbot, tmp_path, gather, drawn):
    dialog = ExportDialog(gather, warp=3, instruction=1)
    qtbot.addWidget(dialog)
    drawn(dialog)
    assert dialog.objectName() == "exportDialog"
    preview = dialog.findChild(QLabel, "exportPreview")
    assert not preview.pixmap().isNull()
    assert dialog.spec() == DiagramSpec(warp=3, instruction=1)
    assert 'data-sector="131168"' in dialog.svg

    dialog.findChild(QComboBox, "exportTheme").setCurrentText("dark")
    dialog.findChild(QCheckBox, "exportLegend").setChecked(False)
    dialog.findChild(QComboBox, "exportKind").setCurrentText("warp")
    spec = dialog.spec()
    assert (spec.kind, spec.theme, spec.legend) == ("warp", "dark", False)
    drawn(dialog)
    assert "#16181d" in dialog.svg

    dialog.save(tmp_path / "d.png")
    assert (tmp_path / "d.png").read_bytes() == diagram_bytes(gather, [spec], ".png", 2)
    dialog.save(tmp_path / "s.tex", sheet=True)
    assert r"\toprule" in (tmp_path / "s.tex").read_text()


def test_dialog_reports_a_bad_iteration(qtbot, crossing, drawn):
    dialog = ExportDialog(crossing, warp=0, instruction=0)
    qtbot.addWidget(dialog)
    dialog.execution.setValue(3)
    drawn(dialog)
    assert "execution 3 outside" in dialog.status.text()
    assert not dialog.save_button.isEnabled()


def test_copy_puts_png_and_svg_on_the_clipboard(qtbot, crossing):
    copy_diagram(crossing, 0, 0)
    mime = QApplication.clipboard().mimeData()
    assert mime.hasImage() and not mime.imageData().isNull()
    assert bytes(mime.data(SVG_MIME)).startswith(b"<?xml")


def test_dialog_explains_grid_warp_and_banks_only(qtbot, gather, drawn):
    dialog = ExportDialog(gather, warp=3, instruction=1)
    qtbot.addWidget(dialog)
    drawn(dialog)
    explain = dialog.findChild(QCheckBox, "exportExplain")
    assert not explain.isChecked() and 'class="explanation"' not in dialog.svg
    explain.setChecked(True)
    assert dialog.spec() == DiagramSpec(warp=3, instruction=1, explain=True)
    drawn(dialog)
    assert "The index array sends the 32 lanes to 32 sectors" in dialog.svg
    dialog.findChild(QComboBox, "exportKind").setCurrentText("histogram")
    assert not explain.isEnabled() and not dialog.spec().explain
    assert dialog.instruction.isEnabled() and not dialog.execution.isEnabled()
    drawn(dialog)
    assert 'class="bar"' in dialog.svg and dialog.spec().instruction == 1


def test_save_is_offered_in_the_patterns_folder(qtbot, tmp_path, crossing, monkeypatch):
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, title, start, filters: (asked.append(start), ("", ""))[1])
    dialog = ExportDialog(crossing, warp=0, instruction=0, folder=tmp_path)
    qtbot.addWidget(dialog)
    dialog.ask_and_save()
    assert Path(asked[0]).parent == tmp_path and asked[0].endswith(".svg")
    untitled = ExportDialog(crossing, warp=0, instruction=0)
    qtbot.addWidget(untitled)
    untitled.ask_and_save()
    assert Path(asked[1]).parent == Path.home()
