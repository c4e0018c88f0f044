"""The CUDA examples: the seeds' kernels give exactly their pattern-file twins' numbers, and
the other kernels give the numbers worked out in their notes."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError, analyze, load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir

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
    assert [asdict(b) for b in cuda.boundaries] == [asdict(b) for b in pattern.boundaries]
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
    return {s.source: (s.op, s.requests, s.sectors, s.min, s.max) for s in a.instructions}


def test_naive_matmul():
    a = run("matmul-naive-cuda")
    assert a.warps == 2048
    assert sheet(a) == {"a[k]": ("load", 2048 * 256, 2048 * 256 * 2, 2, 2),
                        "b[k * stride]": ("load", 2048 * 256, 2048 * 256 * 2, 2, 2),
                        "C[row * n + col]": ("store", 2048, 2048 * 4, 4, 4)}
    assert [s.line for s in a.instructions] == [14, 14, 24]  # inside the inlined dot()


def test_grid_stride_loop():
    a = run("grid-stride-cuda")
    requests = -(-1_000_003 // 32)
    sectors = 1_000_000 // 8 + 1  # the last, partial request: 3 lanes in one sector
    # loads run before the store they feed: x[i], y[i], then the store y[i]
    assert [(s.op, s.requests, s.sectors, s.min) for s in a.instructions] == [
        ("load", requests, sectors, 1), ("load", requests, sectors, 1),
        ("store", requests, sectors, 1)]
    assert [s.name for s in a.instructions] == ["line 9: x[i]", "line 9: y[i] (load)",
                                                "line 9: y[i] (store)"]


def test_stencil_1d():
    a = run("stencil-1d-cuda")
    assert sheet(a) == {"in[g + RADIUS]": ("load", 32768, 5 * 32768, 5, 5),
                        "in[g]": ("load", 4096, 4096, 1, 1),
                        "in[g + RADIUS + BLOCK_SIZE]": ("load", 4096, 4096, 1, 1),
                        "out[g]": ("store", 32768, 4 * 32768, 4, 4)}
    assert a.instructions[0].useful_fraction == 0.8


def test_float4_copy():
    a = run("float4-copy-cuda")
    assert [(s.op, s.width, s.requests, s.sectors / s.requests, s.useful_fraction)
            for s in a.instructions] == [("load", 16, 8192, 16, 1.0), ("store", 16, 8192, 16, 1.0)]
    assert a.totals.sectors * 32 == 8 * MIB


def test_reduction():
    a = run("reduction-cuda")
    assert sheet(a) == {"in[i]": ("load", 16384, 65536, 4, 4),
                        "in[i + blockDim.x]": ("load", 16384, 65536, 4, 4),
                        "out[blockIdx.x]": ("store", 2048, 2048, 1, 1)}


def test_report_json_carries_line_column_source(capsys):
    assert main(["report", str(EXAMPLES / "vector-add-cuda.sectorviz.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [(i["line"], i["column"], i["source"], i["op"]) for i in doc["instructions"]] == [
        (21, 16, "a[i]", "load"), (21, 23, "b[i]", "load"), (21, 9, "c[i]", "store")]
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
    doc["arrays"]["z"] = {"length": 4}
    with pytest.raises(PatternError, match="arrays.z: no dtype"):
        analyze(pattern_from_dict(doc, EXAMPLES))
