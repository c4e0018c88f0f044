"""Every example whose kernel is CUDA C++ (a `source` or inline `code`) reports through the
product's own path (`sectorviz report`, as a user runs it) in each reading (compiled at -O3,
as written at -G), with nvcc and with NVRTC, its host facts read from the compiled code
(engine/compiled/hostfacts.py).
Issue 29's histogram defect: the pointee types reach the PTX engine as pattern dtypes
(`unsigned char *` is uint8), so the `data` values the pattern gives are read."""

import json

import pytest
from compiled_helpers import FOUND

from sectorviz.cli import main
from sectorviz.engine.compiled import compiler
from sectorviz.paths import examples_dir

EXAMPLES = [p for p in sorted(examples_dir().glob("*.sectorviz.json"))
            if {"source", "code"} & set(json.loads(p.read_text()).get("kernel", {}))]
NVRTC_NAMES_INSTANTIATIONS = {"matmul-tiled-cuda"}  # a template kernel: NVRTC compiles no
# host launch, so the pattern must name the instantiation (README, CUDA engines)
COMPILERS = [c for c, found in (("nvcc", FOUND is not None and FOUND.kind == "nvcc"),
                                ("nvrtc", compiler.find_nvrtc() is not None)) if found]


@pytest.mark.parametrize("reading", ["compiled", "source"])
@pytest.mark.parametrize("compiler_name", COMPILERS)
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name.split(".")[0])
def test_every_cuda_example_reports_in_each_reading(example, compiler_name, reading,
                                                    monkeypatch, capsys):
    monkeypatch.setenv("SECTORVIZ_ENGINE", reading)
    monkeypatch.setenv("SECTORVIZ_COMPILER", compiler_name)
    status = main(["report", "--quiet", str(example)])
    out, err = capsys.readouterr()
    if compiler_name == "nvrtc" and example.name.split(".")[0] in NVRTC_NAMES_INSTANTIATIONS:
        assert status == 2 and "named by its instantiation" in err
        return
    assert status == 0, err
    assert "sector demand" in out
    assert ("as written (debug compile by" in " ".join(out.split())) == (reading == "source")


@pytest.mark.parametrize("compiler_name", COMPILERS)
def test_the_histogram_reads_its_byte_values(compiler_name, monkeypatch, capsys):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    monkeypatch.setenv("SECTORVIZ_COMPILER", compiler_name)
    example = examples_dir() / "histogram-naive-cuda.sectorviz.json"
    assert main(["report", "--quiet", str(example)]) == 0
    assert "43,828 sectors" in capsys.readouterr().out  # as the interpreter counted it
