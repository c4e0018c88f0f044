"""The app follows its files on disk: an edited kernel source gives new numbers within a
second, keeping the warp and instruction; the pattern file itself is reloaded, after asking
when there are unsaved edits here."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from sectorviz.model import load_pattern, pattern_from_text
from sectorviz.ui.main_window import MainWindow

KERNEL = """
__global__ void copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[STRIDE * i];
}
"""


def write(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def pattern_file(folder: Path, n: int = 1024) -> Path:
    write(folder / "copy.cu", KERNEL.replace("STRIDE", "1"))
    doc = {"format": "sectorviz.pattern/1", "name": "copy", "params": {"n": n},
           "launch": {"grid": ["n / 256"], "block": [256]},
           "arrays": {"in": {"dtype": "float32", "length": "32 * n"},
                      "out": {"dtype": "float32", "length": "n"}},
           "kernel": {"source": "copy.cu", "function": "copy"}}
    path = folder / "copy.sectorviz.json"
    write(path, json.dumps(doc))
    return path


def variant(path: Path, n: int):
    """The pattern of `path` with params.n = n, as an edit in the app makes it."""
    doc = json.loads(path.read_text())
    doc["params"]["n"] = n
    return pattern_from_text(json.dumps(doc), path.name, path.parent)


def opened(qtbot, path: Path) -> MainWindow:
    window = MainWindow(load_pattern(path), path, restore=False)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.document.analysis is not None)
    return window


def sectors(window: MainWindow) -> int:
    analysis = window.document.analysis
    return -1 if analysis is None else analysis.totals.sectors


def test_an_edited_kernel_gives_new_numbers_keeping_the_selection(qtbot, tmp_path):
    window = opened(qtbot, pattern_file(tmp_path))
    assert sectors(window) == 8 * 32
    window.document.select(warp=5, instruction=1)
    write(tmp_path / "copy.cu", KERNEL.replace("STRIDE", "32"))
    qtbot.waitUntil(lambda: sectors(window) == (32 + 4) * 32, timeout=3000)
    assert (window.document.selection.warp, window.document.selection.instruction) == (5, 1)
    assert "in[32 * i]" in window.editor.kernel.source()
    assert not window.document.modified


def test_the_pattern_file_reloads_when_nothing_here_is_unsaved(qtbot, tmp_path):
    path = pattern_file(tmp_path)
    window = opened(qtbot, path)
    doc = json.loads(path.read_text())
    doc["params"]["n"] = 2048
    write(path, json.dumps(doc))
    qtbot.waitUntil(lambda: dict(window.document.pattern.params)["n"] == 2048, timeout=3000)
    qtbot.waitUntil(lambda: sectors(window) == 8 * 64)


def test_unsaved_edits_are_kept_unless_the_user_agrees(qtbot, tmp_path, monkeypatch, wait_check):
    path = pattern_file(tmp_path)
    window = opened(qtbot, path)
    window.document.set_pattern(variant(path, 512), "Change n")
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: asked.append(a[2]) or QMessageBox.No)
    doc = json.loads(path.read_text())
    doc["params"]["n"] = 2048
    write(path, json.dumps(doc))
    qtbot.waitUntil(lambda: bool(asked), timeout=3000)
    assert "copy.sectorviz.json changed on disk" in asked[0]
    assert dict(window.document.pattern.params)["n"] == 512 and window.document.modified
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Yes)
    assert window.reload_from_disk()
    wait_check(window)
    assert dict(window.document.pattern.params)["n"] == 2048 and not window.document.modified


def test_saving_here_is_not_a_change_on_disk(qtbot, tmp_path, monkeypatch):
    path = pattern_file(tmp_path)
    window = opened(qtbot, path)
    monkeypatch.setattr(window, "reload_from_disk", lambda: (_ for _ in ()).throw(
        AssertionError("reloaded its own save")))
    window.document.set_pattern(variant(path, 512), "Change n")
    assert window.save()
    qtbot.wait(600)
    assert not window.document.modified
