"""Built-ins in the as-written reading (the kernel's debug compile read by the PTX engine;
ported from the C++ interpreter's tests, issue 29), computed exactly across the lanes of each
warp: shuffles (with widths), votes, cooperative groups, bit and math intrinsics; switch,
lambdas, references, cache hints; what nvcc refuses is refused in one line at its place."""

from __future__ import annotations

import math
import shutil
import struct
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import UNSET_BITS, elements, run

from sectorviz.model.errors import PatternError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

LANES = range(32)
BIG = {"a": {"dtype": "float32", "length": 1 << 16}}
HASH = "(i * 2654435761) % 4294967296"
VALUES = {"a": {"dtype": "float32", "length": 1 << 16},
          "v": {"dtype": "uint32", "length": 64, "values": {"kind": "expr", "expr": HASH}}}


def hashed(i: int) -> int:
    return (i * 2654435761) % 4294967296


def of_a(got: list) -> list[list[int]]:
    """The element lists of the stores (the accesses of `a`, not the loads of `v`)."""
    return [e for _, op, e in got if op == "store"]


def shuffle_source(kind: str, lane: int, k: int, width: int) -> int:
    """The lane a shuffle reads, as the PTX ISA's shfl.sync computes it: of the lane or offset
    operand only its low 5 bits count (bval = b[4:0]; the interpreter took the whole unsigned
    number, which differs for offsets past 31: up by -1 is up by 31)."""
    k &= 31
    first = lane // width * width
    if kind == "idx":
        return first + k % width
    if kind == "up":
        return lane - k if lane - k >= first else lane
    if kind == "down":
        return lane + k if lane + k < first + width else lane
    return lane ^ k if (lane ^ k) < first + width else lane


SHUFFLES = {"idx": "__shfl_sync", "up": "__shfl_up_sync", "down": "__shfl_down_sync",
            "xor": "__shfl_xor_sync"}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["idx", "up", "down", "xor"]), st.sampled_from([1, 2, 4, 8, 16, 32]),
       st.integers(-3, 40), st.booleans())
def test_shuffles_match_the_programming_guide(kind, width, k, per_lane):
    """k and the width are kernel parameters: 8 kernels, compiled once each."""
    operand = "(int)(threadIdx.x * k) % 37" if per_lane else "k"
    got = elements(f"""__global__ void k(float* a, int k, int w) {{
        int x = threadIdx.x * 3 + 1000;
        int y = {SHUFFLES[kind]}(0xffffffff, x, {operand}, w);
        a[y] = 0;
    }}""", arrays=BIG, params={"k": k, "w": width})
    ks = [int(math.fmod(t * k, 37)) if per_lane else k for t in LANES]  # C's % truncates
    assert got == [(4, "store", [shuffle_source(kind, t, ks[t], width) * 3 + 1000
                                 for t in LANES])]


def test_votes_see_only_active_member_lanes():
    got = elements("""__global__ void k(float* a) {
        unsigned t = threadIdx.x;
        if (t < 20) {
            unsigned b = __ballot_sync(0x00ffffff, t % 3 == 0);
            unsigned m = __activemask();
            int any = __any_sync(0xffffffff, t == 19), all = __all_sync(0xffffffff, t < 20);
            int none = __any_sync(0xffffffff, t > 25);  // lanes 20.. are in no vote
            a[b & 0xffff] = 0;
            a[(b >> 16) + 4 * (m >> 16)] = 0;
            a[40000 + 8 * any + 4 * all + 2 * none] = 0;
        }
    }""", arrays=BIG)
    ballot = sum(1 << t for t in range(20) if t % 3 == 0)
    active = (1 << 20) - 1
    assert [e for _, _, e in got] == [[ballot & 0xffff] * 20,
                                      [(ballot >> 16) + 4 * (active >> 16)] * 20,
                                      [40000 + 8 + 4] * 20]


