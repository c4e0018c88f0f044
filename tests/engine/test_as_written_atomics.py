"""Atomics read as written (the debug compile): "atom" when the old value is used, "red" when
discarded (the PTX engine's reading of `atom` whose result no instruction reads); sectors
like loads. Ported from the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from oracles import kernel_pattern, run

from sectorviz.export.sheets import sheet_text
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import analyze, load_pattern
from sectorviz.model.errors import PatternError
from sectorviz.paths import examples_dir

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

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
    # -G loads data[i] again on line 4 (no merging of repeated loads across statements)
    assert [(ins.line, ins.op) for ins in kernel.instructions] == [
        (3, "load"), (3, "red"), (4, "load"), (4, "red"), (5, "atom"), (6, "atom"),
        (6, "store")]
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
    a = analyze(kernel_pattern("""__global__ void k(const int* data, unsigned* bins) {
        __shared__ unsigned h[64];
        int t = threadIdx.x;
        h[t % 64] = 0;
        __syncthreads();
        atomicAdd(&h[data[t] % 64], 1u);
        unsigned seen = atomicInc(&h[(t * 2) % 64], 100u);
        bins[t] = seen;
    }""", arrays={"data": {"dtype": "int32", "length": 128, "values": {"kind": "arange"}},
                  "bins": {"dtype": "uint32", "length": 128}}, block=(128,)))
    assert [(s.line, s.op, s.requests) for s in a.shared] == [
        (4, "store", 4), (6, "red", 4), (7, "atom", 4)]
    assert [ins.op for ins in a.instructions] == ["load", "store"]


@pytest.mark.parametrize("body, message", [
    # the interpreter refused these itself; nvcc compiles them, and the PTX engine refuses
    # an address or a branch that depends on an atomic's old value (unknown until run)
    ("a[(int)atomicExch(&a[0], 1.0f)] = 0;", "line 2, column 9: the address of 'line 2: "
                                             "a[(int)atomicExch(&a[0], 1.0f)], st.u32' "
                                             "depends on data loaded by"),
    ("if (atomicSub((int*)a, 1) > 0) a[1] = 0;", "line 2, column 9: the branch or predicate"),
    # C++ the compiler refuses: nvcc's message at the line
    ("atomicCAS(&a[0], 1.0f);", "kernel.code line 2: no instance of overloaded function "
                                "\"atomicCAS\" matches the argument list"),
])
def test_atomic_errors_name_the_line(body, message):
    with pytest.raises(PatternError) as info:
        run(f"__global__ void k(float* a) {{\n        {body}\n}}")
    assert message in str(info.value)


def test_an_atomic_on_a_local_variable_touches_no_memory_the_reading_counts():
    """The interpreter refused it; -G keeps `x` in a fixed frame slot (`__local_depot`) and
    adds to it through its generic address: a variable's traffic, which the as-written
    reading leaves out (issue 29, item 3)."""
    a, kernel = run("__global__ void k(float* a) {\n        int x = 0; atomicAdd(&x, 1);\n}")
    assert (kernel.instructions, kernel.local_instructions, a.totals.requests) == ((), (), 0)


def test_exchange_and_compare_and_swap_have_no_reduction_form():
    _, kernel = run("""__global__ void k(float* a) {
        atomicExch(&a[threadIdx.x], 1.0f);
        atomicCAS((int*)a + 64, 0, 1);
        atomicAdd(&a[128], 1.0f);
    }""")
    assert [ins.op for ins in kernel.instructions] == ["atom", "atom", "red"]


def test_histogram_examples_against_a_lane_by_lane_reference():
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
    """One atomic per distinct key in a warp: the leader of each group of equal keys adds.
    -G calls __ffs out of line (brev, then bfind.shiftamt: the engine once read it as plain
    bfind, 31 - the lowest set bit, and no lane led)."""
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
