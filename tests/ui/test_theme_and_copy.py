"""Dark theme repaints the views; the sheet copies as Markdown and CSV."""

from PySide6.QtGui import QColor, QGuiApplication

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


def test_copy_sheet_as_markdown_and_csv(open_window):
    window = open_window("transpose-naive")
    window.set_instruction(1)
    window.sheet.copy_markdown()
    text = QGuiApplication.clipboard().text()
    assert "### 4. Sectors per request (32 B sectors)" in text
    assert "| store c[col][row], this warp | lanes 4096 B apart: 32 sectors, ideal 4 |" in text
    window.sheet.copy_csv()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert lines[0] == "step,item,value,note"
    assert any("lanes 4096 B apart: 32 sectors, ideal 4" in line for line in lines)