def test_bit_intrinsics_match_python_integers():
    got = elements("""__global__ void k(float* a, const unsigned* v) {
        unsigned x = v[threadIdx.x];
        unsigned long long y = ((unsigned long long)x << 20) | 1;
        a[__popc(x)] = 0;
        a[100 + __clz(x >> (threadIdx.x % 32))] = 0;
        a[200 + __ffs(x & 0xfff0)] = 0;
        a[300 + (__brev(x) >> 22)] = 0;
        a[2000 + __popcll(y) + __clzll(y) + __ffsll(y << 3)] = 0;
    }""", arrays=VALUES)
    xs = [hashed(t) for t in LANES]
    ys = [(x << 20) | 1 for x in xs]
    assert of_a(got) == [
        [bin(x).count("1") for x in xs],
        [100 + 32 - (x >> t).bit_length() for t, x in enumerate(xs)],
        [200 + (x & 0xfff0 & -(x & 0xfff0)).bit_length() for x in xs],
        [300 + (int(f"{x:032b}"[::-1], 2) >> 22) for x in xs],
        [2000 + bin(y).count("1") + 64 - y.bit_length() + 4 for y in ys]]


def test_integer_math_on_every_width():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        long long big = -5000000000LL + t;
        unsigned u = umin(4000000000u, (unsigned)t * 100u);
        a[abs(t - 16) + max(t, 20) + min((short)t, (short)3)] = 0;
        a[1000 + (int)(llabs(big) - 4999999900LL) + (int)(u % 7) + __mulhi(t << 28, 16)] = 0;
    }""", arrays=BIG)
    assert [e for _, _, e in got] == [
        [abs(t - 16) + max(t, 20) + min(t, 3) for t in LANES],
        [1000 + (5000000000 - t - 4999999900) + (t * 100) % 7
         + ((((t << 28) + 2**31) % 2**32) - 2**31) * 16 // 2**32 for t in LANES]]


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def test_float_math_rounding_and_bits():
    got = elements("""__global__ void k(float* a) {
        float x = threadIdx.x * 0.25f - 4.0f;
        a[__float2int_rn(x) + 10] = 0;
        a[100 + (int)roundf(x) + 10] = 0;
        a[200 + (int)truncf(x) + 10] = 0;
        a[300 + lrintf(x * 2.0f) + 20] = 0;
        a[400 + (int)(__saturatef(x / 2.0f) * 4.0f)] = 0;
        a[500 + (int)fmodf(x + 5.0f, 1.5f) * 10 + (int)sqrtf(threadIdx.x * threadIdx.x)] = 0;
        a[1000 + (__float_as_int(x) >> 20 & 0x7ff)] = 0;
        a[4000 + (int)(__int_as_float(0x3f800000 + (int)threadIdx.x) * 10.0f)] = 0;
        a[5000 + __float2int_rz(exp2f(x)) + __float2int_rd(log2f(threadIdx.x + 1.0f))] = 0;
    }""", arrays=BIG)
    xs = [t * 0.25 - 4.0 for t in LANES]
    bits = [struct.unpack("i", struct.pack("f", x))[0] for x in xs]
    assert [e for _, _, e in got] == [
        [round(x) + 10 for x in xs],  # Python rounds half to even, as __float2int_rn
        [100 + int(math.copysign(math.floor(abs(x) + 0.5), x)) + 10 for x in xs],
        [200 + int(x) + 10 for x in xs],
        [300 + round(2 * x) + 20 for x in xs],
        [400 + int(min(max(x / 2, 0), 1) * 4) for x in xs],
        [500 + int(math.fmod(x + 5, 1.5)) * 10 + t for t, x in enumerate(xs)],
        [1000 + (b >> 20 & 0x7ff) for b in bits],
        [4000 + int(f32(struct.unpack("f", struct.pack("i", 0x3f800000 + t))[0]) * 10)
         for t in LANES],
        [5000 + int(2.0 ** x) + math.floor(math.log2(t + 1)) for t, x in enumerate(xs)]]


def test_float_errors_are_ieee_values_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = elements("""__global__ void k(float* a) {
            float inf = 1.0f / 0.0f;
            float x = threadIdx.x / (float)(threadIdx.x % 2);
            float nan = sqrtf(-1.0f) + logf(-(float)threadIdx.x);
            int r = __float2int_rn(__fdividef(1.0f, 0.0f));
            a[(x > 1e30f) + 2 * (inf > 1e30f) + 4 * (nan != nan) + 8 * (r == 2147483647)
              + 16 * (erff(x) <= 1.0f)] = 0;
        }""", arrays=BIG)
    # lane 0 divides 0 by 0 (NaN), even lanes x / 0 (infinity), erff(NaN) is NaN
    assert of_a(got) == [[(t % 2 == 0 and t > 0) + 2 + 4 + 8 + 16 * (t != 0) for t in LANES]]


def test_sincos_writes_through_its_pointers():
    got = elements("""__global__ void k(float* a) {
        float s, c;
        sincosf(threadIdx.x * 0.1f, &s, &c);
        a[(int)(s * 1000.0f) + 2000] = 0;
        a[(int)(c * 1000.0f) + 2000] = 0;
    }""", arrays=BIG)
    xs = [np.float32(t) * np.float32(0.1) for t in LANES]
    # -G calls the math library's sincosf, whose slow path (no lane takes it here) reads a
    # table: only the two stores of `a` run (SINCOS in test_golden_as_written)
    assert [(line, e) for line, op, e in got if op == "store"] == [
        (4, [int(np.float32(np.sin(x)) * np.float32(1000)) + 2000 for x in xs]),
        (5, [int(np.float32(np.cos(x)) * np.float32(1000)) + 2000 for x in xs])]


# ------------------------------------------------------------------ cooperative groups

CG = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
"""


