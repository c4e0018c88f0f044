"""Sweeps, batches and checks run where no Qt is installed: their modules import none."""

import subprocess
import sys
from pathlib import Path


def test_sweeps_batches_and_checks_import_no_qt():
    code = ("import sys; import sectorviz.command.sweep, sectorviz.command.batch, "
            "sectorviz.command.check; print([m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'shiboken6')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=True).stdout
    assert out.strip() == "[]"
