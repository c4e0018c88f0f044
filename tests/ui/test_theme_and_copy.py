"""Dark theme repaints the views; the sheet pane, its copies, `report` and `export` agree."""

import csv
import io

from PySide6.QtGui import QColor, QGuiApplication

from sectorviz.cli import main
from sectorviz.export.sheets import sheet_csv, sheet_markdown, sheet_text
from sectorviz.paths import examples_dir
from sectorviz.ui.theme import DARK, LIGHT


def test_dark_theme_repaints_grid(open_window):
    window = open_window("stride-32B")
    corner = lambda: window.grid_view.viewport().grab().toImage().pixelColor(2, 2)  # noqa: E731
    assert corner() == QColor(LIGHT.base)
    window.findChild(type(window.dark_action), "darkTheme").trigger()
    assert window.dark_action.isChecked()
    assert corner() == QColor(DARK.base)
    assert window.store.value("theme") == "dark"
    window.set_theme("light")


def test_copy_sheet_as_markdown_and_csv(open_window, tmp_path, capsys):
    """The pane, its copies, `report` and `export` print one list of rows."""
    window = open_window("transpose-naive")
    window.set_warp(33)
    window.set_instruction(1)
    sheet = window.sheet.sheet
    window.sheet.copy_markdown()
    text = QGuiApplication.clipboard().text()
    assert "### 4. Sectors per request (32 B sectors)" in text
    assert "| store c[col][row], this warp | lanes 4096 B apart: 32 sectors, ideal 4 |" in text
    assert text == sheet_markdown(sheet)
    window.sheet.copy_csv()
    copied = QGuiApplication.clipboard().text()
    assert copied == sheet_csv(sheet)
    assert list(csv.reader(io.StringIO(copied)))[0] == \
        ["section", "item", "value", "unit", "note", "metric"]
    pane = window.sheet.browser.toPlainText()
    for row in sheet.answer + tuple(r for s in sheet.steps for r in s.rows):
        assert row.label in pane and row.value in pane
    path = str(examples_dir() / "transpose-naive.sectorviz.json")
    out = tmp_path / "s.csv"
    assert main(["export", path, "-o", str(out), "--warp", "33"]) == 0
    # the export's sheet is about the first execution of every instruction of warp 33
    assert out.read_text() == sheet_csv(window.sheet.sheet)
    assert main(["report", path, "--warp", "33"]) == 0
    assert capsys.readouterr().out.startswith(sheet_text(sheet))
