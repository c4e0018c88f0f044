"""The window prints the scene: its grid's hit cells are the SVG's and the model's, its
overview colours come from the same waste bins as the export, it zooms (below the fit too),
and on a 1280 x 720 projector it shows all 32 lanes."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtWidgets import QWidget

from sectorviz.export.formats import diagram_svg
from sectorviz.model import load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.scene.palette import LIGHT, mix

SELECTIONS = [("struct12-crossing", 0, 0, 0), ("partial-warp", 31, 1, 0),
              ("gather-distinct", 5, 1, 0), ("row-sum-loop", 3, 0, 7),
              ("transpose-naive", 7, 1, 0), ("float4-load", 0, 0, 0)]


def near(colour: QColor, name: str, tolerance: int = 12) -> bool:
    want = QColor(name)
    return max(abs(colour.red() - want.red()), abs(colour.green() - want.green()),
               abs(colour.blue() - want.blue())) <= tolerance


def svg_hits(svg: str) -> list[tuple[int, int]]:
    root = ET.fromstring(svg.encode())
    return sorted((int(e.get("data-lane")), int(e.get("data-sector"))) for e in root.iter()
                  if "hit" in e.get("class", "").split())


def test_screen_equals_export(open_window):
    window = open_window("struct12-crossing")
    for name, warp, k, run in SELECTIONS:
        path = examples_dir() / f"{name}.sectorviz.json"
        assert window.open_path(path)
        window.document.select(warp=warp, instruction=k, run=run)
        drawn = window.grid_view.item.hits()
        svg = diagram_svg(load_pattern(path),
                          DiagramSpec(warp=warp, instruction=k, execution=run))
        assert drawn == svg_hits(svg) == sorted(window.grid_layout.hits), name
        assert drawn


def overview_colour(window, instruction: int) -> QColor:
    """The overview's colour a fifth of the way along the warps (away from the cursor)."""
    plot = window.overview.plot
    vb = plot.getPlotItem().getViewBox()
    x = 0.2 * window.document.kernel.warps
    at = plot.mapFromScene(vb.mapViewToScene(QPointF(x, instruction + 0.5)))
    return plot.viewport().grab().toImage().pixelColor(at)


@pytest.mark.parametrize("name, waste", [("float4-load", 0), ("vector-add", 0),
                                         ("stride-32B", 4)])
def test_overview_colours_waste_not_count(open_window, name, waste):
    """A float4 load (16 sectors, ideal 16) is ideal; a stride of 32 B (32 sectors, ideal 4)
    is the top class; in the window and in the exported overview."""
    window = open_window(name)
    colour = window.grid_view.item.theme.diagram.waste[waste]
    assert overview_colour(window, 0) == QColor(colour)
    svg = diagram_svg(window.document.pattern, DiagramSpec(kind="overview"))
    root = ET.fromstring(svg.encode())
    fills = {e.get("fill") for e in root.iter() if e.get("class") == "bin"
             and e.get("data-instruction") == "0"}
    assert fills == {LIGHT.waste[waste]}


def test_zoom_keys_and_wheel(open_window, qtbot):
    window = open_window("float4-load")
    view = window.grid_view
    fitted = view.transform().m11()
    window.findChild(type(window.dark_action), "zoomIn").trigger()
    assert view.transform().m11() == pytest.approx(fitted * 1.25)
    wheel = QWheelEvent(QPointF(50, 50), view.mapToGlobal(QPointF(50, 50)), QPoint(0, 0),
                        QPoint(0, 120), Qt.NoButton, Qt.ControlModifier, Qt.NoScrollPhase,
                        False)
    view.wheelEvent(wheel)
    assert view.transform().m11() == pytest.approx(fitted * 1.25 ** 2)
    window.findChild(type(window.dark_action), "zoomOut").trigger()
    window.findChild(type(window.dark_action), "zoomFit").trigger()
    assert view.transform().m11() == pytest.approx(fitted)


