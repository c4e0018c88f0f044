"""A kernel of many instructions (a compiled, unrolled tile loop has dozens) keeps the window
within a projector's 1280 x 720: the overview scrolls its rows, the instruction box shrinks
and lists the names whole. At 1280 x 720 the fitted grid shows every sector column of a wide
instruction and the bank view every bank, with their labels."""

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics

from sectorviz.model import load_pattern, pattern_from_dict
from sectorviz.model.listing import listing_of
from sectorviz.paths import examples_dir
from sectorviz.scene.shapes import Rect, Text, text_width
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


def _shown_whole(view, item, rects) -> bool:
    """Every rect (scene units of `item`) lies inside the view's viewport."""
    port = view.viewport().rect()
    return all(port.contains(view.mapFromScene(item.mapToScene(r)).boundingRect())
               for r in rects)


def _fitted_window(qtbot, wait_analysis, name: str, instruction: str) -> MainWindow:
    path = examples_dir() / f"{name}.sectorviz.json"
    pattern = load_pattern(path)
    window = MainWindow(pattern, path)
    qtbot.addWidget(window)
    window.fit_to_screen(QRect(0, 0, 1280, 720))
    window.show()
    qtbot.waitExposed(window)
    wait_analysis(window)
    window.set_instruction(listing_of(pattern).index(instruction, "all"))
    return window


def test_a_wide_instruction_shows_every_sector_at_1280x720(qtbot, wait_analysis):
    """The naive transpose's store touches 32 sectors: at 1280 x 720 the fit shows all 32
    columns and the lane numbers, without scrolling; zoomed in, Ctrl+0 fits both ways again."""
    window = _fitted_window(qtbot, wait_analysis, "transpose-naive-cuda", "1")
    view, item = window.grid_view, window.grid_view.item
    columns = item.columns()
    assert len(columns) == 32
    lanes = [QRectF(s.x - text_width(s.text, s.size), s.y - s.size, text_width(s.text, s.size),
                    s.size) for s in item.scene_.shapes if isinstance(s, Text) and s.css == "lane"]
    cells = [QRectF(c.x, c.y, c.w, c.h) for c in columns]
    assert _shown_whole(view, item, cells + lanes)
    assert view.horizontalScrollBar().maximum() == 0
    view.zoom_by(4.0)
    view.horizontalScrollBar().setValue(view.horizontalScrollBar().maximum())
    assert not _shown_whole(view, item, cells)
    qtbot.keyClick(view, Qt.Key_0, Qt.ControlModifier)
    assert _shown_whole(view, item, cells + lanes)
    # lane 31's cell in the last column: its wasted bytes drawn, on screen
    centre = view.mapFromScene(item.mapToScene(item.cell_rect(31, 31).center()))
    colour = view.viewport().grab().toImage().pixelColor(centre)
    assert colour.name() != QColor(item.theme.diagram.cell).name()
    assert colour.name() != QColor(item.theme.base).name()


def test_the_bank_view_shows_all_32_banks_at_1280x720(qtbot, wait_analysis):
    window = _fitted_window(qtbot, wait_analysis, "shared-tile-column", "load tile[tx][ty]")
    view, item = window.grid_view, window.grid_view.item
    (banks,) = [s for s in item.scene_.shapes if isinstance(s, Rect) and s.css == "banks"]
    numbers = [QRectF(s.x - text_width(s.text, s.size) / 2, s.y - s.size,
                      text_width(s.text, s.size), s.size) for s in item.scene_.shapes
               if isinstance(s, Text) and s.text in ("0", "30", "31") and s.y < banks.y]
    assert len(numbers) == 3
    assert _shown_whole(view, item, [QRectF(banks.x, banks.y, banks.w, banks.h)] + numbers)
