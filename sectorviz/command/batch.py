"""`sectorviz batch FILES... [--jsonl OUT] [--csv OUT] [--per instruction|file] [--wide]
[--jobs N]`: many patterns analysed into one table.

Prints a short table, one row per file (file, kernel, sectors, ideal, x ideal, useful %, worst
instruction, bank conflicts), or with --wide the whole table (one row per instruction, or per
file with --per file, every figure a column); --jsonl writes one line per file, {"file": ...,
"report": what `report --json` prints} or {"file": ..., "error": "the one line"}; --csv
writes the whole table ('-' for stdout, in place of the printed table). A file that fails is
a row with its error and the batch goes on; the exit status is then 2 (bad input), with one
line 'FILE: error' on stderr for each such file, else 0; Ctrl-C: 130. An output that cannot
be written is refused before the run.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..atomic import check_output, write_atomic
from ..exits import EXIT_BAD_INPUT, UsageError, fail
from ..sweep.points import FileTask, file_report
from ..sweep.table import batch_table, summary_table, table_csv, table_text
from .flags import OneLineParser, add_budget_flag
from .sweep import EXIT_CANCELLED, add_jobs_flag, task_executor

PER = ("instruction", "file")


def batch_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz batch",
                      description="Analyse many patterns into one table.")
    p.add_argument("files", nargs="+", metavar="FILE", help="*.sectorviz.json pattern files")
    p.add_argument("--jsonl", metavar="OUT",
                   help="write one JSON line per file: {file, report} or {file, error} "
                        "('-': stdout)")
    p.add_argument("--csv", metavar="OUT", help="write the table as CSV ('-': stdout)")
    p.add_argument("--per", choices=PER, default="instruction",
                   help="one row per instruction (default) or per file (--csv and --wide)")
    p.add_argument("--wide", action="store_true",
                   help="print every column (as --csv writes them), not the short table")
    add_jobs_flag(p)
    add_budget_flag(p)
    return p


def run_batch(argv: list[str]) -> int:
    """Parse `argv` (after 'batch'), analyse the files, print and write; 0, 2 or 130."""
    args = batch_parser().parse_args(argv)
    _check_outputs(args)
    tasks = [FileTask(path, args.budget) for path in args.files]
    try:
        run = task_executor(args, "sectorviz batch")
        results = run(file_report, tasks, "files", args.quiet)
    except KeyboardInterrupt:
        fail(f"{args.files[0]}: batch cancelled")
        return EXIT_CANCELLED
    table = batch_table(results, args.per)
    outputs = [(args.jsonl, lambda: "".join(json.dumps(r) + "\n" for r in results)),
               (args.csv, lambda: table_csv(table))]
    for path, text in outputs:
        if path == "-":
            sys.stdout.write(text())
        elif path is not None:
            write_atomic(path, text())
    if "-" not in (args.jsonl, args.csv):
        print(table_text(table if args.wide else summary_table(results)), end="")
    failed = [r for r in results if "error" in r]
    for r in failed:
        fail(f"{r['file']}: {r['error']}")
    return EXIT_BAD_INPUT if failed else 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse --jsonl and --csv before the run: one file named twice (UsageError), or one
    sectorviz will not write (atomic.check_output; one of the FILES among them)."""
    files = [path for path in (args.jsonl, args.csv) if path not in (None, "-")]
    if len(files) == 2 and files[0] == files[1]:
        raise UsageError(f"sectorviz batch: --jsonl and --csv both name {files[0]}")
    for path in files:
        check_output(path, args.files)
