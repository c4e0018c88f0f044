"""The SASS reading (issue 31): the SASS memory instructions read off `nvdisasm -g -gp`, and
the PTX engine's events carried onto them. Each test prints the listing it derives its
numbers from; the compiled engine is asked explicitly (conftest sets the source engine)."""

from collections import Counter
from pathlib import Path

import pytest
from compiled_helpers import FOUND, needs_nvcc, per_line

import sectorviz.model.one_warp as one_warp
from sectorviz.engine.compiled import sass
from sectorviz.engine.ptx.sass_code import SassOp
from sectorviz.engine.ptx.sass_reading import SassKernel
from sectorviz.model import Pattern, load_pattern
from sectorviz.model.analysis import analyzed
from sectorviz.model.frontend import kernel_for
from sectorviz.model.memo import MEMO
from sectorviz.model.pattern import pattern_from_dict, with_kernel
from sectorviz.model.ptxas_changes import ptx_width

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "resources" / "examples"

LISTING = """\
\t.section\t.text._Z5otherv,"ax",@progbits
        /*0000*/                   LDS R4, [R1] ;
\t.section\t.text._Z4mainPf,"ax",@progbits
\t//## File "/k/a.cu", line 7
\t//## File ".nv_debug_ptx_txt", line 31
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDS.128 R4, [R2+0x10] ;
\t//## File ".nv_debug_ptx_txt.2130650783", line 40
        /*0020*/              @P0 STL [R1+0x1c], R2 ;
        /*0030*/                   LDL.64 R8, [R1] ;
        /*0040*/                   LDG.E.64.CONSTANT R2, desc[UR4][R2.64] ;
"""


def test_the_memory_instructions_of_the_entry_with_their_ptx_lines():
    """ptxas names the embedded PTX `.nv_debug_ptx_txt`, nvJitLink adds a number to it."""
    assert sass.sass_ops(LISTING, "_Z4mainPf") == (
        SassOp(0x10, "LDS.128", 31), SassOp(0x20, "STL", 40, 0x1c), SassOp(0x30, "LDL.64", 40, 0),
        SassOp(0x40, "LDG.E.64.CONSTANT", 40))
    widths = [(op.shown, op.width) for op in sass.sass_ops(LISTING, "_Z4mainPf")]
    assert widths == [("LDS.128", 16), ("STL", 4), ("LDL.64", 8), ("LDG.E.64", 8)]


def test_a_sass_name_keeps_the_source_and_puts_the_opcode_for_the_ptx_operation():
    """Given the PTX name before its copy mark (the SASS rows are numbered afresh)."""
    from sectorviz.engine.ptx.sass_reading import _with_opcode
    assert _with_opcode("line 23: acc += As[ty][k];, ld.shared.f32", "ld.shared.f32",
                        "LDS.128") == "line 23: acc += As[ty][k];, LDS.128"
    assert _with_opcode("vadd.cu line 4: ld.global.f32", "ld.global.f32", "LDG.E") == \
        "vadd.cu line 4: LDG.E"


def test_sass_copies_of_several_ptx_instructions_carry_one_copy_mark():
    """Two PTX loads of one line (1 of 2, 2 of 2 in the PTX), each unrolled into 2 SASS
    copies: four rows (1 of 4) to (4 of 4), in PTX order, copies together."""
    from sectorviz.engine.ptx.kernel import unique_names
    from sectorviz.engine.ptx.sass_reading import _with_opcode
    from sectorviz.model.kernel import Instruction
    bare = "line 18: tl.load(x_ptr + cols), ld.global.v4.b32"
    rows = [Instruction(_with_opcode(bare, "ld.global.v4.b32", "LDG.E.128"), "load", "x", 16)
            for _ in range(4)]
    assert [r.name for r in unique_names(rows)] == [
        f"line 18: tl.load(x_ptr + cols), LDG.E.128 ({k} of 4)" for k in range(1, 5)]


def test_the_cache_form_round_trips():
    code = sass.SassCode("ptxas 13.0 for sm_90", sass.sass_ops(LISTING, "_Z4mainPf"))
    assert sass.code_from_json(sass.code_json(code)) == code


