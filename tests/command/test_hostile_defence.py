"""The last line of defence (issue 15, item 4): whatever goes wrong inside `report`, `export`
or the app, the user sees one line 'FILE: internal error: KIND; please report', exit 2, and
the app keeps the document as it was."""

import pytest
from hostile_helpers import VECTOR_ADD, assert_internal_error, raising

from sectorviz.cli import main

KINDS = [RuntimeError("boom\nsecond line"), RecursionError(), MemoryError(), KeyError("k")]


@pytest.mark.parametrize("err", KINDS, ids=lambda e: type(e).__name__)
def test_report(capsys, monkeypatch, err):
    monkeypatch.setattr("sectorviz.command.report.analyze", raising(err))
    code = main(["report", "--json", VECTOR_ADD])
    out, stderr = capsys.readouterr()
    assert not out
    assert_internal_error(code, stderr, VECTOR_ADD, type(err).__name__)


@pytest.mark.parametrize("err", KINDS, ids=lambda e: type(e).__name__)
def test_export(tmp_path, capsys, monkeypatch, err):
    monkeypatch.setattr("sectorviz.command.export.load_pattern", raising(err))
    code = main(["export", "--warp", "1", VECTOR_ADD, "-o", str(tmp_path / "d.svg")])
    assert_internal_error(code, capsys.readouterr().err, VECTOR_ADD, type(err).__name__)
    assert not list(tmp_path.iterdir())


def test_a_command_line_that_names_no_file(capsys, monkeypatch):
    monkeypatch.setattr("sectorviz.command.report.run_report", raising(ValueError()))
    assert_internal_error(main(["report"]), capsys.readouterr().err, "sectorviz", "ValueError")


def test_bad_input_is_still_bad_input(capsys):
    assert main(["report", "/no/such/file.json"]) == 2
    assert capsys.readouterr().err == ("/no/such/file.json: cannot read file.json: "
                                       "No such file or directory\n")
