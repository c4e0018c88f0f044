"""__constant__ arrays read as written (the debug compile): read through the constant cache
(generic loads the PTX engine resolves into the constant window), listed apart from global
sectors. Ported from the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import json
import shutil

import pytest
from oracles import kernel_pattern, run

from sectorviz.cli import main
from sectorviz.export.sheets import sheet_text
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model.errors import PatternError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

CODE = """__constant__ float weights[64];
__constant__ int offsets[8];
__global__ void k(float* a, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    float s = 0;
    for (int j = 0; j < n; j++) s += weights[(threadIdx.x / 4 + j) % 64];
    a[t] = s + weights[7];
    a[1024 + offsets[t % 8]] = 0;
}"""
ARRAYS = {"a": {"dtype": "float32", "length": 2048},
          "offsets": {"length": 8, "values": {"kind": "expr", "expr": "i * 40"}}}


def distinct(rows: list[list[int]]) -> int:
    return sum(len(set(r)) for r in rows)


def test_distinct_addresses_per_request_match_a_lane_by_lane_reference():
    a, kernel = run(CODE, arrays=ARRAYS, params={"n": 3}, grid=(2,), block=(64,))
    assert [(ins.line, ins.op) for ins in kernel.instructions] == [(7, "store"), (8, "store")]
    warps = [[w * 32 + lane for lane in range(32)] for w in range(4)]
    listing = {c.line: c for c in a.constant if c.name == "weights"}
    loop = listing[6]
    assert loop.requests == 12
    assert loop.distinct_addresses == distinct(
        [[((t % 64) // 4 + j) % 64 for t in w] for w in warps for j in range(3)])
    one = listing[7]
    assert (one.requests, one.distinct_addresses) == (4, 4)
    (off,) = [c for c in a.constant if c.name == "offsets"]
    assert (off.line, off.requests, off.distinct_addresses) == (8, 4, 4 * 8)
    # the values given in the pattern decide the address of the global store
    store = a.instructions[1]
    assert store.sectors == distinct([[(1024 + (t % 8) * 40) * 4 // 32 for t in w]
                                      for w in warps])
    assert a.totals.sectors == a.instructions[0].sectors + store.sectors


def test_report_text_and_json_list_constant_reads(tmp_path, capsys):
    a, _ = run(CODE, arrays=ARRAYS, params={"n": 1}, grid=(1,), block=(32,))
    pattern = kernel_pattern(CODE, arrays=ARRAYS, params={"n": 1}, grid=(1,), block=(32,))
    words = " ".join(sheet_text(accounting_sheet(pattern, a)).split())  # lines wrap at 100
    assert "__constant__ reads, through the constant cache" in words
    assert "(constant cache) 8 distinct addresses in 1 request (8.00 per request)" in words
    doc = {"format": "sectorviz.pattern/1", "name": "c", "launch": {"grid": [1], "block": [32]},
           "params": {"n": 1}, "arrays": ARRAYS, "kernel": {"code": CODE, "function": "k"}}
    path = tmp_path / "c.sectorviz.json"
    path.write_text(json.dumps(doc))
    assert main(["report", "--json", str(path)]) == 0
    listed = json.loads(capsys.readouterr().out)["constant"]
    assert [(c["name"], c["line"], c["requests"], c["distinct_addresses"]) for c in listed] == [
        ("weights", 6, 1, 8), ("weights", 7, 1, 1), ("offsets", 8, 1, 8)]
    plain_code = "__global__ void k(float* a) { a[threadIdx.x] = 0; }"
    plain, _ = run(plain_code)
    assert plain.to_json()["constant"] == []
    assert "constant cache" not in sheet_text(accounting_sheet(kernel_pattern(plain_code), plain))


@pytest.mark.parametrize("arrays, message", [
    # no values for offsets: the engine reads the constant bytes as never stored
    ({"a": {"dtype": "float32", "length": 2048}},
     "line 8, column 5: the address of 'line 8: a[1024 + offsets[t % 8]], st.u32' depends on "
     "data read from constant memory by 'line 8: offsets[t % 8], ld.u32'"),
    ({"a": {"dtype": "float32", "length": 2048}, "offsets": {"length": 4}},
     "arrays.offsets: 4 elements of 4 bytes, but the kernel's offsets holds 32 bytes"),
    ({"a": {"dtype": "float32", "length": 2048}, "offsets": {"dtype": "float64", "length": 8}},
     "arrays.offsets: 8 elements of 8 bytes, but the kernel's offsets holds 32 bytes"),
])
def test_constant_errors(arrays, message):
    with pytest.raises(PatternError) as info:
        run(CODE, arrays=arrays, params={"n": 1})
    assert message in str(info.value)


def test_constant_arrays_cannot_be_written():
    """-G writes `c[0]` through its generic address into the constant window (-O3 drops it
    with a warning); the PTX engine refuses such a store at its line."""
    with pytest.raises(PatternError) as info:
        run("__constant__ float c[4];\n__global__ void k(float* a) { c[0] = a[0]; }")
    assert str(info.value) == ("line 2, column 30: 'line 2: c[0], st.f32' writes to constant "
                               "memory, which is read-only on the device")


def test_a_kernel_with_only_constant_reads_still_lists_them():
    a, _ = run("__constant__ float c[32];\n__global__ void k(float* a) {\n"
               "    float v = c[threadIdx.x % 2];\n}")
    assert [(c.requests, c.distinct_addresses) for c in a.constant] == [(1, 2)]


def test_an_initializer_in_the_source_gives_the_values():
    a, _ = run("""__constant__ int stride[2][2] = {{1, 2}, {5}};
    __global__ void k(float* a) {
        a[threadIdx.x * stride[threadIdx.x % 2][threadIdx.x / 16]] = 0;
    }""", arrays={"a": {"dtype": "float32", "length": 4096}})
    strides = [[1, 2], [5, 0]]
    lanes = [t * strides[t % 2][t // 16] for t in range(32)]
    assert a.instructions[0].sectors == len({e * 4 // 32 for e in lanes})
    assert [(c.requests, c.distinct_addresses) for c in a.constant] == [(1, 4)]


def test_a_constant_scalar_and_unused_unsupported_constants():
    a, _ = run("""struct Params { int n; };
    __constant__ Params unused;
    __constant__ int stride = 3;
    __global__ void k(float* a) {
        a[threadIdx.x * stride] = 0;
    }""", arrays={"a": {"dtype": "float32", "length": 4096}})
    assert a.instructions[0].sectors == len({t * 3 * 4 // 32 for t in range(32)})
    assert [(c.name, c.requests, c.distinct_addresses) for c in a.constant] == [("stride", 1, 1)]