def test_constant_memory_no_gpu_has_is_not_assembled():
    """Issue 28: ptxas would allocate a 3.4 GB __constant__ array before the model refuses
    it; no SASS is made (no tool is looked for)."""
    ptx = ".const .align 4 .b8 small[4096];\n.const .align 4 .f32 big[850000000];\n"
    assert sass.constant_bytes(ptx) == 4096 + 3_400_000_000
    assert sass.machine_code(ptx, "k", "sm_90", None) is None  # type: ignore[arg-type]


def _levels(pattern: Pattern) -> tuple:
    """(kernel, analysis) counted in SASS, then in PTX, by the compiled engine."""
    out = []
    for level in ("sass", "ptx"):
        asked = with_kernel(pattern, "test", engine="compiled", level=level)
        out += [kernel_for(asked), analyzed(asked)]
    if not isinstance(out[0], SassKernel):
        pytest.skip("no ptxas and nvdisasm beside this nvcc")
    print("\n".join(f"{op.offset:#06x} {op.opcode} <- PTX line {op.ptx_line}"
                    for op in out[0].code.ops))
    return tuple(out)


def _inline(code: str, function: str, **kernel: object) -> Pattern:
    doc = {"format": "sectorviz.pattern/1", "name": function, "params": {"n": 100},
           "launch": {"grid": [1], "block": [32]},
           "arrays": {"x": {"dtype": "float32", "shape": [1, 8192]},
                      "y": {"dtype": "float32", "shape": [1, 8192]}},
           "kernel": {"code": code, "function": function, **kernel}}
    return pattern_from_dict(doc, "/tmp")


@needs_nvcc
def test_the_tiled_matmul_row_of_as_loads_is_read_as_128_bit_loads():
    """matmul-tiled-cuda: 16x16 tiles, n = 256: 256 blocks of 8 warps, 16 tile steps. Per
    step a warp's 16 As[ty][k] ld.shared.f32 (k = 0..15, 4 bytes apart) become 4 LDS.128
    (the listing), the 16 Bs[k][tx] stay LDS. PTX: 2,048 warps x 16 steps x 16 = 524,288 As
    requests; SASS: x 4 = 131,072 LDS.128 requests. A warp holds rows ty, ty + 1; each
    quarter-warp phase (8 lanes of one row) reads one row's same 16 bytes: 4 words in 4 banks,
    1 wavefront, so 4 per request: 524,288 wavefronts, as the PTX's 524,288 loads take 1
    each (the two rows' words are 64 bytes apart: other banks)."""
    kernel, sass_run, _, ptx_run = _levels(load_pattern(EXAMPLES /
                                                        "matmul-tiled-cuda.sectorviz.json"))
    wide = [s for s in sass_run.shared if s.sass == "LDS.128"]
    assert sum(s.requests for s in wide) == 131_072
    assert sum(s.wavefronts for s in wide) == 524_288
    assert all(s.width == 16 and s.name.startswith("line 26: ") and
               s.name.split(", ")[-1].startswith("LDS.128") for s in wide)
    as_loads = [s for s in ptx_run.shared if s.op == "load" and s.array == "As"]
    assert sum(s.requests for s in as_loads) == 524_288
    assert sum(s.requests for s in sass_run.shared if s.sass == "LDS") == 524_288  # Bs
    assert any("ptxas merged 4 loads of As into one 128-bit load" in a
               for a in kernel.assumptions)
    assert sass_run.totals == ptx_run.totals  # global side: one to one


@needs_nvcc
@pytest.mark.parametrize("example", ["float4-copy-cuda", "transpose-tiled-cuda",
                                     "transpose-naive-cuda", "vector-add-cuda"])
def test_one_to_one_kernels_read_the_same_in_sass(example):
    """Every SASS memory instruction of these carries one PTX instruction of its width: the
    same requests, sectors and wavefronts, instruction by instruction."""
    _, sass_run, _, ptx_run = _levels(load_pattern(EXAMPLES / f"{example}.sectorviz.json"))
    for a, b in ((sass_run.instructions, ptx_run.instructions),
                 (sass_run.shared, ptx_run.shared)):
        assert [(s.requests, s.width) for s in a] == [(s.requests, s.width) for s in b]
    assert sass_run.totals == ptx_run.totals and sass_run.shared_totals == ptx_run.shared_totals
    assert all(s.sass is not None for s in sass_run.instructions)


