"""Presentation mode: F5 opens it full screen with the answer, the grid and the sheet's lines
about the instruction; arrow keys step, Esc leaves; `--present` and `--compare B` work from
the command line, with --screenshot too."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from sectorviz.command import app as launch
from sectorviz.paths import examples_dir
from sectorviz.ui import app

EX = examples_dir()


def test_f5_presents_and_the_keys_step(open_window, qtbot):
    window = open_window("transpose-naive")
    window.findChild(type(window.dark_action), "present").trigger()
    shown = window.presentation
    qtbot.waitExposed(shown)
    assert shown.isFullScreen()
    headline = shown.findChild(QLabel, "presentHeadline")
    qtbot.waitUntil(lambda: "worst instruction" in headline.text())
    assert "store c[col][row]" in headline.text() and "4.50x the ideal" in headline.text()
    grid = shown.grid_view
    shown.activateWindow()
    qtbot.waitUntil(lambda: grid.hasFocus())  # where the keys go, as on screen
    grid.zoom_by(4.0)  # zoomed in, the picture could scroll: the arrows step all the same
    assert all(bar.maximum() > 0 for bar in (grid.horizontalScrollBar(),
                                             grid.verticalScrollBar()))
    qtbot.keyClick(grid, Qt.Key_Down)
    qtbot.keyClick(grid, Qt.Key_Right)
    qtbot.keyClick(grid, Qt.Key_Right)
    assert (window.document.selection.warp, window.document.selection.instruction) == (2, 1)
    qtbot.keyClick(grid, Qt.Key_End)
    assert window.document.selection.warp == window.document.kernel.warps - 1
    qtbot.keyClick(grid, Qt.Key_Home)
    qtbot.keyClick(grid, Qt.Key_Right)
    qtbot.keyClick(grid, Qt.Key_Right)
    step = shown.findChild(QLabel, "presentStep")
    qtbot.waitUntil(lambda: "lanes 4096 B apart: 32 sectors" in step.text())
    assert shown.grid_view.item.hits() == window.grid_view.item.hits()
    # type for the back of the room: the answer about a tenth of the screen's height in two
    # lines, every other text at least 18 px at 1280 x 720 (present_sizes)
    shown.size_type(720)
    assert shown.headline.font().pixelSize() >= 720 // 26
    for label in (shown.step, shown.grid_pane.caption):
        assert label.font().pixelSize() >= 18
    assert grid.fit_legend and grid.warp_rect() == grid.shown_rect()  # the legend fitted too
    qtbot.keyClick(grid, Qt.Key_Escape)
    qtbot.waitUntil(lambda: window.presentation is None)


def test_present_and_compare_from_the_command_line(tmp_path, qapp, monkeypatch):
    from PySide6.QtWidgets import QMessageBox
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: (seen.append(w), real(w, a))[1])
    naive, tiled = (str(EX / f"transpose-{n}.sectorviz.json") for n in ("naive", "tiled"))
    out = tmp_path / "present.png"
    assert launch.main([naive, "--instruction", "1", "--present", "--screenshot", str(out)]) == 0
    window = seen[-1]
    assert QImage(str(out)).size() == window.presentation.size()
    window.close()
    out = tmp_path / "compare.png"
    assert launch.main([naive, "--compare", tiled, "--screenshot", str(out)]) == 0
    window = seen[-1]
    (compare,) = window.compare_windows
    assert "→" in compare.status.text()
    assert QImage(str(out)).size() == compare.size()
    window.close()


def test_the_room_reads_the_lane_numbers_and_sees_every_sector(open_window, qtbot):
    """At 1280 x 720 the naive transpose's store (32 sectors, the lesson): lane numbers
    drawn at 18 px or more, never on top of each other (every 4th lane where rows are too
    short for each), and all 32 sector columns inside the view."""
    from sectorviz.scene.shapes import Rect, Text
    window = open_window("transpose-naive")
    window.set_instruction(1)
    window.findChild(type(window.dark_action), "present").trigger()
    shown = window.presentation
    qtbot.waitExposed(shown)
    shown.showNormal()  # the screen here is not 1280 x 720: the window is made that size
    shown.resize(1280, 720)
    qtbot.waitUntil(lambda: shown.size().height() == 720)
    qtbot.wait(100)
    view = shown.grid_view
    qtbot.waitUntil(lambda: view.item.text_scale > 1.0)
    scale = view.transform().m11()
    scene = view.item.scene_
    lanes = sorted((t for t in scene.shapes if isinstance(t, Text) and t.css == "lane"),
                   key=lambda t: t.y)
    assert lanes and min(t.size for t in lanes) * scale >= 18 - 0.5
    assert [int(t.text) for t in lanes][:2] in ([0, 2], [0, 4], [0, 8])
    assert all((b.y - a.y) >= a.size for a, b in zip(lanes, lanes[1:]))  # no overlap
    sectors = [s for s in scene.shapes if isinstance(s, Rect) and s.css == "sector"]
    assert len(sectors) == 32
    shown_rect = view.mapToScene(view.viewport().rect()).boundingRect()
    assert all(shown_rect.left() <= s.x and s.x + s.w <= shown_rect.right() + 0.5
               for s in sectors)
    qtbot.keyClick(view, Qt.Key_Escape)
