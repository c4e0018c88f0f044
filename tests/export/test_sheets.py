"""Sheets hold the model's numbers: the cells of sheet_rows, in CSV, Markdown and LaTeX."""

import csv
import io

from sectorviz.export.sheets import latex_escape, sheet_csv, sheet_latex, sheet_markdown
from sectorviz.model import analyze
from sectorviz.model.sheet import sheet_rows


def test_csv_round_trips_to_the_model_rows(gather):
    analysis = analyze(gather)
    rows = list(csv.reader(io.StringIO(sheet_csv(analysis))))
    assert rows == sheet_rows(analysis)
    by_name = {r[0]: r for r in rows[1:]}
    stats = analysis.instructions[1]
    assert by_name[stats.name][rows[0].index("sectors")] == f"{stats.sectors:,}"
    assert by_name["total"][rows[0].index("useful %")] == \
        f"{100 * analysis.totals.useful_fraction:.1f}"


def test_markdown_has_every_cell(crossing):
    analysis = analyze(crossing)
    text = sheet_markdown(analysis)
    lines = text.splitlines()
    assert len(lines) == len(sheet_rows(analysis)) + 1
    assert lines[1].startswith("| :-- | :-- | --: |")
    for row, line in zip(sheet_rows(analysis)[1:-1], lines[2:-1]):
        assert [c.strip() for c in line.strip("|").split(" | ")] == row
    assert "**12**" in lines[-1]


def test_latex_is_booktabs_and_escaped(example):
    analysis = analyze(example("row-sum-loop"))
    text = sheet_latex(analysis)
    assert text.count(r"\toprule") == text.count(r"\bottomrule") == 1
    assert text.count(r"\midrule") == 2
    assert r"useful \%" in text
    assert r"\begin{tabular}{llrrrrrrrrrrrr}" in text
    for row in sheet_rows(analysis):
        assert " & ".join(latex_escape(c) for c in row) + r" \\" in text


def test_latex_escape():
    assert latex_escape("a_b & 50% #1 {x} $y ~^\\") == \
        r"a\_b \& 50\% \#1 \{x\} \$y \textasciitilde{}\textasciicircum{}\textbackslash{}"
