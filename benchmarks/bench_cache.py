"""Throughput of the L2 cache model (issue 13, item 5): sector accesses per second through
the model, on line-touch streams of the shapes kernels make, and through a whole analysis.

Target: at least 10^7 sector accesses per second through the model (L2.touch + finish). The
model is numpy only: it needs no compilation, so its first call costs what any call does (the
first row prints it). numba is not used: the one-folder bundle measured 178 MiB without it and
355 MiB with numba 0.68.1 (llvmlite's library alone is 171 MiB, 152 MiB stripped), and issue 13
allows the dependency only while the bundle stays under 250 MiB. The end-to-end rows show what an
analysis with a machine costs against one without (the model runs every access on the lane
path and orders the requests). Run on an idle machine:
.venv/bin/python benchmarks/bench_cache.py [--touches N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.model import analyze, pattern_from_dict  # noqa: E402
from sectorviz.model.budget import Budget  # noqa: E402
from sectorviz.model.cache import L2, LOAD, PRESETS, STORE, _POPS  # noqa: E402

TARGET = 1e7  # sector accesses per second
H100 = PRESETS["H100-SXM"].l2_bytes


def streams(n: int, lines: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Name -> (lines, masks, kinds) of n line touches."""
    rng = np.random.default_rng(0)
    full = np.full(n, 15)
    loads = np.full(n, LOAD)
    half = np.where(np.arange(n) % 2, LOAD, STORE)
    return {
        "streaming, 4 sectors per touch": (np.arange(n), full, loads),
        "reuse inside the L2 (half its size)": (rng.integers(0, lines // 2, n), full, loads),
        "random over twice the L2, 1 sector": (rng.integers(0, 2 * lines, n),
                                               1 << rng.integers(0, 4, n), loads),
        "loads and stores over 1.5x the L2": (np.arange(n) % (3 * lines // 2), full, half),
    }


def first_call_s() -> float:
    """Seconds of the model's first call in this process: one touch and the kernel's end."""
    start = time.perf_counter()
    l2 = L2(H100)
    l2.touch([0], [1], [LOAD])
    l2.finish()
    return time.perf_counter() - start


def model_rows(n: int) -> list[tuple[str, float]]:
    rows = []
    for ways in (0, 16):
        for name, (lines, masks, kinds) in streams(n, H100 // 128).items():
            l2 = L2(H100, ways)
            start = time.perf_counter()
            l2.touch(lines, masks, kinds)
            l2.finish()
            seconds = time.perf_counter() - start
            sectors = int(_POPS[masks].sum())
            assoc = "fully associative" if ways == 0 else f"{ways}-way"
            rows.append((f"{name} ({assoc})", sectors / seconds))
    return rows


def end_to_end() -> list[tuple[str, float, float]]:
    """(pattern, sectors per second without a machine, with H100-SXM)."""
    doc = {"format": "sectorviz.pattern/1", "name": "row sum, 8 passes",
           "params": {"n": 2048}, "launch": {"grid": ["n / 256"], "block": [256]},
           "arrays": {"a": {"dtype": "float32", "length": "n * n"}},
           "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
           "accesses": [{"op": "load", "array": "a", "index": "(i + j * n) % (n * n)",
                         "loops": [{"var": "j", "start": 0, "stop": "n"}]}]}
    rows = []
    for order in ("warp-serial", "waves"):
        rates = []
        for machine in (None, {"preset": "H100-SXM", "order": order}):
            p = pattern_from_dict(doc | ({"machine": machine} if machine else {}))
            start = time.perf_counter()
            a = analyze(p, budget=Budget(2**34))
            rates.append(a.totals.sectors / (time.perf_counter() - start))
        rows.append((f"{doc['name']} ({order})", *rates))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--touches", type=int, default=2**22, help="line touches per stream")
    args = parser.parse_args()
    print(f"first call (one touch, nothing compiled): {first_call_s() * 1e3:.1f} ms")
    print(f"L2 model, H100-SXM size ({H100 // 2**20} MiB), {args.touches:,} line touches "
          f"per stream; target {TARGET:.0e} sector accesses/s")
    for name, rate in model_rows(args.touches):
        print(f"  {name:58s} {rate / 1e6:8.1f} M sectors/s  "
              f"{'meets' if rate >= TARGET else 'BELOW'} target")
    print("whole analysis (lane path + ordering + model), sectors per second:")
    for name, plain, cached in end_to_end():
        print(f"  {name:40s} without a machine {plain / 1e6:7.1f} M/s, with H100-SXM "
              f"{cached / 1e6:7.1f} M/s")


if __name__ == "__main__":
    main()
