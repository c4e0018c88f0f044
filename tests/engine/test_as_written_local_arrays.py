"""Per-thread arrays read as written (the debug compile): one copy per lane, indexed by
anything. The interpreter kept them in registers and counted no access; -G keeps them in the
thread's stack frame, so an element indexed at run time is a local memory access (its fixed
slots, written with constant offsets, are left out as variables the source keeps in
registers: issue 29, item 3). Ported from the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import elements, per_line, run

from sectorviz.model.errors import PatternError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

BIG = {"a": {"dtype": "float32", "length": 4096}}


def test_each_lane_has_its_own_copy_indexed_per_lane():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int r[8];
        for (int j = 0; j < 8; j++) r[j] = t * j + 1;
        a[r[t % 8] % 1024] = 0;
        a[2000 + r[(t * 3) & 7]] = 0;
    }""", arrays=BIG)
    assert got == [(5, "store", [(t * (t % 8) + 1) % 1024 for t in range(32)]),
                   (6, "store", [2000 + t * ((t * 3) & 7) + 1 for t in range(32)])]


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
    assert got[0] == (9, "store", [init[t % 2][t % 3] + t * (t % 2 + t % 3) for t in range(32)])
    assert got[1] == (10, "store", [1000 + flat[t % 2][(t // 2) % 2] + [7, 8, 9][t % 3]
                                    for t in range(32)])


def test_an_array_indexed_in_a_loop_is_local_memory_and_the_report_says_so():
    """The interpreter counted no access of `acc`. -G keeps the loop, so acc[j] is local
    memory: per iteration one ld.local and one st.local of 4 bytes per lane, the warp's
    words interleaved (128 bytes: 4 sectors): 4 x 2 = 8 requests, 32 sectors. The
    initializer's 4 stores and the reads of acc[0] and acc[3] use fixed frame slots: the
    6 instructions left out."""
    a, kernel = run("""__global__ void k(float* a) {
        float acc[4] = {0.0f};
        for (int j = 0; j < 4; j++) acc[j] += a[threadIdx.x * 4 + j];
        a[threadIdx.x] = acc[0] + acc[3];
    }""")
    assert [ins.op for ins in kernel.instructions] == ["load", "store"]
    assert per_line(a.instructions) == {3: (4, 4 * 16), 4: (1, 4)}
    assert per_line(a.local) == {3: (8, 32)}
    words = " ".join(b.assumption for b in a.boundaries)
    assert ("6 local memory instructions of variables -G keeps in its stack frame (a fixed "
            "frame slot, not indexed at run time) are left out") in words
    plain, _ = run("__global__ void k(float* a) { a[threadIdx.x] = 0; }")
    assert plain.local == () and "stack frame" not in plain.boundaries[0].assumption


def test_references_alias_elements_variables_and_memory():
    code = """__global__ void k(float* a) {
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
    }"""
    assert elements(code, arrays=BIG) == [
        (10, "store", [3000 + t for t in range(32)]),
        (11, "store", [[10, 20, 30, 40][t % 4] + t + 6 for t in range(32)])]
    # r[t % 4] is local memory: line 5's read and write of e (through the reference), line
    # 11's read; each lane 4 bytes at one of 4 words of its own (t % 4), interleaved over the
    # warp: 4 rows of 128 bytes, 8 lanes each, every sector of each row touched (16)
    a, _ = run(code, arrays=BIG)
    assert per_line(a.local) == {5: (2, 32), 11: (1, 16)}


def test_wide_and_large_per_thread_arrays_are_local_memory():
    """The interpreter refused float4 elements and more than 1024 elements; -G keeps both in
    local memory. v[t % 2] = make_float4(..): -G stores the 4 members one by one, then loads
    .y: 5 accesses of 4 bytes, lanes at word (t % 2) * 4 + member, so every request covers
    two 128-byte rows, each with 16 lanes spread over its 4 sectors: 8 sectors. big[t * 100]:
    one row per lane, 32 sectors per request, a store and a load."""
    a, _ = run("""__global__ void k(float* a) {
        float4 v[2];
        v[threadIdx.x % 2] = make_float4(1, 2, 3, 4);
        float big[4096];
        big[threadIdx.x * 100] = v[threadIdx.x % 2].y;
        a[(int)big[threadIdx.x * 100]] = 0;
    }""", arrays=BIG)
    assert per_line(a.local) == {3: (4, 32), 5: (2, 40), 6: (1, 32)}


@pytest.mark.parametrize("body, message", [
    # the interpreter's own refusals, now: the engine's (unset data in an address) and nvcc's
    ("int r[4]; a[r[threadIdx.x % 4]] = 0;", "that the kernel did not store first"),
    ("int r[2] = {1, 2, 3};", "kernel.code line 2, column 27: too many initializer values"),
    ("int r[4]; float *p = r;", "kernel.code line 2, column 30: a value of type \"int *\" "
                                "cannot be used to initialize an entity of type \"float *\""),
])
def test_local_array_errors(body, message):
    with pytest.raises(PatternError) as info:
        run(f"__global__ void k(float* a) {{\n        {body} a[0] = 0;\n}}", arrays=BIG)
    text = str(info.value)
    assert message in text and text.startswith(("line 2, column 9: ", "kernel.code line 2"))


@settings(max_examples=6, deadline=None)  # one compile per example
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
    assert got[-1] == (6, "store", [((t + picks[t] * shift) % 16) * 32 + t for t in range(32)])
