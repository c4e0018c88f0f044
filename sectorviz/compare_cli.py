"""`sectorviz compare A B`: the side-by-side sheet of two patterns (scene.compare), or with
--json {"a": A's report, "b": B's report, "warp", "instructions": matched pairs with ratios,
"totals"}, where each report is exactly what `sectorviz report FILE --json` prints (with
--warp N: `report FILE --json --warp N`). Bad input: exit 2, one line naming the file.
"""

from __future__ import annotations

import argparse
import json

from .cli import progress_bar, report_json
from .commandline import OneLineParser, add_budget_flag, fail, pattern_error_line, run_budget
from .export.sheets import sheet_text
from .model import PatternError, analyze, load_pattern, warp_detail
from .model.analysis import instruction_index, kernel_for
from .model.budget import Budget
from .scene.compare import Comparison, Pair, Side, comparison_sheet, match_instructions


def compare_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz compare",
                      description="Compare two patterns: matched instructions, ratios, why.")
    p.add_argument("file", help="A: the pattern before (a *.sectorviz.json file)")
    p.add_argument("other", help="B: the pattern after")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--warp", type=int, metavar="N",
                   help="the warp whose sectors and explanations are shown (default 0)")
    p.add_argument("--instruction", metavar="K",
                   help="only A's instruction K (0-based index or name) and its match")
    add_budget_flag(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def load_comparison(file_a: str, file_b: str, warp: int, budget: Budget,
                    quiet: bool = True) -> Comparison:
    """Two pattern files -> their Comparison about `warp`; PatternError from a file is raised
    as FileError naming that file."""
    sides = []
    for path in (file_a, file_b):
        try:
            pattern = load_pattern(path)
            warps = kernel_for(pattern).warps
            if not 0 <= warp < warps:
                raise PatternError("--warp", f"warp {warp} outside [0, {warps})")
            with progress_bar(quiet) as progress:
                analysis = analyze(pattern, progress=progress, budget=budget)
            sides.append(Side(pattern, analysis, warp_detail(pattern, warp, budget)))
        except PatternError as err:
            raise FileError(pattern_error_line(path, err)) from err
    a, b = sides
    return Comparison(a, b, warp, match_instructions(a.pattern, b.pattern))


class FileError(Exception):
    """Bad input in one of the compared files; the message is 'FILE: place: message'."""


def selected_pair(c: Comparison, file_a: str, key: str | None) -> Pair | None:
    """The pair holding A's instruction `key` (index or name); None without a key."""
    if key is None:
        return None
    try:
        k = instruction_index(c.a.pattern, key)
    except PatternError as err:
        raise FileError(pattern_error_line(file_a, err)) from err
    return next(p for p in c.pairs if p.a == k)


def comparison_json(c: Comparison, report_a: dict, report_b: dict,
                    only: Pair | None = None) -> dict:
    """The `compare --json` document."""
    return {"a": report_a, "b": report_b, "warp": c.warp,
            "instructions": [c.pair_json(p) for p in c.pairs if only is None or p == only],
            "totals": c.totals_json()}


def _reports(c: Comparison, warp: int | None, budget: Budget) -> tuple[dict, dict]:
    return tuple(report_json(side.pattern, side.analysis, warp, budget)
                 for side in (c.a, c.b))


def run_compare(argv: list[str]) -> int:
    """Parse `argv` (after 'compare'), print the sheet or JSON; 0, or 2 on bad input."""
    args = compare_parser().parse_args(argv)
    budget = run_budget(args)
    try:
        c = load_comparison(args.file, args.other, args.warp or 0, budget, args.quiet)
        only = selected_pair(c, args.file, args.instruction)
        doc = comparison_json(c, *_reports(c, args.warp, budget), only) if args.json else None
    except FileError as err:
        return fail(str(err))
    if doc is not None:
        print(json.dumps(doc, indent=2))
    else:
        print(sheet_text(comparison_sheet(c, only)), end="")
    return 0


