"""The engine's arithmetic, conversions and warp-wide instructions on hand-written PTX (no
compiler needed): each test computes a value per lane into %r9 and the kernel stores a byte
at out + 4096 + %r9, so the store's addresses show the values the engine computed."""

from __future__ import annotations

import numpy as np
import pytest
from ptx_helpers import ptx_pattern

from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model.budget import Budget, work_budget
from sectorviz.model.errors import PatternError

HEAD = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 t_param_0, .param .u32 t_param_1)
{
    .reg .pred %p<8>;
    .reg .b16 %rs<8>;
    .reg .b32 %r<32>;
    .reg .f32 %f<16>;
    .reg .f64 %fd<8>;
    .reg .b64 %rd<16>;
    .loc 1 3 0
    ld.param.u64 %rd1, [t_param_0];
    mov.u32 %r1, %laneid;
"""
TAIL = """
    add.s32 %r10, %r9, 4096;
    cvt.s64.s32 %rd2, %r10;
    add.s64 %rd3, %rd1, %rd2;
    .loc 1 7 5
    st.global.u8 [%rd3], 0;
    ret;
}
"""
OUT = {"out": {"dtype": "uint8", "length": 8192}}


def kernel_of(body: str, block: int = 32, grid: int = 1, params: dict | None = None,
              arrays: dict | None = None) -> CompiledKernel:
    pattern, compiled = ptx_pattern(HEAD + body + TAIL, "t", ("out", "n"), arrays or OUT,
                                    params if params is not None else {"n": 5},
                                    grid=(grid,), block=(block,))
    return CompiledKernel(pattern, compiled)


def values(body: str, **kw) -> np.ndarray:
    """The %r9 of every active lane of the first warp at the final store (-9999: inactive)."""
    kernel = kernel_of(body, **kw)
    last = None
    for _, batch in kernel.trace(0, 1):
        last = batch
    base = kernel.arrays["out"].address0 + 4096
    return np.where(last.active[0], last.address[0] - base, -9999)


def test_integer_division_and_remainder_truncate_as_c_does():
    # lane L: (L - 16) / 3 and (L - 16) % 3
    div = values("sub.s32 %r2, %r1, 16;\n div.s32 %r9, %r2, 3;")
    rem = values("sub.s32 %r2, %r1, 16;\n rem.s32 %r9, %r2, 3;")
    lanes = np.arange(32) - 16
    assert list(div) == [int(x / 3) for x in lanes]
    assert list(rem) == [x - 3 * int(x / 3) for x in lanes]


def test_a_division_by_zero_is_unknown_not_zero():
    with pytest.raises(PatternError, match="division by zero"):
        values("div.u32 %r9, 7, %r1;")  # lane 0 divides by 0, and the address uses it


@pytest.mark.parametrize("body, expected", [
    ("shl.b32 %r9, %r1, 33;", [0] * 32),  # a shift past the width gives 0
    ("sub.s32 %r2, 0, %r1;\n shr.s32 %r9, %r2, 1;", [-((x + 1) // 2) for x in range(32)]),
    ("sub.s32 %r2, 0, %r1;\n shr.u32 %r3, %r2, 28;\n and.b32 %r9, %r3, 15;",
     [0] + [15] * 31),
    ("mul.wide.s32 %rd5, %r1, -65536;\n shr.s64 %rd6, %rd5, 16;\n cvt.u32.u64 %r9, %rd6;",
     [-x for x in range(32)]),
    ("mul.hi.u32 %r9, %r1, 1073741824;", [x // 4 for x in range(32)]),
    ("mad.lo.s32 %r9, %r1, %r1, -100;", [x * x - 100 for x in range(32)]),
    ("min.s32 %r2, %r1, 20;\n max.s32 %r9, %r2, 10;", [min(max(x, 10), 20) for x in range(32)]),
    ("popc.b32 %r9, %r1;", [bin(x).count("1") for x in range(32)]),
    # the left shift that brings the highest 1 bit of x + 1 to bit 31 (what __ffs adds 1 to)
    ("add.s32 %r2, %r1, 1;\n bfind.shiftamt.u32 %r9, %r2;",
     [32 - (x + 1).bit_length() for x in range(32)]),
    ("add.s32 %r2, %r1, 1;\n bfind.u32 %r9, %r2;", [(x + 1).bit_length() - 1 for x in range(32)]),
    ("bfe.u32 %r9, %r1, 2, 2;", [(x >> 2) & 3 for x in range(32)]),
    # no bit found: 0xFFFFFFFF, which the address reads as -1
    ("bfind.u32 %r9, %r1;", [x.bit_length() - 1 for x in range(32)]),
    # __ffs(x) at -G: brev, then the shift that moves the found bit to the top, plus 1
    ("add.s32 %r2, %r1, 1;\n brev.b32 %r3, %r2;\n bfind.shiftamt.u32 %r4, %r3;\n"
     " add.s32 %r9, %r4, 1;", [((x + 1) & -(x + 1)).bit_length() for x in range(32)]),
    ("setp.lt.s32 %p1, %r1, 8;\n setp.gt.or.s32 %p2, %r1, 28, %p1;\n"
     " selp.s32 %r9, 1, 0, %p2;", [1 if x < 8 or x > 28 else 0 for x in range(32)]),
    ("ld.param.u32 %r2, [t_param_1];\n add.s32 %r9, %r1, %r2;", [x + 5 for x in range(32)]),
    ("mul.wide.u32 %rd5, %r1, 3;\n mad.wide.u32 %rd6, %r1, 2, %rd5;\n cvt.u32.u64 %r9, %rd6;",
     [5 * x for x in range(32)]),
    ("sub.s32 %r2, 0, %r1;\n mul24.lo.s32 %r9, %r2, 3;", [-3 * x for x in range(32)]),
    ("shf.l.wrap.b32 %r2, %r1, %r1, 28;\n and.b32 %r9, %r2, 4095;",
     [((x << 28 | x >> 4) & 0xFFFFFFFF) & 4095 for x in range(32)]),
    ("cvt.rn.f32.u32 %f1, %r1;\n div.rn.f32 %f2, %f1, 0f00000000;\n"
     " testp.infinite.f32 %p1, %f2;\n selp.s32 %r9, 1, 0, %p1;", [0] + [1] * 31),
    # the launch gives no dynamic shared memory: 0, whatever the kernel declares statically
    (".shared .align 4 .b8 tile[64];\n mov.u32 %r9, %dynamic_smem_size;", [0] * 32),
    ("add.s32 %r9, %r1, WARP_SZ;", [x + 32 for x in range(32)]),  # the predefined 32
    ("add.cc.u32 %r9, %r1, 1;", None),
])
def test_integer_operations(body, expected):
    if expected is None:  # refused, not computed wrongly
        with pytest.raises(PatternError, match="does not run"):
            values(body)
    else:
        assert list(values(body)) == expected


def test_packed_halves_are_computed_half_by_half():
    # {L / 2 + 0.5, L} as f16x2, squared half by half and summed, in f16
    body = """
    cvt.rn.f32.u32 %f0, %r1;
    mul.f32 %f1, %f0, 0f3F000000;
    add.f32 %f2, %f1, 0f3F000000;
    add.f32 %f3, %f1, %f1;
    cvt.rn.f16x2.f32 %r2, %f3, %f2;
    mul.rn.f16x2 %r3, %r2, %r2;
    mov.b32 {%rs1, %rs2}, %r3;
    add.f16 %rs3, %rs1, %rs2;
    cvt.f32.f16 %f4, %rs3;
    cvt.rni.s32.f32 %r9, %f4;
    """
    half = np.float16
    expected = [int(np.rint(np.float32(half(half(x / 2 + 0.5) * half(x / 2 + 0.5))
                                       + half(half(x) * half(x))).astype(half)))
                for x in range(32)]
    assert list(values(body)) == expected


PACKED_PAIR = """
    cvt.rn.f32.u32 %f1, %r1;
    mov.f32 %f2, 0f40400000;
    cvt.rn.f16x2.f32 %r2, %f2, %f1;
    mov.b32 %r4, 0x42004500;
