"""Calls of `.func` bodies (model/ptx/calls.py): a `__noinline__` device function counts as
the same function inlined, on the lane path and in closed forms; a debug compile (-G), which
keeps device functions out of line, counts as -O3 where the source makes the same accesses;
recursion runs up to its documented depth and is refused beyond it at the call's line."""

from __future__ import annotations

import pytest
from ptx_helpers import (
    DEBUG_FLAGS,
    analyze_compiled,
    assert_same,
    both,
    inline_pattern,
    lines_with,
    needs_nvcc,
    ptx_pattern,
)

from sectorviz.engine.ptx import calls
from sectorviz.engine.ptx.calls import MAX_CALL_DEPTH
from sectorviz.engine.ptx.parse import parse_module
from sectorviz.model.errors import PatternError

ARRAYS = {"a": {"dtype": "float32", "length": 4096},
          "out": {"dtype": "float32", "length": 4096}}

# the qualifier on a line of its own: every counted line reads the same in both compiles
GLOBAL_LOAD = """#define QUALIFIER {qualifier}
__device__ QUALIFIER float pick(const float* a, int i) { return a[i * 2]; }
__global__ void k(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pick(a, i);
}
"""
SHARED_READ = """#define QUALIFIER {qualifier}
__device__ QUALIFIER float neighbour(const float* tile, int t) { return tile[(t * 2) % 64]; }
__global__ void k(const float* a, float* out, int n) {
    __shared__ float tile[64];
    tile[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    out[threadIdx.x + blockIdx.x * blockDim.x] = neighbour(tile, threadIdx.x);
}
"""


def compiled(tmp_path, text: str, qualifier: str, **kwargs):
    folder = tmp_path / qualifier.strip("_")
    folder.mkdir()
    return inline_pattern(folder, text.replace("{qualifier}", qualifier), "k", ARRAYS,
                          {"n": 200}, grid=(4,), block=(64,), **kwargs)


def counts(analysis):
    """Requests and sectors of each global instruction, requests and wavefronts of each
    shared one, in program order (what a call must not change)."""
    return ([(s.requests, s.sectors) for s in analysis.instructions],
            [(s.requests, s.wavefronts) for s in analysis.shared])


@needs_nvcc
@pytest.mark.parametrize("text", [GLOBAL_LOAD, SHARED_READ], ids=["global", "shared"])
def test_a_noinline_function_counts_as_the_same_function_inlined(tmp_path, text):
    pattern, called = compiled(tmp_path, text, "__noinline__")
    assert any("call.uni" in line for line in lines_with(called.ptx, "call"))
    closed, spy, lanes = both(pattern, called)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps  # the closed forms ran every warp, calls included
    pattern, inline = compiled(tmp_path, text, "__forceinline__")
    assert not lines_with(inline.ptx, "call")
    inlined, _ = analyze_compiled(pattern, inline)
    assert counts(closed) == counts(inlined)
    if text is GLOBAL_LOAD:
        # 8 warps of 64-thread blocks; i < 200: warps 0-5 whole, warp 6 lanes 0-7, warp 7
        # none. a[2i]: a warp's 32 lanes span 256 bytes = 8 sectors; warp 6 reads a[384..398]
        # (64 bytes) = 2 sectors: 6 * 8 + 2 = 50. out[i]: 6 * 4 sectors + 1 = 25.
        assert counts(closed) == ([(7, 50), (7, 25)], [])
    else:
        # a[tid] and out[i]: 8 warps of 4 sectors; tile[tid] stores 1 wavefront a warp;
        # tile[(2t) % 64] reads words 0, 2, ..., 62: lanes t and t + 16 share a bank at
        # different words, 2 wavefronts a warp
        assert counts(closed) == ([(8, 32), (8, 32)], [(8, 8), (8, 16)])


@needs_nvcc
def test_a_debug_compile_counts_as_the_optimized_one(tmp_path):
    """-G keeps `pick` and `neighbour` out of line (call.uni) and reaches memory through
    generic ld / st: the same accesses as -O3, which inlines them."""
    text = """
    __device__ float pick(const float* a, int i) { return a[i * 2]; }
    __device__ float neighbour(const float* tile, int t) { return tile[(t * 2) % 64]; }
    __global__ void k(const float* a, float* out, int n) {
        __shared__ float tile[64];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = a[threadIdx.x];
        __syncthreads();
        if (i < n) out[i] = pick(a, i) + neighbour(tile, threadIdx.x);
    }
    """
    (tmp_path / "g").mkdir()
    pattern, debug = inline_pattern(tmp_path / "g", text, "k", ARRAYS, {"n": 200},
                                    grid=(4,), block=(64,), flags=DEBUG_FLAGS)
    assert len([line for line in lines_with(debug.ptx, "call.uni")]) == 2
    closed, spy, lanes = both(pattern, debug)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    pattern, optimized = inline_pattern(tmp_path, text, "k", ARRAYS, {"n": 200},
                                        grid=(4,), block=(64,))
    o3, _ = analyze_compiled(pattern, optimized)
    # a[tid] 8 warps x 4 sectors, a[2i] 50 and out[i] 25 (as above); tile[tid] 8
    # wavefronts; tile[(2t) % 64] under i < n: warps 0-5 2 wavefronts each, warp 6's lanes
    # 0-7 read words 0, 2, ..., 14 (8 banks) in 1: 13
    assert counts(closed) == counts(o3) == ([(8, 32), (7, 50), (7, 25)], [(8, 8), (7, 13)])
    assert closed.totals == o3.totals and closed.shared_totals == o3.shared_totals


