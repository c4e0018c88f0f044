"""Sweeps, batches and checks on a real Dask cluster (two worker processes on 127.0.0.1): the
same output as the local pool, a worker killed mid-sweep loses nothing, Ctrl-C leaves nothing
queued, and without Dask `--scheduler` is one line saying what to install. Every test is
bounded in time (SIGALRM) and shuts down what it starts."""

import contextlib
import json
import os
import shutil
import signal
import sys
import time

import pytest

from sectorviz.cli import main
from sectorviz.paths import examples_dir
from sectorviz.sweep.cluster import Cluster
from sectorviz.sweep.points import PointTask, point_report, with_params

distributed = pytest.importorskip("distributed")

BOUND_S = 120  # no test here runs longer
SLOW = {  # a tenth of a second or so a point, so that a sweep is still running when killed
    "format": "sectorviz.pattern/1", "name": "Gather, a million threads",
    "params": {"rep": 0, "n": 1048576},
    "launch": {"grid": ["n / 256"], "block": [256]},
    "arrays": {"index": {"dtype": "int32", "length": "n",
                         "values": {"kind": "uniform", "low": 0, "high": 262144, "seed": 0}},
               "data": {"dtype": "float32", "length": 262144 + 64}},
    "let": {"i": "blockIdx.x * 256 + threadIdx.x"},
    "accesses": [{"name": "load data[index[i] + rep]", "op": "load", "array": "data",
                  "index": "index[i] + rep"}],
}


@contextlib.contextmanager
def bounded(seconds=BOUND_S):
    """TimeoutError in the test if the block runs past `seconds`."""
    def expire(_signum, _frame):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def local_cluster():
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    host="127.0.0.1", dashboard_address=":0")


@pytest.fixture(scope="module")
def scheduler():
    """The address of a two-worker LocalCluster, shut down after the module's tests."""
    with bounded(), local_cluster() as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def examples(tmp_path):
    """Copies of a CUDA example and its kernel, a pattern of accesses, and a broken file."""
    for name in ("vector-add-cuda.sectorviz.json", "vector-add.cu",
                 "transpose-tiled.sectorviz.json"):
        shutil.copy(examples_dir() / name, tmp_path / name)
    (tmp_path / "broken.sectorviz.json").write_text("{")
    return tmp_path


def run(capsys, *argv):
    with bounded():
        status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_sweep_prints_and_writes_what_the_pool_does(capsys, monkeypatch, examples,
                                                      scheduler):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "source")  # the workers started without it
    pattern = examples / "vector-add-cuda.sectorviz.json"
    outputs = []
    for where in (["--jobs", "2"], ["--scheduler", scheduler]):
        csv = examples / f"points{len(outputs)}.csv"
        outputs.append((*run(capsys, "sweep", pattern, "--param", "threads=32,64,96,128",
                             "--param", "n=4096,1000", "--json", "-o", csv, *where),
                        csv.read_bytes()))
    assert outputs[0] == outputs[1] and outputs[0][0] == 0
    assert len(json.loads(outputs[0][1])["points"]) == 8


def test_a_batch_writes_what_the_pool_does(capsys, monkeypatch, examples, scheduler):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "source")
    files = [examples / name for name in ("vector-add-cuda.sectorviz.json",
                                          "broken.sectorviz.json",
                                          "transpose-tiled.sectorviz.json")]
    outputs = []
    for where in (["--jobs", "2"], ["--scheduler", scheduler]):
        jsonl, csv = examples / f"b{len(outputs)}.jsonl", examples / f"b{len(outputs)}.csv"
        outputs.append((*run(capsys, "batch", *files, "--jsonl", jsonl, "--csv", csv, *where),
                        jsonl.read_bytes(), csv.read_bytes()))
    assert outputs[0] == outputs[1] and outputs[0][0] == 2  # the broken file's row and line


def test_check_reads_the_scheduler_from_the_environment(capsys, monkeypatch, examples,
                                                        scheduler):
    pattern = examples / "transpose-tiled.sectorviz.json"
    pool = run(capsys, "check", pattern, "--jobs", "1")
    monkeypatch.setenv("SECTORVIZ_SCHEDULER", scheduler)
    assert run(capsys, "check", pattern) == pool


def test_scheduler_local_starts_and_stops_its_own_workers(capsys, tmp_path):
    pattern = tmp_path / "slow.sectorviz.json"
    pattern.write_text(json.dumps({**SLOW, "params": {"rep": 0, "n": 1024}}))
    argv = ["sweep", pattern, "--param", "rep=0,1,2", "--json"]
    assert run(capsys, *argv, "--scheduler", "local", "--jobs", "2") == \
        run(capsys, *argv, "--jobs", "1")


def slow_points(tmp_path, count):
    return [PointTask(with_params(SLOW, {"rep": r}), str(tmp_path), None)
            for r in range(count)]


def test_a_worker_killed_mid_sweep_loses_no_point(tmp_path):
    tasks = slow_points(tmp_path, 12)
    with bounded(), local_cluster() as cluster, distributed.Client(cluster) as client:
        pids = sorted(client.run(os.getpid).values())  # asked here, not from inside the
        killed: list[int] = []  # sweep's callback (a second client's loop: flaky there)

        def kill_a_busy_worker(_index, _result):
            if not killed:  # 12 slow points on 2 workers: after the first, both are busy
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        results = Cluster(cluster.scheduler_address, 2, "test")(
            point_report, tasks, "points", quiet=True, done=kill_a_busy_worker)
    assert killed
    assert results == [point_report(task) for task in tasks]


def test_ctrl_c_cancels_every_outstanding_point(tmp_path, scheduler):
    def interrupt(_index, _result):
        raise KeyboardInterrupt
    with bounded(), distributed.Client(scheduler) as client:
        with pytest.raises(KeyboardInterrupt):
            Cluster(scheduler, 2, "test")(point_report, slow_points(tmp_path, 8), "points",
                                          quiet=True, done=interrupt)
        deadline = time.monotonic() + 30
        while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
            assert time.monotonic() < deadline, "points still on the cluster"
            time.sleep(0.2)


@pytest.mark.parametrize("command", ["sweep", "batch", "check"])
def test_without_dask_the_flag_says_what_to_install(capsys, monkeypatch, examples, command):
    for name in ("dask", "dask.distributed", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails: not installed
    pattern = examples / "transpose-tiled.sectorviz.json"
    params = ["--param", "pad=0,1"] if command == "sweep" else []
    status, out, err = run(capsys, command, pattern, *params, "--scheduler", "local")
    assert (status, out) == (2, "")
    assert err == f"sectorviz {command}: --scheduler needs Dask's distributed scheduler: " \
                  "pip install sectorviz[cluster]\n"


def test_an_unreachable_scheduler_is_one_line(capsys, monkeypatch, examples):
    monkeypatch.setattr("sectorviz.sweep.cluster.CONNECT_TIMEOUT_S", 1)
    status, out, err = run(capsys, "batch", examples / "transpose-tiled.sectorviz.json",
                           "--scheduler", "tcp://127.0.0.1:9")
    assert (status, out) == (2, "")
    assert err.startswith("sectorviz batch: --scheduler tcp://127.0.0.1:9: cannot connect: ")
    assert err.count("\n") == 1
