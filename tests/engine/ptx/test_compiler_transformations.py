"""Where nvcc -O3 changes the accesses, the PTX engine counts what it emits. Each test prints
the PTX memory instructions it reasons about; the expected figures are derived by hand from
that PTX (in the comments), not taken from a run."""

from __future__ import annotations

import pytest
from ptx_helpers import analyze_compiled, inline_pattern, lines_with, needs_nvcc

from sectorviz.model.metrics import LOCAL_LOAD_SECTORS

pytestmark = needs_nvcc

GEMM = """
extern "C" __global__ void gemm(const float* a, const float* b, float* c, int n)
{
    int i = threadIdx.y, j = threadIdx.x;
    for (int k = 0; k < n; ++k)
        c[i * n + j] += a[i * n + k] * b[k * n + j];
}
"""
N = 8
MATRICES = {x: {"dtype": "float32", "length": N * N} for x in "abc"}


def _figures(analysis, kernel, array: str, op: str) -> list[tuple[int, int]]:
    """(requests, sectors) of each global instruction on `array` with `op`, in PTX order."""
    return [(s.requests, s.sectors) for s, ins in zip(analysis.instructions, kernel.instructions)
            if ins.array == array and s.op == op]


def _show(kernel) -> None:
    print("\n".join(lines_with(kernel.compiled.ptx, "ld.global", "st.global", "bra", "$L__")))


@pytest.mark.parametrize("restrict", [False, True])
def test_store_forwarding_in_a_read_modify_write_loop(tmp_path, restrict):
    # 8 x 8 threads (2 warps: rows 0-3 and 4-7), n = 8. nvcc loads c[i*n+j] once before the
    # loop ("ld.global.f32 [%rd3]") and forwards the sum it stores; the loop is unrolled by
    # 4 (2 trips, n % 4 = 0: the remainder loop, with its own load of c without restrict,
    # never runs). Without restrict, 4 stores per trip ("st.global.f32 [%rd3]") and one in
    # the remainder; with it, one store after the loop. Each warp's c words are 32
    # consecutive floats: 4 sectors per request.
    code = GEMM if not restrict else GEMM.replace("const float* a, const float* b, float* c",
                                                  "const float* __restrict__ a, const float* "
                                                  "__restrict__ b, float* __restrict__ c")
    pattern, compiled = inline_pattern(tmp_path, code, "gemm", MATRICES, {"n": N},
                                       block=(N, N))
    analysis, kernel = analyze_compiled(pattern, compiled)
    _show(kernel)
    loads = [(2, 8)] if restrict else [(2, 8), (0, 0)]  # as written: 16 requests
    assert _figures(analysis, kernel, "c", "load") == loads
    stores = [(2, 8)] if restrict else [(4, 16)] * 4 + [(0, 0)]  # 2 warps x 2 trips
    assert _figures(analysis, kernel, "c", "store") == stores
    # a[i*n+k]: 4 rows per warp, 32 bytes apart: 4 sectors; b[k*n+j]: 8 floats, 1 sector;
    # the unrolled loop's 4 copies run 2 trips x 2 warps, the remainder's copy never
    assert _figures(analysis, kernel, "a", "load") == [(4, 16)] * 4 + [(0, 0)]
    assert _figures(analysis, kernel, "b", "load") == [(4, 4)] * 4 + [(0, 0)]


HOIST = """
extern "C" __global__ void scale(const float* __restrict__ a, const float* __restrict__ b,
                                 float* __restrict__ out, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < m; ++k)
        s += a[i] * b[k];
    out[i] = s;
}
"""


