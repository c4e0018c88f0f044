"""One warp's details from the closed forms (CompiledKernel.warp_closed, model/closed_runs.py)
against the lane path's listing of the same warp: every execution's lanes, addresses,
elements and sectors, every shared execution and its wavefronts, and the sums, on the
benchmark's SGEMM stand-ins and a CUDA example; each comparison checks that the closed forms
ran (else the lane path would be compared with itself)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptx_helpers import compiled_for_file, inline_pattern, lane_path, needs_nvcc

import sectorviz.model.closed_runs as closed_runs
import sectorviz.model.one_warp as one_warp
from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model import load_pattern
from sectorviz.model.memo import MEMO
from sectorviz.scene.grid import run_totals

ROOT = Path(__file__).resolve().parents[3]
SGEMM = ROOT / "benchmarks" / "kernels" / "sgemm.cu"
PARAMS = "(int, int, int, float, const float*, const float*, float, float*)"
# (instantiation, M = N = K, grid, block): one or a few blocks of each launch shape
STAND_INS = [("gemmNaive", 64, (2, 2), (32, 32)),
             ("gemmCoalesced<32>", 64, (2, 2), (1024,)),
             ("gemmShared<32>", 64, (2, 2), (1024,)),
             ("gemmTiles1D<64, 64, 8, 8>", 64, (1, 1), (512,)),
             ("gemmTiles2D<128, 128, 8, 8, 8>", 128, (1, 1), (256,)),
             ("gemmFloat4<128, 128, 8, 8, 8>", 128, (1, 1), (256,))]


def details(pattern, kernel: CompiledKernel, warp: int, monkeypatch):
    """(WarpDetail, SharedWarpDetail) of `warp` read by `kernel`."""
    MEMO.clear()
    monkeypatch.setattr(one_warp, "kernel_for", lambda p: kernel)
    return one_warp.warp_detail(pattern, warp), one_warp.shared_warp_detail(pattern, warp)


def assert_same_details(pattern, compiled, warps, monkeypatch, from_box=False):
    """The closed forms give every field the lane path lists, for each of `warps` (read off
    the run over the whole grid's box of blocks, `from_box`, as after the totals)."""
    kernel = CompiledKernel(pattern, compiled)
    sb = pattern.sector_bytes
    if from_box:
        assert kernel.closed_runs(0, kernel.warps, sb) is not None
    for warp in warps:
        assert kernel.warp_closed(warp, sb) is not None  # the fast path runs
        assert (kernel._warp_of_box(warp) is not None) == from_box
        closed, closed_shared = details(pattern, kernel, warp, monkeypatch)
        with lane_path():
            lanes, lane_shared = details(pattern, CompiledKernel(pattern, compiled), warp,
                                         monkeypatch)
        assert [len(r) for r in closed.executions] == [len(r) for r in lanes.executions]
        for ours, theirs in zip(closed.executions, lanes.executions):
            assert run_totals(ours, sb) == run_totals(list(theirs), sb)
            assert ours.sector_range(sb) == theirs.sector_range(sb)
            for a, b in zip(ours, theirs):
                for field in ("active", "element", "address", "first_sector", "last_sector"):
                    assert np.array_equal(getattr(a, field), getattr(b, field)), field
                assert (a.sectors, a.useful_bytes, a.iteration) == \
                    (b.sectors, b.useful_bytes, b.iteration)
        assert [list(w) for w in closed_shared.wavefronts] == \
            [list(w) for w in lane_shared.wavefronts]
        assert [list(w) for w in closed_shared.wavefronts] == \
            [[w[i] for i in range(len(w))] for w in closed_shared.wavefronts]  # by index too
        for ours, theirs in zip(closed_shared.executions, lane_shared.executions):
            assert len(ours) == len(theirs)
            for a, b in zip(ours, theirs):
                for field in ("active", "element", "address"):
                    assert np.array_equal(getattr(a, field), getattr(b, field)), field


@needs_nvcc
@pytest.mark.parametrize("function, n, grid, block", STAND_INS)
def test_a_warp_of_each_sgemm_stand_in_comes_alike_from_closed_forms(
        tmp_path, monkeypatch, function, n, grid, block):
    """A 4096 x 4096 GEMM's warp runs its whole K loop on the lane path; the closed forms
    give the same executions at a size the lane path runs in a moment (K = 64 or 128: 8 to
    64 executions per instruction, float4 accesses and shared tiles among them)."""
    code = SGEMM.read_text() + (f"\ntemplate __global__ void {function}{PARAMS};\n"
                                if "<" in function else "")
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern, compiled = inline_pattern(
        tmp_path, code, function, {"A": square, "B": square, "C": square},
        {"n": n, "M": n, "N": n, "K": n}, grid, block)
    warps = CompiledKernel(pattern, compiled).warps
    assert_same_details(pattern, compiled, sorted({0, 1, warps // 2, warps - 1}), monkeypatch)


@needs_nvcc
@pytest.mark.parametrize("function, n, grid, block", [STAND_INS[0], STAND_INS[4]])
def test_a_warp_read_off_the_run_over_all_blocks_comes_alike(tmp_path, monkeypatch,
                                                             function, n, grid, block):
    """Once the totals ran in closed form over a box of blocks, a warp's details are its
    class's rows there with its block's coordinates put in (no run of its own), and agree
    with the lane path's, in the first block and the last."""
    code = SGEMM.read_text() + (f"\ntemplate __global__ void {function}{PARAMS};\n"
                                if "<" in function else "")
    square = {"dtype": "float32", "shape": ["n", "n"]}
    size = 2 * n
    pattern, compiled = inline_pattern(
        tmp_path, code, function, {"A": square, "B": square, "C": square},
        {"n": size, "M": size, "N": size, "K": size}, (2 * grid[0], 2 * grid[1]), block)
    warps = CompiledKernel(pattern, compiled).warps
    assert_same_details(pattern, compiled, [0, warps // 2 + 1, warps - 1], monkeypatch,
                        from_box=True)


@needs_nvcc
def test_a_warp_that_skips_an_access_read_off_the_box_lists_none_of_it(tmp_path, monkeypatch):
    """Warp 1 of each block never stores to `out` (only the first warp's lanes do): read off
    the run over every block, its rows of that store are left out, as its own run leaves
    them."""
    code = """
    __global__ void k(const float* a, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float s = 0.0f;
        for (int j = 0; j < n; ++j)
            s += a[i + j * 256];
        if (threadIdx.x < 32)
            out[blockIdx.x * 32 + threadIdx.x] = s;
    }"""
    arrays = {"a": {"dtype": "float32", "length": 256 * 9},
              "out": {"dtype": "float32", "length": 256}}
    pattern, compiled = inline_pattern(tmp_path, code, "k", arrays, {"n": 8}, (4,), (64,))
    assert_same_details(pattern, compiled, [0, 1, 5, 7], monkeypatch, from_box=True)


@needs_nvcc
def test_a_warp_of_the_tiled_example_comes_alike_from_closed_forms(monkeypatch):
    """The tiled matmul example (shared tiles, a loop over tiles)."""
    examples = ROOT / "resources" / "examples"
    pattern = load_pattern(examples / "matmul-tiled-cuda.sectorviz.json")
    compiled = compiled_for_file(examples / "matmul-tiled.cu", "matmulTiled")
    assert_same_details(pattern, compiled, [0, 5], monkeypatch)


@needs_nvcc
def test_the_sums_of_a_warp_in_closed_form_make_no_execution(tmp_path, monkeypatch):
    """The naive GEMM's warp 0 at n = 64 (its 32 lanes are 32 rows r of A, one column c of
    B): per k, A[r * K + k] takes 32 sectors and B[k * N + c] 1; C is read and written once
    (32 sectors each): 64 * (32 + 1) + 2 * 32 = 2176 sectors in 64 * 2 + 2 = 130 executions,
    however nvcc unrolls the loop. The sums make no LaneExecution; asking for one makes one."""
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern, compiled = inline_pattern(tmp_path, SGEMM.read_text(), "gemmNaive",
                                       {"A": square, "B": square, "C": square},
                                       {"n": 64, "M": 64, "N": 64, "K": 64}, (2, 2), (32, 32))
    detail, _ = details(pattern, CompiledKernel(pattern, compiled), 0, monkeypatch)
    made = []
    made_one = closed_runs.lane_execution
    monkeypatch.setattr(closed_runs, "lane_execution", lambda *a: made.append(a) or made_one(*a))
    runs = detail.executions
    assert sum(len(r) for r in runs) == 130
    assert sum(run_totals(r, 32).sectors for r in runs) == 2176
    assert [r.sector_range(32) for r in runs][-1] == (32, 32)
    assert made == []
    assert runs[-1][0].sectors == 32 and len(made) == 1  # the store of C
