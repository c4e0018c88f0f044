"""`sectorviz report FILE`: the accounting sheet of a pattern (scene.sheet), or with --json the
`report --json` document (export/report_json.py); FILE may be a bare .cu, reported from its
host launch (host/starter.py; one line on stderr says what was guessed, --kernel picks one of
several kernels); --warp N adds warp N's per-lane detail,
--measured CSV the boundaries against an Nsight Compute CSV, --explain why each instruction
costs what it costs. Bad input: exit 2, one line naming the file and place."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..exits import fail
from ..export.report_json import report_json
from ..export.sheets import sheet_text
from ..gather.explain import explanations, shared_explanations
from ..gather.sheet import accounting_sheet
from ..host.starter import cu_pattern
from ..model import (
    Analysis,
    Pattern,
    PatternError,
    analyze,
    load_pattern,
    warp_detail,
)
from ..model.assume import assuming, stated
from ..model.budget import Budget
from ..model.compiler_changes import compiler_changes
from ..model.detail import warp_json
from ..model.elide import elided
from ..model.errors import printable
from ..model.listing import listing_of
from ..model.measured import Measured, compare, read_ncu_csv
from ..model.pattern import ASSUME_KINDS
from ..model.values import CompilerChanges
from ..scene.fit import fitted
from .flags import (
    OneLineParser,
    add_budget_flag,
    add_engine_flags,
    add_include_flag,
    add_machine_flags,
    pattern_error_line,
    progress_bar,
    run_budget,
    with_engine,
    with_machine,
)
from .written_ahead import WrittenAhead


def report_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz report",
                      description="Print the accounting sheet of a pattern.")
    p.add_argument("file", help="a *.sectorviz.json pattern file, or a .cu reported from its "
                                "host code's launch")
    p.add_argument("--json", action="store_true", help="print the sheet as JSON")
    p.add_argument("--assume-values", choices=ASSUME_KINDS,
                   help="give arrays a kernel's addresses or branches need and the pattern "
                        "does not give stated random values (seeded; the report names them)")
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
                   help="the kernel's name in the CSV (default: the pattern's kernel "
                        "function); for a .cu, also the kernel to report")
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
    guessed = ""
    ahead: WrittenAhead | None = None
    try:
        loaded, guessed = _loaded(args)
        pattern = with_engine(with_machine(loaded, args), args)
        ahead = WrittenAhead(pattern)  # the report compares the reading as written
        with progress_bar(args.quiet) as progress:
            pattern, analysis, assumed = assuming(
                pattern, args.assume_values or pattern.assume_values,
                lambda p: analyze(p, progress=progress, budget=budget))
        compiler_changes(pattern, analysis, lambda: ahead.result(pattern))  # kept in the cache
        detail = None
        if args.warp is not None:
            warps = listing_of(pattern).warps
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
        if ahead is not None:
            ahead.close()  # the reading as written is not wanted
        about_sizes = not err.place.startswith("--") and (
            "outside" in err.message or err.place.startswith(("launch", "arrays")))
        return fail(pattern_error_line(args.file, err) + (guessed if about_sizes else ""))
    if doc is not None:
        if measured is not None:
            doc["measured"] = [asdict(m) for m in measured]
        if assumed:
            doc["assumed_values"] = assumed
        print(json.dumps(doc, indent=2))
    else:
        for line in stated(assumed):
            print(printable(line))
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


def _loaded(args: argparse.Namespace) -> tuple[Pattern, str]:
    """The pattern FILE names: a pattern file, or the starting pattern of a .cu's kernel
    (--kernel), what it took from the host code said in one line on stderr; and, for a .cu
    whose launch or lengths were guessed, the hint an error ends with (what to change,
    where)."""
    include_dirs = tuple(args.include_dir)
    if not args.file.lower().endswith(".cu"):
        return load_pattern(args.file, include_dirs), ""
    pattern, said, hint = cu_pattern(Path(args.file), include_dirs, args.kernel)
    print(said, file=sys.stderr)
    return pattern, hint


def _why_text(pattern: Pattern, warp: int, budget: Budget,
              changes: CompilerChanges | None) -> str:
    """`report --explain`: each instruction's explanation in `warp` and what the compiler
    changed on its line, one paragraph each (lines safe for a terminal)."""
    kernel = listing_of(pattern)
    words = explanations(pattern, warp_detail(pattern, warp, budget))
    lines = [f"Why (warp {warp})"]
    for k, (ins, why) in enumerate(zip(kernel.instructions, words)):
        said = changes.words_for(k) if changes is not None else ""
        lines += [f"  {elided(ins.name)}", f"      {why}" + (f" {said}" if said else "")]
    for ins, why in zip(kernel.shared_instructions, shared_explanations(pattern, warp)):
        lines += [f"  {elided(ins.name)} (shared)", f"      {why}"]
    return fitted(lines)


def _measured(args: argparse.Namespace, pattern: Pattern, analysis: Analysis
              ) -> tuple[Measured, ...]:
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
    return fitted(lines)


def _warp_text(doc: dict[str, Any]) -> str:
    lines = [f"warp {doc['warp']} (block {tuple(doc['block'])})"]
    for ins in doc["instructions"]:
        for ex in ins["executions"]:
            it = ", ".join(f"{k}={v}" for k, v in ex["iteration"].items())
            lines.append(f"  {elided(ins['name'])}{' [' + it + ']' if it else ''}: "
                         f"{ex['sectors']} sectors")
            for lane in ex["lanes"]:
                if not lane["active"]:
                    lines.append(f"    lane {lane['lane']:2d}  inactive")
                    continue
                where = (f"({lane['row']}, {lane['col']})" if "row" in lane
                         else f"[{lane['element']}]")
                lines.append(f"    lane {lane['lane']:2d}  thread {tuple(lane['thread'])}  "
                             f"{where}  address {lane['address']}  sectors {lane['sectors']}")
    return fitted(lines)
