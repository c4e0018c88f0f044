"""A long grid analysis streams: partial results fill the overview and the sheet ("so far"),
editing or Cancel stops it, and a failing run leaves one line and the user's work."""

import json
import threading

import pytest

from sectorviz.model import Cancelled, pattern_from_dict
from sectorviz.paths import examples_dir
from sectorviz.ui import worker
from sectorviz.ui.main_window import MainWindow

GATHER = examples_dir() / "gather-distinct.sectorviz.json"
WARPS = 2**17  # 2^22 threads: 16 chunks of 2^13 warps on the lane path


def gather(n: int):
    doc = json.loads(GATHER.read_text())
    doc["params"]["n"] = n
    return pattern_from_dict(doc, GATHER.parent)


@pytest.fixture
def held(monkeypatch):
    """Analyses of the long gather stop after their second chunk until `release` is set;
    `stopped` lists the patterns whose runs were cancelled. Partial results go out after
    every chunk."""
    long = gather(2**22)
    release, stopped = threading.Event(), []
    real = worker.analyze

    def analyze(pattern, per_warp, progress, partial):
        def hold(done, total):
            try:
                progress(done, total)
            except Cancelled:
                stopped.append(pattern)
                raise
            if pattern == long and done == 2 * 2**13:
                release.wait(10)
        return real(pattern, per_warp, hold, partial=partial)

    monkeypatch.setattr(worker, "analyze", analyze)
    monkeypatch.setattr(worker, "PARTIAL_INTERVAL_S", 0)
    return long, release, stopped


@pytest.fixture
def window(qtbot, monkeypatch, held):
    from PySide6.QtWidgets import QMessageBox
    made = MainWindow(held[0], None)
    made.show()
    qtbot.waitExposed(made)
    yield made
    held[1].set()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    made.close()
    made.deleteLater()


def labels(window) -> list[str]:
    return [r.label for s in window.sheet.sheet.steps for r in s.rows]


def test_a_long_run_shows_partial_results_and_editing_cancels_it(window, held, qtbot):
    long, release, stopped = held
    doc = window.document
    qtbot.waitUntil(lambda: doc.partial is not None)
    assert doc.analysis is None and doc.analysis_running
    assert doc.partial.warps_done == 2**13 and doc.partial.per_warp_sectors.shape == (3, 2**13)
    assert doc.partial.totals.requests == 3 * 2**13
    assert "total, grid so far (8,192 of 131,072 warps)" in labels(window)
    assert window.overview.status.text() == "8,192 of 131,072 warps, 0 atypical, 64 warps " \
                                            "per column so far"
    qtbot.waitUntil(lambda: window.progress.isVisible() and window.cancel.isVisible())
    assert window.progress.value() == 2**13  # sent with the partial result, just before it

    short = gather(2**20)
    with qtbot.waitSignal(doc.changed, check_params_cb=lambda f: doc.analysis is not None):
        doc.set_pattern(short, "n")
        release.set()
    assert stopped == [long]
    assert doc.pattern == short and doc.partial is None
    assert doc.analysis.totals.requests == 3 * 2**15 and doc.analysis.warps_done is None
    assert "total, grid" in labels(window) and not any("so far" in t for t in labels(window))
    assert not window.progress.isVisible() and not window.cancel.isVisible()


def test_cancel_stops_the_run_and_keeps_the_work(window, held, qtbot):
    long, release, stopped = held
    doc = window.document
    qtbot.waitUntil(lambda: doc.partial is not None and window.cancel.isVisible())
    window.cancel.click()
    assert doc.pattern == long and doc.undo_stack.count() == 0
    assert doc.analysis is None and doc.partial is None and not doc.analysis_running
    assert window.message.text() == "grid analysis: cancelled; edit the pattern to run it again"
    assert not window.progress.isVisible() and not window.cancel.isVisible()
    release.set()
    qtbot.waitUntil(lambda: stopped == [long])
    assert doc.analysis is None and doc.partial is None  # nothing more arrives for it


def test_an_unexpected_failure_is_one_line(qtbot, monkeypatch):
    def broken(pattern, per_warp, progress, partial):
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(worker, "analyze", broken)
    runner = worker.AnalysisRunner()
    with qtbot.waitSignal(runner.finished) as done:
        runner.request(gather(2**10))
    runner.shutdown()
    assert done.args[1:] == [None, "internal error: ZeroDivisionError; please report"]


def test_a_large_overview_is_binned_off_the_ui_thread(open_window, qtbot, monkeypatch):
    from sectorviz.ui import overview
    monkeypatch.setattr(overview, "SYNC_CELLS", 0)
    window = open_window("vector-add")
    qtbot.waitUntil(lambda: window.overview.status.text() == "32,768 warps, 0 atypical, "
                                                            "16 warps per column")
    assert window.overview.image.image.shape == (4, 2048, 4)  # 3 instructions + the atypical row


def test_the_overview_says_when_a_binned_picture_is_drawn(open_window, qtbot, monkeypatch):
    from sectorviz.ui import overview
    monkeypatch.setattr(overview, "SYNC_CELLS", 0)
    window = open_window("vector-add")
    qtbot.waitUntil(lambda: not window.document.analysis_running)
    if window.overview.drawing:  # binning off the UI thread: wait for the picture
        with qtbot.waitSignal(window.overview.drawn):
            pass
    assert not window.overview.drawing  # what a screenshot waits for
    assert window.overview.image.image.shape == (4, 2048, 4)
