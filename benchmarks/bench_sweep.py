"""Speed of `sectorviz sweep` (issue 23): 32 points of the tiled matrix multiply (CUDA) at
n = 2048 on 1 and 2 worker processes. Prints one point's time, each sweep's time, the speed-up
and the overhead against the target: one point's time x 32 / jobs, plus less than 20%; then
the same against the one-job sweep's own time per point (measured under the same load, on a
shared machine the steadier figure). Each sweep's time includes starting its workers.

The 32 points are one configuration 32 times (a param `rep` = 0..31 that no expression
reads), so every point costs the same and the figures measure the pool, not the points.
Run: .venv/bin/python benchmarks/bench_sweep.py [--n N] [--points P] [--jobs 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.sweep.points import PointTask, point_report, with_params  # noqa: E402
from sectorviz.sweep.pool import run_tasks  # noqa: E402

EXAMPLE = ROOT / "resources" / "examples" / "matmul-tiled-cuda.sectorviz.json"
TARGET_OVERHEAD = 0.20  # over one point's time x points / jobs


def tasks(n: int, points: int) -> list[PointTask]:
    doc = json.loads(EXAMPLE.read_text())
    doc["params"] = {**doc["params"], "n": n, "rep": 0}
    return [PointTask(with_params(doc, {"rep": r}), str(EXAMPLE.parent), None)
            for r in range(points)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the pool's workers,
    once joined): what a sweep costs whatever else the machine runs."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def one_point(task: PointTask) -> float:
    """The best of two runs of one point in this process (its kernel already parsed)."""
    return min(timed(lambda: point_report(task)) for _ in range(2))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--points", type=int, default=32)
    p.add_argument("--jobs", default="1,2")
    args = p.parse_args()
    work = tasks(args.n, args.points)
    first = point_report(work[0])
    assert "report" in first, first
    print(f"tiled matmul (CUDA), n = {args.n}: {first['report']['totals']['sectors']:,} "
          f"sectors a point; {os.cpu_count()} cores")
    walls, cpus = {}, {}
    for jobs in (int(j) for j in args.jobs.split(",")):
        one = one_point(work[0])  # measured next to each sweep: the machine's load drifts
        cpu = cpu_seconds()
        walls[jobs] = timed(lambda jobs=jobs: run_tasks(point_report, work, jobs, "points",
                                                        quiet=True))
        cpus[jobs] = cpu_seconds() - cpu
        target = one * args.points / jobs
        limit = target * (1 + TARGET_OVERHEAD)
        print(f"--jobs {jobs}: one point {one:.2f} s; {args.points} points {walls[jobs]:.2f} s; "
              f"target {target:.2f} s + 20% = {limit:.2f} s: overhead "
              f"{walls[jobs] / target - 1:+.1%}, {'met' if walls[jobs] <= limit else 'missed'}; "
              f"load average {os.getloadavg()[0]:.2f}; CPU {cpus[jobs]:.1f} s")
    if 1 in walls:  # one point's time as the one-job sweep measured it, same conditions
        per_point = walls[1] / args.points
        for jobs, wall in walls.items():
            target = per_point * args.points / jobs
            print(f"--jobs {jobs}: speed-up {walls[1] / wall:.2f}x; against the one-job sweep's "
                  f"{per_point:.2f} s a point, overhead {wall / target - 1:+.1%}; CPU over "
                  f"the one-job sweep's {cpus[jobs] / cpus[1] - 1:+.1%} (the pool's own work)")


if __name__ == "__main__":
    main()
