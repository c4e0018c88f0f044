"""The PTX engine's closed forms (model/ptx/closed.py) against its lane path: generated
kernels, nvcc's naive matrix multiply counted by hand from its PTX, and every CUDA example.
Each comparison checks that the closed forms actually ran (a differential test that fell
back to the lane path everywhere would compare the lane path with itself)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_helpers import (
    Spy,
    assert_same,
    both,
    closed_everywhere,
    compiled_for_file,
    counted_by,
    inline_pattern,
    lane_path,
    lines_with,
    needs_nvcc,
    nvcc_ptx,
)

from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model import analyze, load_pattern, pattern_from_dict

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"
CUDA_EXAMPLES = sorted(p.name for p in EXAMPLES.glob("*-cuda.sectorviz.json"))
CI = os.environ.get("SECTORVIZ_HYPOTHESIS", "ci") == "ci"


# ------------------------------------------------------------------ generated kernels

KERNEL = """
__global__ void k(const float* a, float* out, int n, int m) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    {shared}
    if ({guard}) {{
        for (int k = 0; k < {trips}; k += {step}) {{
            acc += a[{index} * {s} + k * {t} + {c}];
            {branch}
        }}
        out[i * {s2} + {c2}] = acc;
    }}
}}
"""
SHARED = ("__shared__ float tile[128]; tile[threadIdx.x % 128] = a[i]; __syncthreads(); "
          "acc = tile[(threadIdx.x * {r}) % 128];")
BRANCH = "if ({cond}) acc += a[i + k * {t}];"


@st.composite
def kernels(draw):
    """(CUDA text, launch and params, whether every address is affine): a guarded loop of
    loads with strides in i (or i divided) and k, sometimes shared memory, a divergent
    branch, a trip count that varies by lane, or an index loaded from memory (the lane
    path's alone)."""
    gather = draw(st.booleans()) and draw(st.booleans())
    trips = draw(st.sampled_from(["m", "4", "(n & 3)", "m + (threadIdx.x & 1)"]))
    text = KERNEL.format(
        shared=SHARED.format(r=draw(st.sampled_from([1, 2, 33]))) if draw(st.booleans()) else "",
        guard=draw(st.sampled_from(["i < n", "threadIdx.x < 40", "true"])),
        trips=trips, step=draw(st.sampled_from([1, 2])),
        index=draw(st.sampled_from(["i", "i", "(i >> 3)", "(i / 2)", "(i & 63)", "i % 48"])),
        s=draw(st.sampled_from([1, 2, 3, 32])), t=draw(st.sampled_from([0, 1, 4, 33])),
        c=draw(st.sampled_from([0, 1, 5])),
        branch=BRANCH.format(cond=draw(st.sampled_from(["threadIdx.x % 2", "k < 2", "i > 7"])),
                             t=draw(st.sampled_from([1, 32]))) if draw(st.booleans()) else "",
        s2=draw(st.sampled_from([1, 2])), c2=draw(st.sampled_from([0, 3])))
    if gather:
        text = text.replace("acc += a[", "acc += a[(int)a[i] + ", 1)
    block = draw(st.sampled_from([32, 48, 64, 96]))
    grid = draw(st.integers(1, 3))
    n = draw(st.integers(1, grid * block + 8))
    m = draw(st.integers(0, 7))
    return text, block, grid, n, m, not gather


def pattern_of(tmp_path: Path, text: str, block: int, grid: int, n: int, m: int):
    size = 40 * (grid * block + 8) + 40 * (m + 2) + 64  # past every index the kernel forms
    arrays = {"a": {"dtype": "float32", "length": size,
                    "values": {"kind": "uniform", "low": 0, "high": 40, "seed": 1}},
              "out": {"dtype": "float32", "length": size}}
    return inline_pattern(tmp_path, text, "k", arrays, {"n": n, "m": m}, grid=(grid,),
                          block=(block,))


@needs_nvcc
def test_closed_forms_count_generated_kernels_as_the_lane_path_does(tmp_path_factory):
    ran = []

    @settings(max_examples=24 if CI else 120, deadline=None)
    @given(kernels(), st.booleans())
    def check(case, per_warp):
        text, block, grid, n, m, affine = case
        pattern, compiled = pattern_of(tmp_path_factory.mktemp("k"), text, block, grid, n, m)
        closed, spy, lanes = both(pattern, compiled, per_warp)
        assert_same(closed, lanes)
        if affine:
            ran.append(spy.covered == spy.kernel.warps)

    check()
    print(f"closed forms covered every warp in {sum(ran)} of {len(ran)} affine kernels")
    assert len(ran) >= 8 and sum(ran) >= 0.75 * len(ran), ran


NESTED = """
__global__ void k(const float* a, float* out, int n, int m) {{
    {itype} x = blockIdx.x * blockDim.x + threadIdx.x;
    {itype} y = blockIdx.y * blockDim.y + threadIdx.y;
    {exit}
    float acc = 0.0f;
    const float* p = a + {start};
    for (int r = {outer}; r > 0; r--) {{
        for (int c = 0; c < {inner}; c += {step}) {{
            acc += p[c * {t}];
            {leave}
        }}
        p += {advance};
    }}
    out[y * {width} + x] = acc;
}}
"""


@st.composite
def nested_kernels(draw):
    """(CUDA text, grid, block, n, m): 2-D blocks, signed or unsigned indices, a count-down
    outer loop advancing a pointer, an inner loop, sometimes an early return or a break."""
    text = NESTED.format(
        itype=draw(st.sampled_from(["int", "unsigned", "long long"])),
        exit=draw(st.sampled_from(["", "if (x >= n) return;", "if (y * n + x > 77) return;"])),
        start=draw(st.sampled_from(["x", "y * n + x", "x * 2 + y"])),
        outer=draw(st.sampled_from(["3", "m", "(n & 1) + 1"])),
        inner=draw(st.sampled_from(["4", "m", "n"])), step=draw(st.sampled_from([1, 3])),
        t=draw(st.sampled_from([1, 8, 33])),
        leave=draw(st.sampled_from(["", "", "if (acc > 1e30f) break;"])),
        advance=draw(st.sampled_from(["n", "32", "m * 2"])), width=64)
    block = draw(st.sampled_from([(32, 2), (16, 4), (8, 3)]))
    grid = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    return text, grid, block, draw(st.integers(1, 20)), draw(st.integers(0, 6))


@needs_nvcc
def test_closed_forms_count_nested_loops_as_the_lane_path_does(tmp_path_factory):
    ran = []

    @settings(max_examples=12 if CI else 60, deadline=None)
    @given(nested_kernels())
    def check(case):
        text, grid, block, n, m = case
        size = 8 * 64 * 64
        arrays = {"a": {"dtype": "float32", "length": size,  # a break reads them
                        "values": {"kind": "uniform", "low": 0, "high": 40, "seed": 1}},
                  "out": {"dtype": "float32", "length": size}}
        pattern, compiled = inline_pattern(tmp_path_factory.mktemp("k"), text, "k", arrays,
                                           {"n": n, "m": m}, grid=grid, block=block)
        closed, spy, lanes = both(pattern, compiled)
        assert_same(closed, lanes)
        if "break" not in text:  # a break on loaded data is the lane path's
            ran.append(spy.covered == spy.kernel.warps)

    check()
    print(f"closed forms covered every warp in {sum(ran)} of {len(ran)} kernels without a "
          "break on data")
    assert len(ran) >= 4 and sum(ran) >= 0.75 * len(ran), ran


@needs_nvcc
def test_a_loop_whose_trip_count_differs_across_lanes_runs_an_iteration_at_a_time(tmp_path):
    text = KERNEL.format(shared="", guard="true", trips="m + (threadIdx.x & 1)", step=1, s=1,
                         index="i", t=32, c=0, branch="", s2=1, c2=0)
    pattern, compiled = pattern_of(tmp_path, text, 64, 1, 128, 9)
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    # 9 or 10 trips: nvcc's loop unrolled by 4 runs twice on every lane (run whole), its
    # remainder loop once or twice (iterated, in closed form still)
    assert spy.covered == spy.kernel.warps and spy.loops_run_whole
    assert len(spy.iterated()) == 1


# ------------------------------------------------------------------ naive matmul by hand

@needs_nvcc
def test_the_naive_matmul_counts_as_its_ptx_says_at_n_6(capsys):
    """nvcc unrolls the k loop by 4 (count-down `add.s32 %r27, %r27, -4`, pointers
    advancing by 16 bytes in A and 4 n bytes in B) and adds a remainder loop of n & 3 trips.
    n = 6, one 16 x 16 block: warps 0..2 hold rows 0..5 (two rows of 16 lanes, 6 active
    each); the main loop runs once (k = 0..3), the remainder twice (k = 4, 5).
    B[k n + col]: bytes [24 k, 24 k + 24), the same for both rows: 1, 2, 2, 1 sectors for
    k = 0..3, then 1 and 2. A[row n + k]: bytes 24 row + 4 k for rows 2w, 2w + 1: k = 0: 1 +
    2 + 1 sectors over the warps, k = 1: 4, k = 2: 6, k = 3: 6, k = 4: 5, k = 5: 5.
    C[row n + col]: each warp 48 contiguous bytes in 2 sectors."""
    source = EXAMPLES / "matmul-naive.cu"
    ptx = nvcc_ptx(source)
    print("\n".join(lines_with(ptx, "ld.global", "st.global", "%r27", "%r29", "bra")))
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "naive", "params": {"n": 6},
        "launch": {"grid": [1, 1], "block": [16, 16]},
        "arrays": {"A": square, "B": square, "C": square},
        "kernel": {"source": str(source), "function": "matmulNaive"}}, source.parent)
    closed, spy, lanes = both(pattern, compiled_for_file(source, "matmulNaive"))
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps and spy.loops_run_whole
    got = [(s.op, s.requests, s.sectors) for s in closed.instructions]
    assert got == [("load", 3, 3), ("load", 3, 4), ("load", 3, 6), ("load", 3, 4),
                   ("load", 3, 6), ("load", 3, 6), ("load", 3, 3), ("load", 3, 6),
                   ("load", 6, 9), ("load", 6, 10), ("store", 3, 6)]
    assert closed.totals.unique_sectors == 3 * 5  # 144 bytes each: 4.5 sectors, 5 touched


