"""Shared instructions in the app: listed after the global ones, drawn as the lane-to-bank
diagram in the centre, stepped like the others."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QTextBrowser

from sectorviz.scene.shapes import Rect


def bank_hits(window) -> list[tuple[int, int, int]]:
    """(lane, bank, wavefront) of the cells the centre view draws."""
    return [(int(d["lane"]), int(d["bank"]), int(d["wavefront"]))
            for d in (dict(s.data) for s in window.grid_view.item.scene_.shapes
                      if isinstance(s, Rect) and s.css.startswith("hit "))]


def test_the_transpose_tile_in_the_centre(open_window, qtbot):
    window = open_window("shared-tile-column")
    doc, grid = window.document, window.grid_view
    combo = window.findChild(QComboBox, "instructionCombo")
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "0: load in[row][tx]", "1: store tile[ty][tx] (shared)", "2: load tile[tx][ty] (shared)",
        "3: store padded[ty][tx] (shared)", "4: load padded[tx][ty] (shared)"]
    grid.setFocus()
    qtbot.keyClick(grid, Qt.Key_Down)
    qtbot.keyClick(grid, Qt.Key_Down)
    qtbot.keyClick(grid, Qt.Key_Right)
    assert (doc.selection.warp, doc.selection.instruction) == (1, 2)
    assert bank_hits(window) == [(lane, 1, lane) for lane in range(32)]  # 32-way in bank 1
    qtbot.keyClick(grid, Qt.Key_Down)
    qtbot.keyClick(grid, Qt.Key_Down)
    assert [w for _, _, w in bank_hits(window)] == [0] * 32  # padded: conflict-free
    qtbot.keyClick(grid, Qt.Key_Down)  # clamped at the last shared instruction
    assert doc.selection.instruction == 4


def test_shared_loop_executions_step(open_window):
    window = open_window("shared-matmul-tile")
    doc = window.document
    doc.select(instruction=5)  # load As[ty][k] (shared): 4 tiles x 32 k per warp
    assert doc.view().runs == 128 and doc.view().instruction.name == "load As[ty][k]"
    doc.select(run=33)  # tile 1, k = 1: all lanes read As[ty][1], a broadcast
    assert {(b, w) for _, b, w in bank_hits(window)} == {(1, 0)}
    window.next_worst_warp()
    assert window.message.text() == "a shared instruction has no per-warp sector counts"


def test_overview_rows_of_shared_instructions(open_window, qtbot):
    """Rows 1-4 of the strip are the shared instructions: the column read of tile[32][32]
    is 32 wavefronts against an ideal of 1 (the 8x+ class), the padded one ideal; a click on
    a shared row selects it."""
    window = open_window("shared-tile-column")
    overview = window.overview
    rgba = overview.image.image  # one row per instruction, then the atypical row
    theme = window.overview.theme.diagram
    colour = lambda row: tuple(int(c) for c in rgba[row, 0, :3])  # noqa: E731
    rgb = lambda c: QColor(c).getRgb()[:3]  # noqa: E731
    assert rgba.shape[0] == 1 + 5
    assert colour(2) == rgb(theme.waste[-1]) and colour(4) == rgb(theme.waste[0])
    vb = overview.plot.getPlotItem().getViewBox()
    pos = overview.plot.mapFromScene(vb.mapViewToScene(QPointF(7.5, 2.5)))
    qtbot.mouseClick(overview.plot.viewport(), Qt.LeftButton, pos=pos)
    assert (window.document.selection.warp, window.document.selection.instruction) == (7, 2)


def test_bank_cell_tooltip_says_why(open_window):
    """A word of the banks diagram: its lane, bank and wavefront, and why the request takes
    its wavefronts (scene.explain), for the selected warp and execution."""
    window = open_window("shared-tile-column")
    window.document.select(warp=1, instruction=2)  # load tile[tx][ty]: column 1, bank 1
    item = window.grid_view.item
    cell = next(s for s in item.scene_.shapes if isinstance(s, Rect)
                and s.css.startswith("hit ") and dict(s.data)["lane"] == "3")
    text = item.tooltip_at(QPointF(cell.x + cell.w / 2, cell.y + cell.h / 2))
    assert text.splitlines() == [
        "lane 3: word 97 (byte offset 388) in bank 1, served in its bank's wavefront 4",
        "why: Lanes 0-31 read column 1 of a 32x32 float32 tile: the 32 words are 128 B apart, "
        "all in bank 1, so the request takes 32 wavefronts where 1 would do (32-way conflict). "
        "Padding each row by one element (stride 33 words) spreads them one per bank over all "
        "32 banks."]
    assert item.tooltip_at(QPointF(cell.x + cell.w * 3, cell.y + cell.h / 2)) == ""


def test_the_headline_names_the_bank_conflict_in_the_overviews_red(open_window, qtbot):
    """shared-tile-column fetches only its ideal sectors; its cost is the 32-way column read
    of tile[32][32]: the sheet's answer names it, and its overview row is the worst colour."""
    window = open_window("shared-tile-column")
    sheet = window.findChild(QTextBrowser, "sheet")
    qtbot.waitUntil(lambda: "bank conflict" in sheet.toPlainText())
    text = " ".join(sheet.toPlainText().split())
    assert ("worst instruction load tile[tx][ty] 32-way bank conflict, 32 wavefronts per "
            "request, ideal 1") in text
    rgba, theme = window.overview.image.image, window.overview.theme.diagram
    assert tuple(int(c) for c in rgba[2, 0, :3]) == QColor(theme.waste[-1]).getRgb()[:3]
