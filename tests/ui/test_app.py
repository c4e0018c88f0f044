"""The `sectorviz [FILE] --warp N --instruction K --screenshot OUT.png` entry point."""

import pytest
from PySide6.QtGui import QImage

from sectorviz.command import app as launch
from sectorviz.paths import examples_dir
from sectorviz.ui import app

TRANSPOSE = str(examples_dir() / "transpose-naive.sectorviz.json")


def test_screenshot_opens_file_warp_and_instruction(tmp_path, qapp, monkeypatch):
    from PySide6.QtWidgets import QMessageBox
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    out = tmp_path / "shot.png"
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: seen.append(w) or real(w, a))
    assert launch.main([TRANSPOSE, "--warp", "33", "--instruction", "store c[col][row]",
                     "--screenshot", str(out)]) == 0
    image = QImage(str(out))
    assert image.width() > 800 and image.height() > 600
    (window,) = seen
    assert window.document.selection.warp == 33 and window.document.selection.instruction == 1
    assert len(window.grid_layout.sectors) == 32
    window.close()


def test_no_file_opens_vector_add(tmp_path, qapp, monkeypatch):
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: seen.append(w) or real(w, a))
    assert launch.main(["--screenshot", str(tmp_path / "shot.png")]) == 0
    (window,) = seen
    assert window.document.pattern.name == "Vector add" and window.document.path is None
    window.close()


@pytest.mark.parametrize("argv, needle", [
    (["/no/such.sectorviz.json", "--screenshot", "/tmp/x.png"],
     "cannot read such.sectorviz.json: No such file"),
    ([TRANSPOSE, "--warp", "99999999"], "outside"),
    ([TRANSPOSE, "--instruction", "nope"], "no instruction named 'nope'"),
    ([TRANSPOSE, "--warp", "x"], "invalid int value"),
])
def test_bad_arguments_exit_2_with_one_line(argv, needle, capsys):
    assert launch.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


NO_GLOBAL_KERNEL = {
    "format": "sectorviz.pattern/1", "name": "shared only",
    "launch": {"grid": [2], "block": [64]}, "arrays": {"out": {"dtype": "float32", "length": 128}},
    "kernel": {"function": "k", "code": "__global__ void k(float *out)\n"
               "{ float r[2] = {0}; r[threadIdx.x & 1] = threadIdx.x; }\n"}}


def test_a_kernel_without_global_accesses_opens_with_an_empty_grid_and_sheet(
        tmp_path, qapp, monkeypatch):
    import json

    from PySide6.QtWidgets import QTextBrowser
    path = tmp_path / "shared-only.sectorviz.json"
    path.write_text(json.dumps(NO_GLOBAL_KERNEL))
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: seen.append(w) or real(w, a))
    assert launch.main([str(path), "--screenshot", str(tmp_path / "shot.png")]) == 0
    (window,) = seen
    assert window.grid_view.item.columns() == []
    assert "no global memory instruction" in window.grid_view.item.error
    sheet = window.findChild(QTextBrowser, "sheet").toPlainText()
    assert "no global memory instruction" in sheet and "0 B requested by 128 threads" in sheet
    window.set_warp(3)
    assert window.document.selection.warp == 3
    window.close()
    assert launch.main([str(path), "--instruction", "0"]) == 2  # none to select


def test_a_cu_with_its_kernel_named_opens_for_a_screenshot(tmp_path, qapp, monkeypatch, capsys):
    """`sectorviz KERNEL.cu --kernel NAME --screenshot OUT.png` opens the pattern `sectorviz
    new` would make from the host launch, as `report KERNEL.cu` reads it (a slide straight
    from a .cu); it was read as a pattern file ("invalid JSON")."""
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: seen.append(w) or real(w, a))
    cu = str(examples_dir() / "transpose.cu")
    assert launch.main([cu, "--kernel", "transposeNaive", "--warp", "1",
                        "--screenshot", str(tmp_path / "shot.png")]) == 0
    (window,) = seen
    assert window.document.pattern.kernel["function"] == "transposeNaive"
    assert window.document.selection.warp == 1
    assert "transposeNaive: the host launch: grid" in capsys.readouterr().err
    window.close()
    assert launch.main([cu, "--screenshot", str(tmp_path / "two.png")]) == 2
    assert "2 kernels (" in capsys.readouterr().err  # which one: --kernel