@needs_nvcc
def test_the_naive_matmul_runs_its_loop_and_its_grid_once_in_closed_form():
    """n = 256: 16 x 16 blocks of 8 warps; the box of all 256 blocks is one batch row per
    class, the k loop (64 trips of 4) one batch per access: 9 batches in all."""
    source = EXAMPLES / "matmul-naive.cu"
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "naive", "params": {"n": 256},
        "launch": {"grid": ["n / 16", "n / 16"], "block": [16, 16]},
        "arrays": {"A": square, "B": square, "C": square},
        "kernel": {"source": str(source), "function": "matmulNaive"}}, source.parent)
    spy = Spy(CompiledKernel(pattern, compiled_for_file(source, "matmulNaive")))
    with counted_by(spy.kernel):
        result = analyze(pattern)
    assert len(spy.batches) == 9 and all(len(b.base) == 8 for _, _, b in spy.batches)
    assert sorted({b.executions for _, _, b in spy.batches}) == [256, 256 * 64]
    loads = [s for s in result.instructions if s.op == "load"]
    assert sum(s.requests for s in loads) == 2 * 256 * 256 * 256 // 32
    assert result.totals.unique_sectors == 3 * 256 * 256 * 4 // 32


# ------------------------------------------------------------------ the examples

@needs_nvcc
@pytest.mark.parametrize("name", CUDA_EXAMPLES)
def test_an_example_counts_alike_in_closed_form_and_lane_by_lane(name):
    pattern = load_pattern(EXAMPLES / name)
    compiled = compiled_for_file(EXAMPLES / pattern.kernel["source"],
                                 pattern.kernel["function"])
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    if not name.startswith(("gather", "histogram")):  # their addresses are loaded data
        assert spy.covered == spy.kernel.warps, name


