"""The app's live-edit budget (issue 3): an edit or a warp step redraws the current warp
within one frame (16 ms) on a 2^20-thread pattern. Prints median and worst times and their
ratio to the budget. Runs offscreen: .venv/bin/python benchmarks/bench_ui.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from sectorviz.model import pattern_from_dict  # noqa: E402
from sectorviz.paths import examples_dir  # noqa: E402
from sectorviz.ui.grid_view import GridView  # noqa: E402
from sectorviz.ui.main_window import MainWindow  # noqa: E402

BUDGET_S = 0.016
EXAMPLE = examples_dir() / "vector-add.sectorviz.json"


class FrameClock:
    """When the grid view last finished painting (the frame that shows the new warp)."""

    def __init__(self, view: GridView):
        self.painted = 0.0
        paint = view.paintEvent

        def timed_paint(event):
            paint(event)
            self.painted = time.perf_counter()
        view.paintEvent = timed_paint


def timed(app: QApplication, clock: FrameClock, action) -> tuple[float, float]:
    """(seconds until the grid shows the change, seconds until every pane has caught up)."""
    start = time.perf_counter()
    action()
    app.processEvents()
    return clock.painted - start, time.perf_counter() - start


def report(name: str, times: list[tuple[float, float]]) -> None:
    for label, values in (("grid redrawn", [t[0] for t in times]),
                          ("all panes", [t[1] for t in times])):
        median, worst = statistics.median(values), max(values)
        print(f"{name}, {label}: median {1000 * median:.1f} ms, worst {1000 * worst:.1f} ms "
              f"over {len(values)}; median / 16 ms budget = {median / BUDGET_S:.2f}")


def main() -> None:
    app = QApplication.instance() or QApplication([])
    doc = json.loads(EXAMPLE.read_text())
    assert doc["params"]["n"] == 2**20
    window = MainWindow(pattern_from_dict(doc, EXAMPLE.parent), None, restore=False)
    window.resize(1600, 980)
    window.show()
    for _ in range(20):
        app.processEvents()
    clock = FrameClock(window.findChild(GridView, "gridView"))
    steps = [timed(app, clock, lambda w=w: window.set_warp(w)) for w in range(1, 200, 3)]
    edits = []
    for i in range(40):
        doc["arrays"]["a"]["offset_bytes"] = 4 * (i % 8)
        pattern = pattern_from_dict(doc, EXAMPLE.parent)
        edits.append(timed(app, clock, lambda p=pattern: window.document.set_pattern(p, "offset")))
    report("step one warp", steps)
    report("edit an offset (analysis of 2^20 threads in the background)", edits)
    window.document.shutdown()


if __name__ == "__main__":
    main()
