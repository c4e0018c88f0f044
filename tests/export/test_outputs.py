"""Outputs no name can break (UTF-8, XML, LaTeX, spreadsheets), written atomically with the
mode a new file gets, and `--warps` files made and written one at a time."""

import csv
import io
import json
import os
import stat
import xml.etree.ElementTree as ET

import pytest

from sectorviz.cli import main
from sectorviz.command import export as command
from sectorviz.paths import examples_dir

HOSTILE = "bad\ud800 \x07<&> =HYPERLINK(\"http://x\") 50% _{}"


@pytest.fixture
def hostile(tmp_path):
    """A pattern whose name and instruction name hold a lone surrogate, a control character,
    XML and LaTeX specials and a spreadsheet formula."""
    doc = json.loads((examples_dir() / "struct12-crossing.sectorviz.json").read_text())
    doc["name"] = HOSTILE
    doc["accesses"][0]["name"] = "=cmd|' /C calc'!A0"
    path = tmp_path / "hostile.sectorviz.json"
    path.write_text(json.dumps(doc))  # json escapes the surrogate as \ud800
    return path


@pytest.mark.parametrize("suffix", [".svg", ".tex", ".md", ".csv", ".png", ".pdf"])
def test_hostile_names_write_valid_files(tmp_path, hostile, suffix):
    out = tmp_path / f"d{suffix}"
    assert main(["export", str(hostile), "-o", str(out)]) == 0
    data = out.read_bytes()
    if suffix in (".svg", ".tex", ".md", ".csv"):
        text = data.decode("utf-8")  # strictly valid UTF-8
        assert "\x07" not in text
        assert suffix == ".csv" or "ud800" in text  # the CSV's rows hold no pattern name
    if suffix == ".svg":
        root = ET.fromstring(data)  # well-formed XML
        assert any("\\x07" in (e.text or "") for e in root.iter())
    if suffix == ".tex":
        assert r"50\%" in text and r"\_\{\}" in text and r"\textless{}\&\textgreater{}" in text


def test_csv_names_are_not_formulas(tmp_path, hostile):
    out = tmp_path / "s.csv"
    assert main(["export", str(hostile), "-o", str(out)]) == 0
    cells = [c for row in csv.reader(io.StringIO(out.read_text())) for c in row]
    assert not any(c.startswith(("=", "+", "@")) for c in cells)
    assert any(c.startswith("'=cmd|") for c in cells)


def test_report_prints_hostile_names(capsys, hostile):
    assert main(["report", str(hostile)]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert "\\ud800" in out


def test_exports_are_atomic_and_keep_the_umask_mode(tmp_path, monkeypatch):
    pattern = str(examples_dir() / "struct12-crossing.sectorviz.json")
    out = tmp_path / "d.svg"
    old = os.umask(0o027)
    try:
        assert main(["export", pattern, "-o", str(out)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    before = out.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device", str(out))
    monkeypatch.setattr("sectorviz.atomic.os.fsync", broken)
    assert main(["export", pattern, "-o", str(out), "--theme", "dark"]) == 2
    assert out.read_bytes() == before  # the old file, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.svg"]  # no temporary left


def test_warp_files_are_made_and_written_one_at_a_time(tmp_path, monkeypatch):
    events = []
    make, write = command.diagram_bytes, command.write_atomic
    monkeypatch.setattr(command, "diagram_bytes",
                        lambda p, specs, *a: events.append(("make", specs[0].warp))
                        or make(p, specs, *a))
    monkeypatch.setattr(command, "write_atomic",
                        lambda path, data: events.append(("write", path.name))
                        or write(path, data))
    pattern = str(examples_dir() / "row-sum-loop.sectorviz.json")
    assert main(["export", pattern, "-o", str(tmp_path / "w.svg"), "--warps", "2:5"]) == 0
    assert events == [("make", 2), ("write", "w-warp2.svg"), ("make", 3),
                      ("write", "w-warp3.svg"), ("make", 4), ("write", "w-warp4.svg")]


def test_pdf_pages_are_drawn_from_a_lazy_sequence(tmp_path, monkeypatch):
    seen = []
    make = command.diagram_bytes
    monkeypatch.setattr(command, "diagram_bytes",
                        lambda p, specs, *a: seen.append(type(specs)) or make(p, specs, *a))
    pattern = str(examples_dir() / "partial-warp.sectorviz.json")
    assert main(["export", pattern, "-o", str(tmp_path / "w.pdf"), "--warps", "0:32"]) == 0
    assert seen == [command._WarpSpecs]  # specs made when a page asks, not a list of all
    assert (tmp_path / "w.pdf").read_bytes().startswith(b"%PDF")
