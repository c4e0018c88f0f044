"""The as-written reading's frame slots (sites.py, pointers.py): a -G compile keeps a variable
whose address is taken (or an object a callee is given) in its stack frame at a fixed offset,
where the source keeps it in a register; those accesses run (their values are stored and read
back) but are left out of the counts, and the reading says so. Per-thread arrays indexed at
run time stay local memory. The default reading counts every local access."""

from __future__ import annotations

from dataclasses import replace

from ptx_helpers import DEBUG_FLAGS, analyze_compiled, inline_pattern, needs_nvcc, ptx_pattern

from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.engine.ptx.parse import Operand

ARRAYS = {"a": {"dtype": "float32", "length": 4096},
          "out": {"dtype": "float32", "length": 4096}}
SCALAR_AND_ARRAY = """
__device__ void bump(int &x, int by) { x += by; }
__global__ void k(const float* a, float* out, int n) {
    int x = threadIdx.x;
    bump(x, 3);
    float v[4];
    for (int j = 0; j < 4; j++) v[j] = a[threadIdx.x + 32 * j];
    out[x] = v[threadIdx.x % 4];
}
"""


@needs_nvcc
def test_frame_slots_are_left_out_of_the_as_written_reading(tmp_path):
    pattern, debug = inline_pattern(tmp_path, SCALAR_AND_ARRAY, "k", ARRAYS, {"n": 32},
                                     flags=DEBUG_FLAGS)
    written, kernel = analyze_compiled(pattern, replace(debug, as_written=True))
    # a[t + 32 j], j = 0..3: 4 requests of 4 sectors; out[t + 3]: bytes 12..139, sectors 0-4
    assert [(s.op, s.requests, s.sectors) for s in written.instructions] == \
        [("load", 4, 16), ("store", 1, 5)]
    # v[j] = ...: 4 stores, every lane at one offset of its frame: 32 interleaved words,
    # 128 bytes, 4 sectors each; v[t % 4]: lane L reads word w0 + L % 4, the 8 lanes of
    # each word spread over its 128-byte row: 4 rows of 4 sectors
    assert [(s.op, s.requests, s.sectors) for s in written.local] == \
        [("store", 4, 16), ("load", 1, 16)]
    # left out: x's slot at [%SP+0] (st x = t, ld x for out[x]) and bump's ld / st of it
    # through the address it was given
    assert sum(site.slot for site in kernel.sites) == 4
    assert any(a.startswith("As written: 4 local memory instructions of variables -G keeps "
                            "in its stack frame") and a.endswith("registers.")
               for a in kernel.assumptions)
    # the same PTX read as compiled code (not the as-written reading) counts them all
    counted, kernel = analyze_compiled(pattern, debug)
    assert counted.instructions == written.instructions
    assert len(counted.local) == 6 and not any(site.slot for site in kernel.sites)
    assert not any(a.startswith("As written") for a in kernel.assumptions)


FRAME_PTX = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry t(.param .u64 t_param_0)
{
    .local .align 4 .b8 __local_depot0[64];
    .reg .b64 %SP;
    .reg .b64 %SPL;
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;
    .reg .pred %p<2>;
    mov.u64 %SPL, __local_depot0;
    cvta.local.u64 %SP, %SPL;
    mov.u32 %r1, %tid.x;
    add.u64 %rd2, %SP, 8;
    st.u64 [%SP+0], %rd2;
    ld.u64 %rd3, [%SP+0];
    st.u32 [%rd3+4], %r1;
    mul.wide.u32 %rd4, %r1, 4;
    add.u64 %rd5, %SP, 16;
    add.s64 %rd6, %rd5, %rd4;
    st.u32 [%rd6], %r1;
    mov.u32 %r2, 0;
$L_loop:
    add.u64 %rd5, %rd5, 4;
    st.u32 [%rd5], %r2;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 4;
    @%p1 bra $L_loop;
    ret;
}
"""


def test_a_frame_slot_is_one_variable_at_one_offset_on_every_execution():
    pattern, compiled = ptx_pattern(FRAME_PTX, "t", ("a",), {"a": ARRAYS["a"]})
    prog = CompiledKernel(pattern, replace(compiled, as_written=True)).program

    def slot(base: str, offset: int = 0):
        return prog.frame_slot(Operand("addr", base, offset=offset))

    # %SP + 0 and the pointer to byte 8 stored there and read back (+4): one slot each
    assert slot("%SP") == ("__local_depot0", 0)
    assert slot("%rd3", 4) == ("__local_depot0", 12)
    # indexed by the thread (%SP + 16 + 4 t), or stepped in a loop: not a slot
    assert slot("%rd6") is None
    assert slot("%rd5") is None
    # the loop's pointer has more offsets than MAX_OFFSETS after widening: any offset
    assert ("__local_depot0", None) in prog.places["%rd5"]
