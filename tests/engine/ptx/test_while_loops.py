"""While loops in closed form (loops.while_exit, compress.py): a debug compile (-G) tests a
`for` loop at its top and branches back unconditionally, and the closed forms run such a
loop once for all its iterations, as they run -O3's rotated do-while loops."""

from __future__ import annotations

from ptx_helpers import DEBUG_FLAGS, assert_same, both, inline_pattern, lines_with, needs_nvcc

from sectorviz.engine.ptx import compress
from sectorviz.engine.ptx.loops import latch_slice, natural_loops, while_exit
from sectorviz.engine.ptx.parse import parse_module

# nested loops whose trip counts come from a parameter (n / 32 tiles) and a literal (8)
TILES = """
__global__ void k(const float* a, float* out, int n) {
    float sum = 0.0f;
    for (int t = 0; t < n; t += 32) {
        for (int k = 0; k < 8; k++)
            sum += a[t + k * 4 + threadIdx.x % 4];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""
ARRAYS = {"a": {"dtype": "float32", "length": 4096},
          "out": {"dtype": "float32", "length": 4096}}


def debug_run(tmp_path, code: str, n: int, grid: int):
    """(the closed forms' analysis of `code` at -G, blocks of 64, their Spy), once it equals
    the lane path's and they covered every warp."""
    pattern, debug = inline_pattern(tmp_path, code, "k", ARRAYS, {"n": n},
                                    grid=(grid,), block=(64,), flags=DEBUG_FLAGS)
    print("\n".join(lines_with(debug.ptx, "bra", "setp", "not.pred")))
    closed, spy, lanes = both(pattern, debug)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    return closed, spy


@needs_nvcc
def test_debug_loops_run_whole_in_closed_form(tmp_path):
    closed, spy = debug_run(tmp_path, TILES, 1024, 4)
    entry = spy.kernel.entry
    loops = natural_loops(entry)
    # both loops are while loops: an unconditional latch, a test at the top
    assert len(loops) == 2
    assert all(entry.instructions[latch].guard is None and
               while_exit(entry, header, latch) is not None
               for header, latch in loops.items())
    assert spy.loops_run_whole and not spy.iterated()
    # a[...]: per warp and (t, k), lanes read 4 words of one sector: 1 sector per request;
    # 8 warps x 32 tiles x 8 = 2,048 requests; out: 8 warps x 4 sectors
    load, store = closed.instructions
    assert (load.requests, load.sectors) == (2048, 2048)
    assert (store.requests, store.sectors) == (8, 32)


@needs_nvcc
def test_a_while_loop_that_never_runs(tmp_path):
    # n = 0: every lane leaves at the first test; only the store is counted
    closed, _ = debug_run(tmp_path, TILES, 0, 4)
    load, store = closed.instructions
    assert (load.requests, store.requests, store.sectors) == (0, 8, 32)


# a branch inside the loop that switches at its last iteration (SGEMM_CUDA 11's
# `if (bkIdx + 2 * BK < K)`): iterations [0, trips - 1) run at once, then the last
LAST_DIFFERS = """
__global__ void k(const float* a, float* out, int n) {
    float sum = 0.0f;
    for (int t = 0; t < n; t += 32) {
        sum += a[t + threadIdx.x];
        if (t + 32 < n)
            sum += a[t + 32 + threadIdx.x % 8];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""


@needs_nvcc
def test_a_while_loop_whose_last_iteration_differs_runs_in_two_parts(tmp_path):
    closed, spy = debug_run(tmp_path, LAST_DIFFERS, 1024, 2)
    assert spy.loops_run_whole
    # 32 iterations per warp, 4 warps: a[t + tid] 4 sectors per request, 128 requests;
    # a[t + 32 + tid % 8] in the first 31 of them: 1 sector, 124 requests
    first, second, _ = closed.instructions
    assert (first.requests, first.sectors) == (128, 512)
    assert (second.requests, second.sectors) == (124, 124)


@needs_nvcc
def test_a_debug_loop_counter_is_read_without_running_an_iteration(tmp_path):
    """-G writes `t += 32` as `mov %r6, %r73; ...; add %r7, %r6, 32; mov %r73, %r7`: the
    closed forms read both loops' steps from the code (loops.counters) instead of running
    an iteration to find them."""
    kernel = debug_run(tmp_path, TILES, 1024, 4)[1].kernel
    counted = {header: kernel.loop_counters[header] for header in kernel.natural_loops}
    steps = sorted(c.sign * c.operand.value for found in counted.values() if found
                   for c in found.values() if c is not None)
    assert all(found is not None for found in counted.values()) and steps == [1, 32]


# three nested loops, as SGEMM_CUDA's warp tile nests them (trip counts 4, 2 and 8)
NESTED = """
__global__ void k(const float* a, float* out, int n) {
    float sum = 0.0f;
    for (int t = 0; t < n; t += 256)
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 8; k++)
                sum += a[t + r * 128 + k * 16 + threadIdx.x % 16];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
"""


@needs_nvcc
def test_trip_counts_come_from_the_exit_tests_alone(tmp_path, monkeypatch):
    """A loop's trip count comes from its header's run up to the exit test
    (loops.latch_slice), not from a whole iteration run for it: each loop's body runs once
    per compression (j over all its iterations), never once more for j = 0 alone, so nested
    loops cost no more than one pass each level. Counts equal the lane path's."""
    spans: list[int] = []
    passed = compress._Run.passed

    def recorded(run, span):
        spans.append(span)
        return passed(run, span)

    monkeypatch.setattr(compress._Run, "passed", recorded)
    closed, spy = debug_run(tmp_path, NESTED, 1024, 2)
    kernel = spy.kernel
    assert len(kernel.natural_loops) == 3
    assert all(kernel.latch_slices[h] for h in kernel.natural_loops)
    assert spy.loops_run_whole and not spy.iterated()
    assert spans and 1 not in spans
    # per warp: 4 x 2 x 8 = 64 loads, each lanes 0-15 and 16-31 reading the same 16
    # words (64 bytes, 2 sectors); 4 warps: 256 requests, 512 sectors
    load, _ = closed.instructions
    assert (load.requests, load.sectors) == (256, 512)


def test_a_latch_predicate_read_from_memory_has_no_slice():
    """A do-while loop whose latch tests a value loaded in the body has no latch slice: the
    closed forms run a whole iteration for its trip count."""
    entry = parse_module(LOADED_LATCH).entries["k"]
    (header, latch), = natural_loops(entry).items()
    assert latch_slice(entry, header, latch) is None
    counted = parse_module(COUNTED_LATCH).entries["k"]
    (header, latch), = natural_loops(counted).items()
    # the add that steps %r1 and the setp that tests it; not the load
    assert [counted.instructions[k].op for k in latch_slice(counted, header, latch)] == \
        ["add", "setp"]


def _latch_loop(latch_test: str) -> str:
    """Hand-written PTX: a do-while loop stepping %r1 by 1 and loading a[%r1] each
    iteration, its latch deciding on `latch_test`."""
    return f"""
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
    .param .u64 k_param_0
)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;

    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, 0;
$L__loop:
    mul.wide.s32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r2, [%rd3];
    add.s32 %r1, %r1, 1;
    {latch_test}
    @%p1 bra $L__loop;
    ret;
}}
"""


COUNTED_LATCH = _latch_loop("setp.lt.s32 %p1, %r1, 16;")  # i < 16
LOADED_LATCH = _latch_loop("setp.ne.s32 %p1, %r2, 0;")  # until a[i] == 0
