"""Shared memory read as written (the debug compile): wavefronts and bank conflicts apart
from global sectors, and a block's __shared__ memory within sm_90's limits (48 KiB of static
variables, 227 KiB with the dynamic region), refused with the figure otherwise. Ported from
the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from oracles import kernel_pattern, shared_per_line

from sectorviz.model import PatternError, analyze, load_pattern
from sectorviz.model.banks import bank_rows
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import examples_dir

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
EXAMPLES = examples_dir()


def waves(code: str, **kw):
    return [(s.line, s.requests, s.wavefronts, s.bank_conflicts, s.max)
            for s in analyze(kernel_pattern(code, **kw)).shared]


@needs_nvcc
@pytest.mark.parametrize("decl, read, ways", [
    ("float s[32][33]", "s[threadIdx.x][0]", 1),   # padded column: conflict-free
    ("float s[32][32]", "s[threadIdx.x][0]", 32),  # column of an unpadded tile: 32-way
    ("float s[64]", "s[2 * threadIdx.x]", 2),      # stride 2 words: 2-way
    ("float s[96]", "s[3 * threadIdx.x]", 1),      # stride 3: conflict-free
    ("float s[32]", "s[0]", 1),                    # broadcast
])
def test_bank_conflicts_of_4_byte_reads(decl, read, ways):
    got = waves(f"""__global__ void k(float* a) {{
        __shared__ {decl};
        a[threadIdx.x] = {read};
    }}""", grid=(2,))
    assert got == [(3, 2, 2 * ways, 2 * (ways - 1), ways)]  # two warps


@needs_nvcc
def test_wide_accesses_are_served_in_phases():
    a = analyze(kernel_pattern("""__global__ void k(float* a) {
        __shared__ double2 v[32];
        __shared__ double d[32];
        double2 x = v[threadIdx.x];
        double y = d[threadIdx.x];
    }"""))
    # -G loads the double2 whole (ld.v4.u32, 16 bytes: four quarter-warp phases) and the
    # double as ld.f64 (8 bytes: two half-warp phases)
    assert shared_per_line(a.shared) == {4: (1, 4), 5: (1, 2)}
    assert [s.bank_conflicts for s in a.shared] == [0, 0]


@needs_nvcc
def test_inactive_warps_make_no_request():
    a = analyze(kernel_pattern("""__global__ void k(float* a) {
        __shared__ float s[256];
        for (int n = 128; n > 0; n >>= 1)
            if (threadIdx.x < n) s[threadIdx.x] = 0;
    }""", block=(256,)))
    assert shared_per_line(a.shared)[4][0] == 4 + 2 + 1 + 1 + 1 + 1 + 1 + 1


@needs_nvcc
def test_tiled_transpose_tile_is_conflict_free():
    stats = analyze(load_pattern(EXAMPLES / "transpose-tiled-cuda.sectorviz.json")).shared
    assert [(s.op, s.requests, s.bank_conflicts) for s in stats] == [
        ("store", 32768, 0), ("load", 32768, 0)]


def test_pattern_files_have_no_shared_instructions():
    assert analyze(load_pattern(EXAMPLES / "vector-add.sectorviz.json")).shared == ()


def test_bank_wavefronts_of_one_row():
    lanes = np.arange(32, dtype=np.int64)[None, :]
    active = np.ones((1, 32), dtype=bool)
    assert bank_rows(lanes * 128, 4, active).wavefronts.tolist() == [32]
    rows = bank_rows(lanes * 16, 16, active)
    assert (rows.wavefronts.tolist(), rows.ideal.tolist(), rows.ways.tolist()) == ([4], [4], [1])


def shared_kernel(decls: str, use: str, **kernel):
    """A kernel declaring `decls` and reading `use` (nvcc leaves a __shared__ variable no
    code uses out of the PTX, so each is read)."""
    return kernel_pattern("__global__ void k(float *a) {\n" + decls +
                          f"    a[threadIdx.x] = {use};\n}}\n", **kernel)


# The interpreter named the declaration (line 2 or 3, its column); the PTX engine names the
# first line that uses such a variable (the store's line, where -G reads them).
@needs_nvcc
@pytest.mark.parametrize("decls, use, message", [
    ("    __shared__ float s[1LL << 38];\n", "s[threadIdx.x]",
     "line 3, column 5: the __shared__ variables total 1,099,511,627,776 bytes; a block's "
     "static shared memory is at most 49,152 (48 KiB)"),
    ("    __shared__ float s[12288];\n    __shared__ char c[1];\n", "s[threadIdx.x] + c[0]",
     "line 4, column 5: the __shared__ variables total 49,153 bytes"),
    ("    __shared__ float s[8192];\n    extern __shared__ float d[];\n", "s[0] + d[0]",
     "line 4, column 5: the block's shared memory totals 233,472 bytes (32,768 static, "
     "200,704 dynamic); sm_90 allows at most 232,448 (227 KiB) per block"),
])
def test_shared_memory_past_the_limits_is_refused(decls, use, message):
    with pytest.raises(PatternError) as info:
        kernel_for(shared_kernel(decls, use, dynamic_shared_bytes=200_704))
    assert str(info.value).startswith(message)


@needs_nvcc
def test_shared_memory_at_the_limits_is_accepted():
    kernel = kernel_for(shared_kernel("    __shared__ float s[12288];\n"
                                      "    extern __shared__ float d[];\n",
                                      "s[threadIdx.x] + d[threadIdx.x]",
                                      dynamic_shared_bytes=227 * 1024 - 48 * 1024))
    layout = kernel.program.layout
    # s (mangled by nvcc: _ZZ1kPfE1s) at 0, its 49,152 bytes; the dynamic d right after
    assert sorted((start, layout.variables[name].size, layout.variables[name].extern)
                  for name, (_, start) in layout.where.items()) == [(0, 49152, False),
                                                                     (49152, 0, True)]
    assert (layout.shared_bytes, layout.dynamic_shared_bytes) == (232448, 183296)
