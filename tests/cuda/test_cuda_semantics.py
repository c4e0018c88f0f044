"""SIMT semantics of the interpreter: masks, loops, C integer rules, pointers, inlining."""

from __future__ import annotations

import numpy as np
from cuda_helpers import elements, per_request, run

A4 = {"a": {"dtype": "float32", "length": 4096}}


def test_if_else_are_lane_masks():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        if (t % 2 == 0) a[t] = 1; else a[100 + t] = 2;
    }""")
    assert got == [("line 3: a[t]", list(range(0, 32, 2))),
                   ("line 3: a[100 + t]", [100 + t for t in range(1, 32, 2)])]


def test_conditional_and_short_circuit_load_only_needed_lanes():
    got = elements("""__global__ void k(float* a, int* idx) {
        int t = threadIdx.x;
        float v = t < 8 ? a[t] : a[64 + t];
        if (t >= 30 && idx[t] > 0) a[200 + t] = v;
        if (t < 2 || idx[t + 32] == 37) a[300 + t] = v;
    }""", arrays={"a": {"dtype": "float32", "length": 1024},
                  "idx": {"dtype": "int32", "length": 64, "values": {"kind": "arange"}}})
    assert got == [
        ("line 3: a[t]", list(range(8))),
        ("line 3: a[64 + t]", [64 + t for t in range(8, 32)]),
        ("line 4: idx[t]", [30, 31]),
        ("line 4: a[200 + t]", [230, 231]),
        ("line 5: idx[t + 32]", [t + 32 for t in range(2, 32)]),
        ("line 5: a[300 + t]", [300, 301, 305]),
    ]


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
    stores = [e for name, e in got if "j * 32" in name]
    assert stores == [[0, 1, 2, 3], [64 + 2, 64 + 3], [96 + 3]]
    assert got[-1] == ("line 9: a[1000 + t]", [1000, 1001, 1002, 1003])


def test_while_and_do_loops_run_until_every_lane_has_left():
    got = elements("""__global__ void k(float* a) {
        unsigned t = threadIdx.x;
        int n = 0;
        while (t > 0) { t >>= 1; n++; }
        a[n] = 0;
        int m = 0;
        do { a[100 + m] = 1; m++; } while (m < (int)threadIdx.x % 3);
    }""")
    widths = [0] + [int(t).bit_length() for t in range(1, 32)]
    assert got[0] == ("line 5: a[n]", widths)
    # the body runs once for every lane, again for t % 3 == 2 (m = 1 < 2), then no more
    assert [e for _, e in got[1:]] == [[100] * 32, [101] * 10]


def test_loop_iterations_are_requests():
    a, _ = run("""__global__ void k(float* a, int n) {
        for (int i = threadIdx.x; i < n; i += 32) a[i] = 0;
    }""", params={"n": 100})
    assert a.instructions[0].requests == 4 and a.instructions[0].sectors == 13


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
    assert got[0][1] == list(100 + q * 10 + r)
    assert got[1][1] == list(t + 200)
    assert got[2][1] == list(t * 3)
    assert got[3][1] == list((t + 250) % 256)
    assert got[4][1] == list(t * 2)
    assert got[5][1] == list(600 - t // 2)


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
    t = list(range(32))
    assert [e for _, e in got] == [[65 + i for i in t], [64 + i for i in t],
                                   [65 + i for i in t], t, [100 + i for i in t],
                                   [8 + i for i in t]]


def test_vector_parameters_and_widths():
    a, kernel = run("""__global__ void k(const float4* in, double2* out, const int2* p) {
        int t = threadIdx.x;
        float4 v = in[t];
        out[t].x = v.x + p[t].y;
    }""", arrays={"in": {"dtype": "float4", "length": 32},
                  "out": {"dtype": "double2", "length": 32},
                  "p": {"dtype": "int2", "length": 32}})
    assert [(i.source, i.op, i.width) for i in kernel.instructions] == [
        ("in[t]", "load", 16), ("p[t].y", "load", 4), ("out[t].x", "store", 8)]
    assert per_request(a) == [16, 8, 16]  # p[t].y: 4 bytes every 8; out[t].x: 8 every 16


def test_gather_reads_configured_values():
    got = elements("""__global__ void k(const int* idx, float* a) {
        a[idx[threadIdx.x] * 2] = 0;
    }""", arrays={"idx": {"dtype": "int32", "length": 32,
                          "values": {"kind": "expr", "expr": "31 - i"}},
                  "a": {"dtype": "float32", "length": 64}})
    assert got[1][1] == [2 * (31 - t) for t in range(32)]


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
    t = list(range(32))
    assert got[0] == ("line 12: a[AT(t, 1)]", [i * 8 + 1 for i in t])
    assert got[1][1] == [100 + (2 * i if i > 4 else i) for i in t]
    assert got[2] == ("line 8: p[i]", [500 + i for i in t])
    assert got[3] == ("line 8: p[i]", [600 + i for i in t])


def test_builtins_and_2d_launch():
    got = elements("""__global__ void k(float* a) {
        a[threadIdx.y * 100 + threadIdx.x + blockIdx.x * 1000 + gridDim.x * 0 + blockDim.y] = 0;
    }""", grid=(2,), block=(4, 8), arrays=A4)
    assert got[0][1] == [8 + y * 100 + x for y in range(8) for x in range(4)]


def test_shared_accesses_are_not_global_instructions():
    _, kernel = run("""__global__ void k(float* a) {
        __shared__ float tile[32][33];
        tile[threadIdx.x][0] = a[threadIdx.x];
        __syncthreads();
        a[threadIdx.x] = tile[0][threadIdx.x];
    }""")
    assert [(i.op, i.array) for i in kernel.instructions] == [("load", "a"), ("store", "a")]
    assert [(i.op, i.array, i.source) for i in kernel.shared_instructions] == [
        ("store", "tile", "tile[threadIdx.x][0]"), ("load", "tile", "tile[0][threadIdx.x]")]
    shared = list(kernel.space_trace("shared", 0, 1))
    assert [int(x) for x in shared[0][1].address[0, :3]] == [0, 132, 264]


def test_partial_warp_and_float_arithmetic_do_not_change_addresses():
    a, _ = run("""__global__ void k(float* a, float s) {
        float x = threadIdx.x * 0.5f + s;
        int t = threadIdx.x;
        a[t] = x;
    }""", block=(40,))
    assert [s.requests for s in a.instructions] == [2]
    assert a.instructions[0].active_lanes == 40


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
    }""")
    assert got == [("line 14: p[t]", [10 + t for t in range(32)])]


