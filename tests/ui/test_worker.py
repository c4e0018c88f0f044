"""Grid-wide analysis runs off the UI thread; a stale job stops at its next progress call."""

import threading

from sectorviz.model import Cancelled, load_pattern
from sectorviz.paths import examples_dir
from sectorviz.ui import worker
from sectorviz.ui.worker import AnalysisRunner


def test_stale_job_is_cancelled_and_only_the_newest_reports(qtbot, monkeypatch):
    first = load_pattern(examples_dir() / "aligned.sectorviz.json")
    second = load_pattern(examples_dir() / "shifted.sectorviz.json")
    started, gate, cancelled = threading.Event(), threading.Event(), []

    def fake_analyze(pattern, per_warp, progress, partial=None):
        for i in range(3):
            try:
                progress(i, 3)
            except Cancelled:
                cancelled.append(pattern)
                raise
            if pattern is first:
                started.set()
                gate.wait(5)
        return f"analysis of {pattern.name}"

    monkeypatch.setattr(worker, "analyze", fake_analyze)
    runner = AnalysisRunner()
    finished = []
    runner.finished.connect(lambda p, a, e: finished.append((p, a, e)))
    assert runner.request(first) is None
    assert started.wait(5)
    with qtbot.waitSignal(runner.finished):
        assert runner.request(second) is None
        gate.set()
    runner.shutdown()
    assert cancelled == [first]
    assert finished == [(second, "analysis of Shifted words 4 + 4i", "")]
    assert not runner.busy
    assert runner.request(second) == "analysis of Shifted words 4 + 4i"  # cached


def test_progress_bar_and_sheet_follow_the_analysis(open_window, qtbot):
    window = open_window("vector-add")
    assert window.document.analysis.totals.sectors > 0
    assert not window.progress.isVisible()
    values = [r.value for s in window.sheet.sheet.steps for r in s.rows]
    assert "12 MiB" in values
