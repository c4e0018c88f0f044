"""half / half2 arithmetic as cuda_fp16.h defines it: the operators of half2 and the
`__hadd2` / `__hmul2` / `__h2div` / `__hfma2` / `__hadd` ... intrinsics, each component
rounded once to half (fma: the exact a * b + c rounded once); checked against numpy's IEEE
binary16 on the addresses they produce."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_helpers import elements

from sectorviz.model.errors import PatternError

CODE = """#include "cuda_fp16.h"
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
EXPR = "(i * 7) % 13 - 5"


def index(x: np.float16) -> int:
    """256 + (int)(x * 16.0f) % 64 as the GPU computes it (cvt.rzi.s32.f32 saturates; NaN
    is 0)."""
    with np.errstate(invalid="ignore"):
        v = np.float32(x) * np.float32(16)
    v = 0 if np.isnan(v) else int(np.clip(np.trunc(np.float64(v)), -2**31, 2**31 - 1))
    return 256 + int(np.fmod(v, 64))


def test_half2_operators_and_intrinsics_round_each_component_once():
    h = np.array([(i * 7) % 13 - 5 for i in range(128)], dtype=np.float16)
    got = elements(CODE, arrays={"h": {"dtype": "float16", "length": 128,
                                       "values": {"kind": "expr", "expr": EXPR}},
                                 "out": {"dtype": "float32", "length": 512}})
    stores = [e for name, e in got if name.split(": ", 1)[1].startswith("out[")]
    want = [[], [], [], []]
    for t in range(32):
        a, b = (h[t], h[t + 32]), (h[t + 64], h[t + 96])
        s = [np.float16(np.float16(x * y) + x) for x, y in zip(a, b)]
        f = [np.float16(np.float64(x) * np.float64(y) + np.float64(x)) for x, y in zip(a, b)]
        with np.errstate(divide="ignore", invalid="ignore"):
            d = [np.float16(np.float16(x - y) / np.float16(y + y)) for x, y in zip(a, b)]
        with np.errstate(invalid="ignore"):
            m = np.float16(a[0] * d[1])
        for k, v in enumerate((s[0], f[1], d[0], m)):
            want[k].append(index(v))
    assert stores == want
    assert (h[64:96] == 0).any()  # some lanes divide by zero above


def test_arithmetic_of_mismatched_packed_types_is_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        elements("""#include "cuda_fp16.h"
        __global__ void k(float *a) {
            half2 x = __float2half2_rn(1.0f); float2 y = make_float2(1.0f, 2.0f);
            a[(int)__low2float(__hadd2(x, y))] = 0;
        }""")
    assert str(info.value) == "line 4, column 32: '+' of half2 and float2 is outside the subset"


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
    xs = [1 + k / 128 for k in range(32)]
    got = elements(BF16_CODE, arrays={"out": {"dtype": "float32", "length": 1024}})
    stores = [e for _, e in got]
    want = [int(bf16_reference(1.5 * x) * 256) - 300 for x in xs]
    assert stores == [want] * 4
    assert want[1] == 388 - 300
