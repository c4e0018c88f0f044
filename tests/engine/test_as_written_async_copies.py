"""Asynchronous copies (cooperative_groups::memcpy_async, cuda::memcpy_async through a
pipeline) read as written (the debug compile): global reads and shared writes of libcu++'s
cp.async chunks, checked against a lane-by-lane reference. Ported from the C++ interpreter's
tests (issue 29); what the PTX engine does not run yet (bulk copies, a cuda::barrier's
local-object fallback, which takes the address of a function) is refused in one line."""

from __future__ import annotations

import shutil

import pytest
from oracles import elements, per_line, run

from sectorviz.model.errors import PatternError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

# nvcc needs the header of cg::memcpy_async, which the interpreter read on without
HEAD = """#include <cuda/barrier>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
"""
PIPELINE_HEAD = """#include <cuda/pipeline>
#include <cuda/barrier>
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


def copy_totals(analysis, line: int) -> tuple[int, int]:
    """(requests, sectors) of the global reads of everything but `line` (the copy's
    instructions, which -G keeps in libcu++'s headers: several cp.async sites, and byte
    loops for unaligned data that no lane runs here)."""
    rows = [s for s in analysis.instructions if s.line != line or s.file is not None]
    return (sum(s.requests for s in rows), sum(s.sectors for s in rows))


GROUP_COPY = HEAD + """
__global__ void k(const float *src, float *out, int n) {
  __shared__ float s[4096];
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<TILE>(block);
  float *dst = s + tile.meta_group_rank() * 64;
  const float *from = src + blockIdx.x * 4096 + tile.meta_group_rank() * 256;
  cg::memcpy_async(tile, dst, from, SIZE);
  cg::wait(tile);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}
