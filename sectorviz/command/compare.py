"""`sectorviz compare A B`: the side-by-side sheet of two patterns (scene.compare), or with
--json {"a": A's report, "b": B's report, "warp", "instructions": matched pairs with ratios,
"shared": matched shared-memory pairs (wavefronts, ideal, bank conflicts, per warp),
"totals" (the shared ones prefixed "shared_" and "warp_shared_")}, where each report is
exactly what `sectorviz report FILE --json` prints (with --warp N: `report FILE --json
--warp N`). Bad input: exit 2, one line naming the file.
"""

from __future__ import annotations

import argparse
import json

from ..exits import fail
from ..export.report_json import comparison_json, report_json
from ..export.sheets import sheet_text
from ..gather.compare import SideError, load_comparison, side_pair
from ..model.budget import work_budget
from ..model.pattern import ENGINES
from ..scene.compare import comparison_sheet
from .flags import (
    OneLineParser,
    add_budget_flag,
    add_engine_flags,
    add_include_flag,
    progress_bar,
    run_budget,
)


def compare_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz compare",
                      description="Compare two patterns: matched instructions, ratios, why.")
    p.add_argument("file", help="A: the pattern before (a *.sectorviz.json file)")
    p.add_argument("other", help="B: the pattern after")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--warp", type=int, metavar="N",
                   help="the warp whose sectors and explanations are shown (default 0)")
    p.add_argument("--instruction", metavar="K",
                   help="only A's instruction K (0-based index or name; a shared one by "
                        "name) and its match")
    add_budget_flag(p)
    add_include_flag(p)
    add_engine_flags(p)
    for side in "ab":
        p.add_argument(f"--engine-{side}", choices=ENGINES,
                       help=f"the engine of {side.upper()} only (over --engine): compare a "
                            "file with itself, --engine-a source --engine-b compiled")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def run_compare(argv: list[str]) -> int:
    """Parse `argv` (after 'compare'), print the sheet or JSON; 0, or 2 on bad input."""
    args = compare_parser().parse_args(argv)
    try:
        with work_budget(run_budget(args)), progress_bar(args.quiet) as progress:
            key_a, key_b = ({"engine": side or args.engine, "arch": args.arch}
                            for side in (args.engine_a, args.engine_b))
            c, patterns = load_comparison(args.file, args.other, args.warp or 0, progress,
                                          tuple(args.include_dir), (key_a, key_b))
            only = side_pair(c, args.file, args.instruction)
            doc = None
            if args.json:
                report_a, report_b = (report_json(p, s.analysis, args.warp)
                                      for p, s in zip(patterns, (c.a, c.b)))
                doc = comparison_json(c, (report_a, report_b), only)
    except SideError as err:
        return fail(str(err))
    if doc is not None:
        print(json.dumps(doc, indent=2))
    else:
        print(sheet_text(comparison_sheet(c, only)), end="")
    return 0
