"""The CUDA examples read as written (the kernel's debug compile read by the PTX engine;
ported from the C++ interpreter's tests, issue 29): the seeds' kernels give exactly their
pattern-file twins' numbers, the other kernels the numbers worked out in their notes; and the
property that an affine kernel and the pattern file saying the same thing count the same."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict

import pytest
from as_written_helpers import kernel_pattern
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.cli import main
from sectorviz.model import analyze, load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

EXAMPLES = examples_dir()
MIB = 2**20
STATS = ("requests", "active_lanes", "logical_bytes", "useful_bytes", "sectors", "ideal_sectors",
         "excess_sectors", "min", "max", "mode", "unique_sectors")


def run(name):
    return analyze(load_pattern(EXAMPLES / f"{name}.sectorviz.json"))


@pytest.mark.parametrize("twin", ["vector-add", "gather-distinct", "gather-repeated",
                                  "transpose-naive", "transpose-tiled"])
def test_cuda_kernel_gives_its_pattern_twins_numbers(twin):
    pattern, cuda = run(twin), run(f"{twin}-cuda")
    assert asdict(cuda.totals) == asdict(pattern.totals)
    assert (cuda.warps, cuda.threads) == (pattern.warps, pattern.threads)
    # the same traffic at every boundary (the assumptions say how each reading counts)
    assert [(b.name, b.bytes, b.sectors, b.metric) for b in cuda.boundaries] == \
        [(b.name, b.bytes, b.sectors, b.metric) for b in pattern.boundaries]
    by_access = {(s.op, s.array): s for s in pattern.instructions}
    assert len(cuda.instructions) == len(by_access)
    for s in cuda.instructions:
        twin_stats = by_access[(s.op, s.array)]
        assert [getattr(s, f) for f in STATS] == [getattr(twin_stats, f) for f in STATS], s.name
        assert s.width == twin_stats.width and s.line and s.column and s.source


def test_seed_numbers_from_cuda():
    assert run("vector-add-cuda").totals.sectors * 32 == 12 * MIB
    assert run("gather-distinct-cuda").totals.sectors * 32 == 40 * MIB
    naive, tiled = run("transpose-naive-cuda"), run("transpose-tiled-cuda")
    assert naive.totals.sectors // naive.warps == 36 and tiled.totals.sectors // tiled.warps == 8


def sheet(a):
    """{(line, op, array): (requests, sectors, min, max)}; -G names one statement's accesses
    by the statement, so they are told apart by array."""
    return {(s.line, s.op, s.array): (s.requests, s.sectors, s.min, s.max)
            for s in a.instructions}


def test_naive_matmul():
    a = run("matmul-naive-cuda")
    assert a.warps == 2048
    # a[k] and b[k * stride] inside dot() (line 14), 256 iterations of 2048 warps
    assert sheet(a) == {(14, "load", "A"): (2048 * 256, 2048 * 256 * 2, 2, 2),
                        (14, "load", "B"): (2048 * 256, 2048 * 256 * 2, 2, 2),
                        (24, "store", "C"): (2048, 2048 * 4, 4, 4)}


def test_grid_stride_loop():
    a = run("grid-stride-cuda")
    requests = -(-1_000_003 // 32)
    sectors = 1_000_000 // 8 + 1  # the last, partial request: 3 lanes in one sector
    # loads run before the store they feed: x[i], y[i], then the store y[i]
    assert [(s.line, s.op, s.array, s.requests, s.sectors, s.min) for s in a.instructions] == [
        (9, "load", "x", requests, sectors, 1), (9, "load", "y", requests, sectors, 1),
        (9, "store", "y", requests, sectors, 1)]


def test_stencil_1d():
    a = run("stencil-1d-cuda")
    assert sheet(a) == {(16, "load", "in"): (32768, 5 * 32768, 5, 5),
                        (18, "load", "in"): (4096, 4096, 1, 1),
                        (19, "load", "in"): (4096, 4096, 1, 1),
                        (26, "store", "out"): (32768, 4 * 32768, 4, 4)}
    assert a.instructions[0].useful_fraction == 0.8


def test_float4_copy():
    a = run("float4-copy-cuda")
    assert [(s.op, s.width, s.requests, s.sectors / s.requests, s.useful_fraction)
            for s in a.instructions] == [("load", 16, 8192, 16, 1.0), ("store", 16, 8192, 16, 1.0)]
    assert a.totals.sectors * 32 == 8 * MIB


def test_reduction():
    a = run("reduction-cuda")
    assert sheet(a) == {(14, "load", "in"): (16384, 65536, 4, 4),
                        (16, "load", "in"): (16384, 65536, 4, 4),
                        (26, "store", "out"): (2048, 2048, 1, 1)}


def test_report_json_carries_line_column_source(capsys):
    assert main(["report", str(EXAMPLES / "vector-add-cuda.sectorviz.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # -G places every access of `c[i] = a[i] + b[i];` at the statement (.loc 21 9); each
    # one's source is its array's expression there
    assert [(i["line"], i["column"], i["source"], i["op"]) for i in doc["instructions"]] == [
        (21, 9, "a[i]", "load"), (21, 9, "b[i]", "load"), (21, 9, "c[i]", "store")]
    assert [i["array"] for i in doc["instructions"]] == ["a", "b", "c"]
    assert doc["totals"]["sectors"] * 32 == 12 * MIB


def test_report_warp_detail_works_on_a_kernel(capsys):
    path = EXAMPLES / "transpose-naive-cuda.sectorviz.json"
    assert main(["report", str(path), "--warp", "5"]) == 0
    assert "c[col * m + row]" in capsys.readouterr().out


def test_array_dtype_defaults_to_the_pointee_type():
    doc = json.loads((EXAMPLES / "vector-add-cuda.sectorviz.json").read_text())
    for spec in doc["arrays"].values():
        spec.pop("dtype")
    a = analyze(pattern_from_dict(doc, EXAMPLES))
    assert [(s.width, s.sectors_per_request) for s in a.instructions] == [(4, 4.0)] * 3
    # an array no instruction reaches is placed as bytes (the interpreter refused it): the
    # kernel's numbers do not change
    doc["arrays"]["z"] = {"length": 4}
    b = analyze(pattern_from_dict(doc, EXAMPLES))
    assert asdict(b.totals) == asdict(a.totals)


@settings(max_examples=30, deadline=None)
@given(stride=st.integers(0, 40), offset=st.integers(0, 64), limit=st.integers(0, 300),
       block=st.sampled_from([32, 48, 64, 96]), grid=st.integers(1, 4),
       dtype=st.sampled_from([("float", "float32"), ("double", "float64"),
                              ("float4", "float4"), ("char", "int8")]),
       trips=st.integers(0, 3))
def test_affine_kernel_matches_its_pattern(stride, offset, limit, block, grid, dtype, trips):
    """Four kernels (one per element type), compiled once each; the rest are parameters.
    -G keeps the load whose value is never used."""
    ctype, dtype_name = dtype
    length = (block * grid) * (stride + 1) + offset + 8 * trips + 8
    arrays = {"a": {"dtype": dtype_name, "length": length}}
    params = {"s": stride, "o": offset, "g": limit, "r": trips}
    code = f"""
    __global__ void k(const {ctype}* a, int s, int o, int g, int r) {{
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= g) return;
        for (int j = 0; j < r; ++j)
            {{ {ctype} v = a[t * s + o + 8 * j]; }}
    }}"""
    cuda = analyze(kernel_pattern(code, arrays=arrays, params=params, grid=(grid,),
                                  block=(block,)))
    pattern = analyze(pattern_from_dict({
        "format": "sectorviz.pattern/1", "params": params,
        "launch": {"grid": [grid], "block": [block]}, "arrays": arrays,
        "let": {"t": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "t < g",
        "accesses": [{"op": "load", "array": "a", "index": "t * s + o + 8 * j",
                      "loops": [{"var": "j", "start": 0, "stop": "r"}]}]}))
    assert asdict(cuda.totals) == asdict(pattern.totals)
