"""Grid-wide analysis and one warp's details run in worker processes: the window answers
keys while they count (the grid shows a placeholder until the warp's details come), an edit
or closing the window kills the analysis process, and nothing outlives the app."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from sectorviz.model import one_warp, pattern_from_dict, warp_detail
from sectorviz.paths import examples_dir
from sectorviz.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def lane_path(monkeypatch):
    """Counting on the lane path (the worker takes the app's SECTORVIZ_* settings): the
    closed forms count the tiled matmul in about a second, too soon to press a key during
    it; the lane path takes minutes."""
    monkeypatch.setenv("SECTORVIZ_LANE_PATH", "1")


def long_matmul(n: int = 2048, tile: int = 16):
    """The tiled matmul at n: 2^14 warps of 128 iterations each on the source engine's
    lane path, minutes of counting, and seconds for one warp's details (n / tile = 128 tile
    steps)."""
    path = examples_dir() / "matmul-tiled-cuda.sectorviz.json"
    doc = json.loads(path.read_text())
    doc["params"].update(n=n, tile=tile)
    return pattern_from_dict(doc, path.parent)


def counting_window(qtbot, pattern):
    window = MainWindow(pattern, None, restore=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    assert window.document.analysis_running
    return window


def analysis_process(window):
    return window.document._runner._slot.worker.process


def test_a_key_during_counting_is_answered_with_a_placeholder(qtbot):
    window = counting_window(qtbot, long_matmul())
    doc, grid = window.document, window.grid_view
    ticks = []
    timer = QTimer(interval=10)
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start()
    qtbot.wait(500)
    QTest.keyClick(window, Qt.Key_Right)
    assert doc.selection.warp == 1 and doc.analysis_running
    assert grid.item.view.pending and grid.item.error == "warp 1: working out its lanes…"
    qtbot.wait(500)
    timer.stop()
    assert len(ticks) >= 10 and doc.analysis_running  # the loop ticked while it counted
    qtbot.waitUntil(lambda: not doc.details_pending, timeout=120_000)
    view = grid.item.view
    assert not view.pending and grid.item.error == ""
    # warp 1 is threads 32..63 of block (0, 0): rows 2 and 3 of the 16 x 16 tile, so its
    # first load of A reads A[2][0..15] and A[3][0..15]: 16 floats = 64 bytes per row
    assert view.selection.warp == 1 and view.execution is not None
    assert view.runs == 2048 // 16
    window.close()


def test_arrived_details_are_read_from_the_cache(qtbot, monkeypatch):
    window = counting_window(qtbot, long_matmul(256))
    doc = window.document
    qtbot.waitUntil(lambda: not doc.details_pending, timeout=60_000)
    monkeypatch.setattr(one_warp, "_details", lambda *a: 1 / 0)  # no work on the UI thread
    assert warp_detail(doc.pattern, 0).warp == 0
    assert window.sheet.sheet.steps
    window.close()


def test_an_edit_kills_the_running_analysis_and_counts_the_new_pattern(qtbot, monkeypatch):
    window = counting_window(qtbot, long_matmul())
    doc = window.document
    first = analysis_process(window)
    qtbot.waitUntil(first.is_alive)
    small = long_matmul(64)
    doc.set_pattern(small, "n")
    qtbot.waitUntil(lambda: not first.is_alive(), timeout=5000)
    qtbot.waitUntil(lambda: doc.analysis is not None, timeout=60_000)
    # n = 64, tile 16: 16 blocks of 8 warps, 4 tile steps; each warp's A and B loads touch
    # 2 rows of 64 bytes = 4 sectors per step: 2 x 128 x 4 x 4 = 4,096, plus C's stores
    assert doc.analysis.totals.sectors > 4096
    assert doc.pattern == small
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    window.close()


def test_closing_during_work_kills_it(qtbot):
    window = counting_window(qtbot, long_matmul())
    process = analysis_process(window)
    qtbot.waitUntil(process.is_alive)
    window.close()
    assert not window.document.analysis_running
    qtbot.waitUntil(lambda: not process.is_alive(), timeout=5000)


def test_sigterm_ends_the_app_and_its_workers(tmp_path):
    example = examples_dir() / "matmul-tiled-cuda.sectorviz.json"
    doc = json.loads(example.read_text())
    doc["params"]["n"] = 2048
    (tmp_path / "matmul-tiled.cu").write_text((examples_dir() / "matmul-tiled.cu").read_text())
    path = tmp_path / "big.sectorviz.json"
    path.write_text(json.dumps(doc))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    app = subprocess.Popen([sys.executable, "-m", "sectorviz", str(path)], env=env,
                           stderr=subprocess.PIPE, text=True)
    try:
        workers = _wait_for_children(app.pid, 2)
        app.send_signal(signal.SIGTERM)
        assert app.wait(30) == 128 + signal.SIGTERM
        assert "interrupted" in app.stderr.read()
    finally:
        app.kill()
    for pid in workers:
        _wait_gone(pid)


def _wait_for_children(pid: int, count: int) -> list[int]:
    import time
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [int(stat.parent.name) for stat in Path("/proc").glob("[0-9]*/stat")
                 if _parent_of(stat) == pid and _is_worker(stat.parent)]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"the app started fewer than {count} worker processes")


def _parent_of(stat: Path) -> int | None:
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _is_worker(proc: Path) -> bool:
    try:
        return b"spawn_main" in (proc / "cmdline").read_bytes()
    except OSError:
        return False


def _wait_gone(pid: int) -> None:
    import time
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    state = Path(f"/proc/{pid}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_progress_bar_and_sheet_follow_the_analysis(open_window, qtbot):
    window = open_window("vector-add")
    assert window.document.analysis.totals.sectors > 0
    assert not window.progress.isVisible()
    values = [r.value for s in window.sheet.sheet.steps for r in s.rows]
    assert "12 MiB" in values
