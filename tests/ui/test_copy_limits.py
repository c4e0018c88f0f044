"""Issue 22, item 2: Edit > Copy Diagram of a diagram too large to draw is one line in the
status bar, nothing drawn and no internal error."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QLabel

from sectorviz.model import load_pattern
from sectorviz.ui.main_window import MainWindow


def test_copying_a_huge_diagram_is_one_status_line(tmp_path, qtbot):
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": {"bytes": 16384}, "length": 64}},
           "accesses": [{"name": "l", "op": "load", "array": "a", "index": "threadIdx.x"}]}
    path = tmp_path / "wide.sectorviz.json"
    path.write_text(json.dumps(doc))
    window = MainWindow(load_pattern(path), path, restore=False)
    qtbot.addWidget(window)
    window._copy_diagram()
    text = window.findChild(QLabel, "statusMessage").text()
    assert text.startswith("diagram: it would be ") and "internal error" not in text
