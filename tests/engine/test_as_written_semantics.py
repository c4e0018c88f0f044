"""SIMT semantics of the as-written reading (the kernel's debug compile read by the PTX
engine; ported from the C++ interpreter's tests, issue 29): masks, loops, C integer rules,
pointers, inlined device functions, shuffles, and the loads of a statement (-G loads each
read as written: no common-subexpression merging)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import elements, per_line, run, shared_per_line

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

A4 = {"a": {"dtype": "float32", "length": 4096}}
LANES = list(range(32))


def of_line(got, line: int) -> list[list[int]]:
    """The element lists of the executions at `line`, in the order they ran."""
    return [e for at, _, e in got if at == line]


def test_if_else_are_lane_masks():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        if (t % 2 == 0) a[t] = 1; else a[100 + t] = 2;
    }""")
    # the two sides may run in either order
    assert sorted(got) == sorted([(3, "store", list(range(0, 32, 2))),
                                  (3, "store", [100 + t for t in range(1, 32, 2)])])


def test_conditional_and_short_circuit_load_only_needed_lanes():
    got = elements("""__global__ void k(float* a, int* idx) {
        int t = threadIdx.x;
        float v = t < 8 ? a[t] : a[64 + t];
        if (t >= 30 && idx[t] > 0) a[200 + t] = v;
        if (t < 2 || idx[t + 32] == 37) a[300 + t] = v;
    }""", arrays={"a": {"dtype": "float32", "length": 1024},
                  "idx": {"dtype": "int32", "length": 64, "values": {"kind": "arange"}}})
    assert sorted(got) == sorted([
        (3, "load", list(range(8))), (3, "load", [64 + t for t in range(8, 32)]),
        (4, "load", [30, 31]), (4, "store", [230, 231]),
        (5, "load", [t + 32 for t in range(2, 32)]), (5, "store", [300, 301, 305])])


