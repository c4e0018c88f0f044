"""Edits of a stride, an offset and a layout reach the grid (model and pixels) and the sheet."""

from PySide6.QtCore import QPointF, QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QDockWidget, QSpinBox, QTextBrowser

from sectorviz.scene.grid import GapColumn, SectorColumn
from sectorviz.scene.palette import mix
from sectorviz.ui.sheet_view import NARROW_PX


def sheet_values(window) -> list[str]:
    return [r.value for step in window.sheet.sheet.steps for r in step.rows]


def pixel(window, lane: int, j: int, byte: int) -> QColor:
    """The colour drawn for byte `byte` of lane `lane` in the j-th sector column, zoomed in
    until a byte is at least 3 pixels wide and the cell centred."""
    view, item = window.grid_view, window.grid_view.item
    rect = item.cell_rect(lane, j)
    sb = window.grid_layout.sector_bytes
    view.zoom_by(3 * sb / (rect.width() * view.transform().m11()))
    view.centerOn(rect.center())
    x = rect.left() + 0.5 + (rect.width() - 1) * (byte + 0.5) / sb
    at = view.mapFromScene(item.mapToScene(QPointF(x, rect.center().y())))
    return view.viewport().grab().toImage().pixelColor(at)


def used(window) -> str:
    """The colour of the bytes a plain lane uses."""
    return window.grid_view.item.theme.diagram.plain


def wasted(window) -> str:
    """The colour of a touched sector's bytes that no lane uses."""
    return window.grid_view.item.theme.diagram.wasted


def others(window) -> str:
    """The tint of a touched sector's bytes that other lanes use."""
    d = window.grid_view.item.theme.diagram
    return mix(d.plain, d.background, d.tint)


def is_colour(colour: QColor, name: str) -> bool:
    want = QColor(name)
    return max(abs(colour.red() - want.red()), abs(colour.green() - want.green()),
               abs(colour.blue() - want.blue())) <= 40


def test_stride_edit_updates_grid_and_sheet(open_window, qtbot):
    window = open_window("stride-32B")
    layout = window.grid_layout
    assert len(layout.sectors) == 32
    assert is_colour(pixel(window, 3, 3, 1), used(window))  # lane 3 uses bytes [0, 4) of sector 3
    assert is_colour(pixel(window, 3, 3, 20), wasted(window))
    assert "lanes 32 B apart: 32 sectors, ideal 4" in sheet_values(window)

    spin = window.findChild(QSpinBox, "params.stride")
    spin.setValue(1)
    layout = window.grid_layout
    assert len(layout.sectors) == 4 and not any(isinstance(c, GapColumn) for c in layout.columns)
    assert (1, int(layout.sectors[0])) in layout.hits
    assert "lanes 4 B apart: 4 sectors, ideal 4" in sheet_values(window)
    assert window.document.pattern.to_dict()["params"]["stride"] == 1
    # lane 9 uses bytes [4, 8) of the second sector
    assert is_colour(pixel(window, 9, 1, 5), used(window))
    assert is_colour(pixel(window, 9, 1, 1), others(window))
    assert is_colour(pixel(window, 9, 0, 5), window.grid_view.item.theme.diagram.cell)  # untouched


def test_offset_edit_updates_grid_and_sheet(open_window):
    window = open_window("shifted")
    assert len(window.grid_layout.sectors) == 5
    assert is_colour(pixel(window, 0, 0, 5), used(window))  # offset 4: lane 0 at bytes [4, 8)
    assert is_colour(pixel(window, 0, 0, 1), wasted(window))

    window.findChild(QSpinBox, "arrays.x.offset_bytes").setValue(0)
    layout = window.grid_layout
    assert len(layout.sectors) == 4
    assert [c.used_bytes for c in layout.columns if isinstance(c, SectorColumn)] == [32] * 4
    assert "lanes 4 B apart: 4 sectors, ideal 4" in sheet_values(window)
    assert is_colour(pixel(window, 0, 0, 1), used(window))
    assert is_colour(pixel(window, 0, 0, 5), others(window))


def test_layout_edit_updates_grid_and_sheet(open_window, wait_analysis):
    window = open_window("col-major")
    assert len(window.grid_layout.sectors) == 4
    combo = window.findChild(QComboBox, "arrays.a.layout")
    assert combo.currentText() == "col-major"
    combo.setCurrentText("row-major")
    combo.textActivated.emit("row-major")
    assert window.document.pattern.to_dict()["arrays"]["a"]["layout"] == "row-major"
    layout = window.grid_layout
    assert len(layout.sectors) == 32
    assert all(c.relative % 4096 == 0 for c in layout.columns if isinstance(c, SectorColumn))
    wait_analysis(window)
    assert "lanes 4096 B apart: 32 sectors, ideal 4" in sheet_values(window)
    grid_row = next(r for s in window.sheet.sheet.steps for r in s.rows
                    if r.label == "load a[r][c] (down a column), grid")
    assert grid_row.value.startswith("typical 32")
    assert "load a[r][c] (down a column)" in window.sheet.browser.toPlainText()


def test_tooltip_names_lane_thread_element_and_address(open_window):
    window = open_window("transpose-naive")
    window.set_instruction(1)
    item = window.grid_view.item
    text = item.tooltip_at(item.cell_rect(5, 5).center())
    assert "lane 5, thread (5, 0, 0), block (0, 0, 0)" in text
    assert "element (5, 0)" in text
    assert "address 0x" in text and "sectors" in text
    assert "bytes [0, 4) of sector" in text
    assert text.endswith("\nwhy: Lanes walk down a column, 4,096 B apart, so every lane touches "
                         "its own sector: 32 sectors for 128 useful bytes (12.5%). Consecutive "
                         "lanes accessing consecutive elements would need 4.")


def test_a_narrow_sheet_stacks_each_label_over_its_value(open_window, qtbot, monkeypatch):
    """Wide: 'useful' and its value share a table row; narrower than NARROW_PX the label
    gets a row of its own (no word broken to fit a column), and back again when widened."""
    window = open_window("vector-add")
    window.fit_to_screen(QRect(0, 0, 1920, 1080))  # the default layout, whatever was saved
    dock = window.findChild(QDockWidget, "sheetDock")
    browser = window.findChild(QTextBrowser, "sheet")
    drawn = []
    real = browser.setHtml
    monkeypatch.setattr(browser, "setHtml", lambda html: (drawn.append(html), real(html)))
    for width, narrow in ((NARROW_PX + 200, False), (NARROW_PX - 100, True),
                          (NARROW_PX + 200, False)):
        window.resizeDocks([dock], [width], Qt.Horizontal)
        qtbot.waitUntil(lambda narrow=narrow: window.sheet.narrow == narrow)
        qtbot.waitUntil(lambda narrow=narrow: drawn
                        and ("<td colspan='2'>useful</td>" in drawn[-1]) == narrow)
        assert ("<td width='38%'>useful</td>" in drawn[-1]) != narrow
