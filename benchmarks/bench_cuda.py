"""Benchmark: the naive transpose at m = 1024 (1,048,576 threads) interpreted from CUDA
against its pattern-file twin. Prints both times and the ratio (target: at most 10x).

Run: .venv/bin/python benchmarks/bench_cuda.py
"""

from __future__ import annotations

import time
from pathlib import Path

from sectorviz.model import analyze, load_pattern
from sectorviz.model.memo import MEMO

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
TARGET = 10.0


def best_of(path: Path, repeats: int = 3) -> tuple[float, int]:
    """Fastest wall time of a full analysis (parse, compile and interpret included)."""
    best, sectors = float("inf"), 0
    for _ in range(repeats):
        pattern = load_pattern(path)
        MEMO.clear()  # parse and compile again each time
        start = time.perf_counter()
        sectors = analyze(pattern).totals.sectors
        best = min(best, time.perf_counter() - start)
    return best, sectors


def main() -> None:
    twin, twin_sectors = best_of(EXAMPLES / "transpose-naive.sectorviz.json")
    cuda, cuda_sectors = best_of(EXAMPLES / "transpose-naive-cuda.sectorviz.json")
    assert cuda_sectors == twin_sectors, (cuda_sectors, twin_sectors)
    ratio = cuda / twin
    print(f"naive transpose, m = 1024: pattern file {twin:.3f} s, CUDA {cuda:.3f} s")
    print(f"ratio CUDA / pattern file: {ratio:.2f}x (target <= {TARGET:.0f}x): "
          f"{'ok' if ratio <= TARGET else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