def test_early_return_break_continue():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        if (t >= 4) return;
        for (int j = 0; j < 10; j++) {
            if (j == 1) continue;
            if (j > t) break;
            a[j * 32 + t] = 0;
        }
        a[1000 + t] = 0;
    }""")
    assert of_line(got, 7) == [[0, 1, 2, 3], [64 + 2, 64 + 3], [96 + 3]]
    assert got[-1] == (9, "store", [1000, 1001, 1002, 1003])


def test_while_and_do_loops_run_until_every_lane_has_left():
    got = elements("""__global__ void k(float* a) {
        unsigned t = threadIdx.x;
        int n = 0;
        while (t > 0) { t >>= 1; n++; }
        a[n] = 0;
        int m = 0;
        do { a[100 + m] = 1; m++; } while (m < (int)threadIdx.x % 3);
    }""")
    assert of_line(got, 5) == [[int(t).bit_length() for t in LANES]]
    # the body runs once for every lane, again for t % 3 == 2 (m = 1 < 2), then no more
    assert of_line(got, 7) == [[100] * 32, [101] * 10]


def test_loop_iterations_are_requests():
    a, _ = run("""__global__ void k(float* a, int n) {
        for (int i = threadIdx.x; i < n; i += 32) a[i] = 0;
    }""", params={"n": 100})
    # 100 elements in 4 requests: 3 of 4 sectors, one of lanes 96..99 (1 sector)
    assert per_line(a.instructions) == {2: (4, 13)}


def test_c_integer_semantics():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int q = (t - 16) / 5;          // truncates toward zero
        int r = (t - 16) % 5;          // sign of the dividend
        unsigned u = t - 16u;          // wraps
        size_t s = (size_t)t * 3;
        a[100 + q * 10 + r] = 0;
        a[(u + 16u) + 200] = 0;
        a[s] = 0;
        a[(unsigned char)(t + 250)] = 0;
        a[(t << 2) >> 1] = 0;
        a[-t / 2 + 600] = 0;
    }""")
    t = np.arange(32)
    q = np.trunc((t - 16) / 5).astype(int)
    r = t - 16 - q * 5
    assert [e for _, _, e in got] == [list(100 + q * 10 + r), list(t + 200), list(t * 3),
                                      list((t + 250) % 256), list(t * 2), list(600 - t // 2)]


def test_pointer_arithmetic_deref_and_casts():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        float* p = a + 64;
        p += t;
        *(p + 1) = 0;
        *p++ = 1;
        p[0] = 2;
        float4* v = reinterpret_cast<float4*>(a);
        v[t] = make_float4(0, 0, 0, 0);
        ((float2*)a)[t + 100] = make_float2(1, 2);
        a[&a[t + 8] - a] = 3;
    }""", arrays=A4)
    t = LANES
    # -G stores the float4 and the float2 member by member (st.f32 at [v + 12], [v + 8],
    # [v + 4], [v], then [w + 4], [w]): elements of `a` (floats), not one wide store each
    assert [(line, e) for line, _, e in got] == [
        (5, [65 + i for i in t]), (6, [64 + i for i in t]), (7, [65 + i for i in t]),
        *[(9, [4 * i + m for i in t]) for m in (3, 2, 1, 0)],
        *[(10, [2 * (i + 100) + m for i in t]) for m in (1, 0)],
        (11, [8 + i for i in t])]


def test_vector_parameters_and_widths():
    a, kernel = run("""__global__ void k(const float4* in, double2* out, const int2* p) {
        int t = threadIdx.x;
        float4 v = in[t];
        out[t].x = v.x + p[t].y;
    }""", arrays={"in": {"dtype": "float4", "length": 32},
                  "out": {"dtype": "double2", "length": 32},
                  "p": {"dtype": "int2", "length": 32}})
    assert sorted((i.line, i.array, i.op, i.width) for i in kernel.instructions) == [
        (3, "in", "load", 16), (4, "out", "store", 8), (4, "p", "load", 4)]
    # in[t]: 16 bytes a lane, 16 sectors; p[t].y: 4 bytes every 8, 8 sectors; out[t].x: 8
    # bytes every 16, 16 sectors
    assert sorted((s.array, s.sectors) for s in a.instructions) == [
        ("in", 16), ("out", 16), ("p", 8)]


def test_gather_reads_configured_values():
    got = elements("""__global__ void k(const int* idx, float* a) {
        a[idx[threadIdx.x] * 2] = 0;
    }""", arrays={"idx": {"dtype": "int32", "length": 32,
                          "values": {"kind": "expr", "expr": "31 - i"}},
                  "a": {"dtype": "float32", "length": 64}})
    assert got == [(2, "load", LANES), (2, "store", [2 * (31 - t) for t in LANES])]


def test_macros_constants_and_device_functions_inline():
    got = elements("""
    #include <cstdio>
    #define W 8
    #define AT(r, c) ((r) * W + (c))
    namespace util { int host_only() { return 1; } }
    const int BASE = 100;
    __device__ int twice(int x) { if (x > 4) return 2 * x; return x; }
    __device__ void put(float* p, int i) { p[i] = 0; }
    template <typename T> __global__ void other(T* x) { x[0] = 0; }
    __global__ void k(float* a) {
        int t = threadIdx.x;
        a[AT(t, 1)] = 0;
        a[BASE + twice(t)] = 0;
        put(a, 500 + t);
        put(a + 600, t);
    }
    int main() { k<<<1, 32>>>(nullptr); }
    """)
    assert got == [(12, "store", [i * 8 + 1 for i in LANES]),
                   (13, "store", [100 + (2 * i if i > 4 else i) for i in LANES]),
                   (8, "store", [500 + i for i in LANES]),
                   (8, "store", [600 + i for i in LANES])]


def test_builtins_and_2d_launch():
    got = elements("""__global__ void k(float* a) {
        a[threadIdx.y * 100 + threadIdx.x + blockIdx.x * 1000 + gridDim.x * 0 + blockDim.y] = 0;
    }""", grid=(2,), block=(4, 8), arrays=A4)
    assert got == [(2, "store", [8 + y * 100 + x for y in range(8) for x in range(4)])]


def test_shared_accesses_are_not_global_instructions():
    a, kernel = run("""__global__ void k(float* a) {
        __shared__ float tile[32][33];
        tile[threadIdx.x][0] = a[threadIdx.x];
        __syncthreads();
        a[threadIdx.x] = tile[0][threadIdx.x];
    }""")
    assert [(i.line, i.op, i.array) for i in kernel.instructions] == [
        (3, "load", "a"), (5, "store", "a")]
    assert [(i.line, i.op, i.array) for i in kernel.shared_instructions] == [
        (3, "store", "tile"), (5, "load", "tile")]
    shared = list(kernel.space_trace("shared", 0, 1))
    assert [int(x) for x in shared[0][1].address[0, :3]] == [0, 132, 264]
    # rows of 33 floats: a column write hits 32 banks once, a row read is one wavefront
    assert shared_per_line(a.shared) == {3: (1, 1), 5: (1, 1)}


def test_partial_warp_and_float_arithmetic_do_not_change_addresses():
    a, _ = run("""__global__ void k(float* a, float s) {
        float x = threadIdx.x * 0.5f + s;
        int t = threadIdx.x;
        a[t] = x;
    }""", block=(40,))
    assert [(s.requests, s.active_lanes) for s in a.instructions] == [(2, 40)]


def test_auto_namespaces_qualifiers_and_cooperative_groups():
    got = elements("""
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    static __forceinline__ __device__ __host__ int lane() { return threadIdx.x % 32; }
    namespace kernels {
    __global__ void k(float* __restrict__ a) {
        cg::thread_block cta = cg::this_thread_block();
        auto t = lane();
        auto* p = a + 10;
        cta.sync();
        cg::sync(cta);
        __syncthreads();
        #pragma unroll
        for (;;) { p[t] = 0; break; }
    }
    }""", function="kernels::k")
    assert got == [(14, "store", [10 + t for t in LANES])]


def test_warp_shuffles_move_values_between_lanes():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        a[__shfl_down_sync(0xffffffff, t, 4)] = 0;
        a[100 + __shfl_xor_sync(0xffffffff, t, 1)] = 0;
        a[200 + __shfl_sync(0xffffffff, t * 2, 3)] = 0;
        a[300 + __shfl_up_sync(0xffffffff, t, 1, 32)] = 0;
    }""")
    assert [e for _, _, e in got] == [[x + 4 if x < 28 else x for x in LANES],
                                      [100 + (x ^ 1) for x in LANES], [206] * 32,
                                      [300 + (x - 1 if x else 0) for x in LANES]]


