"""Speed of `sectorviz sweep` (issue 23): 32 points of the tiled matrix multiply (CUDA) at
n = 2048 on 1 and 2 worker processes. Prints one point's time, each sweep's time, the speed-up
and the overhead against the target: one point's time x 32 / jobs, plus less than 20%; then
the same against the one-job sweep's own time per point (measured under the same load, on a
shared machine the steadier figure). Each sweep's time includes starting its workers.

The 32 points are one configuration 32 times (a param `rep` = 0..31 that no expression
reads), so every point costs the same and the figures measure the pool, not the points.

With --scheduler ADDRESS (issue "Beyond one desktop") the same points also run on that Dask
cluster ('local': a LocalCluster of the largest --jobs worker processes on this machine):
its wall time (starting the LocalCluster, finding and sending each point's files, and
closing included), its speed-up against the one-process sweep, and its overhead per point
against the one-process sweep's time shared by its workers, beside the pool's figures.
Run: .venv/bin/python benchmarks/bench_sweep.py [--n N] [--points P] [--jobs 1,2]
     [--scheduler local|tcp://HOST:8786]
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

from sectorviz.sweep.executor import LOCAL, executor_for  # noqa: E402
from sectorviz.sweep.points import PointTask, point_report, with_params  # noqa: E402

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
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="also run the points on this Dask cluster ('local': a LocalCluster "
                        "of the largest --jobs processes)")
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
        pool = executor_for(None, jobs, "bench_sweep")
        walls[jobs] = timed(lambda pool=pool: pool(point_report, work, "points", quiet=True))
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

    if args.scheduler is not None:
        cluster_figures(args.scheduler, max(walls), work, walls)


def cluster_workers(address: str, jobs: int) -> int:
    """The workers the points run on: `jobs` for a LocalCluster, else the cluster's."""
    if address == LOCAL:
        return jobs
    from dask.distributed import Client
    with Client(address, timeout=30) as client:
        return len(client.scheduler_info()["workers"])


def cluster_figures(address: str, jobs: int, work: list[PointTask],
                    walls: dict[int, float]) -> None:
    """Run the points on the cluster at `address`; print its wall time, its speed-up against
    one process and its overhead per point, beside the pool of `jobs` processes."""
    workers = cluster_workers(address, jobs)
    cluster = executor_for(address, jobs, "bench_sweep")
    results: list[dict] = []
    wall = timed(lambda: results.extend(cluster(point_report, work, "points", quiet=True)))
    assert results == executor_for(None, 1, "bench_sweep")(point_report, work[:1], "points",
                                                           quiet=True) * len(work)
    points = len(work)
    line = f"--scheduler {address} ({workers} workers): {points} points {wall:.2f} s"
    if 1 in walls:
        ideal = walls[1] / workers
        line += (f"; speed-up {walls[1] / wall:.2f}x against one process; overhead "
                 f"{(wall - ideal) / points * 1000:+.0f} ms a point against one process's "
                 f"time shared by {workers} workers ({ideal:.2f} s)")
    if jobs in walls and jobs != 1:
        line += (f"; the pool's --jobs {jobs}: {walls[jobs]:.2f} s, overhead "
                 f"{(walls[jobs] - walls.get(1, walls[jobs]) / jobs) / points * 1000:+.0f} ms "
                 f"a point")
    print(line)


if __name__ == "__main__":
    main()
