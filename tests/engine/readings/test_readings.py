"""sectorviz.engine.readings: which engine reads a CUDA kernel pattern, said in the sheet header and
in `report --json`; the kernel cache keeps engines apart."""

import json

import pytest

from sectorviz.cli import main
from sectorviz.engine import readings
from sectorviz.engine.compiled.compiler import Toolchain, find_compiler
from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.frontend import Reading, kernel_for, reading_of
from sectorviz.model.pattern import with_kernel
from sectorviz.paths import examples_dir

needs_nvcc = pytest.mark.skipif(find_compiler() is None or find_compiler().kind != "nvcc",
                                reason="no nvcc on this machine")
VECTOR_ADD = examples_dir() / "vector-add-cuda.sectorviz.json"




def test_the_tests_read_kernels_as_written():
    assert reading_of(load_pattern(VECTOR_ADD)).engine == "source"
    assert reading_of(load_pattern(examples_dir() / "vector-add.sectorviz.json")) is None


def test_by_default_the_compiled_engine_reads(monkeypatch):
    monkeypatch.delenv(readings.ENGINE_VAR)
    monkeypatch.setattr("sectorviz.engine.compiled.compiler.find_compiler",
                        lambda: Toolchain("/opt/cuda/bin/nvcc", "12.8"))
    monkeypatch.setattr("sectorviz.engine.compiled.sass.assembler_tools", lambda toolchain: None)
    assert reading_of(load_pattern(VECTOR_ADD)) == Reading("compiled",
                                                           "nvcc 12.8 for sm_90 at -O3")


def test_an_unknown_engine_variable_is_one_line(monkeypatch):
    monkeypatch.setenv(readings.ENGINE_VAR, "fast")
    with pytest.raises(PatternError, match="^SECTORVIZ_ENGINE: expected one of compiled, "
                                           "source, got 'fast'"):
        reading_of(load_pattern(VECTOR_ADD))


def test_the_pattern_names_its_engine_and_architecture():
    pattern = with_kernel(load_pattern(VECTOR_ADD), "--engine", engine="source", arch="sm_80")
    assert pattern.kernel["engine"] == "source" and pattern.kernel["arch"] == "sm_80"
    assert pattern != load_pattern(VECTOR_ADD)  # the engine is part of the pattern's value
    with pytest.raises(PatternError, match="^--arch: 'sm90' is not an architecture"):
        with_kernel(pattern, "--arch", arch="sm90")
    with pytest.raises(PatternError, match="^--engine: applies to CUDA kernel patterns"):
        with_kernel(load_pattern(examples_dir() / "vector-add.sectorviz.json"), "--engine",
                    engine="compiled")


@needs_nvcc
def test_the_kernel_cache_keeps_engines_apart(monkeypatch):
    pattern = load_pattern(VECTOR_ADD)
    source = kernel_for(pattern)
    monkeypatch.setenv(readings.ENGINE_VAR, "compiled")
    compiled = kernel_for(pattern)
    assert isinstance(source, CompiledKernel) and isinstance(compiled, CompiledKernel)
    assert source is not compiled and source.compiled.as_written
    assert reading_of(pattern).compiler == f"nvcc {find_compiler().version} for sm_90 at -O3"
    assert compiled.compiled.params == ("a", "b", "c", "n")


def _report(capsys, *args) -> str:
    assert main(["report", str(VECTOR_ADD), *args]) == 0
    return capsys.readouterr().out


@needs_nvcc
def test_report_says_the_source_engine_read_it(capsys):
    doc = json.loads(_report(capsys, "--json"))
    compiler = f"nvcc {find_compiler().version} for sm_90 at -G"
    assert (doc["engine"], doc["compiler"]) == ("source", compiler)
    out = _report(capsys)
    header = " ".join(out[:out.index("\n\n")].split())  # the header wraps at 100 columns
    assert header.endswith(f"32-byte sectors; as written (debug compile by {compiler})")


@needs_nvcc
def test_report_with_the_compiled_engine(capsys):
    doc = json.loads(_report(capsys, "--json", "--engine", "compiled", "--arch", "sm_80",
                             "--level", "ptx"))
    compiler = f"nvcc {find_compiler().version} for sm_80 at -O3"
    assert (doc["engine"], doc["compiler"], doc["level"]) == ("compiled", compiler, "ptx")
    assert [i["ptx"] for i in doc["instructions"]] == ["ld.global.nc.f32"] * 2 + \
        ["st.global.f32"]
    out = _report(capsys, "--engine", "compiled", "--level", "ptx")
    header = " ".join(out[:out.index("\n\n")].split())  # the header wraps at 100 columns
    assert header.endswith(f"; compiled by nvcc {find_compiler().version} for sm_90 at -O3, "
                           "counted in PTX")


@needs_nvcc
def test_report_counted_in_sass(capsys):
    """Where ptxas and nvdisasm are found the compiled engine counts SASS, and says so."""
    doc = json.loads(_report(capsys, "--json", "--engine", "compiled"))
    if doc["level"] != "sass":
        pytest.skip("no ptxas and nvdisasm beside this nvcc")
    assert [i["ptx"] for i in doc["instructions"]] == ["ld.global.nc.f32"] * 2 + \
        ["st.global.f32"]
    assert [i["sass"] for i in doc["instructions"]] == ["LDG.E"] * 2 + ["STG.E"]
    assert all(isinstance(i["sass_offset"], int) for i in doc["instructions"])
    out = _report(capsys, "--engine", "compiled")
    header = " ".join(out[:out.index("\n\n")].split())
    assert header.endswith(f"counted in SASS: ptxas {find_compiler().version} for sm_90")


def test_engine_flags_on_a_pattern_of_accesses_are_one_line(capsys):
    assert main(["report", str(examples_dir() / "vector-add.sectorviz.json"),
                 "--engine", "source"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--engine: applies to CUDA kernel patterns" in err


@needs_nvcc
def test_compare_a_file_with_itself_across_engines(capsys):
    assert main(["compare", str(VECTOR_ADD), str(VECTOR_ADD), "--json", "--engine-a", "source",
                 "--engine-b", "compiled"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["a"]["engine"], doc["b"]["engine"]) == ("source", "compiled")
    a, b = doc["totals"]["sectors"]
    assert a == b == 3 * 131072  # the compiler changes nothing in vector add
