"""Every bundled example reproduces the seeds' numbers exactly."""

import pytest

from sectorviz.model import analyze, load_pattern, warp_detail
from sectorviz.paths import examples_dir

EXAMPLES = examples_dir()

MIB = 2**20


def run(name):
    return analyze(load_pattern(EXAMPLES / f"{name}.sectorviz.json"))


def per_request(analysis):
    return [s.sectors / s.requests for s in analysis.instructions]


@pytest.mark.parametrize("name, sectors, sector_bytes, useful", [
    ("aligned", 4, 128, 1.0), ("shifted", 5, 160, 0.8), ("stride-32B", 32, 1024, 0.125),
])
def test_seed_001_worked_example(name, sectors, sector_bytes, useful):
    t = run(name).totals
    assert ((t.sectors, t.sectors * t.sector_bytes, t.useful_fraction)
            == (sectors, sector_bytes, useful))
    assert t.useful_bytes == t.logical_bytes == 128
    assert t.ideal_sectors == 4 and t.excess_sectors == sectors - 4


def test_vector_add():
    a = run("vector-add")
    assert a.threads == 1_048_576 and a.warps == 32_768
    assert per_request(a) == [4, 4, 4]
    assert a.totals.sectors * 32 == 12 * MIB == a.totals.logical_bytes
    assert a.totals.sectors // a.warps == 12
    assert [b.bytes for b in a.boundaries] == [8 * MIB, 4 * MIB, 12 * MIB, 12 * MIB]
    assert a.instructions[2].op == "store"


def test_gather_with_distinct_sectors():
    a = run("gather-distinct")
    assert per_request(a) == [4, 32, 4]
    assert a.totals.sectors // a.warps == 40
    assert a.totals.sectors * 32 == 40 * MIB
    assert a.totals.logical_bytes == 12 * MIB
    gather = a.instructions[1]
    assert gather.useful_bytes == 128 * a.warps and gather.useful_fraction == 0.125


def test_gather_with_repeated_indices():
    a = run("gather-repeated")
    assert per_request(a) == [4, 8, 4]
    gather = a.instructions[1]
    assert gather.useful_bytes == 32 * a.warps  # 8 distinct words per warp
    assert gather.logical_bytes == 128 * a.warps
    # indices 8 * (i / 4) mod n: n / 8 distinct elements, each in a sector of its own
    assert gather.unique_sectors == 1_048_576 // 8


def test_naive_transpose_36_against_tiled_8():
    naive, tiled = run("transpose-naive"), run("transpose-tiled")
    assert per_request(naive) == [4, 32]
    assert naive.totals.sectors // naive.warps == 36
    assert naive.totals.useful_bytes // naive.warps == 256
    assert per_request(tiled) == [4, 4]
    assert tiled.totals.sectors // tiled.warps == 8


def test_vector_widths():
    f2, f4 = run("float2-load"), run("float4-load")
    assert (f2.totals.sectors, f2.totals.useful_fraction) == (8, 1.0)
    assert (f4.totals.sectors, f4.totals.useful_fraction) == (16, 1.0)


def test_partial_last_warp():
    pattern = load_pattern(EXAMPLES / "partial-warp.sectorviz.json")
    a = analyze(pattern)
    assert a.warps == 32 and a.threads == 1024
    x = a.instructions[0]
    assert x.requests == 32 and x.active_lanes == 1000
    assert (x.min, x.max, x.mode, x.sectors) == (1, 4, 4, 31 * 4 + 1)
    last = warp_detail(pattern, 31).executions[0][0]
    assert last.active.sum() == 8 and last.sectors == 1


def test_partial_warp_from_block_size():
    from sectorviz.model import pattern_from_dict
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [48]},
        "arrays": {"x": {"dtype": "float32", "length": 96}},
        "let": {"i": "blockIdx.x * 48 + threadIdx.x"},
        "accesses": [{"op": "load", "array": "x", "index": "i"}]})
    a = analyze(p)
    assert a.warps == 4
    assert a.instructions[0].active_lanes == 96
    assert warp_detail(p, 1).valid.sum() == 16
    assert warp_detail(p, 3).thread[0][:3].tolist() == [32, 33, 34]
    assert warp_detail(p, 3).block == (1, 0, 0)


def test_column_major_layout():
    a = run("col-major")
    assert per_request(a) == [4, 32]


def test_crossing_structs():
    t = run("struct12-crossing").totals
    assert (t.sectors, t.useful_bytes, t.useful_fraction) == (12, 384, 1.0)


def test_loops_count_one_request_per_iteration():
    a = run("row-sum-loop")
    load = a.instructions[0]
    assert load.requests == a.warps * 64
    assert load.sectors_per_request == 32
    assert load.unique_sectors == 4096 * 64 * 4 // 32


def test_unique_sectors_across_instructions():
    from sectorviz.model import pattern_from_dict
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "float32", "length": 64}},
        "accesses": [{"name": "first", "op": "load", "array": "x", "index": "threadIdx.x"},
                     {"name": "again", "op": "load", "array": "x", "index": "threadIdx.x"},
                     {"name": "next", "op": "store", "array": "x", "index": "threadIdx.x + 32"}]})
    a = analyze(p)
    assert a.totals.sectors == 12 and a.totals.unique_sectors == 8
    assert a.boundaries[-1].bytes == 256


def test_per_warp_arrays_for_the_overview():
    pattern = load_pattern(EXAMPLES / "partial-warp.sectorviz.json")
    a = analyze(pattern, per_warp=True)
    assert a.per_warp_sectors.shape == (2, 32)
    assert a.per_warp_sectors[0, 30] == 4 and a.per_warp_sectors[0, 31] == 1
    assert a.per_warp_requests[0].sum() == 32
