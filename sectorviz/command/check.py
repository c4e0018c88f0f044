"""`sectorviz check FILES... [--update] [--jobs N]`: each pattern's `expect` key (model/expect.py)
against its analysis.

One short line on stdout per figure moved beyond the tolerance, was -> now and which way
("transpose-naive.sectorviz.json: transposeNaive: c[col * m + row], store c: sectors 131,072 ->
1,048,576, up (8x more)"), long names elided in the middle. Exit 0 when no figure got worse (a
figure that got better passes, with one line per file saying `check --update` writes it down);
1 when one got worse; 2 when a file cannot be read or its `expect` names an instruction or
figure the kernel has not (one line on stderr). A file without `expect` is named on stderr and
passes. --update writes the current numbers into each file's `expect` (one with the defaults
where there is none), each instruction under its stable key, the rest of the file kept,
through a temporary file and a rename.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..atomic import write_atomic
from ..exits import fail
from ..model import PatternError, load_pattern
from ..model.elide import elided
from ..model.errors import printable
from ..model.expect import Change, changes, number_text, updated_expect
from ..model.files import read_text
from ..model.pattern import MAX_FILE_BYTES
from ..scene.compare import factor_words, ratio
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
            lines, worse = _update(r) if args.update else _checked(r)
        except PatternError as err:
            status = fail(pattern_error_line(r["file"], err))
            continue
        for line in lines:
            print(printable(f"{r['file']}: {line}"))
        if worse:
            status = status or EXIT_BREACH
    return status


def _report(result: Result) -> Result:
    """A pool result -> its report; PatternError (the result's one line) for a failed file."""
    if "error" in result:
        raise PatternError("", result["error"])
    report: Result = result["report"]
    return report


def _checked(result: Result) -> tuple[list[str], bool]:
    """One file's expectations against its analysis -> (a line per figure that moved, and a
    hint to --update where one got better; lines without the file), whether one got worse."""
    report = _report(result)
    doc = load_pattern(result["file"]).to_dict()
    if doc.get("expect") is None:
        print(printable(f"{result['file']}: no 'expect' key, nothing to check"),
              file=sys.stderr)
        return [], False
    moved = changes(doc["expect"], report, _kernel(doc))
    lines = [change_line(c) for c in moved]
    if any(not c.worse for c in moved):
        lines.append(f"better than expected: `sectorviz check --update {result['file']}` "
                     f"writes it down")
    return lines, any(c.worse for c in moved)


def change_line(c: Change) -> str:
    """'NAME: sectors 131,072 -> 1,048,576, up (8x more)', the name elided."""
    way = "up" if c.up else "down"
    return f"{elided(c.where)}: {c.figure} {number_text(c.expected)} -> " \
           f"{number_text(c.actual)}, {way} ({factor_words(ratio(c.expected, c.actual))})"


def _kernel(doc: Result) -> str | None:
    """The pattern's kernel function, the first part of its instructions' stable keys."""
    kernel = doc.get("kernel")
    return kernel.get("function") if isinstance(kernel, dict) else None


def _update(result: Result) -> tuple[list[str], bool]:
    """Write the file's current numbers into its `expect`, the rest of its document kept;
    -> (lines naming the instructions it expected that the kernel no longer has, False)."""
    report = _report(result)
    path = result["file"]
    text = read_text(path, "", MAX_FILE_BYTES)
    doc = json.loads(text)
    doc["expect"], gone = updated_expect(doc.get("expect"), report, _kernel(doc))
    # the pattern file is rewritten on purpose (its expect key): the one input that may be
    write_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n" * text.endswith("\n"),
                 over_input=True)
    return [f"expect.instructions.{elided(name)}: no longer in the kernel, left out"
            for name in gone], False
