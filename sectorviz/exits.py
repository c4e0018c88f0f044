"""How a command or the app ends: the exit status for bad input (2) with its one line on
stderr, and the status of an interruption (128 + the signal: 130 for Ctrl-C, 143 for
SIGTERM). Shared by the command line (sectorviz.command) and the app's window (ui/app.py);
on the model only."""

from __future__ import annotations

import signal
import sys

from .model.errors import printable

EXIT_BAD_INPUT = 2


class UsageError(Exception):
    """A bad command line; the message is one line."""


class Terminated(BaseException):
    """SIGTERM, raised where the command is (like KeyboardInterrupt for SIGINT), so that
    what it was writing is cleaned up on the way out."""


def interrupted_status(kind: type[BaseException]) -> int | None:
    """The exit status of an interruption (130 for Ctrl-C, 143 for SIGTERM: 128 + the
    signal), None for any other exception kind."""
    if issubclass(kind, KeyboardInterrupt):
        return 128 + signal.SIGINT
    if issubclass(kind, Terminated):
        return 128 + signal.SIGTERM
    return None


def fail(message: str) -> int:
    """Print `message` on stderr as one line (newlines and other unprintable characters, as
    in a file name typed on the command line, written as escapes) -> EXIT_BAD_INPUT."""
    print(printable(message) if message else "error", file=sys.stderr)
    return EXIT_BAD_INPUT
