"""A long grid analysis streams: partial results fill the overview and the sheet ("so far"),
editing or Cancel stops it, and a failing run leaves one line and the user's work."""

import json
import os
import signal

import pytest

from sectorviz.model import pattern_from_dict
from sectorviz.paths import examples_dir
from sectorviz.ui import jobs, worker
from sectorviz.ui.main_window import MainWindow

GATHER = examples_dir() / "gather-distinct.sectorviz.json"


def gather(n: int):
    doc = json.loads(GATHER.read_text())
    doc["params"]["n"] = n
    return pattern_from_dict(doc, GATHER.parent)


@pytest.fixture
def window(qtbot, monkeypatch):
    """A window counting the long gather (2^24 threads: 2^19 warps, 64 chunks of 2^13 on the
    lane path, many seconds in its worker process)."""
    from PySide6.QtWidgets import QMessageBox
    made = MainWindow(gather(2**24), None)
    made.show()
    qtbot.waitExposed(made)
    yield made
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    made.close()
    made.deleteLater()


def labels(window) -> list[str]:
    return [r.label for s in window.sheet.sheet.steps for r in s.rows]


def analysis_process(window):
    return window.document._runner._slot.worker.process


def test_a_long_run_shows_partial_results_and_editing_cancels_it(window, qtbot):
    doc = window.document
    first = analysis_process(window)
    qtbot.waitUntil(lambda: doc.partial is not None, timeout=60_000)
    done = doc.partial.warps_done
    assert doc.analysis is None and doc.analysis_running
    assert done % 2**13 == 0 and 0 < done < 2**19  # whole chunks of 2^13 warps
    assert doc.partial.per_warp_sectors.shape == (3, done)
    assert doc.partial.totals.requests == 3 * done  # one request per instruction and warp
    assert f"total, grid so far ({done:,} of 524,288 warps)" in labels(window)
    qtbot.waitUntil(lambda: window.progress.isVisible() and window.cancel.isVisible())
    assert window.progress.value() >= done  # sent with each partial result, just before it

    short = gather(2**20)
    with qtbot.waitSignal(doc.changed, timeout=60_000,
                          check_params_cb=lambda f: doc.analysis is not None):
        doc.set_pattern(short, "n")
    qtbot.waitUntil(lambda: not first.is_alive())  # the long run's process was killed
    assert doc.pattern == short and doc.partial is None
    assert doc.analysis.totals.requests == 3 * 2**15 and doc.analysis.warps_done is None
    assert "total, grid" in labels(window) and not any("so far" in t for t in labels(window))
    assert not window.progress.isVisible() and not window.cancel.isVisible()


def test_cancel_stops_the_run_and_keeps_the_work(window, qtbot):
    doc = window.document
    long, process = doc.pattern, analysis_process(window)
    qtbot.waitUntil(lambda: doc.partial is not None and window.cancel.isVisible(),
                    timeout=60_000)
    window.cancel.click()
    assert doc.pattern == long and doc.undo_stack.count() == 0
    assert doc.analysis is None and doc.partial is None and not doc.analysis_running
    assert window.message.text() == "grid analysis: cancelled; edit the pattern to run it again"
    assert not window.progress.isVisible() and not window.cancel.isVisible()
    qtbot.waitUntil(lambda: not process.is_alive())  # killed: nothing more arrives for it
    assert doc.analysis is None and doc.partial is None


def test_an_unexpected_failure_is_one_line(monkeypatch):
    def broken(pattern, per_warp, progress, partial):
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(jobs, "analyze", broken)
    sent = []
    jobs.run_analysis(jobs.AnalysisJob(1, gather(2**10), jobs.current_setting()), sent.append)
    assert [(m.analysis, m.error) for m in sent] == [
        (None, "internal error: ZeroDivisionError; please report")]


def test_an_analysis_process_killed_from_outside_still_ends(window, qtbot):
    doc = window.document
    qtbot.waitUntil(lambda: analysis_process(window).is_alive())
    os.kill(analysis_process(window).pid, signal.SIGKILL)  # as the kernel's OOM killer does
    qtbot.waitUntil(lambda: not doc.analysis_running)
    assert doc.analysis_error == worker.DIED
    assert window.message.text() == f"grid analysis: {worker.DIED}"


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
