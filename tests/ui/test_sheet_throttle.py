"""While a grid analysis streams partial results the sheet redraws at most every
PARTIAL_REFRESH_MS and not at all while hidden; edits, selections and the finished analysis
redraw it at once (its HTML layout is the costly part of a partial update)."""

from dataclasses import replace

from PySide6.QtWidgets import QDockWidget, QTextBrowser

from sectorviz.ui import sheet_view


def test_partial_results_redraw_the_sheet_sparingly(open_window, qtbot, monkeypatch):
    window = open_window("vector-add")
    doc = window.document
    browser = window.findChild(QTextBrowser, "sheet")
    qtbot.wait(200)  # let the opening's own queued redraws land before counting
    drawn = []  # the sheet's redraws (new HTML, or its changed cells rewritten)
    real = window.sheet._redraw
    monkeypatch.setattr(window.sheet, "_redraw", lambda: (drawn.append(1), real()))
    full = doc.analysis

    def stream(done: int) -> None:
        doc.analysis = None
        doc._on_partial(doc.pattern, replace(full, warps_done=done))

    monkeypatch.setattr(sheet_view, "PARTIAL_REFRESH_MS", 10**6)  # never within the test
    for done in (100, 200, 300):
        stream(done)
        qtbot.wait(20)
    assert drawn == [] and "so far" not in browser.toPlainText()
    doc._on_analysis(doc.pattern, full, "")  # the finished analysis: at once
    qtbot.waitUntil(lambda: len(drawn) == 1)
    window.set_warp(5)  # a new selection: at once, too
    qtbot.waitUntil(lambda: len(drawn) == 2)
    assert "warp 5" in browser.toPlainText()

    monkeypatch.setattr(sheet_view, "PARTIAL_REFRESH_MS", 0)
    stream(400)
    qtbot.waitUntil(lambda: len(drawn) == 3)
    assert "so far (400 of 32,768 warps)" in browser.toPlainText()

    dock = window.findChild(QDockWidget, "sheetDock")
    dock.hide()
    stream(500)
    qtbot.wait(50)
    assert len(drawn) == 3  # hidden: nothing drawn
    dock.show()
    qtbot.waitUntil(lambda: len(drawn) == 4)
    assert "so far (500 of 32,768 warps)" in browser.toPlainText()
    doc._on_analysis(doc.pattern, full, "")