@UNSET_BITS
def test_group_ranks_and_sizes_in_a_2d_block():
    got = elements(CG + """__global__ void k(float* a) {
        cg::thread_block block = cg::this_thread_block();
        cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
        auto half = cg::tiled_partition(block, 16);
        block.sync();
        a[block.thread_rank() * 4 + tile.thread_rank() % 4] = 0;
        a[1000 + tile.meta_group_rank() * 100 + tile.meta_group_size() + half.size()] = 0;
        a[3000 + block.size() + block.group_index().x + block.thread_index().y * 10] = 0;
    }""", arrays=BIG, grid=(2,), block=(8, 6))
    stores = of_a(got)
    assert stores == [[r * 4 + r % 8 % 4 for r in LANES],
                      [1000 + (r // 8) * 100 + 6 + 16 for r in LANES],
                      [3000 + 48 + 0 + (r // 8) * 10 for r in LANES]]


def test_tile_shuffles_votes_and_reduce():
    got = elements(CG + """
    __device__ int tile_sum(cg::thread_block_tile<16> g, int v) {
        for (int d = g.size() / 2; d > 0; d /= 2) v += g.shfl_down(v, d);
        return v;
    }
    __global__ void k(float* a, const unsigned* v) {
        auto block = cg::this_thread_block();
        auto tile = cg::tiled_partition<16>(block);
        int x = v[threadIdx.x] % 1000;
        int manual = tile.shfl(tile_sum(tile, x), 0);
        int total = cg::reduce(tile, x, cg::plus<int>());
        int top = cg::reduce(tile, x, cg::greater<int>());
        int low = cg::reduce(tile, x, cg::less<int>{});
        unsigned b = tile.ballot(x % 2 == 0);
        a[manual] = 0;
        a[total] = 0;
        a[20000 + top + low] = 0;
        a[40000 + (b & 0xffff) % 10000 + tile.any(x > 990) * 10000 + tile.all(x >= 0) * 20000]
            = 0;
    }""", arrays=VALUES)
    got = of_a(got)
    xs = [hashed(t) % 1000 for t in LANES]
    halves = [xs[:16], xs[16:]]
    sums = [sum(h) for h in halves for _ in range(16)]
    ballots = [sum(1 << i for i, x in enumerate(h) if x % 2 == 0) for h in halves]
    assert got == [sums, sums, [20000 + max(h) + min(h) for h in halves for _ in range(16)],
                   [40000 + b % 10000 + any(x > 990 for x in h) * 10000 + 20000
                    for b, h in zip(ballots, halves) for _ in range(16)]]


def test_reduce_intrinsics_and_shuffle_of_partial_warps():
    got = elements("""__global__ void k(float* a) {
        unsigned t = threadIdx.x;
        if (t % 4 != 3) {
            int s = __reduce_add_sync(0xffffffff, (int)t);
            unsigned m = __reduce_max_sync(0x0000ffff, t);
            a[s + m] = 0;
        }
    }""", arrays=BIG)
    # the masks name lanes that take no part (t % 4 == 3; lanes 16.. run a max over 0..15):
    # undefined on a GPU; the reading combines the active lanes of each lane's mask
    active = [t for t in LANES if t % 4 != 3]
    assert of_a(got) == [[sum(active) + max(t for t in active if t < 16)] * len(active)]


@UNSET_BITS
def test_cooperative_groups_used_unqualified():
    got = elements("""#include <cooperative_groups.h>
    #include <cooperative_groups/reduce.h>
    using namespace cooperative_groups;
    __global__ void k(float* a) {
        thread_block block = this_thread_block();
        thread_block_tile<8> tile = tiled_partition<8>(block);
        sync(block);
        a[reduce(tile, (int)threadIdx.x, plus<int>()) + 100 * tile.meta_group_rank()] = 0;
    }""", arrays=BIG)
    assert of_a(got) == [[sum(range(t // 8 * 8, t // 8 * 8 + 8)) + 100 * (t // 8)
                          for t in LANES]]


# ------------------------------------------------------------------ statements and calls


def test_switch_with_fall_through_default_and_break_in_loops():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        int r = 0;
        for (int i = 0; i < 3; i++) {
            switch ((t + i) % 5) {
            case 0: r += 1;
            case 1: r += 10; break;
            case 3: continue;
            default: r += 100;
            }
            r += 1000;
        }
        a[r] = 0;
    }""", arrays=BIG)

    def reference(t):
        r = 0
        for i in range(3):
            c = (t + i) % 5
            if c == 3:
                continue
            r += {0: 11, 1: 10}.get(c, 100) + 1000
        return r
    assert got == [(13, "store", [reference(t) for t in LANES])]


def test_nested_loops_break_continue_do_while_and_early_return():
    got = elements("""__global__ void k(float* a) {
        int t = threadIdx.x;
        if (t == 31) return;
        int n = 0;
        for (int i = 0; i < 6; i++) {
            if (i == t % 4) continue;
            int j = 0;
            do {
                if (j > i) break;
                n += j;
                j++;
            } while (true);
            if (n > 20 + t) break;
        }
        a[n] = 0;
    }""", arrays=BIG)

    def reference(t):
        n = 0
        for i in range(6):
            if i == t % 4:
                continue
            n += sum(range(i + 1))
            if n > 20 + t:
                break
        return n
    assert got == [(15, "store", [reference(t) for t in range(31)])]


def test_recursion_runs():
    """The interpreter refused recursion; -G calls f out of line, and the PTX engine runs
    the calls: f(2) = f(1) = f(0) = 0."""
    got = elements("__device__ int f(int n) { return n ? f(n - 1) : 0; }\n"
                   "__global__ void k(float* a) { a[f(2) + threadIdx.x] = 0; }")
    assert got == [(2, "store", list(LANES))]


def test_lambdas_reference_parameters_and_hinted_accesses():
    got = elements("""
    __device__ void bump(int &x, float &slot, int by) { x += by; slot = 0.0f; }
    __global__ void k(float* a, const unsigned* v) {
        int t = threadIdx.x;
        int base = 10;
        auto at = [&](int j) { return j * 2 + base; };
        auto twice = [=](int j) -> int { return at(j) + at(j); };
        int x = at(t);
        bump(x, a[5000 + t], 3);
        float w = __ldg(&a[t]) + __ldcs(a + 64) + __ldcg(&a[t]) + __ldca(a) + __ldlu(a)
                  + __ldcv(a);
        __stcs(&a[200 + x], w);
        __stwt(a + 300 + twice(t), w);
        __stcg(&a[t], 1.0f); __stwb(&a[t], 2.0f);
        printf("%d\\n", t);
        assert(t >= 0);
        a[6000 + (int)static_cast<unsigned>(v[t] % 3) + (int)(float)x] = 0;
    }""", arrays=VALUES)
    on = {}
    for line, op, e in got:
        on.setdefault((line, op), []).append(e)
    assert on[(2, "store")] == [[5000 + t for t in LANES]]  # slot, through the reference
    # the six hinted loads, in the order written: five at line 10, __ldcv at line 11 (-G
    # calls each hint's wrapper in the CUDA header, its ld.global.nc / .cs / ... at the call)
    assert on[(10, "load")] == [list(LANES), [64] * 32, list(LANES), [0] * 32, [0] * 32]
    assert on[(11, "load")] == [[0] * 32]
    assert on[(12, "store")] == [[200 + 2 * t + 13 for t in LANES]]
    assert on[(13, "store")] == [[300 + 4 * t + 20 for t in LANES]]
    assert on[(14, "store")] == [list(LANES), list(LANES)]
    assert got[-1] == (17, "store", [6000 + hashed(t) % 3 + 2 * t + 13 for t in LANES])


@pytest.mark.parametrize("body, message", [
    ("float t = tex2D<float>(obj, 0, 0);", 'line 2, column 32: identifier "obj" is undefined'),
    ("nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;",
     "line 2, column 9: name followed by \"::\" must be a class or namespace name"),
    ("switch (threadIdx.x) { case 1: continue; }",
     "line 2, column 40: a continue statement may only be used within a loop"),
    ("float x = sqrtf(1.0f, 2.0f);", "line 2, column 31: too many arguments in function call"),
    # the warp functions without a mask (before CUDA 9) are gone from CUDA 13's headers
    ("int y = __shfl_down(1, 2, 8);", 'line 2, column 17: identifier "__shfl_down" is undefined'),
])
def test_what_nvcc_refuses_is_refused_in_one_line_at_its_line_and_column(body, message):
    """The interpreter refused what its subset lacked; now nvcc refuses what is not CUDA, at
    the place in the pattern's kernel.code (its own -G code runs inline PTX, clusters and
    any shuffle width, so those are no refusals any more)."""
    with pytest.raises(PatternError) as info:
        run(f"__global__ void k(float* a) {{\n        {body} a[0] = 0;\n}}")
    text = str(info.value)
    assert text.startswith("kernel.code ") and message in text and "\n" not in text


def test_shuffle_width_may_be_a_run_time_value():
    got = elements("""__global__ void k(float* a, int width) {
        int x = threadIdx.x * 3 + 1000;
        a[__shfl_up_sync(0xffffffff, x, 1, width)] = 0;
        a[__shfl_xor_sync(0xffffffff, x, 1, blockDim.x / 8)] = 0;
    }""", arrays=BIG, params={"width": 4})
    assert [e for _, _, e in got] == [
        [shuffle_source("up", t, 1, 4) * 3 + 1000 for t in LANES],
        [shuffle_source("xor", t, 1, 4) * 3 + 1000 for t in LANES]]


@pytest.mark.xfail(raises=PatternError, strict=True,
                   reason="engine gap (test-0037 in test_golden_as_written): a shuffle whose "
                          "lane depends on unknown data is refused even where the value it "
                          "reads decides no address")
def test_collectives_of_unknown_data_are_unknown_until_they_decide_an_address():
    got = elements("""__global__ void k(float* a) {
        unsigned b = __ballot_sync(0xffffffff, a[threadIdx.x] > 0);
        float v = __shfl_sync(0xffffffff, a[threadIdx.x], (int)a[0]);
        a[threadIdx.x] = v + __popc(b);
    }""")
    assert sorted((line, op, e) for line, op, e in got) == [
        (2, "load", list(LANES)), (3, "load", [0] * 32), (3, "load", list(LANES)),
        (4, "store", list(LANES))]


def test_an_address_decided_by_a_collective_of_unknown_data_is_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        run("__global__ void k(float* a) {\n"
            "    a[__popc(__ballot_sync(~0u, a[threadIdx.x] > 0))] = 0;\n}")
    text = str(info.value)
    assert text.startswith("line 2, column 5: the address of ") and "\n" not in text
    assert "depends on data loaded by 'line 2: a[threadIdx.x], ld.f32'" in text


def test_remainder_rounds_the_quotient_to_nearest_even():
    got = elements("""__global__ void k(float* a) {
        float x = threadIdx.x * 0.5f;
        a[100 + (int)(remainderf(x, 2.0f) * 4.0f)] = 0;
    }""", arrays=BIG)
    xs = [t * 0.5 for t in LANES]
    assert of_a(got) == [[100 + int((x - 2.0 * round(x / 2.0)) * 4) for x in xs]]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=32, max_size=32),
       st.lists(st.booleans(), min_size=32, max_size=32), st.integers(0, 2**32 - 1))
def test_votes_match_a_lane_by_lane_reference(active, pred, member):
    """Lanes where `active` run the vote; `pred` is each lane's predicate (kernel parameters:
    one compile). A lane that votes is in its membermask (PTX: a vote.sync is undefined for
    a thread outside it); the mask may name more lanes, which take no part unless active."""
    bits = lambda flags: sum(1 << i for i, f in enumerate(flags) if f)  # noqa: E731
    got = elements("""__global__ void k(float* a, unsigned on, unsigned pr, unsigned member) {
        unsigned t = threadIdx.x;
        if ((on >> t) & 1) {
            bool p = (pr >> t) & 1;
            unsigned b = __ballot_sync(member, p);
            a[b & 0xffff] = 0;
            a[65536 + (b >> 16)] = 0;
            a[200000 + __any_sync(member, p) + 2 * __all_sync(member, p)] = 0;
        }
    }""", arrays={"a": {"dtype": "float32", "length": 200004}},
        params={"on": bits(active), "pr": bits(pred), "member": member | bits(active)})
    lanes = [t for t in LANES if active[t]]
    voters = lanes
    ballot = sum(1 << t for t in voters if pred[t])
    assert [e for _, _, e in got] == ([] if not lanes else [
        [ballot & 0xffff] * len(lanes), [65536 + (ballot >> 16)] * len(lanes),
        [200000 + any(pred[t] for t in voters) + 2 * all(pred[t] for t in voters)]
        * len(lanes)])


# ------------------------------------------------------------------ half and bfloat16

HALF_CODE = """#include "cuda_fp16.h"
__global__ void k(const __half *h, float *out) {
    int i = threadIdx.x;
    half2 a = __halves2half2(h[i], h[i + 32]), b = __halves2half2(h[i + 64], h[i + 96]);
    half2 s = a * b + a;
    half2 f = __hfma2(a, b, a);
    half2 d = __h2div(__hsub2(a, b), __hadd2(b, b));
    __half m = __hmul(__low2half(a), __high2half(d));
    out[256 + (int)(__low2float(s) * 16.0f) % 64] = 0;
    out[256 + (int)(__high2float(f) * 16.0f) % 64] = 0;
    out[256 + (int)(__low2float(d) * 16.0f) % 64] = 0;
    out[256 + (int)(__half2float(m) * 16.0f) % 64] = 0;
}"""
HALF_EXPR = "(i * 7) % 13 - 5"


def half_index(x: np.float16) -> int:
    """256 + (int)(x * 16.0f) % 64 as the GPU computes it (cvt.rzi.s32.f32 saturates; NaN
    is 0)."""
    with np.errstate(invalid="ignore"):
        v = np.float32(x) * np.float32(16)
    v = 0 if np.isnan(v) else int(np.clip(np.trunc(np.float64(v)), -2**31, 2**31 - 1))
    return 256 + int(np.fmod(v, 64))


def test_half2_operators_and_intrinsics_round_each_component_once():
    h = np.array([(i * 7) % 13 - 5 for i in range(128)], dtype=np.float16)
    got = elements(HALF_CODE, arrays={"h": {"dtype": "float16", "length": 128,
                                            "values": {"kind": "expr", "expr": HALF_EXPR}},
                                      "out": {"dtype": "float32", "length": 512}})
    want: list[list[int]] = [[], [], [], []]
    for t in LANES:
        a, b = (h[t], h[t + 32]), (h[t + 64], h[t + 96])
        s = [np.float16(np.float16(x * y) + x) for x, y in zip(a, b)]
        f = [np.float16(np.float64(x) * np.float64(y) + np.float64(x)) for x, y in zip(a, b)]
        with np.errstate(divide="ignore", invalid="ignore"):
            d = [np.float16(np.float16(x - y) / np.float16(y + y)) for x, y in zip(a, b)]
        with np.errstate(invalid="ignore"):
            m = np.float16(a[0] * d[1])
        for k, v in enumerate((s[0], f[1], d[0], m)):
            want[k].append(half_index(v))
    assert of_a(got) == want
    assert (h[64:96] == 0).any()  # some lanes divide by zero above


def test_arithmetic_of_mismatched_packed_types_is_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        elements("""#include "cuda_fp16.h"
        __global__ void k(float *a) {
            half2 x = __float2half2_rn(1.0f); float2 y = make_float2(1.0f, 2.0f);
            a[(int)__low2float(__hadd2(x, y))] = 0;
        }""")
    text = str(info.value)
    assert text.startswith("kernel.code line 4, column ") and "\n" not in text


def bf16_reference(x: float) -> float:
    """x rounded to bfloat16 by its bits: float32, then the top 16 bits, ties to even (what
    __float2bfloat16 and bf16 arithmetic do for finite values)."""
    bits = int(np.array(x, dtype=np.float32).view(np.uint32))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


BF16_CODE = """#include "cuda_bf16.h"
__global__ void k(float *out) {
    float x = 1.0f + threadIdx.x / 128.0f;
    __nv_bfloat16 a = __float2bfloat16(1.5f), b = __float2bfloat16(x);
    __nv_bfloat16 zero = __float2bfloat16(0.0f);
    out[(int)(__bfloat162float(a * b) * 256.0f) - 300] = 0;
    out[(int)(__bfloat162float(__hmul(a, b)) * 256.0f) - 300] = 0;
    out[(int)(__bfloat162float(__hfma(a, b, zero)) * 256.0f) - 300] = 0;
    out[(int)(__bfloat162float(__float2bfloat16(x * 1.5f)) * 256.0f) - 300] = 0;
}"""


def test_bfloat16_results_round_to_8_significant_bits_ties_to_even():
    """x = 1 + k/128 (exact in bf16); 1.5 x needs 9 bits for odd k: the GPU rounds the tie
    to even (k = 1: 1.51171875 -> 1.515625, element 388 - 300, not 387 - 300)."""
    xs = [1 + k / 128 for k in LANES]
    got = elements(BF16_CODE, arrays={"out": {"dtype": "float32", "length": 1024}})
    want = [int(bf16_reference(1.5 * x) * 256) - 300 for x in xs]
    assert of_a(got) == [want] * 4
    assert want[1] == 388 - 300
