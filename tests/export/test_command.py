"""`sectorviz export`: formats by suffix, exit 2 with one line for bad input, headless."""

import csv
import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from sectorviz.cli import main
from sectorviz.command.export import run_export
from sectorviz.export.sheets import sheet_csv
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import analyze, load_pattern
from sectorviz.paths import resources_dir
from sectorviz.scene.sheet import sheet_table

EXAMPLES = resources_dir() / "examples"
CROSSING = str(EXAMPLES / "struct12-crossing.sectorviz.json")
LOOP = str(EXAMPLES / "row-sum-loop.sectorviz.json")


def test_svg_by_default_warp_and_instruction(tmp_path):
    out = tmp_path / "d.svg"
    assert main(["export", CROSSING, "-o", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert any("hit" in e.get("class", "") for e in root.iter())


def test_instruction_by_name_and_index_agree(tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run_export([LOOP, "-o", str(a), "--instruction", "store sums[r]", "--warp", "3"]) == 0
    assert run_export([LOOP, "-o", str(b), "--instruction", "1", "--warp", "3"]) == 0
    assert a.read_bytes() == b.read_bytes() and b"store sums[r]" in a.read_bytes()


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".pdf", b"%PDF"),
                                           (".tex", b"%"), (".csv", b"section,item"),
                                           (".md", b"## ")])
def test_formats_by_suffix(tmp_path, suffix, magic):
    out = tmp_path / f"d{suffix}"
    assert run_export([CROSSING, "-o", str(out), "--theme", "print", "--scale", "1"]) == 0
    assert out.read_bytes().startswith(magic)


def test_tex_is_tikz_unless_sheet(tmp_path):
    out = tmp_path / "d.tex"
    assert run_export([CROSSING, "-o", str(out)]) == 0
    assert r"\begin{tikzpicture}" in out.read_text()
    assert run_export([CROSSING, "-o", str(out), "--sheet"]) == 0
    assert r"\toprule" in out.read_text()


def test_csv_holds_the_sheet_rows(tmp_path):
    out = tmp_path / "s.csv"
    assert run_export([LOOP, "-o", str(out), "--warp", "3"]) == 0
    pattern = load_pattern(LOOP)
    rows = list(csv.reader(io.StringIO(out.read_text())))
    sheet = accounting_sheet(pattern, analyze(pattern), 3)
    assert out.read_text() == sheet_csv(sheet)
    assert [r[:2] for r in rows] == [[str(c) for c in r[:2]] for r in sheet_table(sheet)]
    assert ["answer", "sector demand", "262656", "sectors"] == rows[1][:4]
    assert not any(re.search(r"\d,\d{3}", cell) for row in rows for cell in row)


def test_same_input_same_bytes(tmp_path):
    for suffix in (".svg", ".png", ".pdf", ".tex"):
        a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
        for out in (a, b):
            assert run_export([LOOP, "-o", str(out), "--kind", "warp", "--warp", "5"]) == 0
        assert a.read_bytes() == b.read_bytes(), suffix


def test_warp_range(tmp_path):
    assert run_export([LOOP, "-o", str(tmp_path / "w.svg"), "--warps", "2:4"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w-warp2.svg", "w-warp3.svg"]
    pdf = tmp_path / "w.pdf"
    assert run_export([LOOP, "-o", str(pdf), "--warps", "0:3", "--kind", "warp"]) == 0
    assert pdf.read_bytes().startswith(b"%PDF")


def test_png_scale_and_transparency(tmp_path):
    from PySide6.QtGui import QImage
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert run_export([CROSSING, "-o", str(a), "--scale", "1"]) == 0
    assert run_export([CROSSING, "-o", str(b), "--scale", "3", "--transparent"]) == 0
    ia, ib = QImage(str(a)), QImage(str(b))
    assert (ib.width(), ib.height()) == (3 * ia.width(), 3 * ia.height())
    assert ib.pixelColor(0, 0).alpha() == 0 and ia.pixelColor(0, 0).alpha() == 255


@pytest.mark.parametrize("args, words", [
    (["-o", "x.svg", "--warp", "999"], "warp 999 outside [0, 1)"),
    (["-o", "x.svg", "--instruction", "lod"], "no instruction named 'lod'"),
    (["-o", "x.svg", "--instruction", "4"], "instruction 4 outside"),
    (["-o", "x.bmp"], "cannot tell the format"),
    (["-o", "x.png", "--scale", "5"], "--scale 5 outside [1, 4]"),
    (["-o", "x.png", "--scale", "two"], "invalid float value"),
    (["-o", "x.svg", "--theme", "neon"], "invalid choice"),
    (["-o", "x.png", "--sheet"], "--sheet writes"),
    (["-o", "x.svg", "--warps", "3"], "is not A:B"),
    (["-o", "x.svg", "--warps", "0:5"], "outside [0, 1)"),
    (["-o", "x.svg", "--kind", "overview", "--warps", "0:1"], "not overview"),
    (["--warp", "0"], "required: -o/--output"),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, monkeypatch, capsys, args, words):
    monkeypatch.chdir(tmp_path)
    assert main(["export", CROSSING] + args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    assert not list(tmp_path.iterdir())


def test_bad_pattern_names_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.sectorviz.json"
    bad.write_text('{"format": "sectorviz.pattern/1", "name": "x"}')
    assert run_export([str(bad), "-o", str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}: ") and err.count("\n") == 1


def test_runs_without_a_display(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = tmp_path / "d.png"
    proc = subprocess.run([sys.executable, "-m", "sectorviz", "export", CROSSING, "-o", str(out)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(b"\x89PNG")


def test_same_bytes_across_processes(tmp_path):
    """Qt's hash seeds and clocks differ per process; the files must not."""
    outs = []
    for i in (1, 2):
        out = tmp_path / f"d{i}.pdf"
        proc = subprocess.run([sys.executable, "-m", "sectorviz", "export", LOOP, "-o", str(out),
                               "--kind", "warp", "--warps", "0:2"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_a_kernel_without_global_accesses_exports_its_sheet_and_says_why_no_diagram(
        tmp_path, capsys):
    import json
    path = tmp_path / "local-only.sectorviz.json"
    path.write_text(json.dumps({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "int32", "length": 32}},
        "kernel": {"function": "k", "code": "__global__ void k(int *x) { int y = 2; y++; }"}}))
    assert run_export([str(path), "-o", str(tmp_path / "s.md")]) == 0
    assert "no global memory instruction" in (tmp_path / "s.md").read_text()
    assert run_export([str(path), "-o", str(tmp_path / "d.svg")]) == 2
    err = capsys.readouterr().err
    assert err == (f"{path}: kernel: no global memory instruction: the kernel reads and writes "
                   "no global array, so there are no sectors to draw\n")


def test_the_print_theme_keeps_used_bytes_darker_than_waste():
    """In grey levels alone: a lane's own bytes darkest, fetched but unused bytes lighter, the
    bytes other lanes use lighter still; none of them the empty cell's grey."""
    from sectorviz.scene.palette import PRINT, mix

    def level(colour: str) -> int:
        return int(colour[1:3], 16)

    others = mix(PRINT.plain, PRINT.background, PRINT.tint)
    assert level(PRINT.plain) < level(PRINT.wasted) < level(others) < level(PRINT.cell)
    assert level(PRINT.shared) < level(PRINT.wasted)  # a sharing lane's bytes are used bytes
