"""Issue 22, item 4: text from files (names, notes, kernel source) reaches stdout and stderr
escaped by one function (model.errors.printable): no control character, bidi control or
zero-width character reaches the terminal, and a newline inside a value starts no line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.model.errors import printable, printable_lines

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ("\x1b[2J", "\r", "\x9b", "\x7f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
           "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200c", "\u200d", "\u200e",
           "\u200f", "\u2060", "\ufeff", "\u2028", "\x00", "\t")
FAKE = "\nsector demand 0 B\n"  # a newline in a name must not fabricate this line


def dangerous(text: str) -> list[str]:
    """The characters in `text` that could drive or mislead a terminal."""
    return [c for c in text if c != "\n" and not c.isprintable()]


def pattern(folder, name="hostile"):
    label = "".join(HOSTILE) + FAKE
    doc = {"format": "sectorviz.pattern/1", "name": name + label, "notes": label,
           "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 1024}},
           "accesses": [{"name": "load" + label, "op": "load", "array": "a",
                         "index": "threadIdx.x"}]}
    path = folder / f"{name}.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("char", HOSTILE)
def test_printable_escapes_every_hostile_character_visibly(char):
    out = printable(f"a{char}b")
    assert not dangerous(out) and out.startswith("a") and out.endswith("b") and "\\" in out


def test_printable_lines_keeps_only_its_own_line_breaks():
    assert printable_lines(["one\nfake", "two"]) == "one\\nfake\ntwo"


@pytest.mark.parametrize("extra", [[], ["--warp", "0"], ["--explain"]])
def test_report_text_is_escaped(tmp_path, capsys, extra):
    code = main(["report", str(pattern(tmp_path)), *extra])
    out, err = capsys.readouterr()
    assert code == 0 and not err
    assert not dangerous(out)
    assert "sector demand 0 B" not in out.splitlines()
    assert "\\u202e" in out and "\\x9b" in out and "\\nsector demand 0 B" in out


def test_report_json_holds_no_raw_controls(tmp_path, capsys):
    code = main(["report", str(pattern(tmp_path)), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0 and not dangerous(out) and json.loads(out)["pattern"].startswith("hostile")


def test_compare_text_is_escaped(tmp_path, capsys):
    code = main(["compare", str(pattern(tmp_path, "a")), str(pattern(tmp_path, "b"))])
    out, err = capsys.readouterr()
    assert code == 0 and not err and not dangerous(out)
    assert "sector demand 0 B" not in out.splitlines()


def test_an_error_line_is_escaped(tmp_path, capsys):
    path = tmp_path / "p.sectorviz.json"
    path.write_text(json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1],
                                "block": [32]}, "arrays": {"a": {"length": 8}},
                                "accesses": [{"name": "x", "op": "load", "array": "a",
                                              "index": "b\u202e\x9b[2J"}]}))
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not dangerous(err)


def test_under_the_c_locale_too(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C"}
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report",
                             str(pattern(tmp_path))], capture_output=True, env=env,
                            timeout=120, check=False)
    out = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 0 and not dangerous(out)
    assert "sector demand 0 B" not in out.splitlines()


def test_batch_escapes_a_bidi_override_in_a_file_name(tmp_path, capsys):
    path = pattern(tmp_path, "evil\u202egpj.exe")
    code = main(["batch", str(path), "--jobs", "1", "--quiet", "--per", "file"])
    out, err = capsys.readouterr()
    assert code == 0 and not err and not dangerous(out)
    header, row = out.splitlines()
    shown = printable(str(path))  # escaped, and the columns measured escaped
    assert row.startswith(shown + "  ") and header.index("kernel") == len(shown) + 2


def test_batch_escapes_names_in_error_rows(tmp_path, capsys):
    path = tmp_path / "bad\u202e\x9b.sectorviz.json"
    path.write_text("{")
    assert main(["batch", str(path), "--jobs", "1", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert not dangerous(out) and not dangerous(err) and "\\u202e\\x9b" in out


def test_check_escapes_file_and_instruction_names(tmp_path, capsys):
    path = pattern(tmp_path, "evil\u202e")
    doc = json.loads(path.read_text())
    doc["expect"] = {"totals": {"sectors": 1}}
    path.write_text(json.dumps(doc))
    assert main(["check", str(path), "--jobs", "1", "--quiet"]) == 1
    out, _ = capsys.readouterr()
    assert out.count("\n") == 1 and not dangerous(out) and "\\u202e" in out
