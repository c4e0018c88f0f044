"""The accounting sheet (`sectorviz.scene.sheet.Sheet`) as text, CSV, Markdown and LaTeX.

Every format prints the same rows in the same order: the answer, then the five steps; cells
are the scene's text unchanged, made safe for the format (export/escape.py), so `report`, the
app's pane, its copies and these files agree. The CSV holds each row's figures as plain
numbers (no thousands separators, the unit in its own column) where the others show its text.
"""

from __future__ import annotations

import csv
import io
import re
from numbers import Integral

from ..model.elide import NAME_WIDTH, elided
from ..model.errors import printable
from ..scene.fit import TEXT_WIDTH, wrapped
from ..scene.sheet import Cell, Sheet, sheet_table
from .escape import csv_cell, latex_text, markdown_text

NOTE_INDENT = 4  # text: notes and metrics sit this far right of the value column
ANSWER_INDENT = 2  # text: a wrapped title, answer or step title goes on this far right
LABEL_WIDTH = NAME_WIDTH  # text: the label column at most; a longer label has a line of its own


def sheet_text(sheet: Sheet) -> str:
    """The plain-text sheet of `sectorviz report`: the answer as sentences, then each step
    with its items and values aligned, notes and metrics below the value; every line safe for
    a terminal and at most TEXT_WIDTH columns (an instruction's name elided in its label, a
    label wider than the label column alone on its line, long text wrapped under itself)."""
    labels = {id(r): _label(r.label, sheet.names) for s in sheet.steps for r in s.rows}
    width = min(max(map(len, labels.values()), default=0), LABEL_WIDTH) + 2
    value, note = 2 + width, 2 + width + NOTE_INDENT  # their columns
    lines = [*wrapped(sheet.title, ANSWER_INDENT), ""]
    for r in sheet.answer:
        lines += wrapped(f"{r.label} {r.value}" + (f" ({r.note})" if r.note else ""),
                         ANSWER_INDENT)
    for step in sheet.steps:
        lines += ["", *wrapped(f"{step.number}. {step.title}", ANSWER_INDENT)]
        for r in step.rows:
            label = labels[id(r)]
            if len(label) + 2 > width:  # alone on its line, the value below in its column
                lines.append(f"  {label}")
                label = ""
            lines += wrapped(f"  {label.ljust(width)}{r.value}", value) if label or r.value else []
            lines += wrapped(" " * note + r.note, note) if r.note else []
            if r.code:  # moved left where the note column is too narrow: a metric stays whole
                code = f"measured by {r.code}"
                at = max(min(note, TEXT_WIDTH - len(code)), ANSWER_INDENT)
                lines += wrapped(" " * at + code, at)
    return "\n".join(lines) + "\n"


def _label(label: str, names: tuple[str, ...]) -> str:
    """A row's label for the text sheet: the instruction name it starts with (the longest of
    `names` that it does) elided, the rest kept."""
    name = max((n for n in names if label.startswith(n)), key=len, default="")
    return elided(name) + printable(label[len(name):])


THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # the comma of 1,024


def plain_number(cell: Cell) -> str:
    """A figure -> CSV text: an integer as its digits, a float as Python's shortest exact
    form (12, 0.25, 33.333333333333336)."""
    return str(int(cell)) if isinstance(cell, Integral) else repr(float(cell))


def _csv_row(row: list[Cell], prose: range) -> list[str]:
    """A table row -> CSV cells: figures as plain numbers; text made safe (csv_cell), and
    in the `prose` columns (value text, note) numbers without thousands separators."""
    return [plain_number(c) if not isinstance(c, str) else
            csv_cell(THOUSANDS.sub("", c) if i in prose else c) for i, c in enumerate(row)]


def sheet_csv(sheet: Sheet) -> str:
    """One line per row: section, item, the sheet's figure columns (plain numbers, or the
    text of a row without figures), unit, note, metric (header first)."""
    table = sheet_table(sheet)
    figures = len(sheet.columns)
    prose = range(2, 2 + figures + 2)  # the figure columns, unit and note
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_csv_row(row, prose) for row in table)
    return out.getvalue()


def _md_code(text: str) -> str:
    return f"`{markdown_text(text)}`" if text else ""


def sheet_markdown(sheet: Sheet) -> str:
    """GitHub-flavoured Markdown: the title, the answer as a bullet list, one table per step
    (metrics in code spans)."""
    md = markdown_text
    out = [f"## {md(sheet.title)}", ""]
    out += [f"- **{md(r.label)}** {md(r.value)}" + (f" ({md(r.note)})" if r.note else "")
            for r in sheet.answer]
    for step in sheet.steps:
        out += ["", f"### {step.number}. {md(step.title)}", "", "| item | value | note |",
                "| :-- | :-- | :-- |"]
        out += [f"| {md(r.label)} | {md(r.value)} | "
                f"{'; '.join(x for x in (md(r.note), _md_code(r.code)) if x)} |"
                for r in step.rows]
    return "\n".join(out) + "\n"


def breakable(text: str, after: str = "_.") -> str:
    """Text as LaTeX that may break after each of the characters `after` (a metric name,
    `l1tex__t_sectors...`, runs past a column otherwise)."""
    escaped = latex_text(text)
    for ch in after:
        token = r"\_" if ch == "_" else ch
        escaped = escaped.replace(token, token + r"\allowbreak{}")
    return escaped


def sheet_latex(sheet: Sheet) -> str:
    """A booktabs `longtable` of ragged-right columns (needs \\usepackage{array,booktabs,
    longtable}), captioned with the sheet's title, that breaks across pages (the header
    repeated on each): item, value, note columns, each step a bold row under a midrule;
    metrics in \\texttt, breakable after each `_` and `.` (in the notes after each `_`)."""
    def row(r) -> str:
        note = "; ".join(x for x in (breakable(r.note, "_"),
                                     rf"\texttt{{{breakable(r.code)}}}" if r.code else "") if x)
        return f"{latex_text(r.label)} & {latex_text(r.value)} & {note} \\\\"

    title = latex_text(sheet.title.replace(chr(10), " "))
    head = [r"\toprule", r"item & value & note \\", r"\midrule"]
    ragged = r">{\raggedright\arraybackslash}p"
    lines = [f"% {title}", r"% needs \usepackage{array,booktabs,longtable}",
             rf"\begin{{longtable}}{{{ragged}{{0.22\linewidth}}{ragged}{{0.22\linewidth}}"
             rf"{ragged}{{0.42\linewidth}}}}",
             rf"\caption{{{title}}} \\", *head, r"\endfirsthead", *head, r"\endhead"]
    lines += [row(r) for r in sheet.answer]
    for step in sheet.steps:
        lines += [r"\midrule",
                  rf"\multicolumn{{3}}{{p{{0.86\linewidth}}}}{{\textbf{{{step.number}. "
                  rf"{latex_text(step.title)}}}}} \\"]
        lines += [row(r) for r in step.rows]
    lines += [r"\bottomrule", r"\end{longtable}"]
    return "\n".join(lines) + "\n"
