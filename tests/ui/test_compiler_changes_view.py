"""The app says what the compiler changed: the runner computes the changes off the UI thread
with the analysis, and the accounting sheet ends with them (model.compiler_changes)."""

import json
import shutil

import pytest
from oracles import GEMM

from sectorviz.model import load_pattern


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_the_sheet_of_a_compiled_kernel_lists_what_the_compiler_changed(
        tmp_path, qtbot, monkeypatch):
    """The textbook GEMM (n = 64, 128 warps): c[i * n + j] is loaded once a warp before the
    loop, 128 requests where the source as written has 8,192."""
    from sectorviz.ui.main_window import MainWindow

    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
    (tmp_path / "gemm.cu").write_text(GEMM)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 64},
           "launch": {"grid": [2, 64], "block": [32, 1]},
           "arrays": {x: {"dtype": "float32", "length": "n*n"} for x in "abc"},
           "kernel": {"source": "gemm.cu", "function": "gemm", "engine": "compiled"}}
    path = tmp_path / "gemm.sectorviz.json"
    path.write_text(json.dumps(doc))
    window = MainWindow(load_pattern(path), path)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.document.analysis is not None, timeout=60_000)
    qtbot.waitUntil(lambda: window.sheet.sheet is not None
                    and window.sheet.sheet.steps[-1].title.startswith("What the compiler"),
                    timeout=10_000)
    (row,) = window.sheet.sheet.steps[-1].rows
    assert (row.label, row.value) == ("line 7: c[i * n + j]", "hoisted")
    assert "8,064 loads fewer than as written (128 instead of 8,192" in row.note
    window.close()
