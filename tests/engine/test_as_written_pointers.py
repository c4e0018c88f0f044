"""Pointers that point into different arrays in different lanes or at different times, read
as written (the debug compile): the instruction counts its sectors over all its lanes and
names every array it touches. Ported from the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import elements, kernel_pattern, run

from sectorviz.model.errors import PatternError
from sectorviz.model.frontend import kernel_for

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

TWO = {"a": {"dtype": "float32", "length": 1024}, "b": {"dtype": "float32", "length": 1024}}


def warp_sectors(addresses, width: int) -> int:
    """Brute force: distinct 32-byte sectors of one warp's lanes (all active)."""
    return len({s for a in addresses for s in range(a // 32, (a + width - 1) // 32 + 1)})


def first_warp_addresses(code: str, **kw) -> list[tuple[int, str, list[int]]]:
    """Every global execution of the first warp: (line, op, active lanes' byte addresses).
    (The interpreter's tests compared element indices, each lane's in its own array; the
    PTX engine measures a site's elements from one origin, so the addresses say it.)"""
    kernel = kernel_for(kernel_pattern(code, **kw))
    out = []
    for k, b in kernel.trace(0, 1):
        inst = kernel.instructions[k]
        address = np.broadcast_to(b.address, b.active.shape)[0]
        out.append((inst.line, inst.op, [int(x) for x, on in zip(address, b.active[0]) if on]))
    return out


SELECT = """__global__ void k(float* a, float* b, int m, int c, int s, int o) {
        int t = threadIdx.x;
        float* x = t % m < c ? a : b;
        x[t * s + o] = 1;
    }"""


@settings(max_examples=30, deadline=None)
@given(mod=st.integers(1, 7), cut=st.integers(0, 7), stride=st.integers(0, 9),
       offset=st.integers(0, 40))
def test_select_between_arrays_counts_every_lane(mod, cut, stride, offset):
    params = {"m": mod, "c": cut, "s": stride, "o": offset}
    analysis, kernel = run(SELECT, arrays=TWO, params=params)
    (ins,) = analysis.instructions
    base = {n: kernel.arrays[n].address0 for n in "ab"}
    addresses = [base["a" if t % mod < cut else "b"] + 4 * (t * stride + offset)
                 for t in range(32)]
    assert ins.array == "a, b"
    assert ins.sectors == warp_sectors(addresses, 4)
    assert first_warp_addresses(SELECT, arrays=TWO, params=params) == [(4, "store", addresses)]


def test_ping_pong_pointers_widen_to_both_arrays():
    code = """__global__ void k(float* a, float* b) {
        int t = threadIdx.x;
        const float* src = a;
        float* dst = b;
        for (int step = 0; step < 3; step++) {
            dst[t] = src[t * 2] + 1;
            float* tmp = dst; dst = (float*)src; src = tmp;
        }
        const float* q = (t & 1) ? a : b;
        b[t] = q[t];
    }"""
    analysis, _ = run(code, arrays=TWO)
    got = [(s.line, s.op, s.array, s.requests, s.sectors) for s in analysis.instructions]
    # src: a, b, a at stride 2 (8 sectors each); dst: b, a, b at stride 1 (4 each)
    assert got == [(6, "load", "a, b", 3, 24), (6, "store", "a, b", 3, 12),
                   (10, "load", "a, b", 1, 8), (10, "store", "b", 1, 4)]


def test_loads_through_a_pointer_into_two_arrays_read_each_arrays_values():
    code = """__global__ void k(float* out, const int* a, const int* b) {
        int t = threadIdx.x;
        const int* p = t < 16 ? a : b;
        out[p[t]] = 0;
    }"""
    arrays = {"out": {"dtype": "float32", "length": 1024},
              "a": {"dtype": "int32", "length": 32, "values": {"kind": "arange"}},
              "b": {"dtype": "int32", "length": 32, "values": {"kind": "constant", "value": 500}}}
    assert elements(code, arrays=arrays)[1] == (4, "store", list(range(16)) + [500] * 16)
    arrays["b"].pop("values")
    with pytest.raises(PatternError, match="give 'a', 'b' values"):
        elements(code, arrays=arrays)


def test_a_lane_outside_every_array_is_an_error():
    code = """__global__ void k(float* a, float* b) {
        float* x = threadIdx.x < 8 ? a : b;
        x[threadIdx.x * 40] = 1;
    }"""
    # lane 26 writes b (4096 bytes after a) + 26 * 40 floats: byte 8256, past b's end (8192)
    with pytest.raises(PatternError, match=r"^line 3, column 9: .* reaches byte 8256, outside "
                                           r"every array the pattern places, at warp 0 lane 26"):
        run(code, arrays=TWO)


def test_a_device_function_returning_either_array():
    code = """__device__ float* pick(float* a, float* b, int t) { if (t < 4) return a; return b; }
    __global__ void k(float* a, float* b) {
        int t = threadIdx.x;
        pick(a, b, t)[t] = 0;
    }"""
    analysis, kernel = run(code, arrays=TWO)
    (ins,) = analysis.instructions
    assert ins.array == "a, b" and ins.sectors == 1 + 4
    assert np.all(np.diff([kernel.arrays[n].address0 for n in "ab"]) > 0)
