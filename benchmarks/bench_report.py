"""Speed and memory of `sectorviz report` on vector add (issue 2, item 7). Prints ratios.

Targets: at N = 2^24, report time <= 3x a bare numpy pass that builds the same lane addresses
and shifts them to sector ids, and >= 100x faster than a per-warp Python set loop; at
N = 2^27 threads, peak memory under 1.5 GiB. Run: .venv/bin/python benchmarks/bench_report.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.model import analyze, load_pattern  # noqa: E402
from sectorviz.model.frontend import kernel_for  # noqa: E402

EXAMPLE = ROOT / "resources" / "examples" / "vector-add.sectorviz.json"


def vector_add(n: int, folder: Path) -> Path:
    doc = json.loads(EXAMPLE.read_text())
    doc["params"]["n"] = n
    path = folder / f"vector-add-{n}.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def numpy_baseline(n: int, bases: list[int]) -> None:
    """The bare pass: lane addresses of every access, shifted to sector ids."""
    i = np.arange(n, dtype=np.int64)
    for base in bases:
        ((base + 4 * i) >> 5).reshape(-1, 32)


def python_set_loop(n: int, bases: list[int], warps: int) -> int:
    """The naive reference: per warp and access, a Python set of its lanes' sector ids."""
    total = 0
    for w in range(warps):
        for base in bases:
            sectors = set()
            for lane in range(32):
                i = w * 32 + lane
                if i < n:
                    sectors.add((base + 4 * i) >> 5)
            total += len(sectors)
    return total


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        n = 2**24
        path = vector_add(n, Path(tmp))
        pattern = load_pattern(path)
        bases = [a.address0 for a in kernel_for(pattern).arrays.values()]
        t_numpy = best_of(3, lambda: numpy_baseline(n, bases))
        t_model = best_of(3, lambda: analyze(pattern))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path)], check=True,
                       capture_output=True, cwd=ROOT)
        t_cli = time.perf_counter() - start
        sample_warps = 4096
        t_sample = best_of(3, lambda: python_set_loop(n, bases, sample_warps))
        t_python = t_sample * (n // 32) / sample_warps
        print(f"N = 2^24 vector add: analyze {t_model:.3f} s, `sectorviz report` process "
              f"{t_cli:.3f} s, numpy address+shift pass {t_numpy:.3f} s, per-warp Python set "
              f"loop {t_python:.1f} s (extrapolated from {sample_warps} warps)")
        print(f"  ratio analyze / numpy pass        = {t_model / t_numpy:.2f}  (target <= 3)")
        print(f"  ratio report process / numpy pass = {t_cli / t_numpy:.2f}  (includes start-up)")
        print(f"  speed-up over Python set loop     = {t_python / t_model:.0f}x  (target >= 100)")

        big = vector_add(2**27, Path(tmp))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sectorviz", "report", str(big)], check=True,
                       capture_output=True, cwd=ROOT)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        print(f"N = 2^27 threads: report took {time.perf_counter() - start:.1f} s, peak memory "
              f"{peak / 2**30:.2f} GiB  (target < 1.5 GiB; ratio {peak / (1.5 * 2**30):.2f})")


if __name__ == "__main__":
    main()
