"""At 1280 x 720 the sheet, overview and histogram are tabs: their labels are short and
whole (not elided), each tab's tooltip the dock's full name, the View menu the full names."""

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QTabBar

from sectorviz.ui.main_window import DOCK_NAMES


def test_dock_tabs_whole_at_1280x720(open_window, qtbot):
    window = open_window()
    window.fit_to_screen(QRect(0, 0, 1280, 720))
    qtbot.wait(50)
    bars = [b for b in window.findChildren(QTabBar) if b.parent() is window and b.isVisible()]
    tabs = {b.tabText(i): (b, i) for b in bars for i in range(b.count())}
    assert set(DOCK_NAMES) <= set(tabs)
    for short, full in DOCK_NAMES.items():
        bar, i = tabs[short]
        assert bar.tabToolTip(i) == full
        need = bar.fontMetrics().horizontalAdvance(short)
        assert bar.tabRect(i).width() > need  # whole, not elided
    toggles = [d.toggleViewAction().text() for d in (window.sheet_dock, window.overview_dock,
                                                     window.histogram_dock)]
    assert toggles == list(DOCK_NAMES.values())
