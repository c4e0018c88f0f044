"""One sheet everywhere: `report` text, CSV, Markdown and LaTeX print the scene's rows, and
no name can break them."""

import csv
import io
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from sectorviz.cli import main
from sectorviz.export.escape import csv_cell, latex_text, plain_text, xml_text
from sectorviz.export.sheets import plain_number, sheet_csv, sheet_latex, sheet_markdown, sheet_text
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import analyze
from sectorviz.paths import examples_dir
from sectorviz.scene.overview import overview_bins
from sectorviz.scene.palette import WASTE_LABELS
from sectorviz.scene.sheet import sheet_table


def sheet_of(pattern, warp=0):
    return accounting_sheet(pattern, analyze(pattern), warp)


def test_csv_is_the_sheet_table(gather):
    sheet = sheet_of(gather)
    rows = list(csv.reader(io.StringIO(sheet_csv(sheet))))
    assert [r[:2] + r[3:4] + r[5:] for r in rows] == \
        [[str(c) for c in r[:2] + r[3:4] + r[5:]] for r in sheet_table(sheet)]
    assert rows[0] == ["section", "item", "value", "unit", "note", "metric"]
    assert [r[1] for r in rows if r[0] == "answer"] == ["sector demand", "useful",
                                                        "worst instruction"]
    assert len(rows) == 1 + len(sheet.answer) + sum(len(s.rows) for s in sheet.steps)


def csv_rows(sheet) -> dict[tuple[str, str], list[str]]:
    """(section, item) -> the CSV row of a sheet, parsed by the csv module."""
    rows = list(csv.reader(io.StringIO(sheet_csv(sheet))))
    return {(r[0].split(" ", 1)[-1] if r[0][0].isdigit() else r[0], r[1]): r for r in rows[1:]}


@pytest.mark.parametrize("name", ["transpose-naive", "struct12-crossing", "shared-strides",
                                  "histogram-shared-cuda", "partial-warp"])
def test_csv_figures_are_the_models_plain_numbers(example, name):
    pattern = example(name)
    analysis = analyze(pattern)
    rows = csv_rows(accounting_sheet(pattern, analysis, 0))
    t = analysis.totals
    assert rows["answer", "sector demand"][2:4] == [str(t.sectors), "sectors"]
    assert float(rows["answer", "useful"][2]) == 100 * t.useful_fraction
    for s in analysis.instructions:
        grid = next(r for (sec, item), r in rows.items() if item == f"{s.name}, grid")
        assert grid[2:4] == [str(s.sectors), "sectors"]
        assert rows["Logical bytes", s.name][2:4] == [str(s.logical_bytes), "B"]
    for b in analysis.boundaries:
        bound = next(r for (sec, item), r in rows.items() if item == b.name)
        assert bound[2:4] == [str(b.bytes), "B"] and bound[5] == b.metric
    for s in analysis.shared:
        shared = next(r for (sec, item), r in rows.items() if sec.startswith("Shared memory")
                      and item == s.name)
        assert shared[2:4] == [str(s.wavefronts), "wavefronts"]
    for row in rows.values():  # no cell holds a thousands separator or a glued-on unit
        # (cell by cell: a name such as "line 19: data[i], ld.u8" ends in a digit)
        assert not any(re.search(r"\d,\d{3}", cell) for cell in row), row
        if row[3]:
            float(row[2])


def test_csv_floats_round_trip(example):
    pattern = example("struct12-crossing")
    analysis = analyze(pattern)
    useful = csv_rows(accounting_sheet(pattern, analysis))["answer", "useful"]
    assert useful[2] == repr(100 * analysis.totals.useful_fraction) and useful[3] == "%"
    assert plain_number(np.int64(7)) == "7" and plain_number(np.float64(0.5)) == "0.5"


def test_markdown_and_latex_hold_every_row(crossing):
    sheet = sheet_of(crossing)
    md, tex = sheet_markdown(sheet), sheet_latex(sheet)
    for step in sheet.steps:
        assert f"### {step.number}. {step.title}" in md
        for r in step.rows:
            assert f"| {r.label} | {r.value} |" in md
            assert f"{latex_text(r.label)} & {latex_text(r.value)} &" in tex
    assert tex.count(r"\toprule") == 2 and tex.count(r"\bottomrule") == 1  # head, page heads
    assert r"\begin{longtable}" in tex and r"\endhead" in tex and r"\end{longtable}" in tex
    assert tex.splitlines()[1] == r"% needs \usepackage{array,booktabs,longtable}"
    assert rf"\caption{{{latex_text(sheet.title)}}}" in tex
    assert tex.count(r"\multicolumn{3}") == 5
    assert (r"\texttt{l1tex\_\allowbreak{}\_\allowbreak{}t\_\allowbreak{}sectors\_\allowbreak{}"
            r"pipe\_\allowbreak{}lsu\_\allowbreak{}mem\_\allowbreak{}global\_\allowbreak{}"
            r"op\_\allowbreak{}ld.\allowbreak{}sum}") in tex  # breaks inside a column


