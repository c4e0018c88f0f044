"""Template kernels and device functions, and explicit specializations, read as written (the
kernel's debug compile, issue 29; ported from the C++ interpreter's tests/cuda/
test_templates.py and test_specializations.py): instantiations named as Nsight Compute prints
them, or chosen by the host code's launch; they count what the same kernel written without
templates counts. Which instantiation nvcc compiles, and its errors, are nvcc's."""

from __future__ import annotations

import shutil
from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import elements, kernel_pattern, per_line, run, shared_per_line

from sectorviz.model import PatternError, analyze

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

T32 = list(range(32))
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
template __global__ void matmul<4, float>(float *, const float *, const float *, int);
template __global__ void matmul<8, float>(float *, const float *, const float *, int);
template __global__ void matmul<16, float>(float *, const float *, const float *, int);
template __global__ void matmul<4, double>(double *, const double *, const double *, int);
template __global__ void matmul<8, double>(double *, const double *, const double *, int);
template __global__ void matmul<16, double>(double *, const double *, const double *, int);
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


def _counts(analysis) -> tuple:
    """What a kernel counts, whatever its lines: totals, sorted per-instruction figures."""
    return (asdict(analysis.totals),
            sorted((s.op, s.width, s.requests, s.sectors) for s in analysis.instructions),
            sorted((s.op, s.requests, s.wavefronts, s.bank_conflicts) for s in analysis.shared))


@settings(max_examples=4, deadline=None)
@given(bs=st.sampled_from([4, 8, 16]), t=st.sampled_from(["float", "double"]),
       tiles=st.integers(1, 2))
def test_template_kernel_counts_what_the_plain_kernel_counts(bs, t, tiles):
    n = bs * tiles
    _, templated = _matmul(TILED, f"matmul<{bs}, {t}>", bs, n)
    _, plain = _matmul(PLAIN.format(bs=bs, t=t), "matmul", bs, n)
    assert _counts(templated) == _counts(plain)


def test_tiled_matmul_numbers_and_pointee_dtype_after_substitution():
    p, a = _matmul(TILED, "matmul<16, double>", 16, 64)
    assert [x.dtype for x in p.arrays] == [None] * 3  # the pattern leaves them to the source
    # a 16-wide row of doubles is 128 bytes = 4 sectors per half-warp: 8 per warp request
    warps, trips = 16 * 8, 4
    assert per_line(a.instructions) == {11: (warps * trips, warps * trips * 8),
                                        12: (warps * trips, warps * trips * 8),
                                        18: (warps, warps * 8)}
    assert {s.width for s in a.instructions} == {8}
    _, f = _matmul(TILED, "matmul<16, float>", 16, 64)  # floats: 4 sectors per request
    assert {s.width for s in f.instructions} == {4}
    assert f.totals.sectors * 2 == a.totals.sectors


