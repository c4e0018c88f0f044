"""`sectorviz report` draws a progress bar on a terminal's stderr; none with --quiet or when
stderr is a file or pipe. The sheet on stdout is the same either way."""

import io
import sys

from sectorviz import cli
from sectorviz.command import flags
from sectorviz.paths import examples_dir

GATHER = str(examples_dir() / "gather-distinct.sectorviz.json")  # lane path: 4 chunks


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def as_terminal(monkeypatch) -> Terminal:
    """stderr as a terminal, and a bar that shows at once instead of after a second."""
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(flags, "PROGRESS_DELAY_S", 0)
    return err


def test_a_terminal_gets_a_bar_of_warps(capsys, monkeypatch):
    terminal = as_terminal(monkeypatch)
    assert cli.main(["report", GATHER]) == 0
    shown = terminal.getvalue()
    assert " warps [" in shown and "warps/s" in shown
    assert shown.endswith("\r")  # cleared when the run ends: the sheet follows on stdout
    assert "sector demand 40 MiB" in capsys.readouterr().out


def test_quiet_draws_nothing(capsys, monkeypatch):
    terminal = as_terminal(monkeypatch)
    assert cli.main(["report", "--quiet", GATHER]) == 0
    assert terminal.getvalue() == ""
    assert "sector demand 40 MiB" in capsys.readouterr().out


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(flags, "PROGRESS_DELAY_S", 0)
    assert cli.main(["report", GATHER]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "sector demand 40 MiB" in out
