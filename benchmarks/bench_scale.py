"""Real sizes in seconds (issue 10): each case runs in its own process, so its peak memory is
its own, and prints its figures, their targets and the ratio (figure / target; <= 1 meets it).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_scale.py [CASE ...]

A case is a function returning rows (figure name, value, target or None, unit); add one to
CASES. Run in a terminal, the gather case shows `sectorviz report`'s progress bar on stderr.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.cli import progress_bar  # noqa: E402
from sectorviz.model import analyze, pattern_from_dict  # noqa: E402
from sectorviz.model.analysis import kernel_for  # noqa: E402
from sectorviz.model.budget import DEFAULT_MEMORY  # noqa: E402
from sectorviz.paths import examples_dir  # noqa: E402

GIB = 2**30
Row = tuple[str, float, float | None, str]


def peak_gib() -> float:
    """This process's peak resident memory so far (GiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB


def example(name: str, **params: int):
    """An example pattern with some params replaced."""
    path = examples_dir() / f"{name}.sectorviz.json"
    doc = json.loads(path.read_text())
    doc["params"].update(params)
    return pattern_from_dict(doc, path.parent)


def timed_analysis(pattern):
    """(Analysis, seconds), with the progress bar `sectorviz report` shows on a terminal."""
    kernel_for(pattern)  # parsing and array placement are not the run
    start = time.perf_counter()
    with progress_bar(quiet=False) as progress:
        result = analyze(pattern, progress=progress)
    return result, time.perf_counter() - start


def vector_add_pattern() -> list[Row]:
    """c[i] = a[i] + b[i] at 2^30 threads: 12 GiB of arrays, one class of warps."""
    result, seconds = timed_analysis(example("vector-add", n=2**30))
    assert result.totals.unique_sectors == 3 * 2**30 * 4 // 32
    return [("vector add, pattern, 2^30 threads: time", seconds, 1.0, "s"),
            ("vector add, pattern, 2^30 threads: peak memory", peak_gib(), 1.5, "GiB")]


def gather_random() -> list[Row]:
    """out[i] = data[index[i]] through 2^26 uniformly random indices (the lane path)."""
    n = 2**26
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "gather, 2^26 random indices",
        "params": {"n": n, "threads": 256},
        "launch": {"grid": ["(n + threads - 1) / threads"], "block": ["threads"]},
        "arrays": {"index": {"dtype": "int32", "length": "n",
                             "values": {"kind": "uniform", "low": 0, "high": n, "seed": 7}},
                   "data": {"dtype": "float32", "length": "n"},
                   "out": {"dtype": "float32", "length": "n"}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "i < n",
        "accesses": [{"op": "load", "array": "index", "index": "i"},
                     {"op": "load", "array": "data", "index": "index[i]"},
                     {"op": "store", "array": "out", "index": "i"}]}, ROOT)
    kernel = kernel_for(pattern)
    kernel.values  # the index array is input, not the run
    result, seconds = timed_analysis(pattern)
    lane_path = [k for k in range(len(kernel.instructions)) if k not in kernel.closed_forms]
    lanes = sum(result.instructions[k].active_lanes for k in lane_path)
    return [("gather, 2^26 random indices: time", seconds, None, "s"),
            ("gather, 2^26 random indices: peak memory", peak_gib(), DEFAULT_MEMORY / GIB,
             "GiB"),
            ("gather: lane-path throughput", lanes / seconds, None, "lane accesses/s")]


CASES: dict[str, Callable[[], list[Row]]] = {
    "vector-add-pattern": vector_add_pattern,
    "gather-random": gather_random,
}


def print_rows(rows: list[Row]) -> None:
    for name, value, target, unit in rows:
        if target is None:
            print(f"{name}: {value:,.3g} {unit}")
        else:
            verdict = "met" if value <= target else "NOT met"
            print(f"{name}: {value:.3g} {unit}, target <= {target:g} {unit}, "
                  f"ratio {value / target:.2f} ({verdict})")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--case"]:
        print(json.dumps(CASES[argv[1]]()))
        return
    for name in argv or list(CASES):
        done = subprocess.run([sys.executable, __file__, "--case", name], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True, check=True)
        print_rows([tuple(row) for row in json.loads(done.stdout.splitlines()[-1])])


if __name__ == "__main__":
    main(sys.argv[1:])