def test_report_prints_the_same_rows(capsys, example):
    path = examples_dir() / "transpose-naive.sectorviz.json"
    assert main(["report", str(path), "--warp", "33"]) == 0
    out = capsys.readouterr().out
    sheet = sheet_of(example("transpose-naive"), warp=33)
    assert out.startswith(sheet_text(sheet))  # then the per-lane detail of --warp
    lines = out.splitlines()
    for step in sheet.steps:
        for r in step.rows:
            assert any(line.strip().startswith(r.label) and line.endswith(r.value)
                       for line in lines), r
    assert "Address expansion (warp 33, block (1, 0, 0))" in out


def test_float4_answer_is_ideal(example):
    sheet = sheet_of(example("float4-load"))
    answer = {r.label: r for r in sheet.answer}
    assert answer["sector demand"].note == "1.00x the ideal"
    assert answer["worst instruction"].value.startswith("none")


def test_escaping_surrogates_controls_and_latex():
    assert plain_text("a\ud800b") == "a\\ud800b"
    plain_text("a\ud800b").encode("utf-8")
    assert xml_text("bell\x07 tab\t") == "bell\\x07 tab\t"
    assert latex_text("a_b & 50% #1 {x} $y ~^\\") == \
        r"a\_b \& 50\% \#1 \{x\} \$y \textasciitilde{}\textasciicircum{}\textbackslash{}"
    assert latex_text("\ud800") == r"\textbackslash{}ud800"


def test_csv_cells_never_start_a_formula():
    assert csv_cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert [csv_cell(c) for c in ("+1+2x", "-x", "@SUM(A1)", "\tx")] == \
        ["'+1+2x", "'-x", "'@SUM(A1)", "'\tx"]
    assert [csv_cell(c) for c in ("-3", "+4.5", "-1,024", "load", "")] == \
        ["-3", "+4.5", "-1,024", "load", ""]


def test_the_worst_instruction_can_be_a_shared_one(capsys, example):
    """shared-tile-column: every global access is ideal, the column read of tile[32][32] is
    32 wavefronts against 1; `report`, Markdown and `report --json` name it, as shared,
    and it is the instruction in the overview's worst class."""
    pattern = example("shared-tile-column")
    analysis = analyze(pattern, per_warp=True)
    sheet = accounting_sheet(pattern, analysis, 0)
    answer = {r.label: r for r in sheet.answer}
    worst = answer["worst instruction"]
    assert worst.value == "load tile[tx][ty]" and worst.instruction == 2
    assert worst.note.startswith("32-way bank conflict, 32 wavefronts per request, ideal 1;")
    assert "- **worst instruction** load tile[tx][ty] (32-way bank conflict" in \
        sheet_markdown(sheet)
    path = str(examples_dir() / "shared-tile-column.sectorviz.json")
    assert main(["report", path]) == 0
    assert ("worst instruction load tile[tx][ty] (32-way bank conflict, 32 wavefronts per "
            "request, ideal 1;") in capsys.readouterr().out
    assert main(["report", "--json", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["worst"] == {"space": "shared", "index": 1, "instruction": 2,
                            "name": "load tile[tx][ty]", "unit": "wavefronts", "ratio": 32.0,
                            "excess": doc["shared"][1]["bank_conflicts"], "per_request": 32.0,
                            "ideal_per_request": 1.0}
    bins = overview_bins(analysis, 1, len(analysis.shared))
    assert bins.waste[2, 0] == bins.waste.max() == len(WASTE_LABELS) - 1


def test_the_worst_global_instruction_in_json(capsys):
    path = str(examples_dir() / "transpose-naive.sectorviz.json")
    assert main(["report", "--json", path]) == 0
    worst = json.loads(capsys.readouterr().out)["worst"]
    assert (worst["space"], worst["name"], worst["unit"]) == ("global", "store c[col][row]",
                                                              "sectors")
    assert worst["ratio"] == 8.0 and worst["per_request"] == 32.0
    assert main(["report", "--json", str(examples_dir() / "float4-load.sectorviz.json")]) == 0
    assert json.loads(capsys.readouterr().out)["worst"] is None


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex missing")
def test_the_latex_sheet_compiles_within_its_page(tmp_path, crossing):
    """A longtable of the whole sheet in an article: no overfull box (the metric names
    break), as the file's own first lines say to include it."""
    (tmp_path / "sheet.tex").write_text(sheet_latex(sheet_of(crossing)))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\\usepackage{array,booktabs,longtable}\\begin{document}\n"
        "\\input{sheet.tex}\n\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "Overfull \\hbox" not in proc.stdout