LAUNCHED = """
template <typename T, int N, bool SCALE = true>
__global__ void reduce(T *out, const T *in) {
    T v = in[threadIdx.x * N];
    if constexpr (SCALE) { out[threadIdx.x] = v; } else { undefined_in_this_branch(v); }
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
                                  "reduce"])  # the one launched instantiation
def test_instantiation_names(name):
    got = elements(LAUNCHED, function=name, arrays=ARRAYS)
    assert got == [(4, "load", [4 * t for t in T32]), (5, "store", T32)]


def test_instantiations_with_other_arguments():
    got = elements(LAUNCHED, function="reduce<double, 2>", arrays=ARRAYS)
    assert got[0] == (4, "load", [2 * t for t in T32])
    _, kernel = run(LAUNCHED, function="reduce<short, 1>", arrays=ARRAYS)
    assert [i.width for i in kernel.instructions] == [2, 2]


@pytest.mark.parametrize("name, message", [
    # the discarded branch's call depends on T: nvcc reports it where it is instantiated
    ("reduce<float, 4, false>", "kernel.code line 5, column 59: identifier "
                                "\"undefined_in_this_branch\" is undefined"),
    ("reduce<4, 4>", "cannot determine which instance of function template \"reduce\""),
    ("reduce<float>", "cannot determine which instance of function template \"reduce\""),
    ("reduce<float, 4", "kernel.function: cannot read the function name 'reduce<float, 4'"),
])
def test_instantiation_errors_are_one_line(name, message):
    with pytest.raises(PatternError) as info:
        run(LAUNCHED, function=name, arrays=ARRAYS)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_bare_name_with_two_launched_instantiations_or_none():
    code = LAUNCHED.replace("reduce<float, 4><<<2, 32>>>(d, d);",
                            "double *e; reduce<double, 4><<<2, 32>>>(e, e);")
    with pytest.raises(PatternError) as info:
        run(code, function="reduce", arrays=ARRAYS)
    assert "holds 2 instantiations of 'reduce' (reduce<float, 4, true>, reduce<double, 4, " \
        "true>); name one" in str(info.value)
    same = LAUNCHED.replace("reduce<float, 4><<<2", "reduce<float, HOST_N><<<2").replace(
        "float *d;", "float *d; constexpr auto HOST_N = 2 + 2;")
    assert elements(same, function="reduce", arrays=ARRAYS)[0] == (4, "load",
                                                                   [4 * t for t in T32])
    defaults = "template <typename T = double, int N = 3> __global__ void k(T* a) " \
               "{ a[threadIdx.x * N] = 0; }"
    _, kernel = run(defaults, function="k<double, 3>", arrays={"a": {"length": 96}})
    assert kernel.instructions[0].width == 8
    with pytest.raises(PatternError, match="a template kernel is compiled only where the file "
                                           "launches it: name the instantiation"):
        run(defaults, function="k", arrays={"a": {"length": 96}})


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
    }""", arrays={"a": {"length": 1024}, "d": {"length": 32}})
    t = range(32)
    assert got == [(8, "store", [3 * x for x in t]),
                   (9, "store", [(2 * (x - 1)) % 2**32 % 64 for x in t]),
                   (4, "load", list(t)),
                   (11, "store", [12] * 32)]


def test_a_device_template_with_a_one_byte_type_argument():
    """-G passes the unsigned char in a .b32 .param that the callee reads with ld.param.u8:
    the low byte of what the caller stored."""
    got = elements("template <int N, typename I = int> __device__ I times(I x) { return x * N; }\n"
                   "__global__ void k(float *a) {\n"
                   "    a[times<2, unsigned char>(threadIdx.x + 250)] = 0;\n}")
    assert got == [(3, "store", [(x + 250) % 256 * 2 % 256 for x in T32])]


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
    assert got == [(8, "store", [t * 17 + 80 for t in T32])]


def test_template_kernel_passes_its_bindings_to_device_templates():
    got = elements("""
    template <typename T, int N> __device__ T pick(const T *p, int i) { return p[i * N]; }
    template <typename T, int N> __global__ void k(T *a) {
        T v = pick<T, N + 1>(a, threadIdx.x);
        a[threadIdx.x] = v;
    }
    template __global__ void k<double, 2>(double *);""",
                   function="k<double, 2>", arrays={"a": {"length": 128}})
    assert got == [(2, "load", [3 * t for t in T32]), (5, "store", T32)]


def test_an_explicit_instantiation_names_the_instantiation_and_enums_are_constants():
    got = elements("""
    enum { TILE = 8, STEP };
    typedef enum : unsigned char { SMALL = 250, BIGGER } size_kind;
    template <int N> __global__ void k(float *a) { a[threadIdx.x * N + STEP + BIGGER] = 0; }
    template __global__ void k<TILE>(float *);
    """, arrays={"a": {"length": 1024}})
    assert got == [(4, "store", [8 * t + 9 + 251 for t in T32])]
    with pytest.raises(PatternError, match=r"k<1>.*k<2>"):
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
    assert got == [(25, "store", [1000 + t for t in T32]),
                   (26, "store", [32 + 3 * t + 2 for t in T32])]
    a, _ = run(BLOCK_REDUCE, block=(128,), arrays={"a": {"length": 2048}})
    # 4 warps: lane 0 of each stores partial[warp]; each reads partial[lane] (lanes < 4)
    assert shared_per_line(a.shared) == {14: (4, 4), 16: (4, 4)}


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
    assert [(line, e) for line, op, e in got if op == "store"] == [
        (8, [3 * t + 8 for t in T32])]


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
    a = analyze(p)
    # doubles at a stride of 16 bytes: 32 lanes x 8 bytes spread over 512 bytes, 4 wavefronts
    # instead of the ideal 2; read back contiguously: 2 wavefronts, the ideal
    assert shared_per_line(a.shared) == {10: (1, 4), 11: (1, 2)}
    assert {s.width for s in a.shared} == {8}
    assert a.totals.sectors == 16


