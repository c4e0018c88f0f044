"""A task shipped to a worker carries the files its pattern reads: run where the user's
folder is gone, it gives the result the user's folder gives (the cluster's workers need
sectorviz installed, not the folders)."""

import json
import shutil

import pytest

from sectorviz.sweep.points import FileTask, PointTask, file_report, point_report
from sectorviz.sweep.shipping import run_shipped, ship_all

KERNEL = """#include "../include/index.h"
__global__ void scale(const float* a, float* b, int n, int stride)
{
    int i = global_index() * stride;
    if (i < n) {
        b[i] = 2.0f * a[i];
    }
}
"""
HEADER = "__device__ inline int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }\n"
PATTERN = {
    "format": "sectorviz.pattern/1", "name": "Strided scale",
    "params": {"n": 4096, "stride": 1},
    "launch": {"grid": ["n / 256"], "block": [256]},
    "arrays": {"a": {"length": "n"}, "b": {"length": "n"}},
    "kernel": {"source": "../kernels/scale.cu", "function": "scale", "engine": "source"},
}


@pytest.fixture
def repository(tmp_path):
    """A repository whose pattern reads a kernel and a header outside its own folder."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for folder, name, text in [("kernels", "scale.cu", KERNEL), ("include", "index.h", HEADER),
                               ("patterns", "scale.sectorviz.json", json.dumps(PATTERN))]:
        (root / folder).mkdir()
        (root / folder / name).write_text(text)
    return root


def test_a_point_runs_on_its_shipped_files_without_the_folder(repository):
    task = PointTask({**PATTERN, "params": {"n": 4096, "stride": 2}},
                     str(repository / "patterns"), None)
    here = point_report(task)
    shipped = ship_all(point_report, [task])[0]
    assert sorted(shipped.files) == [str((repository / "include" / "index.h").resolve()),
                                     str((repository / "kernels" / "scale.cu").resolve())]
    shutil.rmtree(repository)
    assert "report" in here and run_shipped(shipped) == here


def test_a_file_runs_on_its_shipped_files_and_keeps_its_name(repository):
    path = str(repository / "patterns" / "scale.sectorviz.json")
    here = file_report(FileTask(path, None))
    shipped = ship_all(file_report, [FileTask(path, None)])[0]
    shutil.rmtree(repository)
    assert run_shipped(shipped) == here and here["file"] == path


def test_an_error_names_the_users_file_not_the_workers_copy(repository):
    kernel = repository / "kernels" / "scale.cu"
    kernel.write_text(KERNEL.replace("b[i] =", "b[i] = undeclared +"))
    path = str(repository / "patterns" / "scale.sectorviz.json")
    here = file_report(FileTask(path, None))
    shipped = ship_all(file_report, [FileTask(path, None)])[0]
    shutil.rmtree(repository)
    assert "error" in here and run_shipped(shipped) == here


def test_points_of_one_pattern_are_read_once(repository, monkeypatch):
    calls = []
    monkeypatch.setattr("sectorviz.sweep.shipping.files_read",
                        lambda task: calls.append(task) or {})
    tasks = [PointTask({**PATTERN, "params": {"n": 4096, "stride": s}},
                       str(repository / "patterns"), None) for s in (1, 2, 4)]
    assert len(ship_all(point_report, tasks)) == 3 and len(calls) == 1
