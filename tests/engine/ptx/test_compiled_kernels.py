"""Kernels whose PTX uses the engine's less common parts, compiled by nvcc: warp shuffles,
cp.async, a math function's table in global memory, __constant__ and dynamic shared
memory. Expected figures are derived from the PTX the test prints."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from ptx_helpers import analyze_compiled, inline_pattern, lines_with, needs_nvcc

from sectorviz.model.errors import PatternError

pytestmark = needs_nvcc

TWO_BLOCKS = {"grid": (2,), "block": (256,)}  # 16 warps
FLOATS = {"a": {"dtype": "float32", "length": 512}, "out": {"dtype": "float32", "length": 512}}


def _rows(analysis, kernel):
    return [(ins.ptx, ins.array, s.op, s.requests, s.sectors)
            for ins, s in zip(kernel.instructions, analysis.instructions)]


def _shared_rows(analysis, kernel) -> list[tuple[str, str, int, int]]:
    """(PTX op, op, requests, wavefronts) of each shared instruction."""
    return [(ins.ptx, s.op, s.requests, s.wavefronts)
            for ins, s in zip(kernel.shared_instructions, analysis.shared)]


def test_a_warp_shuffle_reduction(tmp_path):
    code = """
extern "C" __global__ void k(const float* a, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", FLOATS, **TWO_BLOCKS)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "shfl", "ld.global", "st.global")))
    # a: 16 warps x 4 sectors; out: lane 0 of each warp stores one float
    assert _rows(analysis, kernel) == [("ld.global.f32", "a", "load", 16, 64),
                                       ("st.global.f32", "out", "store", 16, 16)]


def test_cp_async_counts_a_global_read_and_a_shared_write(tmp_path):
    code = """
#include <cuda_pipeline.h>
extern "C" __global__ void k(const float* a, float* out)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&s[t], &a[blockIdx.x * 256 + t], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[blockIdx.x * 256 + t] = s[255 - t];
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", FLOATS, **TWO_BLOCKS)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "cp.async", "shared", "st.global")))
    # "cp.async.ca.shared.global [%r1], [%rd1], 4, 4": 4 bytes per lane, 16 warps
    assert _rows(analysis, kernel) == [
        ("cp.async.ca.shared.global (global read)", "a", "load", 16, 64),
        ("st.global.f32", "out", "store", 16, 64)]
    shared = _shared_rows(analysis, kernel)
    # 32 consecutive words written, 32 consecutive words (reversed) read: conflict-free
    assert shared == [("cp.async.ca.shared.global (shared write)", "store", 16, 16),
                      ("ld.shared.f32", "load", 16, 16)]


def test_cp_async_lanes_whose_src_size_is_0_read_no_global_bytes(tmp_path):
    code = """
extern "C" __global__ void k(const float* a, float* out)
{
    __shared__ __align__(16) float s[128];
    int t = threadIdx.x;
    unsigned dst = (unsigned)__cvta_generic_to_shared(&s[4 * t]);
    int n = t < 8 ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst),
                 "l"(a + 96 + 4 * t), "r"(n));
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncwarp();
    out[(int)s[4 * t]] = 1.0f;
}
"""
    arrays = {"a": {"dtype": "float32", "length": 128,
                    "values": {"kind": "expr", "expr": "i"}},
              "out": {"dtype": "float32", "length": 128}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "cp.async", "ld.shared", "st.global")))
    # lanes 0-7 read a[96 + 4 t .. + 3]: bytes 384 + 16 t, 128 bytes = 4 sectors; lanes
    # 8-31 copy 0 bytes (their addresses, up to byte 896, lie past a's 512: not reached).
    # s[4 t] is then 96 + 4 t on lanes 0-7, 0 (zero-filled) on the others: out bytes
    # 384 + 16 t (4 sectors) and byte 0 (1 sector)
    assert _rows(analysis, kernel) == [
        ("cp.async.cg.shared.global (global read)", "a", "load", 1, 4),
        ("st.global.u32", "out", "store", 1, 5)]
    shared = _shared_rows(analysis, kernel)
    # every lane writes its 16 bytes (zeros past src-size): 512 bytes, 4 phases; the
    # reads of s[4 t], 16 bytes apart, fall 4 lanes to a bank: 4 wavefronts
    assert shared == [("cp.async.cg.shared.global (shared write)", "store", 1, 4),
                      ("ld.shared.f32", "load", 1, 4)]


MMA = """
extern "C" __global__ void k(const unsigned* a, float* out)
{
    int t = threadIdx.x;
    unsigned a0 = a[t], a1 = a[32 + t], a2 = a[64 + t], a3 = a[96 + t];
    unsigned b0 = a[128 + t], b1 = a[160 + t];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
    STORE;
}
"""
MMA_ARRAYS = {"a": {"dtype": "uint32", "length": 192}, "out": {"dtype": "float32",
                                                               "length": 256}}


def test_mma_moves_no_memory_and_its_results_are_stored_as_data(tmp_path):
    code = MMA.replace("STORE", "out[blockIdx.x * 32 + t] = d0 + d1 + d2 + d3")
    pattern, compiled = inline_pattern(tmp_path, code, "k", MMA_ARRAYS, grid=(2,))
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "mma", "ld.global", "st.global")))
    # 6 loads of 32 consecutive words per warp (4 sectors each), the mma none, one store of
    # 32 consecutive floats: 2 warps
    assert _rows(analysis, kernel) == [("ld.global.u32", "a", "load", 2, 8)] * 6 + [
        ("st.global.f32", "out", "store", 2, 8)]
    assert not kernel.shared_instructions


def test_an_address_that_depends_on_an_mma_result_is_refused_in_one_line(tmp_path):
    code = MMA.replace("STORE", "out[(int)d0 & 255] = 1.0f")
    pattern, compiled = inline_pattern(tmp_path, code, "k", MMA_ARRAYS)
    with pytest.raises(PatternError, match=r"depends on the result of `mma\.sync\.aligned\."
                                           r"m16n8k16.*tensor-core matrix product") as err:
        analyze_compiled(pattern, compiled)
    assert "\n" not in str(err.value)


GATHER_ONE_ROW = """
extern "C" __global__ void k(float *losses, const float *probs, const int *targets, int T, int V)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < T) {
        const float *row = probs + i * V;
        losses[i] = -logf(row[targets[i]]);
    }
}
"""


@pytest.mark.parametrize("rows", [1, 32])
def test_a_gather_by_loaded_indices_asks_for_their_values_with_one_lane_running(tmp_path, rows):
    """llm.c's crossentropy_forward_kernel1 at T = 1: one lane passes the guard, so the
    registers it sets are unknown on the other 31; the gather's address still depends on
    `targets`, and the refusal says so (it named a register 'read before it is set')."""
    arrays = {"losses": {"dtype": "float32", "length": 32},
              "probs": {"dtype": "float32", "length": 32 * 64},
              "targets": {"dtype": "int32", "length": 32}}
    pattern, compiled = inline_pattern(tmp_path, GATHER_ONE_ROW, "k", arrays,
                                       {"T": rows, "V": 64})
    with pytest.raises(PatternError) as err:
        analyze_compiled(pattern, compiled)
    assert "depends on data loaded by 'line 7: targets[i], ld.global." in str(err.value)
    assert "give 'targets' values" in str(err.value)


def test_cosf_reads_its_reduction_table_from_global_memory(tmp_path):
    code = """