"""  # %r2 = {low L, high 3.0} and %r4 = {low 5.0 (0x4500), high 3.0 (0x4200)} as f16x2
HALVES = """
    and.b32 %r6, %r5, 65535;
    shr.u32 %r7, %r6, 10;
    shr.u32 %r8, %r5, 24;
    add.s32 %r9, %r7, %r8;
"""  # %r9 = low half / 1024 + high half / 256 of %r5


@pytest.mark.parametrize("body, expected", [
    # 1.0 in f16 (0x3C00) where equal: low 0x3C00 / 1024 = 15 on lane 5, high 0x3C00 / 256
    # (3.0 == 3.0) = 60 on every lane
    ("set.eq.f16x2.f16x2 %r5, %r2, %r4;" + HALVES, [60 + 15 * (x == 5) for x in range(32)]),
    # all ones per half with a u32 dtype: 0xFFFF / 1024 = 63 low, 0xFFFF / 256 = 255 high
    ("set.eq.u32.f16x2 %r5, %r2, %r4;" + HALVES, [255 + 63 * (x == 5) for x in range(32)]),
    # p from the low halves (L <= 5), q from the high ones (3.0 <= 3.0): 1 + 2
    ("setp.le.f16x2 %p1|%p2, %r2, %r4;\n selp.s32 %r6, 1, 0, %p1;\n selp.s32 %r7, 2, 0, %p2;"
     "\n add.s32 %r9, %r6, %r7;", [2 + (x <= 5) for x in range(32)]),
    # set with an f16 dtype on f16 sources: 1.0 = 0x3C00 where L == 3 (low half of %r2)
    ("mov.b32 {%rs1, %rs2}, %r2;\n set.eq.f16.f16 %rs3, %rs1, %rs2;\n cvt.u32.u16 %r5, %rs3;"
     "\n shr.u32 %r9, %r5, 10;", [15 * (x == 3) for x in range(32)]),
])
def test_packed_half_comparisons_compare_half_by_half(body, expected):
    assert list(values(PACKED_PAIR + body)) == expected


@pytest.mark.parametrize("body, expected", [
    # lane L: (L - 16) * 0.75 rounded toward zero / to nearest even / down
    ("sub.s32 %r2, %r1, 16;\n cvt.rn.f32.s32 %f1, %r2;\n mul.f32 %f2, %f1, 0f3F400000;\n"
     " cvt.rzi.s32.f32 %r9, %f2;", [int((x - 16) * 0.75) for x in range(32)]),
    ("sub.s32 %r2, %r1, 16;\n cvt.rn.f32.s32 %f1, %r2;\n mul.f32 %f2, %f1, 0f3F000000;\n"
     " cvt.rni.s32.f32 %r9, %f2;", [round((x - 16) * 0.5) for x in range(32)]),
    ("sub.s32 %r2, %r1, 16;\n cvt.rn.f32.s32 %f1, %r2;\n mul.f32 %f2, %f1, 0f3F400000;\n"
     " cvt.rmi.s32.f32 %r9, %f2;", [int(np.floor((x - 16) * 0.75)) for x in range(32)]),
    # float to a narrow integer saturates: L * 20 - 100 clamped to [0, 255]
    ("cvt.rn.f32.u32 %f1, %r1;\n fma.rn.f32 %f2, %f1, 0f41A00000, 0fC2C80000;\n"
     " cvt.rzi.u8.f32 %rs1, %f2;\n cvt.u32.u16 %r9, %rs1;",
     [min(max(20 * x - 100, 0), 255) for x in range(32)]),
    # double: sqrt(L) * 16, rounded to nearest
    ("cvt.rn.f64.u32 %fd1, %r1;\n sqrt.rn.f64 %fd2, %fd1;\n mul.f64 %fd3, %fd2, 0d4030000000000000;"
     "\n cvt.rni.s32.f64 %r9, %fd3;", [int(np.rint(np.sqrt(x) * 16)) for x in range(32)]),
    # half: L + 0.5 in f16, times 2, back to an integer
    ("cvt.rn.f32.u32 %f1, %r1;\n add.f32 %f2, %f1, 0f3F000000;\n cvt.rn.f16.f32 %rs1, %f2;\n"
     " add.f16 %rs2, %rs1, %rs1;\n cvt.f32.f16 %f3, %rs2;\n cvt.rzi.s32.f32 %r9, %f3;",
     [2 * x + 1 for x in range(32)]),
])
def test_float_operations_and_conversions(body, expected):
    assert list(values(body)) == expected


HALVES = "setp.lt.u32 %p1, %r1, 16;\n selp.b32 %r3, 65535, -65536, %p1;\n"


@pytest.mark.parametrize("body, expected", [
    ("shfl.sync.down.b32 %r9, %r1, 1, 31, -1;", [min(x + 1, 31) if x < 31 else 31
                                                for x in range(32)]),
    ("shfl.sync.bfly.b32 %r9, %r1, 3, 31, -1;", [x ^ 3 for x in range(32)]),
    ("shfl.sync.idx.b32 %r9, %r1, 5, 31, -1;", [5] * 32),
    ("shfl.sync.up.b32 %r9, %r1, 2, 0, -1;", [x - 2 if x >= 2 else x for x in range(32)]),
    # width 8 (c = ((32 - 8) << 8) | 31): down by 1 stays inside each group of 8 lanes
    ("shfl.sync.down.b32 %r9, %r1, 1, 6175, -1;", [x + 1 if x % 8 != 7 else x
                                                  for x in range(32)]),
    ("setp.lt.u32 %p1, %r1, 5;\n vote.sync.ballot.b32 %r2, %p1, -1;\n and.b32 %r9, %r2, 255;",
     [31] * 32),
    ("and.b32 %r2, %r1, 3;\n match.any.sync.b32 %r3, %r2, -1;\n popc.b32 %r9, %r3;", [8] * 32),
    ("setp.eq.u32 %p1, %r1, 7;\n vote.sync.any.pred %p2, %p1, -1;\n"
     " vote.sync.all.pred %p3, %p1, -1;\n selp.s32 %r2, 1, 0, %p2;\n selp.s32 %r3, 2, 0, %p3;\n"
     " add.s32 %r9, %r2, %r3;", [1] * 32),
    ("redux.sync.add.u32 %r9, %r1, -1;", [sum(range(32))] * 32),
    ("redux.sync.max.u32 %r9, %r1, -1;", [31] * 32),
    # two tiles of 16 lanes, each naming its own lanes in the membermask: each combines its own
    (HALVES + "redux.sync.add.u32 %r9, %r1, %r3;", [120] * 16 + [376] * 16),
    (HALVES + "setp.lt.u32 %p2, %r1, 16;\n vote.sync.all.pred %p3, %p2, %r3;\n"
     " selp.s32 %r9, 1, 0, %p3;", [1] * 16 + [0] * 16),
    (HALVES + "setp.lt.u32 %p2, %r1, 20;\n vote.sync.ballot.b32 %r4, %p2, %r3;\n"
     " popc.b32 %r9, %r4;", [16] * 16 + [4] * 16),
])
def test_warp_wide_operations(body, expected):
    assert list(values(body)) == expected


def test_divergent_paths_reconverge_at_the_post_dominator():
    # lanes < 10 add 100, the others 200, then all lanes meet and store together
    body = """
    setp.lt.u32 %p1, %r1, 10;
    @%p1 bra $L_then;
    add.s32 %r9, %r1, 200;
    bra.uni $L_join;
