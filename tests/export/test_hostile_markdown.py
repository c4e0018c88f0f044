"""Hostile input, third round, item 2: a name with HTML (`<script>`) or a pipe never reaches
a Markdown file raw: the sheet (export -o .md, the comparison sheet) and the sweep table
(sweep -o .md) write HTML characters as entities and pipes escaped."""

from __future__ import annotations

import json

import pytest

from sectorviz.cli import main
from sectorviz.export.escape import markdown_text

SCRIPT = "<script>alert(1)</script>"


def hostile(folder, name="p.sectorviz.json"):
    doc = {"format": "sectorviz.pattern/1", "name": f"{SCRIPT} | title",
           "notes": "<img src=x onerror=alert(1)> & more", "params": {"n": 64},
           "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": "n"}},
           "accesses": [{"name": f"{SCRIPT}|load", "op": "load", "array": "a",
                         "index": "threadIdx.x"}]}
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def test_markdown_text_escapes_html_pipes_and_line_ends():
    assert markdown_text("<b>&</b>|x\r\ny\x07") == "&lt;b&gt;&amp;&lt;/b&gt;\\|x  y\\x07"


def assert_safe_table(text: str) -> None:
    """No raw tag, and every table row has the cells of its table's header."""
    assert "<" not in text and ">" not in text and "&lt;script&gt;" in text
    tables = [line for line in text.splitlines() if line.startswith("|")]
    cells = {line.replace("\\|", "").count("|") for line in tables}
    assert len(cells) == 1, cells


@pytest.mark.parametrize("extra", [[], ["--compare", "other"]])
def test_the_sheet_escapes_names(tmp_path, capsys, extra):
    out = tmp_path / "sheet.md"
    other = [str(hostile(tmp_path, "q.sectorviz.json")) if e == "other" else e for e in extra]
    assert main(["export", str(hostile(tmp_path)), "-o", str(out), *other]) == 0, \
        capsys.readouterr().err
    text = out.read_text()
    assert_safe_table(text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\| title" in text


def test_the_sweep_table_escapes_names(tmp_path, capsys):
    out = tmp_path / "table.md"
    assert main(["sweep", str(hostile(tmp_path)), "--param", "n=64,128", "--jobs", "1",
                 "--quiet", "-o", str(out)]) == 0, capsys.readouterr().err
    text = out.read_text()
    assert_safe_table(text)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\|load.sectors" in text