@needs_nvcc
def test_sectorviz_lane_path_turns_the_closed_forms_off():
    pattern = load_pattern(EXAMPLES / "vector-add-cuda.sectorviz.json")
    kernel = CompiledKernel(pattern, compiled_for_file(EXAMPLES / "vector-add.cu",
                                                       pattern.kernel["function"]))
    assert kernel.closed_trace(0, 64, 32) is not None
    with lane_path():
        assert kernel.closed_trace(0, 64, 32) is None


@needs_nvcc
def test_a_division_of_the_block_index_by_a_literal_keeps_the_box_of_blocks(tmp_path):
    """i / 2, i >> 3 and i & 63 with i = 128 blockIdx.x + threadIdx.x: the block's term
    divides exactly (64 blockIdx.x, 16 blockIdx.x, 0), so 64 blocks are one row per class."""
    text = """
    __global__ void k(const float* a, float* out, int n, int m) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        out[i / 2] = a[i >> 3] + a[i & 63];
    }
    """
    arrays = {"a": {"dtype": "float32", "length": 8192},
              "out": {"dtype": "float32", "length": 8192}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, {"n": 0, "m": 0},
                                       grid=(64,), block=(128,))
    spy = closed_everywhere(pattern, compiled)
    assert len(spy.batches) == 3 and all(len(b.base) == 4 for _, _, b in spy.batches)