$L_then:
    add.s32 %r9, %r1, 100;
$L_join:
    """
    kernel = kernel_of(body)
    batches = [b for _, b in kernel.trace(0, 1)]
    assert len(batches) == 1 and batches[0].active.all()
    assert list(values(body)) == [x + (100 if x < 10 else 200) for x in range(32)]


def test_a_block_wide_barrier_reduction_counts_over_every_warp_of_the_block():
    # 2 blocks of 64 threads; bar.red.popc counts the threads with tid < 40 in each block
    body = """
    mov.u32 %r2, %tid.x;
    setp.lt.u32 %p1, %r2, 40;
    bar.red.popc.u32 %r9, 0, %p1;
    """
    kernel = kernel_of(body, block=64, grid=2)
    base = kernel.arrays["out"].address0 + 4096
    for lo in range(4):
        (_, batch), = kernel.trace(lo, lo + 1)
        assert set((batch.address[0] - base).tolist()) == {40}


def test_atomics_combine_every_lane_and_a_later_load_reads_the_sum():
    body = """
    mov.u32 %r2, 1;
    atom.global.add.u32 %r3, [%rd1+16], %r2;
    ld.global.u32 %r9, [%rd1+16];
    """
    kernel = kernel_of(body, arrays={"out": {"dtype": "uint8", "length": 8192,
                                             "values": {"kind": "constant", "value": 0}}})
    base = kernel.arrays["out"].address0 + 4096
    events = list(kernel.trace(0, 1))
    assert [kernel.instructions[k].op for k, _ in events] == ["red", "load", "store"]
    assert set((events[-1][1].address[0] - base).tolist()) == {32}


def test_the_old_value_of_an_atomic_many_lanes_share_is_unknown():
    body = """
    atom.global.add.u32 %r9, [%rd1+16], 1;
    """
    with pytest.raises(PatternError, match="several threads update one address"):
        values(body, arrays={"out": {"dtype": "uint8", "length": 8192,
                                     "values": {"kind": "constant", "value": 0}}})


def test_an_unknown_parameter_in_an_address_asks_for_it():
    with pytest.raises(PatternError, match="kernel parameter 'n'"):
        values("ld.param.u32 %r9, [t_param_1];", params={})


@pytest.mark.parametrize("instruction, why", [
    ("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];", "textures"),
    ("wmma.load.a.sync.aligned.row.m8n8k32.s4 {%r2}, [%rd1];", "wmma shapes and types"),
    ("call.uni (retval0), helper, (param0);", "a call to helper"),
])
def test_refused_instructions_name_their_line_and_text(instruction, why):
    with pytest.raises(PatternError) as err:
        values(instruction + "\n mov.u32 %r9, 0;")
    assert err.value.place == "line 3"
    assert instruction.rstrip(";") in err.value.message and why in err.value.message


def test_an_endless_loop_ends_at_the_work_budget():
    kernel = kernel_of("$L_spin:\n bra.uni $L_spin;\n mov.u32 %r9, 0;")
    with work_budget(Budget(work=10**6)), pytest.raises(PatternError, match="work budget"):
        list(kernel.trace(0, 1))


def test_a_range_of_warps_that_splits_blocks_runs_their_whole_blocks():
    # each thread stores its tid in shared memory, and after the barrier reads the word of
    # thread 63 - tid: warps 1 and 2 (the second of block 0, the first of block 1) see
    # what the other warp of their block stored, as in a run of every warp
    body = """
    .shared .align 4 .b8 s[256];
    mov.u32 %r2, %tid.x;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, s;
    add.s32 %r5, %r4, %r3;
    st.shared.u32 [%r5], %r2;
    bar.sync 0;
    sub.s32 %r6, 252, %r3;
    add.s32 %r7, %r4, %r6;
    ld.shared.u32 %r9, [%r7];
    """
    kernel = kernel_of(body, block=64, grid=2)
    base = kernel.arrays["out"].address0 + 4096
    whole = [b for k, b in kernel.trace(0, 4)][-1]
    part = [b for k, b in kernel.trace(1, 3)][-1]
    assert (part.address == whole.address[1:3]).all()
    assert list(part.address[0] - base) == [31 - lane for lane in range(32)]
    assert list(part.address[1] - base) == [63 - lane for lane in range(32)]


def test_generic_addresses_resolve_to_shared_and_local_memory():
    # a shared word and a local word, each written and read back through generic addresses
    body = """
    .shared .align 4 .b8 s[128];
    .local .align 8 .b8 __local_depot0[16];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
    mov.u64 %rd5, s;
    cvta.shared.u64 %rd6, %rd5;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd6, %rd7;
    st.u32 [%rd8], %r1;
    bar.sync 0;
    xor.b64 %rd9, %rd7, 124;
    add.s64 %rd10, %rd6, %rd9;
    ld.u32 %r2, [%rd10];
    add.u64 %rd11, %SP, 8;
    st.u32 [%rd11], %r2;
    ld.u32 %r9, [%rd11];
    """
    kernel = kernel_of(body)
    spaces = [space for space, _, _ in kernel.events(0, 1)]
    assert spaces == ["shared", "shared", "local", "local", "global"]
    assert [i.ptx for i in kernel.shared_instructions] == ["st.u32", "ld.u32"]
    assert list(values(body)) == [31 - x for x in range(32)]


def test_lanes_that_return_early_take_no_part_in_later_instructions():
    body = """
    setp.ge.u32 %p1, %r1, 20;
    @%p1 ret;
    mov.u32 %r9, %r1;
    """
    assert list(values(body)) == list(range(20)) + [-9999] * 12


FRAME = """
    .local .align 8 .b8 __local_depot0[16];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
