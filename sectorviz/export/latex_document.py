"""A .tex body (a TikZ picture or the sheet's longtable) -> a whole document that pdflatex
compiles on its own (`--standalone`), using only packages every TeX installation has: an
`article` page, a diagram scaled to the text width, a sheet with the packages its table
needs."""

from __future__ import annotations

DIAGRAM_PREAMBLE = (r"\documentclass{article}", r"\usepackage{tikz}", r"\pagestyle{empty}")
SHEET_PREAMBLE = (r"\documentclass{article}", r"\usepackage{array,booktabs,longtable}")


def standalone_latex(body: str, sheet: bool) -> str:
    """`body` (a TikZ picture, or with `sheet` a sheet's longtable) inside a document of its
    own: the preamble, then the body (a picture in \\resizebox{\\linewidth}{!}{...}, the
    way its own comment says to fit a column)."""
    preamble = SHEET_PREAMBLE if sheet else DIAGRAM_PREAMBLE
    body = body.rstrip("\n")
    if not sheet:
        body = "\\noindent\\resizebox{\\linewidth}{!}{%\n" + body + "%\n}"
    return "\n".join((*preamble, r"\begin{document}", body, r"\end{document}")) + "\n"
