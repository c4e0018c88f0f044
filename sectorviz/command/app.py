"""`sectorviz [FILE] [--warp N] [--instruction K] [--theme T] [--compare B] [--present]
[--engine E] [--include-dir DIR]... [--screenshot OUT.png]`: the app. `--include-dir` adds a
folder whose files patterns may read (as for `report`), before those of Settings > Include
Folders…. `--engine compiled|source` reads every CUDA
kernel pattern of the session with that engine (as SECTORVIZ_ENGINE does; a pattern's own
`kernel.engine` still wins).

N is the 0-based global warp in launch order; K the 0-based instruction index in program
order (the global instructions, then the shared ones), or its name. With --screenshot the window
(default size and layout, the light theme unless --theme says otherwise) is saved as a PNG once it
is drawn and the grid-wide analysis has arrived, then the app exits 0. Bad input: one line on
stderr, exit 2, except a FILE that cannot be opened without --screenshot: its line goes to stderr
and the window opens (on the default example) with the error in its status bar, a broken kernel in
its Kernel tab, or for a .cu the offer to make a pattern for it. Anything else that
goes wrong (a bug) is one line too, 'FILE: internal error: KIND; please report': before the
window opens it exits 2; once it is open the line also shows in the status bar and the
document stays as it was (a --screenshot run then exits 2).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ..exits import UsageError, fail
from ..model.errors import internal_error
from ..model.pattern import ENGINES
from ..ui.app import run
from ..ui.theme import THEMES
from .flags import OneLineParser, add_include_flag


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz", description="See which 32-byte sectors each lane of a warp "
                                              "touches, and count them for the whole grid.",
                epilog="Without a display: `sectorviz report FILE` prints the accounting sheet, "
                       "`sectorviz export FILE -o OUT` writes diagrams and sheets.")
    p.add_argument("file", nargs="?", help="a *.sectorviz.json pattern, or a .cu (default: "
                                           "vector add)")
    p.add_argument("--kernel", metavar="NAME",
                   help="with a .cu FILE and --screenshot, --warp, --instruction, --compare "
                        "or --present: the kernel to open (its name or one instantiation, "
                        "'offset<float>'), from its host launch as `sectorviz new` makes it")
    p.add_argument("--warp", type=int, default=0, metavar="N",
                   help="0-based global warp, in launch order")
    p.add_argument("--instruction", metavar="K",
                   help="0-based instruction index in program order (global ones, then "
                        "shared ones), or its name (default: the first, if the kernel has one)")
    p.add_argument("--theme", choices=sorted(THEMES), help="colour theme for this run")
    p.add_argument("--compare", metavar="B", help="open pattern file B in the compare window "
                                                  "beside FILE")
    p.add_argument("--present", action="store_true",
                   help="start in presentation mode (full screen; Esc leaves)")
    p.add_argument("--engine", choices=ENGINES,
                   help="how CUDA kernels are counted this session: compiled (the PTX nvcc "
                        "emits) or source (as written)")
    p.add_argument("--screenshot", metavar="OUT.png",
                   help="save the window (the compare window with --compare, the "
                        "presentation with --present) as a PNG and exit")
    add_include_flag(p)
    p.add_argument("--smoke-test", metavar="DIR",
                   help="run the self-test session, write DIR/smoke.json and exit (0: all ok)")
    return p


def main(argv: list[str], self_test: Callable[[str], int] | None = None) -> int:
    """The app on `argv`; `self_test(DIR)` runs `--smoke-test DIR` (sectorviz.smoke, which
    the command line passes: the UI never imports the smoke test that drives it)."""
    try:
        args = parser().parse_args(argv)
    except UsageError as err:
        return fail(str(err))
    hook = sys.excepthook
    try:
        return run(args, self_test)
    except Exception as err:  # the last line of defence: one line, never a traceback
        return fail(f"{args.file or 'sectorviz'}: {internal_error(err)}")
    finally:
        sys.excepthook = hook  # the window's ErrorReporter reports only while it runs


def run_app(argv: list[str]) -> int:
    """The app on `argv`, with the self-test session for --smoke-test (sectorviz.smoke)."""
    if "--smoke-test" in argv:
        from ..smoke import run_smoke_test
        return main(argv, run_smoke_test)
    return main(argv)
