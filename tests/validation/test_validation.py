"""The validation kit (validation/): its manifest names every CUDA example with a host
program that launches it, and run.sh --dry-run goes the whole way on a machine without a GPU:
the nvcc and ncu commands it would run, the value files, `sectorviz report --measured` on the
CSVs already there, and each SASS instruction of a source page there against its prediction
(where nvcc, ptxas and nvdisasm give the SASS reading)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.engine.compiled.sass import assembler_tools
from sectorviz.model import load_pattern
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import examples_dir

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "validation"
sys.path.insert(0, str(KIT))
from compare import runs  # noqa: E402

FIXTURE = Path(__file__).parents[1] / "measured" / "vector-add.ncu.csv"
SOURCE_PAGE = Path(__file__).parents[1] / "measured" / "vector-add.source.csv"
needs_sass = pytest.mark.skipif(find_compiler() is None or assembler_tools(find_compiler()) is None,
                                reason="no nvcc with ptxas and nvdisasm here: no SASS reading")


def dry_run(out, **env):
    """What `validation/run.sh --dry-run --out OUT --machine H100-SXM` prints (it must succeed)."""
    done = subprocess.run(["bash", str(KIT / "run.sh"), "--dry-run", "--out", str(out),
                           "--machine", "H100-SXM"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHON=sys.executable, **env), timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


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
    out = dry_run(tmp_path)
    assert f"would run: nvcc -O3 -arch=native -o {tmp_path}/vector-add-cuda " in out
    assert ("would run: ncu --csv --page raw --cache-control all --clock-control none "
            "--metrics l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") in out
    assert ("would run: ncu --section SourceCounters --cache-control all --clock-control none "
            "--kernel-name-base function --kernel-name vectorAdd --launch-count 1 "
            f"--force-overwrite -o {tmp_path}/vector-add-cuda {tmp_path}/vector-add-cuda\n") in out
    assert (f"would run: ncu --import {tmp_path}/vector-add-cuda.ncu-rep --csv --page source "
            "--print-source sass\n") in out
    assert "no aos-cuda.ncu.csv: not profiled" in out
    assert "== vector-add-cuda, counted in SASS" in out
    section = out[out.rindex("== vector-add-cuda, counted in PTX"):]
    assert re.search(r"L1 request side, loads +predicted +8,388,608 B +measured +8,388,608 B"
                     r"\s+ratio 1\.000", section)
    assert re.search(r"L2 -> DRAM reads, cache model +predicted +8,388,608 B", section)
    data = np.fromfile(tmp_path / "histogram-naive-cuda.data.bin", dtype=np.uint8)
    pattern = load_pattern(examples_dir() / "histogram-naive-cuda.sectorviz.json")
    assert data.tolist() == kernel_for(pattern).values["data"].whole().tolist()


@needs_sass
def test_the_dry_run_compares_each_sass_instruction_of_the_source_page_there(tmp_path):
    shutil.copy(SOURCE_PAGE, tmp_path / "vector-add-cuda.source.csv")
    # the kit counts as a user's run does: compiled, in SASS (the tests' default reads source)
    out = dry_run(tmp_path, SECTORVIZ_ENGINE="compiled")
    assert "no vector-add-cuda.ncu.csv: not profiled" in out
    section = out[out.index("== vector-add-cuda, per SASS instruction (vector-add-cuda.source"):]
    # 2^20 threads are 32,768 warps, one request each per instruction; a warp's 32 consecutive
    # aligned floats are 128 B, 4 sectors: 131,072 per instruction, as the page measures. The
    # PTX reading is the same: one SASS instruction per PTX one. Offsets: nvdisasm's listing
    # of vector-add.cu for sm_90 (LDG a[i] at 0xd0, b[i] at 0xf0, STG c[i] at 0x120)
    for offset, opcode, access in (("0x00d0", "LDG.E", r"a\[i\]"), ("0x00f0", "LDG.E", r"b\[i\]"),
                                   ("0x0120", "STG.E", r"c\[i\]")):
        assert re.search(rf"  {offset}  {opcode} +requests +32,768 +32,768 +1\.000 +32,768 "
                         rf"+1\.000  line 21: {access}\n +sectors +131,072 +131,072 +1\.000 "
                         r"+131,072 +1\.000\n", section), offset
    assert "predicted nowhere" not in section and "not in the source page" not in section