PAIR = """\
__global__ void pair(float* y)
{
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = t; s[t + 32] = t; s[t + 64] = t; s[t + 96] = t;
    __syncthreads();
    y[t] = s[4 * t] + s[4 * t + 1];
}
"""


@needs_nvcc
def test_a_64_bit_shared_load_whose_halves_conflict():
    """s[4t] and s[4t + 1] become one LDS.64 at byte 16t. PTX: two 4-byte loads, lane t at
    word 4t: banks 4t mod 32 repeat every 8 lanes, 4 lanes a bank: 4 wavefronts each, 8 in 2
    requests. SASS: 1 request in two half-warp phases; lanes t and t + 8 of a phase share
    banks 4t and 4t + 1: 2 words a bank, 2 wavefronts a phase, 4 in all."""
    _, sass_run, _, ptx_run = _levels(_inline(PAIR, "pair"))
    loads = [(s.sass, s.requests, s.wavefronts) for s in sass_run.shared if s.op == "load"]
    assert loads == [("LDS.64", 1, 4)]
    assert [(s.requests, s.wavefronts) for s in ptx_run.shared if s.op == "load"] == \
        [(1, 4), (1, 4)]


DIVERGE = """\
__global__ void diverge(const float* x, float* y, int n)
{
    int j = threadIdx.x;
    float acc = 0.0f;
    while (j < n) { acc += x[j]; j += 37; }
    y[threadIdx.x] = acc;
}
"""


@needs_nvcc
def test_a_divergent_loop_ptxas_unrolled_further_keeps_the_ptx_count():
    """n = 100, 32 lanes: lane j runs 3 iterations (j, j + 37, j + 74 < 100) for j < 26, else
    2; nvcc unrolled by 4 with a remainder (5 ld.global.f32), ptxas further (more LDG copies
    of one PTX line, the listing): counted as in the PTX, on the first copy, and said."""
    kernel, sass_run, _, ptx_run = _levels(_inline(DIVERGE, "diverge", flags=[]))
    assert [(s.requests, s.sectors) for s in sass_run.instructions] == \
        [(s.requests, s.sectors) for s in ptx_run.instructions]
    copies = sum(op.name == "LDG" for op in kernel.code.ops)
    assert copies > len(ptx_run.instructions) - 1  # the loads: all but the one store
    assert f"line 5: ptxas unrolled a divergent loop further: {len(ptx_run.instructions) - 1} " \
           f"ld.global.f32 in the PTX, {copies} LDG.E in the SASS; counted as in the PTX (its " \
           "lanes may group into requests differently)." in kernel.assumptions


SPILL = """\
__global__ void spill(const float* x, float* y, int n)
{
    float r[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 48; ++k)
        r[k] = x[i + k * n];
    float acc = 0.0f;
    for (int k = 0; k < 48; ++k)
        acc += r[k] * r[47 - k] + r[(k * 7) % 48];
    y[i] = acc;
}
"""


@needs_nvcc
def test_registers_ptxas_spills_are_counted_as_local_traffic():
    """-maxrregcount=24: ptxas spills (STL/LDL at [R1+off] with no PTX local counterpart).
    One warp of 32 active lanes: a 32-bit spill is one request of 4 sectors (32 lanes x 4
    bytes, consecutive per lane), a 64-bit one 8, a 128-bit one 16."""
    kernel, sass_run, _, ptx_run = _levels(_inline(SPILL, "spill",
                                                   flags=["-maxrregcount=24"]))
    spills = [s for s in sass_run.local if "register spill" in s.name]
    assert not ptx_run.local  # nvcc kept r[] in registers: every LDL/STL is a spill
    assert len(spills) == sum(op.name in ("LDL", "STL") for op in kernel.code.ops) > 0
    assert all(s.requests == 1 and s.sectors == s.width for s in spills)
    assert any(a.startswith("ptxas spilled registers: ") for a in kernel.assumptions)
    assert sass_run.totals == ptx_run.totals