@needs_nvcc
def test_an_or_of_the_block_index_with_disjoint_thread_bits_keeps_the_box_of_blocks(tmp_path):
    """SGEMM_CUDA's warptiling row, blockIdx.y * 128 + warpRow * 64 with warpRow < 2, which
    nvcc emits as an `or` (written so here): the block's term is a multiple of 128, the
    thread's below it, so the or is their sum and 4 x 4 blocks of 4 warps stay 4 rows, one
    per class."""
    text = """
    __global__ void __launch_bounds__(128) k(const float* a, float* out, int n, int m) {
        const unsigned warpRow = (threadIdx.x / 32) / 2;
        const unsigned row = blockIdx.y * 128 | warpRow * 64;
        out[row * n + blockIdx.x * 128 + threadIdx.x] = a[row * n + threadIdx.x];
    }
    """
    arrays = {"a": {"dtype": "float32", "length": 512 * 512},
              "out": {"dtype": "float32", "length": 512 * 512}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, {"n": 512, "m": 0},
                                       grid=(4, 4), block=(128,))
    assert lines_with(compiled.ptx, "or.b32")  # what the closed forms must read
    spy = closed_everywhere(pattern, compiled)
    assert all(len(b.base) == 4 for _, _, b in spy.batches)


@needs_nvcc
@pytest.mark.parametrize("body, n", [
    ("atomicAdd(&out[blockIdx.x], a[i]);", 700),
    ("if (i < n) atomicMax((int*)&out[i / 4], 1);", 700),
    ("out[i] = a[min(i, n - 1)] + a[max(i + 5, 3)];", 2000),  # one side everywhere
    ("if (i < n && (threadIdx.x & 3) != 1) out[i] = a[i];", 700),
])
def test_atomics_min_max_and_combined_conditions_have_closed_forms(tmp_path, body, n):
    text = ("__global__ void k(const float* a, float* out, int n, int m) {\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    " + body + "\n}\n")
    arrays = {"a": {"dtype": "float32", "length": 4096},
              "out": {"dtype": "float32", "length": 4096}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, {"n": n, "m": 0},
                                       grid=(8,), block=(128,))
    closed_everywhere(pattern, compiled)


