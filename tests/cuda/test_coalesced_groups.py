"""cg::coalesced_threads(), cg::labeled_partition and cg::binary_partition: the members are
the lanes of a warp that make the group (on the same path) and share the label; rank, size,
shfl and cg::reduce over them, checked lane by lane against a reference."""

from __future__ import annotations

import pytest
from cuda_helpers import elements, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.errors import PatternError

CODE = """#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const int *keys, int *out, int *sums) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int key = keys[i];
    if (key % 3 != 0) {
        cg::coalesced_group active = cg::coalesced_threads();
        int leader = active.shfl(i, 0);
        if (active.thread_rank() == 0) out[leader + active.size()] = 0;
        out[4096 + active.thread_rank() * 3 + leader % 64] = 1;
        auto part = cg::labeled_partition(active, key % 4);
        int total = cg::reduce(part, key, cg::plus<int>());
        if (part.thread_rank() == part.size() - 1) atomicAdd(&sums[key % 4 * 8 + total % 8], 1);
        auto halves = cg::binary_partition(active, i & 16);
        out[8192 + halves.shfl(i, halves.size() - 1) % 2048] = 2;
    }
}"""


def reference(keys: list[int], block: int) -> list[tuple[int, int]]:
    """(requests, sectors) of keys[i] and the four accesses under the branch, warp by warp:
    the group is the warp's lanes with key % 3 != 0, ranked by lane."""
    counts = [[0, 0] for _ in range(5)]

    def add(k: int, elems: list[int]) -> None:
        if elems:
            counts[k][0] += 1
            counts[k][1] += len({e * 4 // 32 for e in elems})
    for start in range(0, len(keys), 32):
        if start % block + 32 > block:  # a warp never spans blocks
            raise AssertionError("block sizes here are multiples of 32")
        lanes = list(range(start, start + 32))
        add(0, lanes)
        active = [i for i in lanes if keys[i] % 3 != 0]
        if not active:
            continue
        leader = active[0]
        add(1, [leader + len(active)])
        add(2, [4096 + r * 3 + leader % 64 for r in range(len(active))])
        last = []
        for label in {keys[i] % 4 for i in active}:
            part = [i for i in active if keys[i] % 4 == label]
            total = sum(keys[i] for i in part)
            last.append(label * 8 + total % 8)
        add(3, last)
        add(4, [8192 + [j for j in active if bool(j & 16) == bool(i & 16)][-1] % 2048
                for i in active])
    return [tuple(c) for c in counts]


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 200), st.integers(5, 97), st.sampled_from([32, 64, 128]))
def test_groups_of_the_lanes_on_a_path_match_a_lane_by_lane_reference(a, m, block):
    n = 512
    keys = [(i * a) % m for i in range(n)]
    arrays = {"keys": {"dtype": "int32", "length": n,
                       "values": {"kind": "expr", "expr": f"(i * {a}) % {m}"}},
              "out": {"dtype": "int32", "length": 16384}, "sums": {"dtype": "int32",
                                                                   "length": 64}}
    analysis, kernel = run(CODE, arrays=arrays, grid=(n // block,), block=(block,))
    assert [(ins.name.split(": ")[0], ins.op) for ins in kernel.instructions] == [
        ("line 5", "load"), ("line 9", "store"), ("line 10", "store"), ("line 13", "red"),
        ("line 15", "store")]
    assert [(s.requests, s.sectors) for s in analysis.instructions] == reference(keys, block)


def test_a_group_keeps_the_members_that_made_it():
    got = elements("""#include <cooperative_groups.h>
    __global__ void k(float *a) {
        if (threadIdx.x % 4 == 0) {
            auto g = cooperative_groups::coalesced_threads();
            if (g.thread_rank() == 0) a[g.size() * 64 + g.thread_rank()] = 0;
        }
    }""", arrays={"a": {"dtype": "float32", "length": 1024}}, block=(32,))
    assert got == [("line 5: a[g.size() * 64 + g.thread_rank()]", [8 * 64])]


@pytest.mark.parametrize("body, message", [
    ("auto g = cg::coalesced_threads(); a[g.ballot(1)] = 0;",
     "ballot() of a coalesced group or partition is outside the subset"),
    ("auto t = cg::tiled_partition<4>(cg::coalesced_threads()); a[0] = 0;",
     "tiled_partition needs a thread block or a tile"),
    ("auto p = cg::labeled_partition(cg::this_thread_block(), 1); a[0] = 0;",
     "cg::labeled_partition needs a coalesced group or a tile of up to 32 threads"),
    ("auto g = cg::coalesced_threads(); a[g.shfl(1, 40)] = 0;", "shfl from rank 40 of a "
     "group of 32 threads (warp 0 lane 0)"),
])
def test_what_these_groups_cannot_do_is_refused_in_one_line(body, message):
    with pytest.raises(PatternError) as info:
        run("#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
            f"__global__ void k(float *a) {{\n    {body}\n}}")
    text = str(info.value)
    assert message in text and text.startswith("line 4, column ") and "\n" not in text