extern "C" __global__ void k(const float* a, float* out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = cosf(a[i]);
}
"""
    arrays = dict(FLOATS, a={"dtype": "float32", "length": 512,
                             "values": {"kind": "constant", "value": 10**6}})
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays, **TWO_BLOCKS)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "__cudart_i2opi_f", "ld.global", "local")))
    # |a| = 10^6 (past 105615) takes the slow argument reduction: a loop of 6 trips, each
    # reading one word of __cudart_i2opi_f; every lane reads the same word: 1 sector per request
    table = [r for r in _rows(analysis, kernel) if r[1] == "__cudart_i2opi_f"]
    assert table == [("ld.global.nc.u32", "__cudart_i2opi_f", "load", 6 * 16, 6 * 16)]
    assert kernel.local_instructions  # the reduction keeps its words in a local array


def test_constant_and_dynamic_shared_memory(tmp_path):
    code = """
__constant__ float coef[16];
extern "C" __global__ void k(const float* a, float* out)
{
    extern __shared__ float d[];
    d[threadIdx.x] = a[threadIdx.x] * coef[threadIdx.x % 16];
    __syncthreads();
    out[threadIdx.x] = d[(threadIdx.x + 1) % blockDim.x];
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", FLOATS, block=(64,))
    with pytest.raises(PatternError, match="^kernel: extern __shared__ memory needs its size"):
        analyze_compiled(pattern, compiled)  # asked up front, as the source engine asks
    pattern = replace(pattern, kernel={**pattern.kernel, "dynamic_shared_bytes": 256})
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "const", "shared")))
    assert [ins.ptx for ins in kernel.constant_instructions] == ["ld.const.f32"]
    reads = [row for _, batch in kernel.space_trace("constant", 0, 2) for row in batch.address]
    # each warp reads coef[0..15] twice over: 16 distinct constant addresses
    assert [len(set(row.tolist())) for row in reads] == [16, 16]
    shared = [(s.op, s.requests, s.wavefronts) for s in analysis.shared]
    assert shared == [("store", 2, 2), ("load", 2, 2)]


