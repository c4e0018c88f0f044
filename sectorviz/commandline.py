"""Command-line helpers shared by `sectorviz report`, `sectorviz export` and the app's
arguments: one-line argument errors, the exit status for bad input (2), the --budget flag,
the cache model's --machine, --l2-bytes and --order flags, a CUDA kernel's --engine and
--arch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .model import Pattern, PatternError, pattern_from_dict
from .model.budget import DEFAULT_WORK, Budget, parse_units
from .model.cache import ORDERS, PRESETS
from .model.errors import printable
from .model.pattern import ENGINES, with_kernel

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


def add_machine_flags(p: argparse.ArgumentParser) -> None:
    """`--machine NAME`, `--l2-bytes N`, `--order ORDER`: the cache model's machine, over
    the pattern's `machine` key (each flag overrides that key)."""
    p.add_argument("--machine", choices=list(PRESETS), metavar="NAME",
                   help=f"estimate DRAM bytes with the L2 model of a GPU: {', '.join(PRESETS)}")
    p.add_argument("--l2-bytes", type=int, metavar="N", help="the model's L2 size in bytes")
    p.add_argument("--order", choices=ORDERS,
                   help="the order requests reach the L2: warp-serial (default) or waves")


def with_machine(pattern: Pattern, args: argparse.Namespace) -> Pattern:
    """`pattern` with its `machine` key overridden by the flags given."""
    flags = {key: value for key, value in (("preset", args.machine),
                                           ("l2_bytes", args.l2_bytes), ("order", args.order))
             if value is not None}
    if not flags:
        return pattern
    doc = pattern.to_dict()
    if "machine" not in doc and args.machine is None:
        flag = "--l2-bytes" if args.l2_bytes is not None else "--order"
        raise PatternError(flag, "needs --machine NAME (or a 'machine' key in the pattern)")
    doc["machine"] = {**doc.get("machine", {}), **flags}
    return pattern_from_dict(doc, pattern.base_dir)


def add_engine_flags(p: argparse.ArgumentParser) -> None:
    """`--engine compiled|source` and `--arch sm_NN`: how a CUDA kernel pattern is read
    (over its `kernel.engine` and `kernel.arch` keys)."""
    p.add_argument("--engine", choices=ENGINES,
                   help="a CUDA kernel's counts: compiled (the PTX nvcc emits, -O3) or source "
                        "(as written); default: the pattern's kernel.engine, else "
                        "$SECTORVIZ_ENGINE, else compiled where nvcc is found, else source")
    p.add_argument("--arch", metavar="sm_NN",
                   help="the compiled engine's architecture (default: the pattern's "
                        "kernel.arch, else sm_90)")


def with_engine(pattern: Pattern, args: argparse.Namespace) -> Pattern:
    """`pattern` with its kernel's engine and architecture set by --engine and --arch."""
    pattern = with_kernel(pattern, "--engine", engine=args.engine)
    return with_kernel(pattern, "--arch", arch=args.arch)
