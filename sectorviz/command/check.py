"""`sectorviz check FILES... [--update] [--jobs N]`: each pattern's `expect` key (model/expect.py)
against its analysis.

Exit 0 when every expectation holds; 1 with one line per breach on stdout ("transpose.sectorviz
.json: line 16: c[...]: sectors 1,179,648 > expected 262,144"); 2 when a file cannot be read or
its `expect` names an instruction or figure the kernel has not (one line on stderr). A file
without `expect` is named on stderr and passes. --update writes the current numbers into each
file's `expect` (one with the defaults where there is none), the rest of the file kept, through
a temporary file and a rename.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..atomic import write_atomic
from ..exits import fail
from ..model import PatternError, load_pattern
from ..model.errors import printable
from ..model.expect import breaches, updated_expect
from ..model.files import read_text
from ..model.pattern import MAX_FILE_BYTES
from ..sweep.points import FileTask, file_report
from .flags import OneLineParser, add_budget_flag, pattern_error_line
from .sweep import EXIT_CANCELLED, add_jobs_flag, task_executor

EXIT_BREACH = 1
Result = dict[str, Any]  # a pool's result for one file (points.file_report), or its report


def check_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz check",
                      description="Check each pattern's numbers against its 'expect' key.")
    p.add_argument("files", nargs="+", metavar="FILE", help="*.sectorviz.json pattern files")
    p.add_argument("--update", action="store_true",
                   help="write the current numbers into each file's 'expect' key")
    add_jobs_flag(p)
    add_budget_flag(p)
    return p


def run_check(argv: list[str]) -> int:
    """Parse `argv` (after 'check'), analyse the files, report or update; 0, 1, 2 or 130."""
    args = check_parser().parse_args(argv)
    try:
        run = task_executor(args, "sectorviz check")
        results = run(file_report, [FileTask(f, args.budget) for f in args.files], "files",
                      args.quiet)
    except KeyboardInterrupt:
        fail(f"{args.files[0]}: check cancelled")
        return EXIT_CANCELLED
    status = 0
    for r in results:
        try:
            found = _update(r) if args.update else _breaches(r)
        except PatternError as err:
            status = fail(pattern_error_line(r["file"], err))
            continue
        for line in found:
            print(printable(f"{r['file']}: {line}"))
        if found and not args.update:
            status = status or EXIT_BREACH
    return status


def _report(result: Result) -> Result:
    """A pool result -> its report; PatternError (the result's one line) for a failed file."""
    if "error" in result:
        raise PatternError("", result["error"])
    report: Result = result["report"]
    return report


def _breaches(result: Result) -> list[str]:
    """The breaches of one file's expectations, as lines without the file."""
    report = _report(result)
    expect = load_pattern(result["file"]).to_dict().get("expect")
    if expect is None:
        print(printable(f"{result['file']}: no 'expect' key, nothing to check"),
              file=sys.stderr)
        return []
    return [str(b) for b in breaches(expect, report)]


def _update(result: Result) -> list[str]:
    """Write the file's current numbers into its `expect`, the rest of its document kept;
    -> lines naming the instructions it expected that the kernel no longer has."""
    report = _report(result)
    path = result["file"]
    text = read_text(path, "", MAX_FILE_BYTES)
    doc = json.loads(text)
    doc["expect"], gone = updated_expect(doc.get("expect"), report)
    # the pattern file is rewritten on purpose (its expect key): the one input that may be
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n" * text.endswith("\n"),
                 over_input=True)
    return [f"expect.instructions.{name}: no longer in the kernel, left out" for name in gone]