def test_pattern_values_of_constant_and_device_arrays_are_read(tmp_path):
    code = """
__constant__ int offsets[8];
__device__ int table[8];
extern "C" __global__ void k(float* a)
{
    int t = threadIdx.x;
    a[1024 + offsets[t % 8]] = 0;
    a[table[t % 8]] = 1;
}
"""
    arrays = {"a": {"dtype": "float32", "length": 2048},
              "offsets": {"length": 8, "values": {"kind": "expr", "expr": "i * 40"}},
              "table": {"length": 8, "values": {"kind": "expr", "expr": "i * 32"}}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "offsets", "table", "st.global")))
    # 8 distinct offsets 40 floats apart (160 bytes): 8 sectors; table: 32 floats apart
    assert _rows(analysis, kernel) == [("st.global.u32", "a", "store", 1, 8),
                                       ("ld.global.u32", "table", "load", 1, 1),
                                       ("st.global.u32", "a", "store", 1, 8)]
    assert [ins.array for ins in kernel.constant_instructions] == ["offsets"]


def test_an_address_from_unknown_data_passed_through_shared_memory_names_its_array(tmp_path):
    code = """
extern "C" __global__ void k(const int* idx, float* out)
{
    __shared__ int s[32];
    s[threadIdx.x] = idx[threadIdx.x];
    __syncthreads();
    out[s[31 - threadIdx.x]] = 1.0f;
}
"""
    arrays = {"idx": {"dtype": "int32", "length": 32}, "out": {"dtype": "float32", "length": 64}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    with pytest.raises(PatternError, match="stored there from data loaded by .*; give 'idx' "
                                           "values in the pattern file"):
        analyze_compiled(pattern, compiled)
    arrays["idx"]["values"] = {"kind": "expr", "expr": "2 * i"}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)
    # lane L stores to out[2 (31 - L)]: 32 floats 8 bytes apart, 256 bytes: 8 sectors
    assert _rows(analysis, kernel)[-1] == ("st.global.u32", "out", "store", 1, 8)


def test_ldmatrix_rows_and_the_values_each_lane_receives(tmp_path):
    code = """
extern "C" __global__ void k(float* out)
{
    __shared__ __align__(16) unsigned short s[256];
    int t = threadIdx.x;
    for (int j = t; j < 256; j += 32) s[j] = j;
    __syncwarp();
    unsigned row = (unsigned)__cvta_generic_to_shared(&s[t * 8]);
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row));
    out[r3 & 0xffff] = 1.0f;
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", {
        "out": {"dtype": "float32", "length": 256}})
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "ldmatrix", "st.shared", "st.global")))
    # lane t gives row t (16 bytes at 16 t): 512 contiguous bytes, 4 conflict-free phases
    matrix = next(s for ins, s in zip(kernel.shared_instructions, analysis.shared)
                  if ins.ptx.startswith("ldmatrix"))
    assert (matrix.requests, matrix.wavefronts, matrix.bank_conflicts) == (1, 4, 0)
    # r3 of lane t: matrix 3 (halves 192..255), row t / 4, column 2 (t % 4): 192 + 2 t, so
    # the store writes floats 8 bytes apart from byte 768: 8 sectors
    (_, batch), = kernel.trace(0, 1)
    assert list(batch.address[0] - kernel.arrays["out"].address0) == [
        4 * (192 + 2 * t) for t in range(32)]
    assert _rows(analysis, kernel) == [("st.global.u32", "out", "store", 1, 8)]


def test_stmatrix_trans_then_ldmatrix_reads_the_transpose(tmp_path):
    code = """