@needs_nvcc
def test_a_product_that_wraps_64_bit_integers_counts_as_the_lane_path_counts_it(tmp_path):
    """i * (2^62 + 1) wraps: its closed form would pass int64, so the lane path's
    arithmetic runs it; & 1023 leaves i (i < 1024): 32 requests of 4 sectors."""
    text = ("__global__ void k(const float* a, float* out, int n, int m) {\n"
            "    long long i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    out[(i * 0x4000000000000001LL) & 1023] = a[i];\n}\n")
    arrays = {"a": {"dtype": "float32", "length": 1024},
              "out": {"dtype": "float32", "length": 1024}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, {"n": 0, "m": 0},
                                       grid=(8,), block=(128,))
    closed, _, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    store = next(s for s in closed.instructions if s.op == "store")
    assert (store.requests, store.sectors) == (32, 128)


@needs_nvcc
@pytest.mark.parametrize("index, grid", [
    ("(blockIdx.x * 32 + threadIdx.x / 32) * n + blockIdx.y * 32 + threadIdx.x % 32", (4, 4)),
    ("(((blockIdx.x * blockDim.x + threadIdx.x) >> 5) & 15) * 64 + (threadIdx.x & 31)", (8, 1)),
])
def test_a_bit_field_insert_keeps_the_box_of_blocks(tmp_path, index, grid):
    """nvcc writes `blockIdx.y * 32 + threadIdx.x % 32` (a coalesced matrix multiply's
    column) and a field shifted into place as one bfi: with a literal position and length it
    is exact in closed form, so the grid stays one row per class of warps."""
    text = ("__global__ void k(const float* a, float* out, int n, int m) {\n"
            f"    out[{index}] = a[threadIdx.x];\n}}\n")
    arrays = {"a": {"dtype": "float32", "length": 1024},
              "out": {"dtype": "float32", "length": 32768}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, {"n": 128, "m": 0},
                                       grid=grid, block=(1024,))
    assert lines_with(compiled.ptx, "bfi.b32")  # what this test is about
    spy = closed_everywhere(pattern, compiled)
    assert all(len(b.base) == 32 for _, _, b in spy.batches)  # a row per class of 32 warps


@needs_nvcc
def test_a_shared_address_whose_32_bit_sum_wraps_lands_inside_the_tile(tmp_path):
    """`ld.shared.f32 [%r10+136]` with %r10 = t + 4 * ((i & 15) + off), off = -16: the
    32-bit register holds 2^32 - 64 + 4 (i & 15) for the tile at byte 0, and the sum wraps
    to 72 + 4 (i & 15), t[1][1 + (i & 15)]: in closed form as on the lanes."""
    text = """
extern "C" __global__ void k(float* out, int off)
{
    __shared__ float t[4][17];
    int i = threadIdx.x;
    if (i < 68) (&t[0][0])[i] = i;
    __syncthreads();
    out[i] = t[1][(i & 15) + off + 17];
}
"""
    pattern, compiled = inline_pattern(tmp_path, text, "k", {
        "out": {"dtype": "float32", "length": 64}}, {"off": -16}, grid=(2,), block=(32,))
    print("\n".join(lines_with(compiled.ptx, "ld.shared")))
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    load = [b for space, _, b in spy.batches if space == "shared"][1]
    assert sorted(set((load.base[0] + load.offsets[load.cls[0]]).tolist())) == [
        72 + 4 * j for j in range(16)]
    # the load: 16 words 72..132 (lane i and i + 16 share one), conflict-free: a wavefront
    # per warp; the store before it writes 32 consecutive words: a wavefront per warp too
    assert [(s.op, s.requests, s.wavefronts) for s in closed.shared] == [
        ("store", 2, 2), ("load", 2, 2)]


