"""The accounting sheet (`sectorviz.model.sheet.sheet_rows`) as CSV, Markdown and LaTeX.

Cells are the model's text cells unchanged (counts with thousands separators, bytes, percent),
so every format holds the same numbers as `sectorviz report`. The first two columns (name, op)
are text and left-aligned; the rest are numbers and right-aligned.
"""

from __future__ import annotations

import csv
import io

from ..model.analysis import Analysis
from ..model.sheet import sheet_rows

TEXT_COLUMNS = 2


def sheet_csv(analysis: Analysis) -> str:
    """Header, one line per instruction, totals; numbers keep their separators, quoted."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(sheet_rows(analysis))
    return out.getvalue()


def _md_cell(cell: str) -> str:
    return cell.replace("|", "\\|")


def sheet_markdown(analysis: Analysis) -> str:
    """A GitHub-flavoured Markdown table, the totals row in bold."""
    header, *body = sheet_rows(analysis)
    align = [":--" if i < TEXT_COLUMNS else "--:" for i in range(len(header))]
    lines = ["| " + " | ".join(_md_cell(c) for c in header) + " |",
             "| " + " | ".join(align) + " |"]
    for i, row in enumerate(body):
        cells = [_md_cell(c) for c in row]
        if i == len(body) - 1:
            cells = [f"**{c}**" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """Plain text -> LaTeX text (the ten special characters escaped)."""
    return "".join(LATEX_SPECIALS.get(ch, ch) for ch in text)


def sheet_latex(analysis: Analysis) -> str:
    """A booktabs `tabular` (needs \\usepackage{booktabs}); the totals row under a midrule."""
    header, *body = sheet_rows(analysis)
    spec = "l" * TEXT_COLUMNS + "r" * (len(header) - TEXT_COLUMNS)

    def row(cells: list[str]) -> str:
        return " & ".join(latex_escape(c) for c in cells) + r" \\"

    lines = [f"% {latex_escape(analysis.pattern_name)}: {analysis.sector_bytes}-byte sectors",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule", row(header), r"\midrule"]
    lines += [row(r) for r in body[:-1]]
    lines += [r"\midrule", row(body[-1]), r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