extern "C" __global__ void k(float* out)
{
    __shared__ __align__(16) unsigned short s[64];
    int t = threadIdx.x;
    unsigned row = (unsigned)__cvta_generic_to_shared(&s[(t % 8) * 8]);
    unsigned v = (unsigned)(2 * t) | ((unsigned)(2 * t + 1) << 16);  // row t/4, cols 2(t%4)+
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};"
                 :: "r"(row), "r"(v));
    __syncwarp();
    unsigned r;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(row));
    out[r & 0xffff] = 1.0f;
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", {
        "out": {"dtype": "float32", "length": 64}})
    _, kernel = analyze_compiled(pattern, compiled)
    # element (i, j) = 8 i + j stored transposed: s[8 j + i] = 8 i + j; lane t then reads
    # s[8 (t / 4) + 2 (t % 4)], the element (2 (t % 4), t / 4) = 16 (t % 4) + t / 4
    (_, batch), = kernel.trace(0, 1)
    assert list((batch.address[0] - kernel.arrays["out"].address0) // 4) == [
        16 * (t % 4) + t // 4 for t in range(32)]


def test_cuda_fp16_helpers_run_their_scoped_inline_asm_registers(tmp_path):
    code = """
#include <cuda_fp16.h>
extern "C" __global__ void k(const __half* a, float* out)
{
    int i = threadIdx.x;
    __half2 e = h2exp(__hadd2(__half2half2(a[i]), __float2half2_rn(0.5f)));
    __half s = hexp(a[i]);
    out[32 * (int)__low2float(e) + (int)__half2float(s)] = 1.0f;
}
"""
    arrays = {"a": {"dtype": "float16", "length": 32,
                    "values": {"kind": "expr", "expr": "i % 3"}},
              "out": {"dtype": "float32", "length": 512}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, ".reg.b", "set.eq", "ex2")))
    # h2exp declares `.reg.b32 h,r,fl,fu,C,nZ` and hexp `.reg.b16 h,r` in their own `{ }`
    # blocks (each with nested `.reg spc, ulp, p` blocks). a = i % 3 = 0, 1, 2:
    # exp(a + 0.5) = 1.65, 4.48, 12.18 and exp(a) = 1, 2.72, 7.39, so the lanes store
    # out[32 * 1 + 1] = out[33], out[32 * 4 + 2] = out[130], out[32 * 12 + 7] = out[391]
    batches = [b for _, b in kernel.trace(0, 1)]
    stored = batches[-1]
    assert sorted(set(((stored.address[0] - kernel.arrays["out"].address0) // 4).tolist())
                  ) == [33, 130, 391]
    # a: 32 halves = 64 bytes, 2 sectors; out: bytes 132, 520, 1564 lie in sectors 4, 16, 48
    assert _rows(analysis, kernel) == [("ld.global.u16", "a", "load", 1, 2),
                                       ("st.global.u32", "out", "store", 1, 3)]


def test_warp_size_and_the_cluster_registers_of_a_declared_cluster_shape(tmp_path):
    code = """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(float* out)
{
    cg::cluster_group c = cg::this_cluster();
    out[(c.block_rank() + 4 * c.num_blocks()) * warpSize + threadIdx.x % warpSize] = 1.0f;
}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", {
        "out": {"dtype": "float32", "length": 512}}, grid=(4,), block=(32,))
    analysis, kernel = analyze_compiled(pattern, compiled)
    print("\n".join(lines_with(compiled.ptx, "WARP_SZ", "%cluster", "reqnctapercluster")))
    # WARP_SZ = 32, %cluster_nctarank = 2 (.reqnctapercluster 2, 1, 1) and %cluster_ctarank
    # = blockIdx.x % 2: block b's warp stores out[(b % 2 + 8) * 32 + t] = out[256 + 32 (b % 2)
    # + t], 4 sectors each
    (_, batch), = kernel.trace(0, 4)
    starts = (batch.address[:, 0] - kernel.arrays["out"].address0) // 4
    assert list(starts) == [256, 288, 256, 288]
    assert _rows(analysis, kernel) == [("st.global.u32", "out", "store", 4, 16)]


@pytest.mark.parametrize("read, why", [
    ('asm("mov.u32 %0, %%smid;" : "=r"(r));', "the special register %smid, which the GPU"),
    ('asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));',
     "the special register %cluster_ctarank \\(the launch's cluster shape"),
])
def test_a_special_register_the_launch_does_not_fix_is_refused_in_an_address(tmp_path, read,
                                                                              why):
    code = f"""
extern "C" __global__ void k(float* out)
{{
    unsigned r;
    {read}
    out[r] = 1.0f;
}}
"""
    pattern, compiled = inline_pattern(tmp_path, code, "k", {
        "out": {"dtype": "float32", "length": 512}})
    with pytest.raises(PatternError, match="line 6, .*depends on " + why):
        analyze_compiled(pattern, compiled)


GATHER = """\
__global__ void gather(const int *idx, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[idx[i]];
}
"""


@needs_nvcc
def test_an_error_while_the_compiled_kernel_runs_names_its_cu(tmp_path, capsys, monkeypatch):
    """`report` on a gather whose indices the pattern does not give: one line at the .cu's
    line and column (as the source engine names it), never the pattern file."""
    from sectorviz.cli import main
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
    (tmp_path / "g.cu").write_text(GATHER)
    doc = {"format": "sectorviz.pattern/1", "name": "g", "launch": {"grid": [1], "block": [32]},
           "arrays": {"idx": {"dtype": "int32", "length": 32},
                      "x": {"dtype": "float32", "length": 4096},
                      "y": {"dtype": "float32", "length": 32}},
           "kernel": {"source": "g.cu", "function": "gather", "engine": "compiled"}}
    (tmp_path / "g.sectorviz.json").write_text(json.dumps(doc))
    assert main(["report", "--quiet", str(tmp_path / "g.sectorviz.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{(tmp_path / 'g.cu').resolve()}: line 4, column 5: ")
    assert "give 'idx' values" in err and err.count("\n") == 1
