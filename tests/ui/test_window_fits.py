"""A kernel of many instructions (a compiled, unrolled tile loop has dozens) keeps the window
within a projector's 1280 x 720: the overview scrolls its rows, the instruction box shrinks
and lists the names whole."""

from PySide6.QtCore import QRect
from PySide6.QtGui import QFontMetrics

from sectorviz.model import pattern_from_dict
from sectorviz.ui.main_window import MainWindow

ROWS = 40


def many_instructions():
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "forty loads",
        "launch": {"grid": [4], "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 64 * 4 * ROWS}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"op": "load", "array": "x", "index": f"i * {ROWS} + {k}",
                      "name": f"a load with a long descriptive name, number {k}"}
                     for k in range(ROWS)]}, ".")


def test_a_kernel_of_many_instructions_fits_a_projector(qtbot, wait_analysis):
    window = MainWindow(many_instructions(), None)
    qtbot.addWidget(window)
    window.fit_to_screen(QRect(0, 0, 1280, 720))
    window.show()
    qtbot.waitExposed(window)
    wait_analysis(window)
    qtbot.waitUntil(lambda: not window.overview.drawing)
    least = window.minimumSizeHint()
    assert least.width() <= 1280 and least.height() <= 720, least
    plot, scroll = window.overview.plot, window.overview.scroll
    row = QFontMetrics(plot.getAxis("left").font()).height()
    assert plot.minimumHeight() >= (ROWS + 1) * row  # every row's name readable ...
    assert scroll.widget() is plot  # ... by scrolling, not by a taller window
    combo = window.stepper.instruction
    assert combo.count() == ROWS
    assert combo.view().minimumWidth() >= combo.view().sizeHintForColumn(0)  # names whole
