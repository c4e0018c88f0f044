"""Command line: `sectorviz [FILE]` (the app), `sectorviz report FILE`, `sectorviz export FILE`,
`sectorviz compare A B` (compare_cli.py), `sectorviz ncu-metrics` (the Nsight Compute metrics
`report --measured` compares against), `sectorviz sweep FILE`, `sectorviz batch FILES...` and
`sectorviz check FILES...` (sectorviz.sweep).

Bad input of any kind exits with status 2 and one line on stderr naming the file and place;
anything else that goes wrong (a bug) exits 2 with 'FILE: internal error: KIND; please report'.
Output that a terminal cannot encode (a lone surrogate in a name) is written as \\ escapes.
Ctrl-C (SIGINT) and SIGTERM end a command with the one line 'interrupted' and exit status
130 / 143 (128 + the signal), temporary files removed; a standard output that cannot be
written (a full disk, /dev/full) is one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from .commandline import (
    OneLineParser,
    OutputFailed,
    Terminated,
    UsageError,
    add_budget_flag,
    add_engine_flags,
    add_include_flag,
    add_machine_flags,
    fail,
    guarded_stdout,
    interrupted_status,
    pattern_error_line,
    progress_bar,
    quiet_stdout,
    run_budget,
    terminable,
    with_engine,
    with_machine,
)
from .export.report_json import report_json
from .export.sheets import sheet_text
from .model import Pattern, PatternError, analyze, load_pattern, warp_detail
from .model.budget import Budget
from .model.compiler_changes import CompilerChanges, compiler_changes
from .model.detail import warp_json
from .model.errors import internal_error, printable_lines
from .model.frontend import kernel_for
from .model.measured import METRICS, Measured, compare, read_ncu_csv
from .paths import default_example
from .scene.explain import explanations, shared_explanations
from .scene.sheet import accounting_sheet


def report_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz report",
                      description="Print the accounting sheet of a pattern.")
    p.add_argument("file", help="a *.sectorviz.json pattern file")
    p.add_argument("--json", action="store_true", help="print the sheet as JSON")
    p.add_argument("--warp", type=int, metavar="N",
                   help="add warp N's per-lane detail (0-based, in launch order)")
    add_budget_flag(p)
    add_machine_flags(p)
    add_include_flag(p)
    add_engine_flags(p)
    p.add_argument("--measured", metavar="CSV",
                   help="compare with Nsight Compute: a CSV from `ncu --csv --page raw "
                        "--metrics $(sectorviz ncu-metrics)`")
    p.add_argument("--kernel", metavar="NAME",
                   help="the kernel's name in the CSV (default: the pattern's kernel function)")
    p.add_argument("--launch", type=int, default=0, metavar="K",
                   help="0-based launch of that kernel in the CSV (default 0)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (there is none when stderr is not a terminal)")
    p.add_argument("--explain", action="store_true",
                   help="end with why each instruction costs what it costs, in warp N "
                        "(--warp, default 0)")
    return p


def run_report(argv: list[str]) -> int:
    args = report_parser().parse_args(argv)
    budget = run_budget(args)
    try:
        pattern = with_engine(with_machine(load_pattern(args.file, tuple(args.include_dir)),
                                           args), args)
        with progress_bar(args.quiet) as progress:
            analysis = analyze(pattern, progress=progress, budget=budget)
        detail = None
        if args.warp is not None:
            warps = kernel_for(pattern).warps
            if not 0 <= args.warp < warps:
                raise PatternError("--warp", f"warp {args.warp} outside [0, {warps})")
            detail = warp_detail(pattern, args.warp, budget)
        measured = _measured(args, pattern, analysis) if args.measured else None
        why = (_why_text(pattern, args.warp or 0, budget, compiler_changes(pattern, analysis))
               if args.explain and not args.json else None)
        doc = report_json(pattern, analysis, args.warp, budget) if args.json else None
        changes = compiler_changes(pattern, analysis) if doc is None else None
        listing = (_warp_text(warp_json(pattern, detail)) if detail is not None and doc is None
                   else None)  # made before anything is printed: it may be refused
    except PatternError as err:
        return fail(pattern_error_line(args.file, err))
    if doc is not None:
        if measured is not None:
            doc["measured"] = [asdict(m) for m in measured]
        print(json.dumps(doc, indent=2))
    else:
        print(sheet_text(accounting_sheet(pattern, analysis, args.warp or 0,
                                          changes=changes)), end="")
        if listing is not None:
            print()
            print(listing)
        if measured is not None:
            print()
            print(_measured_text(args.measured, measured))
        if why is not None:
            print()
            print(why)
    return 0


def _why_text(pattern: Pattern, warp: int, budget: Budget,
              changes: CompilerChanges | None) -> str:
    """`report --explain`: each instruction's explanation in `warp` and what the compiler
    changed on its line, one paragraph each (lines safe for a terminal)."""
    kernel = kernel_for(pattern)
    words = explanations(pattern, warp_detail(pattern, warp, budget))
    lines = [f"Why (warp {warp})"]
    for k, (ins, why) in enumerate(zip(kernel.instructions, words)):
        said = changes.words_for(k) if changes is not None else ""
        lines += [f"  {ins.name}", f"      {why}" + (f" {said}" if said else "")]
    for ins, why in zip(kernel.shared_instructions, shared_explanations(pattern, warp)):
        lines += [f"  {ins.name} (shared)", f"      {why}"]
    return printable_lines(lines)


def _measured(args: argparse.Namespace, pattern, analysis) -> tuple[Measured, ...]:
    """The boundaries against launch --launch of the kernel in the --measured CSV."""
    return compare(pattern, analysis, read_ncu_csv(args.measured), args.kernel, args.launch)


def _measured_text(path: str, rows: tuple[Measured, ...]) -> str:
    lines = [f"predicted against measured ({path}); ratio = measured / predicted"]
    for m in rows:
        ratio = "-" if m.ratio is None else f"{m.ratio:.3f}"
        lines.append(f"  {m.boundary:40s} predicted {m.predicted_bytes:>14,} B  measured "
                     f"{m.measured_bytes:>16,.0f} B  ratio {ratio}  ({m.metric})")
    if not rows:
        lines.append("  the CSV holds none of the boundaries' metrics (see sectorviz ncu-metrics)")
    return printable_lines(lines)


def _warp_text(doc: dict) -> str:
    lines = [f"warp {doc['warp']} (block {tuple(doc['block'])})"]
    for ins in doc["instructions"]:
        for ex in ins["executions"]:
            it = ", ".join(f"{k}={v}" for k, v in ex["iteration"].items())
            lines.append(f"  {ins['name']}{' [' + it + ']' if it else ''}: {ex['sectors']} sectors")
            for lane in ex["lanes"]:
                if not lane["active"]:
                    lines.append(f"    lane {lane['lane']:2d}  inactive")
                    continue
                where = (f"({lane['row']}, {lane['col']})" if "row" in lane
                         else f"[{lane['element']}]")
                lines.append(f"    lane {lane['lane']:2d}  thread {tuple(lane['thread'])}  "
                             f"{where}  address {lane['address']}  sectors {lane['sectors']}")
    return printable_lines(lines)


def run_app(argv: list[str]) -> int:
    try:
        from .ui.app import main as app_main
    except ImportError:
        return run_report([str(default_example()) if not argv else argv[0]])
    if "--smoke-test" in argv:
        from .smoke import run_smoke_test
        return app_main(argv, run_smoke_test)
    return app_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    escape_unencodable_output()
    try:
        with terminable(), guarded_stdout():
            return _command(argv)
    except (KeyboardInterrupt, Terminated) as err:
        fail("interrupted")
        return interrupted_status(type(err))
    except OutputFailed as err:
        quiet_stdout()
        return fail(f"sectorviz: cannot write the output: {err}")
    except BrokenPipeError:  # the reader stopped reading (`report FILE | head`): not an error
        quiet_stdout()
        return 1


def _command(argv: list[str]) -> int:
    """Run the command `argv` names -> its exit status."""
    try:
        if argv[:1] == ["report"]:
            return run_report(argv[1:])
        if argv[:1] == ["export"]:
            from .export.command import run_export
            return run_export(argv[1:])
        if argv[:1] == ["ncu-metrics"]:
            print(",".join(METRICS))
            return 0
        if argv[:1] == ["compare"]:
            from .compare_cli import run_compare
            return run_compare(argv[1:])
        if argv[:1] in (["sweep"], ["batch"], ["check"]):
            from .sweep.commands import run_command
            return run_command(argv[0], argv[1:])
        return run_app(argv)
    except UsageError as err:
        return fail(str(err))
    except (BrokenPipeError, OutputFailed):
        raise
    except Exception as err:  # the last line of defence: no input ever gets a traceback
        return fail(f"{file_argument(argv)}: {internal_error(err)}")


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
        if argv[:1] == ["report"]:
            return report_parser().parse_known_args(argv[1:])[0].file
        if argv[:1] == ["export"]:
            from .export.command import export_parser
            return export_parser().parse_known_args(argv[1:])[0].file
        if argv[:1] == ["compare"]:
            from .compare_cli import compare_parser
            return compare_parser().parse_known_args(argv[1:])[0].file
        if argv[:1] in (["sweep"], ["batch"], ["check"]):
            from .sweep.commands import file_named
            return file_named(argv[0], argv[1:])
    except Exception:  # noqa: BLE001 - a line that cannot be parsed names no file
        pass
    return "sectorviz"


if __name__ == "__main__":
    sys.exit(main())
