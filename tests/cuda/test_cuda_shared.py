"""Shared-memory accesses: wavefronts and bank conflicts, apart from global sectors."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_helpers import kernel_pattern

from sectorviz.cuda.shared import shared_analysis
from sectorviz.model import load_pattern
from sectorviz.model.banks import bank_rows
from sectorviz.paths import examples_dir

EXAMPLES = examples_dir()


def waves(code: str, **kw):
    return [(s.source, s.requests, s.wavefronts, s.bank_conflicts, s.max)
            for s in shared_analysis(kernel_pattern(code, **kw))]


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
    assert got == [(read, 2, 2 * ways, 2 * (ways - 1), ways)]  # two warps


def test_wide_accesses_are_served_in_phases():
    got = waves("""__global__ void k(float* a) {
        __shared__ double2 v[32];
        __shared__ double d[32];
        double2 x = v[threadIdx.x];
        double y = d[threadIdx.x];
    }""")
    assert [(w, c) for _, _, w, c, _ in got] == [(4, 0), (2, 0)]


def test_inactive_warps_make_no_request():
    got = waves("""__global__ void k(float* a) {
        __shared__ float s[256];
        for (int n = 128; n > 0; n >>= 1)
            if (threadIdx.x < n) s[threadIdx.x] = 0;
    }""", block=(256,))
    assert got[0][1] == 4 + 2 + 1 + 1 + 1 + 1 + 1 + 1


def test_tiled_transpose_tile_is_conflict_free():
    stats = shared_analysis(load_pattern(EXAMPLES / "transpose-tiled-cuda.sectorviz.json"))
    assert [(s.op, s.requests, s.bank_conflicts) for s in stats] == [
        ("store", 32768, 0), ("load", 32768, 0)]


def test_pattern_files_have_no_shared_instructions():
    assert shared_analysis(load_pattern(EXAMPLES / "vector-add.sectorviz.json")) == ()


def test_bank_wavefronts_of_one_row():
    lanes = np.arange(32, dtype=np.int64)[None, :]
    active = np.ones((1, 32), dtype=bool)
    assert bank_rows(lanes * 128, 4, active).wavefronts.tolist() == [32]
    rows = bank_rows(lanes * 16, 16, active)
    assert (rows.wavefronts.tolist(), rows.ideal.tolist(), rows.ways.tolist()) == ([4], [4], [1])