# ---------------------------------------------------------------- specializations

BIG = {"a": {"dtype": "float32", "length": 1 << 14}}
CLASSES = """
template <typename T, int N = 2> struct Stride { __device__ int of(int t) { return t * N; } };
template <> struct Stride<int> { __device__ int of(int t) { return 1000 + t; } };
template <> struct Stride<float, 3> { static constexpr int base = 2000;
                                      __device__ int of(int t) { return base + 5 * t; } };
template <class T, int N> __global__ void k(float *a) {
    Stride<T, N> s;
    a[s.of(threadIdx.x)] = 0;
}
template __global__ void k<int, 2>(float *);
template __global__ void k<int, 4>(float *);
template __global__ void k<float, 3>(float *);
template __global__ void k<float, 2>(float *);
template __global__ void k<double, 3>(float *);
"""


@pytest.mark.parametrize("function, element", [
    ("k<int, 2>", lambda t: 1000 + t),  # Stride<int> is Stride<int, 2>: the default counts
    ("k<int, 4>", lambda t: 4 * t),
    ("k<float, 3>", lambda t: 2000 + 5 * t),
    ("k<float, 2>", lambda t: 2 * t),
    ("k<double, 3>", lambda t: 3 * t),
])
def test_a_class_specialization_replaces_the_primary_for_its_arguments_only(function, element):
    got = elements(CLASSES, function=function, arrays=BIG)
    assert got == [(8, "store", [element(t) for t in T32])]


FUNCTIONS = """
template <typename T> __device__ int lane_of(int t) { return t; }
template <> __device__ int lane_of<double>(int t) { return 31 - t; }
template <typename T> __global__ void k(T *a) { a[lane_of<T>(threadIdx.x)] = 0; }
template <> __global__ void k<short>(short *a) { a[64 * threadIdx.x] = 0; }
template __global__ void k<float>(float *);
template __global__ void k<double>(double *);
"""


@pytest.mark.parametrize("function, dtype, requests_sectors, lanes", [
    ("k<float>", "float32", (1, 4), T32),  # 32 x 4 bytes in a row
    ("k<double>", "float64", (1, 8), T32[::-1]),  # 32 x 8 bytes, reversed: still 8 sectors
    ("k<short>", "int16", (1, 32), [64 * t for t in T32]),  # its own specialization: 128 B
])
def test_function_and_kernel_specializations_are_called_for_their_arguments(
        function, dtype, requests_sectors, lanes):
    arrays = {"a": {"dtype": dtype, "length": 4096}}
    a, _ = run(FUNCTIONS, function=function, arrays=arrays)
    assert [(s.requests, s.sectors) for s in a.instructions] == [requests_sectors]
    assert elements(FUNCTIONS, function=function, arrays=arrays)[0][2] == lanes


def test_a_partial_specialization_is_plain_cpp():
    """The interpreter refused partial specializations and specializations that deduce their
    arguments; nvcc compiles both."""
    got = elements("template <typename T, int N> struct S { __device__ int at() { return N; } };\n"
                   "template <int N> struct S<float, N> { __device__ int at() { return 2 * N; } "
                   "};\n"
                   "template <typename T> __device__ int f(T x) { return 1; }\n"
                   "template <> __device__ int f(int x) { return 2; }\n"
                   "__global__ void k(float *a) { S<float, 3> s; a[s.at() + f(3)] = 0; }",
                   arrays=BIG)
    assert [(line, e) for line, op, e in got if op == "store"] == [(5, [8] * 32)]
