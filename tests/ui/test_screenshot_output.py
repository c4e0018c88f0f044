"""Issue 22, item 3: `--screenshot` is written as exports are (sectorviz.atomic): a link at
the target is replaced, not written through; a failed write keeps the old file whole and
names the path typed."""

from __future__ import annotations

from PySide6.QtGui import QImage

from sectorviz import atomic
from sectorviz.command import app as launch
from sectorviz.paths import examples_dir

VECTOR_ADD = str(examples_dir() / "vector-add.sectorviz.json")


def test_a_link_at_the_screenshot_target_is_replaced(tmp_path, qapp):
    (tmp_path / "elsewhere.txt").write_text("keep")
    out = tmp_path / "shot.png"
    out.symlink_to(tmp_path / "elsewhere.txt")
    assert launch.main([VECTOR_ADD, "--screenshot", str(out)]) == 0
    assert not out.is_symlink() and not QImage(str(out)).isNull()
    assert (tmp_path / "elsewhere.txt").read_text() == "keep"


def test_a_full_disk_keeps_the_old_screenshot(tmp_path, qapp, monkeypatch, capsys):
    out = tmp_path / "shot.png"
    out.write_bytes(b"old")

    def full(*_):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    assert launch.main([VECTOR_ADD, "--screenshot", str(out)]) == 2
    assert capsys.readouterr().err == f"{out}: No space left on device\n"
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["shot.png"]


def test_the_pattern_cannot_be_its_own_screenshot(tmp_path, qapp, capsys):
    pattern = tmp_path / "p.png"
    pattern.write_text((examples_dir() / "vector-add.sectorviz.json").read_text())
    before = pattern.read_bytes()
    assert launch.main([str(pattern), "--screenshot", str(pattern)]) == 2
    assert "it is a file this run read" in capsys.readouterr().err
    assert pattern.read_bytes() == before