RECURSIVE = """
__device__ __noinline__ float sum(const float* a, int n) {
    return n <= 0 ? 0.0f : a[n * 32 + threadIdx.x] + sum(a, n - 1);
}
__global__ void k(const float* a, float* out, int n) {
    out[threadIdx.x] = sum(a, n);
}
"""


@needs_nvcc
def test_recursion_runs_within_its_depth(tmp_path):
    pattern, recursive = inline_pattern(tmp_path, RECURSIVE, "k", ARRAYS, {"n": 3},
                                        block=(64,))
    closed, spy, lanes = both(pattern, recursive)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    # sum(a, 3) loads a[96 + t], a[64 + t], a[32 + t] (then n = 0 returns): 3 loads per warp,
    # 2 warps, 4 sectors each; the copies 4 to 8 deep never run
    loads = [(s.requests, s.sectors) for s in closed.instructions if s.op == "load"]
    assert loads == [(2, 8)] * 3 + [(0, 0)] * (MAX_CALL_DEPTH - 3)


@needs_nvcc
def test_recursion_deeper_than_the_limit_is_refused_at_the_call(tmp_path):
    pattern, recursive = inline_pattern(tmp_path, RECURSIVE, "k", ARRAYS, {"n": 20},
                                        block=(64,))
    with pytest.raises(PatternError) as err:
        analyze_compiled(pattern, recursive)
    assert err.value.place == "line 3"  # the recursive call, nested 9 deep
    message = err.value.message
    assert "\n" not in message and f"{MAX_CALL_DEPTH} deep at most" in message
    assert "call.uni" in message


CALLS = """
.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 func_retval0) spread(.param .b32 spread_param_0)
{
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    ld.param.u32 %r1, [spread_param_0];
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra $L_small;
    shl.b32 %r2, %r1, 4;
    st.param.b32 [func_retval0+0], %r2;
    ret;
$L_small:
    st.param.b32 [func_retval0+0], %r1;
    ret;
}
.visible .entry t(.param .u64 t_param_0)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [t_param_0];
    mov.u32 %r1, %tid.x;
    mov.u32 %r3, %r1;
    setp.lt.u32 %p1, %r1, 8;
    { .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    @%p1 call (retval0), spread, (param0);
    @%p1 ld.param.b32 %r3, [retval0+0];
    }
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}
"""


def test_a_guarded_call_whose_lanes_return_apart_counts_each_lane_where_it_went():
    """Lanes 0-7 call `spread` (`@%p1 call`: a divergent call), whose own %r1 and %p1 are
    not the caller's: it returns t for t < 4 by one ret, 16 t by the other; lanes 8-31 skip
    it and keep t. The store's words: 0-3 (sector 0), 64, 80, 96, 112 (bytes 256, 320, 384,
    448: sectors 8, 10, 12, 14) and 8-31 (bytes 32-127: sectors 1-3): 8 sectors."""
    module = parse_module(CALLS)
    call = next(i for i in module.entries["t"].instructions if i.op == "call")
    assert [o.kind for o in call.operands] == ["sym", "vec", "vec"]
    assert [p.name for p in call.operands[2].parts] == [
        next(v.name for v in module.entries["t"].variables if v.name.startswith("param0"))]
    pattern, ptx = ptx_pattern(CALLS, "t", ("out",), {"out": {"dtype": "uint32",
                                                              "length": 128}})
    closed, spy, lanes = both(pattern, ptx)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    assert counts(closed) == ([(1, 8)], [])


def test_a_call_past_the_inlined_size_is_refused_where_it_runs(monkeypatch):
    """With room for 5 inlined instructions, `spread` (9) stays a call, refused in one line
    when lanes 0-7 reach it."""
    monkeypatch.setattr(calls, "MAX_INLINED", 5)
    pattern, ptx = ptx_pattern(CALLS, "t", ("out",), {"out": {"dtype": "uint32",
                                                              "length": 128}})
    with pytest.raises(PatternError) as err:
        analyze_compiled(pattern, ptx)
    assert "past 5 inlined PTX instructions" in err.value.message
    assert "@%p1 call (retval0), spread, (param0)" in err.value.message


@needs_nvcc
def test_a_debug_compile_reaches_a_captured_variable_through_the_frame(tmp_path):
    """-G keeps `base` and the lambda (holding &base) in the frame and calls the lambda out
    of line: its generic loads of the captured pointer and of `base` through it land in
    local memory, counted there (not refused as a generic access the PTX does not show)."""
    text = """
    __global__ void k(const float* a, float* out, int n) {
        int base = 10;
        auto at = [&](int j) { return j * 2 + base; };
        out[at(threadIdx.x)] = 0.0f;
    }
    """
    pattern, debug = inline_pattern(tmp_path, text, "k", ARRAYS, {"n": 200}, flags=DEBUG_FLAGS)
    assert lines_with(debug.ptx, "call.uni")
    result, _ = analyze_compiled(pattern, debug)
    # out[2t + 10], t = 0..31: bytes 40 + 8t, 40..291: sectors 1..9
    assert [(s.requests, s.sectors) for s in result.instructions] == [(1, 9)]
    # local words interleave across the 32 lanes: a 4-byte slot of every lane is 128 bytes
    # (4 sectors), an 8-byte one 256 (8): st base, st the lambda's &base, and in the lambda
    # ld &base, ld base
    local = [(s.op, s.requests, s.sectors) for s in result.local]
    assert sorted(local) == sorted([("store", 1, 4), ("store", 1, 8), ("load", 1, 8),
                                    ("load", 1, 4)])
