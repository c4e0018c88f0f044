"""wmma.load / wmma.store / wmma.mma: each load or store counted as the tile it moves (16
bytes a lane, line after line, one request per 512 bytes), closed forms against the lane
path, a shared-memory tile, a refused shape and `sectorviz report` on a wmma kernel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ptx_helpers import analyze_compiled, assert_same, both, inline_pattern, lines_with, needs_nvcc

from sectorviz.model.errors import PatternError

pytestmark = needs_nvcc

REPO = Path(__file__).resolve().parents[3]

# LeetCUDA's hgemm_wmma_m16n16k16_naive_kernel in our words: a warp per 16 x 16 tile of C
GEMM = """
#include <mma.h>
using namespace nvcuda;
__global__ void hgemm(half* A, half* B, half* C, int M, int N, int K)
{
    const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, half> c;
    wmma::fill_fragment(c, 0.0);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    for (int k = 0; k < K / 16; ++k) {
        wmma::load_matrix_sync(a, A + m0 * K + k * 16, K);
        wmma::load_matrix_sync(b, B + (k * 16) * N + n0, N);
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + m0 * N + n0, c, N, wmma::mem_row_major);
}
"""
M, N, K = 32, 32, 64
GEMM_ARRAYS = {"A": {"dtype": "float16", "length": M * K},
               "B": {"dtype": "float16", "length": K * N},
               "C": {"dtype": "float16", "length": M * N}}
GEMM_PARAMS = {"M": M, "N": N, "K": K}


def _per_array(analysis, kernel) -> dict[str, tuple[int, int]]:
    """array -> (requests, sectors) summed over its instructions."""
    out: dict[str, tuple[int, int]] = {}
    for ins, s in zip(kernel.instructions, analysis.instructions):
        r, c = out.get(ins.array, (0, 0))
        out[ins.array] = (r + s.requests, c + s.sectors)
    return out


def test_a_wmma_gemm_counts_each_tile_as_its_footprint(tmp_path):
    pattern, compiled = inline_pattern(tmp_path, GEMM, "hgemm", GEMM_ARRAYS, GEMM_PARAMS,
                                       grid=(N // 16, M // 16))
    print("\n".join(lines_with(compiled.ptx, "wmma.load", "wmma.store")))
    analysis, kernel = analyze_compiled(pattern, compiled)
    # 4 blocks (one warp each), K / 16 = 4 steps. A tile: 16 rows of 16 halves = 32 B, lda
    # = 64 halves = 128 B apart, each row one aligned sector: 16 sectors, 512 B = 1 request;
    # 4 blocks x 4 steps: 16 requests, 256 sectors. B tile: 16 rows of 32 B, ldb = 32
    # halves = 64 B apart: the same, 16 and 256. C: one 16 x 16 tile per block, ldc = 32:
    # 1 request, 16 sectors per block: 4, 64.
    assert _per_array(analysis, kernel) == {"A": (16, 256), "B": (16, 256), "C": (4, 64)}
    assert any("lane mapping unspecified" in a for a in kernel.assumptions)
    assert "counted as their tiles, in PTX" in kernel.assumptions[0]


def test_the_closed_forms_count_wmma_as_the_lane_path_does(tmp_path):
    pattern, compiled = inline_pattern(tmp_path, GEMM, "hgemm", GEMM_ARRAYS, GEMM_PARAMS,
                                       grid=(N // 16, M // 16))
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps == 4


def test_a_shared_tile_and_a_float_store_in_two_passes(tmp_path):
    code = """
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(const half* A, float* C)
{
    __shared__ __align__(32) half s[256];
    for (int i = threadIdx.x; i < 256; i += 32) s[i] = A[i];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::fill_fragment(c, 0.0f);
    wmma::load_matrix_sync(a, s, 16);
    wmma::load_matrix_sync(b, s, 16);
    wmma::mma_sync(c, a, b, c);
    wmma::store_matrix_sync(C, c, 16, wmma::mem_row_major);
}
"""
    arrays = {"A": {"dtype": "float16", "length": 256}, "C": {"dtype": "float32", "length": 256}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    print("\n".join(lines_with(compiled.ptx, "wmma.load", "wmma.store")))
    analysis, kernel = analyze_compiled(pattern, compiled)
    # each shared load: 16 lines of 32 B packed (stride 16 halves): 512 contiguous bytes, one
    # request, lane L at 16 L: 4 wavefronts of 128 B, no conflicts
    tiles = [(s.requests, s.wavefronts, s.bank_conflicts)
             for ins, s in zip(kernel.shared_instructions, analysis.shared)
             if ins.ptx.startswith("wmma.load")]
    assert tiles == [(1, 4, 0), (1, 4, 0)]
    # the store: 16 rows of 16 floats = 64 B packed, 1024 B: two passes, 32 sectors
    store = [(s.requests, s.sectors) for ins, s in zip(kernel.instructions, analysis.instructions)
             if ins.ptx.startswith("wmma.store")]
    assert store == [(2, 32)]
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps


def test_a_sub_byte_wmma_is_refused_in_one_line(tmp_path):
    code = """
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(const int* a, float* out)
{
    wmma::fragment<wmma::matrix_a, 8, 8, 32, wmma::experimental::precision::s4,
                   wmma::row_major> f;
    wmma::load_matrix_sync(f, a, 32);
    out[threadIdx.x] = f.x[0];
}
"""
    arrays = {"a": {"dtype": "int32", "length": 64}, "out": {"dtype": "float32", "length": 32}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays)
    with pytest.raises(PatternError, match=r"wmma\.load\.a\.sync\.aligned\.row\.m8n8k32\."
                                           r"global\.s4.*wmma shapes and types other than"
                       ) as err:
        analyze_compiled(pattern, compiled)
    assert "\n" not in str(err.value)


def test_sectorviz_report_opens_a_wmma_kernel(tmp_path):
    (tmp_path / "kernel.cu").write_text(GEMM)
    doc = {"format": "sectorviz.pattern/1", "name": "wmma gemm",
           "launch": {"grid": [N // 16, M // 16], "block": [32]},
           "params": GEMM_PARAMS, "arrays": GEMM_ARRAYS,
           "kernel": {"source": "kernel.cu", "function": "hgemm"}}
    path = tmp_path / "gemm.sectorviz.json"
    path.write_text(json.dumps(doc))
    env = dict(os.environ, PYTHONPATH=str(REPO), SECTORVIZ_ENGINE="compiled")
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path)],
                            capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "wmma.load" in result.stdout
    # not in SASS: ptxas splits each wmma load (the report wraps its lines)
    assert "counted in PTX" in " ".join(result.stdout.split())
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path), "--json"],
                            capture_output=True, text=True, cwd=REPO, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["level"] == "ptx"
