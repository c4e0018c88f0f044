"""The accounting sheet names atomics and __constant__ reads in their own words."""

from __future__ import annotations

from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import analyze, pattern_from_dict

CODE = """__constant__ int offset[4] = {0, 64, 128, 192};
__global__ void k(unsigned* bins) {
    unsigned old = atomicAdd(&bins[offset[threadIdx.x % 4] + threadIdx.x / 4], 1u);
    atomicMax(&bins[threadIdx.x], old);
}"""


def test_steps_show_atomic_ops_and_constant_reads():
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "t", "launch": {"grid": [1], "block": [32]},
        "arrays": {"bins": {"length": 256}}, "kernel": {"code": CODE, "function": "k"}})
    steps = accounting_sheet(pattern, analyze(pattern)).steps
    ops = {r.label: r.value for r in steps[0].rows}
    # As written (nvcc -G) atomicAdd and atomicMax stay CUDA-header functions called from
    # lines 3 and 4, holding `atom.add.u32` and `atom.max.u32` (generic addresses); each is
    # named by the array's expression at its call, and `offset` is read by `ld.u32` through
    # a generic address into the constant window
    assert ops == {"line 3: bins[offset[threadIdx.x % 4] + threadIdx.x / 4], atom.add.u32":
                   "atomic read-modify-write whose old value is used, 4 B per lane",
                   "line 4: bins[threadIdx.x], atom.max.u32":
                   "atomic reduction whose old value is discarded, 4 B per lane"}
    bounds = {r.label: (r.value, r.note) for r in steps[4].rows}
    value, note = bounds["line 3: offset[threadIdx.x % 4], ld.u32 (constant cache)"]
    assert value == "4 distinct addresses in 1 request (4.00 per request)"
    assert "one pass per distinct address" in note
    assert bounds["L1 request side, atomics"][0] == "128 B (4 sectors)"
