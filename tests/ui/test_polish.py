"""What a user sees at a glance: the play control's glyph, undo entries in words, form errors
at their field on one line, the Help menu, counts in the singular, the grid's header and
legend, and an overview that never shows another file's picture or cuts its title."""

from conftest import example
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QStyle,
    QTextBrowser,
    QToolButton,
)

from sectorviz import __version__
from sectorviz.model import load_pattern
from sectorviz.scene.shapes import Text
from sectorviz.scene.words import counted
from sectorviz.ui.grid_view import TOP_TRIM
from sectorviz.ui.overview import OverviewView


def same_icon(a, b) -> bool:
    return a.pixmap(16).toImage() == b.pixmap(16).toImage()


def test_the_play_control_shows_pause_while_playing(open_window):
    window = open_window("vector-add")
    play = window.findChild(QToolButton, "playButton")
    style = play.style()
    assert play.text() == "Play" and same_icon(play.icon(), style.standardIcon(QStyle.SP_MediaPlay))
    play.click()
    assert play.isChecked() and play.text() == "Pause"
    assert same_icon(play.icon(), style.standardIcon(QStyle.SP_MediaPause))
    assert not play.icon().isNull()
    play.click()
    assert play.text() == "Play" and same_icon(play.icon(), style.standardIcon(QStyle.SP_MediaPlay))


def undo_text(window) -> str:
    action = next(a for a in window.actions() if a.text().startswith("&Undo"))
    return action.text()


def test_undo_entries_name_the_change_in_words(open_window):
    window = open_window("stride-32B")
    spin = window.findChild(QSpinBox, "params.stride")
    spin.setValue(4)
    assert undo_text(window) == "&Undo Change stride to 4"
    spin.setValue(2)  # merged into one step, named by the value the field holds now
    assert undo_text(window) == "&Undo Change stride to 2"
    assert window.document.undo_stack.count() == 1
    window.findChild(QSpinBox, "arrays.x.offset_bytes").setValue(32)
    assert undo_text(window) == "&Undo Change offset of x to 32"
    field = window.findChild(QLineEdit, "accesses[0].guard")
    field.setText("threadIdx.x < 16")
    field.textEdited.emit(field.text())
    assert undo_text(window) == "&Undo Change guard of load x[stride*lane] to threadIdx.x < 16"
    window.document.undo_stack.undo()
    redo = next(a for a in window.actions() if a.text().startswith("&Redo"))
    assert redo.text() == "&Redo Change guard of load x[stride*lane] to threadIdx.x < 16"


def test_help_has_a_guide_and_about_names_the_version(open_window, monkeypatch):
    window = open_window("stride-32B")
    window.findChild(QAction, "guide").trigger()
    guide = window.findChild(QDialog, "guide")
    text = guide.findChild(QTextBrowser, "guideText").toPlainText()
    for words in ("What the picture means", "How to read the sheet", "wasted", "ideal sectors",
                  "Keyboard shortcuts", "Next Worst Warp", "Ctrl+J"):
        assert words in text, words
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    window.findChild(QAction, "about").trigger()
    assert f"sectorviz {__version__}" in shown[0]
    guide.close()


def test_counts_agree_with_their_number(open_window):
    assert counted(1, "warp") == "1 warp" and counted(32768, "warp") == "32,768 warps"
    assert counted(2, "distinct address", "distinct addresses") == "2 distinct addresses"
    window = open_window("float4-load")  # one warp, one request
    status = window.findChild(QLabel, "overviewStatus").text()
    assert status.startswith("1 warp,")
    sheet = window.sheet.sheet
    assert "32 threads in 1 warp," in sheet.title
    rows = [r for s in sheet.steps for r in s.rows]
    assert any("in 1 request;" in r.note for r in rows)
    assert not any("1 requests" in r.note or "1 warps" in r.value for r in rows)


def test_grid_header_names_the_array_and_the_legend_is_one_line(open_window):
    """The caption is the pane's line in the window's font (never shrunk with the grid),
    the scene under it starts with the column header: no empty band, no second title."""
    window = open_window("vector-add")
    window.resize(1400, 900)
    caption = window.findChild(QLabel, "gridCaption")
    assert caption.isVisible()
    assert "<b>Vector add: warp 0, load a[i] (array a)</b>" in caption.text()
    assert "32 of 32 lanes active" in caption.text()
    texts = [s for s in window.grid_view.item.scene_.shapes if isinstance(s, Text)]
    assert not any("caption" in s.css for s in texts)
    legend = [s for s in texts if s.css == "legend"]
    assert len(legend) >= 3 and len({s.y for s in legend}) == 1
    shown = window.grid_view.shown_rect()
    top = min(s.y - s.size for s in texts if s.css == "address")
    assert shown.top() == TOP_TRIM and 0 < top - shown.top() < 12


def test_the_overview_never_shows_the_last_files_picture(open_window):
    window = open_window("transpose-naive")
    overview, doc = window.overview, window.document
    assert overview.image.image is not None
    other = load_pattern(example("vector-add"))
    doc.reset(other, None)  # the new file's analysis has just started
    status = window.findChild(QLabel, "overviewStatus")
    assert doc.analysis_running and status.text() == "analysing…"
    assert overview.image.image is None
    assert overview.plot.viewRange()[0] == [0, doc.kernel.warps]
    ticks = [t for _, t in overview.plot.getAxis("left")._tickLevels[0]]
    assert ticks == ["0: load a[i]", "1: load b[i]", "2: store c[i]", "atypical warps"]


def test_an_edit_keeps_the_picture_until_the_new_one(open_window, wait_analysis):
    window = open_window("vector-add")
    overview, doc = window.overview, window.document
    window.findChild(QSpinBox, "params.threads").setValue(128)  # same warps, same rows
    assert doc.analysis_running  # the edit's analysis has just started
    assert window.findChild(QLabel, "overviewStatus").text() == "updating…"
    assert overview.image.image is not None
    wait_analysis(window)
    assert overview.image.image is not None


def test_the_overview_title_is_never_cut_by_its_legend(open_window, qtbot):
    window = open_window("transpose-naive")
    overview = OverviewView(window.document)  # a pane of its own, sized at will
    qtbot.addWidget(overview)
    overview.show()
    status = overview.findChild(QLabel, "overviewStatus")
    for width, below in ((1200, False), (420, True), (1200, False)):
        overview.resize(width, 200)
        overview.layout().activate()
        assert overview.legend_below() == below
        assert status.fontMetrics().horizontalAdvance(status.text()) <= status.width()
        assert not status.geometry().intersects(overview.legend.geometry())


def test_one_undo_step_per_committed_edit(open_window, qtbot):
    """Typing 8 -> 1 and Enter is one step; then each arrow step is one more: undo goes back
    one step at a time (3, then 2, then 1, then the original)."""
    window = open_window("stride-32B")
    spin = window.findChild(QSpinBox, "params.stride")
    start = spin.value()
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "1")
    qtbot.keyClick(spin, Qt.Key_Return)
    assert undo_text(window) == "&Undo Change stride to 1"
    qtbot.keyClick(spin, Qt.Key_Up)
    qtbot.keyClick(spin, Qt.Key_Up)
    stack = window.document.undo_stack
    assert spin.value() == 3 and stack.count() == 3
    assert undo_text(window) == "&Undo Change stride to 3"
    stack.undo()
    assert window.document.pattern.to_dict()["params"]["stride"] == 2
    stack.undo()
    stack.undo()
    assert window.document.pattern.to_dict()["params"]["stride"] == start
