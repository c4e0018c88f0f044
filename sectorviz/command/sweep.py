"""`sectorviz sweep FILE --param NAME=LIST|start:stop[:step] [--param ...] [--metric M]
[-o OUT] [--json] [--jobs N]`: the analysis of every combination of the params' values.

Prints the table (the params, the metric of each instruction and the total, the error of a
failed point), or with --json {"params": [names], "points": [{"params": {...}, "report":
what `report --json` prints for that point} or {"params", "error": "the one line"}]}. -o
writes the chart (.svg .pdf .png .tex; one or two params) or the table with every figure
(.csv .md). A point that fails is a row with its reason and a gap in the chart; the sweep
goes on. Bad arguments or pattern: exit 2, one line; Ctrl-C: exit 130, one line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..atomic import check_output, write_atomic
from ..exits import UsageError, fail
from ..export.formats import DIAGRAM_SUFFIXES, scene_bytes
from ..export.latex_document import standalone_latex
from ..model import PatternError, load_pattern
from ..scene.palette import DEFAULT_THEME, THEMES, theme
from ..scene.sweep_chart import DEFAULT_METRIC, METRICS, Doc, sweep_chart_scene
from ..sweep.executor import LOCAL, Executor, executor_for
from ..sweep.points import PointTask, combinations, point_report, with_params
from ..sweep.pool import default_jobs
from ..sweep.ranges import parse_param, point_count
from ..sweep.table import TABLE_WRITERS, metric_table, sweep_table, table_text
from .flags import (
    OneLineParser,
    add_budget_flag,
    add_machine_flags,
    add_standalone_flag,
    pattern_error_line,
    standalone_problem,
    with_machine,
)

EXIT_CANCELLED = 130  # what a shell reports for a command stopped by Ctrl-C
SCHEDULER_VAR = "SECTORVIZ_SCHEDULER"  # --scheduler's default


def add_jobs_flag(p: argparse.ArgumentParser) -> None:
    """`--jobs N`: worker processes (default and most: the machine's cores, usable_jobs);
    `--scheduler ADDRESS`: a Dask cluster instead (default $SECTORVIZ_SCHEDULER)."""
    p.add_argument("--jobs", type=_positive, default=default_jobs(), metavar="N",
                   help=f"worker processes (default and at most: the machine's cores, "
                        f"{default_jobs()})")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run on the Dask cluster whose scheduler is at ADDRESS "
                        f"(tcp://host:8786), or '{LOCAL}' for worker processes on this "
                        f"machine (--jobs of them); default ${SCHEDULER_VAR}; needs "
                        f"sectorviz[cluster]")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (there is none when stderr is not a terminal)")


def usable_jobs(jobs: int, prog: str) -> int:
    """--jobs N -> the processes to start: at most the cores this process may run on, with a
    one-line note on stderr when N is more."""
    cores = default_jobs()
    if jobs <= cores:
        return jobs
    print(f"{prog}: --jobs {jobs:,} is more than this run's cores ({cores}); using {cores}",
          file=sys.stderr)
    return cores


def task_executor(args: argparse.Namespace, prog: str) -> Executor:
    """Where the command's tasks run: --scheduler (else $SECTORVIZ_SCHEDULER) names a Dask
    cluster; without one, the local pool of usable_jobs(--jobs) processes."""
    scheduler = args.scheduler or os.environ.get(SCHEDULER_VAR) or None
    jobs = usable_jobs(args.jobs, prog) if scheduler in (None, LOCAL) else args.jobs
    return executor_for(scheduler, jobs, prog)


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def _param(text: str) -> tuple[str, tuple[int, ...]]:
    try:
        return parse_param(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def sweep_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz sweep",
                      description="Analyse a pattern for every combination of param values.")
    p.add_argument("file", help="a *.sectorviz.json pattern file")
    p.add_argument("--param", type=_param, action="append", required=True,
                   metavar="NAME=VALUES",
                   help="a param and its values: a list (tile=8,16,32) or start:stop[:step] "
                        "(pad=0:3 is 0, 1, 2); repeat for a product")
    p.add_argument("--metric", choices=list(METRICS), default=DEFAULT_METRIC,
                   help=f"what the chart and the printed table show (default {DEFAULT_METRIC})")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="the chart (.svg .pdf .png .tex) or the table of every figure "
                        "(.csv .md); the suffix picks")
    p.add_argument("--json", action="store_true", help="print every point's report as JSON")
    p.add_argument("--theme", choices=sorted(THEMES), default=DEFAULT_THEME,
                   help=f"the chart's colours (default {DEFAULT_THEME})")
    p.add_argument("--scale", type=float, default=1.5, metavar="S",
                   help="PNG pixels per chart unit, 1 to 4 (default 1.5: 1920 x 1080)")
    add_standalone_flag(p)
    add_jobs_flag(p)
    add_budget_flag(p)
    add_machine_flags(p)
    return p


def run_sweep(argv: list[str]) -> int:
    """Parse `argv` (after 'sweep'), run the points, print and write; 0, 2 or 130."""
    args = sweep_parser().parse_args(argv)
    names = [name for name, _ in args.param]
    suffix = _checked_arguments(args, names)
    try:
        pattern = with_machine(load_pattern(args.file), args)
        doc = pattern.to_dict()
        values = combinations(args.param)
        tasks = [PointTask(with_params(doc, v), pattern.base_dir, args.budget) for v in values]
    except PatternError as err:
        return fail(pattern_error_line(args.file, err))
    try:
        run = task_executor(args, "sectorviz sweep")
        results = run(point_report, tasks, "points", args.quiet)
    except KeyboardInterrupt:
        fail(f"{args.file}: sweep cancelled")
        return EXIT_CANCELLED
    points = [{"params": v, **r} for v, r in zip(values, results)]
    if suffix is not None:
        write_atomic(args.output, _output_bytes(pattern.name, names, points, args, suffix))
    if args.json:
        print(json.dumps({"params": names, "points": points}, indent=2))
    else:
        print(table_text(metric_table(names, points, args.metric)), end="")
    return 0


def _checked_arguments(args: argparse.Namespace, names: list[str]) -> str | None:
    """-o's suffix (None without -o) once the arguments are checked before any point is made
    or run: UsageError for a param given twice, an unknown format, a bad --scale, more than
    MAX_POINTS points, a chart of more than two params; -o refused by atomic.check_output."""
    if len(set(names)) != len(names):
        raise UsageError("sectorviz sweep: a --param is given twice")
    suffix = Path(args.output).suffix.lower() if args.output is not None else None
    if suffix is not None and suffix not in (*DIAGRAM_SUFFIXES, *TABLE_WRITERS):
        raise UsageError(f"sectorviz sweep: no format for {suffix or 'a name without a suffix'}"
                         f"; one of {', '.join((*DIAGRAM_SUFFIXES, *TABLE_WRITERS))}")
    if not 1 <= args.scale <= 4:
        raise UsageError(f"sectorviz sweep: --scale {args.scale:g} outside [1, 4]")
    try:
        point_count(args.param)
    except ValueError as err:
        raise UsageError(f"sectorviz sweep: {err}") from None
    if suffix in DIAGRAM_SUFFIXES and len(names) > 2:
        raise UsageError("sectorviz sweep: the chart draws one or two params; write the table "
                         "(.csv, .md) or --json for more")
    standalone_problem(args, "sweep", suffix)
    if args.output is not None:
        check_output(args.output)
    return suffix


def _output_bytes(title: str, names: list[str], points: list[Doc], args: argparse.Namespace,
                  suffix: str) -> bytes:
    """The -o file: the chart scene printed by the diagram printers, or the full table."""
    if suffix in TABLE_WRITERS:
        return TABLE_WRITERS[suffix](sweep_table(names, points)).encode()
    scene = sweep_chart_scene(title, names, points, args.metric, theme(args.theme))
    chart = scene_bytes(scene, suffix, args.scale)
    return standalone_latex(chart.decode(), sheet=False).encode() if args.standalone else chart