@needs_nvcc
def test_an_mma_runs_in_closed_form_its_results_data(tmp_path):
    """Six loads feed an mma.sync (register to register) whose four results are summed and
    stored: the closed forms take the mma (Opaque results) and count what the lane path
    counts, 8 warps in 2 rows (one per class of a block of 2 warps)."""
    text = """
    extern "C" __global__ void k(const unsigned* a, float* out) {
        int t = threadIdx.x;
        unsigned r[6];
        for (int j = 0; j < 6; ++j) r[j] = a[32 * j + t % 32];
        float d0, d1, d2, d3;
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
                     "{%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3) : "r"(r[0]), "r"(r[1]),
                     "r"(r[2]), "r"(r[3]), "r"(r[4]), "r"(r[5]), "f"(0.0f));
        out[blockIdx.x * 64 + t] = d0 + d1 + d2 + d3;
    }
    """
    arrays = {"a": {"dtype": "uint32", "length": 192},
              "out": {"dtype": "float32", "length": 256}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, grid=(4,), block=(64,))
    assert lines_with(compiled.ptx, "mma.sync")
    spy = closed_everywhere(pattern, compiled)
    assert all(len(b.base) == 2 for _, _, b in spy.batches)


@needs_nvcc
@pytest.mark.parametrize("body", [
    # bfe.u32 of i = 128 blockIdx.x + threadIdx.x, bits 2..6: (i / 4) % 32 = threadIdx.x / 4
    # % 32 (the block's term, 32 blockIdx.x, divides out): a box of blocks
    'unsigned r; asm("bfe.u32 %0, %1, 2, 5;" : "=r"(r) : "r"(i)); out[i] = a[r];',
    # a cp.async whose lanes 8-31 copy 0 bytes (src-size 0) from past a's end
    'unsigned dst = (unsigned)__cvta_generic_to_shared(&s[4 * threadIdx.x]);'
    ' asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst),'
    ' "l"(a + 4064 + 4 * (threadIdx.x % 32)), "r"(threadIdx.x % 32 < 8 ? 16 : 0));'
    ' asm volatile("cp.async.wait_all;" ::: "memory"); __syncthreads(); out[i] = s[threadIdx.x];',
    # ldmatrix.x4: lanes give the rows of 4 matrices of the tile
    'for (int j = threadIdx.x; j < 512; j += 128) s[j] = a[j];  __syncthreads();'
    ' unsigned r0, r1, r2, r3, row = (unsigned)__cvta_generic_to_shared(&s[4 * (i % 128)]);'
    ' asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"'
    ' : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(row)); out[i] = (float)(r0 + r3);',
])
def test_bfe_cp_async_and_ldmatrix_have_closed_forms(tmp_path, body):
    text = ("extern \"C\" __global__ void k(const float* a, float* out) {\n"
            "    __shared__ __align__(16) float s[512];\n"
            "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n    " + body + "\n}\n")
    arrays = {"a": {"dtype": "float32", "length": 4096},
              "out": {"dtype": "float32", "length": 4096}}
    pattern, compiled = inline_pattern(tmp_path, text, "k", arrays, grid=(8,), block=(128,))
    assert lines_with(compiled.ptx, "bfe.u32", "cp.async.cg", "ldmatrix")
    spy = closed_everywhere(pattern, compiled)
    assert all(len(b.base) == 4 for _, _, b in spy.batches)


# ------------------------------------------------------------------ double buffering

DOUBLE_BUFFERED = """
extern "C" __global__ void k(const float* a, float* out, int n) {
    __shared__ float tile[2048];
    int t = threadIdx.x;
    float acc = 0.0f;
    tile[t] = a[t];
    __syncthreads();
    for (int s = 0; s < n; s += 128) {
        #pragma unroll 1
        for (int i = 0; i < 16; ++i) {
            acc += tile[((i + (t >> 8)) << 7) | ((t << 1) & 56)];
        }
        __syncthreads();
        if (s + 256 < n) {
            tile[t] = a[s + 256 + t];
        }
        __syncthreads();
        acc *= 0.5f;
    }
    out[t] = acc;
}
"""


