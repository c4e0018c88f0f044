"""Settings > Work Budget: the limit of every run, kept in the settings; a pattern that
passed the old limit is analyzed again under the new one."""

from conftest import example
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog

from sectorviz.model.budget import DEFAULT_WORK, default_work, set_default_work


def test_raising_the_budget_lets_a_stopped_analysis_finish(open_window, wait_analysis,
                                                           monkeypatch):
    window = open_window("stride-32B")
    try:
        window.set_work_budget(10000)
        assert int(window.store.value("work_budget")) == 10000
        window.open_example(example("gather-distinct"))  # the gather: 2^20 lanes
        wait_analysis(window)
        assert window.document.analysis is None
        assert window.document.analysis_error.startswith(
            "launch: the launch of 1,048,576 threads asks for 1,054,720 units of work")
        monkeypatch.setattr(QInputDialog, "getInt", lambda *a, **k: (300, True))
        window.findChild(QAction, "workBudget").trigger()
        wait_analysis(window)
        assert default_work() == 300 * 10**6 and window.document.analysis_error is None
        assert window.document.analysis.totals.sectors == 40 * 32768
    finally:
        set_default_work(DEFAULT_WORK)
        window.store.remove("work_budget")
