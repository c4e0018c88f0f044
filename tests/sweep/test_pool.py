"""The pool: results in task order, and Ctrl-C (SIGINT to the whole process group, as a
terminal sends it) stopping every worker with one line and exit 130."""

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sectorviz.paths import examples_dir
from sectorviz.sweep.pool import default_jobs, run_tasks


def square_of_first(task: tuple[int, float]) -> dict:
    time.sleep(task[1])
    return {"square": task[0] ** 2}


def test_results_come_back_in_task_order():
    tasks = [(i, 0.3 if i == 0 else 0.0) for i in range(5)]  # the first finishes last
    assert run_tasks(square_of_first, tasks, 2, "tasks", quiet=True) == [
        {"square": i * i} for i in range(5)]


def test_the_default_jobs_are_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3}, raising=False)
    assert default_jobs() == 1


def spawned_workers(pid: int) -> list[int]:
    """The pool's worker processes among `pid`'s children (Linux /proc)."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return [c for c in children
            if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]


def ignores_sigint(pid: int) -> bool:
    """Whether process `pid` ignores SIGINT (bit 2 - 1 of SigIgn in /proc/PID/status)."""
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                if x.startswith("SigIgn:"))
    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.skipif(default_jobs() < 2, reason="--jobs 2 is clamped to this run's one core")
def test_ctrl_c_stops_every_worker_and_says_so_in_one_line():
    # 97 points of the tiled matmul: the sweep runs well past the signal (its closed forms
    # take a point in well under a second now, so a few points would end before it)
    pattern = str(examples_dir() / "matmul-tiled-cuda.sectorviz.json")
    proc = subprocess.Popen([sys.executable, "-m", "sectorviz", "sweep", pattern, "--param",
                             "n=2048:8193:64", "--jobs", "2", "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 60
        while len(workers := spawned_workers(proc.pid)) < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        time.sleep(1.0)  # the workers are past their start and into a point
        assert all(ignores_sigint(pid) for pid in workers)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # a sweep the signal did not end would run on
    assert proc.returncode == 130
    assert (out, err.decode()) == (b"", f"{pattern}: sweep cancelled\n")
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or \
            Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


class Stop(Exception):
    pass


def test_done_sees_each_result_and_may_stop_the_run():
    seen = []

    def done(i, result):
        seen.append((i, result))
        if len(seen) == 2:
            raise Stop

    tasks = [(i, 0.2) for i in range(6)]
    with pytest.raises(Stop):
        run_tasks(square_of_first, tasks, 2, "tasks", quiet=True, done=done)
    assert len(seen) == 2 and all(r == {"square": i * i} for i, r in seen)
    # the pool's workers are gone (the app's warm analysis workers, left by a window an
    # earlier test opened in this process, are not the pool's)
    assert [p for p in multiprocessing.active_children() if p.name != "sectorviz worker"] == []

