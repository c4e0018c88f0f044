"""`sectorviz report` text fits 100 columns: every example's sheet and --explain, on the
source engine and (where nvcc is found) on the compiled one, whose instruction names carry
the whole statement and each unrolled copy; long names are elided in the middle, their line
and their op and copy number kept, and `--json` keeps them whole. The front end's assumptions
read as prose after the load boundary's ('.; ' nowhere)."""

import json

import pytest

from sectorviz.cli import main
from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.paths import examples_dir

WIDTH = 100
EXAMPLES = sorted(examples_dir().glob("*.sectorviz.json"))
CUDA_EXAMPLES = sorted(examples_dir().glob("*-cuda.sectorviz.json"))
MATMUL_TILED = examples_dir() / "matmul-tiled-cuda.sectorviz.json"
COPY_3 = "line 26: As[ty][k], ld.shared.f32 (3 of 16)"
needs_nvcc = pytest.mark.skipif(find_compiler() is None, reason="no CUDA compiler here")


def report_lines(capsys, *argv):
    assert main(["report", "--quiet", *map(str, argv)]) == 0
    return capsys.readouterr().out.splitlines()


def too_wide(lines):
    return [line for line in lines if len(line) > WIDTH]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name.split(".")[0])
def test_every_example_fits_100_columns(capsys, example):
    assert too_wide(report_lines(capsys, example, "--explain")) == []


@needs_nvcc
@pytest.mark.parametrize("example", CUDA_EXAMPLES, ids=lambda p: p.name.split(".")[0])
def test_every_compiled_example_fits_100_columns(capsys, monkeypatch, example):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    assert too_wide(report_lines(capsys, example, "--explain")) == []


@needs_nvcc
def test_an_unrolled_copy_is_named_by_its_expression_and_copy(capsys, monkeypatch):
    """`sum += As[ty][k] * Bs[k][tx];` unrolled 16 times: each load named by its own
    array's expression and its copy, short enough for a column, the same in --json."""
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    lines = report_lines(capsys, MATMUL_TILED, "--level", "ptx")
    assert ("  line 26: As[ty][k], ld.shared.f32 (3 of 16)         32,768 wavefronts in 32,768 "
            "requests (1.00 per") in lines
    assert "  line 26: Bs[k][tx], ld.shared.f32 (3 of 16), this warp, execution 1 of 16" in lines
    doc = json.loads("\n".join(report_lines(capsys, MATMUL_TILED, "--json", "--level", "ptx")))
    assert COPY_3 in [s["name"] for s in doc["shared"]]


@needs_nvcc
def test_the_compilers_assumptions_are_sentences_after_the_load_boundarys(capsys, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    doc = json.loads("\n".join(report_lines(capsys, MATMUL_TILED, "--json", "--level", "ptx")))
    loads = doc["boundaries"][0]["assumption"]
    assert ".;" not in loads
    assert "(requests: l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum). Counted in PTX: the " \
           "PTX instructions" in loads
    assert "unroll further or spill registers (the PTX level was asked). The warps" in loads
    doc = json.loads("\n".join(report_lines(capsys, MATMUL_TILED, "--json")))
    loads = doc["boundaries"][0]["assumption"]
    assert ".;" not in loads
    if doc["level"] == "sass":
        assert "(requests: l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum). Counted in SASS: " \
               "ptxas" in loads
        assert "line 26: ptxas merged 4 loads of As into one 128-bit load (LDS.128)." in loads


@needs_nvcc
def test_the_as_written_readings_local_memory_sentence_follows_a_full_stop(capsys, tmp_path):
    """A per-thread array indexed at run time is local memory in the as-written reading (the
    interpreter's clause about per-thread arrays is gone): its layout is a sentence, joined
    to the load side's text after full stops, never '.;'."""
    (tmp_path / "k.cu").write_text("__global__ void k(float *a)\n{\n    float t[4];\n"
                                   "    for (int j = 0; j < 4; j++) t[j] = a[threadIdx.x + j];\n"
                                   "    a[threadIdx.x] = t[threadIdx.x % 4];\n}\n")
    pattern = tmp_path / "k.sectorviz.json"
    pattern.write_text(json.dumps({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "length": 64}},
        "kernel": {"source": "k.cu", "function": "k"}}))
    doc = json.loads("\n".join(report_lines(capsys, pattern, "--json")))
    loads = doc["boundaries"][0]["assumption"]
    assert ".;" not in loads
    assert "(requests: l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum). Counted in PTX: " \
        "the PTX instructions the compiler emitted (" in loads
    assert loads.endswith(" coalesced.") and \
        "not order blocks). Local memory: a thread's words interleave" in loads
