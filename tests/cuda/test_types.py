"""Type names, qualifiers, aliases, conversion intrinsics, the standard headers' constants,
and `extern __shared__` memory sized by the pattern or the host code's launch."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_helpers import elements, kernel_pattern, run

from sectorviz.cuda.shared import shared_analysis
from sectorviz.model import PatternError, analyze, pattern_from_dict
from sectorviz.model.frontend import kernel_for

T32 = list(range(32))


@pytest.mark.parametrize("ctype, size", [
    ("uint", 4), ("uchar", 1), ("ushort", 2), ("ulong", 8), ("size_t", 8), ("ptrdiff_t", 8),
    ("int8_t", 1), ("uint16_t", 2), ("int32_t", 4), ("uint64_t", 8), ("uint_fast32_t", 4),
    ("std::uint32_t", 4), ("std::size_t", 8), ("unsigned", 4), ("long int", 8),
    ("unsigned short int", 2), ("signed char", 1), ("long long", 8),
    ("__half", 2), ("half", 2), ("__nv_bfloat16", 2), ("half2", 4), ("__half2", 4),
    ("__nv_bfloat162", 4), ("char4", 4), ("uchar4", 4), ("short2", 4), ("uint2", 8),
    ("uint4", 16), ("longlong2", 16), ("double4", 32),
])
def test_pointee_sizes_give_the_array_dtype(ctype, size):
    _, kernel = run(f"__global__ void k(const {ctype} *__restrict__ p) "
                    f"{{ {ctype} v = p[threadIdx.x]; }}", arrays={"p": {"length": 64}})
    assert kernel.instructions[0].width == size
    assert kernel.arrays["p"].spec.elem_bytes == size


def test_bfloat16_is_a_type_of_its_own():
    from sectorviz.cuda import ctype as C
    assert C.NAMED["__nv_bfloat16"] != C.NAMED["__half"]
    assert C.name_of(C.NAMED["__nv_bfloat16"]) == "__nv_bfloat16"


def test_qualifiers_anywhere_aliases_and_macro_types():
    got = elements("""
    typedef unsigned int u32;
    typedef float real, *real_ptr;
    using index_t = const u32;
    #define ELEM double
    __global__ void k(volatile real *const __restrict__ a, real_ptr b, ELEM const *d) {
        typedef long wide;
        using lane_t = unsigned char;
        index_t t = threadIdx.x;
        const volatile wide w = t * 2;
        lane_t l = (lane_t)(t + 250);
        a[w] = 0;
        b[l] = 0;
        ELEM x = d[t];
        a[sizeof(wide) + sizeof(lane_t) + sizeof(ELEM) + sizeof(d[0]) + sizeof(u32)] = x;
    }""", arrays={"a": {"length": 64}, "b": {"length": 256}, "d": {"length": 32}})
    assert got == [("line 12: a[w]", [2 * t for t in T32]),
                   ("line 13: b[l]", [(t + 250) % 256 for t in T32]),
                   ("line 14: d[t]", T32),  # sizeof(d[0]) loads nothing
                   ("line 15: a[sizeof(wide) + sizeof(lane_t) + sizeof(ELEM) + sizeof(d[0]) "
                    "+ sizeof(u32)]", [29] * 32)]


def test_a_type_name_used_as_a_value_is_an_error():
    with pytest.raises(PatternError, match="line 1, column 49: 'T' is a type, not a value"):
        run("template <typename T> __global__ void k(T* a) { T + 1; }", function="k<float>")


def test_function_qualifiers_are_accepted():
    got = elements("""
    static __device__ __forceinline__ int f(int x) { return x + 1; }
    __device__ __noinline__ inline int g(int x) { return 2 * x; }
    __global__ void __launch_bounds__(256, 2) k(float *a) {
        #pragma unroll 4
        for (int i = 0; i < 2; i++) a[g(f(threadIdx.x)) + i] = 0;
    }""")
    assert [e for _, e in got] == [[2 * t + 2 for t in T32], [2 * t + 3 for t in T32]]


def test_conversion_intrinsics():
    got = elements("""__global__ void k(float *a) {
        float f = threadIdx.x * 0.5f - 4.0f;
        a[512 + __float2int_rn(f)] = 0;   // halves to even
        a[512 + __float2int_rd(f)] = 0;
        a[512 + __float2int_ru(f)] = 0;
        a[512 + __float2int_rz(f)] = 0;
        a[(int)__half2float(__float2half(threadIdx.x * 64.0f)) / 64] = 0;
        a[(int)__bfloat162float(__float2bfloat16(threadIdx.x + 0.25f))] = 0;
        half2 h = __floats2half2_rn(threadIdx.x, 2.0f * threadIdx.x);
        float2 back = __half22float2(h);
        a[(int)(__low2float(h) + __high2float(h) + back.y)] = 0;
        a[__float_as_int(__int_as_float(threadIdx.x + 100))] = 0;
        a[(__float_as_uint(1.0f) >> 23) + threadIdx.x] = 0;
        half2 both = __halves2half2(__int2half_rn(threadIdx.x), __float2half(0.f));
        a[(int)__half2float(__low2half(both))] = 0;
    }""")
    f = np.arange(32) * 0.5 - 4
    assert [e for _, e in got] == [
        list(512 + np.rint(f).astype(int)), list(512 + np.floor(f).astype(int)),
        list(512 + np.ceil(f).astype(int)), list(512 + np.trunc(f).astype(int)),
        T32, T32, [5 * t for t in T32], [t + 100 for t in T32], [127 + t for t in T32], T32]


def test_standard_constants_null_and_nullptr():
    got = elements("""__global__ void k(float *a, int *b) {
        float lo = FLT_MAX, big = INFINITY;
        int t = threadIdx.x;
        if (lo < big && NAN != NAN && -INFINITY < -FLT_MAX) a[t] = 0;
        a[(INT_MAX - 2147483647) + (UINT_MAX - 4294967294u) + 100 + t] = 0;
        a[200 + (int)(M_PI * 10) + CHAR_BIT + (int)(DBL_MAX > 1e308) + (INT8_MIN + 128)] = 0;
        int *p = NULL;
        int *q = nullptr;
        if (p == nullptr && q == NULL && b != nullptr) a[300 + t] = 0;
        a[400 + (SIZE_MAX == 18446744073709551615ULL) + (INT_MIN < 0)] = 0;
    }""", arrays={"a": {"length": 1024}, "b": {"dtype": "int32", "length": 4}})
    assert got == [("line 4: a[t]", T32),
                   ("line 5: a[(INT_MAX - 2147483647) + (UINT_MAX - 4294967294u) + 100 + t]",
                    [101 + t for t in T32]),
                   ("line 6: a[200 + (int)(M_PI * 10) + CHAR_BIT + (int)(DBL_MAX > 1e308) + "
                    "(INT8_MIN + 128)]", [200 + 31 + 8 + 1] * 32),
                   ("line 9: a[300 + t]", [300 + t for t in T32]),
                   ("line 10: a[400 + (SIZE_MAX == 18446744073709551615ULL) + (INT_MIN < 0)]",
                    [402] * 32)]


def test_the_files_own_macro_wins_over_a_standard_one():
    got = elements("#define M_PI 3\n__global__ void k(float *a) { a[M_PI] = 0; }")
    assert got[0][1] == [3] * 32


# ---------------------------------------------------------------- extern __shared__

DYNAMIC = """
__global__ void k(float *a) {
    __shared__ int before[5];
    extern __shared__ float tile[];
    extern __shared__ double alias[];
    __shared__ int after[3];
    tile[threadIdx.x * 2 + OFFSET] = a[threadIdx.x];
    alias[threadIdx.x] = 0;
    before[0] = after[0];
    a[threadIdx.x] = tile[threadIdx.x];
}
"""


def _shared(code: str, offset: int = 0, **kernel):
    doc = kernel_pattern(f"#define OFFSET {offset}\n{code}").to_dict()
    doc["kernel"].update(kernel)
    return pattern_from_dict(doc)


def test_extern_shared_is_sized_by_the_pattern_and_aliases_one_region():
    p = _shared(DYNAMIC, dynamic_shared_bytes=256)
    assert kernel_for(p).program.shared == {"before": (0, 20), "tile": (32, 256),
                                            "alias": (32, 256), "after": (288, 12)}
    stats = {s.source: (s.requests, s.wavefronts, s.bank_conflicts) for s in shared_analysis(p)}
    assert stats == {"tile[threadIdx.x * 2 + OFFSET]": (1, 2, 1),  # stride 2 words: 2-way
                     "alias[threadIdx.x]": (1, 2, 0),  # 8-byte lanes: 2 wavefronts, ideal
                     "after[0]": (1, 1, 0), "before[0]": (1, 1, 0), "tile[threadIdx.x]": (1, 1, 0)}
    with pytest.raises(PatternError, match=r"line 8, column 5: element index 64 of 'tile' "
                                           r"outside \[0, 64\) at warp 0 lane 0"):
        analyze(_shared(DYNAMIC, offset=64, dynamic_shared_bytes=256))


LAUNCH = "\n#define BLOCK 32\nint main() { k<<<1, BLOCK, BLOCK * sizeof(float) * 2>>>(0); }"


def test_extern_shared_defaults_to_the_launchs_constant_third_argument():
    assert kernel_for(_shared(DYNAMIC + LAUNCH)).program.shared["tile"] == (32, 256)
    assert kernel_for(_shared(DYNAMIC + LAUNCH, dynamic_shared_bytes=512)).program.shared[
        "tile"] == (32, 512)  # the pattern's key wins over the launch
    with pytest.raises(PatternError, match="line 5, column 29: extern __shared__ memory needs "
                                           "its size: add \"dynamic_shared_bytes\""):
        analyze(_shared(DYNAMIC + "\nint main(int n) { k<<<1, 32, n>>>(0); }"))


def test_template_launches_give_their_instantiations_shared_bytes():
    code = """
    template <int B> __global__ void k(float *a) {
        extern __shared__ float s[];
        s[threadIdx.x] = a[threadIdx.x];
    }
    int main() { k<64><<<1, 64, 64 * 4>>>(0); k<32><<<1, 32, 128>>>(0); }"""
    assert kernel_for(_shared(code, function="k<32>")).program.shared["s"] == (0, 128)
    assert kernel_for(_shared(code, function="k<64>")).program.shared["s"] == (0, 256)


@pytest.mark.parametrize("value, message", [
    (-1, "kernel.dynamic_shared_bytes: must be at least 0, got -1"),
    ("64", "kernel.dynamic_shared_bytes: expected an integer, got text"),
    (227 * 1024 + 1, "kernel.dynamic_shared_bytes: at most 232,448 bytes (227 KiB"),
])
def test_dynamic_shared_bytes_is_checked(value, message):
    with pytest.raises(PatternError) as info:
        _shared(DYNAMIC, dynamic_shared_bytes=value)
    assert message in str(info.value)


@pytest.mark.parametrize("code, message", [
    ("typedef B A;\ntypedef A B;\n__global__ void k(A *a) { a[0] = 0; }",
     "line 2, column 9: the type 'A' is defined in terms of itself"),
    ("#define T T\n__global__ void k(T *a) { a[0] = 0; }",
     "line 2, column 19: the macro 'T': type 'T' is outside the subset"),
    ("#define real flaot\n__global__ void k(real *a) { a[0] = 0; }",
     "line 2, column 19: the macro 'real': type 'flaot' is outside the subset (did you mean "
     "'float'?)"),
    ("typedef float T0;\n" + "".join(f"typedef T{i - 1} T{i};\n" for i in range(1, 300)) +
     "__global__ void k(T299 *a) { a[0] = 0; }", "type names and macros nested more than 200"),
])
def test_bad_type_names_are_one_line_errors(code, message):
    with pytest.raises(PatternError) as info:
        run(code)
    assert message in str(info.value)


def test_constants_fold_without_numpy_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = elements("__global__ void k(float *a) { a[__float2int_rn(INFINITY) * 0 + "
                       "(int)(1.0f / 0.0f) * 0 + (int)NAN * 0 + threadIdx.x] = 0; }")
    assert got[0][1] == T32


def test_float_to_integer_casts_saturate_as_the_gpu_converts():
    got = elements("""__global__ void k(float *a, float z) {
        a[(int)(1.0f / z) % 64 + 64] = 0;
        a[(unsigned)(-1.0f / z) % 64 + 200] = 0;
        a[(int)(0.0f / z) + 300] = 0;
        a[(short)(1e6f * (z + 1.0f)) % 1000 + 1000] = 0;
        a[(int)(-3.7f - z) + 400] = 0;
    }""", params={"z": 0}, arrays={"a": {"dtype": "float32", "length": 4096}})
    # cvt.rzi: +inf -> INT_MAX, -inf -> 0 unsigned, NaN -> 0, 1e6 -> SHRT_MAX, truncation
    assert [e[0] for _, e in got] == [64 + (2**31 - 1) % 64, 200, 300, 1000 + 32767 % 1000, 397]
