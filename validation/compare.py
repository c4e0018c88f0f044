"""Predicted against measured for every run of the manifest: `sectorviz report PATTERN
--measured OUT/PATTERN.ncu.csv --machine M --order O --level L` (with --kernel where the
manifest names the kernel), its comparison printed under the pattern's name, once counted in
SASS and once in PTX (the compiled engine's two readings; the source engine reads both alike);
then, where OUT/PATTERN.source.csv holds Nsight Compute's source page, each SASS instruction's
prediction against its measurement, both readings side by side (validation/source_page.py).

Usage: python validation/compare.py OUT_FOLDER [--machine NAME] [--order ORDER]
Expected: the L1 request side equals l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum
exactly (ratio 1.000); DRAM bytes between the perfect-reuse and no-reuse bounds; per SASS
instruction, ratio 1.000 wherever the profiled build is the one predicted.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from source_page import (  # noqa: E402
    SourcePageError,
    instruction_lines,
    predictions,
    read_source_page,
)

from sectorviz.cli import main as sectorviz  # noqa: E402
from sectorviz.model import load_pattern  # noqa: E402
from sectorviz.model.cache import ORDERS, PRESETS  # noqa: E402
from sectorviz.paths import examples_dir  # noqa: E402

MANIFEST = HERE / "manifest.tsv"
LEVELS = ("sass", "ptx")  # the compiled engine's readings each run is compared at
HEADING = "predicted against measured"


class Run(NamedTuple):
    """One line of the manifest."""

    pattern: str  # name in resources/examples, without .sectorviz.json
    host: str  # the .cu to build, from validation/
    kernel: str | None  # the kernel's name in the CSV, where not the pattern's
    values: tuple[str, str] | None  # (array, numpy dtype) the program reads from a file
    args: tuple[str, ...]


def runs(manifest: Path = MANIFEST) -> list[Run]:
    """The manifest's lines (tab-separated; '#' starts a comment line)."""
    out = []
    for line in manifest.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        pattern, host, kernel, values, *args = line.split("\t")
        out.append(Run(pattern, host, None if kernel == "-" else kernel,
                       None if values == "-" else tuple(values.split(":")), tuple(args)))
    return out


def pattern_file(run: Run) -> Path:
    """The run's pattern in resources/examples."""
    return examples_dir() / f"{run.pattern}.sectorviz.json"


def run_sectorviz(argv: list[str]) -> tuple[str, str | None]:
    """What `sectorviz ARGV` prints, and its one-line error (None where it succeeded)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = sectorviz(argv)
    if code != 0:
        return out.getvalue(), err.getvalue().strip() or f"sectorviz exited {code}"
    return out.getvalue(), None


def report(run: Run, csv: Path, machine: str, order: str, level: str) -> str:
    """The comparison `sectorviz report --measured` prints for `run` with the compiled engine
    counting at `level` ("sass" or "ptx"), or its one-line error."""
    argv = ["report", str(pattern_file(run)), "--measured", str(csv), "--machine", machine,
            "--order", order, "--level", level]
    if run.kernel:
        argv += ["--kernel", run.kernel]
    text, error = run_sectorviz(argv)
    return error or text[text.index(HEADING):].rstrip()


def per_instruction(run: Run, page: Path) -> str:
    """Each SASS instruction of the source page `page` against `sectorviz report --json`
    counted in SASS and in PTX (validation/source_page.py), or the one-line error."""
    readings = {}
    for level in LEVELS:
        text, error = run_sectorviz(["report", str(pattern_file(run)), "--json", "--level",
                                     level])
        if error:
            return error
        readings[level] = json.loads(text)
    needed = {p.column for p in predictions(readings["sass"])}
    function = load_pattern(pattern_file(run)).kernel["function"]
    try:
        rows = read_source_page(page, function, needed)
    except SourcePageError as e:
        return str(e)
    return "\n".join(instruction_lines(readings["sass"], readings["ptx"], rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder of PATTERN.ncu.csv files")
    parser.add_argument("--machine", default="H200-SXM", choices=list(PRESETS))
    parser.add_argument("--order", default="waves", choices=list(ORDERS))
    args = parser.parse_args()
    for run in runs():
        csv = args.out / f"{run.pattern}.ncu.csv"
        page = args.out / f"{run.pattern}.source.csv"
        if not csv.exists():
            print(f"== {run.pattern}\n  no {csv.name}: not profiled")
        else:
            for level in LEVELS:  # the SASS reading, then the PTX one, side by side
                print(f"== {run.pattern}, counted in {level.upper()}")
                print(report(run, csv, args.machine, args.order, level))
        if page.exists():
            print(f"== {run.pattern}, per SASS instruction ({page.name})")
            print(per_instruction(run, page))
    return 0


if __name__ == "__main__":
    sys.exit(main())
