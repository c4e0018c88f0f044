"""The validation kit (validation/): its manifest names every CUDA example with a host
program that launches it, and run.sh --dry-run goes the whole way on a machine without a GPU:
the nvcc and ncu commands it would run, the value files, and `sectorviz report --measured` on
the CSVs already there."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from sectorviz.model import load_pattern
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import examples_dir

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "validation"
sys.path.insert(0, str(KIT))
from compare import runs  # noqa: E402

FIXTURE = Path(__file__).parents[1] / "measured" / "vector-add.ncu.csv"


def test_every_cuda_example_has_one_run_with_a_host_main_that_launches_its_kernel():
    names = sorted(p.name.removesuffix(".sectorviz.json")
                   for p in examples_dir().glob("*-cuda.sectorviz.json"))
    assert sorted(r.pattern for r in runs()) == names
    for run in runs():
        host = (KIT / run.host).read_text()
        assert "int main(" in host, run.host
        function = load_pattern(examples_dir() / f"{run.pattern}.sectorviz.json").kernel[
            "function"]
        included = re.findall(r'#include "([^"]+)"', host)
        code = host + "".join((KIT / run.host).parent.joinpath(i).read_text() for i in included)
        assert re.search(rf"\b{re.escape(function)}\s*(<[^>]*>)?\s*<<<", code), run.pattern


def test_the_dry_run_prints_the_commands_and_compares_the_csvs_there(tmp_path):
    shutil.copy(FIXTURE, tmp_path / "vector-add-cuda.ncu.csv")
    env = dict(os.environ, PYTHON=sys.executable)
    done = subprocess.run(["bash", str(KIT / "run.sh"), "--dry-run", "--out", str(tmp_path),
                           "--machine", "H100-SXM"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"would run: nvcc -O3 -arch=native -o {tmp_path}/vector-add-cuda " in out
    assert ("would run: ncu --csv --page raw --cache-control all --clock-control none "
            "--metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") in out
    assert "no aos-cuda.ncu.csv: not profiled" in out
    assert "== vector-add-cuda, counted in SASS" in out
    section = out[out.rindex("== vector-add-cuda, counted in PTX"):]
    assert re.search(r"L1 request side, loads +predicted +8,388,608 B +measured +8,388,608 B"
                     r"\s+ratio 1\.000", section)
    assert re.search(r"L2 -> DRAM reads, cache model +predicted +8,388,608 B", section)
    data = np.fromfile(tmp_path / "histogram-naive-cuda.data.bin", dtype=np.uint8)
    pattern = load_pattern(examples_dir() / "histogram-naive-cuda.sectorviz.json")
    assert data.tolist() == kernel_for(pattern).values["data"].whole().tolist()
