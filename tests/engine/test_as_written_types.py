"""Type names, qualifiers, aliases, conversion intrinsics, the standard headers' constants and
`extern __shared__` memory sized by the pattern or the host code's launch, read as written
(the kernel's debug compile, issue 29; ported from the C++ interpreter's tests/cuda/
test_types.py). The CUDA headers' types and constants come from their #include, as nvcc
needs them."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from oracles import elements, kernel_pattern, run, shared_per_line

from sectorviz.model import PatternError, analyze

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

T32 = list(range(32))
HEADERS = "#include <cstdint>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"


@pytest.mark.parametrize("ctype, size, widths", [
    ("uint", 4, [4]), ("ushort", 2, [2]), ("ulong", 8, [8]), ("size_t", 8, [8]),
    ("ptrdiff_t", 8, [8]), ("int8_t", 1, [1]), ("uint16_t", 2, [2]), ("int32_t", 4, [4]),
    ("uint64_t", 8, [8]),
    ("uint_fast32_t", 8, [8]),  # glibc on 64-bit Linux: unsigned long (the interpreter: 4)
    ("std::uint32_t", 4, [4]), ("std::size_t", 8, [8]), ("unsigned", 4, [4]),
    ("long int", 8, [8]), ("unsigned short int", 2, [2]), ("signed char", 1, [1]),
    ("long long", 8, [8]), ("__half", 2, [2]), ("half", 2, [2]), ("__nv_bfloat16", 2, [2]),
    ("half2", 4, [4]), ("__half2", 4, [4]), ("__nv_bfloat162", 4, [4]), ("char4", 4, [4]),
    ("uchar4", 4, [4]), ("short2", 4, [4]),
    ("uint2", 8, [4, 4]),  # -G copies the uint2 member by member: 2 loads of 4 bytes
    ("uint4", 16, [16]), ("longlong2", 16, [16]),
    ("double4", 32, [16, 16]),  # -G: two ld.v4.u32 of 16 bytes each
])
def test_pointee_sizes_give_the_array_dtype(ctype, size, widths):
    """The pointee's size is the array's element size; the load reads it whole (the
    interpreter counted one access of `size` bytes; -G's PTX widths are listed)."""
    _, kernel = run(HEADERS + f"__global__ void k(const {ctype} *__restrict__ p) "
                    f"{{ {ctype} v = p[threadIdx.x]; }}", arrays={"p": {"length": 64}})
    assert kernel.arrays["p"].spec.elem_bytes == size
    assert [i.width for i in kernel.instructions] == widths


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
    assert got == [(12, "store", [2 * t for t in T32]),
                   (13, "store", [(t + 250) % 256 for t in T32]),
                   (14, "load", T32),  # sizeof(d[0]) loads nothing
                   (15, "store", [8 + 1 + 8 + 8 + 4] * 32)]


def test_a_type_name_used_as_a_value_is_nvccs_error_at_its_place():
    with pytest.raises(PatternError) as info:
        run("template <typename T> __global__ void k(T* a) { T + 1; }\n"
            "template __global__ void k<float>(float *);", function="k<float>")
    assert str(info.value).startswith("kernel.code line 1, column ")
    assert "\n" not in str(info.value)


def test_function_qualifiers_are_accepted():
    got = elements("""
    static __device__ __forceinline__ int f(int x) { return x + 1; }
    __device__ __noinline__ inline int g(int x) { return 2 * x; }
    __global__ void __launch_bounds__(256, 2) k(float *a) {
        #pragma unroll 4
        for (int i = 0; i < 2; i++) a[g(f(threadIdx.x)) + i] = 0;
    }""")
    assert [e for _, _, e in got] == [[2 * t + 2 for t in T32], [2 * t + 3 for t in T32]]


def test_conversion_intrinsics():
    got = elements(HEADERS + """__global__ void k(float *a) {
        float f = threadIdx.x * 0.5f - 4.0f;
        a[512 + __float2int_rn(f)] = 0;   // halves to even
        a[512 + __float2int_rd(f)] = 0;
        a[512 + __float2int_ru(f)] = 0;
        a[512 + __float2int_rz(f)] = 0;
        a[(int)__half2float(__float2half(threadIdx.x * 64.0f)) / 64] = 0;
        half2 h = __floats2half2_rn(threadIdx.x, 2.0f * threadIdx.x);
        float2 back = __half22float2(h);
        a[(int)(__low2float(h) + __high2float(h) + back.y)] = 0;
        a[__float_as_int(__int_as_float(threadIdx.x + 100))] = 0;
        a[(__float_as_uint(1.0f) >> 23) + threadIdx.x] = 0;
        half2 both = __halves2half2(__int2half_rn(threadIdx.x), __float2half(0.f));
        a[(int)__half2float(__low2half(both))] = 0;
    }""")
    f = np.arange(32) * 0.5 - 4
    assert [e for _, op, e in got if op == "store"] == [
        list(512 + np.rint(f).astype(int)), list(512 + np.floor(f).astype(int)),
        list(512 + np.ceil(f).astype(int)), list(512 + np.trunc(f).astype(int)),
        T32, [5 * t for t in T32], [t + 100 for t in T32], [127 + t for t in T32], T32]


def test_bfloat16_round_trip():
    """-G's __internal_device_bfloat162float reads its .b32 .param with ld.param.u16: the
    low half of what the caller stored."""
    got = elements(HEADERS + "__global__ void k(float *a) {\n"
                   "    a[(int)__bfloat162float(__float2bfloat16(threadIdx.x + 0.25f))] = 0;\n}")
    assert got == [(5, "store", T32)]


def test_standard_constants_null_and_nullptr():
    got = elements("""#include <cfloat>
    #include <climits>
    #include <cstdint>
    #include <cmath>
    __global__ void k(float *a, int *b) {
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
    assert [(line, e) for line, _, e in got] == [
        (8, T32), (9, [101 + t for t in T32]), (10, [200 + 31 + 8 + 1] * 32),
        (13, [300 + t for t in T32]), (14, [402] * 32)]


def test_the_files_own_macro_wins_over_a_standard_one():
    got = elements("#include <cmath>\n#undef M_PI\n#define M_PI 3\n"
                   "__global__ void k(float *a) { a[M_PI] = 0; }")
    assert got == [(4, "store", [3] * 32)]


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
    return kernel_pattern(f"#define OFFSET {offset}\n{code}", **kernel)


def test_extern_shared_is_sized_by_the_pattern_and_aliases_one_region():
    p = _shared(DYNAMIC, dynamic_shared_bytes=256)
    # line 8: tile at a stride of 2 words: 2-way, 2 wavefronts; line 9: alias's 8-byte lanes,
    # 2 wavefronts; line 10: after[0] and before[0], 1 each; line 11: tile[t], 1
    assert shared_per_line(analyze(p).shared) == {8: (1, 2), 9: (1, 2), 10: (2, 2), 11: (1, 1)}
    # tile and alias alias one region of 256 bytes: tile[64 + 2 t] passes it at lane 0
    with pytest.raises(PatternError, match=r"^line 8, column \d+: .*tile\[threadIdx.x \* 2 "
                                           r"\+ OFFSET\].* outside .* at warp 0 lane 0$"):
        analyze(_shared(DYNAMIC, offset=64, dynamic_shared_bytes=256))


LAUNCH = "\n#define BLOCK 32\nint main() { k<<<1, BLOCK, BLOCK * sizeof(float) * 2>>>(0); }"


def test_extern_shared_defaults_to_the_launchs_constant_third_argument():
    """The launch's 256 bytes hold tile[0..63]: index 2 t + 2 of lane 31 (64) is past them,
    the pattern's 512 bytes hold it."""
    assert shared_per_line(analyze(_shared(DYNAMIC + LAUNCH)).shared)[8] == (1, 2)
    with pytest.raises(PatternError, match=r"^line 8, column \d+: .* outside"):
        analyze(_shared(DYNAMIC + LAUNCH, offset=2))
    analyze(_shared(DYNAMIC + LAUNCH, offset=2, dynamic_shared_bytes=512))  # the pattern wins
    with pytest.raises(PatternError, match="dynamic_shared_bytes"):
        analyze(_shared(DYNAMIC + "\nint main(int n) { k<<<1, 32, n>>>(0); }"))


def test_template_launches_give_their_instantiations_shared_bytes():
    code = """
    template <int B> __global__ void k(float *a) {
        extern __shared__ float s[];
        s[threadIdx.x * B / 32] = a[threadIdx.x];
    }
    int main() { k<64><<<1, 32, 64 * 4>>>(0); k<32><<<1, 32, 128>>>(0); }"""
    # k<64>: s[2 t] up to 62, inside its 256 bytes; k<32>: s[t], inside its 128
    assert shared_per_line(analyze(_shared(code, function="k<64>")).shared) == {5: (1, 2)}
    assert shared_per_line(analyze(_shared(code, function="k<32>")).shared) == {5: (1, 1)}
    with pytest.raises(PatternError, match="outside"):
        analyze(_shared(code.replace("64 * 4", "64 * 2"), function="k<64>"))


@pytest.mark.parametrize("value, message", [
    (-1, "kernel.dynamic_shared_bytes: must be at least 0, got -1"),
    ("64", "kernel.dynamic_shared_bytes: expected an integer, got text"),
    (227 * 1024 + 1, "kernel.dynamic_shared_bytes: at most 232,448 bytes (227 KiB"),
])
def test_dynamic_shared_bytes_is_checked(value, message):
    with pytest.raises(PatternError) as info:
        _shared(DYNAMIC, dynamic_shared_bytes=value)
    assert message in str(info.value)


@pytest.mark.parametrize("code, line", [
    ("typedef B A;\ntypedef A B;\n__global__ void k(A *a) { a[0] = 0; }", 1),
    ("#define real flaot\n__global__ void k(real *a) { a[0] = 0; }", 2),
])
def test_bad_type_names_are_nvccs_one_line_errors(code, line):
    with pytest.raises(PatternError) as info:
        run(code)
    assert str(info.value).startswith(f"kernel.code line {line}, column ")
    assert "\n" not in str(info.value)


def test_a_typedef_chain_300_deep_is_plain_cpp():
    """The interpreter refused type names nested more than 200 deep; nvcc reads them."""
    code = "typedef float T0;\n" + "".join(f"typedef T{i - 1} T{i};\n" for i in range(1, 300)) \
        + "__global__ void k(T299 *a) { a[threadIdx.x] = 0; }"
    assert elements(code) == [(301, "store", T32)]


def test_constants_fold_without_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = elements("#include <cmath>\n__global__ void k(float *a) { a[__float2int_rn(INFINITY)"
                       " * 0 + (int)(1.0f / 0.0f) * 0 + (int)NAN * 0 + threadIdx.x] = 0; }")
    assert got == [(2, "store", T32)]


def test_float_to_integer_casts_saturate_as_the_gpu_converts():
    got = elements("""__global__ void k(float *a, float z) {
        a[(int)(1.0f / z) % 64 + 64] = 0;
        a[(unsigned)(-1.0f / z) % 64 + 200] = 0;
        a[(int)(0.0f / z) + 300] = 0;
        a[(short)(1e6f * (z + 1.0f)) % 1000 + 1000] = 0;
        a[(int)(-3.7f - z) + 400] = 0;
    }""", params={"z": 0}, arrays={"a": {"dtype": "float32", "length": 4096}})
    # cvt.rzi: +inf -> INT_MAX, -inf -> 0 unsigned, NaN -> 0, truncation; (short) of a float
    # is cvt.rzi.s32.f32 then cvt.u16.u32 (the PTX): 1e6 wraps to 1e6 - 15 * 65536 = 16960,
    # 960 mod 1000 (the interpreter saturated to SHRT_MAX: 1767)
    assert [e[0] for _, _, e in got] == [64 + (2**31 - 1) % 64, 200, 300, 1000 + 960, 397]
