"""The `sectorviz [FILE] --warp N --instruction K --screenshot OUT.png` entry point."""

import pytest
from PySide6.QtGui import QImage

from sectorviz.paths import examples_dir
from sectorviz.ui import app

TRANSPOSE = str(examples_dir() / "transpose-naive.sectorviz.json")


def test_screenshot_opens_file_warp_and_instruction(tmp_path, qapp, monkeypatch):
    from PySide6.QtWidgets import QMessageBox
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    out = tmp_path / "shot.png"
    seen = []
    monkeypatch.setattr(app, "save_when_drawn",
                        lambda w, o, a, real=app.save_when_drawn: (seen.append(w), real(w, o, a)))
    assert app.main([TRANSPOSE, "--warp", "33", "--instruction", "store c[col][row]",
                     "--screenshot", str(out)]) == 0
    image = QImage(str(out))
    assert image.width() > 800 and image.height() > 600
    (window,) = seen
    assert window.document.selection.warp == 33 and window.document.selection.instruction == 1
    assert len(window.grid_layout.sectors) == 32
    window.close()


def test_no_file_opens_vector_add(tmp_path, qapp, monkeypatch):
    seen = []
    monkeypatch.setattr(app, "save_when_drawn",
                        lambda w, o, a, real=app.save_when_drawn: (seen.append(w), real(w, o, a)))
    assert app.main(["--screenshot", str(tmp_path / "shot.png")]) == 0
    (window,) = seen
    assert window.document.pattern.name == "Vector add" and window.document.path is None
    window.close()


@pytest.mark.parametrize("argv, needle", [
    (["/no/such.sectorviz.json"], "cannot read such.sectorviz.json: No such file"),
    ([TRANSPOSE, "--warp", "99999999"], "outside"),
    ([TRANSPOSE, "--instruction", "nope"], "no instruction named 'nope'"),
    ([TRANSPOSE, "--warp", "x"], "invalid int value"),
])
def test_bad_arguments_exit_2_with_one_line(argv, needle, capsys):
    assert app.main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
