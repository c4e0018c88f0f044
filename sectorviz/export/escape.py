"""Text from users (names, notes) made safe for each output: no name can break UTF-8, XML,
LaTeX or a spreadsheet.

plain_text: lone surrogates (which UTF-8 cannot encode) -> backslash escapes ('\\ud800'),
control characters other than tab and line ends (a terminal's escapes; XML 1.0 cannot hold
them even as references) -> '\\x07'.
xml_text: also the two non-characters XML forbids (U+FFFE, U+FFFF).
latex_text: also the LaTeX special characters (and < >) -> their LaTeX commands.
markdown_text: also &, <, > -> HTML entities (no tag reaches a Markdown renderer), | -> \\|
and line ends -> spaces (a table cell stays one cell).
csv_cell: also a leading =, +, -, @ (a formula to a spreadsheet) -> prefixed with "'",
unless the cell is a number.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_XML_INVALID = re.compile("[\ufffe\uffff]")
LATEX_SPECIALS = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
                  # the sheets' own non-ASCII signs, so pdflatex needs no Unicode set-up
                  "→": r"$\rightarrow$", "—": "---", "…": r"\ldots{}", "×": r"$\times$"}
FORMULA_STARTS = ("=", "+", "-", "@")


def plain_text(text: str) -> str:
    """`text` with lone surrogates and control characters (not tab, CR, LF) as backslash
    escapes: always encodes as UTF-8 and never drives a terminal."""
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def xml_text(text: str) -> str:
    """plain_text without the non-characters XML 1.0 forbids (escape <, >, & and quotes
    separately, as saxutils does)."""
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", plain_text(text))


def latex_text(text: str) -> str:
    """Plain text -> LaTeX text: the special characters escaped, control characters and
    surrogates as visible escapes."""
    return "".join(LATEX_SPECIALS.get(ch, ch) for ch in xml_text(text))


MARKDOWN_SPECIALS = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\n": " ", "\r": " "}


def markdown_text(text: str) -> str:
    """Plain text -> text for a GitHub-flavoured Markdown line or table cell: HTML
    characters as entities, pipes escaped, line ends as spaces, control characters and
    surrogates as visible escapes."""
    return "".join(MARKDOWN_SPECIALS.get(ch, ch) for ch in plain_text(text))


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def csv_cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run: "'" before a leading =, +, -, @ (or a tab or
    carriage return) unless the cell is a number such as -3."""
    text = plain_text(text)
    if text.startswith(FORMULA_STARTS + ("\t", "\r")) and not _is_number(text):
        return "'" + text
    return text
