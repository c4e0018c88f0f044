"""Command-line helpers shared by the commands (report, export, compare, sweep, batch, check)
and the app's arguments: one-line argument errors (their exit status: sectorviz.exits), the
--budget flag, the cache model's --machine, --l2-bytes and --order flags, --include-dir, a
CUDA kernel's --engine and --arch; how a command ends when interrupted (SIGINT, SIGTERM) or
when its standard output cannot be written."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TextIO, TypeVar

from ..exits import Terminated, UsageError
from ..model import Pattern, PatternError, pattern_from_dict
from ..model.budget import DEFAULT_WORK, Budget, parse_units
from ..model.cache import ORDERS, PRESETS
from ..model.pattern import ENGINES, LEVELS, with_kernel

T = TypeVar("T")


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one-line UsageErrors instead of exits."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def pattern_error_line(path: str | Path, err: PatternError) -> str:
    """A pattern's error as the one line users see: 'FILE: place: message', FILE the
    kernel's .cu for an error in it."""
    return f"{err.file or path}: {err}"


def add_budget_flag(p: argparse.ArgumentParser) -> None:
    """`--budget N`: the run's work limit in units (lane-executions and PTX steps)."""
    p.add_argument("--budget", type=_units, metavar="N",
                   help=f"work limit in units: lane-executions of accesses plus interpreter "
                        f"steps (default {DEFAULT_WORK:,} = 2^28, about 10 s; e.g. 2^32, 1e10)")


def add_standalone_flag(p: argparse.ArgumentParser) -> None:
    """`--standalone`: a .tex output as a whole document (export/latex_document.py)."""
    p.add_argument("--standalone", action="store_true",
                   help="with a .tex OUT: a whole document that pdflatex compiles on its own "
                        "(a diagram in the standalone class, a sheet in an article)")


def standalone_problem(args: argparse.Namespace, command: str, suffix: str | None) -> None:
    """UsageError when --standalone is given for an output that is not .tex."""
    if args.standalone and suffix != ".tex":
        raise UsageError(f"sectorviz {command}: --standalone writes a .tex document, not "
                         f"{suffix or 'a file without suffix'}")


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
    return pattern_from_dict(doc, pattern.base_dir, pattern.include_dirs)


def add_include_flag(p: argparse.ArgumentParser) -> None:
    """`--include-dir DIR` (repeatable): a folder outside the pattern's root whose files its
    kernel source, includes and values files may also read."""
    p.add_argument("--include-dir", type=_folder, action="append", default=[], metavar="DIR",
                   help="also read the pattern's #includes (searched last), kernel source or "
                        "values files from DIR; by default only the pattern's folder (or its "
                        "repository) is read")


def _folder(text: str) -> str:
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    return os.path.abspath(text)


class OutputFailed(Exception):
    """Standard output could not be written (not a closed pipe: that is BrokenPipeError)."""


def _terminate(_signum: int, _frame: FrameType | None) -> None:
    raise Terminated


@contextlib.contextmanager
def terminable() -> Iterator[None]:
    """SIGTERM raises Terminated while the command runs (in the main thread only)."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _GuardedStdout:
    """Standard output whose failures (other than a closed pipe) raise OutputFailed, told
    apart from every other OSError."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._guarded(self._stream.write, text)

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    @staticmethod
    def _guarded(call: Callable[..., T], *args: object) -> T:
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise OutputFailed(err.strerror or str(err)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """sys.stdout guarded (_GuardedStdout) while a command runs, and flushed at its end."""
    stream = sys.stdout
    sys.stdout = _GuardedStdout(stream)
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = stream


def quiet_stdout() -> None:
    """Point standard output at the null device, so the exit's flush is silent."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def add_engine_flags(p: argparse.ArgumentParser) -> None:
    """`--engine compiled|source` and `--arch sm_NN`: how a CUDA kernel pattern is read
    (over its `kernel.engine` and `kernel.arch` keys)."""
    p.add_argument("--engine", choices=ENGINES,
                   help="a CUDA kernel's counts: compiled (the PTX nvcc emits, -O3) or source "
                        "(as written); default: the pattern's kernel.engine, else "
                        "$SECTORVIZ_ENGINE, else compiled where nvcc is found, else source")
    p.add_argument("--level", choices=LEVELS,
                   help="what the compiled engine counts: sass (the machine code ptxas makes "
                        "of the PTX) or ptx; default: the pattern's kernel.level, else sass "
                        "where ptxas and nvdisasm are found, else ptx")
    p.add_argument("--arch", metavar="sm_NN",
                   help="the compiled engine's architecture (default: the pattern's "
                        "kernel.arch, else sm_90)")


def with_engine(pattern: Pattern, args: argparse.Namespace) -> Pattern:
    """`pattern` with its kernel's engine and architecture set by --engine and --arch."""
    pattern = with_kernel(pattern, "--engine", engine=args.engine)
    pattern = with_kernel(pattern, "--level", level=args.level)
    return with_kernel(pattern, "--arch", arch=args.arch)


PROGRESS_DELAY_S = 1.0  # a run shorter than this shows no progress bar


@contextlib.contextmanager
def progress_bar(quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress(done_warps, total_warps) callback drawing a bar on stderr once a run has
    taken a second; None with `quiet` or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm
    with tqdm(unit=" warps", unit_scale=True, delay=PROGRESS_DELAY_S, leave=False,
              file=sys.stderr) as bar:
        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)
        yield progress
