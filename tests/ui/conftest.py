"""Headless Qt for the UI tests; settings go to a temporary folder, never the user's."""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"

import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

import sectorviz.ui  # noqa: E402,F401  (pins pyqtgraph to PySide6 before anything imports it)
from sectorviz.model import load_pattern  # noqa: E402
from sectorviz.model.memo import MEMO  # noqa: E402
from sectorviz.paths import examples_dir  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _settings_in_tmp(tmp_path_factory):
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope,
                      str(tmp_path_factory.mktemp("settings")))


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts from an empty cache, as a new app does (its runs are its own)."""
    MEMO.clear()
    yield
    MEMO.clear()


def example(name: str):
    return examples_dir() / f"{name}.sectorviz.json"


@pytest.fixture
def wait_analysis(qtbot):
    """wait_analysis(window): until the grid-wide analysis of its pattern has arrived."""
    return lambda window: _wait_analysis(qtbot, window)


@pytest.fixture
def wait_check(qtbot):
    """wait_check(window): until the edit or file being checked (a kernel pattern's compile
    runs on a thread: Document.check) has been taken or refused."""
    return lambda window: qtbot.waitUntil(lambda: not window.checking,
                                          timeout=60_000)  # nvcc, on a loaded machine


@pytest.fixture
def open_window(qtbot, monkeypatch):
    """open_window(example name) -> a shown MainWindow with its grid analysis done."""
    from sectorviz.ui.main_window import MainWindow

    windows = []

    def make(name: str = "stride-32B"):
        path = example(name)
        window = MainWindow(load_pattern(path), path)
        window.show()
        qtbot.waitExposed(window)
        _wait_analysis(qtbot, window)
        windows.append(window)
        return window

    yield make
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    for window in windows:
        window.close()
        window.deleteLater()


def _wait_analysis(qtbot, window):
    """Until the grid-wide analysis and the selected warp's details have arrived and a shown
    sheet has drawn them."""
    doc = window.document
    qtbot.waitUntil(lambda: (doc.analysis is not None or doc.analysis_error is not None)
                    and not doc.details_pending, timeout=60_000)  # a worker, a loaded machine
    qtbot.waitUntil(lambda: window.sheet.current or not window.sheet.isVisible())