def test_a_zoomed_4_byte_hit_is_wide_and_its_waste_shaded(open_window):
    window = open_window("stride-32B")
    view, item = window.grid_view, window.grid_view.item
    view.zoom_by(10)
    rect = item.cell_rect(2, 2)  # lane 2's sector: no 128-byte line drawn over its left edge
    view.centerOn(rect.center())
    scale = view.transform().m11()
    used_px = (rect.width() - 1) * 4 / 32 * scale
    assert used_px >= 6  # bytes [0, 4) of a 32-byte sector: readable, not a sliver
    image = view.viewport().grab().toImage()

    def at(byte: float) -> QColor:
        x = rect.left() + 0.5 + (rect.width() - 1) * byte / 32
        return image.pixelColor(view.mapFromScene(QPointF(x, rect.center().y())))

    d = item.theme.diagram
    assert near(at(2), d.plain)
    assert near(at(20), d.wasted)  # fetched, but no lane uses it
    assert not near(at(20), d.cell) and not near(at(20), mix(d.plain, d.background, d.tint))


def test_model_change_updates_the_view(open_window):
    window = open_window("stride-32B")
    assert len(window.grid_view.item.columns()) == 32
    doc = window.document.pattern.to_dict()
    doc["params"]["stride"] = 1
    window.document.set_pattern(pattern_from_dict(doc, window.document.pattern.base_dir),
                                "stride")
    assert len(window.grid_view.item.columns()) == 4
    assert window.grid_view.item.hits() == sorted(window.grid_layout.hits)


def lane_shown(window, lane: int, j: int) -> QColor | None:
    """The colour at the middle of lane `lane`'s cell in sector column j where the grid's
    viewport shows it (None when off the pane)."""
    view = window.grid_view
    at = view.mapFromScene(view.item.cell_rect(lane, j).center())
    if not view.viewport().rect().contains(at):
        return None
    return view.viewport().grab().toImage().pixelColor(at)


@pytest.mark.parametrize("name, k", [("transpose-naive", 1), ("matmul-tiled-cuda", 0),
                                     ("row-sum-loop", 0)])
def test_a_1280_by_720_projector_shows_all_32_lanes(open_window, qtbot, name, k):
    """The window fills the projector; the overview and histogram step aside (tabs beside
    the sheet) so the grid shows the current instruction's 32 lanes without scrolling: each
    lane's hit cell is on screen, drawn in its fetched colours."""
    window = open_window(name)
    window.set_instruction(k)
    screen = QRect(0, 0, 1280, 720)
    window.fit_to_screen(screen)
    qtbot.wait(10)
    assert screen.contains(window.frameGeometry())
    assert window.width() >= 1200 and window.height() >= 650
    for name_ in ("gridView", "sheet"):
        widget = window.findChild(QWidget, name_)
        box = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
        assert widget.isVisible() and widget.width() > 150 and widget.height() > 80, name_
        assert window.rect().contains(box), name_
    assert window.tabifiedDockWidgets(window.sheet_dock) == [window.overview_dock,
                                                             window.histogram_dock]
    layout, d = window.grid_layout, window.grid_view.item.theme.diagram
    for lane in range(32):
        j = int(np.flatnonzero(layout.cell_hi[lane] > layout.cell_lo[lane])[0])
        colour = lane_shown(window, lane, j)
        assert colour is not None, f"lane {lane} is off the pane"
        assert not any(near(colour, c) for c in (d.background, d.cell, d.inactive)), lane
    form = window.editor.form.scroll
    qtbot.waitUntil(lambda: form.viewport().width() >= form.widget().minimumSizeHint().width())
    assert form.horizontalScrollBar().maximum() == 0  # the form never scrolls sideways