def test_variables_merge_across_divergent_branches_and_loops():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int x = 0;
        if (t < 5) x = 10; else if (t < 10) x += 20;
        int sum = 0;
        for (int j = 0; j < t % 4; j++) sum += j + 1;
        a[x + t] = 0;
        a[500 + sum] = 0;
        a[600 + (t > 2 ? t : -t) + 2 * t] = 0;
    }""")
    assert [e for _, _, e in got] == [
        [(10 if x < 5 else 20 if x < 10 else 0) + x for x in LANES],
        [500 + [0, 1, 3, 6][x % 4] for x in LANES],
        [600 + (x if x > 2 else -x) + 2 * x for x in LANES]]


def test_nested_loop_iterations_run_in_order():
    got = elements("""__global__ void k(float* a) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 2; c++) a[r * 64 + c * 32 + threadIdx.x] = 0;
    }""")
    assert [e[0] for _, _, e in got] == [r * 64 + c * 32 for r in range(3) for c in range(2)]


# ------------------------------------------------------------ the loads of a statement
# The interpreter merged identical loads of one statement (its common_loads rule); -G loads
# each read where it is written (REPEATS in test_golden_as_written), so these count them all.

ARRAYS = {"x": {"dtype": "float32", "length": 256, "values": {"kind": "arange"}},
          "idx": {"dtype": "int32", "length": 256, "values": {"kind": "expr",
                                                             "expr": "(i * 7) % 64"}},
          "y": {"dtype": "float32", "length": 256}}
HEAD = "__global__ void k(float *x, const int *idx, float *y) {\n  int t = threadIdx.x;\n"
TERMS = ["x[t]", "x[t + 1]", "x[2 * t]", "x[idx[t]]", "idx[t]", "x[t]"]
VALUE = {"x[t]": lambda i: i, "x[t + 1]": lambda i: i + 1, "x[2 * t]": lambda i: 2 * i,
         "idx[t]": lambda i: (i * 7) % 64, "x[idx[t]]": lambda i: (i * 7) % 64}


def c_value(values: list[int], ops: list[str]) -> int:
    """values[0] op values[1] op ... with C's precedence (* before + and -)."""
    sums, signs = [values[0]], []
    for op, v in zip(ops, values[1:]):
        if op == "*":
            sums[-1] *= v
        else:
            sums.append(v)
            signs.append(op)
    total = sums[0]
    for op, v in zip(signs, sums[1:]):
        total = total + v if op == "+" else total - v
    return total


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from(TERMS), min_size=1, max_size=4),  # float32-exact products
       st.lists(st.sampled_from(["+", "*", "-"]), min_size=3, max_size=3),
       st.booleans())
