"""Template kernels and device functions: instantiations named as Nsight Compute prints them,
chosen by the host code's launch, with defaults, deduction and `if constexpr`; they count
exactly what the same kernel written without templates counts."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from cuda_helpers import elements, kernel_pattern, run
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.cuda.shared import shared_analysis
from sectorviz.model import PatternError, analyze

TILED = """
template <int BLOCK_SIZE, typename T = float>
__global__ void __launch_bounds__(BLOCK_SIZE * BLOCK_SIZE)
matmul(T *__restrict__ C, const T *__restrict__ A, const T *__restrict__ B, int n) {
    __shared__ T As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T Bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int k0 = 0; k0 < n; k0 += BLOCK_SIZE) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = sum;
}
"""

PLAIN = """
#define BLOCK_SIZE {bs}
typedef {t} real;
__global__ void matmul(real *C, const real *A, const real *B, int n) {{
    __shared__ real As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ real Bs[BLOCK_SIZE][BLOCK_SIZE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    real sum = 0;
    for (int k0 = 0; k0 < n; k0 += BLOCK_SIZE) {{
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }}
    C[row * n + col] = sum;
}}
"""


def _matmul(code: str, function: str, bs: int, n: int):
    arrays = {name: {"length": n * n} for name in "CAB"}  # dtype: the pointee's
    p = kernel_pattern(code, function=function, arrays=arrays, params={"n": n},
                       grid=(n // bs, n // bs), block=(bs, bs))
    return p, analyze(p)


@settings(max_examples=8, deadline=None)
@given(bs=st.sampled_from([4, 8, 16]), t=st.sampled_from(["float", "double"]),
       tiles=st.integers(1, 3))
def test_template_kernel_counts_what_the_plain_kernel_counts(bs, t, tiles):
    n = bs * tiles
    tp, templated = _matmul(TILED, f"matmul<{bs}, {t}>", bs, n)
    pp, plain = _matmul(PLAIN.format(bs=bs, t=t), "matmul", bs, n)
    assert asdict(templated.totals) == asdict(plain.totals)
    assert [(s.source, s.sectors, s.requests) for s in templated.instructions] == \
        [(s.source, s.sectors, s.requests) for s in plain.instructions]
    assert [(s.source, s.wavefronts, s.bank_conflicts) for s in shared_analysis(tp)] == \
        [(s.source, s.wavefronts, s.bank_conflicts) for s in shared_analysis(pp)]


def test_tiled_matmul_numbers_and_pointee_dtype_after_substitution():
    p, a = _matmul(TILED, "matmul<16, double>", 16, 64)
    assert [x.dtype for x in p.arrays] == [None] * 3  # the pattern leaves them to the source
    # a 16-wide row of doubles is 128 bytes = 4 sectors per half-warp: 8 per warp request
    warps, trips = 16 * 8, 4
    assert [(s.source, s.width, s.requests, s.sectors) for s in a.instructions] == [
        ("A[row * n + k0 + tx]", 8, warps * trips, warps * trips * 8),
        ("B[(k0 + ty) * n + col]", 8, warps * trips, warps * trips * 8),
        ("C[row * n + col]", 8, warps, warps * 8)]
    _, f = _matmul(TILED, "matmul<16>", 16, 64)  # T defaults to float: 4 sectors per request
    assert [s.width for s in f.instructions] == [4, 4, 4]
    assert f.totals.sectors * 2 == a.totals.sectors


LAUNCHED = """
template <typename T, int N, bool SCALE = true>
__global__ void reduce(T *out, const T *in) {
    T v = in[threadIdx.x * N];
    if constexpr (SCALE) { out[threadIdx.x] = v; } else { undefined_in_this_branch(); }
}
int main() {
    float *d;
    reduce<float, 4><<<1, 32>>>(d, d);
    reduce<float, 4><<<2, 32>>>(d, d);
}
"""
ARRAYS = {"out": {"length": 64}, "in": {"length": 256}}


@pytest.mark.parametrize("name", ["reduce<float, 4>", "reduce<float, 4, true>",
                                  "void reduce<float, 4u, true>(float *, const float *)",
                                  "(anonymous namespace)::reduce<float, 2 * 2>",
                                  "reduce"])  # the one launched instantiation
def test_instantiation_names(name):
    got = elements(LAUNCHED, function=name, arrays=ARRAYS)
    assert got == [("line 4: in[threadIdx.x * N]", [4 * t for t in range(32)]),
                   ("line 5: out[threadIdx.x]", list(range(32)))]


def test_instantiations_with_other_arguments():
    got = elements(LAUNCHED, function="reduce<double, 2>", arrays=ARRAYS)
    assert got[0][1] == [2 * t for t in range(32)]
    _, kernel = run(LAUNCHED, function="reduce<short, 1>", arrays=ARRAYS)
    assert [i.width for i in kernel.instructions] == [2, 2]


@pytest.mark.parametrize("name, message", [
    ("reduce<float, 4, false>", "line 5, column 59: call of unknown function "
                                "'undefined_in_this_branch'"),
    ("reduce<4, 4>", "kernel.function: template parameter 'T' takes a type, not '4'"),
    ("reduce<float, float>", "kernel.function: template parameter 'N' takes a value"),
    ("reduce<float>", "kernel.function: the template argument 'N' of 'reduce' is not given"),
    ("reduce<float, 1, true, 2>", "'reduce' takes 3 template arguments, got 4"),
    ("reduce<float, 4", "cannot read the function name"),
])
def test_instantiation_errors(name, message):
    with pytest.raises(PatternError) as info:
        run(LAUNCHED, function=name, arrays=ARRAYS)
    assert message in str(info.value)


def test_bare_name_with_two_launched_instantiations_or_none():
    code = LAUNCHED.replace("reduce<float, 4><<<2", "reduce<double, 4><<<2")
    with pytest.raises(PatternError) as info:
        run(code, function="reduce", arrays=ARRAYS)
    assert str(info.value) == (
        "kernel.function: the file launches (or instantiates) 2 instantiations of 'reduce' "
        "(reduce<float, 4>, reduce<double, 4>); name one, e.g. \"reduce<float, 4>\"")
    same = LAUNCHED.replace("reduce<float, 4><<<2", "reduce<float, HOST_N><<<2").replace(
        "float *d;", "float *d; constexpr auto HOST_N = 2 + 2;")
    assert elements(same, function="reduce", arrays=ARRAYS)[0][1] == [4 * t for t in range(32)]
    defaults = "template <typename T = double, int N = 3> __global__ void k(T* a) " \
               "{ a[threadIdx.x * N] = 0; }"
    _, kernel = run(defaults, function="k", arrays={"a": {"length": 96}})
    assert kernel.instructions[0].width == 8
    with pytest.raises(PatternError, match="'k' is a template kernel that the file does not "
                                           "launch; name the instantiation"):
        run(defaults.replace("= double", ""), function="k", arrays={"a": {"length": 96}})
    with pytest.raises(PatternError, match="'k' is not a template kernel"):
        run("__global__ void k(float* a) { a[0] = 0; }", function="k<1>")


def test_template_device_functions_explicit_deduced_and_defaulted():
    got = elements("""
    template <int N, typename I = int> __device__ I times(I x) { return x * N; }
    template <typename T> __device__ T twice(T x) { return x + x; }
    template <typename T> __device__ T load(const T *p, int i) { return p[i]; }
    template <typename T, int S = sizeof(T)> __device__ int bytes(T x) { return S; }
    __global__ void k(float *a, const double *d) {
        unsigned t = threadIdx.x;
        a[times<3>(t)] = 0;
        a[twice(t - 1u) % 64u] = 0;
        double v = load(d, t);
        a[bytes(v) + bytes(t)] = 0;
        a[times<2, unsigned char>(t + 250)] = 0;
    }""", arrays={"a": {"length": 1024}, "d": {"length": 32}})
    t = range(32)
    assert got == [("line 8: a[times<3>(t)]", [3 * x for x in t]),
                   ("line 9: a[twice(t - 1u) % 64u]", [(2 * (x - 1)) % 2**32 % 64 for x in t]),
                   ("line 4: p[i]", list(t)),
                   ("line 11: a[bytes(v) + bytes(t)]", [12] * 32),
                   ("line 12: a[times<2, unsigned char>(t + 250)]",
                    [(x + 250) % 256 * 2 % 256 for x in t])]


def test_local_constants_size_arrays_and_instantiate_templates():
    got = elements("""
    template <int W> __device__ int pitch() { return W + 1; }
    __global__ void k(float *a) {
        const int TILE = 8;
        constexpr unsigned PAD = TILE / 4;
        __shared__ float s[TILE][TILE + PAD];
        s[threadIdx.x % TILE][0] = 1;
        a[threadIdx.x * pitch<TILE * PAD>() + sizeof(s) / sizeof(float)] = 0;
    }""")
    assert got[0][1] == [t * 17 + 80 for t in range(32)]


def test_tiled_template_example_reads_8x_fewer_sectors_than_the_naive_one():
    from sectorviz.model import load_pattern
    from sectorviz.paths import examples_dir
    tiled = analyze(load_pattern(examples_dir() / "matmul-tiled-cuda.sectorviz.json"))
    naive = analyze(load_pattern(examples_dir() / "matmul-naive-cuda.sectorviz.json"))
    # main() launches matmulTiled<tile> with `constexpr int tile = 16`: TILE = 16, T = float
    assert [(s.source, s.width, s.requests, s.sectors) for s in tiled.instructions] == [
        ("A[row * n + k0 + tx]", 4, 2048 * 16, 2048 * 16 * 4),
        ("B[(k0 + ty) * n + col]", 4, 2048 * 16, 2048 * 16 * 4),
        ("C[row * n + col]", 4, 2048, 2048 * 4)]
    loads = [s.sectors for s in naive.instructions if s.op == "load"]
    assert loads == [8 * s.sectors for s in tiled.instructions if s.op == "load"]


def test_template_kernel_passes_its_bindings_to_device_templates():
    got = elements("""
    template <typename T, int N> __device__ T pick(const T *p, int i) { return p[i * N]; }
    template <typename T, int N> __global__ void k(T *a) {
        T v = pick<T, N + 1>(a, threadIdx.x);
        a[threadIdx.x] = v;
    }""", function="k<double, 2>", arrays={"a": {"length": 128}})
    assert got == [("line 2: p[i * N]", [3 * t for t in range(32)]),
                   ("line 5: a[threadIdx.x]", list(range(32)))]


def test_an_explicit_instantiation_names_the_instantiation_and_enums_are_constants():
    got = elements("""
    enum { TILE = 8, STEP };
    typedef enum : unsigned char { SMALL = 250, BIGGER } size_kind;
    template <int N> __global__ void k(float *a) { a[threadIdx.x * N + STEP + BIGGER] = 0; }
    template __global__ void k<TILE>(float *);
    """, arrays={"a": {"length": 1024}})
    assert got[0][1] == [8 * t + 9 + 251 for t in range(32)]
    with pytest.raises(PatternError, match=r"the file launches \(or instantiates\) 2 "
                                           r"instantiations of 'k' \(k<1>, k<2>\)"):
        run("template <int N> __global__ void k(float *a) { a[N] = 0; }\n"
            "template __global__ void k<1>(float *);\ntemplate __global__ void k<2>(float *);",
            arrays={"a": {"length": 8}})


BLOCK_REDUCE = """
#define WARP 32U
__device__ float warpSum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__device__ float warpMax(float v) { return v; }
using reduce_fn = float (*)(float);
template <reduce_fn reduce>
__device__ inline float blockReduce(float v, bool final_sync, float fill) {
    __shared__ float partial[WARP];
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    float w = reduce(v);
    if (lane == 0) partial[warp] = w;
    __syncthreads();
    w = lane < blockDim.x / WARP ? partial[lane] : fill;
    if (final_sync) __syncthreads();
    return reduce(w);
}
template <reduce_fn reduce>
__device__ inline float blockReduce(float v) { return blockReduce<reduce>(v, false, 0.0f); }
template <reduce_fn reduce> __device__ int apply(float v) { return (int)reduce(v); }
__device__ int scaled(int i, int by = 3) { return i * by; }
__global__ void k(float *a) {
    a[1000 + threadIdx.x] = blockReduce<warpSum>(1.0f);
    a[apply<warpSum>(1.0f) + scaled(threadIdx.x) + scaled(1, 2)] = 0;
}
"""


def test_functions_as_template_arguments_overloads_by_arity_and_default_arguments():
    got = elements(BLOCK_REDUCE, block=(128,), arrays={"a": {"length": 2048}})
    # a warp of ones sums to 32 with warpSum passed as a template argument
    assert got == [("line 25: a[1000 + threadIdx.x]", [1000 + t for t in range(32)]),
                   ("line 26: a[apply<warpSum>(1.0f) + scaled(threadIdx.x) + scaled(1, 2)]",
                    [32 + 3 * t + 2 for t in range(32)])]
    _, kernel = run(BLOCK_REDUCE, block=(128,), arrays={"a": {"length": 2048}})
    assert [(i.source, i.op) for i in kernel.shared_instructions] == [
        ("partial[warp]", "store"), ("partial[lane]", "load")]
    with pytest.raises(PatternError, match="'reduce' is the function 'warpSum': only calls"):
        run(BLOCK_REDUCE.replace("return (int)reduce(v);", "return (int)reduce;"),
            block=(128,), arrays={"a": {"length": 2048}})


def test_a_class_template_value_built_by_its_template_name():
    got = elements("""
    template <typename T, int N> struct Scaled {
        T v;
        __device__ Scaled(T x) : v(x * N) {}
    };
    __global__ void k(float *a) {
        Scaled<int, 3> s = Scaled<int, 3>(threadIdx.x);
        a[s.v + sizeof(Scaled<double, 1>)] = 0;
    }""")
    assert got[0][1] == [3 * t + 8 for t in range(32)]


def test_a_class_templates_conversion_operator_gives_the_dynamic_shared_array():
    code = """
    template <class T> struct DynamicShared {
        __device__ operator T *() {
            extern __shared__ int raw[];
            return (T *)raw;
        }
    };
    template <class T> __global__ void k(const T *in, T *out) {
        T *s = DynamicShared<T>();
        s[threadIdx.x * 2] = in[threadIdx.x];
        out[threadIdx.x] = s[threadIdx.x];
    }
    int main() { k<double><<<1, 32, 32 * 2 * sizeof(double)>>>(0, 0); }
    """
    p = kernel_pattern(code, function="k", arrays={"in": {"length": 32}, "out": {"length": 32}})
    stats = {s.source: (s.width, s.wavefronts, s.bank_conflicts) for s in shared_analysis(p)}
    # doubles at a stride of 16 bytes: 32 lanes x 8 bytes spread over 512 bytes, 4 wavefronts
    # instead of the ideal 2; read back contiguously: 2 wavefronts, the ideal
    assert stats == {"s[threadIdx.x * 2]": (8, 4, 2), "s[threadIdx.x]": (8, 2, 0)}
    assert analyze(p).totals.sectors == 16