@needs_nvcc
def test_a_double_buffered_loop_runs_whole_before_and_after_its_prefetch_stops(tmp_path):
    """SGEMM_CUDA's kernel 11 in small: an outer loop (s = 128 j, 8 trips at n = 1024) whose
    prefetch `if (s + 256 < n)` runs for j < 6 only, around an inner loop whose address
    temporaries (`and`, `or`, `shl`: nvcc recomputes them from its pointer each iteration)
    hold the last iteration's values when it is entered again. The outer loop runs as two
    whole runs, j in [0, 6) with the prefetch and [6, 8) without; the inner loop whole in
    each (its temporaries need no value across iterations).
    By hand, one block of 4 warps: a[t] and out[t] 4 sectors a warp (16 each, 4 requests);
    the prefetch 6 times (24 requests, 96 sectors). tile: the first store and the prefetch's
    32 consecutive words a warp (a wavefront each: 4 and 24); the inner load 8 x 16 times a
    warp (512 requests) at words 128 i + 8 ((lane >> 2) & 7): 8 words, banks 0, 8, 16, 24
    twice each, 2 wavefronts (1,024)."""
    arrays = {"a": {"dtype": "float32", "length": 1024},
              "out": {"dtype": "float32", "length": 128}}
    pattern, compiled = inline_pattern(tmp_path, DOUBLE_BUFFERED, "k", arrays,
                                       {"n": 1024}, block=(128,))
    print("\n".join(lines_with(compiled.ptx, "and.b32", "or.b32", "setp", "bra")))
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    assert [(space, b.executions) for space, _, b in spy.batches] == [
        ("global", 1), ("shared", 1), ("shared", 16 * 6), ("global", 6), ("shared", 6),
        ("shared", 16 * 2), ("global", 1)]
    assert [(s.op, s.requests, s.sectors) for s in closed.instructions] == [
        ("load", 4, 16), ("load", 24, 96), ("store", 4, 16)]
    assert [(s.op, s.requests, s.wavefronts) for s in closed.shared] == [
        ("store", 4, 4), ("load", 512, 1024), ("store", 24, 24)]


BULK_COPY = """#include <cuda/barrier>
extern "C" __global__ void k(const float4* a, float4* out) {
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    __shared__ float4 tile[128];
    int t = threadIdx.x;
    if (t == 0) init(&bar, blockDim.x);
    __syncthreads();
    cuda::memcpy_async(&tile[t], &a[blockIdx.x * 128 + t], cuda::aligned_size_t<16>(16), bar);
    bar.arrive_and_wait();
    out[blockIdx.x * 128 + t] = tile[127 - t];
}
"""


@needs_nvcc
def test_a_lanes_16_byte_bulk_copy_through_a_barrier_runs_in_closed_form(tmp_path):
    """cuda::memcpy_async of a float4 through a cuda::barrier, as SGEMM_CUDA's kernel 12
    loads B: nvcc emits a lane's bulk copy (`cp.async.bulk.shared::cluster.global
    .mbarrier::complete_tx::bytes [dst], [src], %r, [bar]`, %r set to 16 once) and mbarrier
    init / arrive / try_wait; the copy is a 16-byte read of global and write of shared per
    lane. By hand, 2 blocks of 4 warps: the copy reads 32 consecutive float4 a warp (512
    bytes, 16 sectors: 8 requests, 128 sectors) and writes them to consecutive words of tile
    (4 wavefronts a warp, the ideal for 16 bytes: 32); the tile read in reverse, 4 wavefronts
    a warp too; out written as the copy read: 8 requests, 128 sectors."""
    arrays = {"a": {"dtype": "float32", "length": 1024},
              "out": {"dtype": "float32", "length": 1024}}
    pattern, compiled = inline_pattern(tmp_path, BULK_COPY, "k", arrays, grid=(2,),
                                       block=(128,))
    print("\n".join(lines_with(compiled.ptx, "cp.async", "mbarrier", "%r1,")))
    assert lines_with(compiled.ptx, "cp.async.bulk.shared::cluster.global")
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    assert [(s.op, s.requests, s.sectors) for s in closed.instructions] == [
        ("load", 8, 128), ("store", 8, 128)]
    assert [(s.op, s.requests, s.wavefronts) for s in closed.shared] == [
        ("store", 8, 32), ("load", 8, 32)]


