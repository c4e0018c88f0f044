"""One sheet everywhere: `report` text, CSV, Markdown and LaTeX print the scene's rows, and
no name can break them."""

import csv
import io

from sectorviz.cli import main
from sectorviz.export.escape import csv_cell, latex_text, plain_text, xml_text
from sectorviz.export.sheets import sheet_csv, sheet_latex, sheet_markdown, sheet_text
from sectorviz.model import analyze
from sectorviz.paths import examples_dir
from sectorviz.scene.sheet import accounting_sheet, sheet_table


def sheet_of(pattern, warp=0):
    return accounting_sheet(pattern, analyze(pattern), warp)


def test_csv_is_the_sheet_table(gather):
    sheet = sheet_of(gather)
    rows = list(csv.reader(io.StringIO(sheet_csv(sheet))))
    assert rows == sheet_table(sheet)
    assert rows[0] == ["section", "item", "value", "note", "metric"]
    assert [r[1] for r in rows if r[0] == "answer"] == ["sector demand", "useful",
                                                        "worst instruction"]
    assert len(rows) == 1 + len(sheet.answer) + sum(len(s.rows) for s in sheet.steps)


def test_markdown_and_latex_hold_every_row(crossing):
    sheet = sheet_of(crossing)
    md, tex = sheet_markdown(sheet), sheet_latex(sheet)
    for step in sheet.steps:
        assert f"### {step.number}. {step.title}" in md
        for r in step.rows:
            assert f"| {r.label} | {r.value} |" in md
            assert f"{latex_text(r.label)} & {latex_text(r.value)} &" in tex
    assert tex.count(r"\toprule") == tex.count(r"\bottomrule") == 1
    assert tex.count(r"\multicolumn{3}") == 5
    assert r"\texttt{l1tex\_\_t\_sectors\_pipe\_lsu\_mem\_global\_op\_ld.sum}" in tex


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
