"""Throughput of the L2 cache model (issue 13, item 5): sector accesses per second through
the model, on line-touch streams of the shapes kernels make, and through a whole analysis.

Target: at least 10^7 sector accesses per second through the model (L2.touch + finish), by each
engine: the numpy rounds (every install, and the bundle) and numba's compiled per-touch loop
(`pip install sectorviz[fast]`; used for kernels of at least cache.JIT_MIN_TOUCHES line
touches). numba is not in the bundle: the one-folder bundle measured 178 MiB without it and
355 MiB with numba 0.68.1 (llvmlite's library alone is 171 MiB, 152 MiB stripped), and issue 13
allows the dependency only while the bundle stays under 250 MiB. The first-call rows print what
one touch costs in a fresh process: the numba one includes importing numba and compiling the
loop, or loading it from numba's cache on disk. The end-to-end rows show what an analysis with a
machine costs against one without (the model runs every access on the lane path and orders the
requests). Run on an idle machine:
.venv/bin/python benchmarks/bench_cache.py [--touches N] [--engine numpy|numba]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.model import analyze, pattern_from_dict  # noqa: E402
from sectorviz.model.budget import Budget  # noqa: E402
from sectorviz.model.cache import _POPS, ENGINE_VARIABLE, L2, LOAD, PRESETS, STORE, cache_jit  # noqa: E402

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


def first_call_s(engine: str, env: dict[str, str]) -> float:
    """Seconds of the model's first call in a fresh process on `engine`: one touch and the
    kernel's end (for numba: importing it and compiling the loop, or loading it from disk)."""
    code = ("import time; t = time.perf_counter(); from sectorviz.model.cache import L2, LOAD; "
            "l2 = L2(2**20); l2.touch([0], [1], [LOAD]); l2.finish(); "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=os.environ | env | {
                             ENGINE_VARIABLE: engine, "PYTHONPATH": str(ROOT)})
    return float(out.stdout)


def model_rows(n: int, engine: str) -> list[tuple[str, float]]:
    """(stream, sector accesses per second) of each stream on `engine`."""
    os.environ[ENGINE_VARIABLE] = engine
    rows = []
    for ways in (0, 16):
        for name, (lines, masks, kinds) in streams(n, H100 // 128).items():
            l2 = L2(H100, ways)
            start = time.perf_counter()
            l2.touch(lines, masks, kinds)
            l2.finish()
            seconds = time.perf_counter() - start
            assert l2.engine == engine
            sectors = int(_POPS[masks].sum())
            assoc = "fully associative" if ways == 0 else f"{ways}-way"
            rows.append((f"{name} ({assoc})", sectors / seconds))
    del os.environ[ENGINE_VARIABLE]
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
    parser.add_argument("--engine", choices=("numpy", "numba"), action="append",
                        help="engine to measure (default: both, numba when it imports)")
    args = parser.parse_args()
    engines = args.engine or ["numpy"] + (["numba"] if cache_jit.available() else [])
    print(f"first call on numpy (one touch, fresh process): {first_call_s('numpy', {}) * 1e3:.0f} "
          "ms")
    if "numba" in engines:
        with tempfile.TemporaryDirectory() as empty:
            cold = first_call_s("numba", {"NUMBA_CACHE_DIR": empty})
        print(f"first call on numba (fresh process): compiling the loop {cold * 1e3:.0f} ms, "
              f"loading it from numba's cache {first_call_s('numba', {}) * 1e3:.0f} ms")
    print(f"L2 model, H100-SXM size ({H100 // 2**20} MiB), {args.touches:,} line touches "
          f"per stream; target {TARGET:.0e} sector accesses/s")
    for engine in engines:
        for name, rate in model_rows(args.touches, engine):
            print(f"  {engine:5s} {name:58s} {rate / 1e6:8.1f} M sectors/s  "
                  f"{'meets' if rate >= TARGET else 'BELOW'} target")
    print("whole analysis (lane path + ordering + model; engine as chosen), sectors per "
          "second:")
    for name, plain, cached in end_to_end():
        print(f"  {name:40s} without a machine {plain / 1e6:7.1f} M/s, with H100-SXM "
              f"{cached / 1e6:7.1f} M/s")


if __name__ == "__main__":
    main()
