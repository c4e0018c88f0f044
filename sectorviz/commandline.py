"""Command-line helpers shared by `sectorviz report`, `sectorviz export` and the app's
arguments: one-line argument errors and the exit status for bad input (2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .model import PatternError

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """A bad command line; the message is one line."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one-line UsageErrors instead of exits."""

    def error(self, message: str):
        raise UsageError(f"{self.prog}: {message}")


def fail(message: str) -> int:
    """Print the first line of `message` on stderr -> EXIT_BAD_INPUT."""
    print(message.splitlines()[0] if message else "error", file=sys.stderr)
    return EXIT_BAD_INPUT


def pattern_error_line(path: str | Path, err: PatternError) -> str:
    """A pattern's error as the one line users see: 'FILE: place: message'."""
    return f"{path}: {err}"