SPILL_LOOP = """\
__global__ void spill_loop(const float* x, float* y, int n)
{
    float r[48];
    int i = threadIdx.x;
#pragma unroll
    for (int k = 0; k < 48; ++k)
        r[k] = x[i + 32 * k];
#pragma unroll 1
    for (int t = 0; t < 4; ++t) {
        float v = x[i + 32 * t];
        if (i % 3 == 0) {
#pragma unroll
            for (int k = 0; k < 48; ++k)
                r[k] = r[k] * r[(k * 5) % 48] + v;
        }
#pragma unroll
        for (int k = 0; k < 48; ++k)
            r[k] = r[k] * v + r[(k * 7) % 48];
    }
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 48; ++k)
        acc += r[k] * r[47 - k];
    y[i] = acc;
}
"""
# SPILL_LOOP's PTX blocks: (executions, active lanes) of one warp of 32 lanes
RUNS = {"entry": (1, 32), "head": (4, 32), "arm": (4, 11), "join": (4, 32), "tail": (1, 32)}
# sectors of one request of a spill of `width` bytes by `lanes` lanes, lane L at L g bytes
# (g = max(4, width)): 32 lanes cover 32 g contiguous bytes, g sectors; lanes 0, 3, .., 30
# start at 12 j, 24 j, 48 j (j = 0..10): 4 bytes all 4 sectors of [0, 128); 8 bytes sectors
# 0,0,1,2,3,3,4,5,6,6,7 (8); 16 bytes sectors 0,1,3,4,6,7,9,10,12,13,15 (11)
SECTORS = {(4, 32): 4, (8, 32): 8, (16, 32): 16, (4, 11): 4, (8, 11): 8, (16, 11): 11}


def _blocks_of(ptx: str) -> dict[int, str]:
    """SPILL_LOOP's PTX line -> the block of the first instruction at or after it: "entry"
    up to the first label (the loop head), "head" to the branch over the arm, "arm" to the
    second label (the join), "join" to the branch back to the head, "tail" after it."""
    block, following, found = "entry", {"head": "arm", "join": "tail"}, {}
    lines = ptx.splitlines()
    for number, text in enumerate(lines, 1):
        words = text.split()
        if text.strip().startswith("$L") and text.strip().endswith(":"):
            block = "head" if block == "entry" else "join"
        elif words and text.strip().endswith(";") and not words[0].startswith((".", "//")):
            found[number] = block
            if any(word.split(".")[0] == "bra" for word in words[:2]):
                block = following.get(block, block)
    ahead, out = "tail", {}
    for number in reversed(range(1, len(lines) + 1)):
        ahead = out[number] = found.get(number, ahead)
    return out


@needs_nvcc
def test_spills_in_blocks_without_memory_access_run_with_their_blocks():
    """-maxrregcount=24, one warp: the loop (4 iterations, every lane) holds x's load
    (head), the arm of `i % 3 == 0` (lanes 0, 3, .., 30: 11) and the join after it; the arm
    and the join are arithmetic only. Each spill runs with its PTX block (the block of its
    PTX line, read from the printed PTX): one request per execution of the block (RUNS),
    with its lanes, SECTORS per request."""
    kernel, sass_run, _, ptx_run = _levels(_inline(SPILL_LOOP, "spill_loop",
                                                   flags=["-maxrregcount=24"]))
    block_at = _blocks_of(kernel.compiled.ptx)
    ops = {op.offset: op for op in kernel.code.ops}
    print("\n".join(f"PTX line {n}: {t.strip()}" for n, t in
                    enumerate(kernel.compiled.ptx.splitlines(), 1) if "bra" in t or "$L" in t))
    spills = [s for s in sass_run.local if "register spill" in s.name]
    assert not ptx_run.local
    assert len(spills) == sum(op.name in ("LDL", "STL") for op in kernel.code.ops)
    placed: Counter = Counter()
    for s in spills:
        block = block_at[ops[s.sass_offset].ptx_line]
        placed[block] += 1
        runs, lanes = RUNS[block]
        assert (s.requests, s.active_lanes, s.sectors) == \
            (runs, runs * lanes, runs * SECTORS[(s.width, lanes)]), (s.name, block)
    print(placed)
    assert placed["arm"] > 0 and placed["join"] > 0  # the case: no memory access in the PTX
    assert kernel.marks and not kernel.ptx_level().marks  # the PTX level runs no marks
    assert f"ptxas spilled registers: {len(spills)} local instructions (LDL/STL) the PTX " \
           "does not have, each run whenever its PTX basic block runs, with the lanes that " \
           "run it." in kernel.assumptions