def test_fit_fits_the_warp_and_zoom_goes_below_it(open_window, qtbot):
    window = open_window("transpose-naive")
    window.fit_to_screen(QRect(0, 0, 1920, 1080))
    qtbot.wait(10)
    view = window.grid_view
    warp = view.mapFromScene(view.warp_rect()).boundingRect()
    assert view.viewport().rect().adjusted(-3, -3, 3, 3).contains(warp)  # rounding
    fitted = view.transform().m11()
    window.findChild(type(window.dark_action), "zoomOut").trigger()
    assert view.transform().m11() == pytest.approx(fitted / 1.25)
    window.findChild(type(window.dark_action), "zoomFit").trigger()
    assert view.transform().m11() == pytest.approx(fitted)
    assert not window.overview_dock.isFloating() and window.overview.isVisible()
    assert window.dockWidgetArea(window.overview_dock) == Qt.BottomDockWidgetArea


def test_next_worst_warp_cycles_through_the_worst(open_window, wait_analysis):
    """Odd warps stride 32 B (32 sectors), even warps 4 B (4 sectors): Ctrl+J visits warps
    1 and 3, in launch order, wrapping around."""
    window = open_window("stride-32B")
    window.document.set_pattern(pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "odd warps stride",
        "launch": {"grid": [1], "block": [128]},
        "arrays": {"x": {"dtype": "float32", "length": 1024}},
        "accesses": [{"name": "load x", "op": "load", "array": "x",
                      "index": "threadIdx.x * (1 + 7 * ((threadIdx.x / 32) % 2))"}]}, None),
        "pattern")
    wait_analysis(window)
    seen = []
    for _ in range(3):
        window.findChild(type(window.dark_action), "nextWorstWarp").trigger()
        seen.append(window.document.selection.warp)
    assert seen == [1, 3, 1]
    assert window.message.text() == "warp 1: the most sectors per request for load x"


def test_panes_come_back_after_the_window_shrinks(open_window, qtbot):
    """Shrunk to 800 x 500 the grid still shows (it scrolls); grown again, the Pattern pane
    is wide enough for its form, not left at its squeezed width."""
    window = open_window("transpose-naive")
    window.fit_to_screen(QRect(0, 0, 1920, 1080))
    qtbot.wait(20)
    wide = window.editor_dock.width()
    window.resize(800, 500)
    qtbot.wait(20)
    assert window.grid_view.isVisible() and window.grid_view.viewport().height() > 40
    window.resize(1600, 980)
    qtbot.wait(50)
    form = window.editor.form.scroll
    assert window.editor_dock.width() >= min(wide, form.widget().minimumSizeHint().width())
    assert form.horizontalScrollBar().maximum() == 0


@pytest.mark.parametrize("name, k", [("vector-add", 0), ("transpose-naive", 1),
                                     ("shared-tile-column", 2)])
def test_grid_text_keeps_the_window_font_size_where_a_row_allows(open_window, qtbot, name, k):
    """At 1280 x 720 the grid's small text (lane numbers, addresses, bank numbers) is drawn at
    the window's font size (9 pt), thinned to every 2nd or 4th lane or column where it no
    longer fits each one; never at the export's size shrunk with the fit."""
    from PySide6.QtGui import QFontInfo

    from sectorviz.scene.diagrams import MAX_TEXT_SCALE
    from sectorviz.scene.shapes import Text
    window = open_window(name)
    window.set_instruction(k)
    window.fit_to_screen(QRect(0, 0, 1280, 720))
    qtbot.wait(20)
    view = window.grid_view
    scale = view.transform().m11()
    font_px = QFontInfo(window.font()).pixelSize()
    small = view.item.theme.diagram.small_size
    sizes = [s.size for s in view.item.scene_.shapes
             if isinstance(s, Text) and s.css in ("lane", "lane-label", "address", "bank-label")]
    drawn = min(sizes) * scale
    assert drawn >= min(font_px, small * MAX_TEXT_SCALE * scale) - 0.5
    assert drawn > view.item.theme.diagram.small_size * scale  # enlarged, not the export's
