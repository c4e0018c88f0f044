"""The `sweep`, `batch` and `check` subcommands by name, for sectorviz.cli's dispatch."""

from __future__ import annotations

import argparse
from typing import Callable


def _commands() -> dict[str, tuple[Callable[[list[str]], int],
                                   Callable[[], argparse.ArgumentParser]]]:
    from .batch import batch_parser, run_batch
    from .check import check_parser, run_check
    from .command import run_sweep, sweep_parser
    return {"sweep": (run_sweep, sweep_parser), "batch": (run_batch, batch_parser),
            "check": (run_check, check_parser)}


def run_command(name: str, argv: list[str]) -> int:
    """Run subcommand `name` ('sweep', 'batch' or 'check') on `argv` -> exit status."""
    return _commands()[name][0](argv)


def file_named(name: str, argv: list[str]) -> str:
    """The (first) file a `name` command line names, for an internal error's line."""
    args = _commands()[name][1]().parse_known_args(argv)[0]
    return args.file if name == "sweep" else args.files[0]
