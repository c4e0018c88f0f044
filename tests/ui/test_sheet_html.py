"""The sheet as rich text, and patching a shown sheet into another of the same shape: only the
text of the cells and headings that differ is rewritten, each in its own format, and the
document then reads as if the new sheet's HTML had been set."""

from PySide6.QtGui import QFont, QTextCursor, QTextDocument, QTextTable
from PySide6.QtWidgets import QTextBrowser

from sectorviz.scene.sheet import Row, Sheet, Step
from sectorviz.ui.sheet_html import html, patch, sheet_html, sheet_layout
from sectorviz.ui.theme import LIGHT


def sheet(warp: int, sectors: int, note: str = "lanes 4 B apart") -> Sheet:
    return Sheet("copy: 64 threads", (Row("answer", f"{sectors} sectors"),), (
        Step(3, f"Address expansion (warp {warp})",
             (Row("load x[i]", "4 B apart", note, instruction=0),
              Row("store y[i]", "4 B apart", "", code="l1tex__t_sectors.sum", instruction=1))),
        Step(4, "Nothing here", ())))


def shown(layout) -> QTextDocument:
    document = QTextDocument()
    document.setHtml(html(layout))
    return document


def test_a_sheet_of_the_same_shape_is_patched_cell_by_cell(qapp):
    old, new = (sheet_layout(sheet(0, 12), LIGHT, 0), sheet_layout(sheet(7, 40, "  lanes  "
                                                                              "128 B apart"),
                                                                     LIGHT, 0))
    document = shown(old)
    assert patch(document, old, new)
    # HTML shows runs of spaces as one: so does the patched cell
    assert document.toPlainText() == shown(new).toPlainText()
    assert "warp 7" in document.toPlainText() and "40 sectors" in document.toPlainText()
    answer = next(f for f in document.rootFrame().childFrames() if isinstance(f, QTextTable))
    value = QTextCursor(document)
    value.setPosition(answer.cellAt(0, 1).firstCursorPosition().position() + 1)
    assert value.charFormat().fontWeight() > QFont.Normal  # the value stays bold


def test_another_shape_is_left_for_new_html(qapp):
    old = sheet_layout(sheet(0, 12), LIGHT, 0)
    document = shown(old)
    before = document.toPlainText()
    for other in (sheet_layout(sheet(0, 12), LIGHT, 1),  # the accent moves: cell attributes
                  sheet_layout(sheet(0, 12), LIGHT, 0, narrow=True),
                  sheet_layout(sheet(0, 12, ""), LIGHT, 0)):  # a row fewer
        assert not patch(document, old, other)
    assert document.toPlainText() == before
    assert sheet_html(sheet(0, 12), LIGHT, 0) == html(old)


def test_stepping_a_warp_patches_the_shown_sheet(open_window, qtbot, monkeypatch):
    window = open_window("vector-add")
    browser = window.findChild(QTextBrowser, "sheet")
    assert window.sheet.sheet.steps  # drawn now: no redraw of the opening left to come
    assert "warp 0" in browser.toPlainText()
    new_html = []
    real = browser.setHtml
    monkeypatch.setattr(browser, "setHtml", lambda text: (new_html.append(text), real(text)))
    window.set_warp(5)
    qtbot.waitUntil(lambda: "warp 5" in browser.toPlainText())
    assert new_html == []  # the same shape: patched
    layout = sheet_layout(window.sheet.sheet, window.sheet.theme, 0, window.sheet.narrow)
    assert browser.toPlainText() == shown(layout).toPlainText()
