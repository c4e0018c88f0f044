"""Atomics: "atom" when the old value is used, "red" when discarded; sectors like loads."""

from __future__ import annotations

import json

import pytest
from cuda_helpers import kernel_pattern, run

from sectorviz.cuda.shared import shared_analysis
from sectorviz.export.sheets import sheet_text
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model.analysis import analyze
from sectorviz.model.errors import PatternError

HIST = {"data": {"dtype": "int32", "length": 2048, "values": {"kind": "expr",
                                                               "expr": "(i * 37) % 97"}},
        "bins": {"dtype": "uint32", "length": 128}, "out": {"dtype": "uint32", "length": 2048}}
CODE = """__global__ void k(const int* data, unsigned* bins, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&bins[data[i]], 1u);
    (void)atomicOr_block(bins + data[i] % 64, 2u);
    unsigned old = atomicMax_system(&bins[i % 128], 5u);
    out[i] = atomicCAS(&bins[(i * 5) % 128], 0u, old);
}"""


def sectors_per_warp(elements: list[int], width: int = 4) -> int:
    return len({e * width // 32 for e in elements})


def test_ops_and_sectors_match_a_lane_by_lane_reference():
    a, kernel = run(CODE, arrays=HIST, grid=(8,), block=(256,))
    assert [(ins.name, ins.op) for ins in kernel.instructions] == [
        ("line 3: data[i]", "load"), ("line 3: atomicAdd(&bins[data[i]], 1u)", "red"),
        ("line 4: data[i]", "load"), ("line 4: atomicOr_block(bins + data[i] % 64, 2u)", "red"),
        ("line 5: atomicMax_system(&bins[i % 128], 5u)", "atom"),
        ("line 6: atomicCAS(&bins[(i * 5) % 128], 0u, old)", "atom"),
        ("line 6: out[i]", "store")]
    data = [(i * 37) % 97 for i in range(2048)]
    index = {1: lambda i: data[i], 3: lambda i: data[i] % 64, 4: lambda i: i % 128,
             5: lambda i: (i * 5) % 128}
    for k, f in index.items():
        expected = sum(sectors_per_warp([f(w * 32 + lane) for lane in range(32)])
                       for w in range(64))
        stats = a.instructions[k]
        assert (stats.requests, stats.sectors) == (64, expected)


def test_boundaries_name_atomics_and_reductions_only_when_present():
    a, _ = run(CODE, arrays=HIST, grid=(8,), block=(256,))
    by_name = {b.name: b for b in a.boundaries}
    atoms = by_name["L1 request side, atomics"]
    reds = by_name["L1 request side, reductions"]
    assert atoms.metric == "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"
    assert reds.metric == "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"
    assert atoms.sectors == a.instructions[4].sectors + a.instructions[5].sectors
    assert reds.sectors == a.instructions[1].sectors + a.instructions[3].sectors
    text = sheet_text(accounting_sheet(kernel_pattern(CODE, arrays=HIST, grid=(8,),
                                                      block=(256,)), a))
    words = " ".join(text.split())  # the sheet's lines wrap at 100 columns
    assert "atomic reduction whose old value is discarded, 4 B per lane" in words
    assert "atomic read-modify-write whose old value is used, 4 B per lane" in words
    plain_code = "__global__ void k(float* a) { a[threadIdx.x] = 0; }"
    plain, _ = run(plain_code)
    assert not any("atomic" in b.name or "reduction" in b.name for b in plain.boundaries)
    assert "atomic" not in sheet_text(accounting_sheet(kernel_pattern(plain_code), plain))
    doc = json.loads(json.dumps(a.to_json()))
    assert [i["op"] for i in doc["instructions"]].count("red") == 2


def test_shared_atomics_are_shared_accesses():
    p = kernel_pattern("""__global__ void k(const int* data, unsigned* bins) {
        __shared__ unsigned h[64];
        int t = threadIdx.x;
        h[t % 64] = 0;
        __syncthreads();
        atomicAdd(&h[data[t] % 64], 1u);
        unsigned seen = atomicInc(&h[(t * 2) % 64], 100u);
        bins[t] = seen;
    }""", arrays={"data": {"dtype": "int32", "length": 128, "values": {"kind": "arange"}},
                  "bins": {"dtype": "uint32", "length": 128}}, block=(128,))
    stats = shared_analysis(p)
    assert [(s.name, s.op) for s in stats] == [
        ("line 4: h[t % 64]", "store"), ("line 6: atomicAdd(&h[data[t] % 64], 1u)", "red"),
        ("line 7: atomicInc(&h[(t * 2) % 64], 100u)", "atom")]
    assert [s.requests for s in stats] == [4, 4, 4]
    assert [ins.op for ins in analyze(p).instructions] == ["load", "store"]


@pytest.mark.parametrize("body, message", [
    ("int x = 0; atomicAdd(&x, 1);", "line 2, column 30: atomicAdd on a local variable"),
    ("a[(int)atomicExch(&a[0], 1.0f)] = 0;", "line 2, column 16: an address depends on the "
                                             "value atomicExch returns (line 2)"),
    ("if (atomicSub((int*)a, 1) > 0) a[1] = 0;", "a branch depends on the value atomicSub "
                                                 "returns (line 2)"),
    ("atomicCAS(&a[0], 1.0f);", "atomicCAS takes 3 arguments"),
])
def test_atomic_errors_name_the_line(body, message):
    with pytest.raises(PatternError) as info:
        run(f"__global__ void k(float* a) {{\n        {body}\n}}")
    assert message in str(info.value)


def test_exchange_and_compare_and_swap_have_no_reduction_form():
    _, kernel = run("""__global__ void k(float* a) {
        atomicExch(&a[threadIdx.x], 1.0f);
        atomicCAS((int*)a + 64, 0, 1);
        atomicAdd(&a[128], 1.0f);
    }""")
    assert [ins.op for ins in kernel.instructions] == ["atom", "atom", "red"]


def test_histogram_examples_against_a_lane_by_lane_reference():
    import numpy as np

    from sectorviz.model import load_pattern
    from sectorviz.paths import examples_dir

    data = np.random.default_rng(7).integers(0, 256, 65536)
    naive = analyze(load_pattern(examples_dir() / "histogram-naive-cuda.sectorviz.json"))
    red = naive.instructions[1]
    assert red.op == "red" and red.requests == 2048
    assert red.sectors == sum(sectors_per_warp(data[w * 32:(w + 1) * 32].tolist())
                              for w in range(2048))
    shared = analyze(load_pattern(examples_dir() / "histogram-shared-cuda.sectorviz.json"))
    assert [(s.op, s.requests, s.sectors) for s in shared.instructions] == [
        ("load", 2048, 2048), ("red", 512, 2048)]


def test_warp_aggregated_atomics_with_match_any():
    """One atomic per distinct key in a warp: the leader of each group of equal keys adds."""
    a, _ = run("""__global__ void k(const int* data, unsigned* bins, unsigned* out) {
        int key = data[threadIdx.x];
        unsigned same = __match_any_sync(__activemask(), key);
        int leader = __ffs(same) - 1;
        if (threadIdx.x % 32 == leader) atomicAdd(&bins[key], __popc(same));
    }""", arrays={**HIST, "data": {"dtype": "int32", "length": 64,
                                   "values": {"kind": "expr", "expr": "(i * i) % 7 * 9"}}},
        block=(64,))
    data = [(i * i) % 7 * 9 for i in range(64)]
    leaders = [[data[w * 32 + lane] for lane in range(32)
                if data[w * 32 + lane] not in data[w * 32:w * 32 + lane]] for w in range(2)]
    red = a.instructions[1]
    assert red.op == "red" and red.active_lanes == sum(len(keys) for keys in leaders)
    assert red.sectors == sum(sectors_per_warp(keys) for keys in leaders)
