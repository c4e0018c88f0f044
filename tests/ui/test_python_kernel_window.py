"""The app opens a Triton kernel pattern: its Kernel tab shows the .py with a note on each
line that has memory instructions, and the grid analysis arrives (Triton's PTX, compiled in
the background like a CUDA kernel's)."""

import importlib.util

import pytest

from sectorviz.model import load_pattern
from sectorviz.paths import examples_dir


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no Triton")
def test_the_app_opens_the_fused_softmax(tmp_path, qtbot, monkeypatch):
    """The loads are on line 14 and the stores on line 18 (2 ld and 2 st.global.v4.b32 per
    warp, 16,384 warps: 32 MiB); lines 15 and 17 hold the reductions' shared accesses."""
    from sectorviz.ui.main_window import MainWindow

    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
    path = examples_dir() / "triton-softmax.sectorviz.json"
    window = MainWindow(load_pattern(path), path)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.document.analysis is not None
                    or window.document.analysis_error is not None, timeout=120_000)
    assert window.document.analysis_error is None
    assert window.document.analysis.totals.sectors * 32 == 32 * 2**20
    kernel = window.editor.kernel
    assert kernel.view.toPlainText() == (examples_dir() / "triton_softmax.py").read_text()
    qtbot.waitUntil(lambda: bool(kernel.view.notes), timeout=10_000)
    assert {14, 18} <= set(kernel.view.notes)
    window.close()
