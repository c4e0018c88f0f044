"""The machine-code check: each source line's memory instructions counted in the PTX and in
the SASS ptxas makes of it (nvdisasm -g); the lines where they differ are stated."""

import subprocess
from pathlib import Path

import pytest
from compiled_helpers import FOUND, needs_nvcc

from sectorviz.compiled import sass
from sectorviz.model.ptx.kernel import machine_code_note

ROOT = Path(__file__).resolve().parents[2]

PTX = """\
\t.file\t1 "/k/a.cu"
\t.loc\t1 7 3
\tld.param.u64 \t%rd1, [p0];
\tld.global.nc.f32 \t%f1, [%rd1];
\tld.shared.v4.f32 \t{%f2, %f3, %f4, %f5}, [%r1];
\t.loc\t1 8 3
\t@%p1 st.global.f32 \t[%rd2], %f1;
\tcp.async.ca.shared.global [%r2], [%rd3], 16;
\tatom.global.add.u32 \t%r3, [%rd4], 1;
\tld.f32 \t%f6, [%rd5];
"""

SASS = """\
\t//## File "/k/a.cu", line 7
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E.CONSTANT R2, desc[UR4][R2.64] ;
        /*0020*/                   LDS.128 R4, [R1] ;
\t//## File "/k/a.cu", line 8
        /*0030*/              @P0 STG.E desc[UR4][R6.64], R2 ;
        /*0040*/                   STG.E desc[UR4][R8.64], R2 ;
        /*0050*/                   LDGSTS.E.BYPASS.128 [R3], desc[UR4][R4.64] ;
        /*0060*/                   ATOMG.E.ADD.STRONG.GPU PT, R9, desc[UR4][R4.64], R9 ;
        /*0070*/                   LD.E R10, desc[UR4][R10.64] ;
"""


def test_ptx_memory_instructions_per_line_space_and_kind():
    assert sass.ptx_counts(PTX) == {
        ("/k/a.cu", 7, "global", "load"): 1, ("/k/a.cu", 7, "shared", "load"): 1,
        ("/k/a.cu", 8, "global", "store"): 1, ("/k/a.cu", 8, "global", "load"): 1,
        ("/k/a.cu", 8, "shared", "store"): 1, ("/k/a.cu", 8, "global", "atomic"): 1,
        ("/k/a.cu", 8, "generic", "load"): 1}  # ld.param is no memory traffic here


def test_sass_memory_instructions_per_line_and_the_wide_ones():
    counts, wide = sass.sass_counts(SASS)
    assert counts == {
        ("/k/a.cu", 7, "global", "load"): 1, ("/k/a.cu", 7, "shared", "load"): 1,
        ("/k/a.cu", 8, "global", "store"): 2, ("/k/a.cu", 8, "global", "load"): 1,
        ("/k/a.cu", 8, "shared", "store"): 1, ("/k/a.cu", 8, "global", "atomic"): 1,
        ("/k/a.cu", 8, "generic", "load"): 1}
    assert wide == {("/k/a.cu", 7, "shared", "load"): 1, ("/k/a.cu", 8, "global", "load"): 1,
                    ("/k/a.cu", 8, "shared", "store"): 1}


def test_only_the_lines_that_differ_are_named():
    changes = sass.line_changes(PTX, SASS)
    assert changes == [sass.LineChange("/k/a.cu", 8, "global", "store", 1, 2, 0)]
    assert changes[0].words == ("a.cu line 8: 1 global store in the PTX, 2 in the SASS "
                                "(more copies: unrolled further)")


def test_what_ptxas_did_as_far_as_static_counts_tell():
    merged = sass.LineChange("/k/m.cu", 33, "shared", "load", 64, 40, 8)
    assert merged.words == ("m.cu line 33: 64 shared loads in the PTX, 40 in the SASS, 8 of "
                            "them 64- or 128-bit (merged into vector accesses: fewer, wider "
                            "requests)")
    assert sass.LineChange("f", 1, "global", "load", 2, 0, 0).what == "removed"
    assert sass.LineChange("f", 1, "global", "load", 3, 2, 0).what == "fewer: combined or removed"
    assert sass.notes([merged] * 8)[-1] == "2 more" and len(sass.notes([merged] * 8)) == 7


def test_the_assumption_says_what_was_checked():
    assert machine_code_note(None) == ("The SASS ptxas makes was not checked here (no ptxas "
                                       "and nvdisasm).")
    assert machine_code_note(()).startswith("ptxas keeps every line's memory instructions")
    assert machine_code_note(("a.cu line 8: x",)).endswith(
        "(static instructions, SASS checked with nvdisasm): a.cu line 8: x.")


@needs_nvcc
def test_ptxas_merges_the_tiled_matmul_row_of_shared_loads(tmp_path):
    """matmulTiled's inner product (line 33): nvcc unrolls it fully into 64 ld.shared.f32 (32
    of As, 32 of Bs); ptxas reads the As row, contiguous per thread, as LDS.128."""
    tools = sass.assembler_tools(FOUND)
    if tools is None:
        pytest.skip("no ptxas or nvdisasm beside this nvcc or in the nvidia wheels")
    source = ROOT / "benchmarks" / "kernels" / "matmul.cu"
    ptx = subprocess.run([FOUND.path, "-ptx", "-lineinfo", "-O3", "-arch=sm_90", str(source),
                          "-o", "-"], capture_output=True, text=True, check=True).stdout
    at_33 = [c for c in sass.line_changes(ptx, sass.disassembled(ptx, "sm_90", tools))
             if c.line == 33 and c.space == "shared"]
    assert len(at_33) == 1, at_33
    change = at_33[0]
    assert change.ptx == 64 and 0 < change.wide and change.sass < change.ptx, change


def test_constant_memory_no_gpu_has_is_not_assembled():
    """Issue 28: ptxas would allocate a 3.4 GB __constant__ array before the model refuses
    it; the machine code is then not checked."""
    ptx = ".const .align 4 .b8 small[4096];\n.const .align 4 .f32 big[850000000];\n"
    assert sass.constant_bytes(ptx) == 4096 + 3_400_000_000
    assert sass.machine_code_notes(ptx, "sm_90", None) is None  # no tool is looked for
