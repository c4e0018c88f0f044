"""A loop whose body cycles a register through a few values by a select (Triton's software
pipeline: the stage index `s = s + 1 > 2 ? 0 : s + 1`) in closed form (compress.py): its
first iteration (s = -1 before it) runs as code, the rest with the body unrolled by the
period, 3, and the last iterations, where a guard turns the load off, as code again; the
same numbers as the lane path, and as many batches whatever the trip count."""

from __future__ import annotations

import pytest
from ptx_helpers import assert_same, both, ptx_pattern

# n iterations i; stage s cycles 0, 1, 2 from -1; the load at a + 512 i + 128 s + 4 lane,
# skipped in the last 2 iterations (i < n - 2), as Triton's prefetch past K is
PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(
    .param .u64 k_param_0,
    .param .u32 k_param_1
)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<2>;

    ld.param.u64 %rd1, [k_param_0];
    ld.param.u32 %r1, [k_param_1];
    mov.u32 %r2, %tid.x;
    and.b32 %r2, %r2, 31;
    mov.u32 %r3, -1;
    mov.u32 %r4, 0;
    add.s32 %r9, %r1, -2;
$L__loop:
    setp.lt.s32 %p1, %r4, %r9;
    add.s32 %r5, %r3, 1;
    setp.gt.s32 %p2, %r5, 2;
    selp.b32 %r3, 0, %r5, %p2;
    shl.b32 %r6, %r3, 7;
    shl.b32 %r7, %r2, 2;
    add.s32 %r7, %r7, %r6;
    shl.b32 %r10, %r4, 9;
    add.s32 %r7, %r7, %r10;
    cvt.u64.u32 %rd2, %r7;
    add.s64 %rd3, %rd1, %rd2;
    @%p1 ld.global.f32 %f1, [%rd3];
    add.s32 %r4, %r4, 1;
    setp.lt.s32 %p3, %r4, %r1;
    @%p3 bra $L__loop;
    ret;
}
"""


@pytest.mark.parametrize("n", [20, 200])
def test_a_cycling_stage_index_runs_unrolled_by_its_period(n):
    """2 blocks of 64 threads: 4 warps. Each of the first n - 2 iterations loads 32
    consecutive floats at a 128-byte boundary (512 i + 128 s): 1 request of 4 sectors;
    4 (n - 2) requests, 16 (n - 2) sectors. The load's batches: the peeled first
    iteration, the 3 copies of the unrolled body and the iterations after the last whole
    period that the guard allows, as code: fewer than 10 for n = 20 and n = 200 alike,
    each over the box of 2 blocks (the guarded-off iterations have none)."""
    arrays = {"a": {"dtype": "float32", "length": 128 * (n + 1)}}
    pattern, compiled = ptx_pattern(PTX, "k", ("a", "n"), arrays, {"n": n}, grid=(2,),
                                    block=(64,))
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps == 4 and spy.loops_run_whole
    (load,) = closed.instructions
    assert (load.requests, load.sectors) == (4 * (n - 2), 16 * (n - 2))
    runs = [b for space, _, b in spy.batches if space == "global"]
    assert len(runs) < 10 and sum(b.executions for b in runs) == 2 * (n - 2)  # x 2 blocks
