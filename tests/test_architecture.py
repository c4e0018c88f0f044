"""Layering rules: the model is numpy only and never imports Qt."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_model_never_imports_qt():
    code = ("import sys; import sectorviz.model, sectorviz.model.grid, sectorviz.model.sheet, "
            "sectorviz.model.detail, sectorviz.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'shiboken6')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    assert out.strip() == "[]"


def test_model_sources_mention_no_qt():
    for path in (ROOT / "sectorviz" / "model").rglob("*.py"):
        text = path.read_text()
        assert "PySide6" not in text and "pyqtgraph" not in text, path