def test_a_loop_invariant_restrict_load_is_hoisted(tmp_path):
    # 2 blocks of 128 threads (8 warps), m = 64. nvcc loads a[i] once, before the loop
    # ("ld.global.nc.f32 %f1, [%rd13]"): 8 requests of 4 sectors (512 requests as written).
    # b[k] runs in a loop unrolled by 4 (16 trips, no remainder): each copy 16 x 8 = 128
    # requests of 1 sector (every lane reads the same word).
    arrays = {"a": {"dtype": "float32", "length": 256}, "b": {"dtype": "float32", "length": 64},
              "out": {"dtype": "float32", "length": 256}}
    pattern, compiled = inline_pattern(tmp_path, HOIST, "scale", arrays, {"m": 64},
                                       grid=(2,), block=(128,))
    analysis, kernel = analyze_compiled(pattern, compiled)
    _show(kernel)
    assert _figures(analysis, kernel, "a", "load") == [(8, 32)]
    assert _figures(analysis, kernel, "b", "load") == [(128, 128)] * 4 + [(0, 0)]
    assert _figures(analysis, kernel, "out", "store") == [(8, 32)]
    hoisted = next(ins for ins in kernel.instructions if ins.array == "a")
    assert hoisted.line is not None and hoisted.ptx == "ld.global.nc.f32"


SCRATCH = """
extern "C" __global__ void scratch(const int* __restrict__ idx, float* __restrict__ out)
{
    float t[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 64; ++k)
        t[k] = k * 0.5f + i;
    out[i] = t[idx[i] & 63];
}
"""


@pytest.mark.parametrize("index, sectors", [("i", 32), ("5", 4)])
def test_a_runtime_indexed_per_thread_array_lives_in_local_memory(tmp_path, index, sectors):
    # One warp. t[64] is a 256-byte local frame ("__local_depot"), written by 16
    # "st.local.v4.f32": 16 bytes per lane at the same offset, interleaved lane by lane: 512
    # contiguous bytes, 16 sectors each. The read t[idx[i] & 63] ("ld.local.f32"): with
    # idx[i] = i lane L reads its word L, 32 * 4 * L + 4 L bytes into the warp's frames: 32
    # sectors; with idx[i] = 5 every lane reads word 5: 128 contiguous bytes, 4 sectors.
    arrays = {"idx": {"dtype": "int32", "length": 32,
                      "values": {"kind": "expr", "expr": index}},
              "out": {"dtype": "float32", "length": 32}}
    pattern, compiled = inline_pattern(tmp_path, SCRATCH, "scratch", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)  # runs: nothing is refused
    print("\n".join(lines_with(compiled.ptx, "local", "%SP")))
    local = [(ins.op, ins.width) for ins in kernel.local_instructions]
    assert local == [("store", 16)] * 16 + [("load", 4)]
    counted = [(s.op, s.requests, s.sectors, s.logical_bytes) for s in analysis.local]
    assert counted == [("store", 1, 16, 512)] * 16 + [("load", 1, sectors, 128)]
    loads = next(b for b in analysis.boundaries if b.name == "L1 request side, local loads")
    assert (loads.sectors, loads.metric) == (sectors, LOCAL_LOAD_SECTORS)
    assert LOCAL_LOAD_SECTORS == "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"
    assert any("interleave" in a for a in kernel.assumptions)


RAGGED = """
extern "C" __global__ void ragged(const float* __restrict__ x, float* __restrict__ y)
{
    int i = threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < i; ++k)
        s += x[k * 32 + i];
    y[i] = s;
}
"""


def test_a_ragged_loop_unrolled_with_a_remainder_groups_lanes_differently(tmp_path):
    # One warp; lane L runs L iterations: L // 4 trips of the 4-fold unrolled loop, then
    # L % 4 of the remainder loop. Unrolled trip t (1..7) has lanes 4t..31 reading row
    # 4(t-1)+u: bytes 16t..127 of a 128-byte row, 4 - t // 2 sectors: 4+3+3+2+2+1+1 = 16
    # per copy, 7 requests. Remainder iteration s (1..3): lanes with L % 4 >= s, each group
    # of 4 lanes in its own row 4(L // 4) + s - 1: 8 sectors, 3 requests. So 31 requests and
    # 4 x 16 + 24 = 88 sectors, where the loop as written gives 31 requests of 76 sectors.
    arrays = {"x": {"dtype": "float32", "length": 32 * 32},
              "y": {"dtype": "float32", "length": 32}}
    pattern, compiled = inline_pattern(tmp_path, RAGGED, "ragged", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)
    _show(kernel)
    assert _figures(analysis, kernel, "x", "load") == [(7, 16)] * 4 + [(3, 24)]
    assert _figures(analysis, kernel, "y", "store") == [(1, 4)]