"""


def test_a_pointer_kept_in_the_frame_reaches_local_memory_through_its_generic_address():
    # -G keeps a lambda's captured reference (a pointer to the frame's slot 8) at slot 0;
    # the load through the pointer read back from slot 0 reaches local memory
    body = FRAME + """
    add.u64 %rd4, %SP, 8;
    st.u64 [%SP+0], %rd4;
    st.u32 [%SP+8], %r1;
    ld.u64 %rd5, [%SP+0];
    ld.u32 %r9, [%rd5];
    """
    kernel = kernel_of(body)
    assert [space for space, _, _ in kernel.events(0, 1)] == ["local"] * 4 + ["global"]
    assert list(values(body)) == list(range(32))


def test_lanes_of_one_generic_access_in_two_spaces_are_one_refusal():
    # even lanes point at their frame, odd ones at shared memory: one instruction, two spaces
    body = FRAME + """
    .shared .align 4 .b8 s[128];
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    mov.u64 %rd5, s;
    cvta.shared.u64 %rd6, %rd5;
    selp.b64 %rd7, %SP, %rd6, %p1;
    st.u64 [%SP+8], %rd7;
    ld.u64 %rd8, [%SP+8];
    ld.u32 %r9, [%rd8];
    """
    with pytest.raises(PatternError) as err:
        values(body)
    assert "\n" not in err.value.message
    assert "through a generic address" in err.value.message
    assert "counts each instruction in one space" in err.value.message
