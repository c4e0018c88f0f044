"""Asynchronous copies (cuda::memcpy_async, cooperative_groups::memcpy_async) and barriers:
global loads and shared stores in chunks, checked against a lane-by-lane reference."""

from __future__ import annotations

import pytest
from cuda_helpers import elements, kernel_pattern, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.cuda.shared import shared_analysis
from sectorviz.model.errors import PatternError

HEAD = """#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
"""


def sectors(addresses: list[int], width: int) -> int:
    """Distinct 32-byte sectors the bytes [a, a + width) of the addresses touch."""
    return len({b // 32 for a in addresses for b in range(a, a + width)})


def group_copy_reference(warps: int, block: int, group: int, count: int, width: int,
                         base) -> tuple[int, int]:
    """(requests, sectors) of a group copy of `count` bytes in `width`-byte chunks: chunk c
    to the thread of rank c % group in round c // group; `base(thread)` is the source
    byte address the thread's group copies from."""
    requests = total = 0
    chunks = count // width
    for w in range(warps):
        threads = [w * 32 + lane for lane in range(32)]
        rounds = -(-chunks // group)
        for r in range(rounds):
            addrs = [base(t) + (r * group + t % block % group) * width for t in threads
                     if r * group + t % block % group < chunks]
            if addrs:
                requests += 1
                total += sectors(addrs, width)
    return requests, total


DOUBLE_BUFFERED = HEAD + """
template <int BM, int BK, typename Bar>
__device__ void load_tile(int K, const float *A, float *As, int row, int col, Bar &bar) {
  for (int j = 0; j < 4; j++)
    cuda::memcpy_async(&As[(col * 4 + j) * BM + row], &A[row * K + col * 4 + j],
                       cuda::aligned_size_t<sizeof(float)>(sizeof(float)), bar);
}

template <int BM, int BK>
__global__ void tiles(int K, const float *A, const float4 *B, float *C) {
  auto block = cg::this_thread_block();
  __shared__ cuda::barrier<cuda::thread_scope::thread_scope_block> front, back;
  __shared__ float As[2 * BM * BK];
  __shared__ float4 Bs[2 * 64];
  auto frontPtr = &front;
  auto backPtr = &back;
  if (block.thread_rank() == 0) {
    init(&front, block.size());
    init(&back, block.size());
  }
  __syncthreads();
  const int row = threadIdx.x / (BK / 4), col = threadIdx.x % (BK / 4);
  A += blockIdx.x * BM * K;
  int buf = 0;
  load_tile<BM, BK>(K, A, As, row, col, *frontPtr);
  for (int k = 0; k < K - BK; k += BK) {
    load_tile<BM, BK>(K, A + BK, As + (1 - buf) * BM * BK, row, col, (*backPtr));
    cuda::memcpy_async(&Bs[threadIdx.x % 64], &B[k / BK * 64 + threadIdx.x % 64],
                       cuda::aligned_size_t<16>(sizeof(float4)), *backPtr);
    (*frontPtr).arrive_and_wait();
    C[blockIdx.x * 64 + threadIdx.x] += As[buf * BM * BK + threadIdx.x];
    A += BK;
    buf = 1 - buf;
    auto tmp = frontPtr;
    frontPtr = backPtr;
    backPtr = tmp;
  }
  frontPtr->arrive_and_wait();
}
"""


def test_per_thread_copies_are_loads_and_shared_stores_of_their_chunks():
    K, BM, BK = 64, 16, 16
    arrays = {"A": {"dtype": "float32", "length": 4 * BM * K},
              "B": {"dtype": "float4", "length": 64 * 4},
              "C": {"dtype": "float32", "length": 4 * 64}}
    code = DOUBLE_BUFFERED
    p = kernel_pattern(code, function=f"tiles<{BM}, {BK}>", arrays=arrays,
                       params={"K": K}, grid=(4,), block=(64,))
    a, kernel = run(code, function=f"tiles<{BM}, {BK}>", arrays=arrays, params={"K": K},
                    grid=(4,), block=(64,))
    names = [(ins.name, ins.op, ins.width) for ins in kernel.instructions]
    assert names == [
        ("line 8: &A[row * K + col * 4 + j]", "load", 4),
        ("line 31: &B[k / BK * 64 + threadIdx.x % 64]", "load", 16),
        ("line 34: C[blockIdx.x * 64 + threadIdx.x] (load)", "load", 4),
        ("line 34: C[blockIdx.x * 64 + threadIdx.x] (store)", "store", 4)]
    tiles = K // BK  # one before the loop, one per iteration
    a_requests = a_sectors = 0
    for block in range(4):
        for tile in range(tiles):
            for warp in range(2):
                for j in range(4):
                    addrs = [4 * (block * BM * K + tile * BK + (t // 4) * K + (t % 4) * 4 + j)
                             for t in range(warp * 32, warp * 32 + 32)]
                    a_requests += 1
                    a_sectors += sectors(addrs, 4)
    assert (a.instructions[0].requests, a.instructions[0].sectors) == (a_requests, a_sectors)
    b = a.instructions[1]
    assert (b.requests, b.sectors) == (4 * 2 * (tiles - 1), 4 * 2 * (tiles - 1) * 16)
    stores = {s.name: s for s in shared_analysis(p)}
    assert [ins.op for ins in kernel.shared_instructions] == ["store", "store", "load"]
    assert stores["line 8: &As[(col * 4 + j) * BM + row]"].requests == a_requests
    assert "LDGSTS" in a.boundaries[0].assumption


GROUP_COPY = HEAD + """
__global__ void k(const float *src, float *out, int n) {
  __shared__ float s[4096];
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<TILE>(block);
  float *dst = s + tile.meta_group_rank() * 64;
  const float *from = src + blockIdx.x * 4096 + tile.meta_group_rank() * 256;
  cg::memcpy_async(GROUP, dst, from, SIZE);
  cg::wait(GROUP);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
"""


@settings(max_examples=20, deadline=None)
@given(tile=st.sampled_from([8, 16, 32, 64, 128]), n=st.integers(1, 64),
       aligned=st.booleans(), block=st.sampled_from([64, 96, 128]))
def test_a_groups_copy_deals_consecutive_chunks_to_its_threads_in_rank_order(
        tile, n, aligned, block):
    if block % tile:
        tile = 32
    width = 16 if aligned else 4
    size = f"cuda::aligned_size_t<16>({n} * 16)" if aligned else f"{n} * sizeof(float4)"
    code = GROUP_COPY.replace("TILE", str(tile)).replace("GROUP", "tile").replace(
        "SIZE", size)
    arrays = {"src": {"dtype": "float32", "length": 2 * 4096},
              "out": {"dtype": "float32", "length": 2 * block}}
    a, kernel = run(code, arrays=arrays, params={"n": n}, grid=(2,), block=(block,))
    assert kernel.instructions[0].width == width
    warps = block // 32

    def base(t: int) -> int:
        return 4 * (t // block * 4096 + t % block // tile * 256)
    requests = total = 0
    for b in range(2):
        r, s = group_copy_reference(warps, block, tile, n * 16, width,
                                    lambda t, b=b: base(t + b * block))
        requests, total = requests + r, total + s
    assert (a.instructions[0].requests, a.instructions[0].sectors) == (requests, total)


def test_the_whole_blocks_copy_and_the_libcudacxx_group_form():
    code = HEAD + """
    __global__ void k(const double *src, double *out) {
      __shared__ double s[300];
      __shared__ cuda::barrier<cuda::thread_scope_block> bar;
      auto block = cg::this_thread_block();
      if (block.thread_rank() == 0) init(&bar, block.size());
      block.sync();
      cuda::memcpy_async(block, s, src + 3, sizeof(double) * 300, bar);
      bar.arrive_and_wait();
      out[threadIdx.x] = s[threadIdx.x];
    }"""
    arrays = {"src": {"dtype": "float64", "length": 512}, "out": {"dtype": "float64",
                                                                  "length": 96}}
    a, _ = run(code, arrays=arrays, block=(96,))
    # 2400 bytes in 8-byte chunks (a double's alignment): 300 chunks over 96 threads
    assert (a.instructions[0].requests, a.instructions[0].sectors) == \
        group_copy_reference(3, 96, 96, 2400, 8, lambda t: 24)


def test_memcpy_from_a_per_thread_array_into_a_struct():
    code = """
    struct Packed { uint4 lo, hi; };
    __global__ void k(uint4 *out) {
      unsigned int r[12] = {};
      for (int j = 0; j < 12; j++) r[j] = threadIdx.x * 12 + j;
      Packed p;
      memcpy(&p, r, sizeof(p));
      uint4 q;
      memcpy(&q, &r[8], sizeof(q));
      out[p.hi.y % 1024] = p.lo;
      out[q.w % 1024] = q;
    }"""
    arrays = {"out": {"dtype": "uint4", "length": 1024}}
    got = elements(code, arrays=arrays)
    assert got == [("line 10: out[p.hi.y % 1024]", [(t * 12 + 5) % 1024 for t in range(32)]),
                   ("line 11: out[q.w % 1024]", [(t * 12 + 11) % 1024 for t in range(32)])]


def test_tiles_wider_than_a_warp_rank_exactly_and_their_collectives_are_unknown():
    code = HEAD + """
    __global__ void k(const int *in, int *out) {
      __shared__ cg::block_tile_memory<256> scratch;
      auto block = cg::this_thread_block(scratch);
      auto tile = cg::tiled_partition<128>(block);
      int v = cg::reduce(tile, in[threadIdx.x], cg::plus<int>());
      out[tile.meta_group_rank() * 1000 + tile.thread_rank() * 3 % 1000] = v;
      if (tile.thread_rank() == tile.size() - 1) out[4000 + tile.meta_group_size()] = v;
    }"""
    arrays = {"in": {"dtype": "int32", "length": 256, "values": {"kind": "arange"}},
              "out": {"dtype": "int32", "length": 8192}}
    got = elements(code, arrays=arrays, block=(256,))
    assert got[0] == ("line 9: in[threadIdx.x]", list(range(32)))
    assert got[1] == ("line 10: out[tile.meta_group_rank() * 1000 + tile.thread_rank() * 3 "
                      "% 1000]", [t * 3 for t in range(32)])
    a, _ = run(code, arrays=arrays, block=(256,))
    assert a.instructions[2].requests == 2  # threads 127 and 255: the last of each tile
    assert "block_tile_memory scratch" in a.boundaries[0].assumption
    with pytest.raises(PatternError) as info:
        run(code.replace("out[4000 + tile.meta_group_size()]", "out[v]"), arrays=arrays,
            block=(256,))
    assert "cg::reduce returns over a tile of 128 threads" in str(info.value)


def test_unqualified_calls_see_their_own_namespace_first():
    code = """
    namespace wt { __device__ int pick(int i) { return i + 100; } }
    namespace { __device__ int pick(int i) { return i + 200; } }
    namespace db {
      __device__ int pick(int i) { return i + 300; }
      __device__ int twice(int i) { return pick(i) + 1; }
    }
    __global__ void k(float *a) {
      a[pick(threadIdx.x)] = 0;
      a[db::twice(threadIdx.x)] = 0;
      a[wt::pick(threadIdx.x)] = 0;
    }"""
    got = elements(code)
    assert [g[1][:2] for g in got] == [[200, 201], [301, 302], [100, 101]]


@pytest.mark.parametrize("body, message", [
    ("__shared__ cuda::barrier<cuda::thread_scope_block> b; b.arrive_and_wiat();",
     "arrive_and_wiat() of a cuda::barrier is outside the subset"),
    ("__shared__ float s[32]; cuda::memcpy_async(s, a, 4, 1, 2, 3);",
     "cuda::memcpy_async takes ([group,] dst, src, size, barrier)"),
    ("__shared__ float s[32]; int x = 0; "
     "cg::memcpy_async(cg::this_thread_block(), s, x, 4);", "needs a pointer into an array"),
    ("__shared__ float s[32]; cuda::memcpy_async(s, a, "
     "cuda::aligned_size_t<3>(6), 0);", "an alignment of 3 bytes"),
])
def test_copy_and_barrier_refusals_are_one_line(body, message):
    with pytest.raises(PatternError) as info:
        run(HEAD + f"__global__ void k(float* a) {{\n  {body}\n}}")
    text = str(info.value)
    assert message in text and "\n" not in text and text.startswith("line ")


def test_a_copy_that_is_not_whole_chunks_is_an_error_naming_the_lane():
    with pytest.raises(PatternError) as info:
        run(HEAD + """__global__ void k(float* a, int n) {
          __shared__ float s[64];
          cuda::memcpy_async(s, a, cuda::aligned_size_t<16>(n), 0);
        }""", params={"n": 20})
    assert "a copy of 20 bytes is not a whole number of its 16-byte chunks" in \
        str(info.value)


PIPELINE_HEAD = """#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
"""

STAGED = PIPELINE_HEAD + """
constexpr int kStages = 3;

template <int TILE>
__global__ void staged(const float *__restrict__ in, float *out, int tiles, int skip) {
  __shared__ alignas(alignof(float4)) float buf[kStages][TILE * 4];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  const auto chunk = cuda::aligned_size_t<alignof(float4)>(sizeof(float4));
  const float *base = in + (blockIdx.x * tiles * TILE + skip) * 4;
  int fetched = 0;
  for (int t = 0; t < tiles; ++t) {
    for (; fetched < tiles && fetched < t + kStages; ++fetched) {
      pipe.producer_acquire();
      if (threadIdx.x < TILE)
        cuda::memcpy_async(&buf[fetched % kStages][threadIdx.x * 4],
                           base + (fetched * TILE + threadIdx.x) * 4, chunk, pipe);
      pipe.producer_commit();
    }
    cuda::pipeline_consumer_wait_prior<kStages - 1>(pipe);
    __syncthreads();
    out[(blockIdx.x * tiles + t) * blockDim.x + threadIdx.x] =
        buf[t % kStages][threadIdx.x % (TILE * 4)];
    pipe.consumer_release();
    __syncthreads();
  }
}
"""


@settings(max_examples=15, deadline=None)
@given(tile=st.sampled_from([8, 24, 32, 48]), tiles=st.integers(1, 6), skip=st.integers(0, 5))
def test_a_thread_pipelines_copies_are_its_chunks_and_its_calls_move_nothing(tile, tiles, skip):
    arrays = {"in": {"dtype": "float32", "length": 2 * 6 * 48 * 4 + 32},
              "out": {"dtype": "float32", "length": 2 * 6 * 64}}
    a, kernel = run(STAGED, function=f"staged<{tile}>", arrays=arrays,
                    params={"tiles": tiles, "skip": skip}, grid=(2,), block=(64,))
    assert [(ins.op, ins.width) for ins in kernel.instructions] == \
        [("load", 16), ("store", 4)]
    requests = total = 0
    for block in range(2):
        for f in range(tiles):
            for warp in range(2):
                addrs = [16 * (block * tiles * tile + skip + f * tile + t)
                         for t in range(warp * 32, warp * 32 + 32) if t < tile]
                if addrs:
                    requests, total = requests + 1, total + sectors(addrs, 16)
    assert (a.instructions[0].requests, a.instructions[0].sectors) == (requests, total)
    assert a.instructions[1].requests == 2 * 2 * tiles  # the consumers' stores: no more


ROLES = PIPELINE_HEAD + """
__global__ void roles(const double *in, double *out, int tiles) {
  constexpr int stages = 2;
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  __shared__ double tile[stages][96];
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  const auto role = warp.meta_group_rank() == 0 ? cuda::pipeline_role::producer
                                                : cuda::pipeline_role::consumer;
  auto pipe = cuda::make_pipeline(block, &state, role);
  for (int t = 0; t < tiles; ++t) {
    if (role == cuda::pipeline_role::producer) {
      pipe.producer_acquire();
      cuda::memcpy_async(warp, tile[t % stages], in + (blockIdx.x * tiles + t) * 96 + 1,
                         sizeof(double) * 96, pipe);
      pipe.producer_commit();
    } else {
      pipe.consumer_wait();
      out[(blockIdx.x * tiles + t) * 96 + threadIdx.x - 32] = tile[t % stages][threadIdx.x - 32];
      pipe.consumer_release();
    }
  }
}
"""


@pytest.mark.parametrize("tiles", [1, 3])
def test_a_block_pipelines_producer_warp_copies_with_its_group(tiles):
    arrays = {"in": {"dtype": "float64", "length": 2 * 3 * 96 + 8},
              "out": {"dtype": "float64", "length": 2 * 3 * 96}}
    a, kernel = run(ROLES, function="roles", arrays=arrays, params={"tiles": tiles},
                    grid=(2,), block=(128,))
    requests = total = 0
    for block in range(2):
        for t in range(tiles):  # warp 0 copies 768 bytes in 8-byte chunks (a double's alignment)
            r, s = group_copy_reference(
                1, 128, 32, 768, 8, lambda _, block=block, t=t: 8 * ((block * tiles + t) * 96 + 1))
            requests, total = requests + r, total + s
    assert (a.instructions[0].requests, a.instructions[0].sectors) == (requests, total)
    assert (requests, a.instructions[1].requests) == (2 * tiles * 3, 2 * tiles * 3)
    # the shared state takes 16 bytes per stage and 8 more; the next array starts at 16 bytes
    assert kernel.program.shared["state"] == (0, 2 * 16 + 8)
    assert kernel.program.shared["tile"][0] == 48
    assert "pipeline_shared_state<scope, N> takes 16 N + 8 bytes" in \
        " ".join(b.assumption for b in a.boundaries)


def test_a_barriers_arrival_token_and_wait_order_only():
    code = PIPELINE_HEAD + """
    __global__ void k(const float *a, float *out) {
      __shared__ cuda::barrier<cuda::thread_scope_block> bar;
      __shared__ float s[64];
      if (threadIdx.x == 0) init(&bar, blockDim.x);
      __syncthreads();
      cuda::memcpy_async(s + threadIdx.x, a + threadIdx.x * 3, sizeof(float), bar);
      cuda::barrier<cuda::thread_scope_block>::arrival_token token = bar.arrive();
      bar.wait(std::move(token));
      auto again = bar.arrive();
      bar.wait(std::move(again));
      out[threadIdx.x] = s[63 - threadIdx.x];
    }"""
    a, _ = run(code, arrays={"a": {"dtype": "float32", "length": 256},
                             "out": {"dtype": "float32", "length": 64}}, block=(64,))
    addrs = [[12 * t for t in range(w * 32, w * 32 + 32)] for w in range(2)]
    assert (a.instructions[0].requests, a.instructions[0].sectors) == \
        (2, sum(sectors(x, 4) for x in addrs))
    assert (a.instructions[1].requests, a.instructions[1].sectors) == (2, 8)


@pytest.mark.parametrize("body, message", [
    ("auto pipe = cuda::make_pipeline(); pipe.producer_aquire();",
     "producer_aquire() of a cuda::pipeline is outside the subset"),
    ("__shared__ float s[4]; auto pipe = cuda::make_pipeline(cg::this_thread_block(), s);",
     "cuda::make_pipeline needs a pipeline_shared_state's address"),
    ("auto pipe = cuda::make_pipeline(1, 2, 3, 4);",
     "cuda::make_pipeline takes () or (group, &shared_state[, role])"),
    ("int r = cuda::pipeline_role::observer;", "cuda::pipeline_role has no 'observer'"),
    ("cuda::pipeline_consumer_wait_prior<0>(a);",
     "cuda::pipeline_consumer_wait_prior takes a cuda::pipeline first"),
])
def test_pipeline_refusals_are_one_line(body, message):
    with pytest.raises(PatternError) as info:
        run(PIPELINE_HEAD + f"__global__ void k(float* a) {{\n  {body}\n}}")
    text = str(info.value)
    assert message in text and "\n" not in text and text.startswith("line ")


@pytest.mark.parametrize("size, width", [("shape", 16), ("(shape)", 16), ("shape * 1", 4),
                                         ("sizeof(float4)", 4)])
def test_an_aligned_size_in_a_variable_keeps_its_alignment_and_arithmetic_drops_it(size, width):
    code = PIPELINE_HEAD + f"""
    __global__ void k(const float *a) {{
      __shared__ alignas(16) float s[128];
      const auto shape = cuda::aligned_size_t<16>(sizeof(float4));
      cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
      cuda::memcpy_async(s + threadIdx.x * 4, a + threadIdx.x * 4, {size}, pipe);
    }}"""
    _, kernel = run(code, arrays={"a": {"dtype": "float32", "length": 128}})
    assert kernel.instructions[0].width == width
