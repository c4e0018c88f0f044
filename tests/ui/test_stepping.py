"""Warp stepping with keys and selectors, executions of loops, play, and the overview click."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSpinBox

from sectorviz.ui.stepper import warp_coords, warp_index


def test_keys_step_warps_and_instructions(open_window, qtbot):
    window = open_window("vector-add")
    doc, grid = window.document, window.grid_view
    grid.setFocus()
    qtbot.keyClick(grid, Qt.Key_Right)
    qtbot.keyClick(grid, Qt.Key_Right)
    assert doc.selection.warp == 2
    qtbot.keyClick(grid, Qt.Key_Left)
    assert doc.selection.warp == 1
    qtbot.keyClick(grid, Qt.Key_Down)
    assert doc.selection.instruction == 1
    qtbot.keyClick(grid, Qt.Key_End)
    assert doc.selection.warp == doc.kernel.warps - 1
    assert window.findChild(QSpinBox, "warpSpin").value() == doc.kernel.warps - 1
    qtbot.keyClick(grid, Qt.Key_Home)
    assert doc.selection.warp == 0
    qtbot.keyClick(grid, Qt.Key_Up)
    qtbot.keyClick(grid, Qt.Key_Up)  # clamped at the first instruction
    assert doc.selection.instruction == 0


def test_block_selectors_and_global_warp_agree(open_window):
    window = open_window("transpose-naive")
    doc, kernel = window.document, window.document.kernel
    window.findChild(QSpinBox, "blockY").setValue(3)
    window.findChild(QSpinBox, "warpInBlock").setValue(5)
    assert doc.selection.warp == warp_index(kernel, 0, 3, 0, 5) == 3 * 32 * 32 + 5
    window.set_warp(1000)
    assert warp_coords(kernel, 1000) == (31, 0, 0, 8)
    assert window.findChild(QSpinBox, "blockX").value() == 31
    assert window.findChild(QSpinBox, "warpInBlock").value() == 8
    lane0 = window.grid_view.item.tooltip_at(window.grid_view.item.cell_rect(0, 0).center())
    assert "block (31, 0, 0)" in lane0


def test_loop_executions_step_and_play(open_window, qtbot):
    window = open_window("row-sum-loop")
    doc, step = window.document, window.stepper
    assert doc.view().runs == 64
    qtbot.keyClick(window.grid_view, Qt.Key_Right, Qt.ControlModifier)
    assert doc.selection.run == 1
    assert "k = 1 (iteration 2 of 64)" in window.grid_view.item.scene_.title
    for _ in range(62):
        step.step_forward()
    assert (doc.selection.warp, doc.selection.run) == (0, 63)
    step.step_forward()
    assert (doc.selection.warp, doc.selection.run) == (1, 0)
    step.play.setChecked(True)
    assert step.timer.isActive()
    step.play.setChecked(False)
    assert not step.timer.isActive()


def test_overview_click_jumps_to_warp(open_window, qtbot):
    window = open_window("partial-warp")
    overview = window.overview
    assert overview.image.image is not None
    vb = overview.plot.getPlotItem().getViewBox()
    scene = vb.mapViewToScene(QPointF(20.5, 1.5))  # warp 20, instruction 1
    pos = overview.plot.mapFromScene(scene)
    qtbot.mouseClick(overview.plot.viewport(), Qt.LeftButton, pos=pos)
    assert window.document.selection.warp == 20
    assert window.document.selection.instruction == 1
    assert overview.cursor.value() == 20.5


def test_overview_marks_atypical_warps(open_window):
    from sectorviz.ui.overview import atypical_warps
    window = open_window("partial-warp")
    odd = atypical_warps(window.document.analysis, window.document.kernel)
    assert odd.tolist() == [False] * 31 + [True]  # warp 31: 8 active lanes, 1 sector


def test_the_atypical_row_is_honest(open_window, qtbot):
    """reduction-cuda: most warps skip `if (tid == 0)` and are atypical while every
    instruction is at its ideal; the atypical row is the bottom one, in the accent colour
    (no waste class), its tooltip says what it means, and each instruction row's tooltip
    has its whole name and its unusual warps."""
    window = open_window("reduction-cuda")
    overview = window.overview
    qtbot.waitUntil(lambda: overview.image.image is not None)
    rgba, theme = overview.image.image, overview.theme
    n = len(window.document.kernel.instructions) + len(window.document.kernel.shared_instructions)
    assert rgba.shape[0] == n + 1
    marked = {tuple(int(c) for c in px[:3]) for px in rgba[n] if px[3]}
    accent = QColor(theme.accent).getRgb()[:3]
    waste = {QColor(c).getRgb()[:3] for c in theme.diagram.waste}
    assert marked <= {accent, (0, 0, 0)} and accent in marked and accent not in waste
    ticks = [t for _, t in overview.plot.getAxis("left")._tickLevels[0]]
    assert ticks[-1] == "atypical warps"
    assert "skips an instruction" in overview.row_tip(n)
    name = overview._names[0]
    assert overview.row_tip(0).startswith(name) and "unlike its typical warp" in overview.row_tip(0)


def test_long_row_names_are_elided_in_the_middle(open_window):
    window = open_window("shared-tile-column")
    doc = window.document.pattern.to_dict()
    doc["accesses"][0]["name"] = "load in[row][tx] " + "with a very long explanation " * 3
    from sectorviz.model import pattern_from_dict
    window.document.set_pattern(pattern_from_dict(doc, window.document.pattern.base_dir), "name")
    ticks = [t for _, t in window.overview.plot.getAxis("left")._tickLevels[0]]
    full = f"0: {doc['accesses'][0]['name']}"
    assert "…" in ticks[0] and ticks[0].startswith("0: load") and ticks[0].endswith(full[-3:])
    assert window.overview.row_tip(0).startswith(full)