TOGGLED = """
extern "C" __global__ void k(const float* a, float* out, int n) {
    __shared__ float tile[2][128];
    int t = threadIdx.x;
    int cur = 0;
    float acc = 0.0f;
    tile[0][t] = a[t];
    __syncthreads();
    #pragma unroll 1
    for (int s = 128; s < n; s += 128) {
        tile[1 - cur][t] = a[s + t];
        acc += tile[cur][127 - t];
        __syncthreads();
        cur = 1 - cur;
    }
    out[t] = acc + tile[cur][t];
}
"""


@needs_nvcc
def test_a_loop_whose_buffer_index_toggles_runs_whole_in_pairs_of_iterations(tmp_path):
    """SGEMM_CUDA's kernel 12 in small: `cur = 1 - cur` (nvcc: `sub.s32 %r5, 1, %r28`) takes
    0, 1, 0, ... so no iteration's addresses follow from the one before by a fixed step,
    but every second one's do: the loop runs whole in pairs of iterations. n = 1024: 7
    iterations (s = 128 .. 896), 3 pairs and the odd last one on its own, so each access of
    the loop comes as runs of 3, 3 and 1.
    By hand, one block of 4 warps: a[t], out[t] and a[s + t] 4 sectors a warp (4 requests
    and 16 sectors each, the loop's 7 times: 28 and 112); tile: every access 32
    consecutive words a warp (reversed for 127 - t), a wavefront each: 4, 28, 28, 4."""
    arrays = {"a": {"dtype": "float32", "length": 1024},
              "out": {"dtype": "float32", "length": 128}}
    pattern, compiled = inline_pattern(tmp_path, TOGGLED, "k", arrays, {"n": 1024},
                                       block=(128,))
    print("\n".join(lines_with(compiled.ptx, "sub.s32", "bra", "ld.", "st.")))
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    loop = [b.executions for space, k, b in spy.batches if (space, k) == ("global", 1)]
    assert loop == [3, 3, 1]
    assert [(s.op, s.requests, s.sectors) for s in closed.instructions] == [
        ("load", 4, 16), ("load", 28, 112), ("store", 4, 16)]
    assert [(s.op, s.requests, s.wavefronts) for s in closed.shared] == [
        ("store", 4, 4), ("store", 28, 28), ("load", 28, 28), ("load", 4, 4)]


WARP_REDUCED = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float* a, float* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < n; i += 32) sum += a[row * n + i];
    sum = cg::reduce(warp, sum, cg::plus<float>{});
    if (warp.thread_rank() == 0) out[row] = sum;
}
"""


@needs_nvcc
def test_a_warp_reduction_of_cooperative_groups_runs_in_closed_form(tmp_path):
    """cg::reduce over a warp, as llm.c's layernorm kernels 3 and 4 sum a row: nvcc's
    `shfl.sync.bfly.b32 %r|%p, ...` (the `d|p` form, p: the source lane in range) of a
    float partial sum. By hand, 2 blocks of 4 warps, a row of n = 64 floats each: the loop
    (nvcc unrolls it by 4, a remainder loop beside) reads 32 consecutive floats a warp twice
    (16 requests, 64 sectors in all); lane 0 writes out[row] (8 requests, 8 sectors)."""
    arrays = {"a": {"dtype": "float32", "length": 512},
              "out": {"dtype": "float32", "length": 8}}
    pattern, compiled = inline_pattern(tmp_path, WARP_REDUCED, "k", arrays, {"n": 64},
                                       grid=(2,), block=(128,))
    assert any("|%p" in line for line in lines_with(compiled.ptx, "shfl.sync.bfly"))
    spy = closed_everywhere(pattern, compiled)
    assert spy.loops_run_whole
    closed, _, _ = both(pattern, compiled)
    print([(s.op, s.requests, s.sectors) for s in closed.instructions])
    assert [(op, sum(s.requests for s in closed.instructions if s.op == op),
             sum(s.sectors for s in closed.instructions if s.op == op))
            for op in ("load", "store")] == [("load", 16, 64), ("store", 8, 8)]
