"""File > Compare With... and Duplicate as Variant: B beside A, stepping with A, and the
comparison sheet from scene.compare."""

import json

from PySide6.QtCore import QMimeData, QPoint, QPointF, QRect, Qt, QUrl
from PySide6.QtGui import QAction, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from sectorviz.model import load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir
from sectorviz.ui.compare_window import B_MIN_WIDTH


def example(name: str):
    return examples_dir() / f"{name}.sectorviz.json"


def wait_both(qtbot, window, compare):
    qtbot.waitUntil(lambda: window.document.analysis is not None
                    and compare.b.analysis is not None)
    qtbot.waitUntil(lambda: "→" in compare.status.text())


def test_compare_with_steps_together_and_shows_the_ratios(open_window, qtbot):
    window = open_window("transpose-naive")
    compare = window.compare_with(example("transpose-tiled"))
    qtbot.addWidget(compare)
    wait_both(qtbot, window, compare)
    assert compare.status.text() == ("sector demand 36 MiB → 8 MiB, 4.5x less; useful "
                                     "22.2% → 100%; shared wavefronts — → 65,536, "
                                     "conflict-free")
    sheet = compare.sheet.toPlainText()
    assert "36 → 8, 4.5x less" in sheet and "32 → 4 sectors, 8x less" in sheet
    assert "— → 2, conflict-free" in sheet and "B: load tile[tx][ty] (shared)" in sheet
    window.set_warp(33)
    window.set_instruction(1)
    assert (compare.b.selection.warp, compare.b.selection.instruction) == (33, 1)
    assert compare.grid_view.layout is not None and len(compare.grid_view.layout.sectors) == 4
    qtbot.waitUntil(lambda: "sectors per warp (warp 33)" in compare.sheet.toPlainText())


def test_duplicate_as_variant_compares_an_edit_live(open_window, qtbot, monkeypatch):
    window = open_window("vector-add")
    compare = window.duplicate_as_variant()
    qtbot.addWidget(compare)
    wait_both(qtbot, window, compare)
    assert compare.status.text().startswith("sector demand 12 MiB → 12 MiB, same")
    doc = json.loads(compare.b.pattern.source)
    doc["accesses"][0]["index"] = "(2 * i) % n"
    compare.b.set_pattern(pattern_from_dict(doc, compare.b.pattern.base_dir), "stride 2")
    qtbot.waitUntil(lambda: "12 MiB → 16 MiB, 1.33x more" in compare.status.text())
    assert compare.b.modified and not window.document.modified
    assert compare.isWindowModified() and "(unsaved variant)" in compare.windowTitle()
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: asked.append(a[2]) or QMessageBox.Discard)
    assert compare.close() and asked == ["Save the changes to Vector add (unsaved variant) "
                                         "first?"]


def test_a_broken_file_opens_nothing(open_window, monkeypatch, tmp_path):
    window = open_window("vector-add")
    bad = tmp_path / "bad.sectorviz.json"
    bad.write_text("{")
    shown = []
    monkeypatch.setattr(window, "show_error", lambda text: shown.append(text))
    assert window.compare_with(bad) is None and window.compare_windows == []
    assert str(bad) in shown[0]


def test_a_file_dropped_with_shift_opens_beside(open_window, qtbot):
    window = open_window("gather-distinct")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(example("vector-add")))])
    window.dropEvent(QDropEvent(QPointF(5, 5), Qt.CopyAction, mime, Qt.LeftButton,
                                Qt.ShiftModifier))
    [compare] = window.compare_windows
    qtbot.addWidget(compare)
    wait_both(qtbot, window, compare)
    assert window.document.pattern.name == "Gather, distinct sectors"
    assert compare.status.text().startswith("sector demand 40 MiB → 12 MiB, 3.33x less")


def edited_variant(window, qtbot):
    """A variant of vector-add whose first access reads every other element."""
    compare = window.duplicate_as_variant()
    qtbot.addWidget(compare)
    doc = json.loads(compare.b.pattern.source)
    doc["accesses"][0]["index"] = "(2 * i) % n"
    compare.b.set_pattern(pattern_from_dict(doc, compare.b.pattern.base_dir), "stride 2")
    return compare