def test_warp_shuffles_move_values_between_lanes():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        a[__shfl_down_sync(0xffffffff, t, 4)] = 0;
        a[100 + __shfl_xor_sync(0xffffffff, t, 1)] = 0;
        a[200 + __shfl_sync(0xffffffff, t * 2, 3)] = 0;
        a[300 + __shfl_up_sync(0xffffffff, t, 1, 32)] = 0;
    }""")
    t = range(32)
    assert [e for _, e in got] == [[x + 4 if x < 28 else x for x in t],
                                   [100 + (x ^ 1) for x in t], [206] * 32,
                                   [300 + (x - 1 if x else 0) for x in t]]


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
    t = range(32)
    assert got[0][1] == [(10 if x < 5 else 20 if x < 10 else 0) + x for x in t]
    assert got[1][1] == [500 + [0, 1, 3, 6][x % 4] for x in t]
    assert got[2][1] == [600 + (x if x > 2 else -x) + 2 * x for x in t]


def test_loop_iteration_values_are_reported():
    _, kernel = run("""__global__ void k(float* a) {
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 2; c++) a[r * 64 + c * 32 + threadIdx.x] = 0;
    }""")
    seen = [(int(b.iteration["r"][0, 0]), int(b.iteration["c"][0, 0]))
            for _, b in kernel.trace(0, 1)]
    assert seen == [(r, c) for r in range(3) for c in range(2)]
