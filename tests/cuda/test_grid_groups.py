"""cg::this_grid(): grid-stride loops by grid.thread_rank() and grid.size(), block_rank()
numbering blocks x fastest, grid.sync() ordering only; checked lane by lane against a
reference that runs every thread of every block."""

from __future__ import annotations

import itertools

import pytest
from cuda_helpers import elements, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.errors import PatternError

N = 1500
ARRAYS = {"src": {"dtype": "float32", "length": 4096},
          "dst": {"dtype": "float64", "length": 8192}}
STRIDE = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float *src, double *dst, unsigned n) {
    cg::grid_group grid = cg::this_grid();
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) {
        dst[(i * 3) % 4096] = src[i];
    }
    cg::sync(grid);
    if (threadIdx.x == 0 && threadIdx.y == 0)
        dst[4096 + grid.block_rank() * 5 + grid.num_blocks()] = 0;
}"""


def reference(grid: tuple[int, int, int], block: tuple[int, int]) -> list[tuple[int, int]]:
    """(requests, sectors) of src[i], dst[(i*3)%4096] and the block-leader store, running
    every lane: a thread's grid rank is its block's rank (x fastest) times the block's
    threads plus its rank in the block; a warp is 32 consecutive ranks of one block."""
    per_block = block[0] * block[1]
    total = grid[0] * grid[1] * grid[2] * per_block
    counts = [[0, 0], [0, 0], [0, 0]]

    def add(k: int, elems: list[int], width: int) -> None:
        if elems:
            counts[k][0] += 1
            counts[k][1] += len({e * width // 32 for e in elems})
    for bz, by, bx in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
        rank = bx + by * grid[0] + bz * grid[0] * grid[1]
        for w in range(0, per_block, 32):
            lanes = range(w, min(w + 32, per_block))
            firsts = [rank * per_block + t for t in lanes]
            for step in itertools.count():
                idx = [f + step * total for f in firsts if f + step * total < N]
                if not idx:
                    break
                add(0, idx, 4)
                add(1, [(i * 3) % 4096 for i in idx], 8)
            add(2, [4096 + rank * 5 + grid[0] * grid[1] * grid[2]
                    for t in lanes if t % block[0] == 0 and t // block[0] == 0], 8)
    return [tuple(c) for c in counts]


@settings(max_examples=12, deadline=None)
@given(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)),
       st.sampled_from([(32, 1), (16, 4), (8, 12), (64, 2), (24, 1)]))
def test_grid_stride_loops_match_a_lane_by_lane_reference(grid, block):
    a, kernel = run(STRIDE, arrays=ARRAYS, params={"n": N}, grid=grid, block=block)
    assert [ins.name for ins in kernel.instructions] == [
        "line 6: src[i]", "line 6: dst[(i * 3) % 4096]",
        "line 10: dst[4096 + grid.block_rank() * 5 + grid.num_blocks()]"]
    assert [(s.requests, s.sectors) for s in a.instructions] == reference(grid, block)


def test_grid_methods_give_the_blocks_and_threads_of_the_launch():
    got = elements("""#include <cooperative_groups.h>
    __global__ void k(float *a) {
        auto g = cooperative_groups::this_grid();
        uint3 at = g.block_index(), blocks = g.dim_blocks();
        a[g.num_threads() + at.x * 100 + blocks.y * 10 + g.block_rank()] = 0;
    }""", arrays={"a": {"dtype": "float32", "length": 4096}}, grid=(3, 2), block=(32,))
    assert got == [("line 5: a[g.num_threads() + at.x * 100 + blocks.y * 10 + g.block_rank()]",
                    [6 * 32 + 20] * 32)]


@pytest.mark.parametrize("body, message", [
    ("auto t = cg::tiled_partition<32>(cg::this_grid());",
     "tiled_partition needs a thread block or a tile"),
    ("int r = cg::this_grid().meta_group_rank();",
     "meta_group_rank() of a grid group is outside the subset"),
    ("auto m = cg::this_multi_grid();", "cg::this_multi_grid() (groups wider than a block)"),
])
def test_what_a_grid_group_cannot_do_is_refused_in_one_line(body, message):
    with pytest.raises(PatternError) as info:
        run("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
            f"__global__ void k(float *a) {{\n    {body}\n    a[threadIdx.x] = 0;\n}}")
    text = str(info.value)
    assert message in text and text.startswith("line 4, column ") and "\n" not in text


def test_clock_t_holds_clock_and_is_eight_bytes():
    a, kernel = run("""__global__ void k(clock_t *timer) {
        clock_t start = clock();
        if (threadIdx.x % 32 == 0) timer[blockIdx.x * 4 + threadIdx.x / 32] = start;
        timer[64 + threadIdx.x] = sizeof(clock_t) * clock();
    }""", arrays={"timer": {"dtype": "int64", "length": 512}}, grid=(2,), block=(128,))
    assert [(s.requests, s.sectors) for s in a.instructions] == [(8, 8), (8, 8 * 32 * 8 // 32)]
