"""How long the default work budget lasts (issue 15, item 1): each workload runs until it has
spent a sample budget, and its rate gives the seconds the default budget (2^28 units) takes.

Target: every workload spends the default budget in 5 to 15 s on a laptop core (about 10 s),
so a run past the budget stops in that time. The PTX workloads (compiled engine, nvcc on
PATH) never end: their time is the time to refusal, closed forms first, then the lane path
(SECTORVIZ_LANE_PATH=1 times the lane path alone). Run on an idle machine:
.venv/bin/python benchmarks/bench_budget.py [--units N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.model import PatternError, analyze, pattern_from_dict, warp_detail  # noqa: E402
from sectorviz.model.budget import DEFAULT_WORK, Budget  # noqa: E402
from sectorviz.model.frontend import kernel_for  # noqa: E402

F = "sectorviz.pattern/1"
TRIPS = "100 + threadIdx.x * 0"  # bounds that vary per lane: sized where the loop starts


def lane_pattern(index: str, grid: int, block: int) -> dict:
    """An access on the lane path (not affine) in a loop of 100 trips per chunk of warps: a
    chunk of 2^18 lanes fits the sample budget, the whole grid does not."""
    return {"format": F, "params": {"n": 2**20}, "launch": {"grid": [grid], "block": [block]},
            "arrays": {"x": {"dtype": "float32", "length": "n"},
                       "idx": {"dtype": "int32", "length": "n",
                               "values": {"kind": "permutation", "seed": 1}}},
            "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
            "accesses": [{"op": "load", "array": "x", "index": index,
                          "loops": [{"var": "k", "start": 0, "stop": TRIPS}]}]}


def cuda_pattern(body: str, grid: int, block: int) -> dict:
    return {"format": F, "launch": {"grid": [grid], "block": [block]},
            "arrays": {"a": {"dtype": "float32", "length": 2**22}},
            "kernel": {"code": "__global__ void k(float* a) {\n  int i = blockIdx.x * "
                               "blockDim.x + threadIdx.x;\n" + body + "\n}", "function": "k"}}


def compiled_pattern(body: str) -> dict:
    """One warp of the compiled engine (PTX) running `body`, n = 2^62: the hostile loops of
    tests/engine/ptx/test_work_budget.py, which end only at the budget."""
    doc = cuda_pattern(body, 1, 32)
    doc["params"] = {"n": 2**62}
    doc["kernel"] = {**doc["kernel"], "engine": "compiled",
                     "code": doc["kernel"]["code"].replace("float* a)", "float* a, long long n)")}
    return doc


WORKLOADS = {  # name -> (pattern document, "analyze" or "detail")
    "gather, 2^20 lanes": (lane_pattern("idx[(i + k) % n]", 4096, 256), "analyze"),
    "strided, 2^20 lanes": (lane_pattern("(i * 7 + k) % n", 4096, 256), "analyze"),
    "strided, one warp (detail)": (dict(lane_pattern("(i * 7 + k) % n", 1, 32), accesses=[{
        "op": "load", "array": "x", "index": "(i * 7 + k) % n",
        "loops": [{"var": "k", "start": 0, "stop": "10000 + threadIdx.x * 0"}]}]), "detail"),
    "CUDA access in a loop, 2^20 lanes": (cuda_pattern(
        "  for (int k = 0; ; k++) a[(i * 7 + k) % 4194304] = 0;", 4096, 256), "analyze"),
    "CUDA empty loop, 2^20 lanes": (cuda_pattern(
        "  int s = 0; for (;;) s += i;\n  a[s & 1023] = 0;", 4096, 256), "analyze"),
    "CUDA empty loop, one warp": (cuda_pattern(
        "  int s = 0; for (;;) s += i;\n  a[s & 1023] = 0;", 1, 32), "analyze"),
    "CUDA access in a loop, one warp": (cuda_pattern(
        "  for (int k = 0; ; k++) a[(i + k) & 1023] = 0;", 1, 32), "analyze"),
    "closed forms, 2^22 threads x 8": ({
        "format": F, "launch": {"grid": [2**14], "block": [256]},
        "arrays": {"a": {"dtype": "float32", "length": 2**22}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"name": f"copy {j}", "op": "load", "array": "a", "index": "i"}
                     for j in range(8)]}, "analyze"),
    "PTX while (true) with a store": (compiled_pattern(
        "  for (int k = 0; ; k++) a[(i * 7 + k) & 1023] = k;"), "analyze"),
    "PTX 2^62 trips to a parameter": (compiled_pattern(
        "  for (long long k = 0; k < n; k++) a[(i + k) & 1023] = 0;"), "analyze"),
    "PTX grid-stride loop to 2^62": (compiled_pattern(
        "  for (long long j = i; j < n; j += blockDim.x * gridDim.x) a[j & 1023] = 0;"),
        "analyze"),
    "PTX one spinning lane": (compiled_pattern(
        "  if (threadIdx.x == 0) { int s = 0; while (true) { s++; a[s & 1023] = s; } }\n"
        "  a[i] = 0;"), "analyze"),
    "PTX #pragma unroll 1000000000": (compiled_pattern(
        "  #pragma unroll 1000000000\n  for (int k = 0; k < 1000000000; k++) "
        "a[(i + k) & 1023] = 0;"), "analyze"),
}


def seconds_for_default(doc: dict, how: str, units: int) -> tuple[float, float]:
    """(units per second, seconds the default budget takes) for one workload, run until it
    spends about `units` (or to its end)."""
    pattern = pattern_from_dict(doc)
    _ = kernel_for(pattern).values  # parse, compile and build values outside the timing
    budget = Budget(work=units)
    start = time.perf_counter()
    try:
        analyze(pattern, budget=budget) if how == "analyze" else warp_detail(pattern, 0, budget)
    except PatternError:
        pass
    spent = time.perf_counter() - start
    if not budget.spent:
        raise SystemExit(f"the sample budget of {units:,} units is too small for {doc}")
    rate = budget.spent / spent
    return rate, DEFAULT_WORK / rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=2**25,
                        help="sample budget per workload (default 2^25; the workloads are "
                             "sized for it)")
    args = parser.parse_args()
    worst = 0.0
    for name, (doc, how) in WORKLOADS.items():
        rate, seconds = seconds_for_default(doc, how, args.units)
        worst = max(worst, seconds)
        print(f"{name:36s} {rate / 1e6:8.1f} M units/s  default budget in {seconds:5.1f} s "
              f"(target 5 to 15 s)")
    print(f"slowest: {worst:.1f} s for {DEFAULT_WORK:,} units")
    return 0


if __name__ == "__main__":
    sys.exit(main())
