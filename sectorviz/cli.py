"""Command line: `sectorviz [FILE]` (the app), `sectorviz report FILE`, `sectorviz export FILE`.

Bad input of any kind exits with status 2 and one line on stderr naming the file and place.
"""

from __future__ import annotations

import argparse
import json
import sys

from .commandline import OneLineParser, UsageError, fail, pattern_error_line
from .export.escape import plain_text
from .export.sheets import sheet_text
from .model import PatternError, analyze, load_pattern, warp_detail
from .model.analysis import kernel_for
from .model.detail import warp_json
from .paths import default_example
from .scene.sheet import accounting_sheet


def report_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz report",
                      description="Print the accounting sheet of a pattern.")
    p.add_argument("file", help="a *.sectorviz.json pattern file")
    p.add_argument("--json", action="store_true", help="print the sheet as JSON")
    p.add_argument("--warp", type=int, metavar="N",
                   help="add warp N's per-lane detail (0-based, in launch order)")
    return p


def run_report(argv: list[str]) -> int:
    args = report_parser().parse_args(argv)
    try:
        pattern = load_pattern(args.file)
        analysis = analyze(pattern)
        detail = None
        if args.warp is not None:
            warps = kernel_for(pattern).warps
            if not 0 <= args.warp < warps:
                raise PatternError("--warp", f"warp {args.warp} outside [0, {warps})")
            detail = warp_detail(pattern, args.warp)
    except PatternError as err:
        return fail(pattern_error_line(args.file, err))
    if args.json:
        doc = analysis.to_json()
        if detail is not None:
            doc["warp"] = warp_json(pattern, detail)
        print(json.dumps(doc, indent=2))
    else:
        print(sheet_text(accounting_sheet(pattern, analysis, args.warp or 0)), end="")
        if detail is not None:
            print()
            print(plain_text(_warp_text(warp_json(pattern, detail))))
    return 0


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
    return "\n".join(lines)


def run_app(argv: list[str]) -> int:
    try:
        from .ui.app import main as app_main
    except ImportError:
        return run_report([str(default_example()) if not argv else argv[0]])
    return app_main(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["report"]:
            return run_report(argv[1:])
        if argv[:1] == ["export"]:
            from .export.command import run_export
            return run_export(argv[1:])
        return run_app(argv)
    except UsageError as err:
        return fail(str(err))


if __name__ == "__main__":
    sys.exit(main())