"""


# two compiles; each case builds its kernel anew (seconds at -G), so a few chosen cases: one
# round and a ragged last one, 16-byte and 4-byte chunks, tiles of a warp and of half a warp
@pytest.mark.parametrize("tile, aligned, n, block", [
    (32, True, 5, 64), (32, True, 64, 128), (16, False, 33, 96), (16, False, 1, 64)])
def test_a_groups_copy_deals_consecutive_chunks_to_its_threads_in_rank_order(
        tile, aligned, n, block):
    width = 16 if aligned else 4  # aligned_size_t<16>: cp.async of 16 bytes; else a float's 4
    size = "cuda::aligned_size_t<16>(n * 16)" if aligned else "n * sizeof(float4)"
    code = GROUP_COPY.replace("TILE", str(tile)).replace("SIZE", size)
    arrays = {"src": {"dtype": "float32", "length": 2 * 4096},
              "out": {"dtype": "float32", "length": 2 * block}}
    a, kernel = run(code, arrays=arrays, params={"n": n}, grid=(2,), block=(block,))
    assert {s.width for s in a.instructions if s.requests and s.line != 14} == {width}

    def base(t: int) -> int:
        return 4 * (t // block * 4096 + t % block // tile * 256)
    requests = total = 0
    for b in range(2):
        r, s = group_copy_reference(block // 32, block, tile, n * 16, width,
                                    lambda t, b=b: base(t + b * block))
        requests, total = requests + r, total + s
    assert copy_totals(a, 14) == (requests, total)


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
    assert elements(code, arrays=arrays) == [
        (10, "store", [(t * 12 + 5) % 1024 for t in range(32)]),
        (11, "store", [(t * 12 + 11) % 1024 for t in range(32)])]
    # one 16-byte store per lane, lanes 12 elements (192 bytes) apart: 32 sectors
    a, _ = run(code, arrays=arrays)
    assert per_line(a.instructions) == {10: (1, 32), 11: (1, 32)}


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
    assert [g[2][:2] for g in got] == [[200, 201], [301, 302], [100, 101]]


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


@pytest.mark.parametrize("tile, tiles, skip", [(8, 3, 2), (48, 6, 5), (48, 1, 0)])
def test_a_thread_pipelines_copies_are_its_chunks_and_its_calls_move_nothing(tile, tiles, skip):
    arrays = {"in": {"dtype": "float32", "length": 2 * 6 * 48 * 4 + 32},
              "out": {"dtype": "float32", "length": 2 * 6 * 64}}
    a, _ = run(STAGED, function=f"staged<{tile}>", arrays=arrays,
               params={"tiles": tiles, "skip": skip}, grid=(2,), block=(64,))
    requests = total = 0
    for block in range(2):
        for f in range(tiles):
            for warp in range(2):
                addrs = [16 * (block * tiles * tile + skip + f * tile + t)
                         for t in range(warp * 32, warp * 32 + 32) if t < tile]
                if addrs:
                    requests, total = requests + 1, total + sectors(addrs, 16)
    copies = [s for s in a.instructions if s.requests and s.op == "load"]
    assert {s.width for s in copies} == {16}  # cp.async of a float4's 16 bytes
    assert (sum(s.requests for s in copies), sum(s.sectors for s in copies)) == (requests, total)
    (store,) = [s for s in a.instructions if s.op == "store"]
    assert store.requests == 2 * 2 * tiles  # the consumers' stores: no more


@pytest.mark.parametrize("size, width", [("shape", 16), ("shape * 1", 4)])
def test_an_aligned_size_in_a_variable_keeps_its_alignment_and_arithmetic_drops_it(size, width):
    """aligned_size_t<16> in a variable: one cp.async of 16 bytes per lane (512 bytes: 16
    sectors); `shape * 1` is a plain size_t, so libcu++ copies in a float's 4-byte chunks:
    4 requests of 32 lanes 16 bytes apart (16 sectors each)."""
    code = PIPELINE_HEAD + f"""
    __global__ void k(const float *a) {{
      __shared__ alignas(16) float s[128];
      const auto shape = cuda::aligned_size_t<16>(sizeof(float4));
      cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
      cuda::memcpy_async(s + threadIdx.x * 4, a + threadIdx.x * 4, {size}, pipe);
    }}"""
    a, _ = run(code, arrays={"a": {"dtype": "float32", "length": 128}})
    copies = [s for s in a.instructions if s.requests]
    assert {s.width for s in copies} == {width}
    assert per_line(copies) == {10: (512 // width // 32, 16 * 16 // width)}
    assert sum(s.requests for s in a.shared) == 512 // width // 32


def test_a_barriers_copy_is_refused_in_one_line_at_its_line():
    """A copy through a cuda::barrier: -G keeps libcu++'s fallback for a barrier in local
    memory, which takes the address of a device function; the PTX engine refuses it at the
    source line that reaches it, the arrive of line 12 (the interpreter counted this
    kernel)."""
    code = PIPELINE_HEAD + """
    __global__ void k(const float *a, float *out) {
      __shared__ cuda::barrier<cuda::thread_scope_block> bar;
      __shared__ float s[64];
      if (threadIdx.x == 0) init(&bar, blockDim.x);
      __syncthreads();
      cuda::memcpy_async(s + threadIdx.x, a + threadIdx.x * 3, sizeof(float), bar);
      cuda::barrier<cuda::thread_scope_block>::arrival_token token = bar.arrive();
      bar.wait(std::move(token));
      out[threadIdx.x] = s[63 - threadIdx.x];
    }"""
    with pytest.raises(PatternError) as info:
        run(code, arrays={"a": {"dtype": "float32", "length": 256},
                          "out": {"dtype": "float32", "length": 64}}, block=(64,))
    text = str(info.value)
    assert text.startswith("line 12, column 7: the compiled kernel uses `mov.u64")
    assert "which sectorviz does not run (the address of" in text and "\n" not in text


@pytest.mark.parametrize("head, body, message", [
    (HEAD, "__shared__ cuda::barrier<cuda::thread_scope_block> b; b.arrive_and_wiat();",
     "has no member \"arrive_and_wiat\""),
    (PIPELINE_HEAD, "int r = cuda::pipeline_role::observer;",
     "enum \"cuda::__4::pipeline_role\" has no member \"observer\""),
])
def test_copy_and_pipeline_misuse_is_nvccs_one_line_at_the_line(head, body, message):
    """The interpreter refused what is outside its subset; now nvcc refuses what is not
    CUDA C++, at the line."""
    line = head.count("\n") + 2
    with pytest.raises(PatternError) as info:
        run(head + f"__global__ void k(float* a) {{\n  {body}\n}}")
    text = str(info.value)
    assert text.startswith(f"kernel.code line {line}, column ")
    assert message in text and "\n" not in text