def test_each_read_as_written_is_one_load(terms, ops, declare):
    expr = terms[0] + "".join(f" {op} {t}" for op, t in zip(ops, terms[1:]))
    body = (f"float v = {expr};\n  y[(int)v & 255] = 0;" if declare
            else f"y[(int)({expr}) & 255] = 0;")
    got = elements(HEAD + body + "\n}", arrays=ARRAYS)
    # every term is a load, x[idx[t]] two (idx[t], then x)
    assert [op for _, op, _ in got].count("load") == len(terms) + terms.count("x[idx[t]]")
    assert got[-1] == (3 + declare, "store",
                       [c_value([VALUE[term](i) for term in terms], ops) & 255
                        for i in range(32)])


def test_a_load_in_the_target_and_the_value_is_loaded_each_time():
    a, kernel = run(HEAD + "  y[idx[t]] = x[idx[t]] * x[idx[t]];\n}", arrays=ARRAYS)
    # idx[t] three times (target, both factors), x[idx[t]] twice: the interpreter's one load
    # each became 3 + 2 (REPEATS)
    assert [(ins.array, ins.op) for ins in kernel.instructions] == [
        ("idx", "load"), ("x", "load"), ("idx", "load"), ("x", "load"), ("idx", "load"),
        ("y", "store")]
    assert [s.requests for s in a.instructions] == [1] * 6
    assert not any("common-subexpression" in b.assumption for b in a.boundaries)


@pytest.mark.parametrize("body, loads", [
    ("y[t] = x[t] + atomicAdd(&y[0], 1.0f) + x[t];", ["x", "x"]),
    ("y[t] = (t > 3 && x[t] > 0) ? x[t] : 0.0f;", ["x", "x"]),
    # -G reads the assignment's value back from y[1] (ASSIGNED)
    ("y[t] = x[t] + (y[1] = 2.0f) + x[t];", ["x", "y", "x"]),
    ("float a = x[t];\n  float b = x[t];\n  y[t] = a + b;", ["x", "x"]),
    ("y[t] = x[t] + twice(x, t) + x[t];", ["x", "x", "x"]),
    ("y[t] = x[t] + __shfl_sync(0xffffffff, x[t], 0);", ["x", "x"]),
    ("volatile float *v = x;\n  y[t] = v[t] * v[t] + x[t] * x[t];", ["x"] * 4),
])
def test_effects_branches_statements_and_volatile_keep_every_load(body, loads):
    code = "__device__ float twice(float *p, int i) { return 2 * p[i]; }\n" + HEAD
    _, kernel = run(code + body + "\n}", arrays=ARRAYS)
    assert [ins.array for ins in kernel.instructions if ins.op == "load"] == loads
