"""Per-thread arrays: registers with one copy per lane, indexed by anything, never accesses."""

from __future__ import annotations

import pytest
from cuda_helpers import elements, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.errors import PatternError

BIG = {"a": {"dtype": "float32", "length": 4096}}


def test_each_lane_has_its_own_copy_indexed_per_lane():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int r[8];
        for (int j = 0; j < 8; j++) r[j] = t * j + 1;
        a[r[t % 8] % 1024] = 0;
        a[2000 + r[(t * 3) & 7]] = 0;
    }""", arrays=BIG)
    assert got == [("line 5: a[r[t % 8] % 1024]", [(t * (t % 8) + 1) % 1024 for t in range(32)]),
                   ("line 6: a[2000 + r[(t * 3) & 7]]",
                    [2000 + t * ((t * 3) & 7) + 1 for t in range(32)])]


def test_two_dimensional_accumulator_and_initializer_lists():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int acc[2][3] = {{1, 2}, {3}};
        int flat[2][2] = {4, 5, 6};
        int inferred[] = {7, 8, 9};
        int zeros[4] = {};
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) acc[i][j] += t * (i + j);
        a[acc[t % 2][t % 3]] = 0;
        a[1000 + flat[t % 2][(t / 2) % 2] + inferred[t % 3] + zeros[t % 4]] = 0;
    }""", arrays=BIG)
    init = [[1, 2, 0], [3, 0, 0]]
    flat = [[4, 5], [6, 0]]
    assert got[0][1] == [init[t % 2][t % 3] + t * (t % 2 + t % 3) for t in range(32)]
    assert got[1][1] == [1000 + flat[t % 2][(t // 2) % 2] + [7, 8, 9][t % 3] for t in range(32)]


def test_registers_make_no_accesses_and_the_report_says_so():
    a, kernel = run("""__global__ void k(float* a) {
        float acc[4] = {0.0f};
        for (int j = 0; j < 4; j++) acc[j] += a[threadIdx.x * 4 + j];
        a[threadIdx.x] = acc[0] + acc[3];
    }""")
    assert [ins.op for ins in kernel.instructions] == ["load", "store"]
    assert a.instructions[0].requests == 4 and a.instructions[1].requests == 1
    loads = a.boundaries[0]
    assert "per-thread arrays are registers" in loads.assumption
    assert "spill" in loads.assumption
    plain, _ = run("__global__ void k(float* a) { a[threadIdx.x] = 0; }")
    assert "per-thread" not in plain.boundaries[0].assumption


def test_references_alias_elements_variables_and_memory():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int r[4] = {10, 20, 30, 40};
        int &e = r[t % 4];
        e += t;
        int n = 3;
        int &m = n;
        m = m * 2;
        float &slot = a[3000 + t];
        slot = 1.0f;
        a[r[t % 4] + n] = 0;
    }""", arrays=BIG)
    assert got == [("line 10: slot", [3000 + t for t in range(32)]),
                   ("line 11: a[r[t % 4] + n]", [[10, 20, 30, 40][t % 4] + t + 6
                                                 for t in range(32)])]


@pytest.mark.parametrize("body, message", [
    ("int r[4]; a[r[threadIdx.x % 4]] = 0;", "line 2, column 21: an address depends on an "
                                             "element of 'r' that was never set"),
    ("int r[4] = {0}; a[r[(int)threadIdx.x - 2]] = 0;",
     "line 2, column 27: element index -2 of 'r' outside [0, 4) at warp 0 lane 0"),
    ("int r[2] = {1, 2, 3};", "line 2, column 20: more initializers than the 2 elements"),
    ("int r[4]; float *p = r;", "used as a pointer"),
    ("float4 v[2];", "per-thread arrays of float4 are outside the subset"),
    ("float big[4096];", "has 4096 elements; sectorviz models at most 1024"),
])
def test_local_array_errors(body, message):
    with pytest.raises(PatternError) as info:
        run(f"__global__ void k(float* a) {{\n        {body} a[0] = 0;\n}}", arrays=BIG)
    assert message in str(info.value)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=32, max_size=32), st.integers(1, 7))
def test_dynamic_indices_match_a_lane_by_lane_reference(picks, shift):
    """r[j] = (t + j * shift) % 16 in every lane; lane t then reads r[picks[t]]."""
    table = ", ".join(map(str, picks))
    got = elements(f"""__global__ void k(float* a) {{
        const int pick[32] = {{{table}}};
        int t = threadIdx.x;
        int r[8];
        for (int j = 0; j < 8; j++) r[j] = (t + j * {shift}) % 16;
        a[r[pick[t]] * 32 + t] = 0;
    }}""", arrays=BIG)
    assert got[0][1] == [((t + picks[t] * shift) % 16) * 32 + t for t in range(32)]
