"""Benchmark: real sizes in seconds (issue 10). Each case is analyzed in a fresh process (so
its peak memory is its own); each prints its time and peak memory, the targets and the ratios.

Run: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_scale.py [case name ...]
Add a case by appending to CASES: a name, a function returning the pattern, the targets.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sectorviz.model import Pattern, analyze, pattern_from_dict
from sectorviz.paths import examples_dir

HERE = Path(__file__).resolve().parent
GIB = 2**30


@dataclass(frozen=True)
class Case:
    """One benchmark row: a pattern to analyze and what it must stay within."""

    name: str
    pattern: Callable[[], Pattern]
    seconds: float
    gib: float | None = None  # peak memory target (whole process), if the issue sets one


def cuda_pattern(source: Path, function: str, params: dict, arrays: dict, grid: list,
                 block: list) -> Pattern:
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": function, "params": params,
        "launch": {"grid": grid, "block": block}, "arrays": arrays,
        "kernel": {"source": str(source), "function": function}}, base_dir=source.parent)


def matmul(function: str, source: Path, grid: list, block: list, n: int = 4096) -> Pattern:
    square = {"dtype": "float32", "shape": ["n", "n"]}
    return cuda_pattern(source, function, {"n": n}, {"A": square, "B": square, "C": square},
                        grid, block)


def vector_add_kernel(threads: int = 2**30) -> Pattern:
    vector = {"dtype": "float32", "length": "n"}
    return cuda_pattern(examples_dir() / "vector-add.cu", "vectorAdd", {"n": threads},
                        {"a": vector, "b": vector, "c": vector}, ["n / 256"], [256])


CASES: list[Case] = [
    Case("naive matmul kernel, n = 4096 (16 x 16 blocks)",
         lambda: matmul("matmulNaive", examples_dir() / "matmul-naive.cu",
                        ["n / 16", "n / 16"], [16, 16]), 5.0, 1.5),
    Case("coalesced matmul kernel, n = 4096 (1-D blocks of 1024)",
         lambda: matmul("matmulCoalesced", HERE / "kernels" / "matmul.cu",
                        ["n * n / 1024"], [1024]), 5.0, 1.5),
    Case("tiled matmul kernel, n = 4096 (32 x 32 tiles, shared memory)",
         lambda: matmul("matmulTiled", HERE / "kernels" / "matmul.cu",
                        ["n / 32", "n / 32"], [32, 32]), 5.0),
    Case("vector add kernel, 2^30 threads", vector_add_kernel, 2.0),
]


def measure(case: Case) -> dict:
    """Analyze one case here -> seconds, peak resident memory (bytes) and a checksum."""
    pattern = case.pattern()
    start = time.perf_counter()
    totals = analyze(pattern).totals
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": seconds, "peak": peak, "sectors": totals.sectors,
            "unique": totals.unique_sectors}


def row(case: Case, result: dict) -> str:
    """One printed line: figures, targets, ratios and whether the targets are met."""
    if "error" in result:
        return f"{case.name}: FAILED: {result['error']}"
    ok = result["seconds"] <= case.seconds
    text = (f"{case.name}: {result['seconds']:.2f} s (target <= {case.seconds:g} s, "
            f"{result['seconds'] / case.seconds:.2f}x)")
    if case.gib is not None:
        gib = result["peak"] / GIB
        ok &= gib <= case.gib
        text += f", peak {gib:.2f} GiB (target <= {case.gib:g} GiB, {gib / case.gib:.2f}x)"
    return (f"{text}; {result['sectors']:,} sectors, {result['unique']:,} unique: "
            f"{'ok' if ok else 'OVER TARGET'}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--case"]:  # the child process: one case, result as JSON
        case = next(c for c in CASES if c.name == argv[1])
        try:
            print(json.dumps(measure(case)))
        except Exception as err:  # reported by the parent as the row's result
            print(json.dumps({"error": f"{type(err).__name__}: {err}"}))
        return
    for case in CASES:
        if argv and not any(a in case.name for a in argv):
            continue
        child = subprocess.run([sys.executable, __file__, "--case", case.name],
                               capture_output=True, text=True)
        lines = child.stdout.strip().splitlines()
        result = json.loads(lines[-1]) if lines else {"error": child.stderr.strip()[-300:]}
        print(row(case, result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
