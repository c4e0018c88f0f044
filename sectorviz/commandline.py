"""Command-line helpers shared by `sectorviz report`, `sectorviz export` and the app's
arguments: one-line argument errors, the exit status for bad input (2), the --budget flag."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .model import PatternError
from .model.budget import DEFAULT_WORK, Budget, parse_units
from .model.errors import printable

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """A bad command line; the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one-line UsageErrors instead of exits."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}")


def fail(message: str) -> int:
    """Print `message` on stderr as one line (newlines and other unprintable characters, as
    in a file name typed on the command line, written as escapes) -> EXIT_BAD_INPUT."""
    print(printable(message) if message else "error", file=sys.stderr)
    return EXIT_BAD_INPUT


def pattern_error_line(path: str | Path, err: PatternError) -> str:
    """A pattern's error as the one line users see: 'FILE: place: message'."""
    return f"{path}: {err}"


def add_budget_flag(p: argparse.ArgumentParser) -> None:
    """`--budget N`: the run's work limit in units (lane-executions and interpreter steps)."""
    p.add_argument("--budget", type=_units, metavar="N",
                   help=f"work limit in units: lane-executions of accesses plus interpreter "
                        f"steps (default {DEFAULT_WORK:,} = 2^28, about 10 s; e.g. 2^32, 1e10)")


def _units(text: str) -> int:
    try:
        return parse_units(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def run_budget(args: argparse.Namespace) -> Budget:
    """The work budget of one command: --budget N, or the default."""
    return Budget(args.budget) if args.budget else Budget()
