"""The command line: `sectorviz [FILE]` (the app, command/app.py), `sectorviz report FILE`
(report.py), `sectorviz export FILE` (export.py), `sectorviz compare A B` (compare.py),
`sectorviz ncu-metrics` (the Nsight Compute metrics `report --measured` compares against),
`sectorviz sweep FILE` (sweep.py), `sectorviz batch FILES...` (batch.py), `sectorviz check
FILES...` (check.py), `sectorviz new KERNEL.cu` (new.py) and `sectorviz --install-desktop` /
`--uninstall-desktop` (the desktop entry and icons in the user's XDG data folder, desktop.py).

Bad input of any kind exits with status 2 and one line on stderr naming the file and place,
an output that cannot be written (sectorviz.atomic.OutputError) too, naming that file;
anything else that goes wrong (a bug) exits 2 with 'FILE: internal error: KIND; please report'.
Output that a terminal cannot encode (a lone surrogate in a name) is written as \\ escapes.
Ctrl-C (SIGINT) and SIGTERM end a command with the one line 'interrupted' and exit status
130 / 143 (128 + the signal), temporary files removed; a standard output that cannot be
written (a full disk, /dev/full) is one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, NamedTuple

from ..atomic import OutputError
from ..exits import Terminated, UsageError, fail, interrupted_status
from ..model.errors import internal_error
from ..model.measured import METRICS
from ..paths import default_example
from .flags import OutputFailed, guarded_stdout, quiet_stdout, terminable


def main(argv: list[str] | None = None) -> int:
    """The command line `argv` (None: the process's) -> its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    escape_unencodable_output()
    try:
        with terminable(), guarded_stdout():
            return _command(argv)
    except (KeyboardInterrupt, Terminated) as err:
        fail("interrupted")
        status = interrupted_status(type(err))
        assert status is not None  # the status of an interruption
        return status
    except OutputFailed as err:
        quiet_stdout()
        return fail(f"sectorviz: cannot write the output: {err}")
    except BrokenPipeError:  # the reader stopped reading (`report FILE | head`): not an error
        quiet_stdout()
        return 1


class Command(NamedTuple):
    """A subcommand: its run (the arguments after its name -> exit status), its parser, and
    the (first) FILE its parsed arguments name."""

    run: Callable[[list[str]], int]
    parser: Callable[[], argparse.ArgumentParser]
    file: Callable[[argparse.Namespace], str]


def _commands() -> dict[str, Command]:
    """The subcommands by name (imported once a command line names one: the app starts
    without them)."""
    from . import batch, check, compare, export, new, report, sweep

    def one(args: argparse.Namespace) -> str:
        return str(args.file)

    def first(args: argparse.Namespace) -> str:
        return str(args.files[0])

    return {"report": Command(report.run_report, report.report_parser, one),
            "export": Command(export.run_export, export.export_parser, one),
            "compare": Command(compare.run_compare, compare.compare_parser, one),
            "sweep": Command(sweep.run_sweep, sweep.sweep_parser, one),
            "batch": Command(batch.run_batch, batch.batch_parser, first),
            "check": Command(check.run_check, check.check_parser, first),
            "new": Command(new.run_new, new.new_parser, one)}


SUBCOMMANDS = ("report", "export", "compare", "sweep", "batch", "check", "new")
DESKTOP_FLAGS = ("--install-desktop", "--uninstall-desktop")  # desktop.INSTALL, UNINSTALL


def _command(argv: list[str]) -> int:
    """Run the command `argv` names -> its exit status."""
    try:
        if argv[:1] == ["ncu-metrics"]:
            print(",".join(METRICS))
            return 0
        if argv[:1] and argv[0] in SUBCOMMANDS:
            return _commands()[argv[0]].run(argv[1:])
        if argv[:1] and argv[0] in DESKTOP_FLAGS:
            from .desktop import run_desktop
            return run_desktop(argv)
        return _run_app(argv)
    except (UsageError, OutputError) as err:
        return fail(str(err))
    except (BrokenPipeError, OutputFailed):
        raise
    except Exception as err:  # the last line of defence: no input ever gets a traceback
        return fail(f"{file_argument(argv)}: {internal_error(err)}")


def _run_app(argv: list[str]) -> int:
    """The app (command/app.py); without Qt, the report of FILE (or of the default example)."""
    try:
        from .app import run_app
    except ImportError:
        from .report import run_report
        return run_report([str(default_example()) if not argv else argv[0]])
    return run_app(argv)


def escape_unencodable_output() -> None:
    """stdout and stderr write what their encoding cannot hold (a lone surrogate from a
    '\\ud800' escape in a pattern's JSON) as backslash escapes instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def file_argument(argv: list[str]) -> str:
    """The FILE a command line names (what an internal error line starts with), or
    'sectorviz' when the line names none or cannot be parsed."""
    try:
        if argv[:1] and argv[0] in SUBCOMMANDS:
            command = _commands()[argv[0]]
            return command.file(command.parser().parse_known_args(argv[1:])[0])
    except Exception:  # noqa: BLE001 - a line that cannot be parsed names no file
        pass
    return "sectorviz"