def test_no_assembler_means_the_ptx_is_counted(monkeypatch):
    """Where ptxas or nvdisasm is missing, the reading says PTX."""
    if FOUND is None:
        pytest.skip("no compiler")
    monkeypatch.setattr(sass, "assembler_tools", lambda toolchain: None)
    from sectorviz.engine.readings import kernel_reading
    pattern = _inline(PAIR, "pair", engine="compiled")
    assert kernel_reading(pattern).level == "ptx"
    assert kernel_reading(pattern).words.endswith(", counted in PTX")


@needs_nvcc
def test_what_ptxas_did_is_said_in_words_and_numbers():
    """matmul-tiled-cuda's line 26 (the numbers of the merged-loads test): PTX 524,288 As +
    524,288 Bs = 1,048,576 requests; SASS 131,072 LDS.128 + 524,288 LDS = 655,360: 393,216
    fewer; each As load took 1 wavefront, each LDS.128 4: the same wavefronts."""
    from sectorviz.model.compiler_changes import compiler_changes
    pattern = with_kernel(load_pattern(EXAMPLES / "matmul-tiled-cuda.sectorviz.json"), "test",
                          engine="compiled", level="sass")
    if not isinstance(kernel_for(pattern), SassKernel):
        pytest.skip("no ptxas and nvdisasm beside this nvcc")
    changes = compiler_changes(pattern)
    assert changes is not None
    said = [c.words for c in changes.changes if c.kind == "ptxas merged"]
    assert said == ["ptxas merged 4 loads of As into one 128-bit load (LDS.128): 393,216 "
                    "requests fewer (655,360 instead of 1,048,576; the same wavefronts)"]


@needs_nvcc
@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*-cuda.sectorviz.json")),
                         ids=lambda p: p.name.split(".")[0])
def test_every_example_reads_the_same_in_sass_where_the_sass_has_the_same_accesses(example):
    """Per source line, space and op: the SASS reading's figures are the PTX reading's, but
    on the lines where ptxas widened an access (a SASS row wider than its PTX operation)."""
    _, sass_run, _, ptx_run = _levels(load_pattern(example))
    widened = {(space, r.line, r.op) for space, rows in (("global", sass_run.instructions),
                                                         ("shared", sass_run.shared))
               for r in rows if r.width > ptx_width(r.ptx)}
    a, b = per_line(sass_run), per_line(ptx_run)
    differ = {k[:3] for k in set(a) | set(b) if a[k] != b[k]}
    assert differ <= widened, (differ, widened)
    if example.name.startswith("matmul-tiled"):
        assert widened == {("shared", 26, "load")}


@needs_nvcc
def test_the_headline_names_the_merged_loads_and_counts_the_128_bit_requests(capsys):
    """The sheet's answer: matmul-tiled-cuda's 131,072 LDS.128 requests (the merged-loads
    test), and the header says the level."""
    from sectorviz.cli import main
    example = str(EXAMPLES / "matmul-tiled-cuda.sectorviz.json")
    assert main(["report", example, "--engine", "compiled", "--level", "sass"]) == 0
    out = capsys.readouterr().out
    if "counted in SASS" not in out:
        pytest.skip("no ptxas and nvdisasm beside this nvcc")
    head = out[:out.index("1. Memory operations")]
    assert "ptxas merged line 26: As, 131,072 LDS.128 requests (4 PTX accesses merged into " \
           "each 128-bit one)" in head
    assert f"counted in SASS: ptxas {FOUND.version} for sm_90" in " ".join(head.split())