def test_save_variant_as_writes_the_variant_atomically(open_window, qtbot, monkeypatch,
                                                       tmp_path):
    window = open_window("vector-add")
    compare = edited_variant(window, qtbot)
    offered = []
    out = tmp_path / "stride2.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: offered.append(a[2]) or (str(out), ""))
    compare.findChild(QAction, "saveVariantAs").trigger()
    assert offered == [str(examples_dir() / "Vector add variant.sectorviz.json")]
    assert load_pattern(out) == compare.b.pattern and compare.b.path == out
    assert not compare.b.modified and not compare.isWindowModified()
    assert compare.windowTitle() == "B: stride2.sectorviz.json[*] — compared with A: Vector add"
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left
    assert "saved" in compare.statusBar().currentMessage()
    assert not window.document.modified and window.document.path == example("vector-add")
    closes = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: closes.append(a) or
                        QMessageBox.Cancel)
    assert compare.close() and closes == []  # saved: nothing to ask


def test_a_failed_save_keeps_the_variant_modified(open_window, qtbot, monkeypatch, tmp_path):
    window = open_window("vector-add")
    compare = edited_variant(window, qtbot)
    out = tmp_path / "missing" / "v.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    assert not compare.save_variant_as()
    assert compare.b.modified and compare.b.path is None and not out.parent.exists()
    assert compare.statusBar().currentMessage().startswith(f"{out}: cannot save")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: ("", ""))
    assert not compare.save_variant_as() and compare.b.modified  # cancelled
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)


def test_closing_a_modified_variant_asks(open_window, qtbot, monkeypatch, tmp_path):
    """Cancel keeps the window (and the main window, closing, stays open too); Save saves
    through Save Variant As; Discard closes."""
    window = open_window("vector-add")
    compare = edited_variant(window, qtbot)
    answer = [QMessageBox.Cancel]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: answer[0])
    assert not compare.close() and compare.isVisible()
    assert not window.close() and window.isVisible() and compare.isVisible()
    out = tmp_path / "v.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    answer[0] = QMessageBox.Save
    assert compare.close() and not compare.isVisible()
    assert load_pattern(out) == compare.b.pattern
    again = edited_variant(window, qtbot)
    answer[0] = QMessageBox.Discard
    assert window.close() and not again.isVisible()


def test_b_follows_a_shared_instruction_to_its_match(open_window, qtbot, tmp_path):
    """A's shared instruction selects B's match (counted as the app counts: global, then
    shared), here B without the tile's padding."""
    window = open_window("shared-tile-column")
    doc = json.loads(example("shared-tile-column").read_text())
    doc["accesses"] = [doc["accesses"][0]] + doc["accesses"][3:]  # the padded tile only
    path = tmp_path / "padded.sectorviz.json"
    path.write_text(json.dumps(doc))
    compare = window.compare_with(path)
    qtbot.addWidget(compare)
    wait_both(qtbot, window, compare)
    window.set_instruction(4)  # load padded[tx][ty]
    assert compare.b.selection.instruction == 2
    window.set_instruction(2)  # load tile[tx][ty]: B has no such instruction
    assert compare.b.selection.instruction == 0
    sheet = compare.sheet.toPlainText()
    assert "load tile[tx][ty] (only in A)" in sheet and "32 → —, none left" in sheet


def test_the_compare_window_is_sized_to_the_screen(open_window, qtbot):
    """At 1280 x 720 B fits inside the screen, its headline and sheet on it; at 1920 x 1080
    A and B share the screen side by side, neither covering the other."""
    window = open_window("transpose-naive")
    compare = window.compare_with(example("transpose-tiled"))
    qtbot.addWidget(compare)
    wait_both(qtbot, window, compare)
    small = QRect(0, 0, 1280, 720)
    window.place_comparison(compare, small)
    qtbot.wait(10)
    assert small.contains(compare.frameGeometry())
    for widget in (compare.status, compare.sheet, compare.grid_view):
        box = QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())
        assert small.contains(box) and widget.width() > 150, widget.objectName()
    wide = QRect(0, 0, 1920, 1080)
    window.place_comparison(compare, wide)
    qtbot.wait(10)
    a, b = window.frameGeometry(), compare.frameGeometry()
    assert wide.contains(a) and wide.contains(b) and not a.intersects(b)
    assert a.width() >= 900 and b.width() >= B_MIN_WIDTH


def test_the_before_gets_the_room_it_needs_beside_b():
    """Side by side at 1920 x 1080, A (the "before", usually the wider grid) gets more than
    half the screen, B still its least width; at 1280 x 720 B fills the screen over A."""
    from sectorviz.ui.compare_window import compare_areas
    a, b = compare_areas(QRect(0, 0, 1920, 1050), 600)
    assert a is not None and a.width() > 1920 // 2 and b.width() >= B_MIN_WIDTH
    assert a.right() + 1 == b.left() and b.right() == 1919 and a.height() == 1050
    assert compare_areas(QRect(0, 0, 1280, 690), 600) == (None, QRect(0, 0, 1280, 690))