def test_nvjitlink_assembles_where_there_is_no_ptxas():
    """Without a toolkit (no toolchain named), NVIDIA's nvJitLink wheel makes the cubin: each
    SASS memory instruction still names a PTX line holding a memory instruction."""
    if FOUND is None or sass.find_jitlink() is None:
        pytest.skip("no compiler or no nvJitLink wheel")
    from sectorviz.engine.compiled.compile import compile_kernel
    compiled = compile_kernel(_inline(PAIR, "pair"))
    code = sass.machine_code(compiled.ptx, compiled.entry, "sm_90", None)
    assert code is not None and code.assembler.startswith("nvJitLink ")
    lines = compiled.ptx.splitlines()
    print("\n".join(f"{op.opcode} <- {lines[op.ptx_line - 1].strip()}" for op in code.ops))
    assert {op.name for op in code.ops} == {"STS", "LDS", "STG"}
    assert all(lines[op.ptx_line - 1].split()[0].startswith(("ld.", "st."))
               for op in code.ops)




def _same_details_in_sass(pattern: Pattern, warps: tuple[int, ...], monkeypatch) -> None:
    """Every SASS row's executions of each of `warps` (sectors and addresses; shared
    wavefronts) come alike from the closed forms (which run) and from the lane path."""
    kernel = kernel_for(pattern)
    if not isinstance(kernel, SassKernel):
        pytest.skip("no ptxas and nvdisasm beside this nvcc")

    def executions(warp: int) -> tuple[list[list[tuple]], list[list[int]]]:
        MEMO.clear()
        detail = one_warp.warp_detail(pattern, warp)
        shared = one_warp.shared_warp_detail(pattern, warp)
        return ([[(int(e.sectors), e.address.tolist()) for e in run]
                 for run in detail.executions], [list(w) for w in shared.wavefronts])

    for warp in warps:
        assert kernel.warp_closed(warp, pattern.sector_bytes) is not None
        closed = executions(warp)
        monkeypatch.setenv("SECTORVIZ_LANE_PATH", "1")
        lanes = executions(warp)
        monkeypatch.delenv("SECTORVIZ_LANE_PATH")
        assert closed == lanes
        assert any(closed[1])  # shared rows ran


@needs_nvcc
def test_one_warps_details_in_sass_come_from_the_closed_forms_on_the_sass_rows(tmp_path,
                                                                              monkeypatch):
    """The 2-D blocktiling SGEMM stand-in at n = 128 in SASS: ptxas merges 6 of its
    ld.shared.f32 into wider LDS (their PTX sites have no row), so the PTX sites and the SASS
    rows are numbered apart; one warp's closed forms (warp_closed) are carried onto the SASS
    rows, and warps 0 and 7 read alike from them and from the lane path."""
    function = "gemmTiles2D<128, 128, 8, 8, 8>"
    code = (ROOT / "benchmarks" / "kernels" / "sgemm.cu").read_text() + (
        f"\ntemplate __global__ void {function}(int, int, int, float, const float*, "
        "const float*, float, float*);\n")
    (tmp_path / "sgemm.cu").write_text(code)
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "2-D tiles", "launch": {
            "grid": [1, 1], "block": [256, 1]},
        "params": {"n": 128, "M": 128, "N": 128, "K": 128},
        "arrays": {"A": square, "B": square, "C": square},
        "kernel": {"source": "sgemm.cu", "function": function, "engine": "compiled",
                   "level": "sass"}}, tmp_path)
    _same_details_in_sass(pattern, (0, 7), monkeypatch)
    assert any(not rows for rows in kernel_for(pattern).plan.routes.values())  # merged


@needs_nvcc
def test_a_warps_share_of_a_loop_ptxas_unrolled_is_each_copys_own_run(monkeypatch):
    """matmul-tiled-cuda in SASS: ptxas unrolls the tile loop's loads into 7 copies, which
    share its 16 iterations 3, 3, 2, 2, 2, 2, 2 (copy r: iterations r, r + 7, ...); one
    warp's details give each copy its own, as the lane path does."""
    pattern = with_kernel(load_pattern(EXAMPLES / "matmul-tiled-cuda.sectorviz.json"), "test",
                          engine="compiled", level="sass")
    _same_details_in_sass(pattern, (0, 5), monkeypatch)
    kernel = kernel_for(pattern)
    first = kernel.plan.routes[("global", 0)]
    assert len(first) == 7
    MEMO.clear()
    detail = one_warp.warp_detail(pattern, 0)
    assert [len(detail.executions[row]) for row in first] == [3, 3, 2, 2, 2, 2, 2]
